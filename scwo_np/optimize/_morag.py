"""MoRAG's context optimizer, made real: the spec's interface over array functions.

``MoragContextOptimizer(budget=4000).optimize(chunks, query, strategy)``
(or ``await optimize_context(...)``, the spec's spelling) runs:

1. **relevance filter** — ``relevance_score >= min_chunk_relevance`` (0.3);
2. **redundancy removal** — :func:`~scwo_np.deduplicate` with the spec's
   similarity (difflib ratio, 0.7 content + 0.3 entity Jaccard >= 0.7,
   texts lowercased); when either chunk of a pair has no entities the
   entity term does not count and the ratio alone decides (the spec counted
   it as 0, so chunks without entities merged only when identical).  Chunks
   are taken most relevant first (ties in input order) and each is kept
   unless it reaches the threshold against a chunk already kept, as the
   spec's loop intends; unlike the spec's loop (which compares with each
   group's first member in input order) the most relevant chunk of a set of
   copies survives, and a chunk is never dropped against one that was itself
   dropped (``dedup_grouping = "components"`` joins chains instead);
3. **relationships** — for every pair sharing an entity: strong (> 0.5),
   moderate (> 0.2) or weak entity overlap, overridden by
   ``temporal_sequence`` (both timestamped, the first earlier; strength at
   least 0.6) and then ``same_document`` (at least 0.4), as edge arrays
   (:func:`relationship_edges`);
4. **prioritisation** — ``score + 0.2 * sum of relationship strengths +
   0.3 * query-term overlap + 0.1 if timestamped``, best first;
5. **budget fit** — best-first while ``len(content) // 4`` tokens fit in
   ``budget - response_reserve`` (by default 500, at most half of
   ``budget``; a warning when nothing fits), skipping what does not fit; or,
   when every chunk has an ``embedding`` and a ``query_embedding`` is given,
   budgeted MMR (:func:`~scwo_np.mmr_select`) over the same budget;
6. **organisation** — ``relevance``, ``temporal``, ``topical`` (connected
   components of relationships stronger than 0.3, via
   ``scipy.sparse.csgraph``), ``hierarchical`` (overview chunks first), or
   ``auto`` (temporal when over half the chunks are timestamped, topical when
   the relationship density exceeds 0.3, else relevance).

Where the spec is silent or inconsistent: chunks are never mutated (the
prioritised chunks are copies carrying the boosted score, as the spec's
output shows); ``organization_strategy`` reports the strategy actually used
(the spec echoed ``"auto"``); a missing entity list counts as empty; shared
entities in a relationship's description are listed in the first chunk's
order; ids must be unique (the spec keys scores by id).  Every chunk left out
is listed with its step and reason in ``OptimizedContext.removals`` (the
spec's ``removed_chunks`` held only the budget step's).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from .._registry import Registry
from ..dedup import Dedup, deduplicate
from ..embed import as_embedder, embed_texts
from ..select import mmr_select
from ..tokens import as_token_counter, count_tokens, estimate_tokens
from ..validation import (
    MAX_BUDGET,
    check_budget,
    check_int,
    check_unit_interval,
    renamed_attributes,
    renamed_keywords,
    renamed_property,
)
from ._budget import fit_budget
from ._kb import Removal, _checked_embedder
from ._morag_chunks import (
    RELATIONSHIP_TYPES,
    ChunkRelationship,
    ContextChunk,
    OptimizedContext,
    RelationshipEdges,
    _check_chunks,
    _describe,
    _edges,
    _entities,
    _with_score,
    relationship_edges,
)

__all__ = [
    "ChunkRelationship",
    "ContextChunk",
    "MoragContextOptimizer",
    "OptimizedContext",
    "RELATIONSHIP_TYPES",
    "RelationshipEdges",
    "MORAG_LAYOUTS",
    "relationship_edges",
]

#: Characters of a query :meth:`MoragContextOptimizer.format_context` echoes in its header when the
#: whole text is over the budget (the start, marked "…"): the chunks matter more than the echo.
_QUERY_SHOWN = 200

#: Registry of MoRAG's organisation layouts (its ``strategy=``): name -> what it does.
MORAG_LAYOUTS: Registry[str] = Registry(
    "strategy",
    {
        "auto": "temporal when over half the chunks are timestamped, topical when the relationships "
        "are dense, else relevance",
        "relevance": "most relevant first",
        "temporal": "timestamped chunks in time order",
        "topical": "connected groups of related chunks together",
        "hierarchical": "overview chunks first",
    },
)


class MoragContextOptimizer:
    """MoRAG's ``ContextOptimizer`` (see the module documentation for each step).

    Parameters
    ----------
    budget : int
        The context window, in tokens.
    response_reserve : int, optional
        Tokens kept for the answer (default: the spec's 500, at most half of ``budget``).
    embedder : str or callable, optional
        Embeds chunks that carry no embedding (and the query), so the budget step runs budgeted
        MMR: ``"lsa"``, ``"minilm"`` or a callable ``texts -> (n, d) array``.
    token_counter : str, TokenCounter or callable, optional
        Counts chunk tokens (see :func:`~scwo_np.tokens.as_token_counter`). Default: the spec's ``len(content) // 4``.

    Examples
    --------
    >>> opt = MoragContextOptimizer(budget=1000)
    >>> chunks = [
    ...     ContextChunk("1", "AI is transforming healthcare", 0.9, "doc1", ["AI", "healthcare"], []),
    ...     ContextChunk("2", "Artificial intelligence is changing healthcare", 0.8, "doc2", ["AI", "healthcare"], []),
    ...     ContextChunk("3", "Machine learning in finance", 0.7, "doc3", ["ML", "finance"], []),
    ... ]
    >>> ctx = opt.optimize(chunks, "AI in healthcare")
    >>> [c.id for c in ctx.chunks], ctx.deduplication_stats["removed_count"], ctx.organization_strategy
    (['1', '3'], 1, 'relevance')
    """

    @renamed_keywords(max_tokens="budget")
    def __init__(
        self,
        budget: int = 4000,
        *,
        response_reserve: int | None = None,
        embedder: object = None,
        token_counter: object = None,
    ):
        #: Embeds the query and chunks without an ``embedding``, so the budget step runs
        #: budgeted MMR: a callable or "lsa"/"minilm" (None: the spec's relevance order).
        self.embedder = embedder if embedder is None else _checked_embedder(embedder)
        #: Counts chunk tokens (None: the spec's ``len(content) // 4``).
        self.token_counter = None if token_counter is None else as_token_counter(token_counter)
        self.budget = check_int(budget, name="budget", low=1, high=MAX_BUDGET, clamp=True)
        if response_reserve is None:
            # The spec's 500; never more than half the window, so context always has room.
            response_reserve = min(500, self.budget // 2)
        self.response_reserve = check_budget(response_reserve, name="response_reserve")
        if self.response_reserve >= self.budget > 0:
            raise ValueError(
                f"response_reserve ({self.response_reserve}) leaves no room for context in budget "
                f"({self.budget}); lower it or raise budget."
            )
        self.similarity_threshold = 0.7
        self.min_chunk_relevance = 0.3
        self.entity_weight = 0.3
        #: How redundancy removal groups similar chunks (see :func:`~scwo_np.deduplicate`):
        #: "greedy" (a chunk is dropped only against a kept one) or "components".
        self.dedup_grouping = "greedy"
        self.context_metrics = {
            "chunks_processed": 0,
            "chunks_removed_redundancy": 0,
            "chunks_removed_budget": 0,
            "average_relevance_score": 0.0,
            "token_utilization": 0.0,
            "organization_strategies_used": {s: 0 for s in MORAG_LAYOUTS if s != "auto"},
            "relationship_detection_rate": 0.0,
        }
        self._calls = 0

    # -- the pipeline ------------------------------------------------------------

    max_tokens = renamed_property("max_tokens", "budget", what="MoragContextOptimizer")

    def optimize(
        self,
        chunks: Sequence[ContextChunk],
        query: str,
        strategy: str = "auto",
        *,
        query_embedding: Sequence[float] | None = None,
        lam: float | str = 0.7,
    ) -> OptimizedContext:
        """Run the six steps; ``query_embedding`` switches the budget step to budgeted MMR.

        Parameters
        ----------
        chunks : sequence of ContextChunk
            The chunks.
        query : str
            The question.
        strategy : str
            The organisation (one of ``MORAG_LAYOUTS``; ``"auto"`` chooses).
        query_embedding : sequence of float, optional
            Runs the budget step as budgeted MMR (chunks need embeddings, or an ``embedder``).
        lam : float or "auto"
            MMR's trade-off, with ``query_embedding``.

        Returns
        -------
        OptimizedContext
            The kept chunks, organised, with what was removed and why.

        Examples
        --------
        >>> from scwo_np.optimize import ContextChunk, MoragContextOptimizer
        >>> opt = MoragContextOptimizer(budget=1000)
        >>> chunks = [ContextChunk("1", "AI is transforming healthcare", 0.9, "doc1", ["AI", "healthcare"], []),
        ...           ContextChunk("2", "AI is transforming healthcare today", 0.8, "doc1", ["AI", "healthcare"], []),
        ...           ContextChunk("3", "Machine learning in finance", 0.7, "doc2", ["ML", "finance"], [])]
        >>> ctx = opt.optimize(chunks, "AI in healthcare")
        >>> [c.id for c in ctx.chunks], [r.step for r in ctx.removals]
        (['1', '3'], ['redundancy'])
        """
        if not isinstance(query, str):
            raise TypeError(f"query must be a str; got {type(query).__name__}.")
        if not query.strip():  # it ran, ranking without the query's words, and said nothing
            raise ValueError(
                "query is empty: MoRAG ranks the chunks by their overlap with the query's words "
                "(and the formatted context names it); pass the question."
            )
        MORAG_LAYOUTS.lookup(strategy)
        check_unit_interval(self.min_chunk_relevance, name="min_chunk_relevance")
        chunks = _check_chunks(chunks)
        where = {c.id: k for k, c in enumerate(chunks)}
        removals = [
            Removal(k, c.id, "relevance_filter",
                    f"relevance {c.relevance_score:.4g} below min_chunk_relevance {self.min_chunk_relevance:g}",
                    {"relevance_score": float(c.relevance_score)})
            for k, c in enumerate(chunks) if not c.relevance_score >= self.min_chunk_relevance
        ]  # fmt: skip
        filtered = [c for c in chunks if c.relevance_score >= self.min_chunk_relevance]
        unique, stats, d = self._dedup(filtered)
        for x, k, sim in zip(d.dropped.tolist(), d.duplicate_of.tolist(), d.similarity.tolist(), strict=True):
            c, kept = filtered[x], filtered[k]
            removals.append(
                Removal(where[c.id], c.id, "redundancy", f"duplicate of {kept.id} (similarity {sim:.2f})",
                        {"duplicate_of": kept.id, "similarity": sim})
            )  # fmt: skip
        edges = _edges(unique)
        rels = self._to_relationships(unique, edges)
        score = self.priority_scores(unique, rels, query)
        order = sorted(range(len(unique)), key=lambda k: -score[k])  # stable: ties keep their order
        ranked = [unique[k] for k in order]
        embeddings = None
        if self.embedder is not None and ranked:
            embeddings, query_embedding = self._embed(ranked, query, query_embedding)
        available = max(self.budget - self.response_reserve, 0)
        shown = query if len(query) <= _QUERY_SHOWN else query[:_QUERY_SHOWN] + "…"
        final, removed = self._fit(
            ranked, query_embedding, lam, embeddings, self._layout_costs(ranked, rels, shown, available)
        )
        for i in removed:
            c = chunks[where[i]]
            t = self._count([c.content])[0]
            removals.append(
                Removal(where[i], i, "token_budget",
                        f"{t} tokens did not fit in the {available} available (with the text's header and lines)",
                        {"tokens": t})
            )  # fmt: skip
        boosted = {unique[k].id: score[k] for k in order}
        final = [_with_score(c, boosted[c.id]) for c in final]
        used = (
            self.determine_best_strategy(final, self._edges_among(final, unique, edges))
            if strategy == "auto"
            else strategy
        )
        organized = self.organize_chunks(final, rels, used)
        while (
            organized
            and self._count([self._render(used, rels, len(organized), organized, shown, [])])[0] > available
        ):
            # the layout's lines were counted apart from the chunks: should the whole text still be
            # over, the least relevant chunk goes (as format_context would leave it out)
            k = min(range(len(organized)), key=lambda j: (organized[j].relevance_score, -j))
            gone = organized.pop(k)
            removed.append(gone.id)
            removals.append(
                Removal(where[gone.id], gone.id, "token_budget",
                        f"left out so the text with its header and lines fits in the {available} available",
                        {"tokens": int(self._count([gone.content])[0])})
            )  # fmt: skip
        total = int(sum(self._count([c.content for c in organized])))
        self._record(chunks, stats, removed, organized, total, used, rels, len(unique))
        return OptimizedContext(organized, rels, total, used, removed, stats, removals)

    async def optimize_context(
        self, chunks: Sequence[ContextChunk], query: str, strategy: str = "auto", **kw
    ) -> OptimizedContext:
        """The spec's ``await optimize_context(...)``: :meth:`optimize` (milliseconds of work).

        Parameters
        ----------
        chunks : sequence of ContextChunk
            The chunks.
        query : str
            The question.
        strategy : str
            The organisation.
        **kw
            As in :meth:`optimize`.

        Returns
        -------
        OptimizedContext
            As :meth:`optimize`.

        Examples
        --------
        >>> from scwo_np.optimize import ContextChunk, MoragContextOptimizer
        >>> opt = MoragContextOptimizer(budget=1000)
        >>> chunks = [ContextChunk("1", "AI is transforming healthcare", 0.9, "doc1", ["AI", "healthcare"], []),
        ...           ContextChunk("2", "AI is transforming healthcare today", 0.8, "doc1", ["AI", "healthcare"], []),
        ...           ContextChunk("3", "Machine learning in finance", 0.7, "doc2", ["ML", "finance"], [])]
        >>> import asyncio
        >>> [c.id for c in asyncio.run(opt.optimize_context(chunks, "AI in healthcare")).chunks]
        ['1', '3']
        """
        return self.optimize(chunks, query, strategy, **kw)

    # -- steps (sync, plus the spec's async private names) ---------------------------

    def remove_redundancy(self, chunks: Sequence[ContextChunk]) -> tuple[list[ContextChunk], dict[str, int]]:
        """The spec's step 2: ``(unique chunks, stats)``; see the module documentation.

        Parameters
        ----------
        chunks : sequence of ContextChunk
            The chunks.

        Returns
        -------
        unique : list of ContextChunk
            The chunks kept.
        stats : dict of str to int
            ``original_count``, ``unique_count``, ``removed_count``.

        Examples
        --------
        >>> from scwo_np.optimize import ContextChunk, MoragContextOptimizer
        >>> opt = MoragContextOptimizer(budget=1000)
        >>> chunks = [ContextChunk("1", "AI is transforming healthcare", 0.9, "doc1", ["AI", "healthcare"], []),
        ...           ContextChunk("2", "AI is transforming healthcare today", 0.8, "doc1", ["AI", "healthcare"], []),
        ...           ContextChunk("3", "Machine learning in finance", 0.7, "doc2", ["ML", "finance"], [])]
        >>> unique, stats = opt.remove_redundancy(chunks)
        >>> [c.id for c in unique], stats["removed_count"]
        (['1', '3'], 1)
        """
        unique, stats, _ = self._dedup(list(chunks))
        return unique, stats

    def _dedup(self, chunks: list[ContextChunk]):
        if not chunks:
            empty = np.empty(0, dtype=np.int64)
            stats = {"original_count": 0, "unique_count": 0, "removed_count": 0, "similarity_groups": 0}
            return [], stats, Dedup(empty, empty, empty, np.empty(0))
        d = deduplicate(
            [c.content for c in chunks], method="sequence", threshold=self.similarity_threshold,
            scores=[c.relevance_score for c in chunks], entities=[_entities(c) for c in chunks],
            entity_weight=self.entity_weight, grouping=self.dedup_grouping,
        )  # fmt: skip
        unique = [chunks[i] for i in d.keep.tolist()]
        stats = {
            "original_count": len(chunks),
            "unique_count": len(unique),
            "removed_count": len(d.dropped),
            "similarity_groups": len(unique),
        }
        return unique, stats, d

    def identify_relationships(self, chunks: Sequence[ContextChunk]) -> list[ChunkRelationship]:
        """The spec's step 3: relationships between chunks (shared entities, same document, time order).

        Parameters
        ----------
        chunks : sequence of ContextChunk
            The chunks.

        Returns
        -------
        list of ChunkRelationship
            One per related pair.

        Examples
        --------
        >>> from scwo_np.optimize import ContextChunk, MoragContextOptimizer
        >>> opt = MoragContextOptimizer(budget=1000)
        >>> chunks = [ContextChunk("1", "AI is transforming healthcare", 0.9, "doc1", ["AI", "healthcare"], []),
        ...           ContextChunk("2", "AI is transforming healthcare today", 0.8, "doc1", ["AI", "healthcare"], []),
        ...           ContextChunk("3", "Machine learning in finance", 0.7, "doc2", ["ML", "finance"], [])]
        >>> sorted({r.relationship_type for r in opt.identify_relationships(chunks)})
        ['same_document']
        """
        chunks = list(chunks)
        return self._to_relationships(chunks, relationship_edges(chunks))

    def prioritize_chunks(
        self, chunks: Sequence[ContextChunk], relationships: Sequence[ChunkRelationship], query: str
    ) -> list[ContextChunk]:
        """Copies of ``chunks`` with the boosted score, best first (stable).

        Parameters
        ----------
        chunks : sequence of ContextChunk
            The chunks.
        relationships : sequence of ChunkRelationship
            Their relationships (from :meth:`identify_relationships`).
        query : str
            The question.

        Returns
        -------
        list of ContextChunk
            Copies with the boosted ``relevance_score``, best first.

        Examples
        --------
        >>> from scwo_np.optimize import ContextChunk, MoragContextOptimizer
        >>> opt = MoragContextOptimizer(budget=1000)
        >>> chunks = [ContextChunk("1", "AI is transforming healthcare", 0.9, "doc1", ["AI", "healthcare"], []),
        ...           ContextChunk("2", "AI is transforming healthcare today", 0.8, "doc1", ["AI", "healthcare"], []),
        ...           ContextChunk("3", "Machine learning in finance", 0.7, "doc2", ["ML", "finance"], [])]
        >>> [c.id for c in opt.prioritize_chunks(chunks, [], "finance")]
        ['3', '1', '2']
        """
        chunks = list(chunks)
        score = self.priority_scores(chunks, relationships, query)
        out = [_with_score(c, s) for c, s in zip(chunks, score, strict=True)]
        return sorted(out, key=lambda c: c.relevance_score, reverse=True)

    @staticmethod
    def priority_scores(
        chunks: Sequence[ContextChunk], relationships: Sequence[ChunkRelationship], query: str
    ) -> list[float]:
        """``score + 0.2 * relationship strengths + 0.3 * query-term overlap + 0.1 if timestamped``.

        Parameters
        ----------
        chunks : sequence of ContextChunk
            The chunks.
        relationships : sequence of ChunkRelationship
            Their relationships (from :meth:`identify_relationships`).
        query : str
            The question.

        Returns
        -------
        list of float
            One boosted score per chunk.

        Examples
        --------
        >>> from scwo_np.optimize import ContextChunk, MoragContextOptimizer
        >>> opt = MoragContextOptimizer(budget=1000)
        >>> chunks = [ContextChunk("1", "AI is transforming healthcare", 0.9, "doc1", ["AI", "healthcare"], []),
        ...           ContextChunk("2", "AI is transforming healthcare today", 0.8, "doc1", ["AI", "healthcare"], []),
        ...           ContextChunk("3", "Machine learning in finance", 0.7, "doc2", ["ML", "finance"], [])]
        >>> [round(x, 2) for x in MoragContextOptimizer.priority_scores(chunks, [], "finance")]
        [0.9, 0.8, 1.0]
        """
        rel_score: dict[str, float] = {}
        for r in relationships:
            rel_score[r.chunk1_id] = rel_score.get(r.chunk1_id, 0.0) + r.strength
            rel_score[r.chunk2_id] = rel_score.get(r.chunk2_id, 0.0) + r.strength
        q = set(query.lower().split())
        out = []
        for c in chunks:
            overlap = len(q.intersection(c.content.lower().split())) / max(len(q), 1)
            out.append(
                c.relevance_score
                + rel_score.get(c.id, 0.0) * 0.2
                + overlap * 0.3
                + (0.1 if c.timestamp else 0)
            )
        return out

    def _count(self, texts: list[str]) -> list[int]:
        if self.token_counter is None:
            return estimate_tokens(texts).tolist()  # the spec's len(text) // 4
        return count_tokens(texts, self.token_counter).tolist()

    def _embed(self, chunks: list[ContextChunk], query: str, query_embedding):
        """Each chunk's vector (its own ``embedding``, else the embedder's) and the query's."""
        todo = [k for k, c in enumerate(chunks) if c.embedding is None]
        need_q = query_embedding is None
        if need_q and not query.strip():
            raise ValueError(
                "query is empty; an embedder needs the question as text (or pass query_embedding)."
            )
        texts = [chunks[k].content for k in todo] + ([query] if need_q else [])
        V = embed_texts(as_embedder(self.embedder, texts), texts) if texts else None
        out = [c.embedding for c in chunks]
        for j, k in enumerate(todo):
            out[k] = V[j]
        return out, (V[-1] if need_q else query_embedding)

    def fit_token_budget(
        self,
        chunks: Sequence[ContextChunk],
        *,
        query_embedding: Sequence[float] | None = None,
        lam: float | str = 0.7,
        embeddings: Sequence | None = None,
    ) -> tuple[list[ContextChunk], list[str]]:
        """The spec's step 5: the chunks that fit the window less the response reserve.

        Parameters
        ----------
        chunks : sequence of ContextChunk
            The chunks.
        query_embedding : sequence of float, optional
            Select by budgeted MMR instead of in order.
        lam : float or "auto"
            MMR's trade-off.
        embeddings : sequence, optional
            The chunks' embeddings (default: their ``embedding`` fields).

        Returns
        -------
        kept : list of ContextChunk
            The chunks that fit.
        removed : list of str
            The ids left out.

        Examples
        --------
        >>> from scwo_np.optimize import ContextChunk, MoragContextOptimizer
        >>> opt = MoragContextOptimizer(budget=1000)
        >>> chunks = [ContextChunk("1", "AI is transforming healthcare", 0.9, "doc1", ["AI", "healthcare"], []),
        ...           ContextChunk("2", "AI is transforming healthcare today", 0.8, "doc1", ["AI", "healthcare"], []),
        ...           ContextChunk("3", "Machine learning in finance", 0.7, "doc2", ["ML", "finance"], [])]
        >>> kept, removed = MoragContextOptimizer(budget=20, response_reserve=10).fit_token_budget(chunks)
        >>> [c.id for c in kept], removed
        (['1'], ['2', '3'])
        """
        return self._fit(chunks, query_embedding, lam, embeddings)

    def _fit(self, chunks, query_embedding, lam, embeddings, layout: tuple | None = None):
        """:meth:`fit_token_budget`; with ``layout`` (the text's header cost and each chunk's lines'),
        the chunks are fitted with the lines :meth:`format_context` puts around them."""
        chunks = list(chunks)
        available = max(self.budget - self.response_reserve, 0)
        if not chunks:
            return [], []
        costs = np.array(self._count([c.content for c in chunks]), dtype=np.int64)
        room, lines = available, ""
        if layout is not None:
            room, costs, lines = (
                max(available - layout[0], 0),
                costs + layout[1],
                " with the text's header and lines",
            )
        embs = [c.embedding for c in chunks] if embeddings is None else list(embeddings)
        if query_embedding is not None and all(e is not None for e in embs):
            E = np.array(embs, dtype=np.float64)
            pick = mmr_select(E, query_embedding, costs, room, lam=lam).tolist()
        else:
            # ``chunks`` is already best first: keep that order (fit_budget sorts by score, stably).
            pick = fit_budget(costs, room, scores=-np.arange(len(chunks), dtype=float), mode="skip").tolist()
        chosen = set(pick)
        if not pick:
            warnings.warn(
                f"no chunk fits the {available} tokens available (budget {self.budget} minus "
                f"response_reserve {self.response_reserve}){lines}; the smallest needs {int(costs.min() + available - room)}.",
                stacklevel=3,
            )
        return [chunks[k] for k in pick], [c.id for k, c in enumerate(chunks) if k not in chosen]

    def determine_best_strategy(self, chunks: Sequence[ContextChunk], n_relationships: int) -> str:
        """The spec's ``auto`` rule: the organisation that suits these chunks.

        Parameters
        ----------
        chunks : sequence of ContextChunk
            The chunks.
        n_relationships : int
            How many relationships were found among them.

        Returns
        -------
        str
            One of ``MORAG_LAYOUTS`` other than ``"auto"``.

        Examples
        --------
        >>> from scwo_np.optimize import ContextChunk, MoragContextOptimizer
        >>> opt = MoragContextOptimizer(budget=1000)
        >>> chunks = [ContextChunk("1", "AI is transforming healthcare", 0.9, "doc1", ["AI", "healthcare"], []),
        ...           ContextChunk("2", "AI is transforming healthcare today", 0.8, "doc1", ["AI", "healthcare"], []),
        ...           ContextChunk("3", "Machine learning in finance", 0.7, "doc2", ["ML", "finance"], [])]
        >>> opt.determine_best_strategy(chunks, 0)
        'relevance'
        """
        if sum(1 for c in chunks if c.timestamp) > len(chunks) * 0.5:
            return "temporal"
        density = n_relationships / max(len(chunks) * (len(chunks) - 1) / 2, 1)
        return "topical" if density > 0.3 else "relevance"

    def organize_chunks(
        self, chunks: Sequence[ContextChunk], relationships: Sequence[ChunkRelationship], strategy: str
    ) -> list[ContextChunk]:
        """The spec's step 6: the chunks laid out by ``strategy``.

        Parameters
        ----------
        chunks : sequence of ContextChunk
            The chunks.
        relationships : sequence of ChunkRelationship
            Their relationships (from :meth:`identify_relationships`).
        strategy : str
            One of ``MORAG_LAYOUTS`` other than ``"auto"``.

        Returns
        -------
        list of ContextChunk
            The same chunks, in the strategy's order.

        Examples
        --------
        >>> from scwo_np.optimize import ContextChunk, MoragContextOptimizer
        >>> opt = MoragContextOptimizer(budget=1000)
        >>> chunks = [ContextChunk("1", "AI is transforming healthcare", 0.9, "doc1", ["AI", "healthcare"], []),
        ...           ContextChunk("2", "AI is transforming healthcare today", 0.8, "doc1", ["AI", "healthcare"], []),
        ...           ContextChunk("3", "Machine learning in finance", 0.7, "doc2", ["ML", "finance"], [])]
        >>> [c.id for c in opt.organize_chunks(chunks, [], "relevance")]
        ['1', '2', '3']
        """
        chunks = list(chunks)
        if strategy == "auto":
            ids = {c.id for c in chunks}
            strategy = self.determine_best_strategy(
                chunks, sum(1 for r in relationships if r.chunk1_id in ids and r.chunk2_id in ids)
            )
        if strategy == "temporal":
            stamped = sorted((c for c in chunks if c.timestamp), key=lambda c: c.timestamp)
            return stamped + [c for c in chunks if not c.timestamp]
        if strategy == "topical":
            return self._organize_topically(chunks, relationships)
        if strategy == "hierarchical":
            over = [c for c in chunks if self.is_overview_chunk(c)]
            detail = [c for c in chunks if not self.is_overview_chunk(c)]
            key = lambda c: -c.relevance_score  # noqa: E731
            return sorted(over, key=key) + sorted(detail, key=key)
        return chunks

    @staticmethod
    def is_overview_chunk(chunk: ContextChunk) -> bool:
        """The spec's heuristics: early in its document, list-like, entity-dense, or short and entity-rich.

        Parameters
        ----------
        chunk : ContextChunk
            The chunk.

        Returns
        -------
        bool
            Whether it reads as an overview.

        Examples
        --------
        >>> from scwo_np.optimize import ContextChunk, MoragContextOptimizer
        >>> MoragContextOptimizer.is_overview_chunk(ContextChunk("1", "Intro", 0.5, "d", [], [], position=0.0))
        True
        """
        content = chunk.content
        ents = _entities(chunk)
        if chunk.position is not None and chunk.position < 0.2:
            return True
        if content.count("\n") > 5 and ("•" in content or "-" in content or content.count(":") > 2):
            return True
        words = len(content.split())
        if len(ents) > words * 0.1:
            return True
        return words < 100 and len(ents) > 3

    def format_context(self, optimized_context: OptimizedContext, query: str) -> str:
        """The spec's text layout: a header, then every chunk with its relationships, within the
        context's share of the budget (``budget - response_reserve``) by the optimizer's counter.

        :meth:`optimize` fits the chunks with the lines this layout adds: a header (the query
        included, a query of over 200 characters by its start), a title, a relevance line, its
        relations and a rule per chunk, so the text holds every chunk it kept.  Should the text
        still be over the context's share (an ``OptimizedContext`` made otherwise, a different
        query), a query of over 200 characters is shown by its start (marked ``…``), then
        the least relevant chunks are left out (the last line names them), and then the query is
        shortened further.  A share too small for the
        bare header is a ``ValueError`` saying what budget it needs.

        Parameters
        ----------
        optimized_context : OptimizedContext
            The result of :meth:`optimize`.
        query : str
            The question.

        Returns
        -------
        str
            The context as text, ready for a prompt.

        Examples
        --------
        >>> from scwo_np.optimize import ContextChunk, MoragContextOptimizer
        >>> opt = MoragContextOptimizer(budget=1000)
        >>> chunks = [ContextChunk("1", "AI is transforming healthcare", 0.9, "doc1", ["AI", "healthcare"], []),
        ...           ContextChunk("2", "AI is transforming healthcare today", 0.8, "doc1", ["AI", "healthcare"], []),
        ...           ContextChunk("3", "Machine learning in finance", 0.7, "doc2", ["ML", "finance"], [])]
        >>> text = opt.format_context(opt.optimize(chunks, "AI in healthcare"), "AI in healthcare")
        >>> "AI is transforming healthcare" in text
        True
        """
        if not isinstance(optimized_context, OptimizedContext):
            raise TypeError(
                f"optimized_context must be what optimize() returned (an OptimizedContext); got "
                f"{type(optimized_context).__name__}."
            )
        if not isinstance(query, str):
            raise TypeError(f"query must be a str; got {type(query).__name__}.")
        ctx = optimized_context
        room = max(self.budget - self.response_reserve, 0)

        def render(chunks: list, shown_query: str, left_out: list) -> str:
            return self._render(
                ctx.organization_strategy,
                ctx.relationships,
                len(ctx.chunks),
                chunks,
                shown_query,
                left_out,
                room,
            )

        def fits(text: str) -> bool:
            return int(self._count([text])[0]) <= room

        chunks = list(ctx.chunks)
        text = render(chunks, query, [])
        if fits(text):
            return text
        if len(query) > _QUERY_SHOWN:  # a long query's echo goes before any chunk does
            query = query[:_QUERY_SHOWN] + "…"
            text = render(chunks, query, [])
            if fits(text):
                return text
        drop = sorted(
            range(len(chunks)), key=lambda k: (chunks[k].relevance_score, -k)
        )  # least relevant first
        out: set[int] = set()
        for k in drop:  # one at a time: the rules and the marker count too
            out.add(k)
            text = render(
                [c for j, c in enumerate(chunks) if j not in out], query, [chunks[j].id for j in sorted(out)]
            )
            if fits(text):
                return text
        ids = [c.id for c in chunks]
        lo, hi = 0, len(query) - 1  # the longest start of the query that fits, marked as cut
        while lo < hi:
            m = (lo + hi + 1) // 2
            if fits(render([], query[:m] + "…", ids)):
                lo = m
            else:
                hi = m - 1
        text = render([], query[:lo] + "…", ids)
        if not fits(text):
            need = int(self._count([text])[0]) + self.response_reserve
            raise ValueError(
                f"budget={self.budget} leaves {room} tokens for the context after response_reserve="
                f"{self.response_reserve}; its header alone takes more: give budget >= {need}."
            )
        return text

    def _render(self, strategy, relationships, n_total, chunks, shown_query, left_out, room=0) -> str:
        """The text layout of :meth:`format_context`."""
        parts = [
            f"# Context for Query: {shown_query}\n",
            f"Organization Strategy: {strategy}",
            f"Total Chunks: {len(chunks)}",
            f"Estimated Tokens: {int(sum(self._count([c.content for c in chunks]))) if chunks else 0}\n",
        ]
        for i, chunk in enumerate(chunks):
            parts.extend(self._chunk_lines(i + 1, chunk, relationships))
            parts.append(f"\n{chunk.content}\n")
            if i < len(chunks) - 1:
                parts.append("---\n")
        if left_out:
            parts.append(f"[scwo: {len(left_out)} of {n_total} chunks left out to fit {room} tokens: "
                         f"{', '.join(map(str, left_out))}]")  # fmt: skip
        return "\n".join(parts)

    def _chunk_lines(self, number: int, chunk: ContextChunk, relationships) -> list[str]:
        lines = [f"## Source {number}: {chunk.source_document}", f"Relevance: {chunk.relevance_score:.2f}"]
        related = self._find_related_chunks(chunk, relationships)
        if related:
            lines.append(f"Related to: {', '.join(related)}")
        return lines

    def _layout_costs(self, ranked, relationships, shown_query, available) -> tuple[int, NDArray[np.int64]]:
        """The tokens of :meth:`format_context`'s header (the longest strategy name, the largest
        count) and of each chunk's lines around its content (title, relevance, relations, rule)."""
        strategy = max((s for s in MORAG_LAYOUTS if s != "auto"), key=len)
        head = "\n".join([
            f"# Context for Query: {shown_query}\n", f"Organization Strategy: {strategy}",
            f"Total Chunks: {len(ranked)}", f"Estimated Tokens: {available}\n",
        ])  # fmt: skip
        number = len(ranked)
        lines = ["\n".join(self._chunk_lines(number, c, relationships)) + "\n\n\n\n---\n\n" for c in ranked]
        return int(self._count([head])[0]), np.asarray(
            self._count(lines), dtype=np.int64
        ) if lines else np.zeros(0, np.int64)

    async def _remove_redundancy(self, chunks):
        return self.remove_redundancy(chunks)

    async def _identify_relationships(self, chunks):
        return self.identify_relationships(chunks)

    async def _prioritize_chunks(self, chunks, relationships, query):
        return self.prioritize_chunks(chunks, relationships, query)

    async def _fit_token_budget(self, chunks):
        return self.fit_token_budget(chunks)

    async def _organize_chunks(self, chunks, relationships, strategy):
        return self.organize_chunks(chunks, relationships, strategy)

    # -- helpers --------------------------------------------------------------------

    @staticmethod
    def _to_relationships(chunks: list[ContextChunk], e: RelationshipEdges) -> list[ChunkRelationship]:
        return [
            ChunkRelationship(
                chunks[a].id, chunks[b].id, RELATIONSHIP_TYPES[k], float(s), _describe(chunks[a], chunks[b])
            )
            for a, b, k, s in zip(
                e.i.tolist(), e.j.tolist(), e.kind.tolist(), e.strength.tolist(), strict=True
            )
        ]

    @staticmethod
    def _edges_among(final: list[ContextChunk], unique: list[ContextChunk], e: RelationshipEdges) -> int:
        ids = {c.id for c in final}
        uid = [c.id for c in unique]
        return sum(
            1 for a, b in zip(e.i.tolist(), e.j.tolist(), strict=True) if uid[a] in ids and uid[b] in ids
        )

    @staticmethod
    def _organize_topically(
        chunks: list[ContextChunk], relationships: Sequence[ChunkRelationship]
    ) -> list[ContextChunk]:
        pos = {c.id: k for k, c in enumerate(chunks)}
        pairs = [
            (pos[r.chunk1_id], pos[r.chunk2_id])
            for r in relationships
            if r.strength > 0.3 and r.chunk1_id in pos and r.chunk2_id in pos
        ]
        n = len(chunks)
        a = np.array([p[0] for p in pairs], dtype=np.int64)
        b = np.array([p[1] for p in pairs], dtype=np.int64)
        graph = coo_matrix((np.ones(len(pairs)), (a, b)), shape=(n, n))
        _, label = connected_components(graph, directed=False)
        score = np.array([c.relevance_score for c in chunks])
        # Labels number components by their first member, which is the spec's discovery order.
        avg = np.bincount(label, weights=score) / np.bincount(label)
        cluster_order = sorted(range(label.max() + 1 if n else 0), key=lambda k: -avg[k])
        out = []
        for k in cluster_order:
            members = [m for m in range(n) if label[m] == k]
            out.extend(chunks[m] for m in sorted(members, key=lambda m: -score[m]))
        return out

    @staticmethod
    def _find_related_chunks(chunk: ContextChunk, relationships: Sequence[ChunkRelationship]) -> list[str]:
        related = []
        for rel in relationships:
            if rel.chunk1_id == chunk.id:
                related.append(f"Source {rel.chunk2_id} ({rel.relationship_type})")
            elif rel.chunk2_id == chunk.id:
                related.append(f"Source {rel.chunk1_id} ({rel.relationship_type})")
        return related[:3]

    def _record(self, chunks, stats, removed, organized, total, used, rels, n_unique) -> None:
        """Update the spec's monitoring metrics (running means over calls)."""
        m = self.context_metrics
        self._calls += 1
        k = self._calls
        m["chunks_processed"] += len(chunks)
        m["chunks_removed_redundancy"] += stats["removed_count"]
        m["chunks_removed_budget"] += len(removed)
        avg = float(np.mean([c.relevance_score for c in organized])) if organized else 0.0
        m["average_relevance_score"] += (avg - m["average_relevance_score"]) / k
        util = total / max(self.budget - self.response_reserve, 1)
        m["token_utilization"] += (util - m["token_utilization"]) / k
        rate = len(rels) / max(n_unique * (n_unique - 1) / 2, 1)
        m["relationship_detection_rate"] += (rate - m["relationship_detection_rate"]) / k
        if used in m["organization_strategies_used"]:
            m["organization_strategies_used"][used] += 1


__getattr__ = renamed_attributes(__name__, {"STRATEGIES": "MORAG_LAYOUTS"})
