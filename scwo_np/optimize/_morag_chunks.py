"""MoRAG's data: chunks, relationships, the optimizer's result, and relationship edges as arrays.

Used by :class:`~scwo_np.optimize.MoragContextOptimizer`; see its
module documentation for the pipeline.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray
from scipy.sparse import csr_matrix

from ..validation import check_finite_float
from ._kb import Removal

__all__ = [
    "ChunkRelationship",
    "ContextChunk",
    "OptimizedContext",
    "RELATIONSHIP_TYPES",
    "RelationshipEdges",
    "relationship_edges",
]

#: Relationship types; :class:`RelationshipEdges` codes index this tuple.
RELATIONSHIP_TYPES = (
    "strong_overlap",
    "moderate_overlap",
    "weak_overlap",
    "temporal_sequence",
    "same_document",
)
#: Organisation strategies.


@dataclass
class ContextChunk:
    """The spec's chunk, plus optional ``position`` (in its document, 0..1) and ``embedding``.

    Parameters
    ----------
    id : str
        The chunk's id.
    content : str
        Its text.
    relevance_score : float
        Its relevance to the query, in [0, 1].
    source_document : str
        The document it comes from.
    entities : list of str
        Named entities in it (for redundancy and relationships).
    relationships : list of str
        Ids of chunks it is known to relate to.
    timestamp : str or datetime, optional
        When it was written (ISO 8601 text or a datetime), for temporal organisation.
    chunk_type : str
        The kind of chunk (``"text"``, ``"table"``...).
    position : float, optional
        Where it sits in its document, in [0, 1].
    embedding : sequence of float, optional
        Its embedding, for budgeted MMR.

    Examples
    --------
    >>> c = ContextChunk("1", "JSON is a data format.", 0.9, "json.rst", ["JSON"], [])
    >>> c.id, c.relevance_score, c.chunk_type
    ('1', 0.9, 'text')
    """

    id: str
    content: str
    relevance_score: float
    source_document: str
    entities: list[str]
    relationships: list[str]
    timestamp: str | datetime | None = None
    chunk_type: str = "text"
    position: float | None = None
    embedding: Sequence[float] | None = None

    #: Field names accepted by :meth:`from_dict` for each attribute, first match wins.
    ALIASES = {
        "id": ("id", "chunk_id", "chunkId"),
        "content": ("content", "text"),
        "relevance_score": ("relevance_score", "score"),
        "source_document": ("source_document", "source", "path", "file"),
    }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, index: int = 0) -> ContextChunk:
        """A chunk from a mapping, as the KB optimizer takes its matches.

        ``content`` (or ``text``) and ``relevance_score`` (or ``score``) are
        required; ``id`` defaults to ``index``, ``source_document`` (or
        ``source``, ``path``, ``file``) to ``"unknown"``, ``entities`` and
        ``relationships`` to empty lists; the other attributes by their names.

        Parameters
        ----------
        d : mapping
            The chunk's fields (see above for the names accepted).
        index : int
            Its position in the input: the default id, and named in errors.

        Returns
        -------
        ContextChunk
            The chunk.

        Examples
        --------
        >>> ContextChunk.from_dict({"text": "JSON is a format.", "score": 0.9}, index=3).id
        '3'
        """
        if not isinstance(d, Mapping):
            raise TypeError(f"chunk {index} is {type(d).__name__}; expected a dict or a ContextChunk.")

        def pick(attr, default=...):
            for name in cls.ALIASES.get(attr, (attr,)):
                if name in d:
                    return d[name]
            if default is ...:
                names = " or ".join(repr(n) for n in cls.ALIASES[attr])
                raise ValueError(f"chunk {index} has no {names} field.")
            return default

        def strings(attr):
            v = pick(attr, [])
            if isinstance(v, str) or not isinstance(v, Sequence):
                raise TypeError(f"chunk {index}: {attr} must be a list of strings; got {type(v).__name__}.")
            return list(v)

        cid = pick("id", index)
        if isinstance(cid, bool) or not isinstance(cid, str | int):
            raise TypeError(f"chunk {index}: id must be a str or an int; got {type(cid).__name__}.")
        return cls(
            id=str(cid),
            content=pick("content"),
            relevance_score=pick("relevance_score"),
            source_document=str(pick("source_document", "unknown")),
            entities=strings("entities"),
            relationships=strings("relationships"),
            timestamp=pick("timestamp", None),
            chunk_type=pick("chunk_type", "text"),
            position=pick("position", None),
            embedding=pick("embedding", None),
        )


@dataclass
class ChunkRelationship:
    """A relationship between two chunks (the spec's type).

    Parameters
    ----------
    chunk1_id, chunk2_id : str
        The two chunks.
    relationship_type : str
        One of ``RELATIONSHIP_TYPES``.
    strength : float
        How strong it is, in [0, 1].
    description : str
        Why they are related.

    Examples
    --------
    >>> r = ChunkRelationship("1", "2", "same_document", 0.5, "both from doc1")
    >>> r.relationship_type in RELATIONSHIP_TYPES
    True
    """

    chunk1_id: str
    chunk2_id: str
    relationship_type: str
    strength: float
    description: str


@dataclass
class OptimizedContext:
    """The spec's result, plus ``removals``: every chunk left out, at which step and why.

    ``removed_chunks`` keeps the spec's meaning (ids dropped at the budget
    step); ``removals`` lists every removal in pipeline order — the relevance
    filter (``"relevance_filter"``), redundancy (``"redundancy"``, with the
    chunk it duplicates and their similarity) and the budget
    (``"token_budget"``) — as :class:`~scwo_np.optimize.Removal` records.

    Parameters
    ----------
    chunks : list of ContextChunk
        The chunks kept, organised.
    relationships : list of ChunkRelationship
        The relationships found among them.
    total_tokens : int
        Their tokens.
    organization_strategy : str
        The organisation used (one of ``STRATEGIES``).
    removed_chunks : list of str
        Ids dropped at the budget step.
    deduplication_stats : dict of str to int
        Counts of the redundancy step.
    removals : list of Removal
        Every chunk left out, at which step and why.

    Examples
    --------
    >>> from scwo_np.optimize import MoragContextOptimizer
    >>> opt = MoragContextOptimizer(budget=1000)
    >>> ctx = opt.optimize([ContextChunk("1", "JSON is a format.", 0.9, "d", [], [])], "JSON")
    >>> [c.id for c in ctx.chunks], ctx.total_tokens, ctx.removals
    (['1'], 4, [])
    """

    chunks: list[ContextChunk]
    relationships: list[ChunkRelationship]
    total_tokens: int
    organization_strategy: str
    removed_chunks: list[str]
    deduplication_stats: dict[str, int]
    removals: list[Removal] = field(default_factory=list)


class RelationshipEdges(NamedTuple):
    """Relationships as arrays: pair ``(i[k], j[k])``, ``i < j``, of type ``RELATIONSHIP_TYPES[kind[k]]``."""

    i: NDArray[np.int64]
    j: NDArray[np.int64]
    kind: NDArray[np.int64]
    strength: NDArray[np.float64]


def _check_chunks(chunks: Sequence[ContextChunk | Mapping]) -> list[ContextChunk]:
    if isinstance(chunks, str | bytes | Mapping) or not isinstance(chunks, Iterable):
        raise TypeError(
            f"chunks must be a list of ContextChunk objects or dicts; got {type(chunks).__name__}."
        )
    chunks = [
        c if isinstance(c, ContextChunk) else ContextChunk.from_dict(c, index=k) for k, c in enumerate(chunks)
    ]
    seen = set()
    for k, c in enumerate(chunks):
        if not isinstance(c.content, str):
            raise TypeError(f"chunks[{k}].content is {type(c.content).__name__}, not str.")
        if not c.content.strip():  # it was kept and laid out as an empty chunk
            raise ValueError(
                f"chunks[{k}].content is empty or only white space; drop the chunk or give its text."
            )
        for attr in ("entities", "relationships"):
            v = getattr(c, attr)
            if v is not None and (
                isinstance(v, str | bytes)
                or not isinstance(v, Iterable)
                or not all(isinstance(e, str) for e in v)
            ):
                raise TypeError(
                    f"chunks[{k}].{attr} must be a list of strings; got {v!r} (a bare string would be split into letters)."
                )
        check_finite_float(c.relevance_score, name=f"chunks[{k}].relevance_score")
        if isinstance(c.id, bool) or not isinstance(c.id, str | int):
            raise TypeError(f"chunks[{k}].id must be a str or an int; got {type(c.id).__name__}.")
        if c.id in seen:
            raise ValueError(f"chunk id {c.id!r} appears twice; ids must be unique.")
        seen.add(c.id)
        ts = c.timestamp
        if ts is not None and (isinstance(ts, bool) or not isinstance(ts, str | datetime | int | float)):
            raise TypeError(
                f"chunks[{k}].timestamp must be an ISO 8601 string, a datetime or a number; got {type(ts).__name__}."
            )
    dims = set()
    for k, c in enumerate(chunks):
        if c.embedding is not None:
            try:
                e = np.asarray(c.embedding, dtype=np.float64)
            except (TypeError, ValueError):
                e = None
            if e is None or e.ndim != 1 or not e.size or not np.all(np.isfinite(e)):
                raise ValueError(f"chunks[{k}].embedding must be a non-empty list of finite numbers.")
            dims.add(e.size)
            if len(dims) > 1:
                raise ValueError(
                    f"chunks[{k}].embedding has {e.size} numbers, others {min(dims - {e.size})}: every "
                    "embedding must come from one model."
                )
    outside = [k for k, c in enumerate(chunks) if not 0.0 <= float(c.relevance_score) <= 1.0]
    if outside:  # the filter's threshold and the boosts are on [0, 1]: a BM25 score passes them all
        k = outside[0]
        warnings.warn(
            f"{len(outside)} of {len(chunks)} chunks have a relevance_score outside [0, 1] (chunks[{k}]: "
            f"{float(chunks[k].relevance_score):g}); the relevance filter (min_chunk_relevance) and the boosts "
            "assume [0, 1]: rescale the scores (a cosine, or a retriever's score divided by its maximum).",
            UserWarning,
            stacklevel=3,
        )
    stamps = {type(c.timestamp) for c in chunks if c.timestamp is not None}
    if len(stamps) > 1:
        raise TypeError(
            f"timestamps must all be of one type (ISO strings or datetimes); got {sorted(map(str, stamps))}."
        )
    return chunks


def _entities(c: ContextChunk) -> list[str]:
    return list(c.entities) if c.entities is not None else []


def relationship_edges(chunks: Sequence[ContextChunk]) -> RelationshipEdges:
    """The spec's pairwise relationships, vectorised over a sparse entity matrix.

    Parameters
    ----------
    chunks : sequence of ContextChunk
        The chunks.

    Returns
    -------
    RelationshipEdges
        A named tuple of arrays: pairs ``i < j``, each pair's ``kind`` (an index into
        ``RELATIONSHIP_TYPES``) and ``strength``.

    Examples
    --------
    >>> cs = [ContextChunk("1", "x", 0.9, "d1", ["AI", "health"], []),
    ...       ContextChunk("2", "y", 0.8, "d1", ["AI"], []),
    ...       ContextChunk("3", "z", 0.7, "d2", ["finance"], [])]
    >>> e = relationship_edges(cs)
    >>> e.i, e.j, [RELATIONSHIP_TYPES[k] for k in e.kind], e.strength
    (array([0]), array([1]), ['same_document'], array([0.5]))
    """
    return _edges(_check_chunks(chunks))


def _edges(chunks: list[ContextChunk]) -> RelationshipEdges:
    n = len(chunks)
    vocab: dict[str, int] = {}
    rows, cols = [], []
    for r, c in enumerate(chunks):
        for e in dict.fromkeys(_entities(c)):
            rows.append(r)
            cols.append(vocab.setdefault(e, len(vocab)))
    M = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, max(len(vocab), 1)))
    size = np.asarray(M.sum(axis=1)).ravel()
    inter = (M @ M.T).tocoo()
    keep = (inter.row < inter.col) & (inter.data > 0)
    i, j, shared = inter.row[keep], inter.col[keep], inter.data[keep]
    order = np.lexsort((j, i))
    i, j, shared = i[order].astype(np.int64), j[order].astype(np.int64), shared[order]
    ratio = shared / (size[i] + size[j] - shared)
    kind = np.where(ratio > 0.5, 0, np.where(ratio > 0.2, 1, 2)).astype(np.int64)
    strength = ratio.astype(np.float64)
    stamped = np.array([c.timestamp is not None for c in chunks], dtype=bool)
    if stamped.any():
        t = [c.timestamp for c in chunks]
        earlier = np.array(
            [stamped[a] and stamped[b] and t[a] < t[b] for a, b in zip(i, j, strict=True)], dtype=bool
        )
        kind = np.where(earlier, 3, kind)
        strength = np.where(earlier, np.maximum(strength, 0.6), strength)
    docs = [c.source_document for c in chunks]
    same = np.array([docs[a] == docs[b] for a, b in zip(i, j, strict=True)], dtype=bool)
    kind = np.where(same, 4, kind)
    strength = np.where(same, np.maximum(strength, 0.4), strength)
    return RelationshipEdges(i, j, kind, strength)


def _with_score(c: ContextChunk, score: float) -> ContextChunk:
    """A copy of ``c`` carrying ``score`` (the caller's chunk is left as it was)."""
    out = copy.copy(c)
    out.relevance_score = score
    return out


def _describe(c1: ContextChunk, c2: ContextChunk) -> str:
    other = set(_entities(c2))
    shared = [e for e in dict.fromkeys(_entities(c1)) if e in other]
    return f"Shared entities: {', '.join(shared[:3])}"
