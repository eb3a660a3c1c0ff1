"""Builds notebooks/07_strategies.ipynb (executed, outputs saved)."""

from _builder import Builder

nb = Builder()
md, code = nb.md, nb.code

md("""# 07 — Which strategy puts the answer into the context?

`scwo_np.select_by_strategy(..., strategy=...)` offers MMR, max-sum diversity (MSD), a DPP, SSD and the
exact knapsack optimum. Here they meet real questions with known answers: the Python FAQ from
Debian's `python3-doc` (`scwo_np.datasets.load_faq`: 175 questions, the FAQ's own section
titles; the paragraphs under each are its answer; 503 chunks embedded with MiniLM). For each
question a retriever hands over the 50 chunks closest to it; each strategy fills a budget of
200, 400 or 800 tokens. *Answer recall* is the share of questions whose context holds at least
one answer paragraph. The split is fixed (82 held-out questions): nothing here is tuned, but
the table shows both halves so that a choice made from it can be checked on the other.
The notebook is executed by the test suite.""")

code("""import matplotlib.pyplot as plt
import numpy as np
from sklearn.decomposition import PCA

import scwo_np
from scwo_np.bench import DEFAULT_STRATEGIES, compare_strategies
from scwo_np.datasets import load_faq

f = load_faq()
halves = {h: [i for i, s in enumerate(f.split) if s == h] for h in ("tune", "held_out")}
rows = {
    h: compare_strategies(f.embeddings, f.costs, f.query_embeddings[ids], [f.gold[i] for i in ids])
    for h, ids in halves.items()
}
print(f"{'strategy':26s} {'budget':>6s}  recall tune / held-out   gold fraction   redundancy   fill")
for a, b in zip(rows["tune"], rows["held_out"], strict=True):
    print(f"{a['strategy']:26s} {a['budget']:6d}  {a['answer_recall']:.2f} / {b['answer_recall']:.2f}"
          f"               {b['gold_fraction']:.2f}            {b['redundancy']:.2f}         {b['fill']:.2f}")""")

md("""## Answer recall against the budget (held-out questions)""")

code("""fig, ax = plt.subplots(figsize=(8, 4.5))
for name in DEFAULT_STRATEGIES:
    pts = [(r["budget"], r["answer_recall"]) for r in rows["held_out"] if r["strategy"] == name]
    budgets, recall = np.array(pts).T
    ax.plot(budgets, recall, marker="o", label=name)
ax.set_xlabel("token budget")
ax.set_ylabel("answer recall")
ax.set_xticks([200, 400, 800])
ax.legend(fontsize=8, ncol=2)
ax.grid(alpha=0.3)
plt.tight_layout()""")

md("""## What each strategy picks from the same candidates

One question's 50 candidates, projected on their first two principal components; the answer
paragraphs are circled. Each panel marks, in pick order, what one strategy put into 400 tokens.""")

code("""qi = halves["held_out"][3]
q = f.query_embeddings[qi]
unit = f.embeddings / np.linalg.norm(f.embeddings, axis=1, keepdims=True)
cand = np.argsort(-(unit @ (q / np.linalg.norm(q))), kind="stable")[:50]
xy = PCA(2, random_state=0).fit_transform(f.embeddings[cand])
gold = np.isin(cand, f.gold[qi])
panels = ["top-k", "mmr (lam 0.5)", "msd (lam 0.7)", "dpp (lam 0.3)", "ssd (lam 0.5)", "knapsack"]
fig, axes = plt.subplots(2, 3, figsize=(12, 7.5), sharex=True, sharey=True)
for ax, name in zip(axes.ravel(), panels, strict=True):
    idx = scwo_np.select_by_strategy(np.ascontiguousarray(f.embeddings[cand]), q, f.costs[cand], 400, **DEFAULT_STRATEGIES[name])
    ax.scatter(*xy.T, s=12, c="lightgray")
    ax.scatter(*xy[gold].T, s=120, facecolors="none", edgecolors="tab:green", linewidths=2)
    ax.scatter(*xy[idx].T, s=40, c=np.arange(len(idx)), cmap="viridis")
    for r, i in enumerate(idx):
        ax.annotate(str(r + 1), xy[i], fontsize=8, xytext=(3, 3), textcoords="offset points")
    hit = "answer in" if gold[idx].any() else "answer missed"
    ax.set_title(f"{name}: {len(idx)} chunks, {hit}", fontsize=9)
fig.suptitle(f"{f.questions[qi]!r}", fontsize=10)
plt.tight_layout()""")

md("""## Checks

The budget holds for every strategy and question, and top-k's recall grows with the budget.""")

code("""for ids in halves.values():
    for opts in DEFAULT_STRATEGIES.values():
        for i in ids[:10]:
            qv = f.query_embeddings[i]
            c = np.argsort(-(unit @ (qv / np.linalg.norm(qv))), kind="stable")[:50]
            sel = scwo_np.select_by_strategy(np.ascontiguousarray(f.embeddings[c]), qv, f.costs[c], 200, **opts)
            assert f.costs[c][sel].sum() <= 200
recall = {(r["strategy"], r["budget"]): r["answer_recall"] for r in rows["held_out"]}
assert recall[("top-k", 200)] <= recall[("top-k", 800)]
print("ok")""")

nb.write("07_strategies.ipynb")
