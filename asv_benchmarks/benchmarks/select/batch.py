"""Benchmarks for scwo_np.select._batch (select_batch)."""

import numpy as np

from scwo_np import select_batch

from ..common import Benchmark, best_time, sizes


class SelectBatch(Benchmark):
    """Many queries, each over its own 100 candidates, d = 384 (padded 3-D input)."""

    params = sizes(10, 100, 1_000, 10_000)
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

    def track_time_over_batched_matmul(self, b):
        """``select_batch`` over one batched ``np.matmul`` of the same data, same run (target <= 2x at 1,000)."""
        ours = best_time(lambda: select_batch(self.E, self.Q, self.costs, 3000), 5)
        floor = best_time(lambda: np.matmul(self.E, self.Q[:, :, None]), 5)
        return ours / floor

    track_time_over_batched_matmul.unit = "x matmul"
