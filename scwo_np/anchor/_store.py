"""Getting dropped items back: the full arrays, stored by key in one SQLite file.

:func:`~scwo_np.anchor.crush_json` with ``store=`` writes the whole input array
under the key its omission marker carries; :meth:`CrushStore.retrieve` returns
items of it by position range or by a field filter.  One file in WAL mode, one
transaction per write (the array and the evictions it causes commit together or
not at all: a writer killed mid-write leaves the previous entries readable),
bounded in size with least-recently-used eviction.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .._config import cache_dir
from .._sqlite import StoreError, begin_write, connect, read_transaction
from ..validation import check_int
from ._inputs import Pieces, read_document

__all__ = ["CrushStore", "array_key", "default_store_path"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS arrays (
    key TEXT PRIMARY KEY,
    created REAL NOT NULL,
    used REAL NOT NULL,
    n INTEGER NOT NULL,
    size INTEGER NOT NULL,
    body BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS arrays_used ON arrays (used);
"""


def array_key(pieces: Sequence[str]) -> str:
    """The key of an array: 16 hex digits of the SHA-256 of its stored form (same array, same key).

    The stored form is the compact text ``[p1,p2,...]`` compressed (zlib, level
    1). Compression is one-to-one, so the key is as collision-resistant as a
    hash of the text, and hashing the compressed bytes (a ninth of the text on
    tool outputs) is what the store does anyway; the same array gets the same
    key wherever the zlib library is the same.

    Parameters
    ----------
    pieces : sequence of str
        The array's elements, as JSON texts.

    Returns
    -------
    str
        16 hexadecimal digits.

    Examples
    --------
    >>> len(array_key(['{"a": 1}', '{"a": 2}']))
    16
    """
    return _key(_compress(_body(pieces)))


def _body(pieces: object) -> bytes:
    """``[p1,p2,...]`` as UTF-8: the array's text as stored (the pieces checked on the way)."""
    if isinstance(pieces, Pieces):  # cut from one text: joined from its byte spans
        return pieces.compact()
    if isinstance(pieces, str | bytes) or not isinstance(pieces, Sequence):
        raise TypeError(
            f"pieces must be a list of the array elements' JSON texts; got {type(pieces).__name__}."
        )
    try:
        text = "[" + ",".join(pieces) + "]"
    except TypeError:
        k, p = next((k, p) for k, p in enumerate(pieces) if not isinstance(p, str))
        raise TypeError(
            f"pieces[{k}] must be a str (an element's JSON text); got {type(p).__name__}."
        ) from None
    try:  # one parse of the whole array: a piece that is not one JSON value would be lost later
        ok = len(json.loads(text)) == len(pieces)
    except (ValueError, RecursionError):
        ok = False
    if not ok:
        k = next(k for k, p in enumerate(pieces) if not _one_json_value(p))
        raise ValueError(f"pieces[{k}] is not the JSON text of one value: {pieces[k][:60]!r}.")
    return text.encode("utf-8", "surrogatepass")


def _one_json_value(piece: str) -> bool:
    try:
        return len(json.loads("[" + piece + "]")) == 1
    except (ValueError, RecursionError):
        return False


def _key(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()[:16]


def _compress(text: bytes) -> bytes:
    return zlib.compress(text, 1)  # level 1: 3x faster than the default, nearly as small on JSON


def default_store_path() -> str:
    """``<user cache>/crush_store.sqlite`` (see CONTRIBUTING.md for the cache folder)."""
    base = cache_dir()
    if base is None:
        raise OSError(
            "no writable cache folder for the crush store; pass a path (CrushStore('store.sqlite'))."
        )
    return os.path.join(base, "crush_store.sqlite")


class CrushStore:
    """Full arrays by key, in one SQLite file, at most ``max_bytes`` (compressed) and ``max_entries``.

    Parameters
    ----------
    path : str or os.PathLike, optional
        The store file (default: :func:`default_store_path`); ``":memory:"`` for a
        store that lives as long as the object.
    max_bytes : int
        Compressed size kept; beyond it the least recently used arrays are evicted
        (default 256 MB).  One array larger than this is still stored, alone.
    max_entries : int
        Arrays kept (default 10,000).
    timeout : float
        Seconds to wait for another process's write lock.

    Examples
    --------
    >>> import json
    >>> from scwo_np.anchor import crush_json
    >>> store = CrushStore(":memory:")
    >>> text = '[' + ",".join(f'{{"id": {i}, "ok": {str(i != 7).lower()}}}' for i in range(20)) + ']'
    >>> out = crush_json(text, 5, store=store)
    >>> key = json.loads(out)[-1]["_omitted"]["key"]
    >>> store.retrieve(key, where={"ok": False})
    [{'id': 7, 'ok': False}]
    >>> store.retrieve(key, start=3, stop=5)
    [{'id': 3, 'ok': True}, {'id': 4, 'ok': True}]
    """

    def __init__(
        self,
        path: str | os.PathLike | None = None,
        *,
        max_bytes: int = 256 * 2**20,
        max_entries: int = 10_000,
        timeout: float = 30.0,
    ):
        self.max_bytes = check_int(max_bytes, name="max_bytes", low=1)
        self.max_entries = check_int(max_entries, name="max_entries", low=1)
        self.path, self._db = connect(
            default_store_path() if path is None else path,
            schema=_SCHEMA,
            timeout=timeout,
            kind="crush store",
        )
        self._lock = threading.Lock()

    # -- writing ---------------------------------------------------------------------------
    def put(self, pieces: Sequence[str], key: str | None = None) -> str:
        """Store an array given as its elements' texts; returns its key. One transaction.

        Parameters
        ----------
        pieces : sequence of str
            The array's elements, each a JSON text.
        key : str, optional
            The key to store it under (default: :func:`array_key` of the pieces).

        Returns
        -------
        str
            The key.

        Examples
        --------
        >>> from scwo_np.anchor import CrushStore
        >>> store = CrushStore(":memory:")
        >>> key = store.put(['{"id": 1, "ok": true}', '{"id": 2, "ok": false}', '{"id": 3, "ok": true}'])
        >>> key == store.put(['{"id": 1, "ok": true}', '{"id": 2, "ok": false}', '{"id": 3, "ok": true}'])
        True
        """
        body = _compress(_body(pieces))
        key = _key(body) if key is None else key
        now = time.time()
        with self._lock:
            db = self._db
            begin_write(db, self.path, "crush store")
            try:
                db.execute(
                    "INSERT INTO arrays (key, created, used, n, size, body) VALUES (?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (key) DO UPDATE SET used = excluded.used",
                    (key, now, now, len(pieces), len(body), body),
                )
                self._evict(key)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return key

    def _evict(self, keep: str) -> None:
        db = self._db
        total, count = db.execute("SELECT COALESCE(SUM(size), 0), COUNT(*) FROM arrays").fetchone()
        if total <= self.max_bytes and count <= self.max_entries:
            return
        doomed = []
        for key, size in db.execute(
            "SELECT key, size FROM arrays WHERE key != ? ORDER BY used, key", (keep,)
        ):
            if total <= self.max_bytes and count <= self.max_entries:
                break
            doomed.append((key,))
            total -= size
            count -= 1
        db.executemany("DELETE FROM arrays WHERE key = ?", doomed)

    # -- reading ---------------------------------------------------------------------------
    def __contains__(self, key: object) -> bool:
        return self._db.execute("SELECT 1 FROM arrays WHERE key = ?", (key,)).fetchone() is not None

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM arrays").fetchone()[0]

    def keys(self) -> list[str]:
        """Stored keys, most recently used first.

        Returns
        -------
        list of str
            The keys, most recently used first.

        Examples
        --------
        >>> from scwo_np.anchor import CrushStore
        >>> store = CrushStore(":memory:")
        >>> key = store.put(['{"id": 1, "ok": true}', '{"id": 2, "ok": false}', '{"id": 3, "ok": true}'])
        >>> store.keys() == [key]
        True
        """
        return [k for (k,) in self._db.execute("SELECT key FROM arrays ORDER BY used DESC, key")]

    def _load(self, key: str) -> tuple[list[Any], list[str]]:
        if not isinstance(key, str):
            raise TypeError(f'key must be a str (the marker\'s "key"); got {type(key).__name__}.')
        with self._lock, read_transaction(self._db) as db:
            row = db.execute("SELECT body FROM arrays WHERE key = ?", (key,)).fetchone()
        if row is None:
            raise KeyError(
                f"no array under key {key!r} in {self.path} (never stored there, or evicted since)"
            )
        with self._lock:
            try:
                self._db.execute("UPDATE arrays SET used = ? WHERE key = ?", (time.time(), key))
            except sqlite3.OperationalError:  # a read-only file or a busy writer: recency is best effort
                pass
        try:  # zlib checks its own Adler-32 checksum: a damaged body is an error, not other items
            doc = read_document(zlib.decompress(row[0]).decode("utf-8", "surrogatepass"))
        except (zlib.error, UnicodeDecodeError, ValueError, TypeError) as exc:
            raise StoreError(
                f"crush store file {self.path!r} is damaged: the array under key {key!r} cannot be read back "
                f"({exc}). Delete that file; the arrays it held must be crushed again."
            ) from None
        return doc.items, doc.pieces

    def retrieve(
        self,
        key: str,
        *,
        start: int | None = None,
        stop: int | None = None,
        where: Mapping[str, Any] | Callable[[Any], bool] | None = None,
        with_positions: bool = False,
    ) -> list[Any] | tuple[list[Any], list[int]]:
        """Items of the array under ``key``, in order: positions ``start:stop`` (as a slice), then ``where``.

        ``where`` is a mapping ``field -> value`` (an item matches when every field
        equals its value; a value may also be a predicate ``value -> bool``) or a
        predicate on the whole item.  Raises ``KeyError`` for an unknown key.

        Parameters
        ----------
        key : str
            The array's key (from a marker, or :meth:`put`).
        start, stop : int, optional
            A slice of positions.
        where : mapping or callable, optional
            Field -> value (or predicate) conditions, or a predicate on the whole item.
        with_positions : bool
            Also return each item's 0-based position in the array (to page through it).

        Returns
        -------
        list
            The matching items, parsed, in array order (and their positions, with ``with_positions``).

        Examples
        --------
        >>> from scwo_np.anchor import CrushStore
        >>> store = CrushStore(":memory:")
        >>> key = store.put(['{"id": 1, "ok": true}', '{"id": 2, "ok": false}', '{"id": 3, "ok": true}'])
        >>> store.retrieve(key, where={"ok": False}), store.retrieve(key, start=2)
        ([{'id': 2, 'ok': False}], [{'id': 3, 'ok': True}])
        """
        items, _ = self._load(key)
        at = [int(i) for i in self._select(items, start=start, stop=stop, where=where)]
        return ([items[i] for i in at], at) if with_positions else [items[i] for i in at]

    def positions(
        self,
        key: str,
        *,
        start: int | None = None,
        stop: int | None = None,
        where: Mapping[str, Any] | Callable[[Any], bool] | None = None,
    ) -> list[int]:
        """Positions in the array of the items :meth:`retrieve` returns for the same arguments.

        Parameters
        ----------
        key : str
            The array's key.
        start, stop, where
            As in :meth:`retrieve`.

        Returns
        -------
        list of int
            0-based positions, ascending (to page through a filtered array).

        Examples
        --------
        >>> from scwo_np.anchor import CrushStore
        >>> store = CrushStore(":memory:")
        >>> key = store.put(['{"id": 1, "ok": true}', '{"id": 2, "ok": false}', '{"id": 3, "ok": true}'])
        >>> store.positions(key, where={"ok": True})
        [0, 2]
        """
        return self.retrieve(key, start=start, stop=stop, where=where, with_positions=True)[1]

    def retrieve_json(self, key: str, **kw: Any) -> str:
        """As :meth:`retrieve`, as a JSON array of the items' texts, verbatim.

        Parameters
        ----------
        key : str
            The array's key.
        **kw
            ``start``, ``stop`` and ``where``, as in :meth:`retrieve`.

        Returns
        -------
        str
            A JSON array of the matching items' texts, verbatim.

        Examples
        --------
        >>> from scwo_np.anchor import CrushStore
        >>> store = CrushStore(":memory:")
        >>> key = store.put(['{"id": 1, "ok": true}', '{"id": 2, "ok": false}', '{"id": 3, "ok": true}'])
        >>> store.retrieve_json(key, stop=1)
        '[{"id": 1, "ok": true}]'
        """
        items, pieces = self._load(key)
        return "[" + ",".join(pieces[i] for i in self._select(items, **kw)) + "]"

    @staticmethod
    def _select(items: list[Any], *, start=None, stop=None, where=None) -> list[int]:
        for name, v in (("start", start), ("stop", stop)):
            if v is not None:
                check_int(v, name=name, low=-(2**62))
        positions = range(len(items))[slice(start, stop)]
        if where is None:
            return list(positions)
        test = _matcher(where)
        return [i for i in positions if test(items[i])]

    def close(self) -> None:
        """Close the file (the store cannot be used after).

        Returns
        -------
        None
            Nothing.

        Examples
        --------
        >>> from scwo_np.anchor import CrushStore
        >>> CrushStore(":memory:").close()
        """
        self._db.close()

    def __enter__(self) -> CrushStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _matcher(where: object) -> Callable[[Any], bool]:
    if callable(where):
        return lambda item: bool(where(item))
    if not isinstance(where, Mapping):
        raise TypeError(f"where must be a mapping field -> value or a predicate; got {type(where).__name__}.")
    conds = list(where.items())

    def test(item: Any) -> bool:
        if not isinstance(item, Mapping):
            return False
        for name, want in conds:
            if name not in item:
                return False
            got = item[name]
            if callable(want):
                if not want(got):
                    return False
            elif got != want or type(got) is bool and type(want) is not bool:
                return False
        return True

    return test
