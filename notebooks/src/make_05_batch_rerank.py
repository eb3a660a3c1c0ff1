"""Builds notebooks/05_batch_rerank.ipynb (executed, outputs saved)."""

from _builder import Builder

nb = Builder()
md, code = nb.md, nb.code

md("""# 05 — Batch reranking: Parquet in, Parquet out, in process and on Dask

An offline job holds many *retrieved sets* (a query and its top-k candidates, with embeddings
and token counts) and cuts each to a token budget with budgeted MMR. `scwo_np.rerank` reads
them from Parquet in long format (one row per candidate), streams record batches, and writes
the selected rows back with their pick order (`rank`) and MMR score (`gain`). The same job
runs on a Dask cluster and gives the same rows, bit for bit.

This notebook builds such a file from the bundled corpus (its 32 real questions against its
Python-documentation chunks), reranks it in process and on a two-worker `LocalCluster`, and
compares MMR with plain top-k per set. It is executed by the test suite.""")

code("""import os
import tempfile

import matplotlib.pyplot as plt
import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq

from scwo_np import coverage
from scwo_np.rerank import rerank_parquet, sample_sets

work = tempfile.mkdtemp(prefix="scwo-05-")
cands, queries = sample_sets(40)  # each bundled question's 40 most similar chunks
path = os.path.join(work, "sets.parquet")
# clustered by query_id, as retrievers write it; row groups of whole sets suit Dask
pq.write_table(cands, path, row_group_size=40 * 4)
pq.write_table(queries, os.path.join(work, "queries.parquet"))
print(pq.ParquetFile(path).schema_arrow)
print(f"{cands.num_rows:,} candidate rows in {queries.num_rows} sets, "
      f"{pc.sum(cands['tokens']).as_py():,} tokens offered")""")

md("""## In process

`rerank_parquet` streams the file batch by batch (memory bounded by a few batches, not by
the file) and writes the output under a temporary name, renamed when complete. The
`progress` callback is what `scwo rerank` draws its progress bar with.""")

code("""BUDGET = 600
summary = rerank_parquet(path, os.path.join(work, "mmr.parquet"), BUDGET, queries=queries, lam=0.7)
topk = rerank_parquet(path, os.path.join(work, "topk.parquet"), BUDGET, queries=queries, lam=1.0)
print(summary)
mmr = pq.read_table(os.path.join(work, "mmr.parquet"))
mmr.select(["query_id", "chunk_id", "tokens", "source", "rank", "gain"]).slice(0, 6).to_pandas()""")

md("""`lam=1.0` is plain top-k by relevance under the same budget (skipping chunks that no longer
fit): the baseline a batch job would otherwise run.

## On a Dask cluster

`rerank_parquet(..., client=client)` plans spans of whole sets from the `query_id` column,
has the workers read and rerank them, and writes the results in file order. The command
line does the same with `scwo rerank sets.parquet --budget 600 --workers 2 -o out.parquet`
(or `--scheduler tcp://host:8786` for a running cluster whose workers can read the file).""")

code("""import distributed

with (
    distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster,
    distributed.Client(cluster) as client,
):
    on_cluster = rerank_parquet(path, os.path.join(work, "cluster.parquet"), BUDGET, queries=queries, client=client)
same = pq.read_table(os.path.join(work, "cluster.parquet")).equals(mmr)
print(on_cluster == summary, "identical rows:", same)""")

md("""## MMR against top-k, set by set

For each set: tokens kept (both fill the budget about equally) and the spec's coverage score
(0.6 × mean relevance + 0.4 × (1 − mean pairwise similarity) of the kept chunks).""")

code("""def per_set(table):
    emb = {q: [] for q in queries["query_id"].to_pylist()}
    tok = dict.fromkeys(emb, 0)
    for q, e, t in zip(table["query_id"].to_pylist(), table["embedding"].to_numpy(zero_copy_only=False),
                       table["tokens"].to_pylist(), strict=True):
        emb[q].append(e)
        tok[q] += t
    Q = dict(zip(queries["query_id"].to_pylist(), queries["embedding"].to_numpy(zero_copy_only=False), strict=True))
    cov = {q: coverage(np.array(v), Q[q]) if v else 0.0 for q, v in emb.items()}
    return np.array(list(tok.values())), np.array(list(cov.values()))


top = pq.read_table(os.path.join(work, "topk.parquet"))
tok_mmr, cov_mmr = per_set(mmr)
tok_top, cov_top = per_set(top)
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
x = np.arange(len(tok_mmr))
axes[0].bar(x - 0.2, tok_top, 0.4, label="top-k")
axes[0].bar(x + 0.2, tok_mmr, 0.4, label="MMR λ=0.7")
axes[0].axhline(BUDGET, color="black", ls="--", lw=1)
axes[0].set(xlabel="set (question)", ylabel="tokens kept", title=f"tokens kept (budget {BUDGET})")
axes[0].legend(loc="lower right", framealpha=1)
axes[1].scatter(cov_top, cov_mmr)
lo, hi = min(cov_top.min(), cov_mmr.min()), max(cov_top.max(), cov_mmr.max())
axes[1].plot([lo, hi], [lo, hi], color="grey", lw=1)
axes[1].set(xlabel="coverage, top-k", ylabel="coverage, MMR", title="coverage per set")
plt.tight_layout()
print(f"coverage: MMR higher in {int((cov_mmr > cov_top).sum())} of {len(cov_mmr)} sets; "
      f"mean {cov_mmr.mean():.3f} vs {cov_top.mean():.3f}; tokens kept {tok_mmr.sum():,} vs {tok_top.sum():,}")""")

md("""MMR trades a little relevance for less redundancy, which the coverage score rewards; both
stay within the budget in every set. Whether that puts the *answer* into the context is
another question, measured on real questions in issue 19.""")

code("""import shutil

shutil.rmtree(work)""")

nb.write("05_batch_rerank.ipynb")
