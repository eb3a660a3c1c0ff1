"""scwo_np as a LlamaIndex node postprocessor (``pip install 'scwo_np[llamaindex]'``: llama-index-core).

:class:`ScwoNodePostprocessor` cuts retrieved ``NodeWithScore`` lists to a token
budget with budgeted MMR (:func:`scwo_np.select_texts`), for a query engine's
``node_postprocessors=[...]`` or a direct ``postprocess_nodes`` call.  Vectors come
from the nodes' own ``embedding`` when every node has one (and the query's from
``QueryBundle.embedding`` or ``embed_model``), else from ``embed_model`` (any
LlamaIndex ``BaseEmbedding``), else from scwo_np's ``embedder`` (default: LSA over
the nodes and the question, which needs only scikit-learn).

Text is each node's content without metadata (``MetadataMode.NONE``); the budget holds for what
the LLM reads of the kept nodes (``MetadataMode.LLM``: a reader's ``file_path`` and the like
included, each node with its metadata lines, joined by blank lines).  The nodes
returned are copies whose metadata adds ``scwo_rank``, ``scwo_gain``,
``scwo_relevance``, ``scwo_tokens``, ``scwo_token_counter``, ``scwo_lam`` (the trade-off
used: the one given or the one ``lam="auto"`` chose) and ``scwo_duplicates`` when copies of it (the same text but for white space) were merged into it:
each one's ``id`` and ``metadata``, so a citation can name every source (all kept out of what the LLM and the embedder see); scores are kept as they were.  The inputs are not
modified.

Examples
--------
>>> from llama_index.core.schema import NodeWithScore, TextNode
>>> nodes = [NodeWithScore(node=TextNode(text=t), score=1.0) for t in [
...     "Use csv.reader to read a CSV file row by row.",
...     "csv.reader reads a CSV file one row at a time.",
...     "json.load parses a JSON document from a file.",
...     "The sqlite3 module is a DB-API interface for SQLite."]]
>>> out = ScwoNodePostprocessor(budget=25).postprocess_nodes(nodes, query_str="how do I read a CSV file?")
>>> [n.node.get_content()[:20] for n in out], [n.node.metadata["scwo_rank"] for n in out]
(['Use csv.reader to re', 'json.load parses a J'], [0, 1])
"""

from __future__ import annotations

import warnings
from typing import Any, Literal

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import Field
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle

from ..embed import EmbeddingCache, as_embedder
from ..tokens import as_token_counter, count_tokens
from ._common import KEYS, Budget, Lam, OneLineErrors, annotations, choose, copies, stack

__all__ = ["ScwoNodePostprocessor"]


class ScwoNodePostprocessor(OneLineErrors, BaseNodePostprocessor):
    """Budgeted MMR over retrieved nodes (see the module docs).

    Parameters
    ----------
    budget : int
        Tokens the kept nodes may use, in ``token_counter``'s tokens.
    lam : float or "auto", default 0.7
        Relevance/diversity trade-off in [0, 1]; ``"auto"`` chooses it per question
        (:func:`~scwo_np.select.auto_lam`).
    embed_model : BaseEmbedding, optional
        Embeds nodes without an ``embedding``, and the query.
    embedder : str or callable, optional
        scwo_np's embedder when there is no ``embed_model`` (default "lsa"); ``"minilm"``'s
        vectors are kept in the user's embedding cache, as :func:`~scwo_np.select_texts` keeps
        them (a second call on the same nodes embeds nothing).
    token_counter : str or callable, default "estimate"
        See :func:`scwo_np.tokens.as_token_counter`.
    order : {"pick", "original", "edges"}, default "pick"
        "edges" is LlamaIndex's ``LongContextReorder`` layout, by relevance to the query.
    granularity : {"chunk", "sentence"}, default "chunk"
        Keep whole nodes, or only their selected sentences under the one budget (each kept
        node's text is then its kept sentences; ``scwo_spans`` says where they were).
    elision : str, optional
        With sentences: the marker between kept sentences that were not adjacent.
    method : {"auto", "exact", "lazy"}
        The MMR algorithm; all return the same nodes.
    callback_manager : llama_index.core.callbacks.CallbackManager, optional
        LlamaIndex's callbacks (its own field of every postprocessor).

    Examples
    --------
    >>> from llama_index.core.schema import NodeWithScore, TextNode
    >>> nodes = [NodeWithScore(node=TextNode(text=t), score=1.0) for t in
    ...          ["json.load parses a JSON file", "json.loads parses a JSON string", "csv reads rows"]]
    >>> kept = ScwoNodePostprocessor(budget=16).postprocess_nodes(nodes, query_str="parse JSON")
    >>> [n.node.get_content() for n in kept]  # the near-copy of the first is left out
    ['json.load parses a JSON file', 'csv reads rows']
    """

    budget: Budget
    lam: Lam = 0.7
    embed_model: BaseEmbedding | None = Field(default=None, exclude=True)
    embedder: Any = Field(default=None, exclude=True)
    token_counter: Any = "estimate"
    order: Literal["pick", "original", "edges"] = "pick"
    granularity: Literal["chunk", "sentence"] = "chunk"
    elision: str | None = None
    method: Literal["auto", "exact", "lazy"] = "auto"

    @classmethod
    def class_name(cls) -> str:
        """The name LlamaIndex serialises this component under.

        Returns
        -------
        str
            ``"ScwoNodePostprocessor"``.

        Examples
        --------
        >>> ScwoNodePostprocessor.class_name()
        'ScwoNodePostprocessor'
        """
        return "ScwoNodePostprocessor"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        nodes, query, qv = _inputs(nodes, query_bundle)
        em = self.embed_model
        return self._finish(nodes, query, qv,
                            em.get_text_embedding_batch if em is not None else None,
                            em.get_query_embedding if em is not None else None)  # fmt: skip

    async def _apostprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        nodes, query, qv = _inputs(nodes, query_bundle)
        em = self.embed_model
        if em is None or not nodes:
            return self._finish(nodes, query, qv, None, None)
        texts = [n.node.get_content(metadata_mode=MetadataMode.NONE) for n in nodes]
        vectors = [n.node.embedding for n in nodes]
        if any(v is None for v in vectors):
            vectors = await em.aget_text_embedding_batch(texts)
        if qv is None:
            qv = await em.aget_query_embedding(query)
        return self._finish(nodes, query, qv, None, None, vectors)

    def _finish(self, nodes, query, qv, embed_docs, embed_query, vectors=None) -> list[NodeWithScore]:
        texts = [n.node.get_content(metadata_mode=MetadataMode.NONE) for n in nodes]
        read = [n.node.get_content(metadata_mode=MetadataMode.LLM) for n in nodes]  # what the LLM reads
        own = stack([n.node.embedding for n in nodes]) if vectors is None else stack(vectors)
        embedder = self.embedder
        common = dict(query_vector=qv, embed_docs=embed_docs, embed_query=embed_query,
                      token_counter=self.token_counter, lam=self.lam, method=self.method, order=self.order,
                      granularity=self.granularity, elision=self.elision)  # fmt: skip
        if read == texts:  # no metadata in the prompt: one selection, its warnings as they are
            return self._nodes(nodes, texts, choose(texts, query, self.budget, vectors=own, embedder=embedder,
                                             **common))  # fmt: skip
        counter = as_token_counter(self.token_counter)
        # Each node's metadata lines: what the LLM reads of it beyond its text.
        meta = np.maximum(count_tokens(read, counter) - count_tokens(texts, counter), 0)
        if own is None and embed_docs is None and embedder in (None, "lsa") and texts:
            # LSA fitted once on every node and the question, so a selection over some of them (the
            # refill below) embeds them as the first did.
            embedder = as_embedder("lsa", [*[t for t in texts if t.strip()], query], cache=False)
        # Whole nodes: each costs what the LLM reads of it.  Sentences: the metadata of the nodes kept
        # is known only after the selection, so it runs again (vectors cached) on lower budgets, and
        # then once more over the nodes kept, on the budget their metadata leaves.
        costs = count_tokens(read, counter) if self.granularity == "chunk" else None
        # The selection runs more than once: each text is embedded once, in the user's cache for an
        # embedder cached by default ("minilm"), else in one for this call (a framework's model
        # was called for every text on every run: 1,407 texts embedded for 201).
        named = isinstance(embedder, str) and embed_docs is None
        cache = None if named else EmbeddingCache(":memory:")

        def attempt(budget: int, keep: np.ndarray | None = None):
            """The nodes kept on an inner ``budget`` (over ``keep`` only), what the LLM reads of them, and
            the selection's warnings (held back: only the returned selection's are the user's)."""
            at = np.arange(len(nodes)) if keep is None else keep
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                sel = choose([texts[i] for i in at.tolist()], query, max(budget, 0), embedder=embedder,
                             vectors=None if own is None else own[at], cache=cache,
                             costs=None if costs is None else costs[at], **common)  # fmt: skip
            out = self._nodes(nodes, texts, sel, at)
            return out, _read_tokens(out, counter), caught, at[sel.indices]

        try:
            best = attempt(self.budget)
            if best[1] > self.budget:
                best = self._search(attempt, best)
            if self.granularity == "sentence" and best[0]:
                # The nodes kept, filled on what their own metadata and the blank lines leave.
                kept = np.sort(best[3])
                room = self.budget - (
                    best[1] - int(count_tokens([_joined(best[0], MetadataMode.NONE)], counter)[0])
                )
                for _ in range(_REFITS):
                    got = attempt(room, kept)
                    if got[1] <= self.budget:
                        best = got if got[1] > best[1] else best
                        break
                    room -= got[1] - self.budget
        finally:
            if cache is not None:
                cache.close()
        out, used, caught, _ = best
        while out and used > self.budget:  # the last resort: the last picked goes
            last = max(n.node.metadata["scwo_rank"] for n in out)
            out = [n for n in out if n.node.metadata["scwo_rank"] != last]
            used = _read_tokens(out, counter)
        if out:
            for w in caught:  # what the selection returned says (a question unrelated to every node ...)
                if not str(w.message).startswith("select_texts: no "):
                    warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        elif texts and self.budget > 0:
            cheapest = int(meta.min())
            alone = "leaves no room for any text" if cheapest >= self.budget else "leaves too little room"
            warnings.warn(
                f"ScwoNodePostprocessor: no node fits in a budget of {self.budget} tokens with its metadata: "
                f"the LLM reads each node's metadata too (MetadataMode.LLM), and the least of it, "
                f"{cheapest} tokens by {counter.name!r}, {alone}; the context is empty. Raise the budget, "
                "or keep keys out of the LLM's text (excluded_llm_metadata_keys).",
                UserWarning,
                stacklevel=4,
            )
        return out

    def _search(self, attempt, first):
        """The best fit of lower inner budgets when ``first`` (the whole budget) was over it: scaled
        down by the overflow's share, then halved between what fits and what is over."""
        best, lo, hi, got = None, 0, self.budget, first
        budget = self.budget
        for _ in range(_REFITS):
            if got[1] <= self.budget:
                lo = budget
                best = got if best is None or got[1] > best[1] else best
            else:
                hi = budget
            if hi - lo <= 1:
                break
            if best is None:  # the content scaled by the overflow's share: fewer nodes, less metadata
                budget = max(lo + 1, min(hi - 1, budget * self.budget // max(got[1], 1)))
            else:
                budget = (lo + hi) // 2
            got = attempt(budget)
        if got[1] <= self.budget and (best is None or got[1] > best[1]):
            best = got
        return best if best is not None else got

    def _nodes(self, nodes, texts, sel, at=None) -> list[NodeWithScore]:
        """Copies of the nodes ``sel`` kept (``sel`` over ``nodes[at]`` when ``at`` is given), with the
        scwo_* metadata; ``scwo_duplicates`` names the nodes of all of ``nodes`` merged into one."""
        kept = sel.indices.tolist() if at is None else at[sel.indices].tolist()
        merged = [[{"id": nodes[j].node.node_id, "metadata": dict(nodes[j].node.metadata)} for j in js]
                  for js in copies(texts, kept)]  # fmt: skip
        out = []
        for k, (i, a) in enumerate(zip(kept, annotations(sel, merged), strict=True)):
            node = nodes[i].node.model_copy(deep=False)
            if sel.granularity == "sentence":
                node.set_content(sel.texts[k])
            node.metadata = {**node.metadata, **a}
            node.excluded_llm_metadata_keys = [*node.excluded_llm_metadata_keys, *KEYS]
            node.excluded_embed_metadata_keys = [*node.excluded_embed_metadata_keys, *KEYS]
            out.append(NodeWithScore(node=node, score=nodes[i].score))
        return out


#: Selections of sentences tried, at most, while the kept nodes' metadata lines put the text over the budget.
_REFITS = 6


def _joined(nodes: list[NodeWithScore], mode: MetadataMode) -> str:
    """The nodes' content as the synthesizers join it (blank lines between)."""
    return "\n\n".join(n.node.get_content(metadata_mode=mode) for n in nodes)


def _read_tokens(nodes: list[NodeWithScore], counter) -> int:
    """Tokens of what the LLM reads of ``nodes``: each with its metadata, joined by blank lines."""
    return int(count_tokens([_joined(nodes, MetadataMode.LLM)], counter)[0]) if nodes else 0


def _inputs(nodes: object, query_bundle: QueryBundle | None) -> tuple[list[NodeWithScore], str, Any]:
    if query_bundle is None:
        raise ValueError("ScwoNodePostprocessor needs the query: pass query_str= or query_bundle=.")
    if isinstance(nodes, NodeWithScore | str):
        raise TypeError("nodes must be a list of NodeWithScore; wrap a single one in a list.")
    nodes = list(nodes)  # type: ignore[call-overload]
    for i, n in enumerate(nodes):
        if not isinstance(n, NodeWithScore):
            raise TypeError(f"nodes[{i}] is {type(n).__name__}, not a llama_index NodeWithScore.")
    return nodes, query_bundle.query_str, query_bundle.embedding
