"""Opening the package's SQLite stores: one place for the path checks, WAL and retries.

Both stores (:class:`~scwo_np.anchor.PositionLearner` and
:class:`~scwo_np.hsca.SnapshotStore`) are one SQLite file in WAL mode with
``synchronous=FULL``, opened by :func:`connect`:

* the path is checked first, so a missing directory, a directory or a file
  that is not a SQLite database is an ``OSError``/``ValueError`` that names
  the path, not a bare ``sqlite3`` error;
* each store marks its file (``PRAGMA application_id``, one value per kind of
  store, and ``user_version``) and refuses a file marked for another kind,
  or an unmarked one whose tables are not its own (a foreign SQLite file that
  happens to have a table of the same name); an unmarked file with exactly
  its tables (written before the marks existed) is adopted and marked;
* an existing file is checked with ``PRAGMA quick_check`` when opened (about
  0.3 ms per MB: 4 ms for a 14 MB file), so a damaged file is a ``ValueError`` naming the path
  and what to do, never a partial load;
* switching a new file to WAL and creating the schema take a write lock.
  When several processes open the same new file at once, SQLite's busy
  handler does not cover the journal-mode switch, so one of them could fail
  with ``database is locked``; these steps are retried with a short backoff
  until ``timeout`` seconds have passed.
"""

from __future__ import annotations

import os
import sqlite3
import time

from .validation import check_nonnegative_float

__all__ = ["StoreError", "begin_write", "connect", "read_transaction", "storable"]

_HEADER = b"SQLite format 3\x00"

#: ``PRAGMA application_id`` of each kind of store ("SCW" + a letter); 0 is an unmarked file.
APPLICATION_IDS = {
    "snapshot store": 0x53435748,  # SCWH
    "crush store": 0x53435743,  # SCWC
    "position learner": 0x53435750,  # SCWP
    "embedding cache": 0x53435745,  # SCWE
}
#: ``PRAGMA user_version``: the stores' file format.
FORMAT = 1


class StoreError(ValueError):
    """A store file that is damaged, or belongs to something else."""


def _check_path(path: str) -> None:
    if path == ":memory:":
        return
    if os.path.isdir(path):
        raise IsADirectoryError(f"store path {path!r} is a directory; pass a file name inside it.")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise FileNotFoundError(f"store path {path!r}: directory {parent!r} does not exist; create it first.")
    # (A file that is not a SQLite database is found by SQLite's own first read, in connect: opening
    # and closing the file here would drop every POSIX lock this process's connections hold on it, and
    # another process closing the store last would then delete the WAL under them: "disk I/O error".)


def _sqlite_header(path: str) -> bool:
    """Whether the file starts as a SQLite database does (read only once SQLite has refused it: no
    connection of this process holds it then)."""
    with open(path, "rb") as fh:
        return fh.read(len(_HEADER)) == _HEADER


def _retry(db: sqlite3.Connection, deadline: float, fn) -> None:
    delay = 0.005
    while True:
        try:
            fn(db)
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(delay)
            delay = min(2 * delay, 0.1)


def _read_only(path: str, kind: str, exc: Exception) -> PermissionError:
    return PermissionError(
        f"{kind} file {path!r} cannot be written ({exc}): the file or its folder is read-only. A store "
        f"writes its file and SQLite's {os.path.basename(path)}-wal and -shm beside it; give write "
        "permission, or copy the file somewhere writable."
    )


def begin_write(db: sqlite3.Connection, path: str, kind: str) -> None:
    """``BEGIN IMMEDIATE``, with a read-only file or folder named as the permission problem it is.

    SQLite opens a file it cannot write read-only and fails only at the first
    write inside the transaction, so writability is asked of the file system first
    (one ``access`` call).
    """
    if path != ":memory:" and not os.access(path, os.W_OK):
        raise _read_only(path, kind, "no write permission")
    try:
        db.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if "readonly" in str(exc) or "read-only" in str(exc):
            raise _read_only(path, kind, exc) from None
        raise


def _tables(db: sqlite3.Connection) -> dict[str, list[str]]:
    names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    return {t: [r[1] for r in db.execute(f'PRAGMA table_info("{t}")')] for t in names}


def _a(kind: str) -> str:
    return ("an " if kind[0] in "aeiou" else "a ") + kind


def _check_existing(db: sqlite3.Connection, path: str, schema: str, kind: str) -> bool:
    """Check a file that was there before: intact, and this kind's. Returns whether it needs marking."""
    rows = db.execute("PRAGMA quick_check").fetchall()
    if rows != [("ok",)]:
        problem = "; ".join(str(r[0]) for r in rows[:3])
        raise StoreError(
            f"{kind} file {path!r} is damaged ({problem}); its contents cannot be trusted. Move it away "
            "(keep it for recovery with the sqlite3 command's .recover) and start a new store."
        )
    app = db.execute("PRAGMA application_id").fetchone()[0]
    if app == APPLICATION_IDS[kind]:
        return False
    if app != 0:
        other = next((k for k, v in APPLICATION_IDS.items() if v == app), f"application_id {app}")
        raise StoreError(
            f"{path!r} is {_a(other)} file, not {_a(kind)}; pass the {kind}'s own file or a new name."
        )
    found = _tables(db)
    if found:
        mine = sqlite3.connect(":memory:")
        try:
            mine.executescript(schema)
            expected = _tables(mine)
        finally:
            mine.close()
        if found != expected:
            raise StoreError(
                f"{path!r} is a SQLite database of something else (tables {sorted(found)}), not {_a(kind)}; "
                "pass a new file name or the store's own file."
            )
    return True


def connect(
    path: str | os.PathLike, *, schema: str, timeout: float, kind: str
) -> tuple[str, sqlite3.Connection]:
    """``(path, connection)`` for a ``kind`` store file with ``schema`` (``CREATE ... IF NOT EXISTS``).

    The connection is in autocommit mode (``isolation_level=None``): callers
    open their own transactions.
    """
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"path must be a file name (str or os.PathLike); got {type(path).__name__}.")
    path = os.fspath(path)
    timeout = check_nonnegative_float(timeout, name="timeout")
    if timeout > 86400 * 365:
        timeout = 86400 * 365.0
    _check_path(path)
    existed = path != ":memory:" and os.path.isfile(path) and os.path.getsize(path) > 0
    deadline = time.monotonic() + timeout
    mark = f"PRAGMA application_id = {APPLICATION_IDS[kind]}; PRAGMA user_version = {FORMAT};"
    try:
        db = sqlite3.connect(path, timeout=timeout, check_same_thread=False, isolation_level=None)
        db.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        unmarked = _check_existing(db, path, schema, kind) if existed else True
        if path != ":memory:":
            _retry(db, deadline, lambda d: d.execute("PRAGMA journal_mode = WAL"))
        db.execute("PRAGMA synchronous = FULL")
        if unmarked:  # a marked file has its tables: nothing to write (a read-only file opens for reading)
            # One transaction: a process opening the same new file at once sees no tables or all of them.
            script = "BEGIN IMMEDIATE;\n" + schema + mark + "\nCOMMIT;"
            _retry(db, deadline, lambda d: d.executescript(script))
    except StoreError:
        raise
    except sqlite3.OperationalError as exc:
        if "readonly" in str(exc) or "read-only" in str(exc) or "unable to open" in str(exc):
            raise _read_only(path, kind, exc) from None
        raise StoreError(f"{kind} file {path!r} could not be opened: {exc}.") from None
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
        if existed and "not a database" in str(exc) and not _sqlite_header(path):
            raise ValueError(
                f"store path {path!r} exists and is not a SQLite database; pass a new file name or the "
                "store's own file."
            ) from None
        damaged = isinstance(exc, UnicodeDecodeError) or any(
            w in str(exc) for w in ("malformed", "not a database", "corrupt")
        )
        what = "is damaged" if damaged else "could not be opened as a SQLite database"
        raise StoreError(
            f"{kind} file {path!r} {what}: {exc}. Move it away and start a new store, or pass another file."
        ) from None
    return path, db


def storable(text: str, name: str) -> str:
    """``text`` if SQLite can store it; a lone surrogate (legal in a Python str, not in UTF-8) is a ``ValueError``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"{name} contains a lone surrogate ({text[exc.start]!r} at position {exc.start}), which has no UTF-8 "
            "form and cannot be stored; fix the text's decoding (e.g. bytes.decode('utf-8', errors='replace'))."
        ) from None
    return text


class read_transaction:
    """``with read_transaction(db):`` — one consistent snapshot for several SELECTs (WAL)."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        self.db.execute("BEGIN")
        return self.db

    def __exit__(self, *exc) -> None:
        self.db.execute("COMMIT")
