"""Seeded inputs for the benchmarks (the spec's setup, plus the bundled real sample)."""

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


@lru_cache(maxsize=1)
def pydoc():
    """The bundled Python-docs sample: (embeddings, costs, query_embeddings)."""
    with resources.files("scwo_np.bundled").joinpath("pydoc_sample.npz").open("rb") as fh:
        z = np.load(fh)
        return z["embeddings"], z["costs"].astype(np.int64), z["query_embeddings"]
