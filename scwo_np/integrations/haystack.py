"""scwo_np as a Haystack ranker (``pip install 'scwo_np[haystack]'``: haystack-ai).

:class:`ScwoRanker` is a Haystack 2/3 component that fits a pipeline's retrieved
``documents`` into a token budget: budgeted MMR (:func:`scwo_np.select_texts`) or any
strategy of :data:`scwo_np.select.STRATEGIES` over whole documents, or MMR over their
sentences.  Haystack's own rankers (``SentenceTransformersDiversityRanker``,
``LostInTheMiddleRanker``, ``pyversity-haystack``'s ``PyversityRanker``) choose ``top_k``
documents or count words; this one counts the tokens the model will read.

Vectors come from the documents' own ``embedding`` when every document has one, with the
question's from the ``query_embedding`` input (connect a text embedder's ``embedding``
output to it) or, without it, by ``embedder="minilm"`` (then taken as the documents' model);
otherwise scwo_np's ``embedder`` embeds documents and question ("lsa" by
default, needs only scikit-learn; "minilm" with the embed extra).  With
``granularity="sentence"`` every sentence is embedded, so ``embedder`` embeds the documents,
their sentences and the question, and the pipeline's vectors are not used.  The question
always goes in as text too, so its words count beside the cosine at chunk level
(``lexical``).  A document id seen twice is ranked once (the first), as Haystack's own
rankers do; a document with no text (``content`` None or blank) is left out with a warning
naming its position.

What comes out are copies of the kept documents, in ``order``: ``score`` is the relevance
the selection ranked them by and ``meta`` adds ``scwo_rank``, ``scwo_gain``,
``scwo_relevance``, ``scwo_tokens``, ``scwo_token_counter``, ``scwo_lam`` (the trade-off
used: the one given or the one ``lam="auto"`` chose; not for strategies without one), with
sentences ``scwo_spans`` (where the kept sentences were in the original content, which is
then the kept sentences), and ``scwo_duplicates`` when copies of it (the same text but for white space) were merged into it:
each one's ``id`` and ``metadata``, so a citation can name every source.  The inputs are not modified.

Examples
--------
>>> from haystack import Document
>>> docs = [Document(content=t) for t in [
...     "Use csv.reader to read a CSV file row by row.",
...     "csv.reader reads a CSV file one row at a time.",
...     "json.load parses a JSON document from a file.",
...     "The sqlite3 module is a DB-API interface for SQLite."]]
>>> out = ScwoRanker(budget=25).run(documents=docs, query="how do I read a CSV file?")["documents"]
>>> [d.content[:20] for d in out], [d.meta["scwo_rank"] for d in out]
(['Use csv.reader to re', 'json.load parses a J'], [0, 1])
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from typing import Any

from haystack import Document, component, default_from_dict, default_to_dict

from ..embed import EMBEDDERS
from ..select import GRANULARITIES, MMR_METHODS, ORDERS, STRATEGIES
from ..select._texts import check_strategy_options  # the one check of select_texts' strategy_options
from ..tokens import COUNTERS
from ..validation import check_budget, check_lam
from ._common import annotations, choose, copies, stack, warn_empty

__all__ = ["ScwoRanker"]


@component
class ScwoRanker:
    """Documents into a token budget, by budgeted MMR or another strategy (see the module docs).

    Parameters
    ----------
    budget : int
        Tokens the kept documents may use, in ``token_counter``'s tokens (``run`` may override it).
    strategy : str, default "mmr"
        Any of :data:`scwo_np.select.STRATEGIES`; the others than "mmr" keep whole documents.
    lam : float or "auto", default 0.7
        Relevance/diversity trade-off in [0, 1]; ``"auto"`` chooses it per question.
    granularity : {"chunk", "sentence"}, default "chunk"
        Keep whole documents, or only their selected sentences under the one budget (MMR).
    token_counter : str, default "estimate"
        A counter's name (:data:`scwo_np.tokens.COUNTERS`): "estimate", "wordpiece", "tiktoken".
    embedder : str, default "lsa"
        scwo_np's embedder for documents without an ``embedding`` ("lsa" or "minilm").
    order : {"pick", "original", "edges"}, default "pick"
        Layout of the result; "edges" puts the most relevant at the two ends.
    elision : str, optional
        With sentences: the marker between kept sentences that were not adjacent.
    method : {"auto", "exact", "lazy"}, default "auto"
        MMR's algorithm; all return the same documents.
    strategy_options : dict, optional
        The strategy's own keyword arguments (``{"gamma": 0.5}``).

    Examples
    --------
    Inside a pipeline, after a retriever:

    >>> from haystack import Document, Pipeline
    >>> from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
    >>> from haystack.document_stores.in_memory import InMemoryDocumentStore
    >>> store = InMemoryDocumentStore()
    >>> _ = store.write_documents([Document(content=t) for t in [
    ...     "json.load parses a JSON file.", "json.loads parses a JSON string.",
    ...     "JSON files are parsed by json.load.", "csv.reader reads CSV rows."]])
    >>> pipe = Pipeline()
    >>> _ = pipe.add_component("retriever", InMemoryBM25Retriever(store, top_k=4))
    >>> _ = pipe.add_component("ranker", ScwoRanker(budget=16))
    >>> _ = pipe.connect("retriever.documents", "ranker.documents")
    >>> out = pipe.run({"retriever": {"query": "parse JSON"}, "ranker": {"query": "parse JSON"}})
    >>> sum(d.meta["scwo_tokens"] for d in out["ranker"]["documents"]) <= 16
    True
    """

    def __init__(
        self,
        budget: int,
        *,
        strategy: str = "mmr",
        lam: float | str = 0.7,
        granularity: str = "chunk",
        token_counter: str = "estimate",
        embedder: str = "lsa",
        order: str = "pick",
        elision: str | None = None,
        method: str = "auto",
        strategy_options: dict[str, Any] | None = None,
    ) -> None:
        for registry, value in ((STRATEGIES, strategy), (GRANULARITIES, granularity), (ORDERS, order),
                                (MMR_METHODS, method)):  # fmt: skip
            registry.lookup(value)  # an unknown name is an error naming the argument and the choices
        self.budget = check_budget(budget)
        self.strategy, self.granularity, self.order, self.method = strategy, granularity, order, method
        self.lam = check_lam(lam, auto=True)
        for name, value in (("token_counter", token_counter), ("embedder", embedder)):
            if not isinstance(value, str):
                raise TypeError(f"ScwoRanker: {name} must be a name (a str), so the pipeline serialises; got "
                                f"{type(value).__name__}.")  # fmt: skip
        COUNTERS.lookup(token_counter)
        EMBEDDERS.lookup(embedder)  # unknown names fail here, not at the pipeline's first run
        self.token_counter = token_counter
        self.embedder = embedder
        self.elision = elision
        self.strategy_options = dict(strategy_options or {})
        check_strategy_options(strategy, self.strategy_options)

    def to_dict(self) -> dict[str, Any]:
        """The component as a dict, for ``Pipeline.dumps`` (every parameter is plain data)."""
        return default_to_dict(
            self, budget=self.budget, strategy=self.strategy, lam=self.lam, granularity=self.granularity,
            token_counter=self.token_counter, embedder=self.embedder, order=self.order, elision=self.elision,
            method=self.method, strategy_options=self.strategy_options,
        )  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScwoRanker:
        """The component back from :meth:`to_dict`'s dict."""
        return default_from_dict(cls, data)

    @component.output_types(documents=list[Document])
    def run(
        self,
        documents: list[Document],
        query: str,
        budget: int | None = None,
        query_embedding: list[float] | None = None,
    ) -> dict[str, list[Document]]:
        """The documents that fit the budget, chosen for ``query``, with ``scwo_*`` metadata.

        Parameters
        ----------
        documents : list of Document
            The retrieved documents (their ``embedding`` is used when every one has one).
        query : str
            The question.
        budget : int, optional
            This run's budget instead of the component's.
        query_embedding : list of float, optional
            The question's vector, by the model that embedded the documents.

        Returns
        -------
        dict
            ``{"documents": [...]}``: copies of the kept documents, in ``order``.
        """
        budget = self.budget if budget is None else check_budget(budget)
        docs = list(documents)
        for i, d in enumerate(docs):
            if not isinstance(d, Document):
                raise TypeError(f"ScwoRanker: documents[{i}] is {type(d).__name__}, not a haystack Document.")
        # A document with no text (content None: a table, an image; or blank) is left out with a
        # warning naming its position, as the LangChain and LlamaIndex components do.
        empty = [i for i, d in enumerate(docs) if not (d.content or "").strip()]
        if empty:
            warn_empty(empty, stacklevel=3)
            docs = [d for d in docs if (d.content or "").strip()]
        seen: set[str] = set()  # one document once, as Haystack's rankers do: the first of an id
        docs = [d for d in docs if not (d.id in seen or seen.add(d.id))]
        sentences = self.granularity == "sentence"  # every sentence embedded by scwo_np's embedder
        vectors = None if sentences else stack([d.embedding for d in docs])
        if vectors is not None and query_embedding is None and self.embedder == "lsa":
            # LSA is fitted on each call's texts: it cannot have made the pipeline's vectors.  Another
            # embedder ("minilm") is taken as their model and embeds the question, as in LangChain.
            raise ValueError(
                "ScwoRanker: the documents carry embeddings but the question has none: connect the text "
                "embedder's 'embedding' output to the ranker's 'query_embedding' input, or name the model "
                "that made them as embedder= ('minilm')."
            )
        sel = choose(
            [d.content for d in docs], query, budget, vectors=vectors,
            query_vector=query_embedding if vectors is not None else None, embed_docs=None, embed_query=None,
            embedder=self.embedder, token_counter=self.token_counter, lam=self.lam, method=self.method,
            order=self.order, granularity=self.granularity, elision=self.elision, strategy=self.strategy,
            strategy_options=self.strategy_options,
        )  # fmt: skip
        kept = sel.indices.tolist()
        merged = [[{"id": docs[j].id, "metadata": dict(docs[j].meta)} for j in js]
                  for js in copies([d.content for d in docs], kept)]  # fmt: skip
        takes_lam = self.strategy == "mmr" or "lam" in inspect.signature(STRATEGIES[self.strategy]).parameters
        out = []
        for i, text, rel, meta in zip(kept, sel.texts, sel.relevance, annotations(sel, merged), strict=True):
            if not takes_lam:  # a strategy with no trade-off: no lam to report
                del meta["scwo_lam"]
            d = docs[i]
            out.append(dataclasses.replace(d, content=text, score=float(rel), meta={**d.meta, **meta}))
        return {"documents": out}

    @component.output_types(documents=list[Document])
    async def run_async(
        self,
        documents: list[Document],
        query: str,
        budget: int | None = None,
        query_embedding: list[float] | None = None,
    ) -> dict[str, list[Document]]:
        """:meth:`run` in a worker thread, for ``AsyncPipeline`` (the selection is CPU work)."""
        return await asyncio.to_thread(self.run, documents, query, budget, query_embedding)


# Haystack's @component gives the class a (*args, **kwargs) call; its documented parameters are
# __init__'s (for help(), Sphinx and numpydoc's validation).
ScwoRanker.__signature__ = inspect.Signature(
    list(inspect.signature(ScwoRanker.__init__).parameters.values())[1:]
)
