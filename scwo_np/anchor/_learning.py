"""Learned position importance (the anchoring plan's idea 5), persisted in SQLite.

:class:`PositionLearner` records, per tool, which positions of a crushed array
users actually retrieved, as counts in five buckets (the plan's ``front_10%``,
``front_30%``, ``middle``, ``back_30%``, ``back_10%``), and once a tool has
``min_samples`` recorded compressions turns them into
:class:`~scwo_np.anchor.AnchorWeights` for :func:`~scwo_np.anchor.crush`.

Storage is one SQLite file in WAL mode with ``synchronous=FULL``: every
:meth:`~PositionLearner.record_retrieval` is one transaction, so a crash
loses nothing that was recorded, and several threads or processes can write
to the same file at once (writers wait for each other, up to ``timeout``).
``path=":memory:"`` keeps everything in memory.

Where the plan is loose: a bucket nobody retrieved counts as 0 (the plan fell
back to fixed defaults for missing buckets, so a tool whose users never look
at the back would still get back anchors); the weights are a pure function of
the counts, so a given snapshot always gives the same crush.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from .._sqlite import begin_write, connect, read_transaction, storable
from ..validation import check_int
from ._config import AnchorWeights

__all__ = ["BUCKETS", "PositionLearner", "PositionRetrievalPattern", "classify_position"]

#: Position buckets, front to back.
BUCKETS = ("front_10%", "front_30%", "middle", "back_30%", "back_10%")


def classify_position(idx: int, size: int) -> str:
    """The plan's bucket for position ``idx`` of an array of ``size`` items.

    Parameters
    ----------
    idx : int
        A position in the array.
    size : int
        The array's length.

    Returns
    -------
    str
        One of ``BUCKETS``.

    Examples
    --------
    >>> [classify_position(i, 100) for i in (0, 15, 50, 75, 95)]
    ['front_10%', 'front_30%', 'middle', 'back_30%', 'back_10%']
    """
    size = check_int(size, name="size", low=1)
    idx = check_int(idx, name="idx", low=0, high=size - 1)
    rel = idx / size
    if rel < 0.1:
        return "front_10%"
    if rel < 0.3:
        return "front_30%"
    if rel > 0.9:
        return "back_10%"
    if rel > 0.7:
        return "back_30%"
    return "middle"


@dataclass(frozen=True)
class PositionRetrievalPattern:
    """What was learned for one tool: compressions recorded and retrievals per bucket.

    Parameters
    ----------
    tool_name : str
        The tool.
    total_compressions : int
        Compressions recorded for it.
    position_retrievals : dict of str to int
        Retrievals per position bucket (the names of ``BUCKETS``).

    Examples
    --------
    >>> p = PositionRetrievalPattern("search", 12, {"front_10%": 3, "back_10%": 1})
    >>> p.get_position_weights()
    {'front_10%': 0.75, 'front_30%': 0.0, 'middle': 0.0, 'back_30%': 0.0, 'back_10%': 0.25}
    """

    tool_name: str
    total_compressions: int
    position_retrievals: dict[str, int]

    def get_position_weights(self) -> dict[str, float]:
        """Each bucket's share of the retrievals.

        With none recorded, the front and back buckets share equally (the plan's
        ``{"front": 0.5, "middle": 0.0, "back": 0.5}``, given in the same bucket names as
        the other case: the plan's own code mixed the two sets of names).

        Returns
        -------
        dict of str to float
            Bucket name (``BUCKETS``) -> share, summing to 1.

        Examples
        --------
        >>> PositionRetrievalPattern("search", 0, {}).get_position_weights()
        {'front_10%': 0.25, 'front_30%': 0.25, 'middle': 0.0, 'back_30%': 0.25, 'back_10%': 0.25}
        """
        total = sum(self.position_retrievals.values())
        if total == 0:
            return {"front_10%": 0.25, "front_30%": 0.25, "middle": 0.0, "back_30%": 0.25, "back_10%": 0.25}
        return {b: self.position_retrievals.get(b, 0) / total for b in BUCKETS}


KIND = "position learner"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS tools (tool TEXT PRIMARY KEY, compressions INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS positions (
    tool TEXT NOT NULL, bucket TEXT NOT NULL, count INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (tool, bucket)
);
"""


class PositionLearner:
    """Per-tool retrieval counts in one SQLite file (see the module documentation).

    Parameters
    ----------
    path : str or os.PathLike
        The SQLite file (its folder must exist), or ``":memory:"``.
    min_samples : int
        Compressions of a tool before :meth:`weights` returns its learned weights.
    timeout : float
        Seconds to wait for another process's write lock.

    Examples
    --------
    >>> learner = PositionLearner(":memory:", min_samples=2)
    >>> learner.record_retrieval("search", 100, [0, 1, 95])
    >>> learner.weights("search") is None  # one compression is not enough
    True
    >>> learner.record_retrieval("search", 100, [2])
    >>> learner.weights("search")
    AnchorWeights(front=0.75, back=0.25, middle=0.0)
    """

    def __init__(self, path: str | os.PathLike = ":memory:", *, min_samples: int = 10, timeout: float = 30.0):
        self.min_samples = check_int(min_samples, name="min_samples", low=1)
        self._lock = threading.Lock()
        self.path, self._db = connect(path, schema=_SCHEMA, timeout=timeout, kind=KIND)

    def record_retrieval(self, tool_name: str, original_size: int, retrieved_indices: Sequence[int]) -> None:
        """Record one compression of ``tool_name``'s output and the positions users then retrieved.

        Parameters
        ----------
        tool_name : str
            The tool whose output was crushed.
        original_size : int
            The array's length before crushing.
        retrieved_indices : sequence of int
            The positions the user then retrieved.

        Returns
        -------
        None
            The counts are committed.

        Examples
        --------
        >>> from scwo_np.anchor import PositionLearner
        >>> learner = PositionLearner(":memory:", min_samples=1)
        >>> learner.record_retrieval("search", 100, [0, 1, 95])
        >>> learner.pattern("search").total_compressions
        1
        """
        if not isinstance(tool_name, str) or not tool_name:
            raise ValueError("tool_name must be a non-empty str.")
        storable(tool_name, "tool_name")
        if isinstance(original_size, bool) or not isinstance(original_size, int) or original_size < 1:
            raise ValueError(f"original_size must be a positive integer; got {original_size!r}.")
        if isinstance(retrieved_indices, str | bytes) or not isinstance(retrieved_indices, Iterable):
            raise TypeError(
                "retrieved_indices must be a list of the positions users retrieved; got "
                f"{type(retrieved_indices).__name__}."
            )
        counts = dict.fromkeys(BUCKETS, 0)
        for i in retrieved_indices:
            if isinstance(i, bool) or not isinstance(i, int | np.integer) or not 0 <= i < original_size:
                raise ValueError(
                    f"retrieved index {i!r} is not a position in an array of {original_size} items."
                )
            counts[classify_position(int(i), original_size)] += 1
        with self._lock:
            begin_write(self._db, self.path, KIND)
            try:
                self._db.execute(
                    "INSERT INTO tools (tool, compressions) VALUES (?, 1) "
                    "ON CONFLICT(tool) DO UPDATE SET compressions = compressions + 1",
                    (tool_name,),
                )
                self._db.executemany(
                    "INSERT INTO positions (tool, bucket, count) VALUES (?, ?, ?) "
                    "ON CONFLICT(tool, bucket) DO UPDATE SET count = count + excluded.count",
                    [(tool_name, b, c) for b, c in counts.items() if c],
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def pattern(self, tool_name: str) -> PositionRetrievalPattern:
        """What was recorded for ``tool_name``, read in one transaction.

        Parameters
        ----------
        tool_name : str
            The tool.

        Returns
        -------
        PositionRetrievalPattern
            Its compressions and retrievals per bucket (zeros for an unknown tool).

        Examples
        --------
        >>> from scwo_np.anchor import PositionLearner
        >>> learner = PositionLearner(":memory:", min_samples=1)
        >>> learner.record_retrieval("search", 100, [0, 1, 95])
        >>> learner.pattern("search").position_retrievals["front_10%"]
        2
        """
        with self._lock, read_transaction(self._db) as db:  # both counts from one moment
            row = db.execute("SELECT compressions FROM tools WHERE tool = ?", (tool_name,)).fetchone()
            rows = db.execute("SELECT bucket, count FROM positions WHERE tool = ?", (tool_name,)).fetchall()
        counts = dict.fromkeys(BUCKETS, 0)
        counts.update(dict(rows))
        return PositionRetrievalPattern(tool_name, row[0] if row else 0, counts)

    def weights(self, tool_name: str) -> AnchorWeights | None:
        """Learned anchor weights for ``tool_name``, or None below ``min_samples`` compressions.

        Parameters
        ----------
        tool_name : str
            The tool.

        Returns
        -------
        AnchorWeights or None
            Normalised weights, or None before ``min_samples`` compressions.

        Examples
        --------
        >>> from scwo_np.anchor import PositionLearner
        >>> learner = PositionLearner(":memory:", min_samples=1)
        >>> learner.record_retrieval("search", 100, [0, 1, 95])
        >>> learner.weights("search"), learner.weights("unknown")
        (AnchorWeights(front=0.6666666666666666, back=0.3333333333333333, middle=0.0), None)
        """
        p = self.pattern(tool_name)
        if p.total_compressions < self.min_samples or sum(p.position_retrievals.values()) == 0:
            return None
        w = p.get_position_weights()
        return AnchorWeights(
            front=w["front_10%"] + w["front_30%"], back=w["back_10%"] + w["back_30%"], middle=w["middle"]
        ).normalize()

    #: The plan's name for :meth:`weights`.
    def get_anchor_recommendation(self, tool_name: str) -> AnchorWeights | None:
        """The plan's name for :meth:`weights`.

        Parameters
        ----------
        tool_name : str
            The tool.

        Returns
        -------
        AnchorWeights or None
            As :meth:`weights`.

        Examples
        --------
        >>> from scwo_np.anchor import PositionLearner
        >>> learner = PositionLearner(":memory:", min_samples=1)
        >>> learner.record_retrieval("search", 100, [0, 1, 95])
        >>> learner.get_anchor_recommendation("search") == learner.weights("search")
        True
        """
        return self.weights(tool_name)

    def snapshot(self) -> dict[str, PositionRetrievalPattern]:
        """Every tool's pattern, from one read transaction (consistent under concurrent writers).

        Returns
        -------
        dict of str to PositionRetrievalPattern
            Tool -> pattern.

        Examples
        --------
        >>> from scwo_np.anchor import PositionLearner
        >>> learner = PositionLearner(":memory:", min_samples=1)
        >>> learner.record_retrieval("search", 100, [0, 1, 95])
        >>> list(learner.snapshot())
        ['search']
        """
        with self._lock, read_transaction(self._db) as db:
            tools = db.execute("SELECT tool, compressions FROM tools ORDER BY tool").fetchall()
            rows = db.execute("SELECT tool, bucket, count FROM positions").fetchall()
        out = {}
        for tool, comp in tools:
            counts = dict.fromkeys(BUCKETS, 0)
            counts.update({b: c for t, b, c in rows if t == tool})
            out[tool] = PositionRetrievalPattern(tool, comp, counts)
        return out

    def close(self) -> None:
        """Close the file (the learner cannot be used after).

        Returns
        -------
        None
            Nothing.

        Examples
        --------
        >>> from scwo_np.anchor import PositionLearner
        >>> PositionLearner(":memory:").close()
        """
        with self._lock:
            self._db.close()

    def __enter__(self) -> PositionLearner:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
