"""What both framework adapters share: vectors from wherever they are, then :func:`select_texts`."""

from __future__ import annotations

import dataclasses
import difflib
import itertools
import warnings
from collections.abc import Callable, Sequence
from functools import partial
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BeforeValidator, ValidationError

from ..embed import as_embedder, embedder_name
from ..select import TextSelection, select_texts
from ..select._units import _said  # the one test of copies, select_texts' own
from ..validation import check_budget, check_lam

#: Pydantic field types checked by scwo_np's own validation, before pydantic coerces "10" or True.
Budget = Annotated[int, BeforeValidator(check_budget)]
Lam = Annotated[float | Literal["auto"], BeforeValidator(partial(check_lam, auto=True))]


#: Other libraries' names for our arguments: a keyword spelled so is named with ours.
RENAMED = {"counter": "token_counter", "tokenizer": "token_counter", "max_tokens": "budget",
           "token_budget": "budget", "top_k": "budget", "lambda_mult": "lam", "embedding": "embeddings"}  # fmt: skip


class OneLineErrors:
    """Mixin for the pydantic components: a bad argument is one line naming it, as everywhere in
    scwo_np (pydantic's ValidationError names the field on a line of its own, then a link), and a
    keyword that is not an argument is an error naming it (pydantic ignores one: a misspelled
    ``lamda=`` or another library's ``max_tokens=`` was silently a default)."""

    def __init__(self, **data: Any) -> None:
        fields = [f for f in type(self).model_fields if not f.startswith("_")]  # type: ignore[attr-defined]
        unknown = [k for k in data if k not in fields]
        if unknown:
            named = []
            for k in unknown:
                near = RENAMED.get(k) or next(iter(difflib.get_close_matches(k, fields, n=1)), None)
                named.append(f"{k!r}" + (f" (use {near!r})" if near in fields else ""))
            raise TypeError(
                f"{type(self).__name__}: unexpected keyword argument {', '.join(named)}; "
                f"its arguments are {', '.join(fields)}."
            )
        try:
            super().__init__(**data)
        except ValidationError as exc:
            parts = []
            for e in exc.errors():
                msg = str(e.get("msg", "")).removeprefix("Value error, ")
                field = ".".join(str(x) for x in e.get("loc", ()))
                parts.append(msg if field and msg.startswith(field) else f"{field}: {msg}" if field else msg)
            error = (
                TypeError if all(e.get("type", "").endswith("_type") for e in exc.errors()) else ValueError
            )
            raise error(f"{type(self).__name__}: " + "; ".join(parts)) from None


#: Metadata keys the adapters add to what they return.
KEYS = ("scwo_rank", "scwo_gain", "scwo_relevance", "scwo_tokens", "scwo_token_counter", "scwo_lam",
        "scwo_spans", "scwo_duplicates")  # fmt: skip


def stack(vectors: Sequence[Any]) -> np.ndarray | None:
    """The items' own vectors as one float array, or None unless every item has one."""
    if not vectors or any(v is None for v in vectors):
        return None
    d = len(vectors[0])
    if any(len(v) != d for v in vectors):
        raise ValueError("the documents' embeddings have different lengths; embed them with one model.")
    if isinstance(vectors[0], np.ndarray):
        return np.asarray(vectors, dtype=np.float64)
    try:  # lists of floats, as the frameworks keep them: one pass, ~15% faster than np.asarray
        flat = np.fromiter(itertools.chain.from_iterable(vectors), dtype=np.float64, count=len(vectors) * d)
    except (TypeError, ValueError):
        raise TypeError("the documents' embeddings must be lists of numbers.") from None
    return flat.reshape(len(vectors), d)


class FrameworkModel:
    """A framework's embedding model as scwo_np's embedder: texts by ``embed_docs``, the question by
    ``embed_query`` (or the vector the framework already holds for it), so :func:`select_texts` gets
    the question as text, for its words, and its vector from the framework's query model."""

    def __init__(self, embed_docs: Callable | None, embed_query: Callable | None, query_vector: Any) -> None:
        self.embed_docs, self.query, self.vector = embed_docs, embed_query, query_vector
        self.name = embedder_name(embed_docs) if embed_docs is not None else "given"

    def __call__(self, texts: list[str]) -> Any:
        if self.embed_docs is None:  # only the question is ever embedded when the vectors are given
            raise ValueError("the documents carry no embeddings and no embedding model was given.")
        return self.embed_docs(list(texts))

    def embed_query(self, text: str) -> Any:
        if self.vector is not None:
            return self.vector
        if self.query is None:
            raise ValueError("the question has no embedding and no embedding model was given.")
        return self.query(text)


def choose(
    texts: Sequence[str],
    query: str,
    budget: int,
    *,
    vectors: np.ndarray | None,
    query_vector: Any,
    embed_docs: Callable | None,
    embed_query: Callable | None,
    embedder: Any,
    token_counter: Any,
    lam: float,
    method: str,
    order: str,
    granularity: str = "chunk",
    elision: str | None = None,
    strategy: str = "mmr",
    strategy_options: dict[str, Any] | None = None,
    costs: np.ndarray | None = None,
    cache: Any = None,
) -> TextSelection:
    """Select from ``texts``; vectors come from the items, else ``embed_docs``, else ``embedder``.

    ``embed_docs``/``embed_query`` are a framework's embedding model's two
    methods (LangChain's ``embed_documents``/``embed_query``, LlamaIndex's
    ``get_text_embedding_batch``/``get_query_embedding``); ``embedder`` is
    scwo_np's (a name or a callable; default LSA over the texts and query).  The
    question goes to :func:`select_texts` as text whenever it has words (its words
    count beside the cosine), its vector made by the framework's query model.  ``costs``
    (whole texts only) are each item's tokens as the model reads it (its metadata too);
    ``cache`` goes to :func:`select_texts`.
    """
    texts = list(texts)  # checked by select_texts
    if not isinstance(query, str):
        raise TypeError(f"query must be the question as a str; got {type(query).__name__}.")
    empty = [i for i, t in enumerate(texts) if isinstance(t, str) and not t.strip()]
    if empty:  # a text splitter's empty chunk says nothing: left out, with a warning, not a failed call
        warn_empty(empty, stacklevel=4)
        keep = np.asarray([i for i in range(len(texts)) if i not in set(empty)], dtype=np.int64)
        sel = choose(
            [texts[i] for i in keep.tolist()], query, budget, vectors=None if vectors is None else vectors[keep],
            query_vector=query_vector, embed_docs=embed_docs, embed_query=embed_query, embedder=embedder,
            token_counter=token_counter, lam=lam, method=method, order=order, granularity=granularity,
            elision=elision, strategy=strategy, strategy_options=strategy_options,
            costs=None if costs is None else np.asarray(costs)[keep], cache=cache,
        )  # fmt: skip
        return dataclasses.replace(sel, indices=keep[sel.indices])
    if not texts:
        return select_texts([], query or "-", budget, token_counter=token_counter, lam=lam, method=method)
    if not query.strip() and query_vector is None:
        raise ValueError("query is empty; pass the question as text.")
    if query_vector is not None:  # the framework's vector for the question, checked and named as such
        query_vector = _question_vector(query_vector, vectors)
    framework = embed_docs is not None or embed_query is not None or query_vector is not None
    model = FrameworkModel(embed_docs, embed_query, query_vector) if framework else None
    # The question as text when it has words, else the framework's vector for it.
    q = query if query.strip() else np.asarray(query_vector, dtype=np.float64)
    common = dict(token_counter=token_counter, lam=lam, method=method, order=order, strategy=strategy,
                  strategy_options=strategy_options, cache=cache)  # fmt: skip
    if granularity == "sentence":  # every sentence is embedded: by the framework's model when there is one
        own = model if embed_docs is not None else embedder
        if embed_docs is None and vectors is not None and query_vector is not None and embedder is not None:
            # the items' vectors, scwo_np's embedder declared their model: the question's own vector too
            own = FrameworkModel(as_embedder(embedder, [*texts, query]), None, query_vector)
        return select_texts(texts, q, budget, embedder=own, embeddings=vectors, granularity="sentence",
                            elision=elision, **common)  # fmt: skip
    if vectors is None and embed_docs is not None:
        vectors = np.asarray(embed_docs(list(texts)), dtype=np.float64)
    if vectors is not None:
        if model is None and embedder is None:
            raise ValueError(
                "the documents carry embeddings but the query has none: pass the embedding model that "
                "made them (embeddings=/embed_model=) so the query can be embedded the same way."
            )
        return select_texts(texts, q, budget, embeddings=vectors, embedder=model or embedder, costs=costs,
                            **common)  # fmt: skip
    return select_texts(texts, query, budget, embedder=embedder, costs=costs, **common)


def warn_empty(positions: Sequence[int], *, stacklevel: int) -> None:
    """The one warning for documents with no text, left out: how many and their positions."""
    warnings.warn(
        f"{_n(len(positions), 'document')} with no text left out (positions "
        f"{', '.join(map(str, positions[:10]))}{', ...' if len(positions) > 10 else ''}).",
        stacklevel=stacklevel,
    )


def _n(k: int, word: str) -> str:
    return f"{k} {word}{'' if k == 1 else 's'}"


def _question_vector(vector: Any, vectors: np.ndarray | None) -> np.ndarray:
    """The framework's vector for the question as a float array: 1-D, finite, non-zero, and as long
    as the documents' vectors when they have some; a clear error naming it otherwise."""
    try:
        v = np.asarray(vector, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("the question's embedding must be a list of numbers.") from None
    if v.ndim != 1 or not v.size:
        raise ValueError(f"the question's embedding must be one vector; got shape {v.shape}.")
    if not np.isfinite(v).all():
        raise ValueError("the question's embedding contains NaN or inf.")
    if not v.any():
        raise ValueError("the question's embedding is the zero vector; cosine similarity to it is undefined.")
    if vectors is not None and v.shape[0] != vectors.shape[1]:
        raise ValueError(
            f"the question's embedding has dimension {v.shape[0]} but the documents' have {vectors.shape[1]}; "
            "embed both with one model."
        )
    return v


def annotations(sel: TextSelection, merged: Sequence[list[dict]] | None = None) -> list[dict]:
    """The metadata each selected item gets, in ``sel``'s order: ``merged`` (from :func:`copies`)
    gives each the items that were copies of it (``scwo_duplicates``, only where there are some)."""
    out = [
        {
            "scwo_rank": int(r),
            "scwo_gain": float(g),
            "scwo_relevance": float(rel),
            "scwo_tokens": int(t),
            "scwo_token_counter": sel.token_counter,
            "scwo_lam": float(sel.lam),
        }
        for r, g, rel, t in zip(sel.ranks, sel.gains, sel.relevance, sel.tokens, strict=True)
    ]
    if sel.granularity == "sentence":  # where the kept sentences are in the original text
        for a, spans in zip(out, sel.spans, strict=True):
            a["scwo_spans"] = [list(x) for x in spans]
    for a, entries in zip(out, merged or [[]] * len(out), strict=True):
        if entries:
            a["scwo_duplicates"] = entries
    return out


def copies(texts: Sequence[str], kept: Sequence[int]) -> list[list[int]]:
    """For each kept text (in ``kept``'s order), the positions of the texts that are copies of it
    (the same but for white space, as :func:`~scwo_np.select._units.first_copies` tells them) and not
    kept themselves: :func:`select_texts` says a text once, so they were merged into it, and the
    components say which (their ids and metadata in ``scwo_duplicates``, for citations)."""
    keep = set(kept)
    by: dict[str, list[int]] = {}
    for j, t in enumerate(texts):
        if isinstance(t, str) and t.strip() and j not in keep:
            by.setdefault(_said(t), []).append(j)
    return [by.get(_said(texts[i]), []) for i in kept]
