"""Quality at budget: how much of the answer each method puts into the context, on real questions.

:func:`quality_at_budget` runs every method of :data:`QUALITY_METHODS` on the bundled
question sets (:func:`~scwo_np.datasets.load_questions`): for each question it selects
from the 50 paragraphs a retriever returned, under each budget, and checks the context
against the known answer.  The measures, averaged over the questions of a set and split:

``hit``
    The share of contexts that hold a sentence of the answer.  A sentence counts as held
    when 90% of its word 3-grams are in the context, so a sentence cut out of its
    paragraph counts as much as the paragraph's copy.
``share``
    The mean share of the answer's sentences held.
``parts``
    The mean share of the answer's paragraphs (its parts: two for a comparison, one per
    section for an overview) with a sentence held.
``fill``
    Tokens used over the budget.
``over``
    The share of calls whose output exceeded the budget before the benchmark cut it to the
    budget: always 0 for our methods (checked on every call); the peers of
    ``scwo_np/bench/_peers.py`` (``peers=True``, ``scwo bench --quality --peers``) can overrun.

Each row also gives the set's retrieval ceiling (``ceiling``): the share of its questions with
a paragraph of the answer among the candidates; a hit above it comes only from another
candidate quoting a sentence of the answer.  Besides the bundled sets, ``sets=`` takes your own (a JSONL file or a
:class:`~scwo_np.datasets.QuestionSet`: :func:`~scwo_np.bench.read_questions`).

``scwo bench --quality`` prints them; the docs plot them.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .._registry import Registry
from ..datasets import QUESTION_SETS, QuestionSet, load_questions
from ..embed import EmbeddingCache, as_embedder, embed_texts
from ..select import select_by_strategy, select_texts
from ..text import TERM, split_sentences
from ..tokens import as_token_counter, count_tokens
from ..validation import check_int
from ._sets import _as_sets, _ceiling

__all__ = ["QUALITY_METHODS", "format_quality", "quality_at_budget"]

#: Method name -> keyword arguments: of :func:`~scwo_np.select.select_texts` (chunks or
#: sentences, MMR), or, with ``strategy``, of :func:`~scwo_np.select.select_by_strategy`
#: over the chunks.
QUALITY_METHODS: Registry[dict[str, Any]] = Registry(
    "methods",
    {
        "top-k": {"lam": 1.0, "lexical": 0.0},  # by the embedder's cosine to the question: the baseline
        "top-k hybrid": {"lam": 1.0},
        # the texts in the order the set gives them (its retriever's), whole, each one that fits
        "retrieved order": {"given": True},
        "mmr": {"lam": 0.7},
        "mmr (auto)": {"lam": "auto"},
        "sentences": {"granularity": "sentence", "lam": 0.7},
        "sentences (embedding only)": {"granularity": "sentence", "lam": 0.7, "lexical": 0.0},
        "sentences (auto)": {"granularity": "sentence", "lam": "auto"},
        "sentences (top-k)": {"granularity": "sentence", "lam": 1.0},
        "mmr cost-aware": {"strategy": "mmr", "lam": 0.7, "cost_aware": True},
        "msd": {"strategy": "msd", "lam": 0.7},
        "dpp": {"strategy": "dpp", "lam": 0.7},
        "ssd": {"strategy": "ssd", "lam": 0.7},
        "cover": {"strategy": "cover", "lam": 0.5},
        "facility location": {"strategy": "facility_location", "lam": 0.5},
        "xquad": {"strategy": "xquad", "lam": 0.5},
        "rxquad": {"strategy": "rxquad", "lam": 0.5},
        "gist": {"strategy": "gist", "lam": 0.7},
        "knapsack": {"strategy": "knapsack"},
    },
)

_MEASURES = ("hit", "share", "parts", "fill", "over")

#: Registry of the question sets' splits (``split=``; None is both): name -> what it holds.
SPLITS: Registry[str] = Registry(
    "split",
    {
        "held_out": "the questions no default was tuned on",
        "tune": "the questions the defaults were chosen on",
    },
)


def _grams(text: str) -> set[tuple[str, ...]]:
    w = TERM.findall(text.lower())
    return {tuple(w[i : i + 3]) for i in range(len(w) - 2)}


def _answer(paragraphs: Sequence[str]) -> list[list[set[tuple[str, ...]]]]:
    """Per paragraph of the answer, the word 3-grams of each of its sentences (of 3 words or more).

    A paragraph with no sentence of 3 words ("Yes.", "Use -S") is held by its words in order: one
    "gram" of its 1 or 2 words, found where the context has them side by side.
    """
    out = []
    for p in paragraphs:
        part = [g for a, b in split_sentences(p) if (g := _grams(p[a:b]))]
        if not part and (w := TERM.findall(p.lower())):
            part = [{tuple(w)}]
        out.append(part)
    return out


def _measure(context: str, answer: list[list[set]]) -> tuple[float, float, float]:
    """hit, share of sentences held, share of parts with a sentence held."""
    have = _grams(context)
    if any(len(g) < 3 for part in answer for s in part for g in s):  # a short answer's 1 or 2 words
        w = TERM.findall(context.lower())
        have |= {tuple(w[i : i + n]) for n in (1, 2) for i in range(len(w) - n + 1)}
    held = [[len(s & have) >= 0.9 * len(s) for s in part] for part in answer]
    flat = [h for part in held for h in part]
    if not flat:
        return 0.0, 0.0, 0.0
    return float(any(flat)), sum(flat) / len(flat), sum(any(p) for p in held) / len(held)


def _within(method: str, tokens: int, budget: int) -> None:
    """Our methods never overrun: ``over`` is 0 for them because this holds on every call."""
    if tokens > budget:
        raise RuntimeError(
            f"{method!r} returned {tokens} tokens for a budget of {budget}: a bug, please report it"
        )


def _in_order(texts: list[str], budget: int, counter: object) -> tuple[list[str], int]:
    """The texts in their order, whole, each one whose joined context (blank lines between) still
    fits ``budget``: what a retriever's top-k gives; and the context's tokens."""
    chosen: list[str] = []
    used = 0
    for t in texts:
        n = int(count_tokens(["\n\n".join([*chosen, t])], counter)[0])
        if n <= budget:
            chosen.append(t)
            used = n
    return chosen, used


def _one_set(name, emb_arg, counter, budgets, methods, cache, split, bar) -> list[dict]:
    qs = name if isinstance(name, QuestionSet) else load_questions(name)
    keep = [i for i, s in enumerate(qs.split) if split in (None, s)]
    emb = as_embedder(emb_arg, [*qs.paragraphs, *qs.questions], cache=cache)  # behind the cache, if any
    P = embed_texts(emb, qs.paragraphs)
    Q = embed_texts(emb, [qs.questions[i] for i in keep])
    costs = count_tokens(qs.paragraphs, counter)
    sums: dict[tuple[str, str, int], list[float]] = {}
    for qv, i in zip(Q, keep, strict=True):
        cand = np.asarray(qs.candidates[i], dtype=np.int64)
        texts = [qs.paragraphs[c] for c in cand]
        answer = _answer([qs.paragraphs[g] for g in qs.gold[i]])
        for method, kw in methods.items():
            kw = dict(kw)
            strategy = kw.pop("strategy", None)
            peer = kw.pop("peer", None)
            given = kw.pop("given", False)
            for budget in budgets:
                over = 0.0
                if given:
                    chosen, used = _in_order(texts, budget, counter)
                    _within(method, used, budget)
                elif peer is not None:  # another library's method; cut to the budget if it overran
                    from ._peers import run_peer

                    context, used, overran = run_peer(
                        peer, texts, qs.questions[i], qv, P[cand], costs[cand], budget, counter, emb, **kw
                    )
                    chosen, over = [context], float(overran)
                elif strategy is None:
                    # the call a user makes: the question as text (lam="auto" reads it), the
                    # texts counted by the counter and the joined context counted again
                    with warnings.catch_warnings():  # an empty context is a miss, measured
                        warnings.filterwarnings("ignore", "select_texts: no ", UserWarning)
                        sel = select_texts(
                            texts,
                            qs.questions[i],
                            budget,
                            embeddings=P[cand],
                            embedder=emb,
                            cache=cache,
                            token_counter=counter,
                            **kw,
                        )
                    chosen, used = sel.texts, sel.total_tokens
                    _within(method, sel.context_tokens, budget)
                else:
                    idx = select_by_strategy(P[cand], qv, costs[cand], budget, strategy=strategy, **kw)
                    chosen, used = [texts[j] for j in idx], int(costs[cand][idx].sum())
                    _within(method, used, budget)
                m = _measure("\n\n".join(chosen), answer)
                acc = sums.setdefault((qs.split[i], method, budget), [0.0] * 6)
                for k, v in enumerate((*m, used / budget, over, 1.0)):
                    acc[k] += v
        if bar is not None:
            bar.update(1)
    return [
        {
            "set": qs.name,
            "kind": qs.kind,
            "split": sp,
            "method": method,
            "budget": budget,
            "n": int(acc[-1]),
            **{k: acc[j] / acc[-1] for j, k in enumerate(_MEASURES)},
        }  # fmt: skip
        for (sp, method, budget), acc in sums.items()
    ]


def _method(name: object) -> Mapping[str, Any]:
    """The keyword arguments of a method of QUALITY_METHODS, or ``{"peer": name}`` for a peer."""
    if isinstance(name, str) and name not in QUALITY_METHODS:
        from ._peers import PEERS, require

        if name in PEERS:
            require(name)
            return {"peer": name}
        return QUALITY_METHODS.lookup(name, hint=f"Peers: {', '.join(map(repr, PEERS))}.")
    return QUALITY_METHODS.lookup(name)


def quality_at_budget(
    sets: Iterable[str | os.PathLike | QuestionSet] = QUESTION_SETS,
    *,
    embedder: Callable | str = "lsa",
    token_counter: object = None,
    budgets: Sequence[int] = (200, 400, 800),
    methods: Mapping[str, Mapping[str, Any]] | Iterable[str] | None = None,
    split: str | None = "held_out",
    cache: EmbeddingCache | str | os.PathLike | bool | None = None,
    progress: bool = False,
    peers: bool = False,
) -> list[dict[str, Any]]:
    """How much of the known answer each method puts into the context, per set, split, method and budget.

    Parameters
    ----------
    sets : iterable of str, path or QuestionSet
        Names of bundled question sets (:data:`~scwo_np.datasets.QUESTION_SETS`, all by
        default), paths of your own sets as JSONL files (one question per line:
        :func:`~scwo_np.bench.read_questions` gives the format) or
        :class:`~scwo_np.datasets.QuestionSet` objects, in any mix.
    embedder : callable or {"lsa", "minilm"}
        Embeds the paragraphs, the questions and (for sentence granularity) the sentences.
        ``"lsa"`` is fitted once per set on its paragraphs and questions.
    token_counter : name, TokenCounter or callable ``str -> int``, optional
        Counts the budget (default ``"estimate"``, about 4 characters per token).
    budgets : sequence of int
        Token budgets.
    methods : mapping or iterable of str, optional
        Names of :data:`QUALITY_METHODS` (all by default) or of peers (``PEERS`` in
        ``scwo_np/bench/_peers.py``: an ``ImportError`` if a named peer's package is missing), or
        name -> keyword arguments (``{"peer": name, **settings}`` runs a peer with other settings).
    split : {"held_out", "tune", None}
        Which questions to ask (``None``: both, reported apart).
    cache : None, False, EmbeddingCache or path
        Read vectors from it and store new ones there (MiniLM embeds about 30,000
        sentences for all the sets: minutes the first time, nothing after).  None: the
        user's embedding cache for ``"minilm"`` (as :func:`~scwo_np.embed.as_embedder`);
        False: no cache.
    progress : bool
        Show a progress bar (tqdm, on stderr) over the questions.
    peers : bool
        Also run every installed peer; each one not installed is skipped with a warning that
        says which package it needs.

    Returns
    -------
    list of dict
        One row per set, split, method and budget: ``set``, ``kind``, ``split``,
        ``method``, ``budget``, ``n`` (questions), the measures ``hit``, ``share``,
        ``parts``, ``fill`` and ``over`` (see the module docs), and ``ceiling``: the share of
        those questions with a paragraph of the answer among their candidates.

    Raises
    ------
    ValueError
        An unknown set, split or method, a budget below 1, or a bad line in a set's file
        (the message names the file, the line and the field).

    Examples
    --------
    >>> rows = quality_at_budget(["python-glossary"], methods=["top-k", "sentences"], budgets=[400])
    >>> [(r["method"], r["n"]) for r in rows]
    [('top-k', 19), ('sentences', 19)]
    >>> all(0 <= r["hit"] <= 1 and r["fill"] <= 1 for r in rows)
    True
    """
    sets = _as_sets(sets)
    budgets = _check_budgets(budgets)
    if split is not None:
        SPLITS.lookup(split, hint="Or None: both, reported apart.")
    sets = _with_split(sets, split)
    if methods is None:
        methods = dict(QUALITY_METHODS)
    elif not isinstance(methods, Mapping):
        methods = {m: _method(m) for m in ([methods] if isinstance(methods, str) else methods)}
    if peers:
        from ._peers import installed

        names, skipped = installed()
        for line in skipped:
            warnings.warn(line, UserWarning, stacklevel=2)
        methods = {**methods, **{m: {"peer": m} for m in names}}
    counter = as_token_counter(token_counter)
    own = isinstance(cache, (str, os.PathLike))
    if own:
        cache = EmbeddingCache(cache)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        total = sum(sum(split in (None, s) for s in qs.split) for qs in sets)
        bar = tqdm(total=total, desc="questions", unit="q")
    try:
        return [
            {**row, "ceiling": _ceiling(qs, row["split"])}
            for qs in sets
            for row in _one_set(qs, embedder, counter, budgets, methods, cache, split, bar)
        ]
    finally:
        if bar is not None:
            bar.close()
        if own:
            cache.close()


def _check_budgets(budgets: object) -> list[int]:
    """The budgets as ints of 1 or more, each once, in the order given."""
    if isinstance(budgets, str | bytes) or not isinstance(budgets, Iterable):
        raise TypeError(
            f"budgets must be a sequence of token budgets like [200, 400, 800]; got {type(budgets).__name__}."
        )
    out = list(dict.fromkeys(check_int(b, name="budgets", low=1) for b in budgets))
    if not out:
        raise ValueError("budgets is empty: give one token budget or more, like [200, 400, 800].")
    return out


def _with_split(sets: list[QuestionSet], split: str | None) -> list[QuestionSet]:
    """The sets with questions of ``split``: none in any is an error, none in some a warning."""
    if split is None:
        return sets
    empty = [qs for qs in sets if split not in qs.split]
    if not empty:
        return sets
    has = sorted({s for qs in empty for s in qs.split})
    where = f"split {split!r}: the questions of {', '.join(repr(qs.name) for qs in empty)} are {' and '.join(map(repr, has))}"
    if len(empty) == len(sets):
        raise ValueError(
            f"no question has {where} (a line of a set's file without 'split' is 'held_out'); "
            f"pass split={has[0]!r}, or None for both."
        )
    warnings.warn(f"no question has {where}; they are left out.", UserWarning, stacklevel=3)
    return [qs for qs in sets if split in qs.split]


def format_quality(rows: Sequence[Mapping[str, Any]], *, budget: int | None = None) -> str:
    """The rows of :func:`quality_at_budget` as Markdown tables: one per set and split.

    Parameters
    ----------
    rows : sequence of dict
        What :func:`quality_at_budget` returned.
    budget : int, optional
        The budget whose share, parts and fill are shown (default: the middle one).

    Returns
    -------
    str
        Per set and split, one line per method: hit at each budget, then share, parts
        and fill at ``budget``, and, when a method overran (a peer), ``over`` at each budget;
        and last, the hit (and ``over``) averaged over the sets.

    Examples
    --------
    >>> rows = [{"set": "s", "kind": "faq", "split": "held_out", "method": "top-k", "budget": 400,
    ...          "n": 2, "hit": 0.5, "share": 0.25, "parts": 0.5, "fill": 0.9}]
    >>> print(format_quality(rows))
    s (faq, held_out, 2 questions)
    <BLANKLINE>
    | method | hit@400 | share@400 | parts@400 | fill@400 |
    |---|---|---|---|---|
    | top-k | 0.500 | 0.25 | 0.50 | 0.90 |
    """
    budgets = sorted({r["budget"] for r in rows})
    if not budgets:
        raise ValueError("rows is empty: there is nothing to format (quality_at_budget asked no question).")
    if budget is None:
        budget = budgets[len(budgets) // 2]
    elif budget not in budgets:
        raise ValueError(
            f"budget {budget!r} is not one of the rows' budgets: {', '.join(map(str, budgets))}."
        )
    head = [f"hit@{b}" for b in budgets] + [f"{m}@{budget}" for m in ("share", "parts", "fill")]
    overs = [f"over@{b}" for b in budgets] if any(r.get("over", 0) > 0 for r in rows) else []
    out = []
    groups: dict[tuple[str, str], list] = {}
    for r in rows:
        groups.setdefault((r["set"], r["split"]), []).append(r)
    for (name, split), rs in groups.items():
        by = {(r["method"], r["budget"]): r for r in rs}
        ceiling = f", retrieval ceiling {rs[0]['ceiling']:.2f}" if "ceiling" in rs[0] else ""
        n = rs[0]["n"]
        out.append(f"{name} ({rs[0]['kind']}, {split}, {n} question{'s' * (n != 1)}{ceiling})\n")
        out.append("| method | " + " | ".join(head + overs) + " |")
        out.append("|---" * (len(head + overs) + 1) + "|")
        for method in dict.fromkeys(r["method"] for r in rs):
            cells = [f"{by[(method, b)]['hit']:.3f}" for b in budgets]
            cells += [f"{by[(method, budget)][m]:.2f}" for m in ("share", "parts", "fill")]
            cells += [f"{by[(method, b)]['over']:.2f}" for b in budgets if overs]
            out.append(f"| {method} | " + " | ".join(cells) + " |")
        out.append("")
    names = list(dict.fromkeys(r["set"] for r in rows))
    if len(names) > 1:
        for split in dict.fromkeys(r["split"] for r in rows):
            rs = [r for r in rows if r["split"] == split]
            out.append(f"mean over the {len(names)} sets ({split})\n")
            out.append("| method | " + " | ".join([f"hit@{b}" for b in budgets] + overs) + " |")
            out.append("|---" * (len(budgets) + len(overs) + 1) + "|")
            for method in dict.fromkeys(r["method"] for r in rs):
                means = [
                    np.mean([r[m] for r in rs if r["method"] == method and r["budget"] == b])
                    for m in ("hit", "over")[: 1 + bool(overs)]
                    for b in budgets
                ]
                cells = [f"{h:.3f}" for h in means[: len(budgets)]] + [
                    f"{o:.2f}" for o in means[len(budgets) :]
                ]
                out.append(f"| {method} | " + " | ".join(cells) + " |")
            out.append("")
    return "\n".join(out).rstrip("\n")
