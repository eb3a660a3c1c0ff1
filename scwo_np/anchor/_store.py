"""Getting dropped items back: the full arrays, stored by key in one SQLite file, and what each crush kept.

:func:`~scwo_np.anchor.crush_json` with ``store=`` writes the whole input array and
the positions the crush kept, under the key its omission marker carries
(:meth:`CrushStore.put` with ``kept=``).  :meth:`CrushStore.retrieve` gives back,
by default, only what that crush **dropped**: filtered first (positions, fields,
operators; see :mod:`scwo_np.anchor._retrieval`), ranked by a ``query`` if given,
then paged (``offset``, ``limit``); :meth:`CrushStore.page` fills a page to a
token ceiling, counted on the exact text handed over.

The key identifies the crush, not only the array: the same array crushed to two
different kept sets has two keys (each retrieval returns what *its* crush
dropped), while the array itself is stored once.  A key stored without kept
positions (:meth:`CrushStore.put` without ``kept``, or every key in a file written
before kept positions were recorded) has nothing marked kept: all its items are
retrievable.

One file in WAL mode, one transaction per write (the array, the crush and the
evictions they cause commit together or not at all: a writer killed mid-write
leaves the previous entries readable), bounded in size with least-recently-used
eviction.  Files written by the previous version (the ``arrays`` table alone) open
and get the ``crushes`` table on first open (a read-only one is read as it is).
"""

from __future__ import annotations

import hashlib
import json
import operator
import os
import sqlite3
import threading
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring as _encode_string
from typing import Any

import numpy as np

from .._config import cache_dir
from .._sqlite import StoreError, begin_write, connect, read_transaction
from ..tokens import as_token_counter, count_tokens
from ..validation import check_int
from ._inputs import Pieces, read_document, squeeze_json
from ._retrieval import check_fields, check_filters, check_no_match, filter_positions, project, rank

__all__ = ["CrushStore", "Page", "array_key", "default_store_path", "json_strings"]

#: The arrays table, as every version has written it (``connect`` checks a file against it).
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
#: Added by this version: a crush's key -> its array's key and the positions it kept.
_CRUSHES = """
CREATE TABLE IF NOT EXISTS crushes (
    key TEXT PRIMARY KEY,
    array TEXT NOT NULL,
    used REAL NOT NULL,
    kept BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS crushes_array ON crushes (array);
CREATE INDEX IF NOT EXISTS crushes_used ON crushes (used);
"""


def json_strings(texts: Sequence[str]) -> list[str]:
    r"""Each text as a JSON string, as ``json.dumps(text, ensure_ascii=False)`` writes it (the
    encoder's C function called directly: a quarter of the time for 1,700 log lines).

    Examples
    --------
    >>> json_strings(["tab\there", "é"])
    ['"tab\\there"', '"é"']
    """
    return [_encode_string(t) for t in texts]


def array_key(pieces: Sequence[str], *, kept: Sequence[int] | None = None) -> str:
    """The key of an array, or of one crush of it (with ``kept``): 16 hex digits of a SHA-256.

    Without ``kept``: the hash of the array's stored form, the compact text
    ``[p1,p2,...]`` compressed (zlib, level 1; compression is one-to-one, so the key
    is as collision-resistant as a hash of the text). With ``kept``: the hash of
    that key and the kept positions (sorted, without repeats), the key
    :meth:`CrushStore.put` gives a crush, so two crushes of one array that kept
    different items have different keys.

    Parameters
    ----------
    pieces : sequence of str
        The array's elements, as JSON texts.
    kept : sequence of int, optional
        The positions a crush kept (0-based).

    Returns
    -------
    str
        16 hexadecimal digits.

    Examples
    --------
    >>> pieces = ['{"a": 1}', '{"a": 2}', '{"a": 3}']
    >>> len(array_key(pieces)), array_key(pieces, kept=[0, 2]) == array_key(pieces, kept=[2, 0])
    (16, True)
    >>> array_key(pieces, kept=[0]) == array_key(pieces, kept=[0, 2])
    False
    """
    akey = _packed(pieces)[1]
    if kept is None:
        return akey
    return _crush_key(akey, _check_kept(kept, len(pieces)))


def _crush_key(akey: str, kept: object) -> str:
    """The key of the crush of the array ``akey`` that kept ``kept`` (sorted, unique int64)."""
    at = np.unique(np.asarray(kept, dtype=np.int64))
    return hashlib.sha256(akey.encode("ascii") + b":" + at.astype("<i8").tobytes()).hexdigest()[:16]


def _check_kept(kept: object, n: int) -> np.ndarray:
    """``kept`` as sorted unique int64 positions in ``[0, n)``; errors name ``kept``."""
    if isinstance(kept, str | bytes | Mapping) or not isinstance(kept, Sequence | np.ndarray):
        raise TypeError(
            f"kept must be the positions a crush kept (a list or array of int); got {type(kept).__name__}."
        )
    arr = np.asarray(kept)
    if arr.size == 0:
        return np.empty(0, np.int64)
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise TypeError(
            f"kept must be a flat list of int positions (not bool, float or nested); got dtype {arr.dtype}, "
            f"shape {arr.shape}."
        )
    arr = np.unique(arr.astype(np.int64))
    if arr[0] < 0 or arr[-1] >= n:
        raise ValueError(f"kept holds position {int(arr[0] if arr[0] < 0 else arr[-1])}, outside 0..{n - 1}.")
    return arr


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


#: The last array packed: ``(its pieces, compressed body, key)``.  A crush asks for the key (to
#: write it in its marker) and then stores the array; the second call finds the same piece
#: objects and does not compress 100 KB again.
_last_packed: tuple[tuple, bytes, str] = ((), b"", "")
#: Only arrays this small (compressed) are remembered, so no large array outlives its call for long.
_PACKED_MAX_BYTES = 4 << 20


def _packed(pieces: Sequence[str]) -> tuple[bytes, str]:
    """``(compressed body, key)`` of an array; the last one is remembered (strings are immutable, so
    the same string objects in the same order are the same array)."""
    global _last_packed
    last, body, key = _last_packed
    if (
        last
        and isinstance(pieces, list | tuple)
        and len(last) == len(pieces)
        and all(map(operator.is_, last, pieces))
    ):
        return body, key
    body = _compress(_body(pieces))
    key = _key(body)
    if isinstance(pieces, list | tuple) and len(body) <= _PACKED_MAX_BYTES:
        _last_packed = (tuple(pieces), body, key)
    return body, key


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
    """Full arrays and what each crush kept, by key, in one SQLite file, at most ``max_bytes`` and ``max_entries``.

    Parameters
    ----------
    path : str or os.PathLike, optional
        The store file (default: :func:`default_store_path`); ``":memory:"`` for a
        store that lives as long as the object.
    max_bytes : int
        Compressed size kept; beyond it the least recently used arrays are evicted
        (default 256 MB).  One array larger than this is still stored, alone.
    max_entries : int
        Arrays kept (default 10,000), and crushes kept (as many).
    timeout : float
        Seconds to wait for another process's write lock.

    Examples
    --------
    >>> import json
    >>> from scwo_np.anchor import crush_json
    >>> store = CrushStore(":memory:")
    >>> text = json.dumps([{"id": i, "level": "ERROR" if i == 7 else "INFO"} for i in range(20)])
    >>> out = json.loads(crush_json(text, 5, store=store))
    >>> key = out[-1]["_omitted"]["key"]
    >>> [x["id"] for x in out[:-1]]  # what the crush kept (the error among them)
    [0, 7, 9, 10, 19]
    >>> [x["id"] for x in store.retrieve(key, limit=4)]  # what it dropped, never what it kept
    [1, 2, 3, 4]
    >>> store.retrieve(key, where={"id": {"gte": 6, "lt": 10}}, fields=["id"])
    [{'id': 6}, {'id': 8}]
    >>> page = store.page(key, budget=20, where={"level": "INFO"})
    >>> page.text, page.next_offset, page.remaining
    ('[{"id":1,"level":"INFO"},{"id":2,"level":"INFO"},{"id":3,"level":"INFO"}]', 3, 12)
    """

    #: What "when" means for recency (``created`` and ``used``, and so for eviction): the wall clock.
    #: Private; a test sets a logical clock on an instance (``store._clock = itertools.count().__next__``)
    #: so that the order of uses, not the resolution of ``time.time()``, decides what is evicted.
    _clock = staticmethod(time.time)

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
        self._crushes = self._migrate()

    def _migrate(self) -> bool:
        """Add the crushes table to a file written before it existed; whether the file has it."""
        db = self._db
        if db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'crushes'").fetchone():
            return True
        try:
            begin_write(db, self.path, "crush store")
        except PermissionError:  # a read-only file of the previous version: read as is, all retrievable
            return False
        try:
            for statement in _CRUSHES.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return True

    # -- writing ---------------------------------------------------------------------------
    def put(self, pieces: Sequence[str], key: str | None = None, *, kept: Sequence[int] | None = None) -> str:
        """Store an array given as its elements' texts (and what a crush kept of it); its key. One transaction.

        Parameters
        ----------
        pieces : sequence of str
            The array's elements, each a JSON text.
        key : str, optional
            The key to store it under (default: :func:`array_key` of the pieces, and of
            ``kept`` when given).
        kept : sequence of int, optional
            The positions the crush kept: retrieval under the key then gives back the
            other items by default (``dropped_only=True``).  Without it every item is
            retrievable.  The array itself is stored once, however many crushes of it
            are recorded.

        Returns
        -------
        str
            The key.

        Examples
        --------
        >>> from scwo_np.anchor import CrushStore
        >>> store = CrushStore(":memory:")
        >>> pieces = ['{"id": 1, "ok": true}', '{"id": 2, "ok": false}', '{"id": 3, "ok": true}']
        >>> key = store.put(pieces, kept=[0, 2])
        >>> key == store.put(pieces, kept=[0, 2]), store.retrieve(key)
        (True, [{'id': 2, 'ok': False}])
        >>> store.retrieve(store.put(pieces, kept=[1]))  # another crush of the same array, its own key
        [{'id': 1, 'ok': True}, {'id': 3, 'ok': True}]
        """
        body, akey = _packed(pieces)
        if key is not None and not isinstance(key, str):
            raise TypeError(f"key must be a str (or None for the content's key); got {type(key).__name__}.")
        at = None if kept is None else _check_kept(kept, len(pieces))
        if at is not None and not self._crushes:
            raise PermissionError(
                f"crush store file {self.path!r} is read-only and predates kept positions; it cannot record a "
                "crush. Give write permission, or use another store file."
            )
        if at is None:
            akey = akey if key is None else key
            ckey = None
        else:
            ckey = _crush_key(akey, at) if key is None else key
        now = self._clock()
        with self._lock:
            db = self._db
            begin_write(db, self.path, "crush store")
            try:
                db.execute(
                    "INSERT INTO arrays (key, created, used, n, size, body) VALUES (?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (key) DO UPDATE SET used = excluded.used",
                    (akey, now, now, len(pieces), len(body), body),
                )
                if ckey is not None:
                    db.execute(
                        "INSERT INTO crushes (key, array, used, kept) VALUES (?, ?, ?, ?) ON CONFLICT (key) "
                        "DO UPDATE SET array = excluded.array, used = excluded.used, kept = excluded.kept",
                        (ckey, akey, now, _compress(at.astype("<i8").tobytes())),
                    )
                elif self._crushes:  # the key now names the whole array, not an earlier crush
                    db.execute("DELETE FROM crushes WHERE key = ?", (akey,))
                self._evict(akey, ckey)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return akey if ckey is None else ckey

    def _evict(self, keep: str, keep_crush: str | None) -> None:
        db = self._db
        total, count = db.execute("SELECT COALESCE(SUM(size), 0), COUNT(*) FROM arrays").fetchone()
        doomed = []
        if total > self.max_bytes or count > self.max_entries:
            for key, size in db.execute(
                "SELECT key, size FROM arrays WHERE key != ? ORDER BY used, key", (keep,)
            ):
                if total <= self.max_bytes and count <= self.max_entries:
                    break
                doomed.append((key,))
                total -= size
                count -= 1
            db.executemany("DELETE FROM arrays WHERE key = ?", doomed)
        if not self._crushes:
            return
        db.executemany("DELETE FROM crushes WHERE array = ?", doomed)
        (crushes,) = db.execute("SELECT COUNT(*) FROM crushes").fetchone()
        if crushes > self.max_entries:
            db.execute(
                "DELETE FROM crushes WHERE key IN (SELECT key FROM crushes WHERE key != ? ORDER BY used, key "
                "LIMIT ?)",
                (keep_crush or "", crushes - self.max_entries),
            )

    # -- reading ---------------------------------------------------------------------------
    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        db = self._db
        if self._crushes and db.execute("SELECT 1 FROM crushes WHERE key = ?", (key,)).fetchone():
            return True
        return db.execute("SELECT 1 FROM arrays WHERE key = ?", (key,)).fetchone() is not None

    def __len__(self) -> int:
        return len(self._keys())

    def _keys(self) -> list[str]:
        sql = "SELECT key, used FROM arrays"
        if self._crushes:
            sql += " UNION ALL SELECT key, used FROM crushes"
        rows = self._db.execute(f"SELECT key FROM ({sql}) GROUP BY key ORDER BY MAX(used) DESC, key")
        return [k for (k,) in rows]

    def keys(self) -> list[str]:
        """The keys :meth:`retrieve` accepts (crushes' and arrays'), most recently used first.

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
        return self._keys()

    def _load(self, key: str) -> tuple[list[Any], list[str], np.ndarray | None]:
        """The items, their texts and the kept positions (None: nothing recorded) under ``key``."""
        if not isinstance(key, str):
            raise TypeError(f'key must be a str (the marker\'s "key"); got {type(key).__name__}.')
        with self._lock, read_transaction(self._db) as db:
            crush = None
            if self._crushes:
                crush = db.execute("SELECT array, kept FROM crushes WHERE key = ?", (key,)).fetchone()
            akey = key if crush is None else crush[0]
            row = db.execute("SELECT body FROM arrays WHERE key = ?", (akey,)).fetchone()
        if row is None:
            raise KeyError(
                f"no array under key {key!r} in {self.path} (never stored there, or evicted since)"
            )
        with self._lock:
            now = self._clock()
            try:
                self._db.execute("UPDATE arrays SET used = ? WHERE key = ?", (now, akey))
                if crush is not None:
                    self._db.execute("UPDATE crushes SET used = ? WHERE key = ?", (now, key))
            except sqlite3.OperationalError:  # a read-only file or a busy writer: recency is best effort
                pass
        try:  # zlib checks its own Adler-32 checksum: a damaged body is an error, not other items
            doc = read_document(zlib.decompress(row[0]).decode("utf-8", "surrogatepass"))
            kept = None
            if crush is not None:
                kept = np.frombuffer(zlib.decompress(crush[1]), dtype="<i8").astype(np.int64)
                if kept.size and (kept[0] < 0 or kept[-1] >= len(doc.items)):
                    raise ValueError("kept positions outside the array")
        except (zlib.error, UnicodeDecodeError, ValueError, TypeError) as exc:
            raise StoreError(
                f"crush store file {self.path!r} is damaged: the array under key {key!r} cannot be read back "
                f"({exc}). Delete that file; the arrays it held must be crushed again."
            ) from None
        return doc.items, doc.pieces, kept

    def _select(self, key: str, kw: dict[str, Any]) -> tuple[list[Any], list[str], list[int], dict[str, Any]]:
        """Items, texts, and the positions wanted (filtered, ranked; before offset/limit); the checked args."""
        f = check_filters(**kw)  # every argument checked before the store is read
        items, pieces, kept = self._load(key)
        if f["fields"] is not None and items and all(isinstance(it, str) for it in items):
            raise ValueError(
                "fields project JSON objects; the items under this key are text (records, sentences, "
                "hunks or pieces), given back whole: drop fields."
            )
        if f["fields"] is not None:
            check_fields(f["fields"], items)
        at = filter_positions(
            items, kept, where=f["where"], start=f["start"], stop=f["stop"], dropped_only=f["dropped_only"]
        )
        if not at and f["where"] is not None:
            check_no_match(kw.get("where"), items)  # a filter that cannot match this array is an error
        return items, pieces, rank(items, at, f["query"]), f

    def retrieve(
        self,
        key: str,
        *,
        where: Mapping[str, Any] | Callable[[Any], bool] | None = None,
        fields: Sequence[str] | None = None,
        start: int | None = None,
        stop: int | None = None,
        offset: int = 0,
        limit: int | None = None,
        dropped_only: bool = True,
        query: str | None = None,
        with_positions: bool = False,
    ) -> list[Any] | tuple[list[Any], list[int]]:
        """Items of the crush (or array) under ``key``: by default only those the crush dropped.

        Filters first (positions ``start:stop``, not kept, ``where``), then ranks by
        ``query`` if given, then pages (``offset``, ``limit``), then projects
        (``fields``); see :mod:`scwo_np.anchor._retrieval`.  Raises ``KeyError`` for an
        unknown key.

        Parameters
        ----------
        key : str
            The crush's key (from a marker, or :meth:`put`).
        where : mapping or callable, optional
            Field -> condition: a value (equality; ``True`` is not ``1``), a predicate on
            the value, or operators ``{"eq", "contains", "exists", "gt", "gte", "lt",
            "lte"}`` (``{"ms": {"gte": 100}}``, ``{"date": {"gte": "2026-01-01"}}``,
            ``{"error": {"exists": True}}``, ``{"msg": {"contains": "timeout"}}``); or a
            predicate on the whole item.
        fields : list of str, optional
            Keep only these fields of each item (in this order; absent ones left out). A field
            that no item has is a ``ValueError`` naming the fields there are (a typo gave
            empty objects).
        start, stop : int, optional
            A slice of positions in the whole array, as Python slices them.
        offset : int
            Matching items to skip (after ranking), to page.
        limit : int, optional
            The most items to return.
        dropped_only : bool
            Only the items the crush dropped (default). ``False``: kept ones too. A key
            stored without kept positions (older files, :meth:`put` without ``kept``)
            has none kept.
        query : str, optional
            Rank the matching items by relevance to it (BM25 over their words; ties keep
            array order), best first.
        with_positions : bool
            Also return each item's 0-based position in the array.

        Returns
        -------
        list
            The items, parsed (and their positions, with ``with_positions``).

        Examples
        --------
        >>> from scwo_np.anchor import CrushStore
        >>> store = CrushStore(":memory:")
        >>> pieces = [f'{{"id": {i}, "msg": "{m}"}}' for i, m in enumerate(["disk full", "ok", "ok", "disk slow"])]
        >>> key = store.put(pieces, kept=[0])
        >>> store.retrieve(key, where={"msg": {"contains": "disk"}})
        [{'id': 3, 'msg': 'disk slow'}]
        >>> store.retrieve(key, query="slow disk", fields=["id"], with_positions=True)
        ([{'id': 3}, {'id': 1}, {'id': 2}], [3, 1, 2])
        >>> store.retrieve(key, dropped_only=False, offset=1, limit=2)
        [{'id': 1, 'msg': 'ok'}, {'id': 2, 'msg': 'ok'}]
        """
        items, _, at, f = self._select(key, dict(where=where, fields=fields, start=start, stop=stop,
                                                 offset=offset, limit=limit, dropped_only=dropped_only,
                                                 query=query))  # fmt: skip
        at = _window(at, f["offset"], f["limit"])
        got = [project(items[i], f["fields"]) for i in at]
        return (got, at) if _flag(with_positions, "with_positions") else got

    def positions(self, key: str, **kw: Any) -> list[int]:
        """Positions in the array of the items :meth:`retrieve` returns for the same arguments.

        Parameters
        ----------
        key : str
            The crush's key.
        **kw
            The filters of :meth:`retrieve` (``where``, ``start``, ``stop``, ``offset``,
            ``limit``, ``dropped_only``, ``query``).

        Returns
        -------
        list of int
            0-based positions, in the order :meth:`retrieve` returns the items.

        Examples
        --------
        >>> from scwo_np.anchor import CrushStore
        >>> store = CrushStore(":memory:")
        >>> key = store.put(['{"id": 1, "ok": true}', '{"id": 2, "ok": false}', '{"id": 3, "ok": true}'], kept=[2])
        >>> store.positions(key, where={"ok": True}), store.positions(key, where={"ok": True}, dropped_only=False)
        ([0], [0, 2])
        """
        kw.pop("with_positions", None)
        return self.retrieve(key, **kw, with_positions=True)[1]

    def retrieve_json(self, key: str, **kw: Any) -> str:
        """As :meth:`retrieve`, as a JSON array of the items' texts, verbatim (projected ones compact).

        Parameters
        ----------
        key : str
            The crush's key.
        **kw
            The filters of :meth:`retrieve` (and ``fields``).

        Returns
        -------
        str
            A JSON array of the items' texts: verbatim, or with ``fields`` the projected
            items as compact JSON.

        Examples
        --------
        >>> from scwo_np.anchor import CrushStore
        >>> store = CrushStore(":memory:")
        >>> key = store.put(['{"id": 1, "ok": true}', '{"id": 2, "ok": false}', '{"id": 3, "ok": true}'], kept=[0])
        >>> store.retrieve_json(key, limit=1), store.retrieve_json(key, fields=["ok"])
        ('[{"id": 2, "ok": false}]', '[{"ok":false},{"ok":true}]')
        """
        kw.pop("with_positions", None)
        items, pieces, at, f = self._select(key, kw)
        at = _window(at, f["offset"], f["limit"])
        return "[" + ",".join(_text(items, pieces, i, f["fields"], compact=False) for i in at) + "]"

    def page(
        self,
        key: str,
        *,
        budget: int,
        token_counter: object = None,
        where: Mapping[str, Any] | Callable[[Any], bool] | None = None,
        fields: Sequence[str] | None = None,
        start: int | None = None,
        stop: int | None = None,
        offset: int = 0,
        limit: int | None = None,
        dropped_only: bool = True,
        query: str | None = None,
    ) -> Page:
        """One page of :meth:`retrieve`'s items as a compact JSON array text within ``budget`` tokens.

        The page takes the items from ``offset`` on while the whole text (brackets and
        commas included) stays within ``budget`` by ``token_counter``: the largest
        such number of items for a counter that never counts a longer text lower
        (every counter here), at most ``limit``.  Items are never cut: one that
        alone does not fit is a ``ValueError`` (project it smaller with ``fields``).
        Calling again with ``offset=page.next_offset`` (and the same filters) walks
        through every matching item exactly once.

        Parameters
        ----------
        key : str
            The crush's key.
        budget : int
            The most tokens the page's text may take (>= 1).
        token_counter : name, TokenCounter or callable ``str -> int``, optional
            What counts them (default ``"estimate"``).
        where, fields, start, stop, offset, limit, dropped_only, query : optional
            As in :meth:`retrieve` (``offset`` is where this page starts, ``limit``
            the most items on it).

        Returns
        -------
        Page
            ``text``, ``tokens``, ``items``, ``positions``, ``offset``,
            ``next_offset`` (None after the last page) and ``remaining``.

        Examples
        --------
        >>> from scwo_np.anchor import CrushStore
        >>> store = CrushStore(":memory:")
        >>> key = store.put([f'{{"id": {i}, "level": "INFO"}}' for i in range(10)], kept=[0, 9])
        >>> p = store.page(key, budget=14)
        >>> p.text, p.tokens, p.positions, p.next_offset, p.remaining
        ('[{"id":1,"level":"INFO"},{"id":2,"level":"INFO"}]', 13, [1, 2], 2, 6)
        >>> last = store.page(key, budget=14, offset=6)
        >>> last.positions, last.next_offset, last.remaining
        ([7, 8], None, 0)
        """
        budget = check_int(budget, name="budget", low=1)
        counter = as_token_counter(token_counter)
        items, pieces, at, f = self._select(key, dict(where=where, fields=fields, start=start, stop=stop,
                                                      offset=offset, limit=limit, dropped_only=dropped_only,
                                                      query=query))  # fmt: skip
        first = f["offset"]
        room = _window(at, first, f["limit"])
        texts: list[str] = []

        def text_of(k: int) -> str:
            while len(texts) < k:
                texts.append(_text(items, pieces, room[len(texts)], f["fields"], compact=True))
            return "[" + ",".join(texts[:k]) + "]"

        def fits(k: int) -> tuple[bool, int]:
            t = int(count_tokens([text_of(k)], counter)[0])
            return t <= budget, t

        ok, tokens = fits(0)
        if not ok:
            raise ValueError(
                f"budget={budget} is below the {tokens} tokens of an empty page '[]'; raise budget."
            )
        k = 0
        if room:
            ok, t = fits(1)
            if not ok:
                raise ValueError(
                    f"the item at position {room[0]} (offset {first}) alone makes a page of {t} tokens, above "
                    f"budget={budget}; raise budget"
                    + (" or project it smaller with fields" if isinstance(items[room[0]], Mapping) else "")
                    + f", or pass offset={first + 1} to page on past it (items are never cut)."
                )
            k, tokens = 1, t
            hi = None  # the smallest count known not to fit
            step = 1
            while hi is None:  # gallop: 2, 4, 8 ... items, then bisect
                nxt = min(k + step, len(room))
                if nxt == k:
                    break
                ok, t = fits(nxt)
                if ok:
                    k, tokens = nxt, t
                    step *= 2
                else:
                    hi = nxt
            while hi is not None and hi - k > 1:
                mid = (k + hi) // 2
                ok, t = fits(mid)
                if ok:
                    k, tokens = mid, t
                else:
                    hi = mid
        chosen = room[:k]
        remaining = len(at) - min(first, len(at)) - k
        return Page(
            text=text_of(k),
            tokens=tokens,
            items=[project(items[i], f["fields"]) for i in chosen],
            positions=chosen,
            offset=first,
            next_offset=first + k if remaining > 0 else None,
            remaining=remaining,
        )

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


@dataclass(frozen=True)
class Page:
    """One page of a crush's items (:meth:`CrushStore.page`).

    Parameters
    ----------
    text : str
        The compact JSON array handed over, within the budget.
    tokens : int
        Its tokens, by the page's counter, the whole text counted.
    items : list
        The same items, parsed (projected with ``fields``).
    positions : list of int
        Their 0-based positions in the array.
    offset : int
        Where the page starts among the matching items.
    next_offset : int or None
        Where the next page starts (None after the last page).
    remaining : int
        Matching items after this page.

    Examples
    --------
    >>> from scwo_np.anchor import CrushStore
    >>> store = CrushStore(":memory:")
    >>> key = store.put(['{"id": 1}', '{"id": 2}', '{"id": 3}'], kept=[0])
    >>> store.page(key, budget=100)
    Page(text='[{"id":2},{"id":3}]', tokens=5, items=[{'id': 2}, {'id': 3}], positions=[1, 2], offset=0, next_offset=None, remaining=0)
    """

    text: str
    tokens: int
    items: list[Any]
    positions: list[int]
    offset: int
    next_offset: int | None
    remaining: int


def _flag(v: object, name: str) -> bool:
    if not isinstance(v, bool):
        raise TypeError(f"{name} must be True or False; got {type(v).__name__} {v!r}.")
    return v


def _window(at: list[int], offset: int, limit: int | None) -> list[int]:
    return at[offset:] if limit is None else at[offset : offset + limit]


def _text(
    items: list[Any], pieces: Sequence[str], i: int, fields: tuple[str, ...] | None, *, compact: bool
) -> str:
    """Item ``i``'s JSON text: verbatim (without insignificant spaces when ``compact``), or projected."""
    if fields is not None and isinstance(items[i], Mapping):
        return json.dumps(project(items[i], fields), ensure_ascii=False, separators=(",", ":"))
    p = pieces[i]
    if compact and any(c in p for c in " \t\n\r"):
        return squeeze_json(p)
    return p
