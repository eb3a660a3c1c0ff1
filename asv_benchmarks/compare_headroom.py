"""scwo_np's anchoring side by side with headroom's SmartCrusher, on real tool outputs.

Runs both in one process (so times are comparable) on every file of
``scwo_evals/data/tool_outputs/`` and prints a Markdown table: items kept, characters and
tokens (the project's estimate, ceil(chars / 4)) kept, whether every *must-keep*
item survived, and the best of five wall times.  Must-keep items are the ones
scwo's rules call errors (a status-like field saying error/failed/critical, or a
non-empty error field), anomalies (a number more than 3.5 robust z-scores from
its field's median: the plan's rule) and rare categories (a value held by fewer
than 1% of the items of a field with 2-20 text values); stated here so that both
tools are judged by the same list.  headroom runs with its defaults (``max_items_after_crush=15``, lossless
table compaction allowed when it saves >= 15%) and lossy (compaction off, so it
drops rows like scwo does).  scwo runs with ``max_items="auto"`` and with 15,
each with the omission marker and an in-memory store.

    pip install headroom-ai && python asv_benchmarks/compare_headroom.py [FILES...]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

from scwo_np.anchor import CrushStore, columns, crush_json, is_marker, read_document
from scwo_np.anchor._keep import anomaly_scores, error_severity, rare_categories
from scwo_np.tokens import estimate_tokens

DATA = Path(__file__).resolve().parent.parent / "scwo_evals" / "data" / "tool_outputs"


def must_keep(items: list) -> set[str]:
    """JSON texts (sorted keys) of the items either tool must keep, by the rules in the module docs."""
    c = columns([it if isinstance(it, dict) else {"value": it} for it in items])
    flag = (error_severity(c) > 0) | (anomaly_scores(c) > 3.5) | rare_categories(c)
    return {json.dumps(items[i], sort_keys=True) for i in np.flatnonzero(flag)}


def best(fn, repeat=5):
    fn()
    t = float("inf")
    for _ in range(repeat):
        s = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - s)
    return t


def kept_items(out: str, path: tuple) -> tuple[list, bool]:
    """Items in an output (the array at ``path`` of an object) and whether it is headroom's lossless table."""
    try:
        doc = read_document(out, path=list(path) if path else None)
    except ValueError:
        return [], False
    if len(doc.items) == 1 and isinstance(doc.items[0], str) and doc.items[0].startswith(("[", "__buckets")):
        # headroom lossless: a table "[N]{field:type,...}" (or buckets of them), a row per item
        return [], True
    return [
        x for x in doc.items if not is_marker(x) and not (isinstance(x, dict) and "_ccr_dropped" in x)
    ], False


def main(argv: list[str]) -> int:
    from headroom.transforms.smart_crusher import SmartCrusher, SmartCrusherConfig

    files = [Path(a) for a in argv] or sorted(DATA.iterdir())
    default = SmartCrusher(SmartCrusherConfig())
    lossy = SmartCrusher(SmartCrusherConfig(lossless_min_savings_ratio=1.0))
    rows = []
    for path in files:
        text = path.read_text()
        doc = read_document(text)
        items = doc.items
        must = must_keep(items)
        tok_in = int(estimate_tokens([text], rounding="ceil")[0])
        runs = {
            "scwo auto": lambda t=text: crush_json(t, "auto", marker=True, store=CrushStore(":memory:")),
            "scwo 15": lambda t=text: crush_json(t, 15, marker=True, store=CrushStore(":memory:")),
            "headroom": lambda t=text: default.crush(t).compressed,
            "headroom lossy": lambda t=text: lossy.crush(t).compressed,
        }
        for name, fn in runs.items():
            out = fn()
            kept, table = kept_items(out, doc.path)
            got = {json.dumps(x, sort_keys=True) for x in kept}
            survived = len(items) if table else len(got & must)
            rows.append(
                {
                    "file": path.name, "form": doc.form, "items": len(items), "tool": name,
                    "kept": "all (table)" if table else len(kept),
                    "chars": f"{len(out):,} / {len(text):,}",
                    "tokens": f"{int(estimate_tokens([out], rounding='ceil')[0]):,} / {tok_in:,}",
                    "must": f"{len(must) if table else survived}/{len(must)}",
                    "ms": f"{1e3 * best(fn):.1f}",
                }
            )  # fmt: skip
    cols = ["file", "form", "items", "tool", "kept", "chars", "tokens", "must", "ms"]
    sys.stdout.write("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols) + "\n")
    for r in rows:
        sys.stdout.write("| " + " | ".join(str(r[c]) for c in cols) + " |\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
