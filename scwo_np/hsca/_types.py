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

__all__ = ["DomainTag", "NuanceFlag", "WeightedChunk", "ContextSnapshot"]


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
        """The snapshot as a JSON-ready dict (its chunks too).

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
