"""Persistence for HSCA: sessions, a SQLite snapshot store, and cross-session aggregation.

* :class:`SessionState` — the spec's 5.1 migration: ``task_summaries`` kept,
  ``context_snapshots`` added (default empty); ``from_dict`` reads old
  dictionaries without the new field.
* :func:`support_strength` — 5.2: a claim's support is the mean layer-1
  score of the chunks that ground it, so sparse (shallow) sources give weak
  support however many query words they contain.
* :class:`SnapshotStore` — 8.5: one SQLite file (WAL, ``synchronous=FULL``);
  each :meth:`~SnapshotStore.save` is one transaction, so a session's snapshots
  are written whole or not at all.  ``keep_text=False`` stores weight maps
  only (chunk text is dropped; loaded chunks have ``text=""``).
* Cross-session aggregation (8.3): ids are namespaced ``"<session>/<id>"``
  when stored, and :meth:`~SnapshotStore.aggregate_domains` merges the domain
  summaries of several sessions, each snapshot weighted by its macro weight
  and by ``0.5 ** (age / half_life)`` — recent beats count more, old ones fade
  instead of polluting the present.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .._sqlite import StoreError, begin_write, connect, read_transaction, storable
from ..validation import (
    check_finite_float,
    check_positive_float,
    check_text,
    check_texts,
    check_unit_interval,
)
from ._types import ContextSnapshot, WeightedChunk

__all__ = ["SessionState", "SnapshotStore", "support_strength"]

_FIX = "set it to a float in [0, 1], as HSCAEngine computes it"


def _check_weights(s: ContextSnapshot, where: str) -> None:
    """The snapshot's numbers are numbers: a ``TypeError``/``ValueError`` naming the field and the fix.

    (``to_dict`` rounds them, and ``round("high", 4)`` says only "doesn't define __round__".)
    """
    for attr, meaning in (("macro_weight", "the beat's structural density"),):
        _weight(getattr(s, attr), f"{where}.{attr}", meaning)
    if not isinstance(s.domain_summary, dict):
        raise TypeError(
            f"{where}.domain_summary must be a dict of domain tag -> weight; got {type(s.domain_summary).__name__}."
        )
    for k, v in s.domain_summary.items():
        if not isinstance(k, str):
            raise TypeError(f"{where}.domain_summary keys must be domain tags (str); got {k!r}.")
        try:
            check_finite_float(v, name=f"{where}.domain_summary[{k!r}]")
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{exc} Set it to the domain's weight, a float.") from None
    if not isinstance(s.chunks, list):
        raise TypeError(f"{where}.chunks must be a list of WeightedChunk; got {type(s.chunks).__name__}.")
    for k, c in enumerate(s.chunks):
        if not isinstance(c, WeightedChunk):
            raise TypeError(f"{where}.chunks[{k}] must be a WeightedChunk; got {type(c).__name__}.")
        for attr, meaning in (
            ("layer1_score", "layer 1's relational weight"),
            ("coherence_score", "coherence"),
        ):
            _weight(getattr(c, attr), f"{where}.chunks[{k}].{attr}", meaning)


def _weight(value: object, name: str, meaning: str) -> None:
    try:
        check_unit_interval(value, name=name, meaning=meaning)
    except TypeError:
        raise TypeError(
            f"{name} must be a number in [0, 1] ({meaning}); got {type(value).__name__} {value!r:.40}: {_FIX}."
        ) from None
    except ValueError as exc:
        raise ValueError(f"{str(exc).rstrip('.')}: {_FIX}.") from None


@dataclass
class SessionState:
    """A session: the old text summaries and the new snapshot map (5.1).

    Parameters
    ----------
    session_id : str
        The session's id.
    task_summaries : list of str
        Text summaries (the state before HSCA, kept beside it).
    context_snapshots : list of ContextSnapshot
        The session's snapshots, in order.

    Examples
    --------
    >>> state = SessionState("alice", ["asked about contracts"])
    >>> SessionState.from_dict(state.to_dict()) == state
    True
    """

    session_id: str
    task_summaries: list[str] = field(default_factory=list)
    context_snapshots: list[ContextSnapshot] = field(default_factory=list)

    def to_dict(self) -> dict:
        """The session as a JSON-ready dict (its snapshots rounded as :meth:`ContextSnapshot.to_dict`:
        scores to 4 places).

        Returns
        -------
        dict
            The fields by name.

        Examples
        --------
        >>> SessionState("alice").to_dict()
        {'session_id': 'alice', 'task_summaries': [], 'context_snapshots': []}
        """
        return {
            "session_id": self.session_id,
            "task_summaries": list(self.task_summaries),
            "context_snapshots": [s.to_dict() for s in self.context_snapshots],
        }

    @classmethod
    def from_dict(cls, d: dict) -> SessionState:
        """A session from :meth:`to_dict`'s form.

        Parameters
        ----------
        d : dict
            The fields by name.

        Returns
        -------
        SessionState
            The session.

        Examples
        --------
        >>> SessionState.from_dict({"session_id": "alice"}).session_id
        'alice'
        """
        if not isinstance(d, dict) or not isinstance(d.get("session_id"), str):
            raise ValueError("SessionState.from_dict needs a dict with a str 'session_id'.")
        summaries = d.get("task_summaries", [])
        if not isinstance(summaries, list) or not all(isinstance(s, str) for s in summaries):
            raise ValueError("SessionState.from_dict: 'task_summaries' must be a list of str.")
        return cls(
            d["session_id"],
            list(summaries),
            [ContextSnapshot.from_dict(s) for s in d.get("context_snapshots", [])],
        )


def support_strength(grounding: Sequence[WeightedChunk]) -> float:
    """Support of a claim from the layer-1 scores of its grounding chunks (5.2); 0 without any.

    Parameters
    ----------
    grounding : sequence of WeightedChunk
        The chunks a claim rests on.

    Returns
    -------
    float
        The mean of their layer-1 scores, in [0, 1]; 0 without any.

    Examples
    --------
    >>> deep = WeightedChunk("a", "", 0.8, [], 0.9, [], None)
    >>> shallow = WeightedChunk("b", "", 0.1, [], 0.9, [], None)
    >>> support_strength([deep]), round(support_strength([shallow, shallow, shallow]), 6)
    (0.8, 0.1)
    """
    if isinstance(grounding, WeightedChunk | str | bytes) or not isinstance(grounding, Sequence):
        raise TypeError(
            f"grounding must be a list of WeightedChunk (the chunks a claim rests on); got {type(grounding).__name__}."
        )
    scores = []
    for i, c in enumerate(grounding):
        if not isinstance(c, WeightedChunk):
            raise TypeError(f"grounding[{i}] must be a WeightedChunk; got {type(c).__name__}.")
        scores.append(check_unit_interval(c.layer1_score, name=f"grounding[{i}].layer1_score"))
    return sum(scores) / len(scores) if scores else 0.0


KIND = "snapshot store"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS snapshots (
    snapshot_id TEXT PRIMARY KEY, session TEXT NOT NULL, position INTEGER NOT NULL, macro_weight REAL NOT NULL,
    domain_summary TEXT NOT NULL, forced INTEGER NOT NULL, created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS snapshots_session ON snapshots (session, position);
CREATE TABLE IF NOT EXISTS chunks (
    chunk_id TEXT PRIMARY KEY, snapshot_id TEXT NOT NULL, idx INTEGER NOT NULL, text TEXT, layer1 REAL NOT NULL,
    coherence REAL NOT NULL, domain_tags TEXT NOT NULL, nuance_flags TEXT NOT NULL, created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_snapshot ON chunks (snapshot_id, idx);
CREATE TABLE IF NOT EXISTS buffer (
    session TEXT NOT NULL, idx INTEGER NOT NULL, chunk_id TEXT NOT NULL, text TEXT, layer1 REAL NOT NULL,
    coherence REAL NOT NULL, domain_tags TEXT NOT NULL, nuance_flags TEXT NOT NULL, created_at REAL NOT NULL,
    PRIMARY KEY (session, idx)
);
"""


class SnapshotStore:
    """Snapshots of many sessions in one SQLite file (see the module documentation).

    Parameters
    ----------
    path : str or os.PathLike
        The SQLite file (its folder must exist), or ``":memory:"``.
    keep_text : bool
        Store the chunks' text (False keeps only their scores and tags).
    timeout : float
        Seconds to wait for another process's write lock.

    Examples
    --------
    >>> store = SnapshotStore(":memory:")
    >>> c = WeightedChunk("c1", "the text", 0.6, ["physics"], 0.8, [], "s1", created_at=1.0)
    >>> store.save("alice", [ContextSnapshot("s1", [c], 0.6, {"physics": 1.0}, 0, False, created_at=1.0)])
    >>> [s.snapshot_id for s in store.load("alice")], store.sessions()
    (['alice/s1'], ['alice'])
    """

    def __init__(
        self, path: str | os.PathLike = ":memory:", *, keep_text: bool = True, timeout: float = 30.0
    ):
        self.keep_text = bool(keep_text)
        self._lock = threading.Lock()
        self.path, self._db = connect(path, schema=_SCHEMA, timeout=timeout, kind=KIND)

    @staticmethod
    def _ns(session: str, ident: str) -> str:
        return ident if ident.startswith(f"{session}/") else f"{session}/{ident}"

    def save(
        self,
        session: str,
        snapshots: Sequence[ContextSnapshot],
        *,
        buffer: Sequence[WeightedChunk] | None = None,
    ) -> None:
        """Store ``snapshots`` of ``session`` (replacing same ids), and its open beat, atomically.

        Parameters
        ----------
        session : str
            The session's id.
        snapshots : sequence of ContextSnapshot
            Its snapshots (from :meth:`HSCAEngine.get_macro_context`).
        buffer : sequence of WeightedChunk, optional
            The turns not yet in a snapshot (:attr:`HSCAEngine.buffer`): they replace the
            session's stored open beat, so :meth:`HSCAEngine.from_store` restores every turn.
            None leaves the stored open beat as it is.

        Returns
        -------
        None
            The snapshots are committed when it returns.

        Examples
        --------
        >>> from scwo_np.hsca import HSCAEngine, SnapshotStore
        >>> eng = HSCAEngine()
        >>> _ = eng.ingest_turn("The court ruled that the contract was void.")
        >>> _ = eng.take_snapshot()
        >>> store = SnapshotStore(":memory:")
        >>> store.save("alice", eng.get_macro_context())
        >>> store.sessions()
        ['alice']
        """
        if not isinstance(session, str) or not session or "/" in session:
            raise ValueError("session must be a non-empty str without '/'.")
        storable(session, "session")
        if isinstance(snapshots, ContextSnapshot | str | bytes) or not isinstance(snapshots, Sequence):
            raise TypeError(f"snapshots must be a list of ContextSnapshot; got {type(snapshots).__name__}.")
        for i, s in enumerate(snapshots):
            if not isinstance(s, ContextSnapshot):
                raise TypeError(f"snapshots[{i}] must be a ContextSnapshot; got {type(s).__name__}.")
            _check_weights(s, f"snapshots[{i}]")
            try:  # every field as from_dict checks it (a NaN time would reach SQLite as NULL)
                ContextSnapshot.from_dict(s.to_dict())
            except ValueError as exc:
                raise ValueError(f"snapshots[{i}]: {exc}") from None
        buffer_rows = None if buffer is None else self._buffer_rows(session, buffer)
        snap_rows, chunk_rows = [], []
        for s in snapshots:
            sid = storable(self._ns(session, s.snapshot_id), "snapshot_id")
            snap_rows.append((sid, session, s.conversation_position, s.macro_weight, json.dumps(s.domain_summary),
                              int(s.forced), s.created_at))  # fmt: skip
            for k, c in enumerate(s.chunks):
                text = storable(c.text, f"chunk {c.chunk_id!r} text") if self.keep_text else None
                chunk_rows.append((storable(self._ns(session, c.chunk_id), "chunk_id"), sid, k, text,
                                   c.layer1_score, c.coherence_score, json.dumps(c.domain_tags),
                                   json.dumps(c.nuance_flags), c.created_at))  # fmt: skip
        with self._lock:
            begin_write(self._db, self.path, KIND)
            try:
                self._db.executemany(
                    "INSERT OR REPLACE INTO snapshots VALUES (?, ?, ?, ?, ?, ?, ?)", snap_rows
                )
                self._db.executemany("DELETE FROM chunks WHERE snapshot_id = ?", [(r[0],) for r in snap_rows])
                self._db.executemany(
                    "INSERT OR REPLACE INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", chunk_rows
                )
                if buffer_rows is not None:
                    self._db.execute("DELETE FROM buffer WHERE session = ?", (session,))
                    self._db.executemany("INSERT INTO buffer VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", buffer_rows)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def _buffer_rows(self, session: str, buffer: Sequence[WeightedChunk]) -> list[tuple]:
        if isinstance(buffer, WeightedChunk | str | bytes) or not isinstance(buffer, Sequence):
            raise TypeError(f"buffer must be a list of WeightedChunk; got {type(buffer).__name__}.")
        rows = []
        for k, c in enumerate(buffer):
            if not isinstance(c, WeightedChunk):
                raise TypeError(f"buffer[{k}] must be a WeightedChunk; got {type(c).__name__}.")
            try:
                WeightedChunk.from_dict(c.to_dict())
            except ValueError as exc:
                raise ValueError(f"buffer[{k}]: {exc}") from None
            text = storable(c.text, f"chunk {c.chunk_id!r} text") if self.keep_text else None
            rows.append((session, k, storable(self._ns(session, c.chunk_id), "chunk_id"), text, c.layer1_score,
                         c.coherence_score, json.dumps(c.domain_tags), json.dumps(c.nuance_flags),
                         c.created_at))  # fmt: skip
        return rows

    def load_buffer(self, session: str) -> list[WeightedChunk]:
        """The session's open beat as last saved (``save(..., buffer=...)``), oldest turn first.

        Parameters
        ----------
        session : str
            The session's id.

        Returns
        -------
        list of WeightedChunk
            The turns not yet in a snapshot, ids namespaced; empty when none were saved.

        Examples
        --------
        >>> from scwo_np.hsca import HSCAEngine, SnapshotStore
        >>> eng = HSCAEngine()
        >>> _ = eng.ingest_turn("The court ruled that the contract was void.")
        >>> store = SnapshotStore(":memory:")
        >>> store.save("alice", [], buffer=eng.buffer)
        >>> [c.text for c in store.load_buffer("alice")], store.sessions()
        (['The court ruled that the contract was void.'], ['alice'])
        """
        return self._read(session, self._load_buffer)

    def _load_buffer(self, session: str) -> list[WeightedChunk]:
        with self._lock, read_transaction(self._db):
            rows = self._db.execute(
                "SELECT chunk_id, text, layer1, coherence, domain_tags, nuance_flags, created_at FROM buffer "
                "WHERE session = ? ORDER BY idx",
                (session,),
            ).fetchall()
        return [
            WeightedChunk(cid, text or "", l1, json.loads(tags), coh, json.loads(flags), None, created)
            for cid, text, l1, coh, tags, flags, created in rows
        ]

    def _read(self, session: str, read: Callable[[str], list]) -> list:
        """``read(session)``, with damage inside a value a ``StoreError`` naming the file."""
        storable(check_text(session, name="session"), "session")
        try:
            return read(session)
        except (sqlite3.DatabaseError, UnicodeDecodeError, json.JSONDecodeError, TypeError) as exc:
            raise StoreError(
                f"{KIND} file {self.path!r} is damaged: session {session!r} cannot be read back ({exc}). "
                "Move the file away and start a new store."
            ) from None

    def load(self, session: str) -> list[ContextSnapshot]:
        """The session's snapshots in conversation order, ids namespaced.

        A row that cannot be read back (damage inside a value, which the check on
        opening cannot see) is a ``ValueError`` naming the file, never a partial load.

        Parameters
        ----------
        session : str
            The session's id.

        Returns
        -------
        list of ContextSnapshot
            Its snapshots, ids prefixed with the session (``"alice/..."``); empty for an unknown session.

        Examples
        --------
        >>> from scwo_np.hsca import SnapshotStore, ContextSnapshot
        >>> store = SnapshotStore(":memory:")
        >>> store.save("bob", [ContextSnapshot("s1", [], 0.5, {"legal": 1.0}, 0, False, created_at=0.0)])
        >>> [s.snapshot_id for s in store.load("bob")], store.load("nobody")
        (['bob/s1'], [])
        """
        return self._read(session, self._load)

    def _load(self, session: str) -> list[ContextSnapshot]:
        with self._lock, read_transaction(self._db):
            snaps = self._db.execute(
                "SELECT snapshot_id, position, macro_weight, domain_summary, forced, created_at FROM snapshots "
                "WHERE session = ? ORDER BY position",
                (session,),
            ).fetchall()
            rows = self._db.execute(
                "SELECT c.snapshot_id, c.chunk_id, c.text, c.layer1, c.coherence, c.domain_tags, c.nuance_flags, "
                "c.created_at FROM chunks c JOIN snapshots s ON c.snapshot_id = s.snapshot_id "
                "WHERE s.session = ? ORDER BY c.snapshot_id, c.idx",
                (session,),
            ).fetchall()
        by_snap: dict[str, list[WeightedChunk]] = {}
        for sid, cid, text, l1, coh, tags, flags, created in rows:
            by_snap.setdefault(sid, []).append(
                WeightedChunk(cid, text or "", l1, json.loads(tags), coh, json.loads(flags), sid, created)
            )
        return [
            ContextSnapshot(sid, by_snap.get(sid, []), mw, json.loads(ds), pos, bool(forced), created)
            for sid, pos, mw, ds, forced, created in snaps
        ]

    def sessions(self) -> list[str]:
        """The sessions stored, sorted.

        Returns
        -------
        list of str
            Their ids.

        Examples
        --------
        >>> SnapshotStore(":memory:").sessions()
        []
        """
        with self._lock:
            return [
                s
                for (s,) in self._db.execute(
                    "SELECT session FROM snapshots UNION SELECT session FROM buffer ORDER BY session"
                )
            ]

    def aggregate_domains(
        self, sessions: Sequence[str], *, half_life: float = 7 * 86400.0, now: float | None = None
    ) -> dict[str, float]:
        """Merged domain distribution of ``sessions`` (macro weight x time decay; sums to 1).

        Parameters
        ----------
        sessions : sequence of str
            The sessions to merge.
        half_life : float
            Seconds after which a snapshot counts half (default a week).
        now : float, optional
            The time decay is measured to (default: now).

        Returns
        -------
        dict of str to float
            Domain tag -> weight, summing to 1 (empty without snapshots).

        Examples
        --------
        >>> from scwo_np.hsca import SnapshotStore, ContextSnapshot
        >>> store = SnapshotStore(":memory:")
        >>> store.save("a", [ContextSnapshot("s1", [], 0.5, {"legal": 1.0}, 0, False, created_at=0.0)])
        >>> store.save("b", [ContextSnapshot("s1", [], 0.5, {"physics": 1.0}, 0, False, created_at=0.0)])
        >>> store.aggregate_domains(["a", "b"], now=0.0)
        {'legal': 0.5, 'physics': 0.5}
        """
        sessions = check_texts(sessions, name="sessions")
        half_life = check_positive_float(half_life, name="half_life", meaning="seconds")
        now = time.time() if now is None else check_finite_float(now, name="now")
        acc: dict[str, float] = {}
        for session in sessions:
            for s in self.load(session):
                w = s.macro_weight * 0.5 ** (max(now - s.created_at, 0.0) / half_life)
                for tag, v in s.domain_summary.items():
                    acc[tag] = acc.get(tag, 0.0) + w * v
        total = sum(acc.values())
        return {k: v / total for k, v in sorted(acc.items())} if total > 0 else {}

    def close(self) -> None:
        """Close the file (the store cannot be used after).

        Returns
        -------
        None
            Nothing.

        Examples
        --------
        >>> SnapshotStore(":memory:").close()
        """
        with self._lock:
            self._db.close()
