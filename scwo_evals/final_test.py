"""The final held-out check of issue 43: the shipped default, measured once on sources no setting saw.

    pip install -e ".[embed]"                      # all-MiniLM-L6-v2, offline
    python -m scwo_evals.final_test --json scwo_evals/data/quality/final_test.json
    python -m scwo_evals.final_test --rows scwo_evals/data/quality/final_test.json   # the table again

The sets are :data:`scwo_evals.quality_sets.FINAL_SETS` (the Debian FAQ, perlfaq over the Perl
pods, the R FAQ over the R manuals; ``scwo_evals/faq_pools.py``).  Every question of each set
(both splits, pooled) is asked through :func:`scwo_np.bench.quality_at_budget` (the real
:func:`~scwo_np.select.select_texts` call) with MiniLM vectors and tokens counted as
``len(text) // 4``, at 200, 400 and 800 tokens, by the benchmark's methods: ``top-k`` (the
retriever's order, whole paragraphs), ``top-k hybrid`` (the chunk default's lexical weight),
``sentences`` (``select_texts(..., granularity="sentence")`` with every other argument left at
its default: the recommended call) and ``sentences (embedding only)``.  Nothing is chosen here:
no setting of ``scwo_np`` is changed or tried.  Beside each figure: the retrieval ceiling (a gold
paragraph among the 50 candidates) and the target of issue 43, half-way from top-k to the
ceiling, with how many questions sentences is over (+) or short (-) of it.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path

BUDGETS = (200, 400, 800)
TARGET_BUDGET = 400
METHODS = ("top-k", "top-k hybrid", "sentences", "sentences (embedding only)")


def measure(sets=None, budgets=BUDGETS, methods=METHODS, cache=None) -> dict:
    """Rows of ``quality_at_budget`` per set (both splits) and the seconds each set took."""
    from scwo_evals.quality_sets import FINAL_SETS, load
    from scwo_evals.relevance import chars_over_4
    from scwo_np.bench import quality_at_budget
    from scwo_np.embed import MiniLMEmbedder

    emb = MiniLMEmbedder()
    rows, seconds = [], {}
    for name in sets or FINAL_SETS:
        qs = load(name)
        t0 = time.perf_counter()
        rows += quality_at_budget(
            [qs], embedder=emb, token_counter=chars_over_4, budgets=budgets, methods=list(methods),
            split=None, cache=cache,
        )  # fmt: skip
        seconds[name] = round(time.perf_counter() - t0, 1)
        print(f"{name}: measured in {seconds[name]:.0f} s", file=sys.stderr, flush=True)
    return {"rows": rows, "seconds": seconds}


def _pooled(rows: list[dict], name: str, method: str, budget: int, key: str = "hit") -> tuple[float, int]:
    rs = [r for r in rows if r["set"] == name and r["method"] == method and r["budget"] == budget]
    n = sum(r["n"] for r in rs)
    return sum(r[key] * r["n"] for r in rs) / n, n


def summary(rows: list[dict], budgets=BUDGETS) -> list[dict]:
    """Per set: n, the ceiling, each method's hit rate per budget, the half-way target per budget
    and how many questions sentences is over (+) or short (-) of it."""
    out = []
    for name in dict.fromkeys(r["set"] for r in rows):
        methods = list(dict.fromkeys(r["method"] for r in rows if r["set"] == name))
        ceiling, n = _pooled(rows, name, methods[0], budgets[0], "ceiling")
        row: dict = {"set": name, "n": n, "ceiling": ceiling}
        for b in budgets:
            for m in methods:
                row[f"{m}@{b}"] = _pooled(rows, name, m, b)[0]
            target = row[f"top-k@{b}"] + (ceiling - row[f"top-k@{b}"]) / 2
            row[f"target@{b}"] = target
            hits = round(row[f"sentences@{b}"] * n)
            need = math.ceil(target * n - 1e-9)  # questions the target asks for
            row[f"sentences vs target@{b}"] = hits - need
            row[f"sentences meets target@{b}"] = hits >= need
        out.append(row)
    return out


def format_summary(summ: list[dict], budgets=BUDGETS) -> str:
    head = ["set", "n", "ceiling"] + [f"{w}@{b}" for b in budgets for w in ("top-k", "sentences")]
    head += [f"target@{TARGET_BUDGET}", f"vs target@{TARGET_BUDGET} (questions)"]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for r in summ:
        cells = [r["set"], str(r["n"]), f"{r['ceiling']:.3f}"]
        cells += [f"{r[f'{w}@{b}']:.3f}" for b in budgets for w in ("top-k", "sentences")]
        d = r[f"sentences vs target@{TARGET_BUDGET}"]
        cells += [f"{r[f'target@{TARGET_BUDGET}']:.3f}", ("met, " if d >= 0 else "short, ") + f"{d:+d}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m scwo_evals.final_test", description=__doc__.splitlines()[0])
    p.add_argument("--cache", help="MiniLM's embedding cache file (default: the user's)")
    p.add_argument("--sets", help="comma-separated (default: every final set)")
    p.add_argument("--rows", help="read the measured rows from this JSON file instead of measuring")
    p.add_argument("--json", help="write the rows, the summary and the timings to this file")
    args = p.parse_args(argv)
    if args.rows:
        data = json.loads(Path(args.rows).read_text(encoding="utf-8"))
    else:
        data = measure(args.sets.split(",") if args.sets else None, cache=args.cache)
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                                cwd=Path(__file__).parent, check=False).stdout.strip()  # fmt: skip
        data = {"embedder": "all-MiniLM-L6-v2", "tokens": "len(text) // 4",
                "commit": dict.fromkeys(data["seconds"], commit), **data}  # fmt: skip
        if args.json and Path(args.json).is_file():  # keep the sets measured before (one set per run)
            old = json.loads(Path(args.json).read_text(encoding="utf-8"))
            done = set(data["seconds"])
            data["rows"] = [r for r in old["rows"] if r["set"] not in done] + data["rows"]
            for key in ("seconds", "commit"):
                data[key] = {k: v for k, v in old[key].items() if k not in done} | data[key]
    data["summary"] = summary(data["rows"])
    if args.json:
        Path(args.json).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(format_summary(data["summary"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
