"""Selection from text: embed, count tokens, run :func:`~scwo_np.mmr_select`, lay the picks out.

:func:`select_texts` is the path for a user with a list of retrieved texts and a
question.  It is :func:`~scwo_np.mmr_select` on the texts' embeddings and token
counts, nothing more: given the same vectors and costs, the same indices in the
same pick order (a test proves it), then laid out by ``order``:

* ``"pick"`` — MMR's pick order;
* ``"original"`` — the order of the input;
* ``"edges"`` — most relevant (cosine to the query) at the two ends, least
  relevant in the middle: "lost in the middle" (Liu et al. 2023) shows models
  use the start and end of a long context best.  Exactly the layout of
  LangChain's ``LongContextReorder`` applied to the picks sorted by relevance
  (ties to the earlier pick): the two most relevant take the two ends, the
  next two the places just inside them, and so on inwards.

The embedder defaults to :class:`~scwo_np.embed.LSAEmbedder` fitted on the texts
and the query (needs only scikit-learn); pass ``"minilm"``
(:class:`~scwo_np.embed.MiniLMEmbedder`) or any callable ``texts -> (n, d)`` for better
vectors.  MiniLM's vectors are kept in the user's embedding cache by default, so nothing is
embedded twice (``cache=False`` opts out; an :class:`~scwo_np.embed.EmbeddingCache` or a path
caches any embedder).  Token counts come from ``token_counter`` (default: the
estimate, see :mod:`scwo_np.tokens`), and the budget is in its tokens.
"""

from __future__ import annotations

import inspect
import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import _dot
from .._lexical import lexical_relevance, question_share
from .._registry import Registry
from ..embed import EmbeddingCache, as_embedder, embed_pieces, embed_query, embed_texts, embedder_name
from ..tokens import as_token_counter, count_tokens
from ..validation import (
    MAX_COST,
    check_budget,
    check_costs,
    check_embeddings,
    check_lam,
    check_query,
    check_row_norms,
    check_text,
    check_texts,
    check_unit_interval,
)
from ._auto import _rule
from ._front import STRATEGIES, select_by_strategy
from ._mmr import MMR_METHODS, mmr_select, mmr_with_relevance
from ._units import (
    GRANULARITIES,
    LENGTH_COST,
    LEXICAL,
    NEIGHBOUR,
    PIECES,
    SHORT_COST,
    Units,
    assemble,
    candidate_units,
    first_copies,
    neighbour_lift,
    piece_match,
    short_units,
    spread_over_texts,
)

__all__ = ["GRANULARITIES", "ORDERS", "TextSelection", "arrange", "select_texts"]

#: How many times selection runs again, with the room lowered by the overflow, when the joined
#: context, counted again, is over the budget (a counter whose counts do not add up:
#: ``len(text) // 4`` rounds each piece down, BPE merges across a join).  The first of these runs
#: that fits is kept if it fills more than MMR's picks for the whole budget cut to fit (the last
#: pick dropped until the context fits), which are kept otherwise (see :func:`_fit`).  On the six
#: tuning sources of issue 43 (``len(text) // 4``, sentences, 200/400/800 tokens) the context held
#: 99.3% of the budget where the cut picks held 96.3%.  Also how many times it runs again with
#: the room raised, when the context is counted at less than MMR paid for its pieces (the
#: estimate rounds each piece up).
REFITS = 4

#: Registry of layouts of the selected texts (``order=``): name -> what it does.
ORDERS: Registry = Registry(
    "order",
    {
        "pick": "in pick order (most relevant first)",
        "original": "in the order of the input",
        "edges": "the strongest picks at both ends, the weakest in the middle (lost in the middle)",
    },
)


@dataclass(frozen=True)
class TextSelection:
    """What :func:`select_texts` chose, in the requested ``order``.

    Made by :func:`select_texts`, not by hand; its fields are:

    Parameters
    ----------
    indices : ndarray of int64
        Positions in the input ``texts``.
    texts : list of str
        The selected texts, in the same order.
    tokens : ndarray of int64
        Each one's token count, by the ``token_counter``.
    gains : ndarray of float64
        Each one's score when it was picked (MMR's, or the ``strategy``'s).
    ranks : ndarray of int64
        Each one's place in MMR's pick order (0 = picked first).
    relevance : ndarray of float64
        Each one's relevance to the query: its cosine similarity, plus ``lexical`` times its BM25
        against the question's words over the best text's when the question is text and
        ``granularity="chunk"``; with sentences, its text's cosine.
    budget : int
        The token budget it was selected under.
    token_counter, embedder : str
        Names of the counter that measured the budget and of the embedder.
    order : str
        The layout: ``"pick"``, ``"original"`` or ``"edges"``.
    spans : tuple of tuple of (int, int)
        For each selected text, the character spans of the input text it keeps: the whole text
        with ``granularity="chunk"``, the kept sentences with ``"sentence"`` (to cite or
        highlight them).
    granularity : str
        ``"chunk"`` or ``"sentence"``.
    lam : float
        The trade-off the selection used: the one given, or the one ``lam="auto"`` chose.
    context : str
        What to put into the prompt: ``texts`` joined by ``separator``, in this order.  Its
        tokens, separators (and, with sentences, elision marks) included, are never more than
        ``budget`` by ``token_counter``.
    separator : str
        What joins the texts in ``context`` (``"\\n\\n"`` by default).
    context_tokens : int
        Tokens of ``context`` by ``token_counter`` (with ``costs`` given: their sum plus the
        separators' tokens).

    Examples
    --------
    >>> texts = ["JSON is a data format.", "The json module parses JSON.", "Cats sleep a lot."]
    >>> sel = select_texts(texts, "parse JSON", budget=14)
    >>> sel.indices, sel.total_tokens <= 14, sel.token_counter
    (array([1, 0]), True, 'estimate')
    >>> sel.context
    'The json module parses JSON.\\n\\nJSON is a data format.'
    >>> sel.context_tokens <= sel.budget
    True
    """

    indices: NDArray[np.int64]
    texts: list[str]
    tokens: NDArray[np.int64]
    gains: NDArray[np.float64]
    ranks: NDArray[np.int64]
    relevance: NDArray[np.float64]
    budget: int
    token_counter: str
    embedder: str
    order: str
    spans: tuple = ()
    granularity: str = "chunk"
    lam: float = float("nan")
    context: str = ""
    separator: str = "\n\n"
    context_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Tokens of the selected texts, each counted alone (``context_tokens`` counts the joined context)."""
        return int(self.tokens.sum())

    def __len__(self) -> int:
        return len(self.texts)


def arrange(picks: ArrayLike, relevance: ArrayLike, order: str = "pick") -> NDArray[np.int64]:
    """Positions into ``picks`` that lay them out in ``order`` (see the module docs).

    ``relevance[k]`` is pick ``k``'s similarity to the query; ties go to the
    earlier pick.

    Parameters
    ----------
    picks : array_like of int
        The picked indices, in pick order.
    relevance : array_like of float
        Each pick's similarity to the query.
    order : {"pick", "original", "edges"}
        MMR's order, input order, or most relevant at both ends.

    Returns
    -------
    numpy.ndarray
        int64 positions into ``picks``, in the requested layout.

    Examples
    --------
    >>> arrange([7, 2, 5, 0], [0.9, 0.8, 0.7, 0.6], "original")
    array([3, 1, 2, 0])
    >>> arrange([7, 2, 5, 0, 9], [0.9, 0.8, 0.7, 0.6, 0.5], "edges")
    array([0, 2, 4, 3, 1])
    >>> arrange([7, 2, 5, 0], [0.9, 0.8, 0.7, 0.6], "edges")
    array([1, 3, 2, 0])
    """
    ORDERS.lookup(order)
    p = np.asarray(picks, dtype=np.int64)
    n = len(p)
    if order == "pick":
        return np.arange(n, dtype=np.int64)
    if order == "original":
        return np.argsort(p, kind="stable").astype(np.int64)
    by_rel = np.lexsort((np.arange(n), -np.asarray(relevance, dtype=np.float64)))
    # LongContextReorder's loop (langchain_community), on the picks least relevant first:
    # even steps go to the front, odd steps to the back.
    out: list[int] = []
    for k, v in enumerate(by_rel[::-1].tolist()):
        if k % 2:
            out.append(v)
        else:
            out.insert(0, v)
    return np.array(out, dtype=np.int64)


def _nothing(
    budget: int, counter_name: str, embedder, order: str, granularity: str, separator: str
) -> TextSelection:
    """The selection from no texts."""
    e = np.empty(0, dtype=np.int64)
    name = "none" if embedder is None else embedder if isinstance(embedder, str) else embedder_name(embedder)
    return TextSelection(
        e, [], e, np.empty(0), e, np.empty(0), budget, counter_name, name, order, (), granularity,
        separator=separator,
    )  # fmt: skip


def _embedder_for(embedder, texts: list[str], query, cache) -> Callable:
    corpus = texts + [query] if isinstance(query, str) else texts
    return as_embedder("lsa" if embedder is None else embedder, corpus, cache=cache)


#: Arguments of a strategy that select_texts gives itself (the rest are ``strategy_options``).
_OWN = {"embeddings", "query", "costs", "budget", "return_gains", "weights"}


def check_strategy_options(strategy: str, options: dict[str, Any]) -> None:
    """A clear error for ``strategy_options`` that ``strategy`` does not take (by its signature)."""
    if not options:
        return
    if strategy == "mmr":
        raise ValueError(
            "strategy_options are for the other strategies; MMR's options are select_texts' own."
        )
    takes = [p for p in inspect.signature(STRATEGIES[strategy]).parameters if p not in _OWN]
    wrong = [k for k in options if k not in takes]
    if wrong:
        raise ValueError(
            f"strategy_options: strategy {strategy!r} takes {', '.join(map(repr, takes))}; got {wrong[0]!r}."
        )


def _open_cache(cache):
    """``(store, own)``: an EmbeddingCache for a path (closed by the caller), else ``cache`` itself."""
    if isinstance(cache, str | os.PathLike):
        return EmbeddingCache(cache), True
    if cache is not None and not isinstance(cache, EmbeddingCache | bool):
        raise TypeError(
            "cache must be None (the user's embedding cache, for embedders cached by default), False (no "
            f"cache), an EmbeddingCache or the path of its file; got {type(cache).__name__}."
        )
    return cache, False


def select_texts(
    texts: Sequence[str],
    query: str | ArrayLike,
    budget: int,
    *,
    embedder: Callable | str | None = None,
    token_counter: object = None,
    lam: float | str = 0.7,
    method: str = "auto",
    order: str = "pick",
    cache: EmbeddingCache | str | os.PathLike | bool | None = None,
    embeddings: ArrayLike | None = None,
    costs: ArrayLike | None = None,
    granularity: str = "chunk",
    sentence_weight: float = 0.5,
    elision: str | None = None,
    separator: str = "\n\n",
    lexical: float | None = None,
    pieces: float | None = None,
    strategy: str = "mmr",
    strategy_options: dict[str, Any] | None = None,
) -> TextSelection:
    """Select texts for a question under a token budget with budgeted MMR.

    The budget holds for what the model reads: ``TextSelection.context``, the selected texts
    joined by ``separator``, separators (and, with sentences, elision marks) included.  MMR runs
    with each text costing its tokens plus the separator's and a budget one separator larger
    (exact for a counter whose counts add up: ``n`` texts and ``n - 1`` separators); the joined
    context is then counted again, and should a counter whose counts do not add up (BPE merging
    across a join, ``len(text) // 4`` rounding each piece down) put it over, MMR runs again with
    the room lowered by the overflow, or the last-picked text is dropped until it fits,
    whichever holds more; should it count the context at less than MMR paid for its pieces (the
    estimate rounds each piece up), MMR runs again with the difference added, while that fits.
    A text that repeats an earlier one (the same but for white space) is not a candidate: the
    context says it once (with sentences, a sentence two texts share is a candidate once).

    Parameters
    ----------
    texts : sequence of str
        The candidate chunks (none empty).
    query : str or array_like
        The question, as text (embedded by ``embedder``) or as a vector.
    budget : int
        Tokens to spend, in ``token_counter``'s tokens.
    embedder : callable or {"lsa", "minilm"}, optional
        ``texts -> (n, d)``; default ``"lsa"``: an
        :class:`~scwo_np.embed.LSAEmbedder` fitted on ``texts`` and ``query``.  A text
        question is embedded by its ``embed_query`` method when it has one
        (:func:`~scwo_np.embed.embed_query`).
    token_counter : name, TokenCounter or callable ``str -> int``, optional
        Default ``"estimate"``; see :func:`scwo_np.tokens.as_token_counter`.
    lam : float or "auto"
        As in :func:`~scwo_np.mmr_select`; ``"auto"`` also reads the question when it is
        text (a question that asks to compare, list or give an overview gets 0.9), and
        ``TextSelection.lam`` says which value was used.
    method
        As in :func:`~scwo_np.mmr_select`.
    order : {"pick", "original", "edges"}
        Layout of the result (see the module docs).
    cache : None, False, EmbeddingCache or path
        Where vectors are cached.  None (the default): the user's embedding cache for an
        embedder cached by default (``"minilm"``: a second call on the same texts embeds
        nothing, in this process or the next; see :func:`~scwo_np.embed.user_embedding_cache`),
        no cache for ``"lsa"`` and your own callables; False: no cache; an
        :class:`~scwo_np.embed.EmbeddingCache` or a path to one: that cache, for any embedder.
    embeddings : array_like, shape (n, d), optional
        The texts' vectors, when you already have them (then no text is embedded).
    costs : array_like of int, optional
        The texts' token counts, when you already have them (``granularity="chunk"`` only). With
        ``token_counter`` given too, the joined context is counted again by it and held to the
        budget; without, the context's tokens are the costs' sum plus the separators'.
    granularity : {"chunk", "sentence"}
        Select whole texts, or sentences of them under the one budget (see
        :mod:`scwo_np.select._units`): more of what the question needs per token when only
        part of each text matters.  Needs an embedder (every sentence is embedded once).  With
        an embedder that gives its word pieces' vectors (MiniLM; see
        :func:`~scwo_np.embed.embed_pieces`) and the question as text, each text's relevance
        also holds how well the question's pieces are matched in it, piece by piece (late
        interaction, from the same pass of the model; kept in the cache beside the vectors).
    sentence_weight : float in [0, 1]
        With sentences: the weight of a sentence's own similarity to the query in its
        relevance; the rest is its text's similarity (0.5: chosen on the tuning half of the
        FAQ questions, see the selection guide).
    elision : str, optional
        With sentences: the marker put between two kept sentences that were not adjacent
        (``"…"``); it counts against the budget.  Default: a space.
    separator : str, default "\\n\\n"
        What joins the selected texts in ``TextSelection.context``; its tokens count against the
        budget (``""``: the texts' own tokens only, as :func:`~scwo_np.mmr_select` counts them).
    lexical : float in [0, 1], optional
        With the question as text: the weight of its own words beside the embedding, scored by
        BM25 against the question's content words (stemmed, stop words left out, document
        frequencies over the texts; see :mod:`scwo_np._lexical`).  With chunks each text gains
        ``lexical`` times its BM25 over the best text's; with sentences each unit gains
        ``lexical`` times its text's share of the question's BM25 weight (its BM25 over the most a
        text could score), so a unit of a text that holds the question's rare words rises, and
        a question whose words no text holds moves nothing.  0: the embedding's relevance alone
        (then, at chunk level and with counts that add up, exactly :func:`~scwo_np.mmr_select`).  A question given as a
        vector has no words: the embedding's relevance alone.  Default: 0.05 for chunks, 0.2 for
        sentences, chosen by leave-one-source-out on documentation sources (the text guide has
        the figures).
    pieces : float in [0, 1], optional
        With sentences, the question as text and an embedder that gives its word pieces'
        vectors (MiniLM; see :func:`~scwo_np.embed.embed_pieces`): the weight of how well the
        question's pieces are matched in each text (each piece's best cosine with a piece of
        the text's sentences, averaged over the question's pieces: late interaction).  Default
        0.5, chosen by leave-one-source-out (the text guide has the figures); 0: no pieces
        (nothing of them read or stored).  Chunks do not use them.
    strategy : str, default "mmr"
        With ``granularity="chunk"``: any of :data:`~scwo_np.select.STRATEGIES`
        (:func:`~scwo_np.select.select_by_strategy` on the texts' vectors and token counts, ``lam``
        passed to those that take it).  The other strategies rank by the cosine alone
        (``lexical`` is MMR's); sentence selection is MMR over the units.
    strategy_options : dict, optional
        The strategy's own keyword arguments (``{"gamma": 0.5}``, ``{"cost_exponent": 1.0}``).

    Returns
    -------
    TextSelection
        The picks, and ``context``: them joined, within ``budget``.

    Warns
    -----
    UserWarning
        When texts were given, ``budget`` is above 0 and no text (no sentence) fits in it: the
        context is then empty, and the warning gives the smallest one's cost.

    Examples
    --------
    >>> texts = ["Use csv.reader to read a CSV file row by row.",
    ...          "csv.reader reads a CSV file one row at a time.",
    ...          "json.load parses a JSON document from a file.",
    ...          "The sqlite3 module is a DB-API interface for SQLite."]
    >>> sel = select_texts(texts, "how do I read a CSV file?", budget=25)
    >>> sel.indices, sel.total_tokens, sel.token_counter
    (array([0, 2]), 24, 'estimate')
    >>> select_texts(texts, "how do I read a CSV file?", budget=25, order="edges").indices
    array([2, 0])
    """
    texts = check_texts(texts, nonempty=True)
    if isinstance(query, str) and not query.strip():
        raise ValueError("query is empty; pass the question as text, or its embedding.")
    if not isinstance(query, str) and np.ndim(query) == 0:  # a number, None, an object: not a question
        raise TypeError(f"query must be the question as a str, or its vector; got {type(query).__name__}.")
    ORDERS.lookup(order)
    separator = check_text(separator, name="separator")
    GRANULARITIES.lookup(granularity)
    STRATEGIES.lookup(strategy)
    options = dict(strategy_options or {})
    if strategy != "mmr" and granularity == "sentence":
        raise ValueError(
            f"strategy={strategy!r} selects whole texts: use granularity='chunk', or strategy='mmr' for "
            "sentences (their relevance is not a cosine)."
        )
    check_strategy_options(strategy, options)
    if strategy != "mmr" and check_lam(lam, auto=True) == "auto":  # the others' lam means something else
        raise ValueError(
            f"lam='auto' chooses MMR's trade-off; strategy={strategy!r} takes a number in [0, 1] "
            "(or leave lam out), or use strategy='mmr'."
        )
    if lexical is None:
        lexical = LEXICAL[granularity] if strategy == "mmr" else 0.0
    lexical = check_unit_interval(
        lexical, name="lexical", meaning="the weight of the question's words beside the embedding; 0 for none"
    )
    if lexical and strategy != "mmr":
        raise ValueError(f"lexical is MMR's: strategy={strategy!r} ranks by the cosine; pass lexical=0.")
    if pieces is not None:
        pieces = check_unit_interval(
            pieces,
            name="pieces",
            meaning="the weight of the question's word pieces matched in each text; 0 for none",
        )
        if pieces and granularity != "sentence":
            raise ValueError(
                "pieces weighs the question's word pieces in sentence selection; granularity='chunk' does "
                "not use them: leave pieces out, or use granularity='sentence'."
            )
    if granularity == "sentence":
        return _select_sentences(
            texts, query, budget, embedder=embedder, token_counter=token_counter, lam=lam, method=method,
            order=order, cache=cache, embeddings=embeddings, costs=costs, weight=sentence_weight, elision=elision,
            separator=separator, lexical=lexical, pieces=PIECES if pieces is None else pieces,
        )  # fmt: skip
    if embeddings is not None and isinstance(query, str) and embedder is None:
        raise ValueError(
            "embeddings are given and query is text: pass embedder= (the model that made the "
            "embeddings) so the query is embedded the same way, or pass the query's vector."
        )
    counter = as_token_counter(token_counter)
    counter_name = counter.name if costs is None or token_counter is not None else "given"
    # Given costs alone are the user's counts: the context is their sum + separators. With a
    # token_counter named too, the joined context is counted again by it and held to the budget.
    recount = costs is None or token_counter is not None
    if embeddings is not None:  # one row per text, named before the costs are (or a copy hides it)
        embeddings = check_embeddings(embeddings)
        if embeddings.shape[0] != len(texts):
            raise ValueError(
                f"embeddings must have one row per text ({len(texts)}); got {embeddings.shape[0]}."
            )
    costs = count_tokens(texts, counter) if costs is None else check_costs(costs, len(texts))
    budget = check_budget(budget)
    if not texts:
        MMR_METHODS.lookup(method)
        return _nothing(budget, counter_name, embedder, order, "chunk", separator)
    store, own = _open_cache(cache)
    try:
        if embeddings is None or isinstance(query, str):
            emb = _embedder_for(embedder, texts, query, store)
        else:
            emb = None
        E = embed_texts(emb, texts) if embeddings is None else check_embeddings(embeddings)
        q = embed_query(emb, query) if isinstance(query, str) else query
    finally:
        if own:
            store.close()
    # The vectors checked before any cosine is taken here (a question embedded by a model of another
    # length, a zero row): the errors mmr_select gives, not a NaN further on.
    E = check_embeddings(E)
    q = check_query(q, E.shape[1])
    check_row_norms(_dot.dots_norms(E, E[0])[1], E)
    cos = _cosine(E, q, np.arange(len(texts)))
    _warn_unrelated(cos, emb, stacklevel=3)
    if check_lam(lam, auto=True) == "auto":  # from the retrieved set and, given as text, the question
        lam = _rule(cos, query if isinstance(query, str) else None)
    # n texts and n - 1 separators within the budget: each text costs one separator more, and the
    # budget is one separator larger (exact for a counter whose counts add up).
    sep = int(count_tokens([separator], counter)[0]) if separator else 0
    unit_costs = np.minimum(costs + sep, MAX_COST)
    if strategy != "mmr" and "lam" in inspect.signature(STRATEGIES[strategy]).parameters:
        options.setdefault("lam", lam)
    fused = None
    if strategy == "mmr" and lexical and isinstance(query, str):  # the cosine plus the question's words
        fused = cos + lexical * lexical_relevance(texts, query)
    # A text that repeats an earlier one (spacing aside) is not a candidate: the context says it once
    # (twenty copies of a question that matched the query were all picked).
    first = first_copies(texts)
    Ec, uc = (E, unit_costs) if first.size == len(texts) else (E[first], unit_costs[first])

    def pick(room: int) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64]]:
        """The picks, their gains and relevance for ``room`` tokens of texts and separators."""
        if strategy != "mmr":  # the strategy on the vectors and costs; relevance: the cosine
            idx, gains = select_by_strategy(Ec, q, uc, room, strategy=strategy, return_gains=True,
                                            **options)  # fmt: skip
            idx = first[idx]
            return idx, gains, _cosine(E, q, idx)
        if fused is not None:
            idx, gains = mmr_with_relevance(Ec, fused[first], uc, room, lam=lam, method=method)
            idx = first[idx]
            return idx, gains, fused[idx]
        idx, gains = mmr_select(Ec, q, uc, room, lam=lam, method=method, return_gains=True)
        idx = first[idx]
        return idx, gains, _cosine(E, q, idx)

    def lay_out(room: int | None, got=None):
        """MMR's picks for ``room`` (or ``got`` without its last pick), laid out and counted."""
        idx, gains, rel = pick(room) if got is None else (got[0][:-1], got[1][:-1], got[2][:-1])
        pos = arrange(idx, rel, order)
        context = separator.join(texts[i] for i in idx[pos].tolist())
        if recount:
            used = int(count_tokens([context], counter)[0]) if context else 0
        else:
            used = int(costs[idx].sum()) + sep * max(len(idx) - 1, 0)
        return (idx, gains, rel, pos, context), used

    def paid(state) -> int:
        return int(unit_costs[state[0]].sum()) - sep if state[0].size else 0

    (idx, gains, rel, pos, context), used = _fit(lay_out, budget, budget + sep, paid)
    if not idx.size:
        _warn_nothing_fits(costs[first], budget, counter_name, "text", stacklevel=3)
    idx, gains, rel = idx[pos], gains[pos], rel[pos]
    name = embedder_name(emb) if emb is not None else "given"
    return TextSelection(
        idx, [texts[i] for i in idx], costs[idx], gains, pos, rel, budget, counter_name, name, order,
        tuple(((0, len(texts[i])),) for i in idx.tolist()), "chunk", float(lam), context, separator, used,
    )  # fmt: skip


def _warn_nothing_fits(costs: NDArray, budget: int, counter: str, what: str, stacklevel: int) -> None:
    """Say so when texts were given, the budget was not 0 and none fits: an empty context is
    otherwise silent."""
    if costs.size and budget > 0:
        warnings.warn(
            f"select_texts: no {what} fits in a budget of {budget} tokens (the smallest costs "
            f"{int(costs.min())}, counted by {counter!r}); the context is empty.",
            UserWarning,
            stacklevel=stacklevel,
        )


def _warn_unrelated(cos: NDArray[np.float64], emb: Callable | None, stacklevel: int) -> None:
    """Say so when the query is at right angles to every text: the picks then say nothing about it."""
    if cos.size and float(np.abs(cos).max()) < 1e-9:
        lsa = (
            " (LSA reads words: the query shares none with the texts)"
            if emb is not None and embedder_name(emb).startswith("lsa")
            else ""
        )
        warnings.warn(
            f"select_texts: the query is unrelated to every text{lsa}; every relevance is 0, so the "
            "picks say nothing about the query.",
            UserWarning,
            stacklevel=stacklevel,
        )


def _cosine(E: NDArray, q: ArrayLike, idx: NDArray[np.int64]) -> NDArray[np.float64]:
    """Cosine of the picked rows with the query: the relevance ``mmr_select`` ranked them by
    (``scwo_np._dot``, in the embeddings' precision), bit for bit."""
    return _dot.query_cosines(np.asarray(E)[idx], q)[0]


def _fit(lay_out: Callable, budget: int, room: int, paid: Callable) -> tuple[tuple, int]:
    """The selection whose joined context, counted again, is within ``budget``.

    ``lay_out(room)`` selects for ``room`` tokens (texts or units with their joins) and returns
    ``(state, used)``, ``state[0]`` the picks in pick order and ``used`` the joined context's
    tokens; ``lay_out(None, state)`` is ``state`` without its last pick; ``paid(state)`` is what
    MMR counted the picks at, less one join (what ``used`` is for a counter whose counts add up).

    * Over the budget (a counter whose counts do not add up: ``len(text) // 4`` rounds each piece
      down, BPE merges across a join): MMR's picks for the whole room cut to fit (the last pick
      dropped until the context fits), or MMR's picks for a room lowered by the overflow, again
      up to :data:`REFITS` times, should they fit and fill more.
    * Within it, but counted at less than MMR paid (the estimate rounds each piece up, and the
      joined context is shorter than its pieces' sum): MMR again with the room raised by the
      difference, up to :data:`REFITS` times, while that fits and fills more.  With counts that add
      up nothing is paid for twice, and the selection is MMR's for the room, as it was.
    """
    state, used = lay_out(room)
    if used <= budget:
        for _ in range(REFITS):
            spare = min(paid(state) - used, budget - used)
            if spare <= 0:
                break
            more, more_used = lay_out(room + spare)
            if more_used > budget or more_used <= used:
                break
            room, state, used = room + spare, more, more_used
        return state, used
    cut, cut_used = state, used
    while cut_used > budget and cut[0].size:
        cut, cut_used = lay_out(None, cut)
    for _ in range(REFITS):
        room = max(room - (used - budget), 0)
        state, used = lay_out(room)
        if used <= budget:
            return (state, used) if used > cut_used else (cut, cut_used)
    return cut, cut_used


def _embed_units(emb: Callable, wanted: list[str], sentences: list[str], query, pieces: float):
    """``(V, P, q, q_pieces)``: the vectors of ``wanted`` (rows in its order) and the question's;
    with ``pieces`` above 0, an embedder with word pieces (:func:`~scwo_np.embed.embed_pieces`)
    and a question as text, also the pieces of each sentence (``P``, by sentence) and of the
    question, else None.  One call for the sentences (vectors and pieces from one pass), one for
    the other texts."""
    said = list(dict.fromkeys(sentences))
    got = embed_pieces(emb, said) if pieces and isinstance(query, str) and said else None
    if got is None:
        q = embed_query(emb, query) if isinstance(query, str) else query
        return embed_texts(emb, wanted), None, q, None
    vec = dict(zip(said, got[0], strict=True))
    pieces = dict(zip(said, got[1], strict=True))
    rest = [t for t in wanted if t not in pieces]
    if rest:
        vec.update(zip(rest, embed_texts(emb, rest), strict=True))
    asked = embed_pieces(emb, [query])
    q = embed_query(emb, query) if callable(getattr(emb, "embed_query", None)) else asked[0][0]
    return np.stack([vec[t] for t in wanted]), pieces, q, asked[1][0]


def _select_sentences(
    texts,
    query,
    budget,
    *,
    embedder,
    token_counter,
    lam,
    method,
    order,
    cache,
    embeddings,
    costs,
    weight,
    elision,
    separator,
    lexical,
    pieces,
) -> TextSelection:
    """``select_texts`` over the texts' sentences (see :mod:`scwo_np.select._units`)."""
    weight = check_unit_interval(
        weight, name="sentence_weight", meaning="the weight of a sentence's own similarity"
    )
    if elision is not None and not isinstance(elision, str):
        raise TypeError(
            f"elision must be a str (a marker such as '…') or None; got {type(elision).__name__}."
        )
    if costs is not None:
        raise ValueError(
            "costs are per text, and granularity='sentence' counts every sentence with token_counter; "
            "leave costs out."
        )
    if embeddings is not None and embedder is None:
        raise ValueError(
            "granularity='sentence' embeds every sentence: pass embedder= (the model that made the "
            "embeddings), or use granularity='chunk'."
        )
    budget = check_budget(budget)
    lam = check_lam(lam, auto=True)
    MMR_METHODS.lookup(method)
    counter = as_token_counter(token_counter)
    if not texts:
        return _nothing(budget, counter.name, embedder, order, "sentence", separator)
    units = Units(texts)
    store, own = _open_cache(cache)
    wanted = list(dict.fromkeys((texts if embeddings is None else []) + units.sentences))
    try:  # one call for every distinct text, then the query
        emb = _embedder_for(embedder, texts, query, store)
        V, P, q, q_pieces = _embed_units(emb, wanted, units.sentences, query, pieces)
    finally:
        if own:
            store.close()
    row = {t: k for k, t in enumerate(wanted)}
    E_texts = check_embeddings(embeddings) if embeddings is not None else V[[row[t] for t in texts]]
    if E_texts.shape[0] != len(texts):
        raise ValueError(f"embeddings must have one row per text ({len(texts)}); got {E_texts.shape[0]}.")
    if V.size and V.shape[1] != E_texts.shape[1]:
        raise ValueError(
            f"embedder {embedder_name(emb)} gives vectors of dimension {V.shape[1]} but embeddings have "
            f"dimension {E_texts.shape[1]}: pass the model that made the embeddings as embedder=."
        )
    q = check_query(q, E_texts.shape[1])  # a vector query: finite, non-zero, the right length
    text_rel = _cosine(E_texts, q, np.arange(len(texts)))
    _warn_unrelated(text_rel, emb, stacklevel=4)
    S = V[[row[t] for t in units.sentences]] if units.sentences else np.empty((0, E_texts.shape[1]))
    # Each sentence's relevance and norm from scwo_np._dot, as mmr_select computes them.
    sent_rel, nrm = _dot.query_cosines(S, q) if units.sentences else (np.empty(0), np.empty(0))
    S = np.asarray(S, dtype=np.float64) / nrm[:, None]
    # A unit is its sentences: its vector their mean direction, its relevance its best sentence's.
    E_units = np.add.reduceat(S, units.start, axis=0) if len(units) else np.empty((0, S.shape[1]))
    best = np.maximum.reduceat(sent_rel, units.start) if len(units) else np.empty(0)
    rel = (
        weight * best
        + (1.0 - weight) * text_rel[units.text_of]
        + NEIGHBOUR * neighbour_lift(best, units.text_of)
    )
    if lexical and isinstance(query, str):  # the question's words in the unit's text: its share of them
        rel = rel + lexical * question_share(texts, query)[units.text_of]
    if q_pieces is not None:  # the question's word pieces, each matched in the unit's text
        of_sentence = np.repeat(units.text_of, np.diff(np.r_[units.start, len(units.sentences)]))
        match = piece_match(q_pieces, [P[t] for t in units.sentences], of_sentence, len(texts))
        rel = rel + pieces * match[units.text_of]
    joint = f" {elision} " if elision else " "  # between two kept units of a text that were not adjacent
    # Every unit but the first is preceded by a join: an elision mark inside its text or the
    # separator between texts; each unit costs the dearer of the two, and the budget is one join larger.
    extra = int(count_tokens([joint, separator], counter).max())
    own = count_tokens(units.texts, counter)
    unit_costs = np.minimum(own + extra, MAX_COST)
    # Answers per token: a unit pays for its length, and a unit of a text already in the context is
    # partly redundant with it, so the budget reaches more of the retrieved texts (see _units).
    if len(units):  # and a fragment (a heading, a "See also" line) means little on its own
        rel = rel - LENGTH_COST * own / max(float(own.mean()), 1.0) - SHORT_COST * short_units(units.texts)
    E_units = spread_over_texts(E_units, units.text_of)
    if lam == "auto":  # from the retrieved texts' relevance and, given as text, the question
        lam = _rule(text_rel, query if isinstance(query, str) else None)

    # The candidates: a unit said twice (a sentence two texts share) once, where it is most
    # relevant; a unit with no word ("2.", "---") never: it means nothing out of its text.
    cand = candidate_units(units.texts, rel)
    E_cand, rel_cand, costs_cand = E_units[cand], rel[cand], unit_costs[cand]

    def lay_out(room: int | None, got=None):
        """MMR's picks for ``room`` (or ``got`` without its last pick), laid out and counted."""
        if got is None:
            picks, gains = mmr_with_relevance(E_cand, rel_cand, costs_cand, room, lam=lam, method=method)
            picks = cand[picks]
        else:
            picks, gains = got[0][:-1], got[1][:-1]
        parts = assemble(texts, units, picks, joint)
        first = {}  # each text's first pick: its place in pick order and its gain
        for k, u in enumerate(picks.tolist()):
            first.setdefault(int(units.text_of[u]), (k, float(gains[k])))
        idx = np.asarray(sorted(first, key=lambda i: first[i][0]), dtype=np.int64)
        pos = arrange(idx, text_rel[idx], order)
        idx = idx[pos]
        context = separator.join(parts[i][0] for i in idx.tolist())
        used = int(count_tokens([context], counter)[0]) if context else 0
        return (picks, gains, parts, first, idx, pos, context), used

    def paid(state) -> int:
        return int(unit_costs[state[0]].sum()) - extra if state[0].size else 0

    (_, _, parts, first, idx, pos, context), used = _fit(lay_out, budget, budget + extra, paid)
    if not idx.size:
        _warn_nothing_fits(own[cand], budget, counter.name, "sentence", stacklevel=4)
    tokens = count_tokens([parts[i][0] for i in idx.tolist()], counter)
    return TextSelection(
        idx, [parts[i][0] for i in idx.tolist()], tokens,
        np.asarray([first[i][1] for i in idx.tolist()]), pos, text_rel[idx], budget, counter.name,
        embedder_name(emb), order, tuple(tuple(parts[i][1]) for i in idx.tolist()), "sentence", float(lam),
        context, separator, used,
    )  # fmt: skip
