"""An embedding cache in one SQLite file: re-running a job on the same texts embeds nothing new.

Entries are keyed by ``(embedder name, SHA-256 of the text's UTF-8)`` and hold
the float32 vector.  The file is in WAL mode (readers never wait for a writer);
each batch of new vectors is written in one transaction, so a process killed
mid-run leaves every finished batch in the cache and nothing half-written.
Opening goes through :func:`scwo_np._sqlite.connect` (path checks, retries when
several processes create the same file at once).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from .._sqlite import begin_write, connect, read_transaction, storable
from ..validation import check_int, check_texts
from ._base import embed_texts, embedder_name

__all__ = ["EmbeddingCache"]

KIND = "embedding cache"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    name TEXT NOT NULL, key BLOB NOT NULL, vec BLOB NOT NULL, PRIMARY KEY (name, key)
);
"""
# A rowid table, not WITHOUT ROWID: a 384-float vector is 1.5 kB, and WITHOUT ROWID
# tables keep such rows in overflow pages of the key's B-tree (reads measured 15x slower).

#: Keys per ``SELECT ... IN (...)``: below SQLite's default limit of 999 variables.
_CHUNK = 900


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

    def __init__(self, path: str | os.PathLike, *, timeout: float = 30.0):
        self.path, self._db = connect(path, schema=_SCHEMA, timeout=timeout, kind=KIND)

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])

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
        uniq = list(dict.fromkeys(keys))
        with read_transaction(self._db) as db:
            for a in range(0, len(uniq), _CHUNK):
                part = uniq[a : a + _CHUNK]
                marks = ",".join("?" * len(part))
                found.update(
                    db.execute(
                        f"SELECT key, vec FROM embeddings WHERE name = ? AND key IN ({marks})", [name, *part]
                    )
                )
        return [None if (v := found.get(k)) is None else np.frombuffer(v, dtype=np.float32) for k in keys]

    def put(self, name: str, texts: Sequence[str], vectors: NDArray[np.floating]) -> None:
        """Store ``vectors[i]`` for ``texts[i]`` under ``name``, all in one transaction.

        Parameters
        ----------
        name : str
            The embedder's name.
        texts : sequence of str
            The texts.
        vectors : ndarray, shape (len(texts), d)
            Their vectors (finite; stored as float32).

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
        rows = [(name, _key(t), vecs[i].tobytes()) for i, t in enumerate(texts)]
        begin_write(self._db, self.path, KIND)
        try:
            self._db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?)", rows)
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

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
        got = self.get(name, texts)
        missing = list(dict.fromkeys(t for t, v in zip(texts, got, strict=True) if v is None))
        if missing:
            from tqdm.auto import tqdm

            fresh: dict[str, NDArray[np.float32]] = {}
            with tqdm(total=len(missing), disable=not progress, desc="embedding", unit="text") as bar:
                for a in range(0, len(missing), batch_size):
                    part = missing[a : a + batch_size]
                    vecs = embed_texts(embedder, part)
                    self.put(name, part, vecs)
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


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty str (the embedder's name); got {name!r}.")
    return name
