"""The user's embedding cache: vectors of a named model kept on disk between runs, by default.

Embedding is the slow step of every text entry point (all-MiniLM-L6-v2 takes seconds for
100 paragraphs on a laptop CPU), and the same texts come back: a notebook re-run, an agent
asking the MCP server about the same documents, ``scwo select`` on the same file.  So the
vectors of an embedder that says its name identifies its vectors (``cache_by_default =
True``: :class:`~scwo_np.embed.MiniLMEmbedder`, and so ``embedder="minilm"`` everywhere) are
kept in one SQLite file per user:

* **where:** ``embeddings.sqlite`` in scwo_np's user cache folder (``$XDG_CACHE_HOME/scwo_np``
  or ``~/.cache/scwo_np`` on Linux, ``~/Library/Caches/scwo_np`` on macOS,
  ``%LOCALAPPDATA%\\scwo_np\\Cache`` on Windows; ``SCWO_NP_CACHE_DIR`` moves the folder), the
  file the ``scwo`` command has always used; ``SCWO_NP_EMBEDDING_CACHE=/path/file.sqlite``
  moves the file alone;
* **opt-out:** ``cache=False`` (in :func:`~scwo_np.embed.as_embedder`,
  :func:`~scwo_np.select_texts`, :func:`~scwo_np.bench.quality_at_budget`), ``--no-cache``
  on the command line, or ``SCWO_NP_EMBEDDING_CACHE=off`` for the whole process (and the MCP
  server);
* **size:** at most :data:`DEFAULT_MAX_MB` MB of pages in use (about 160,000 MiniLM vectors, or
  about 20,000 sentences with their word pieces, which sentence selection keeps beside them),
  ``SCWO_NP_EMBEDDING_CACHE_MB`` to change it; past it the least recently used vectors are
  deleted (:class:`~scwo_np.embed.EmbeddingCache`);
* **safety:** several processes share the file (SQLite in WAL mode, one transaction per
  batch); a folder or file that cannot be written, a full disk or a damaged file is a
  ``RuntimeWarning`` once, and the process goes on embedding without the cache.

``"lsa"`` is not cached by default: an :class:`~scwo_np.embed.LSAEmbedder` is fitted on the
texts at hand, so its vectors (named by a hash of that corpus) come back only when the very
same texts and question do, and computing them (a few ms for 100 paragraphs) costs less than
writing them.  Pass ``cache=`` to cache them anyway.

The model itself is loaded once per process and kept (``MiniLMEmbedder`` shares one
SentenceTransformer per device), so a long-lived process such as ``scwo mcp`` pays the load
once and the cache's reads after that.
"""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from .._config import _user_cache_root
from ._base import embed_pieces, embed_texts, embedder_name
from ._cache import EmbeddingCache

__all__ = ["DEFAULT_MAX_MB", "CachedEmbedder", "embedding_cache_path", "user_embedding_cache"]

#: The user cache's size limit in MB (1 MB = 2**20 bytes) unless ``SCWO_NP_EMBEDDING_CACHE_MB`` says otherwise.
DEFAULT_MAX_MB = 256
#: ``SCWO_NP_EMBEDDING_CACHE`` values that turn the user cache off.
_OFF = {"0", "off", "false", "no", "none", "disable", "disabled"}

_LOCK = threading.Lock()
_OPEN: dict[tuple[str, int | None], tuple[int, EmbeddingCache | None]] = {}
_WARNED: set[str] = set()


def embedding_cache_path() -> str | None:
    """The file of the user's embedding cache, or None when it is turned off or there is no user folder.

    Returns
    -------
    str or None
        ``SCWO_NP_EMBEDDING_CACHE`` when it names a file, None when it says ``off`` (or ``0``,
        ``false``, ``no``), else ``embeddings.sqlite`` in scwo_np's user cache folder.

    Examples
    --------
    >>> import os
    >>> os.environ["SCWO_NP_EMBEDDING_CACHE"] = "off"
    >>> embedding_cache_path() is None
    True
    >>> del os.environ["SCWO_NP_EMBEDDING_CACHE"]
    """
    env = os.environ.get("SCWO_NP_EMBEDDING_CACHE")
    if env is not None and env.strip():
        if env.strip().lower() in _OFF:
            return None
        return os.path.abspath(os.path.expanduser(env.strip()))
    root = _user_cache_root()
    return os.path.join(root, "embeddings.sqlite") if root else None


def _max_bytes() -> int:
    env = os.environ.get("SCWO_NP_EMBEDDING_CACHE_MB", "").strip()
    if env:
        try:
            mb = float(env)
        except ValueError:
            mb = -1.0
        if not mb > 0 or mb != mb or mb == float("inf"):
            _warn_once(
                "SCWO_NP_EMBEDDING_CACHE_MB",
                f"SCWO_NP_EMBEDDING_CACHE_MB={env!r} is not a positive number of MB; using {DEFAULT_MAX_MB}.",
            )
            mb = DEFAULT_MAX_MB
    else:
        mb = DEFAULT_MAX_MB
    return max(1, int(mb * 2**20))


def _warn_once(key: str, message: str) -> None:
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(message, RuntimeWarning, stacklevel=4)


def user_embedding_cache() -> EmbeddingCache | None:
    """The process's handle on the user's embedding cache, opened on first use; None when it is off or unusable.

    One open cache per file and process (opened again in a forked child).  A folder that
    cannot be created, a file that cannot be opened or belongs to something else is a
    ``RuntimeWarning`` once and None: embedding goes on without a cache.

    Returns
    -------
    EmbeddingCache or None
        The cache at :func:`embedding_cache_path`, with ``max_bytes`` from
        ``SCWO_NP_EMBEDDING_CACHE_MB`` (default :data:`DEFAULT_MAX_MB`) and ``on_error="warn"``.

    Examples
    --------
    >>> import os, tempfile
    >>> os.environ["SCWO_NP_EMBEDDING_CACHE"] = os.path.join(tempfile.mkdtemp(), "e.sqlite")
    >>> cache = user_embedding_cache()
    >>> cache is user_embedding_cache(), cache.max_bytes == DEFAULT_MAX_MB * 2**20
    (True, True)
    >>> del os.environ["SCWO_NP_EMBEDDING_CACHE"]
    """
    path = embedding_cache_path()
    if path is None:
        return None
    limit = _max_bytes()
    key = (path, limit)
    pid = os.getpid()
    with _LOCK:
        hit = _OPEN.get(key)
        if hit is not None and hit[0] == pid:
            return hit[1]
        cache = None
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            cache = EmbeddingCache(path, max_bytes=limit, on_error="warn")
        except (OSError, ValueError) as exc:  # permissions, a foreign or damaged file (StoreError)
            _warn_once(
                path,
                f"embedding cache {path!r} cannot be used ({type(exc).__name__}: {exc}); embedding without "
                "it. Give the folder write permission, point SCWO_NP_EMBEDDING_CACHE at a writable file, "
                "or set SCWO_NP_EMBEDDING_CACHE=off.",
            )
        _OPEN[key] = (pid, cache)
        return cache


class CachedEmbedder:
    """An embedder behind an embedding cache: same ``name``, same vectors, each text embedded once.

    What :func:`~scwo_np.embed.as_embedder` returns for an embedder that is cached (by
    default the user cache, :func:`user_embedding_cache`, for ``"minilm"``).  Calls read
    the cached vectors and embed only the texts not in it; with no usable cache it calls
    the embedder.

    Parameters
    ----------
    embedder : callable
        The embedder (``texts -> (n, d)``, with a ``name``).
    cache : EmbeddingCache, optional
        The cache; None: the user cache, looked up at each call (so
        ``SCWO_NP_EMBEDDING_CACHE`` set later applies).

    Examples
    --------
    >>> from scwo_np.embed import EmbeddingCache
    >>> calls = []
    >>> def model(texts):
    ...     calls.append(len(texts))
    ...     return [[float(len(t)), 1.0] for t in texts]
    >>> model.name = "letters-v1"
    >>> emb = CachedEmbedder(model, EmbeddingCache(":memory:"))
    >>> emb(["a", "bb"]).tolist(), emb(["bb"]).tolist(), calls, emb.name
    ([[1.0, 1.0], [2.0, 1.0]], [[2.0, 1.0]], [2], 'letters-v1')
    """

    #: Its pieces come checked (by :func:`~scwo_np.embed.embed_pieces` when first embedded, or as
    #: stored): read again, they are not checked twice.
    _checked_pieces = True

    def __init__(self, embedder: Callable, cache: EmbeddingCache | None = None):
        self.name = embedder_name(embedder)
        if cache is not None and not isinstance(cache, EmbeddingCache):
            raise TypeError(
                f"cache must be an EmbeddingCache or None (the user cache); got {type(cache).__name__}."
            )
        self.embedder = embedder
        self.cache = cache
        if callable(getattr(embedder, "embed_query", None)):  # questions: the model's own way, not cached
            self.embed_query = embedder.embed_query

    def __call__(self, texts: Sequence[str]) -> NDArray[np.float32]:
        store = self.cache if self.cache is not None else user_embedding_cache()
        if store is None:
            return embed_texts(self.embedder, texts)
        return store.embed(self.embedder, texts)

    def embed_pieces(
        self, texts: Sequence[str]
    ) -> tuple[NDArray[np.float32], list[NDArray[np.float32]]] | None:
        """The texts' vectors and word-piece vectors, through the cache; None when the embedder has no pieces.

        Parameters
        ----------
        texts : sequence of str
            The texts.

        Returns
        -------
        tuple of (ndarray, list of ndarray) or None
            What the embedder's ``embed_pieces`` gives (see :func:`~scwo_np.embed.embed_pieces`),
            read from the cache where it holds both a text's vector and its pieces.

        Examples
        --------
        >>> from scwo_np.embed import EmbeddingCache
        >>> model = lambda texts: [[1.0, len(t)] for t in texts]
        >>> model.name = "letters-v1"
        >>> CachedEmbedder(model, EmbeddingCache(":memory:")).embed_pieces(["a"]) is None
        True
        """
        if not callable(getattr(self.embedder, "embed_pieces", None)):
            return None
        store = self.cache if self.cache is not None else user_embedding_cache()
        if store is None:
            return embed_pieces(self.embedder, texts)
        return store.embed_pieces(self.embedder, texts)

    def __repr__(self) -> str:
        where = "the user cache" if self.cache is None else repr(self.cache.path)
        return f"CachedEmbedder({self.embedder!r}, cache={where})"
