"""Builds notebooks/02_dedup_and_pipelines.ipynb (executed, outputs saved)."""

from _builder import Builder

nb = Builder()
md, code = nb.md, nb.code


md("""# 02 — Deduplication, diversification and the two context-optimizer pipelines

This notebook runs `scwo_np.dedup`, `scwo_np.optimize.diversify` and the two pipelines of
`scwo_np.optimize` on real text: paragraphs of the Python documentation bundled with the
package (`data/`), with near-copies planted so that we know what should be found.
It is executed by the test suite (nbmake), so every number below is re-computed on each run.""")

code("""import itertools
import json
import re
import time
from difflib import SequenceMatcher
from importlib import resources

import matplotlib.pyplot as plt
import numpy as np

from scwo_np.dedup import DEDUP_METHODS, deduplicate, jaccard_pairs, sequence_pairs
from scwo_np.optimize import ContextChunk, KBContextOptimizer, MoragContextOptimizer
from scwo_np.text import word_sets

base = resources.files("scwo_np.bundled")
rows = [json.loads(x) for x in (base / "pydoc_sample.jsonl").read_text(encoding="utf-8").splitlines()]
with resources.as_file(base / "pydoc_sample.npz") as p, np.load(p) as z:
    E_all = z["embeddings"]
rng = np.random.default_rng(0)
n = 300
texts = [r["text"] for r in rows[:n]]
E = E_all[:n].copy()
# Plant 30 near-copies: the paragraph with one sentence dropped, and a slightly perturbed embedding.
src = rng.choice(n, 30, replace=False)
for k in src:
    t = texts[k]
    cut = t.find(". ")
    texts.append(t[cut + 2:] if 0 < cut < len(t) - 40 else t + " (see above)")
    E = np.vstack([E, E[k] + 0.01 * rng.standard_normal(E.shape[1]).astype(E.dtype)])
print(len(texts), "paragraphs,", len(src), "planted near-copies; defaults:", DEDUP_METHODS)""")

md("""## Four ways to find near-duplicates

Every method finds the pairs at or above its threshold; then the items are taken best first
(here: no scores, so in input order) and each is kept unless it reaches the threshold against
an item already kept (`grouping="greedy"`, the default; `grouping="components"` joins chains of
pairs instead). `jaccard`, `sequence` and `cosine` are exact; `minhash` is the approximate one
(verified, so it never reports a false pair).""")

code("""results = {}
for method in ["jaccard", "sequence", "cosine", "minhash"]:
    kw = {"embeddings": E} if method == "cosine" else {"texts": texts}
    thr = {"jaccard": 0.7, "sequence": 0.7, "cosine": 0.95, "minhash": 0.7}[method]
    t0 = time.perf_counter()
    r = deduplicate(method=method, threshold=thr, **kw)
    results[method] = r
    planted = set(range(n, len(texts)))
    found = planted & set(r.dropped.tolist())
    print(f"{method:9s} threshold {thr}: dropped {len(r.dropped):3d}, planted copies found {len(found)}/30, "
          f"{1e3 * (time.perf_counter() - t0):7.1f} ms")""")

code("""r = results["jaccard"]
for d, k, s in list(zip(r.dropped, r.duplicate_of, r.similarity, strict=True))[:3]:
    print(f"dropped {d} (duplicate of {k}, Jaccard {s:.2f}):\\n   {texts[d][:90]}...\\n   {texts[k][:90]}...")""")

code("""fig, ax = plt.subplots(1, 2, figsize=(11, 3.5))
names = list(results)
ax[0].bar(names, [len(results[m].dropped) for m in names], color="tab:blue")
ax[0].set_title("items dropped per method")
for m in names:
    ax[1].hist(results[m].similarity, bins=20, alpha=0.5, label=m)
ax[1].set_title("similarity of each dropped item to its kept one")
_ = ax[1].legend()""")

md("""## Exactness and speed against the plain loops

The fast paths return exactly what the naive loops return; here is the ratio on this machine,
measured now (the asv suite tracks the same ratios at the issue's sizes).""")

code("""sub = texts[:200]
t0 = time.perf_counter()
sets = [{w for w in x.lower().split() if len(w) > 2} for x in sub]
naive_pairs = [(i, j) for i, j in itertools.combinations(range(len(sub)), 2)
               if (sets[i] | sets[j]) and len(sets[i] & sets[j]) / len(sets[i] | sets[j]) >= 0.5]
t_naive = time.perf_counter() - t0
t0 = time.perf_counter()
a, b, _ = jaccard_pairs(word_sets(sub)[0], 0.5)
t_ours = time.perf_counter() - t0
assert list(zip(a.tolist(), b.tolist(), strict=True)) == naive_pairs
print(f"Jaccard, 200 paragraphs: same {len(naive_pairs)} pairs, {t_naive / t_ours:.0f}x faster than the loop")

low = [x.lower() for x in texts[:80]]
t0 = time.perf_counter()
want = [(i, j) for i, j in itertools.combinations(range(len(low)), 2) if SequenceMatcher(None, low[j], low[i]).ratio() >= 0.6]
t_difflib = time.perf_counter() - t0
t0 = time.perf_counter()
a, b, _ = sequence_pairs(texts[:80], 0.6)
t_ours = time.perf_counter() - t0
assert list(zip(a.tolist(), b.tolist(), strict=True)) == want
print(f"difflib ratio, 80 paragraphs: same {len(want)} pairs, {t_difflib / t_ours:.0f}x faster than all pairs")""")

md("""## Diversification and the KB Labs pipeline

The ADR's "diversity threshold" is defined here as a minimum dissimilarity: a chunk is kept
when its similarity to every chunk kept so far is at most `1 - 0.3`, and at most 3 chunks come
from one file. The pipeline reports every removal and why.""")

code("""matches = [{"id": i, "text": t, "path": (rows[i]["source"] if i < n else rows[src[i - n]]["source"]),
            "score": float(s)} for i, (t, s) in enumerate(zip(texts, rng.uniform(0.2, 1.0, len(texts)), strict=True))]
res = KBContextOptimizer().optimize(matches, {"budget": 2000, "adaptive_selection": True, "max_chunks": 10})
steps = {}
for rem in res.removed:
    steps[rem.step] = steps.get(rem.step, 0) + 1
print("selected:", [m["id"] for m in res.chunks])
print("removed by step:", steps)
print(res.removed[0])
plt.figure(figsize=(6, 3))
plt.bar(list(steps), list(steps.values()))
_ = plt.title("KB pipeline: removals per step")""")

md("""## The MoRAG pipeline

The spec's own example first: with its formula on the raw text the two healthcare chunks score
0.692, below its own threshold of 0.7, so its unit test could not pass; compared in lower case
(what we do) they score 0.711 and merge.""")

code("""chunks = [
    ContextChunk("1", "AI is transforming healthcare", 0.9, "doc1", ["AI", "healthcare"], []),
    ContextChunk("2", "Artificial intelligence is changing healthcare", 0.8, "doc2", ["AI", "healthcare"], []),
    ContextChunk("3", "Machine learning in finance", 0.7, "doc3", ["ML", "finance"], []),
]
opt = MoragContextOptimizer(budget=1000)
unique, stats = opt.remove_redundancy(chunks)
assert [c.id for c in unique] == ["1", "3"] and stats["removed_count"] == 1
raw = 0.7 * SequenceMatcher(None, chunks[1].content, chunks[0].content).ratio() + 0.3
low = 0.7 * SequenceMatcher(None, chunks[1].content.lower(), chunks[0].content.lower()).ratio() + 0.3
print(f"spec formula: {raw:.3f} raw, {low:.3f} lowercased; stats {stats}")""")

code("""role = re.compile(r":(?:func|class|mod|meth|exc):`~?([\\w.]+)`")
docs = [ContextChunk(str(i), t, float(s), m["path"], sorted(set(role.findall(t)))[:6], [])
        for i, (t, s, m) in enumerate(zip(texts[:200], rng.uniform(0.2, 1.0, 200), matches[:200], strict=True))]
opt = MoragContextOptimizer(budget=2500)
ctx = opt.optimize(docs, "how do I serialise objects to JSON", "topical")
print(ctx.organization_strategy, len(ctx.chunks), "chunks,", ctx.total_tokens, "tokens,",
      len(ctx.relationships), "relationships;", ctx.deduplication_stats)
print(opt.format_context(ctx, "how do I serialise objects to JSON")[:700])""")

code("""kinds = {}
for r in ctx.relationships:
    kinds[r.relationship_type] = kinds.get(r.relationship_type, 0) + 1
plt.figure(figsize=(7, 3))
plt.bar(list(kinds), list(kinds.values()))
plt.xticks(rotation=20)
plt.title("MoRAG relationships among the deduplicated chunks")
print(opt.context_metrics)""")

nb.write("02_dedup_and_pipelines.ipynb")
