"""scwo_np as LangChain components (``pip install 'scwo_np[langchain]'``: langchain-core, langchain).

* :class:`ScwoCompressor` — a ``BaseDocumentCompressor``: the retrieved documents
  cut to a token budget with budgeted MMR (:func:`scwo_np.select_texts`).  Drop it
  into a ``ContextualCompressionRetriever`` (from ``langchain-classic``) or call it
  directly.  Vectors come from each document's ``metadata[embedding_key]`` when
  every document has one, else from ``embeddings`` (any LangChain ``Embeddings``:
  ``embed_documents`` for the documents, ``embed_query`` for the question), else
  from scwo_np's ``embedder`` (default: LSA over the documents and the question,
  which needs only scikit-learn).
* :class:`ScwoDedupTransformer` — a ``BaseDocumentTransformer`` that drops
  near-duplicate documents (:func:`scwo_np.deduplicate`).
* :class:`ScwoToolOutputMiddleware` — a LangChain v1 agent middleware: a JSON tool
  result above ``budget`` tokens is crushed to that many tokens, the marker inside
  (errors and anomalies first, kept items whole, :func:`scwo_np.anchor.crush_json`)
  before the model reads it; the rest is stored, and the message carries the key that
  gets it back.
* :class:`ScwoHSCAMiddleware` — a LangChain v1 agent middleware: once the history
  passes ``trigger`` tokens, the messages older than the ``keep`` newest go into an
  :class:`~scwo_np.hsca.HSCAEngine` and are replaced by one message holding its context
  for the latest question, within ``budget`` tokens (``SummarizationMiddleware`` without
  the model call); with a ``store``, the memory survives a restart.
* :class:`ScwoEmbeddings` — any scwo_np embedder (MiniLM, LSA, a callable) as a
  LangChain ``Embeddings``, optionally cached in an
  :class:`~scwo_np.embed.EmbeddingCache`, for vector stores.

Where LangChain's own ``maximal_marginal_relevance`` picks ``k`` documents
whatever their length, :class:`ScwoCompressor` picks what fits ``budget`` tokens
of ``token_counter``.  The documents returned are new ``Document`` objects
(same ``page_content`` and ``id``) whose metadata adds ``scwo_rank`` (place in
MMR's pick order), ``scwo_gain``, ``scwo_relevance`` (cosine to the question),
``scwo_tokens``, ``scwo_token_counter``, ``scwo_lam`` (the trade-off used: the one given or
the one ``lam="auto"`` chose) and ``scwo_duplicates`` when copies of it (the same text but for white space) were merged into it:
each one's ``id`` and ``metadata`` (its vector left out), so a citation can name every source; the inputs are not modified.

Examples
--------
>>> from langchain_core.documents import Document
>>> docs = [Document(page_content=t) for t in [
...     "Use csv.reader to read a CSV file row by row.",
...     "csv.reader reads a CSV file one row at a time.",
...     "json.load parses a JSON document from a file.",
...     "The sqlite3 module is a DB-API interface for SQLite."]]
>>> out = ScwoCompressor(budget=25).compress_documents(docs, "how do I read a CSV file?")
>>> [d.page_content[:20] for d in out], [d.metadata["scwo_tokens"] for d in out]
(['Use csv.reader to re', 'json.load parses a J'], [12, 12])
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Sequence
from typing import Any, Literal

import numpy as np
from langchain.agents.middleware import AgentMiddleware
from langchain_core.callbacks import Callbacks
from langchain_core.documents import BaseDocumentCompressor, BaseDocumentTransformer, Document
from langchain_core.embeddings import Embeddings
from langchain_core.messages import HumanMessage, ToolMessage
from pydantic import ConfigDict, Field

from ..anchor import MARKER_KEY, CrushStore, read_document
from ..anchor._json import FitResult, fit_json
from ..anchor._records import MIN_BUDGET
from ..dedup import DEDUP_METHODS, deduplicate
from ..shrink import shrink_text
from ..tokens import as_token_counter, count_tokens
from ..validation import (
    check_int,
    check_texts,
    renamed_keywords,
    renamed_property,
)
from ._common import Budget, Lam, OneLineErrors, annotations, choose, copies, stack
from ._lc_hsca import ScwoHSCAMiddleware

__all__ = [
    "ScwoCompressor",
    "ScwoDedupTransformer",
    "ScwoEmbeddings",
    "ScwoHSCAMiddleware",
    "ScwoToolOutputMiddleware",
]


class ScwoCompressor(OneLineErrors, BaseDocumentCompressor):
    """Budgeted MMR over retrieved documents (see the module docs).

    Parameters
    ----------
    budget : int
        Tokens the kept documents may use, in ``token_counter``'s tokens.
    lam : float or "auto", default 0.7
        Relevance/diversity trade-off in [0, 1]; ``"auto"`` chooses it per question
        (:func:`~scwo_np.select.auto_lam`).
    embeddings : langchain_core.embeddings.Embeddings, optional
        The model that embeds documents and question when the documents
        carry no vectors.
    embedder : str or callable, optional
        scwo_np's embedder when there is no ``embeddings`` ("lsa", "minilm",
        or ``texts -> (n, d)``; default "lsa").
    token_counter : str or callable, default "estimate"
        See :func:`scwo_np.tokens.as_token_counter`.
    order : {"pick", "original", "edges"}, default "pick"
        Layout of the result; "edges" is LangChain's ``LongContextReorder``.
    granularity : {"chunk", "sentence"}, default "chunk"
        Keep whole documents, or only their selected sentences under the one budget (each
        kept document's content is then its kept sentences; ``scwo_spans`` says where they
        were). Sentences are embedded by ``embeddings`` (or ``embedder``).
    elision : str, optional
        With sentences: the marker between kept sentences that were not adjacent.
    method : {"auto", "exact", "lazy"}
        The MMR algorithm; all return the same documents.
    embedding_key : str, default "embedding"
        Metadata key of a document's own vector.

    Examples
    --------
    >>> from langchain_core.documents import Document
    >>> docs = [Document(page_content=t) for t in
    ...         ["json.load parses a JSON file", "json.loads parses a JSON string", "csv reads rows"]]
    >>> kept = ScwoCompressor(budget=16).compress_documents(docs, "parse JSON")
    >>> [d.page_content for d in kept]  # the near-copy of the first is left out
    ['json.load parses a JSON file', 'csv reads rows']
    >>> sorted(kept[0].metadata)
    ['scwo_gain', 'scwo_lam', 'scwo_rank', 'scwo_relevance', 'scwo_token_counter', 'scwo_tokens']
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    budget: Budget
    lam: Lam = 0.7
    embeddings: Embeddings | None = Field(default=None, exclude=True)
    embedder: Any = Field(default=None, exclude=True)
    token_counter: Any = "estimate"
    order: Literal["pick", "original", "edges"] = "pick"
    granularity: Literal["chunk", "sentence"] = "chunk"
    elision: str | None = None
    method: Literal["auto", "exact", "lazy"] = "auto"
    embedding_key: str = "embedding"

    def compress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        """The documents that fit the budget, chosen by budgeted MMR, with scwo_* metadata.

        Parameters
        ----------
        documents : sequence of Document
            The retrieved documents (a vector in ``metadata[embedding_key]`` is used when present).
        query : str
            The question.
        callbacks : Callbacks, optional
            LangChain's callbacks (unused).

        Returns
        -------
        list of Document
            The kept documents, copies with ``scwo_*`` metadata, in ``order``.

        Examples
        --------
        >>> from langchain_core.documents import Document
        >>> docs = [Document(page_content=t) for t in
        ...         ["json.load parses a JSON file", "JSON.load parses a json file", "csv reads rows"]]
        >>> [d.page_content for d in ScwoCompressor(budget=16).compress_documents(docs, "parse JSON")]
        ['json.load parses a JSON file', 'csv reads rows']
        """
        docs = _documents(documents)
        emb = self.embeddings
        sel = choose(
            [d.page_content for d in docs], query, self.budget,
            vectors=stack([d.metadata.get(self.embedding_key) for d in docs]), query_vector=None,
            embed_docs=emb.embed_documents if emb is not None else None,
            embed_query=emb.embed_query if emb is not None else None,
            embedder=self.embedder, token_counter=self.token_counter, lam=self.lam, method=self.method,
            order=self.order, granularity=self.granularity, elision=self.elision,
        )  # fmt: skip
        return _annotated(docs, sel, self.embedding_key)

    async def acompress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        """:meth:`compress_documents`, awaited (an async ``Embeddings`` is awaited too).

        Parameters
        ----------
        documents : sequence of Document
            As in :meth:`compress_documents`.
        query : str
            The question.
        callbacks : Callbacks, optional
            LangChain's callbacks (unused).

        Returns
        -------
        list of Document
            As :meth:`compress_documents`.

        Examples
        --------
        >>> from langchain_core.documents import Document
        >>> docs = [Document(page_content=t) for t in
        ...         ["json.load parses a JSON file", "JSON.load parses a json file", "csv reads rows"]]
        >>> import asyncio
        >>> len(asyncio.run(ScwoCompressor(budget=16).acompress_documents(docs, "parse JSON")))
        2
        """
        emb = self.embeddings
        if (
            emb is None
            or self.granularity == "sentence"  # the sentences are embedded by the synchronous model
            or all(self.embedding_key in d.metadata for d in _documents(documents))
        ):
            return self.compress_documents(documents, query, callbacks)
        docs = _documents(documents)
        texts = [d.page_content for d in docs]
        vectors = await emb.aembed_documents(texts) if texts else []
        qv = await emb.aembed_query(query) if texts else None
        sel = choose(
            texts, query, self.budget, vectors=stack(vectors), query_vector=qv, embed_docs=None,
            embed_query=None, embedder=self.embedder, token_counter=self.token_counter, lam=self.lam,
            method=self.method, order=self.order,
        )  # fmt: skip
        return _annotated(docs, sel, self.embedding_key)


class ScwoDedupTransformer(BaseDocumentTransformer):
    """Drop near-duplicate documents, keeping the best of each group (see :func:`scwo_np.deduplicate`).

    Parameters
    ----------
    method : {"jaccard", "sequence", "cosine", "minhash"}, default "jaccard"
        The similarity (the names of ``DEDUP_METHODS``).
    threshold : float, optional
        Similarity at or above which two documents are duplicates (the method's default).
    score_key : str, optional
        Metadata key of a relevance score: the best-scored of a group is kept
        (default: the first).
    embeddings : Embeddings, optional
        For ``method="cosine"`` when the documents carry no ``embedding_key`` vectors.
    embedding_key : str, default "embedding"
        Metadata key of a document's own vector.

    Examples
    --------
    >>> from langchain_core.documents import Document
    >>> docs = [Document(page_content="Read a CSV file with csv.reader"),
    ...         Document(page_content="read a csv file with CSV.reader"),
    ...         Document(page_content="json.load parses JSON.")]
    >>> [d.page_content for d in ScwoDedupTransformer().transform_documents(docs)]
    ['Read a CSV file with csv.reader', 'json.load parses JSON.']
    """

    def __init__(
        self,
        method: str = "jaccard",
        threshold: float | None = None,
        *,
        score_key: str | None = None,
        embeddings: Embeddings | None = None,
        embedding_key: str = "embedding",
    ):
        DEDUP_METHODS.lookup(method)
        self.method = method
        self.threshold = threshold
        self.score_key = score_key
        self.embeddings = embeddings
        self.embedding_key = embedding_key

    def transform_documents(self, documents: Sequence[Document], **kwargs: Any) -> Sequence[Document]:
        """The documents without near-duplicates, in their input order (the same objects).

        Parameters
        ----------
        documents : sequence of Document
            The documents.
        **kwargs
            Unused (LangChain's interface).

        Returns
        -------
        list of Document
            The documents kept, the same objects, in input order.

        Examples
        --------
        >>> from langchain_core.documents import Document
        >>> docs = [Document(page_content=t) for t in
        ...         ["json.load parses a JSON file", "JSON.load parses a json file", "csv reads rows"]]
        >>> [d.page_content for d in ScwoDedupTransformer().transform_documents(docs)]
        ['json.load parses a JSON file', 'csv reads rows']
        """
        docs = _documents(documents)
        if not docs:
            return []
        texts = check_texts([d.page_content for d in docs], name="documents' page_content")
        scores = [d.metadata.get(self.score_key) for d in docs] if self.score_key else None
        vectors = None
        if self.method == "cosine":
            vectors = stack([d.metadata.get(self.embedding_key) for d in docs])
            if vectors is None and self.embeddings is not None:
                vectors = self.embeddings.embed_documents(texts)
            if vectors is None:
                raise ValueError(
                    f"method='cosine' needs vectors: metadata[{self.embedding_key!r}] on every document, "
                    "or embeddings= (a LangChain Embeddings)."
                )
        r = deduplicate(
            texts, embeddings=vectors, method=self.method, threshold=self.threshold, scores=scores
        )
        return [docs[i] for i in r.keep.tolist()]

    async def atransform_documents(self, documents: Sequence[Document], **kwargs: Any) -> Sequence[Document]:
        """:meth:`transform_documents`, awaited.

        Parameters
        ----------
        documents : sequence of Document
            The documents.
        **kwargs
            Unused.

        Returns
        -------
        list of Document
            As :meth:`transform_documents`.

        Examples
        --------
        >>> from langchain_core.documents import Document
        >>> docs = [Document(page_content=t) for t in
        ...         ["json.load parses a JSON file", "JSON.load parses a json file", "csv reads rows"]]
        >>> import asyncio
        >>> len(asyncio.run(ScwoDedupTransformer().atransform_documents(docs)))
        2
        """
        return self.transform_documents(documents, **kwargs)


class ScwoEmbeddings(Embeddings):
    """A scwo_np embedder as a LangChain ``Embeddings``, optionally behind an :class:`~scwo_np.embed.EmbeddingCache`.

    For LangChain vector stores and retrievers: ``ScwoEmbeddings(MiniLMEmbedder(),
    cache="embeddings.sqlite")`` embeds each distinct text once, ever.

    An LSA space is fitted on a corpus: ``"lsa"`` fits it on the texts of the first
    :meth:`embed_documents` call (a vector store's ``from_documents`` or first
    ``add_documents``) and keeps it, so every later document and question is embedded in that
    one space (words the first texts lack count for nothing); :meth:`embed_query` before any
    documents is an error that says so.  To fit it on a corpus of your choice, pass
    ``LSAEmbedder(corpus)``.

    Parameters
    ----------
    embedder : str or callable
        ``"lsa"``, ``"minilm"`` or a callable ``texts -> (n, d) array`` (see
        :func:`~scwo_np.embed.as_embedder`).
    cache : EmbeddingCache or path, optional
        Where vectors are kept between calls and runs.

    Examples
    --------
    >>> from scwo_np.embed import LSAEmbedder
    >>> corpus = ["csv.reader reads rows", "json.load parses JSON", "sqlite3 opens a database"]
    >>> emb = ScwoEmbeddings(LSAEmbedder(corpus, dim=2))
    >>> len(emb.embed_documents(corpus)), len(emb.embed_query("read csv rows"))
    (3, 2)
    >>> lsa = ScwoEmbeddings("lsa")  # its space: the first documents embedded
    >>> len(lsa.embed_documents(corpus)) == 3, lsa.embedder.name.startswith("lsa-")
    (True, True)
    """

    def __init__(self, embedder: Any, *, cache: Any = None):
        from ..embed import EMBEDDERS, EmbeddingCache, as_embedder

        # a cache given here replaces the user's default one (one cache, not two)
        self._wrap = False if cache is not None else None
        self._fit = threading.Lock()
        if isinstance(embedder, str):
            EMBEDDERS.lookup(embedder)  # an unknown name fails here, naming the choices
        if embedder == "lsa":
            self.embedder = None  # fitted on the first embed_documents call's texts
        else:
            self.embedder = as_embedder(embedder, cache=self._wrap)
        self.cache = EmbeddingCache(cache) if isinstance(cache, str | os.PathLike) else cache

    def _embed(self, texts: list[str]) -> list[list[float]]:
        from ..embed import embed_texts

        if self.embedder is None:
            raise ValueError(
                "ScwoEmbeddings('lsa') has no LSA space yet: it is fitted on the texts of the first "
                "embed_documents call. Embed the documents first (a vector store's from_documents or "
                "add_documents does), or pass ScwoEmbeddings(LSAEmbedder(corpus)) fitted on your corpus."
            )
        V = (
            self.cache.embed(self.embedder, texts)
            if self.cache is not None
            else embed_texts(self.embedder, texts)
        )
        return V.tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One vector per text (from the cache where it has them).

        Parameters
        ----------
        texts : list of str
            The texts.

        Returns
        -------
        list of list of float
            One vector per text.

        Examples
        --------
        >>> from scwo_np.embed import LSAEmbedder
        >>> corpus = ["csv reads rows", "json parses text", "sqlite stores rows"]
        >>> len(ScwoEmbeddings(LSAEmbedder(corpus, dim=2)).embed_documents(corpus))
        3
        """
        texts = list(texts)
        if not texts:
            return []
        if self.embedder is None:
            self._fit_lsa(texts)
        return self._embed(texts)

    def _fit_lsa(self, texts: list[str]) -> None:
        """``"lsa"``: the space fitted once, on these texts (the first documents embedded)."""
        from ..embed import as_embedder

        with self._fit:
            if self.embedder is not None:
                return
            try:
                self.embedder = as_embedder("lsa", texts, cache=self._wrap)
            except ValueError as exc:
                raise ValueError(
                    f"ScwoEmbeddings('lsa') fits its LSA space on the first documents embedded: {exc} Embed "
                    "at least 2 texts with words first, or pass ScwoEmbeddings(LSAEmbedder(corpus))."
                ) from None

    def embed_query(self, text: str) -> list[float]:
        """The question's vector (embedded like a document: scwo_np's embedders are symmetric).

        Parameters
        ----------
        text : str
            The question (not empty).

        Returns
        -------
        list of float
            Its vector.

        Examples
        --------
        >>> from scwo_np.embed import LSAEmbedder
        >>> corpus = ["csv reads rows", "json parses text", "sqlite stores rows"]
        >>> len(ScwoEmbeddings(LSAEmbedder(corpus, dim=2)).embed_query("read rows"))
        2
        """
        if not isinstance(text, str) or not text.strip():
            raise ValueError("text is empty; pass the question as text.")
        return self._embed([text])[0]


class ScwoToolOutputMiddleware(AgentMiddleware):
    """Hold every tool result to ``budget`` tokens before the model reads it: JSON crushed, text by its shape.

    A tool result whose text is JSON (an array, an object holding one, JSON Lines) and
    counts more than ``budget`` tokens is cut to at most ``budget``: whole if it fits, its
    lossless columnar form if that fits, else the most items that fit, errors and anomalies
    first, every kept item with every field; the last human message is the query (items
    that match it are kept first).  The message's content is then that JSON itself, compact,
    with the omission marker inside it (which positions were dropped, and the ``key``), and
    within ``budget`` tokens of ``token_counter``, the marker included.  What the crush did
    (kept, of, key, form, tokens, kept_ranges) goes in ``response_metadata["scwo"]``, which
    the model does not read.  The dropped items go to ``store``
    (``CrushStore.retrieve(key)`` gives them back).  A result whose content is a list of
    text blocks is read as their joined text.  JSON whose text around the array is itself over
    ``budget``, or whose every item is, has its collections crushed in turn
    (``scwo_np.anchor.crush_json`` does the same); JSON that does not fit even with every
    collection crushed to its marker becomes that marker alone, the whole result stored under its
    key (``form`` ``"marker"``): never an exception in the middle of the agent's run, and never
    JSON cut as text.

    A result over ``budget`` that is not JSON goes through :func:`scwo_np.shrink.shrink_text`, as
    ``scwo mcp proxy`` does with an MCP server's results: a unified diff by whole hunks, repeated
    records (log lines, ``git log`` entries, table rows) by time, errors and anomalies kept, those
    that match the last human message first, prose by the sentences most relevant to it; what is
    left out is stored under the key the text names, and ``response_metadata["scwo"]`` says what
    was done (``form``, ``kept`` of ``of`` units, ``what`` they are).  Results within ``budget``,
    and content that is not text (an image), pass unchanged.

    Parameters
    ----------
    budget : int
        The most tokens a tool result may take; at least 64 (a marker must fit).
    token_counter : name, TokenCounter or callable ``str -> int``, optional
        Counts them (default ``"estimate"``).
    store : CrushStore or path, optional
        Where dropped items go (default: ``crush_store.sqlite`` in the user cache folder).

    Examples
    --------
    >>> import json, tempfile, os
    >>> from langchain_core.messages import ToolMessage
    >>> mw = ScwoToolOutputMiddleware(budget=120, store=os.path.join(tempfile.mkdtemp(), "s.sqlite"))
    >>> rows = [{"id": i, "level": "ERROR" if i == 33 else "INFO"} for i in range(200)]
    >>> msg = mw.shrink(ToolMessage(content=json.dumps(rows), tool_call_id="1"), query="")
    >>> out = json.loads(msg.content)
    >>> {"id": 33, "level": "ERROR"} in out, len(msg.content) <= 4 * 120, msg.response_metadata["scwo"]["of"]
    (True, True, 200)
    """

    @renamed_keywords(max_tokens="budget")
    def __init__(self, budget: int | None = None, *, token_counter: object = None, store: Any = None) -> None:
        super().__init__()
        if budget is None:
            raise TypeError("budget is required: the most tokens a tool result may take.")
        self.budget = check_int(budget, name="budget", low=1)
        if self.budget < MIN_BUDGET:
            raise ValueError(
                f"budget must be at least {MIN_BUDGET} tokens: a crushed result's marker, which says what was "
                f"left out and how to get it back, must fit; got {budget}."
            )
        self.token_counter = as_token_counter(token_counter)
        self.store = store if isinstance(store, CrushStore) else CrushStore(store)

    max_tokens = renamed_property("max_tokens", "budget")
    counter = renamed_property("counter", "token_counter")

    def shrink(self, message: Any, query: str = "") -> Any:
        """``message`` with its content within ``budget`` tokens: JSON crushed, other text by its shape.

        Parameters
        ----------
        message : ToolMessage
            A tool's result.
        query : str
            The user's request (its terms keep matching items).

        Returns
        -------
        ToolMessage
            A new message (the input is not modified), or ``message`` itself.

        Examples
        --------
        >>> import json, tempfile, os
        >>> from langchain_core.messages import ToolMessage
        >>> mw = ScwoToolOutputMiddleware(64, store=os.path.join(tempfile.mkdtemp(), "s.sqlite"))
        >>> blocks = [{"type": "text", "text": json.dumps([{"n": i} for i in range(100)])}]
        >>> msg = mw.shrink(ToolMessage(content=blocks, tool_call_id="1"))
        >>> isinstance(msg.content, str), len(msg.content) <= 4 * 64
        (True, True)
        """
        if not isinstance(message, ToolMessage):
            return message
        text = _text_content(message.content)
        if text is None or int(count_tokens([text], self.token_counter)[0]) <= self.budget:
            return message
        try:
            doc = read_document(text)
        except ValueError:  # not JSON: a log, a diff, prose ... by its shape
            return self._shrink_text(message, text, query)
        try:
            res = fit_json(doc, self.budget, token_counter=self.token_counter, store=self.store, query=query)
        except ValueError as exc:  # not JSON within the budget even with every collection as its marker
            whole = doc.form in ("array", "object", "mapping")  # one item: nothing around it lost
            res = self._marker_alone(
                [doc.render(doc.pieces)] if whole else doc.values(),
                "the whole result" if whole else "every value",
                exc,
            )
        scwo = {"kept": len(res.kept), "of": res.n, "key": res.key, "form": res.form, "tokens": res.tokens,
                "budget": self.budget, "kept_ranges": _ranges(res.kept)}  # fmt: skip
        meta = {**message.response_metadata, "scwo": scwo}
        return message.model_copy(update={"content": res.text, "response_metadata": meta})

    def _shrink_text(self, message: Any, text: str, query: str) -> Any:
        """``message`` with its text (not JSON) within ``budget`` by its shape (``shrink_text``)."""
        name = message.name if isinstance(message.name, str) else ""
        try:
            s = shrink_text(  # the user's request is the records' hint too (a log's lines about it first)
                text,
                self.budget,
                query=query or name,
                hint=query,
                token_counter=self.token_counter,
                store=self.store,
            )
        except ValueError as exc:  # a Python literal that does not fit as JSON: stored whole
            res = self._marker_alone([text], "the whole result", exc)
            scwo = {"kept": 0, "of": 1, "key": res.key, "form": res.form, "tokens": res.tokens}
        else:
            scwo = {
                "kept": s.kept,
                "of": s.of,
                "key": s.key,
                "form": s.form,
                "tokens": s.tokens,
                "what": s.what,
            }
            res = s
        meta = {**message.response_metadata, "scwo": {**scwo, "budget": self.budget}}
        return message.model_copy(update={"content": res.text, "response_metadata": meta})

    def _marker_alone(self, values: list, what: str, exc: ValueError) -> FitResult:
        """``values`` stored, and in their place a marker that says so and what budget holds the
        JSON (cut as text, lines of different records were spliced together: not JSON, and misleading)."""
        n = len(values)
        key = self.store.put(values, kept=[])
        need = getattr(exc, "need", None)
        mark = {"count": n, "of": n, "ranges": [[0, n - 1]] if n else [], "key": key,
                "note": f"{what} stored under key: over {self.budget} tokens as JSON"
                + (f" (it needs {need})" if need else "")}  # fmt: skip
        text = json.dumps({MARKER_KEY: mark}, ensure_ascii=False, separators=(",", ":"))
        tokens = int(count_tokens([text], self.token_counter)[0])
        if tokens > self.budget:  # a counter of very long tokens: the count alone
            text = json.dumps({MARKER_KEY: {"count": n, "of": n, "key": key}}, separators=(",", ":"))
            tokens = int(count_tokens([text], self.token_counter)[0])
        return FitResult(text, tokens, np.empty(0, np.int64), n, key, "marker")

    @staticmethod
    def _query(request: Any) -> str:
        messages = (request.state or {}).get("messages", []) if isinstance(request.state, dict) else []
        for m in reversed(messages):
            if isinstance(m, HumanMessage) and isinstance(m.content, str):
                return m.content
        return ""

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        """Run the tool, then :meth:`shrink` its result.

        Parameters
        ----------
        request : ToolCallRequest
            The tool call.
        handler : callable
            Runs it.

        Returns
        -------
        ToolMessage or Command
            The tool's result, within ``budget`` tokens.
        """
        return self.shrink(handler(request), self._query(request))

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        """As :meth:`wrap_tool_call`, for agents run asynchronously.

        Parameters
        ----------
        request : ToolCallRequest
            The tool call.
        handler : callable
            Runs it (awaited).

        Returns
        -------
        ToolMessage or Command
            The tool's result, within ``budget`` tokens.
        """
        return self.shrink(await handler(request), self._query(request))


def _text_content(content: Any) -> str | None:
    """A message content's text: the string, or a list of strings and text blocks joined; else None."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content:
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif (
                isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
            ):
                parts.append(block["text"])
            else:
                return None  # an image, a tool call ...: not a text result
        return "".join(parts)
    return None


def _ranges(positions: Any) -> list[list[int]]:
    """Sorted positions as inclusive ``[first, last]`` runs (as the marker writes its dropped ranges)."""
    out: list[list[int]] = []
    for p in sorted(int(x) for x in positions):
        if out and out[-1][1] == p - 1:
            out[-1][1] = p
        else:
            out.append([p, p])
    return out


def _annotated(docs: list[Document], sel, embedding_key: str = "embedding") -> list[Document]:
    """New documents for the selected ones, in ``sel``'s order, with the scwo_* metadata (and, with
    sentences, only the kept sentences as their content); the copies merged into one are named in its
    ``scwo_duplicates`` (their ids and metadata, their vectors left out)."""
    sentences = sel.granularity == "sentence"
    kept = sel.indices.tolist()
    merged = [
        [{"id": docs[j].id, "metadata": {k: v for k, v in docs[j].metadata.items() if k != embedding_key}}
         for j in js]
        for js in copies([d.page_content for d in docs], kept)
    ]  # fmt: skip
    return [
        Document(
            page_content=sel.texts[k] if sentences else docs[i].page_content,
            metadata={**docs[i].metadata, **a},
            id=docs[i].id,
        )  # fmt: skip
        for k, (i, a) in enumerate(zip(kept, annotations(sel, merged), strict=True))
    ]


def _documents(documents: object) -> list[Document]:
    if isinstance(documents, Document | str) or not isinstance(documents, Iterable):
        raise TypeError("documents must be a list of Document; wrap a single one in a list.")
    docs = list(documents)  # type: ignore[call-overload]
    for i, d in enumerate(docs):
        if not isinstance(d, Document):
            raise TypeError(f"documents[{i}] is {type(d).__name__}, not a langchain Document.")
    return docs
