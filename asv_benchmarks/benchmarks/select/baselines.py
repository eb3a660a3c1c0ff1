"""Benchmarks for scwo_np.select._baselines."""

from scwo_np import coverage, topk_relevance

from ..common import Benchmark, sizes
from ..datasets import gaussian


class Baselines(Benchmark):
    params = sizes(10_000, 100_000)
    param_names = ["n"]

    def setup(self, n):
        self.E, self.q, self.costs, self.budget = gaussian(n, 384)
        topk_relevance(self.E, self.q, self.costs, self.budget)

    def time_topk_relevance(self, n):
        topk_relevance(self.E, self.q, self.costs, self.budget)

    def time_coverage_of_1000(self, n):
        coverage(self.E[:1000], self.q)
