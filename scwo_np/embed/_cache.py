"""An embedding cache in one SQLite file: re-running a job on the same texts embeds nothing new.

Entries are keyed by ``(embedder name, SHA-256 of the text's UTF-8)`` — the model's identity
and the text exactly, to the byte — and hold the float32 vector.  The file is in WAL mode
(readers never wait for a writer; several processes share one file); each batch of new
vectors is written in one transaction, so a process killed mid-run leaves every finished
batch in the cache and nothing half-written.  Opening goes through
:func:`scwo_np._sqlite.connect` (path checks, retries when several processes create the
same file at once).

With ``max_bytes`` the file is kept to a size: each entry records when it was last used (to
the hour), and when a write takes the pages in use past ``max_bytes``, the least recently
used entries are deleted until they fill 90% of it (SQLite reuses the freed pages, so the
file stops growing; its write-ahead log adds a few MB while a write is being checkpointed).
"""

from __future__ import annotations

import hashlib
import math
import os
import sqlite3
import threading
import time
import warnings
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from .._registry import Registry
from .._sqlite import StoreError, begin_write, connect, read_transaction, storable
from ..validation import check_int, check_texts
from ._base import _dequantize, embed_pieces, embed_texts, embedder_name, quantize_pieces

__all__ = ["CACHE_ON_ERROR", "EmbeddingCache"]

#: ``EmbeddingCache(on_error=)``: what a failing cache does -> what it does.
CACHE_ON_ERROR: Registry[str] = Registry(
    "on_error",
    {"raise": "raise the error (the default)", "warn": "warn once and embed without the cache"},
)

KIND = "embedding cache"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    name TEXT NOT NULL, key BLOB NOT NULL, vec BLOB NOT NULL, PRIMARY KEY (name, key)
);
"""
#: Word-piece vectors (:func:`~scwo_np.embed.embed_pieces`) beside the vectors of the same key, 8
#: bits each (:func:`~scwo_np.embed.quantize_pieces`: the ``m`` exponents, then the ``m * d`` codes);
#: a table of their own, so that reading a vector never reads its pieces.  Made on first use (files
#: written before it have none).
_PIECES = """
CREATE TABLE IF NOT EXISTS pieces (
    name TEXT NOT NULL, key BLOB NOT NULL, vec BLOB NOT NULL, PRIMARY KEY (name, key)
);
"""
# A rowid table, not WITHOUT ROWID: a 384-float vector is 1.5 kB, and WITHOUT ROWID
# tables keep such rows in overflow pages of the key's B-tree (reads measured 15x slower).

#: Keys per ``SELECT ... IN (...)``: below SQLite's default limit of 999 variables.
_CHUNK = 900
#: An entry's last use is written again when it is older than this (seconds): the LRU order is
#: kept to the hour, and a cache read within the hour writes nothing.
TOUCH_EVERY = 3600
#: Eviction deletes the least recently used entries until the pages in use are this share of max_bytes.
_EVICT_TO = 0.9
#: What a cache that must not fail its caller (``on_error="warn"``) turns into a warning.
_CACHE_ERRORS = (sqlite3.Error, StoreError, OSError)


def _key(text: str) -> bytes:
    return hashlib.sha256(storable(text, "text").encode("utf-8")).digest()


class EmbeddingCache:
    """Embeddings by ``(embedder name, text)``, in one SQLite file.

    Parameters
    ----------
    path : str or os.PathLike
        The cache file (created if missing; its directory must exist).
        ``":memory:"`` keeps it in this process only.
    timeout : float
        Seconds to wait for another process's write lock.
    max_bytes : int, optional
        Keep the file's pages in use to this many bytes: past it, the least recently used
        entries are deleted (see the module docs).  None (the default): no limit.
    on_error : {"raise", "warn"}
        What a read or write of the file that fails does once the cache is open (a read-only
        file or folder, a full disk, a lock held past ``timeout``): raise, or warn once and go
        on without the cache (reads that fail are misses; writes that fail stop writing).
        The user cache (:func:`~scwo_np.embed.user_embedding_cache`) warns.

    Examples
    --------
    >>> cache = EmbeddingCache(":memory:")
    >>> calls = []
    >>> def model(texts):
    ...     calls.append(len(texts))
    ...     return [[float(len(t)), 1.0] for t in texts]
    >>> cache.embed(model, ["a", "bb"]).tolist()
    [[1.0, 1.0], [2.0, 1.0]]
    >>> cache.embed(model, ["bb", "ccc", "a"]).tolist(), calls  # only "ccc" is new
    ([[2.0, 1.0], [3.0, 1.0], [1.0, 1.0]], [2, 1])
    >>> len(cache), cache.close()
    (3, None)
    """

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        timeout: float = 30.0,
        max_bytes: int | None = None,
        on_error: str = "raise",
    ):
        self.max_bytes = None if max_bytes is None else check_int(max_bytes, name="max_bytes", low=1)
        CACHE_ON_ERROR.lookup(on_error)
        self.on_error = on_error
        self.path, self._db = connect(path, schema=_SCHEMA, timeout=timeout, kind=KIND)
        self._lock = threading.RLock()  # one connection, one transaction at a time across threads
        self._writable = True  # False after a failed write with on_error="warn"
        self._warned = False
        self._used = self._migrate()

    def _migrate(self) -> bool:
        """Add the ``used`` column to a file written before it existed; whether the file has it."""
        cols = [r[1] for r in self._db.execute("PRAGMA table_info(embeddings)")]
        if "used" in cols:
            return True
        try:
            begin_write(self._db, self.path, KIND)
        except (PermissionError, sqlite3.OperationalError):
            return False  # a read-only file is read as it is, in insertion order
        try:
            cols = [r[1] for r in self._db.execute("PRAGMA table_info(embeddings)")]
            if "used" not in cols:  # another process may have added it since
                self._db.execute("ALTER TABLE embeddings ADD COLUMN used INTEGER NOT NULL DEFAULT 0")
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        return True

    def _failed(self, exc: BaseException, doing: str) -> None:
        """``on_error="warn"``: say once that the cache is not used, and stop writing to it."""
        if self.on_error == "raise":
            raise exc
        self._writable = False
        if not self._warned:
            self._warned = True
            warnings.warn(
                f"embedding cache {self.path!r} could not be {doing} ({type(exc).__name__}: {exc}); embedding "
                "without it. Give the folder write permission, point SCWO_NP_EMBEDDING_CACHE at a writable "
                "file, or set SCWO_NP_EMBEDDING_CACHE=off.",
                RuntimeWarning,
                stacklevel=4,
            )

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])

    @property
    def size_bytes(self) -> int:
        """Bytes of the file's pages in use (what ``max_bytes`` limits).

        Examples
        --------
        >>> EmbeddingCache(":memory:").size_bytes > 0
        True
        """
        with self._lock:
            page = self._db.execute("PRAGMA page_size").fetchone()[0]
            used = self._db.execute("PRAGMA page_count").fetchone()[0]
            used -= self._db.execute("PRAGMA freelist_count").fetchone()[0]
        return int(page * used)

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Close the file (the cache object is unusable afterwards).

        Examples
        --------
        >>> EmbeddingCache(":memory:").close()
        """
        with self._lock:
            self._db.close()

    def get(self, name: str, texts: Sequence[str]) -> list[NDArray[np.float32] | None]:
        """The cached vector of each text under embedder ``name``, or None where there is none.

        Parameters
        ----------
        name : str
            The embedder's name (:func:`embedder_name`).
        texts : sequence of str
            The texts.

        Returns
        -------
        list of ndarray or None
            One float32 vector per text, None where it is not cached.

        Examples
        --------
        >>> import numpy as np
        >>> cache = EmbeddingCache(":memory:")
        >>> cache.put("m", ["a"], np.array([[1.0, 2.0]]))
        >>> cache.get("m", ["a", "b"])
        [array([1., 2.], dtype=float32), None]
        """
        name = _check_name(name)
        keys = [_key(t) for t in check_texts(texts)]
        found: dict[bytes, bytes] = {}
        stale: list[bytes] = []
        uniq = list(dict.fromkeys(keys))
        now = int(time.time())
        used = "used" if self._used else "0"
        with self._lock:
            with read_transaction(self._db) as db:
                for a in range(0, len(uniq), _CHUNK):
                    part = uniq[a : a + _CHUNK]
                    marks = ",".join("?" * len(part))
                    rows = db.execute(
                        f"SELECT key, vec, {used} FROM embeddings WHERE name = ? AND key IN ({marks})",
                        [name, *part],
                    )
                    for k, v, u in rows:
                        found[k] = v
                        if u < now - TOUCH_EVERY:
                            stale.append(k)
            if stale and self.max_bytes is not None and self._used and self._writable:
                self._touch(name, stale, now)
        return [None if (v := found.get(k)) is None else np.frombuffer(v, dtype=np.float32) for k in keys]

    def get_pieces(self, name: str, texts: Sequence[str], dim: int) -> list[NDArray[np.float32] | None]:
        """The cached word-piece vectors of each text under embedder ``name``, or None where there are none.

        Parameters
        ----------
        name : str
            The embedder's name.
        texts : sequence of str
            The texts.
        dim : int
            The length of the embedder's vectors.

        Returns
        -------
        list of ndarray or None
            One ``(m, dim)`` float32 array per text (8 bits of each value kept: see
            :func:`~scwo_np.embed.quantize_pieces`), None where its pieces are not cached.

        Examples
        --------
        >>> import numpy as np
        >>> cache = EmbeddingCache(":memory:")
        >>> cache.put("m", ["a b"], np.ones((1, 2)), pieces=[[[1.0, 0.3], [0.0, 1.0]]])
        >>> cache.get_pieces("m", ["a b", "c"], 2)
        [array([[1.      , 0.296875],
               [0.      , 1.      ]], dtype=float32), None]
        """
        name = _check_name(name)
        keys = [_key(t) for t in check_texts(texts)]
        dim = check_int(dim, name="dim", low=1)
        found: dict[bytes, bytes] = {}
        uniq = list(dict.fromkeys(keys))
        with self._lock:
            if not self._has_pieces():
                return [None] * len(keys)
            with read_transaction(self._db) as db:
                for a in range(0, len(uniq), _CHUNK):
                    part = uniq[a : a + _CHUNK]
                    marks = ",".join("?" * len(part))
                    rows = db.execute(
                        f"SELECT key, vec FROM pieces WHERE name = ? AND key IN ({marks})", [name, *part]
                    )
                    found.update(rows)
        return _pieces_of([found.get(k) for k in keys], dim)

    def _has_pieces(self) -> bool:
        row = self._db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'pieces'"
        ).fetchone()
        return row is not None

    def _touch(self, name: str, keys: list[bytes], now: int) -> None:
        """Record that these entries were used now (for the LRU order); a failure only skips it."""
        try:
            begin_write(self._db, self.path, KIND)
        except (PermissionError, sqlite3.OperationalError):
            return
        try:
            self._db.executemany(
                "UPDATE embeddings SET used = ? WHERE name = ? AND key = ?", [(now, name, k) for k in keys]
            )
            self._db.execute("COMMIT")
        except sqlite3.Error:
            self._db.execute("ROLLBACK")

    def put(
        self,
        name: str,
        texts: Sequence[str],
        vectors: NDArray[np.floating],
        *,
        pieces: Sequence[NDArray[np.floating]] | None = None,
    ) -> None:
        """Store ``vectors[i]`` (and ``pieces[i]``) for ``texts[i]`` under ``name``, all in one transaction.

        Parameters
        ----------
        name : str
            The embedder's name.
        texts : sequence of str
            The texts.
        vectors : ndarray, shape (len(texts), d)
            Their vectors (finite; stored as float32).
        pieces : sequence of ndarray, optional
            Each text's word-piece vectors, ``(m_i, d)`` (finite; stored to 8 bits, see
            :func:`~scwo_np.embed.quantize_pieces`).

        Returns
        -------
        None
            The vectors are committed.

        Examples
        --------
        >>> import numpy as np
        >>> cache = EmbeddingCache(":memory:")
        >>> cache.put("m", ["a", "b"], np.eye(2))
        >>> len(cache)
        2
        """
        name = _check_name(name)
        texts = check_texts(texts)
        with np.errstate(over="ignore", invalid="ignore"):  # too large for float32: inf, refused below
            vecs = np.ascontiguousarray(vectors, dtype=np.float32)
        if vecs.ndim != 2 or vecs.shape[0] != len(texts):
            raise ValueError(f"vectors must have shape ({len(texts)}, d); got {vecs.shape}.")
        if not np.all(np.isfinite(vecs)):
            bad = int(np.flatnonzero(~np.isfinite(vecs).all(axis=1))[0])
            raise ValueError(
                f"vectors[{bad}] holds NaN or inf (or a value too large for float32); a cache keeps "
                "only finite vectors: check the embedder."
            )
        blobs = None if pieces is None else _piece_blobs(pieces, vecs.shape)
        now = int(time.time())
        rows = [(name, _key(t), vecs[i].tobytes(), now) for i, t in enumerate(texts)]
        sql = (
            "INSERT OR REPLACE INTO embeddings (name, key, vec, used) VALUES (?, ?, ?, ?)"
            if self._used
            else "INSERT OR REPLACE INTO embeddings (name, key, vec) VALUES (?, ?, ?)"
        )
        with self._lock:
            begin_write(self._db, self.path, KIND)
            try:
                self._db.executemany(sql, rows if self._used else [r[:3] for r in rows])
                if blobs is not None:
                    self._db.execute(_PIECES)
                    self._db.executemany(
                        "INSERT OR REPLACE INTO pieces (name, key, vec) VALUES (?, ?, ?)",
                        [(name, r[1], b) for r, b in zip(rows, blobs, strict=True)],
                    )
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            if self.max_bytes is not None and self.size_bytes > self.max_bytes:
                self._evict()

    def _evict(self) -> None:
        """Delete the least recently used entries until the pages in use are 90% of ``max_bytes``."""
        begin_write(self._db, self.path, KIND)
        try:
            size, n = self.size_bytes, self._db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
            if size > self.max_bytes and n:
                drop = min(n, math.ceil((size - _EVICT_TO * self.max_bytes) / (size / n)))
                order = "used, rowid" if self._used else "rowid"
                self._db.execute(
                    f"DELETE FROM embeddings WHERE rowid IN (SELECT rowid FROM embeddings ORDER BY {order} LIMIT ?)",
                    (drop,),
                )
                if self._has_pieces():  # a text's pieces go with its vector
                    self._db.execute(
                        "DELETE FROM pieces WHERE NOT EXISTS (SELECT 1 FROM embeddings AS e "
                        "WHERE e.name = pieces.name AND e.key = pieces.key)"
                    )
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def embed(
        self,
        embedder: Callable[[list[str]], object],
        texts: Sequence[str],
        *,
        batch_size: int = 256,
        progress: bool = False,
    ) -> NDArray[np.float32]:
        """``(n, d)`` float32 vectors of ``texts``: cached ones read, the others embedded and stored.

        New texts are embedded ``batch_size`` at a time (each distinct text once),
        each batch checked (:func:`~scwo_np.embed.embed_texts`) and stored in
        one transaction.  ``progress`` shows a bar on stderr over the new texts.

        Parameters
        ----------
        embedder : callable
            ``texts -> (n, d) array``, with a ``name`` (see :class:`Embedder`).
        texts : sequence of str
            The texts.
        batch_size : int
            New texts embedded per call of ``embedder``.
        progress : bool
            Show a progress bar on stderr.

        Returns
        -------
        ndarray of float32, shape (len(texts), d)
            One vector per text.

        Examples
        --------
        >>> cache = EmbeddingCache(":memory:")
        >>> cache.embed(lambda ts: [[float(len(t)), 1.0] for t in ts], ["a", "bb"]).tolist()
        [[1.0, 1.0], [2.0, 1.0]]
        """
        name = embedder_name(embedder)
        texts = check_texts(texts)
        batch_size = check_int(batch_size, name="batch_size", low=1)
        try:
            got = self.get(name, texts)
        except _CACHE_ERRORS as exc:
            self._failed(exc, "read")
            got = [None] * len(texts)
        missing = list(dict.fromkeys(t for t, v in zip(texts, got, strict=True) if v is None))
        if missing:
            from tqdm.auto import tqdm

            fresh: dict[str, NDArray[np.float32]] = {}
            with tqdm(total=len(missing), disable=not progress, desc="embedding", unit="text") as bar:
                for a in range(0, len(missing), batch_size):
                    part = missing[a : a + batch_size]
                    vecs = embed_texts(embedder, part)
                    if self._writable:
                        try:
                            self.put(name, part, vecs)
                        except _CACHE_ERRORS as exc:
                            self._failed(exc, "written")
                    fresh.update(zip(part, vecs, strict=True))
                    bar.update(len(part))
            got = [fresh[t] if v is None else v for t, v in zip(texts, got, strict=True)]
        if not got:
            return np.empty((0, 0), dtype=np.float32)
        dims = {v.shape[0] for v in got}
        if len(dims) > 1:
            raise ValueError(
                f"the cache holds vectors of lengths {sorted(dims)} under embedder name {name!r}: two "
                "different models share that name; give each its own name."
            )
        return np.stack(got)

    def embed_pieces(
        self, embedder: Callable[[list[str]], object], texts: Sequence[str], *, batch_size: int = 256
    ) -> tuple[NDArray[np.float32], list[NDArray[np.float32]]] | None:
        """The texts' vectors and word-piece vectors: cached ones read, the others embedded and stored.

        What :meth:`embed` does, for an embedder with ``embed_pieces`` (see
        :func:`~scwo_np.embed.embed_pieces`): a text is embedded again when its vector or its
        pieces are not cached (a vector cached by a plain call, or by a version of scwo_np
        before pieces, is embedded once more, to store its pieces), and both are stored in one
        transaction.  None when the embedder gives no pieces.

        Parameters
        ----------
        embedder : callable
            An embedder with an ``embed_pieces(texts) -> (vectors, pieces)`` method.
        texts : sequence of str
            The texts.
        batch_size : int
            New texts embedded per call of ``embedder.embed_pieces``.

        Returns
        -------
        tuple of (ndarray, list of ndarray) or None
            One float32 vector per text, ``(len(texts), d)``, and each text's ``(m_i, d)``
            word-piece vectors (to 8 bits); None when the embedder has no pieces to give.

        Examples
        --------
        >>> class Pieces:
        ...     name = "toy-pieces"
        ...     def __call__(self, texts):
        ...         return [[1.0, len(t)] for t in texts]
        ...     def embed_pieces(self, texts):
        ...         return self(texts), [[[1.0, 0.0]] * len(t.split()) for t in texts]
        >>> cache = EmbeddingCache(":memory:")
        >>> V, P = cache.embed_pieces(Pieces(), ["a b", "c"])
        >>> V.tolist(), [p.shape for p in P], len(cache)
        ([[1.0, 3.0], [1.0, 1.0]], [(2, 2), (1, 2)], 2)
        """
        name = embedder_name(embedder)
        texts = check_texts(texts)
        batch_size = check_int(batch_size, name="batch_size", low=1)
        try:
            got = self.get(name, texts)
            dim = next((v.shape[0] for v in got if v is not None), None)
            held = self.get_pieces(name, texts, dim) if dim else [None] * len(texts)
        except _CACHE_ERRORS as exc:
            self._failed(exc, "read")
            got, held = [None] * len(texts), [None] * len(texts)
        missing = list(
            dict.fromkeys(t for t, v, p in zip(texts, got, held, strict=True) if v is None or p is None)
        )
        fresh: dict[str, tuple[NDArray[np.float32], NDArray[np.float32]]] = {}
        for a in range(0, len(missing), batch_size):
            part = missing[a : a + batch_size]
            out = embed_pieces(embedder, part)
            if out is None:  # an embedder without pieces (or one that has none to give)
                return None
            if self._writable:
                try:
                    self.put(name, part, out[0], pieces=out[1])
                except _CACHE_ERRORS as exc:
                    self._failed(exc, "written")
            fresh.update(zip(part, zip(out[0], out[1], strict=True), strict=True))
        vecs = [fresh[t][0] if t in fresh else v for t, v in zip(texts, got, strict=True)]
        pieces = [fresh[t][1] if t in fresh else p for t, p in zip(texts, held, strict=True)]
        if not vecs:
            return np.empty((0, 0), dtype=np.float32), []
        if len({v.shape[0] for v in vecs}) > 1:
            raise ValueError(
                f"the cache holds vectors of lengths {sorted({v.shape[0] for v in vecs})} under embedder name "
                f"{name!r}: two different models share that name; give each its own name."
            )
        return np.stack(vecs), pieces


def _piece_blobs(pieces: Sequence[object], shape: tuple[int, int]) -> list[bytes]:
    """Each text's word-piece vectors as 8-bit bytes: its exponents, then its codes."""
    if len(pieces) != shape[0]:
        raise ValueError(f"pieces must hold one (m, d) array per text ({shape[0]}); got {len(pieces)}.")
    blobs = []
    for i, p in enumerate(pieces):
        try:
            exps, codes = quantize_pieces(p, shape[1])
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"pieces[{i}]: {exc}") from None
        blobs.append(exps.tobytes() + codes.tobytes())
    return blobs


def _pieces_of(blobs: list[bytes | None], d: int) -> list[NDArray[np.float32] | None]:
    """Texts' pieces from their bytes, in one pass; None for none, or for bytes not of pieces of length ``d``."""
    ok = [b is not None and len(b) % (d + 1) == 0 for b in blobs]
    raw = [np.frombuffer(b, dtype=np.int8) for b, good in zip(blobs, ok, strict=True) if good]
    sizes = [r.size // (d + 1) for r in raw]
    if not raw:
        return [None] * len(blobs)
    exps = np.concatenate([r[:m] for r, m in zip(raw, sizes, strict=True)])
    codes = np.concatenate([r[m:] for r, m in zip(raw, sizes, strict=True)]).reshape(-1, d)
    rows = np.split(_dequantize(exps, codes), np.cumsum(sizes)[:-1])
    it = iter(rows)
    return [next(it) if good else None for good in ok]


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty str (the embedder's name); got {name!r}.")
    return name
