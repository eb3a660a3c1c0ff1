"""Opening the package's SQLite stores: one place for the path checks, WAL and retries.

Both stores (:class:`~scwo_np.anchor.PositionLearner` and
:class:`~scwo_np.hsca.SnapshotStore`) are one SQLite file in WAL mode with
``synchronous=FULL``, opened by :func:`connect`:

* the path is checked first, so a missing directory, a directory or a file
  that is not a SQLite database is an ``OSError``/``ValueError`` that names
  the path, not a bare ``sqlite3`` error;
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

__all__ = ["connect", "read_transaction", "storable"]

_HEADER = b"SQLite format 3\x00"


def _check_path(path: str) -> None:
    if path == ":memory:":
        return
    if os.path.isdir(path):
        raise IsADirectoryError(f"store path {path!r} is a directory; pass a file name inside it.")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise FileNotFoundError(f"store path {path!r}: directory {parent!r} does not exist; create it first.")
    if os.path.isfile(path) and os.path.getsize(path) > 0:
        with open(path, "rb") as fh:
            head = fh.read(len(_HEADER))
        if head != _HEADER:
            raise ValueError(
                f"store path {path!r} exists and is not a SQLite database; pass a new file name or the "
                "store's own file."
            )


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


def connect(path: str | os.PathLike, *, schema: str, timeout: float) -> tuple[str, sqlite3.Connection]:
    """``(path, connection)`` for a store file with ``schema`` (``CREATE ... IF NOT EXISTS``).

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
    deadline = time.monotonic() + timeout
    try:
        db = sqlite3.connect(path, timeout=timeout, check_same_thread=False, isolation_level=None)
        db.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        if path != ":memory:":
            _retry(db, deadline, lambda d: d.execute("PRAGMA journal_mode = WAL"))
        db.execute("PRAGMA synchronous = FULL")
        _retry(db, deadline, lambda d: d.executescript(schema))
    except sqlite3.DatabaseError as exc:
        raise ValueError(f"store path {path!r} could not be opened as a SQLite database: {exc}.") from None
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
