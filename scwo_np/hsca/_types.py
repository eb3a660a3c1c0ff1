"""The HSCA specification's interface types (section 6), field for field.

Plain dataclasses and ``str`` Enums with ``to_dict``/``from_dict``, as the
spec asks.  ``from_dict`` checks what it reads (missing or mistyped fields,
scores outside [0, 1], NaN) and raises a ``ValueError`` naming the field,
instead of building an object that fails later.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

__all__ = [
    "REASONS",
    "ContextPiece",
    "ContextSnapshot",
    "DomainTag",
    "HSCAContext",
    "NuanceFlag",
    "WeightedChunk",
]


class DomainTag(str, Enum):
    """The domains layer 2 tags a chunk with (the specification's ``DomainTag``).

    A chunk's ``domain_tags`` hold the values (``"legal"``); ``cross_domain`` marks a chunk
    with two strong domains, ``unclassified`` one with none.

    Examples
    --------
    >>> DomainTag("legal") is DomainTag.LEGAL, DomainTag.LEGAL.value
    (True, 'legal')
    """

    PHYSICS = "physics"
    MATHEMATICS = "mathematics"
    LEGAL = "legal"
    MEDICAL = "medical"
    POETRY = "poetry"
    NARRATIVE = "narrative"
    TECHNICAL_PROSE = "technical_prose"
    CONVERSATIONAL = "conversational"
    PHILOSOPHICAL = "philosophical"
    HISTORICAL = "historical"
    CROSS_DOMAIN = "cross_domain"
    UNCLASSIFIED = "unclassified"


class NuanceFlag(str, Enum):
    """The nuances layer 3 flags (the specification's ``NuanceFlag``).

    A flag ending in ``_model`` was raised by a model hook rather than the built-in rules.
    A flag left out means *unknown*, not *absent*.

    Examples
    --------
    >>> from scwo_np.hsca import nuance_flags
    >>> NuanceFlag.HEDGED.value in nuance_flags("Perhaps it might rain; it could possibly clear later.")
    True
    """

    METAPHOR = "metaphor"
    METAPHOR_MODEL = "metaphor_model"
    SARCASM = "sarcasm"
    SARCASM_MODEL = "sarcasm_model"
    EMOTIONAL_TONE_POSITIVE = "emotional_tone_positive"
    EMOTIONAL_TONE_NEGATIVE = "emotional_tone_negative"
    EMOTIONAL_TONE_URGENT = "emotional_tone_urgent"
    EMOTIONAL_TONE_NEUTRAL = "emotional_tone_neutral"
    RHETORICAL_QUESTION = "rhetorical_question"
    ANALOGY = "analogy"
    ANALOGY_MODEL = "analogy_model"
    HEDGED = "hedged"
    ABSOLUTE = "absolute"
    NARRATIVE_THREAD = "narrative_thread"
    NARRATIVE_THREAD_MODEL = "narrative_thread_model"
    INSTRUCTIONAL = "instructional"
    #: Ours (spec 8.4): the chunk is too short for co-occurrence scoring; its layer-1 score is capped.
    SHORT_CHUNK = "short_chunk"


def _get(d: Any, key: str, kind: type | tuple, *, default: Any = ..., what: str = "") -> Any:
    if not isinstance(d, dict):
        raise ValueError(f"{what or 'input'} must be a dict; got {type(d).__name__}.")
    if key not in d:
        if default is ...:
            raise ValueError(f"{what}: missing field {key!r}.")
        return default
    v = d[key]
    if isinstance(v, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise ValueError(f"{what}: field {key!r} must be {kind}, not a bool.")
    if not isinstance(v, kind):
        raise ValueError(
            f"{what}: field {key!r} must be {getattr(kind, '__name__', kind)}; got {type(v).__name__}."
        )
    return v


def _finite(v: float, key: str, what: str) -> float:
    try:
        x = float(v)
    except OverflowError:
        x = math.inf
    if not math.isfinite(x):
        raise ValueError(f"{what}: field {key!r} must be finite; got {v!r}.")
    return x


def _unit(v: float, key: str, what: str) -> float:
    try:
        x = float(v)
    except OverflowError:
        x = math.inf
    if not (0.0 <= x <= 1.0):  # also NaN
        raise ValueError(f"{what}: field {key!r} must be in [0, 1]; got {v!r}.")
    return x


def _str_list(v: Any, key: str, what: str) -> list[str]:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ValueError(f"{what}: field {key!r} must be a list of str.")
    return list(v)


@dataclass
class WeightedChunk:
    """One turn of the conversation, scored by layers 1 to 3 (the micro level).

    Parameters
    ----------
    chunk_id : str
        The chunk's id, unique in its session.
    text : str
        The turn's text (empty when the store keeps no text).
    layer1_score : float
        Layer 1's relational weight, in [0, 1].
    domain_tags : list of str
        Layer 2's domains (:class:`DomainTag` values).
    coherence_score : float
        Layer 2's coherence, in [0, 1].
    nuance_flags : list of str
        Layer 3's flags (:class:`NuanceFlag` values); a flag left out is unknown, not false.
    parent_id : str or None
        The id of the snapshot that holds the chunk, once it is snapshotted.
    created_at : float
        When it was made (seconds since the epoch).

    Examples
    --------
    >>> c = WeightedChunk("c1", "The court ruled.", 0.6, ["legal"], 0.8, [], None, created_at=0.0)
    >>> WeightedChunk.from_dict(c.to_dict()) == c
    True
    """

    chunk_id: str
    text: str
    layer1_score: float  # relational weight, 0-1
    domain_tags: list[str]  # DomainTag values
    coherence_score: float  # 0-1
    nuance_flags: list[str]  # NuanceFlag values; omitted flags = unknown, not false
    parent_id: str | None  # snapshot_id this chunk belongs to, if snapshotted
    created_at: float = field(default_factory=time.time)

    def to_dict(self) -> dict:
        """The chunk as a JSON-ready dict (scores rounded to 4 places).

        Returns
        -------
        dict
            The fields by name.

        Examples
        --------
        >>> WeightedChunk("c1", "text", 0.61234, [], 0.5, [], None, created_at=0.0).to_dict()["layer1_score"]
        0.6123
        """
        return {
            "chunk_id": self.chunk_id,
            "text": self.text,
            "layer1_score": round(self.layer1_score, 4),
            "domain_tags": self.domain_tags,
            "coherence_score": round(self.coherence_score, 4),
            "nuance_flags": self.nuance_flags,
            "parent_id": self.parent_id,
            "created_at": self.created_at,
        }

    @classmethod
    def from_dict(cls, d: dict) -> WeightedChunk:
        """A chunk from :meth:`to_dict`'s form, every field checked.

        Parameters
        ----------
        d : dict
            The fields by name.

        Returns
        -------
        WeightedChunk
            The chunk.

        Examples
        --------
        >>> WeightedChunk.from_dict({"chunk_id": "c1", "text": "t", "layer1_score": 0.5, "coherence_score": 0.9}).domain_tags
        ['unclassified']
        """
        what = "WeightedChunk.from_dict"
        created = _finite(_get(d, "created_at", (int, float), default=0.0, what=what), "created_at", what)
        parent = _get(d, "parent_id", (str, type(None)), default=None, what=what)
        return cls(
            chunk_id=_get(d, "chunk_id", str, what=what),
            text=_get(d, "text", str, what=what),
            layer1_score=_unit(_get(d, "layer1_score", (int, float), what=what), "layer1_score", what),
            domain_tags=_str_list(d.get("domain_tags", ["unclassified"]), "domain_tags", what),
            coherence_score=_unit(
                _get(d, "coherence_score", (int, float), what=what), "coherence_score", what
            ),
            nuance_flags=_str_list(d.get("nuance_flags", []), "nuance_flags", what),
            parent_id=parent,
            created_at=created,
        )


@dataclass
class ContextSnapshot:
    """One beat of the conversation, frozen (the meso level).

    Parameters
    ----------
    snapshot_id : str
        The snapshot's id.
    chunks : list of WeightedChunk
        The beat's chunks, in order.
    macro_weight : float
        The beat's structural density, in [0, 1].
    domain_summary : dict
        Domain tag -> weight, the beat's domains weighted by each chunk's relational weight.
    conversation_position : int
        Its place in the session's list of snapshots.
    forced : bool
        True when the buffer was full (``max_buffer_chunks``), not closed by the beat's end.
    created_at : float
        When it was taken (seconds since the epoch).

    Examples
    --------
    >>> c = WeightedChunk("c1", "The court ruled.", 0.6, ["legal"], 0.8, [], "s1", created_at=0.0)
    >>> s = ContextSnapshot("s1", [c], 0.6, {"legal": 1.0}, 0, False, created_at=0.0)
    >>> ContextSnapshot.from_dict(s.to_dict()) == s
    True
    """

    snapshot_id: str
    chunks: list[WeightedChunk]
    macro_weight: float  # aggregate structural density, 0-1
    domain_summary: dict  # {domain_tag: weight_float}
    conversation_position: int  # index in session's macro snapshot list
    forced: bool  # True if triggered by max_buffer_chunks, not the threshold
    created_at: float = field(default_factory=time.time)

    def to_dict(self) -> dict:
        """The snapshot as a JSON-ready dict (``macro_weight`` and ``domain_summary`` rounded to 4
        places; its chunks too, rounded as :meth:`WeightedChunk.to_dict`).

        Returns
        -------
        dict
            The fields by name.

        Examples
        --------
        >>> ContextSnapshot("s1", [], 0.5, {"legal": 1.0}, 0, False, created_at=0.0).to_dict()["domain_summary"]
        {'legal': 1.0}
        """
        return {
            "snapshot_id": self.snapshot_id,
            "chunks": [c.to_dict() for c in self.chunks],
            "macro_weight": round(self.macro_weight, 4),
            "domain_summary": {k: round(v, 4) for k, v in self.domain_summary.items()},
            "conversation_position": self.conversation_position,
            "forced": self.forced,
            "created_at": self.created_at,
        }

    @classmethod
    def from_dict(cls, d: dict) -> ContextSnapshot:
        """A snapshot from :meth:`to_dict`'s form, every field checked.

        Parameters
        ----------
        d : dict
            The fields by name.

        Returns
        -------
        ContextSnapshot
            The snapshot.

        Examples
        --------
        >>> s = ContextSnapshot("s1", [], 0.5, {"legal": 1.0}, 0, False, created_at=0.0)
        >>> ContextSnapshot.from_dict(s.to_dict()) == s
        True
        """
        what = "ContextSnapshot.from_dict"
        chunks = _get(d, "chunks", list, default=[], what=what)
        summary = _get(d, "domain_summary", dict, default={}, what=what)
        for k, v in summary.items():
            if (
                not isinstance(k, str)
                or isinstance(v, bool)
                or not isinstance(v, int | float)
                or not math.isfinite(v)
            ):
                raise ValueError(f"{what}: domain_summary must map str to finite numbers; got {k!r}: {v!r}.")
        pos = _get(d, "conversation_position", int, default=0, what=what)
        if pos < 0:
            raise ValueError(f"{what}: conversation_position must be >= 0; got {pos}.")
        return cls(
            snapshot_id=_get(d, "snapshot_id", str, what=what),
            chunks=[WeightedChunk.from_dict(c) for c in chunks],
            macro_weight=_unit(_get(d, "macro_weight", (int, float), what=what), "macro_weight", what),
            domain_summary={k: float(v) for k, v in summary.items()},
            conversation_position=pos,
            forced=_get(d, "forced", bool, default=False, what=what),
            created_at=_finite(
                _get(d, "created_at", (int, float), default=0.0, what=what), "created_at", what
            ),
        )


def citation(turn: int, snapshot: int | None, *, excerpt: bool = False) -> str:
    """A block's citation: ``"turn 12, snapshot 3"``, or ``"turn 40"`` for a turn of the open beat;
    ``", excerpt"`` after it when the block holds only some lines of a unit too large for the room
    (:func:`scwo_np.hsca._context.surface`).

    Examples
    --------
    >>> citation(12, 3), citation(40, None), citation(2, 1, excerpt=True)
    ('turn 12, snapshot 3', 'turn 40', 'turn 2, snapshot 1, excerpt')
    """
    head = f"turn {turn}" + (f", snapshot {snapshot}" if snapshot is not None else "")
    return head + (", excerpt" if excerpt else "")


#: Why a piece is in the context: it is among the newest turns, the map ranked it
#: for the query, or (without a query) it is central to its snapshot.
REASONS = ("recent", "query", "central")


@dataclass(frozen=True)
class ContextPiece:
    """What the context keeps of one turn, with where it came from (for citation).

    Parameters
    ----------
    turn : int
        The turn's number in the session, from 1.
    chunk_id : str
        The turn's chunk id (:class:`~scwo_np.hsca.WeightedChunk`).
    snapshot_id : str or None
        The id of the snapshot that holds the turn; None while the turn is in the open beat.
    snapshot : int or None
        That snapshot's number in the session, from 1 (its ``conversation_position + 1``).
    spans : list of (int, int)
        The character spans of the turn's text that are kept, in order.
    text : str
        The kept text, without the citation (spans not adjacent in the turn joined by ``" … "``).
    score : float
        The highest relevance among its kept units (0 for a recent turn picked for its recency).
    reason : str
        ``"recent"``, ``"query"`` or ``"central"`` (:data:`REASONS`).
    excerpt : bool, default False
        True when the piece is an excerpt of a sentence unit too large for the room left (a pasted
        file, a long code block): its lines that match the query.  The context cites it
        ``[turn 2, snapshot 1, excerpt]``.

    Examples
    --------
    >>> from scwo_np.hsca import HSCAEngine
    >>> eng = HSCAEngine()
    >>> _ = eng.ingest_turn("The court ruled that the contract was void.")
    >>> piece = eng.context("contract", budget=50).pieces[0]
    >>> piece.turn, piece.text, piece.reason
    (1, 'The court ruled that the contract was void.', 'query')
    """

    turn: int
    chunk_id: str
    snapshot_id: str | None
    snapshot: int | None
    spans: list[tuple[int, int]]
    text: str
    score: float
    reason: str
    excerpt: bool = False

    @property
    def citation(self) -> str:
        """The piece's citation as the context writes it: ``"turn 12, snapshot 3"``, ``"turn 40"``,
        or ``"turn 2, snapshot 1, excerpt"``."""
        return citation(self.turn, self.snapshot, excerpt=self.excerpt)

    def to_dict(self) -> dict:
        """The piece as a JSON-ready dict (``score`` rounded to 6 places).

        Returns
        -------
        dict
            The fields by name.

        Examples
        --------
        >>> ContextPiece(3, "c3", None, None, [(0, 4)], "Yes.", 0.0, "recent").to_dict()["spans"]
        [[0, 4]]
        """
        return {
            "turn": self.turn,
            "chunk_id": self.chunk_id,
            "snapshot_id": self.snapshot_id,
            "snapshot": self.snapshot,
            "spans": [list(s) for s in self.spans],
            "text": self.text,
            "score": round(self.score, 6),
            "reason": self.reason,
            "excerpt": self.excerpt,
        }

    @classmethod
    def from_dict(cls, d: dict) -> ContextPiece:
        """A piece from :meth:`to_dict`'s form, every field checked (``excerpt`` defaults to False).

        Parameters
        ----------
        d : dict
            The fields by name.

        Returns
        -------
        ContextPiece
            The piece (``score`` as rounded by :meth:`to_dict`).

        Examples
        --------
        >>> p = ContextPiece(3, "c3", None, None, [(0, 4)], "Yes.", 0.0, "recent")
        >>> ContextPiece.from_dict(p.to_dict()) == p
        True
        """
        what = "ContextPiece.from_dict"
        turn = _get(d, "turn", int, what=what)
        if turn < 1:
            raise ValueError(f"{what}: field 'turn' must be >= 1 (turns count from 1); got {turn}.")
        snapshot = _get(d, "snapshot", (int, type(None)), default=None, what=what)
        spans = _get(d, "spans", list, what=what)
        for s in spans:
            if (
                not isinstance(s, list | tuple)
                or len(s) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in s)
                or not 0 <= s[0] <= s[1]
            ):
                raise ValueError(
                    f"{what}: field 'spans' must hold [start, end] pairs, 0 <= start <= end; got {s!r}."
                )
        reason = _get(d, "reason", str, what=what)
        if reason not in REASONS:
            raise ValueError(
                f"{what}: field 'reason' must be one of {', '.join(map(repr, REASONS))}; got {reason!r}."
            )
        return cls(
            turn=turn,
            chunk_id=_get(d, "chunk_id", str, what=what),
            snapshot_id=_get(d, "snapshot_id", (str, type(None)), default=None, what=what),
            snapshot=snapshot,
            spans=[(int(a), int(b)) for a, b in spans],
            text=_get(d, "text", str, what=what),
            score=_finite(_get(d, "score", (int, float), default=0.0, what=what), "score", what),
            reason=reason,
            excerpt=_get(d, "excerpt", bool, default=False, what=what),
        )


@dataclass(frozen=True)
class HSCAContext:
    """The context :meth:`HSCAEngine.context <scwo_np.hsca.HSCAEngine.context>` surfaces.

    Parameters
    ----------
    text : str
        What the model reads: one block per piece, ``[turn 12, snapshot 3] ...``, in
        conversation order, separated by blank lines; within ``budget`` tokens.  When the budget
        holds the whole conversation, consecutive pieces make one block, ``[turns 1-6] ...``, their
        texts separated by blank lines too.
    pieces : list of ContextPiece
        The pieces, in conversation order.
    tokens : int
        Tokens of ``text`` by the engine's counter.
    budget : int
        The budget asked for.
    token_counter : str
        The name of the counter.
    turns : int
        How many turns the session holds.
    query : str or None
        The query the context is for.

    Examples
    --------
    >>> from scwo_np.hsca import HSCAEngine
    >>> eng = HSCAEngine()
    >>> for turn in ["The court ruled that the contract was void.",
    ...              "The telescope recorded the spectrum of a distant galaxy."]:
    ...     _ = eng.ingest_turn(turn)
    >>> ctx = eng.context("What did the court decide?", budget=20)
    >>> print(ctx)
    [turn 1, snapshot 1] The court ruled that the contract was void.
    >>> ctx.tokens <= ctx.budget, ctx.turns
    (True, 2)

    With ``exchange=3`` the newest turns come first (the newest exchange, for a chat whose next
    message may be a follow-up):

    >>> print(eng.context("What did the court decide?", budget=20, exchange=3))
    [turn 2] The telescope recorded the spectrum of a distant galaxy.

    A budget that holds the whole conversation and one citation gives all of it, consecutive turns
    under one citation (each piece still cites its own turn; turn 2 is in the open beat):

    >>> ctx = eng.context("What did the court decide?", budget=40)
    >>> print(ctx)
    [turns 1-2] The court ruled that the contract was void.
    <BLANKLINE>
    The telescope recorded the spectrum of a distant galaxy.
    >>> [p.citation for p in ctx.pieces]
    ['turn 1, snapshot 1', 'turn 2']
    >>> HSCAContext.from_dict(ctx.to_dict()).to_dict() == ctx.to_dict()  # (scores to 6 places)
    True
    """

    text: str
    pieces: list[ContextPiece] = field(default_factory=list)
    tokens: int = 0
    budget: int = 0
    token_counter: str = "estimate"
    turns: int = 0
    query: str | None = None

    def __str__(self) -> str:
        return self.text

    def to_dict(self) -> dict:
        """The context as a JSON-ready dict (each piece's ``score`` rounded to 6 places).

        Returns
        -------
        dict
            The fields by name, pieces as dicts.

        Examples
        --------
        >>> HSCAContext("", budget=100).to_dict()["budget"]
        100
        """
        return {
            "text": self.text,
            "pieces": [p.to_dict() for p in self.pieces],
            "tokens": self.tokens,
            "budget": self.budget,
            "token_counter": self.token_counter,
            "turns": self.turns,
            "query": self.query,
        }

    @classmethod
    def from_dict(cls, d: dict) -> HSCAContext:
        """A context from :meth:`to_dict`'s form, every field checked.

        Parameters
        ----------
        d : dict
            The fields by name, pieces as dicts (:meth:`ContextPiece.from_dict`).

        Returns
        -------
        HSCAContext
            The context; equal to the one :meth:`to_dict` was called on when its scores have at
            most 6 decimals.

        Examples
        --------
        >>> HSCAContext.from_dict({"text": "", "budget": 100}).budget
        100
        """
        what = "HSCAContext.from_dict"
        counts = {}
        for key in ("tokens", "budget", "turns"):
            counts[key] = _get(d, key, int, default=0, what=what)
            if counts[key] < 0:
                raise ValueError(f"{what}: field {key!r} must be >= 0; got {counts[key]}.")
        pieces = _get(d, "pieces", list, default=[], what=what)
        return cls(
            text=_get(d, "text", str, what=what),
            pieces=[ContextPiece.from_dict(p) for p in pieces],
            token_counter=_get(d, "token_counter", str, default="estimate", what=what),
            query=_get(d, "query", (str, type(None)), default=None, what=what),
            **counts,
        )
