"""Benchmarks for scwo_np.batch (select_batch)."""

import numpy as np

from scwo_np import select_batch

from .common import Benchmark


class SelectBatch(Benchmark):
    """Many queries, each over its own 100 candidates, d = 384 (padded 3-D input)."""

    params = [10, 100, 1_000, 10_000]
    param_names = ["queries"]

    def setup(self, b):
        rng = np.random.default_rng(0)
        self.E = rng.standard_normal((b, 100, 384), dtype=np.float32)
        self.Q = rng.standard_normal((b, 384), dtype=np.float32)
        self.costs = rng.integers(100, 201, (b, 100))
        select_batch(self.E, self.Q, self.costs, 3000)

    def time_select_batch(self, b):
        select_batch(self.E, self.Q, self.costs, 3000)

    def peakmem_select_batch(self, b):
        select_batch(self.E, self.Q, self.costs, 3000)
