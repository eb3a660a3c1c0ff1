"""Measure dedup on the Debian changelog samples: chains, drops below the threshold, items dropped.

For each method at its default threshold (sequence at MoRAG's 0.7) and each
grouping, on each split of ``debian_changelog_entries.jsonl``:

- ``dropped``: items dropped;
- ``below``: dropped items whose similarity to the kept item they are said to
  duplicate is below the threshold, recomputed independently (difflib for
  sequence, word sets for jaccard/minhash, NumPy cosines of the same vectors);
- ``mixed``: groups (a kept item and the items dropped against it) that hold
  more than one package, ``cross``: drops against another package's entry, and
  ``largest``: the most packages in one group.

Run: ``python tests/dedup/data/measure_changelogs.py [--grouping components greedy]``
(with ``PYTHONPATH`` at the checkout to measure).  ``--embedder`` picks the
embedder of the cosine method (``lsa`` by default, ``minilm`` with the embed extra).
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
from difflib import SequenceMatcher

import numpy as np

from scwo_np.dedup import DEDUP_METHODS, deduplicate
from scwo_np.embed import as_embedder, embed_texts

HERE = os.path.dirname(__file__)


def words(t):
    return {w for w in t.lower().split() if len(w) > 2}


def jac(a, b):
    u = words(a) | words(b)
    return len(words(a) & words(b)) / len(u) if u else 0.0


def measure(rows, method, grouping, embedder):
    texts = [r["text"] for r in rows]
    pkg = [r["package"] for r in rows]
    t = DEDUP_METHODS[method]
    kw = {}
    if method == "cosine":
        E = embed_texts(as_embedder(embedder, texts), texts)
        kw["embeddings"] = E
        nE = E / np.linalg.norm(E, axis=1, keepdims=True)
    if "grouping" in inspect.signature(deduplicate).parameters:  # before it existed: components
        kw["grouping"] = grouping
    r = deduplicate(texts, method=method, **kw)
    below = 0
    for d, k in zip(r.dropped.tolist(), r.duplicate_of.tolist(), strict=True):
        lo, hi = min(d, k), max(d, k)
        if texts[d] == texts[k]:
            s = 1.0
        elif method == "sequence":
            s = SequenceMatcher(None, texts[hi].lower(), texts[lo].lower()).ratio()
        elif method == "cosine":
            s = float(nE[lo] @ nE[hi])
        else:
            s = jac(texts[lo], texts[hi])
        below += s < t - 1e-9
    groups: dict[int, set] = {}
    for k in r.keep.tolist():
        groups[k] = {pkg[k]}
    for d, k in zip(r.dropped.tolist(), r.duplicate_of.tolist(), strict=True):
        groups[k].add(pkg[d])
    mixed = sum(len(g) > 1 for g in groups.values())
    cross = sum(pkg[d] != pkg[k] for d, k in zip(r.dropped.tolist(), r.duplicate_of.tolist(), strict=True))
    largest = max(map(len, groups.values()), default=0)
    return {"dropped": len(r.dropped), "below": below, "mixed": mixed, "cross": cross, "largest": largest}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--grouping", nargs="+", default=["components", "greedy"])
    ap.add_argument("--embedder", default="lsa")
    ap.add_argument("--data", default=os.path.join(HERE, "debian_changelog_entries.jsonl"))
    a = ap.parse_args()
    rows = [json.loads(x) for x in open(a.data, encoding="utf-8")]
    splits = sorted({r["split"] for r in rows}, reverse=True)
    print(f"{'split':9} {'method':9} {'grouping':11} dropped below mixed cross largest")
    for sp in splits:
        part = [r for r in rows if r["split"] == sp]
        for m in DEDUP_METHODS:
            for g in a.grouping:
                x = measure(part, m, g, a.embedder)
                print(
                    f"{sp:9} {m:9} {g:11} {x['dropped']:7} {x['below']:5} {x['mixed']:5} {x['cross']:5} {x['largest']:7}"
                )


if __name__ == "__main__":
    main()
