"""Seeded inputs for the benchmarks (the spec's setup, plus the bundled real sample)."""

import os
from functools import lru_cache
from importlib import resources

import numpy as np


@lru_cache(maxsize=2)
def gaussian(n, d, seed=0, dtype=np.float32):
    """The spec's synthetic problem: Gaussian embeddings, 100..200 tokens, budget 30%.

    Returns ``(E, q, costs, budget)``; ``budget`` is 30% of all tokens, capped at
    3,000 (a context-window-sized budget) for n > 500.
    """
    rng = np.random.default_rng(seed)
    E = rng.standard_normal((n, d), dtype=np.float32).astype(dtype, copy=False)
    q = rng.standard_normal(d).astype(dtype)
    costs = rng.integers(100, 201, n)
    budget = int(0.3 * costs.sum())
    if n > 500:
        budget = min(budget, 3000)
    return E, q, costs, budget


@lru_cache(maxsize=2)
def clustered(n, d=384, clusters=50, spread=0.5, seed=0):
    """A Gaussian mixture (``clusters`` centres, unit-variance noise times ``spread``) and a query
    near the first centre, 100..200 tokens each, a 3,000-token budget: topics, as real corpora have."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, d)).astype(np.float32)
    E = (
        centres[rng.integers(0, clusters, n)] + spread * rng.standard_normal((n, d), dtype=np.float32)
    ).astype(np.float32)
    q = (centres[0] + rng.standard_normal(d, dtype=np.float32)).astype(np.float32)
    return E, q, rng.integers(100, 201, n), 3000


@lru_cache(maxsize=1)
def pydoc():
    """The bundled Python-docs sample: (embeddings, costs, query_embeddings)."""
    with resources.files("scwo_np.bundled").joinpath("pydoc_sample.npz").open("rb") as fh:
        z = np.load(fh)
        return z["embeddings"], z["costs"].astype(np.int64), z["query_embeddings"]


@lru_cache(maxsize=2)
def word_corpus(n, words=200, seed=0, dup_frac=0.1, vocab=20000):
    """``n`` texts of ``words`` Zipf-distributed words; ``dup_frac`` of them are
    copies of earlier texts with one word changed (near-duplicates)."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, vocab + 1) ** 0.9
    p /= p.sum()
    names = np.array([f"tok{k}" for k in range(vocab)])
    lens = np.full(n, words) if np.isscalar(words) else rng.integers(words[0], words[1] + 1, n)
    texts = [" ".join(names[rng.choice(vocab, int(L), p=p)]) for L in lens]
    m = int(dup_frac * n)
    for k in range(m):
        src = texts[int(rng.integers(0, n - m))].split()
        src[int(rng.integers(0, len(src)))] = f"edit{k}"
        texts[n - 1 - k] = " ".join(src)
    return texts


@lru_cache(maxsize=1)
def pydoc_paragraphs(n=500, edited=50, seed=0):
    """Real prose: the bundled Python-docs paragraphs, ``edited`` of them copied with an insertion."""
    import json

    with resources.files("scwo_np.bundled").joinpath("pydoc_sample.jsonl").open() as fh:
        rows = [json.loads(line) for line in fh]
    texts = [r["text"] for r in rows[: n - edited]]
    rng = np.random.default_rng(seed)
    for k in rng.integers(0, n - edited, edited):
        t = texts[int(k)]
        c = int(rng.integers(0, len(t)))
        texts.append(t[:c] + " edited " + t[c:])
    return texts, [r["source"] for r in rows[: n - edited]] + ["edited"] * edited


@lru_cache(maxsize=1)
def embeddings_with_copies(n, d=384, seed=0, copy_frac=0.1, noise=0.2):
    """Gaussian rows; the last ``copy_frac`` are noisy copies of earlier rows (cosine ~0.98)."""
    rng = np.random.default_rng(seed)
    E = rng.standard_normal((n, d), dtype=np.float32)
    m = int(copy_frac * n)
    src = rng.integers(0, n - m, m)
    E[n - m :] = E[src] + noise * rng.standard_normal((m, d), dtype=np.float32)
    return E


#: Retrieved sets for the rerank benchmarks: (sets, candidates per set, d).
RERANK_SHAPE = {"fast": (1_000, 100, 384), "smoke": (100, 100, 384)}.get(
    os.environ.get("SCWO_BENCH_PROFILE", ""), (10_000, 100, 384)
)


def retrieved_sets_parquet(path, sets, k, d, seed=0, row_group_rows=65_536):
    """Write ``sets`` retrieved sets of ``k`` Gaussian candidates (50..399 tokens) to ``path``, clustered.

    Returns the queries as a pyarrow table; rows are written in blocks, so
    memory stays small whatever the size (10,000 x 100 x 384 is 1.5 GB).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    schema = pa.schema(
        [("query_id", pa.int64()), ("chunk_id", pa.int64()), ("embedding", pa.list_(pa.float32(), d)),
         ("tokens", pa.int64())]
    )  # fmt: skip
    step = max(1, row_group_rows // k)
    with pq.ParquetWriter(path, schema) as w:
        for s0 in range(0, sets, step):
            s1 = min(sets, s0 + step)
            m = (s1 - s0) * k
            E = rng.standard_normal((m, d), dtype=np.float32)
            block = {
                "query_id": np.repeat(np.arange(s0, s1), k), "chunk_id": np.arange(s0 * k, s0 * k + m),
                "embedding": pa.FixedSizeListArray.from_arrays(pa.array(E.ravel()), d),
                "tokens": rng.integers(50, 400, m),
            }  # fmt: skip
            w.write_table(pa.table(block, schema=schema))
    Q = rng.standard_normal((sets, d), dtype=np.float32)
    return pa.table(
        {"query_id": np.arange(sets), "embedding": pa.FixedSizeListArray.from_arrays(pa.array(Q.ravel()), d)}
    )
