"""``scwo bench --hsca``: HSCA's budgeted context against a recency buffer and top-k, on a real session.

The session is the bundled Python FAQ (:func:`~scwo_np.datasets.load_faq`): its 503 answer
paragraphs, in document order and without their titles, are the turns of one conversation;
its 175 questions (the section titles) are asked afterwards.  A context answers a question
when it holds, verbatim, a sentence of the answer (``answer_sentences``: sentences of 20
characters or more that are prose, not code).  The methods, each within ``budget`` tokens
counted on the text the model reads, with the engine's ``token_counter``:

``hsca``
    ``HSCAEngine.context(query, budget).text``, when the engine has ``context``.
``recency``
    The newest turns, whole, newest first while they fit, rendered in conversation order.
``top-k turns``
    The turns most similar to the query (cosine of ``embedder``), whole, best first, each one
    that fits, rendered in conversation order.
``top-k sentences``
    The same over the sentences of every turn.

Latency is ``context(query, 400)`` over a session of ``turns`` real turns (the FAQ's
paragraphs, then the bundled Python library sample's), the median over the questions, with
the query's embedding made beforehand (not timed); ingest speed is ``ingest_turn`` over the
same turns.  ``scwo_evals.hsca_context`` runs the same measures on more sources.
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..datasets import load_faq, load_sample
from ..embed import as_embedder, embed_texts, embedder_name
from ..text import split_sentences
from ..tokens import as_token_counter
from ..validation import check_int

__all__ = ["format_hsca", "hsca_bench"]

#: The methods compared, in the order of the table.
METHODS = ("hsca", "recency", "top-k turns", "top-k sentences")
SEP = "\n\n"
MIN_CHARS = 20
_WORD = re.compile(r"^[(\"'“‘]*[^\W\d_]{2,}(?:['’-][^\W\d_]+)*[)\"'”’.,;:!?]*$")


def answer_sentences(texts: Sequence[str]) -> list[str]:
    """The sentences of an answer that count: 20 characters or more, and prose rather than code.

    Parameters
    ----------
    texts : sequence of str
        The paragraphs (turns) of the answer.

    Returns
    -------
    list of str
        Their sentences (:func:`~scwo_np.text.split_sentences`) of 20 characters or more of which
        at least three, and half, of the white-space separated tokens are words (two letters or
        more, perhaps with quotes, brackets or punctuation around them; ``f(a,`` is not one).

    Examples
    --------
    >>> from scwo_np.bench._hsca import answer_sentences
    >>> answer_sentences(["Use it. The csv module reads rows.", "x = f(a, b) + g[1:2]; y = {k: v}"])
    ['The csv module reads rows.']
    """
    out = []
    for text in texts:
        for a, b in split_sentences(text):
            s = text[a:b]
            tokens = s.split()
            prose = sum(bool(_WORD.match(w)) for w in tokens)
            if len(s) >= MIN_CHARS and prose >= 3 and prose >= 0.5 * len(tokens):
                out.append(s)
    return out


def _hit(context: str, sentences: Sequence[str]) -> bool:
    return any(s in context for s in sentences)


def _fill(
    order: Sequence[int], pieces: Sequence[str], costs: np.ndarray, budget: int, counter, *, stop: bool
):
    """Pieces in ``order`` while (``stop``) or whenever they fit, rendered in conversation order.

    Fitting is checked on an upper bound (each piece's count plus a separator's), then the
    rendered text is counted and pieces are dropped from the end of ``order`` while it is over.
    """
    sep = int(counter(SEP))
    used, chosen = 0, []
    for i in order:
        c = int(costs[i]) + (sep if chosen else 0)
        if used + c <= budget:
            chosen.append(int(i))
            used += c
        elif stop:
            break
    while chosen:
        text = SEP.join(pieces[i] for i in sorted(chosen))
        if int(counter(text)) <= budget:
            return text
        chosen.pop()
    return ""


class _Memo:
    """An embedder that keeps every vector it made, by text: the query's embedding is made once."""

    def __init__(self, embedder: Callable) -> None:
        self.embedder = embedder
        self.name = embedder_name(embedder)
        self.vectors: dict[str, np.ndarray] = {}

    def __call__(self, texts):
        texts = list(texts)
        new = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        if new:
            for t, v in zip(new, embed_texts(self.embedder, new), strict=True):
                self.vectors[t] = v
        return np.stack([self.vectors[t] for t in texts]) if texts else np.zeros((0, 1), np.float32)


def split_options(engine_options: Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """``engine_options`` cut in two: the keywords of ``HSCAEngine(...)`` and those of ``context(...)``.

    Parameters
    ----------
    engine_options : mapping or None
        Keyword arguments of :class:`~scwo_np.hsca.HSCAEngine` or of its ``context`` method
        (``recent=``, ``lam=``), mixed.

    Returns
    -------
    tuple of dict
        ``(engine keywords, context keywords)``.

    Examples
    --------
    >>> from scwo_np.bench._hsca import split_options
    >>> split_options({"max_buffer_chunks": 10})
    ({'max_buffer_chunks': 10}, {})
    """
    import inspect

    from ..hsca import HSCAEngine

    if engine_options is None:
        return {}, {}
    if not isinstance(engine_options, Mapping):
        raise TypeError(
            "engine_options must be a mapping of keyword arguments of HSCAEngine or of its context "
            f"method, or None; got {type(engine_options).__name__}."
        )
    own = set(inspect.signature(HSCAEngine).parameters)
    ctx = set(inspect.signature(HSCAEngine.context).parameters) - {"self", "query", "budget"}
    ctx = ctx if hasattr(HSCAEngine, "context") else set()
    unknown = sorted(set(engine_options) - own - ctx)
    if unknown:
        raise ValueError(
            f"engine_options has keys that neither HSCAEngine nor its context method takes: {unknown}; "
            f"the engine takes {sorted(own)}, context takes {sorted(ctx)}."
        )
    return (
        {k: v for k, v in engine_options.items() if k in own},
        {k: v for k, v in engine_options.items() if k not in own},
    )


def _unit(X: np.ndarray) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    n = np.linalg.norm(X, axis=1, keepdims=True)
    return X / np.where(n > 0, n, 1.0)


def _evaluate(
    turns: Sequence[str],
    queries: Sequence[str],
    gold: Sequence[Sequence[int]],
    *,
    budgets: Sequence[int],
    embedder: Callable | None,
    token_counter: object,
    engine: Any = None,
    methods: Sequence[str] = METHODS,
    context_options: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Hit rate, tokens used and overruns of each method at each budget (one row per method and budget).

    ``engine`` is an :class:`~scwo_np.hsca.HSCAEngine` that ingested ``turns`` (or None:
    no ``hsca`` rows), its ``context`` called with ``context_options``; ``embedder`` ranks
    the top-k methods (None: no top-k rows).  Questions
    whose answer has no sentence that counts are left out (``n`` says how many are asked).
    """
    counter = as_token_counter(token_counter)
    methods = [m for m in methods if m in METHODS]
    if engine is None or not hasattr(engine, "context"):
        methods = [m for m in methods if m != "hsca"]
    if embedder is None:
        methods = [m for m in methods if not m.startswith("top-k")]
    costs = counter.count(list(turns))
    asked = [(q, answer_sentences([turns[g] for g in gs])) for q, gs in zip(queries, gold, strict=True)]
    asked = [(q, s) for q, s in asked if s]
    need_top = any(m.startswith("top-k") for m in methods)
    if need_top:
        T = _unit(embed_texts(embedder, list(turns)))
        Q = _unit(embed_texts(embedder, [q for q, _ in asked]))
    if "top-k sentences" in methods:
        sents = [t[a:b] for t in turns for a, b in split_sentences(t)]
        S = _unit(embed_texts(embedder, sents))
        scost = counter.count(sents)
    acc: dict[tuple[str, int], list[float]] = {(m, b): [0.0, 0.0, 0.0] for m in methods for b in budgets}
    newest = np.arange(len(turns))[::-1]
    for k, (query, sentences) in enumerate(asked):
        if need_top:
            by_turn = np.argsort(-(T @ Q[k]), kind="stable")
        if "top-k sentences" in methods:
            by_sentence = np.argsort(-(S @ Q[k]), kind="stable")
        for budget in budgets:
            for m in methods:
                if m == "hsca":
                    text = engine.context(query, budget, **(context_options or {})).text
                elif m == "recency":
                    text = _fill(newest, turns, costs, budget, counter, stop=True)
                elif m == "top-k turns":
                    text = _fill(by_turn, turns, costs, budget, counter, stop=False)
                else:
                    text = _fill(by_sentence, sents, scost, budget, counter, stop=False)
                used = int(counter(text)) if text else 0
                a = acc[(m, budget)]
                a[0] += _hit(text, sentences)
                a[1] += used
                a[2] += used > budget
    n = len(asked)
    return [
        {
            "method": m,
            "budget": b,
            "n": n,
            "hit": a[0] / n if n else 0.0,
            "tokens": a[1] / n if n else 0.0,
            "over": int(a[2]),
        }
        for (m, b), a in acc.items()
    ]


def _session(n: int) -> list[str]:
    """``n`` real turns: the FAQ's paragraphs, then the bundled library sample's chunks (2,521 in all)."""
    texts = load_faq().texts + load_sample().texts
    return texts[:n]


def hsca_bench(
    *,
    budgets: Sequence[int] = (200, 400, 800),
    embedder: Callable | str | None = "lsa",
    token_counter: object = None,
    turns: int = 600,
    engine_options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """HSCA's context against recency and top-k on the bundled FAQ session, its latency and ingest speed.

    Parameters
    ----------
    budgets : sequence of int
        Token budgets of the hit rates.
    embedder : {"lsa", "minilm"}, callable or None
        Ranks the top-k baselines and, when the engine takes one, is the engine's embedder too
        (``"lsa"`` is fitted on the session's turns and questions).  None: no top-k rows, and the
        engine works from its map alone.
    token_counter : name, TokenCounter or callable ``str -> int``, optional
        Counts every budget, the engine's as the baselines' (default ``"estimate"``).
    turns : int
        The size of the session whose ``context`` calls are timed, 1 to 2,521.
    engine_options : mapping, optional
        More keyword arguments of :class:`~scwo_np.hsca.HSCAEngine` or of its ``context`` method
        (``recent=``, ``lam=``), to try settings.

    Returns
    -------
    dict
        ``set``, ``turns`` (of the evaluated session), ``embedder``, ``token_counter``, ``rows``
        (per method and budget: ``method``, ``budget``, ``n``, ``hit``, ``tokens`` (mean used),
        ``over`` (contexts over the budget)), ``hsca`` (whether the engine has ``context``),
        ``ingest`` (``turns``, ``turns_per_second``) and, with ``context``, ``latency``
        (``turns``, ``budget``, ``queries``, ``median_ms``, ``p90_ms``).

    Examples
    --------
    >>> r = hsca_bench(budgets=[400], turns=50)
    >>> sorted({row["method"] for row in r["rows"]} - {"hsca"})
    ['recency', 'top-k sentences', 'top-k turns']
    >>> all(row["over"] == 0 for row in r["rows"]), r["ingest"]["turns"]
    (True, 50)
    """
    from ..hsca import HSCAEngine

    budgets = [check_int(b, name="budgets", low=1) for b in budgets]
    turns = check_int(turns, name="turns", low=1, high=2521)
    counter = as_token_counter(token_counter)
    faq = load_faq()
    emb = None
    if embedder is not None:
        emb = _Memo(as_embedder(embedder, [*faq.texts, *faq.questions]))
    options, context_options = split_options(engine_options)
    has_context = hasattr(HSCAEngine, "context")
    if has_context:  # the engine's counter and embedder, as the baselines'
        options.setdefault("token_counter", counter)
        if emb is not None:
            options.setdefault("embedder", emb)

    engine = HSCAEngine(**options)
    for t in faq.texts:
        engine.ingest_turn(t)
    rows = _evaluate(
        faq.texts,
        faq.questions,
        faq.gold,
        budgets=budgets,
        embedder=emb,
        token_counter=counter,
        engine=engine,
    )
    out: dict[str, Any] = {
        "set": "python-faq",
        "turns": len(faq.texts),
        "embedder": "none" if emb is None else emb.name,
        "token_counter": counter.name,
        "hsca": has_context,
        "rows": rows,
    }
    session = _session(turns)
    if emb is not None:
        emb(session)  # embedded once, so ingest is timed as the engine's own work (the map, the index)
    engine = HSCAEngine(**options)
    t0 = time.perf_counter()
    for t in session:
        engine.ingest_turn(t)
    out["ingest"] = {"turns": len(session), "turns_per_second": len(session) / (time.perf_counter() - t0)}
    if has_context:
        queries = faq.questions
        if emb is not None:
            emb(queries)  # the query's embedding is not timed
        engine.context(queries[0], 400, **context_options)  # warm-up
        times = []
        for q in queries:
            t0 = time.perf_counter()
            engine.context(q, 400, **context_options)
            times.append(1e3 * (time.perf_counter() - t0))
        out["latency"] = {
            "turns": len(session),
            "budget": 400,
            "queries": len(times),
            "median_ms": statistics.median(times),
            "p90_ms": float(np.percentile(times, 90)),
        }
    return out


def format_hsca(result: Mapping[str, Any]) -> str:
    """What :func:`hsca_bench` returned, as a Markdown table and two lines.

    Parameters
    ----------
    result : dict
        What :func:`hsca_bench` returned.

    Returns
    -------
    str
        The hit rate of each method at each budget (with mean tokens used and overruns), then
        the context latency and the ingest speed.

    Examples
    --------
    >>> r = {"set": "s", "turns": 3, "embedder": "lsa", "token_counter": "estimate", "hsca": False,
    ...      "rows": [{"method": "recency", "budget": 400, "n": 2, "hit": 0.5, "tokens": 390.0, "over": 0}],
    ...      "ingest": {"turns": 3, "turns_per_second": 1000.0}}
    >>> print(format_hsca(r))
    s: 3 turns, 2 questions; top-k by lsa; tokens by estimate
    <BLANKLINE>
    | method | hit@400 | tokens@400 | over budget |
    |---|---|---|---|
    | recency | 0.500 | 390 | 0 |
    <BLANKLINE>
    HSCAEngine.context: not in this version
    ingest_turn: 1,000 turns/s over 3 turns
    """
    rows = result["rows"]
    budgets = sorted({r["budget"] for r in rows})
    by = {(r["method"], r["budget"]): r for r in rows}
    n = rows[0]["n"] if rows else 0
    out = [
        f"{result['set']}: {result['turns']} turns, {n} questions; top-k by {result['embedder']}; "
        f"tokens by {result['token_counter']}\n",
        "| method | "
        + " | ".join(f"hit@{b}" for b in budgets)
        + " | "
        + " | ".join(f"tokens@{b}" for b in budgets)
        + " | over budget |",
        "|---" * (2 * len(budgets) + 2) + "|",
    ]
    for m in dict.fromkeys(r["method"] for r in rows):
        cells = [f"{by[(m, b)]['hit']:.3f}" for b in budgets] + [
            f"{by[(m, b)]['tokens']:.0f}" for b in budgets
        ]
        over = sum(by[(m, b)]["over"] for b in budgets)
        out.append(f"| {m} | " + " | ".join(cells) + f" | {over} |")
    out.append("")
    lat = result.get("latency")
    if lat:
        out.append(
            f"HSCAEngine.context(query, {lat['budget']}) over {lat['turns']} turns: median "
            f"{lat['median_ms']:.2f} ms, p90 {lat['p90_ms']:.2f} ms ({lat['queries']} queries, "
            "their embedding not timed)"
        )
    else:
        out.append("HSCAEngine.context: not in this version")
    ing = result["ingest"]
    out.append(f"ingest_turn: {ing['turns_per_second']:,.0f} turns/s over {ing['turns']} turns")
    return "\n".join(out)
