"""Benchmarks for scwo_np.select._mmr (mmr_select and friends)."""

import numpy as np

from scwo_np import coverage, mmr_select, mmr_select_multi, topk_relevance, truncate

try:
    from scwo_np.bench._table import pure_python_mmr, spec_lazy_heap_mmr
except ImportError:  # commits before scwo_np.bench (0.2), which asv's history still runs
    from scwo_np.select._bench import pure_python_mmr, spec_lazy_heap_mmr

from ..common import SIZES, SPEC_SIZES, Benchmark, best_time, extra_peak_bytes, need, sizes, skip_in_smoke
from ..datasets import gaussian, pydoc


def _time_over_gemv(E, q, costs, budget):
    """Best time of ``mmr_select`` over best time of one ``E @ q``, same run."""
    reps = 21 if E.shape[0] <= 100_000 else 5
    ours = best_time(lambda: mmr_select(E, q, costs, budget), reps)
    return ours / best_time(lambda: E @ q, reps)


class Select(Benchmark):
    """mmr_select on n x 384 float32 with a 3,000-token budget, by method."""

    params = (SIZES, ["lazy", "exact"])
    param_names = ["n", "method"]

    def setup(self, n, method):
        if method == "exact" and n > 100_000:
            raise NotImplementedError("exact is O(n d) per pick; skipped at this size")
        self.E, self.q, self.costs, self.budget = gaussian(n, 384)
        mmr_select(self.E, self.q, self.costs, self.budget, method=method)  # JIT warm-up

    def time_select(self, n, method):
        mmr_select(self.E, self.q, self.costs, self.budget, method=method)

    def peakmem_select(self, n, method):
        mmr_select(self.E, self.q, self.costs, self.budget, method=method)


class Floor(Benchmark):
    """How far selection is from the physical floor, one pass ``E @ q``."""

    params = SIZES
    param_names = ["n"]
    number = 1
    repeat = 1

    def setup(self, n):
        self.E, self.q, self.costs, self.budget = gaussian(n, 384)
        mmr_select(self.E, self.q, self.costs, self.budget)

    def track_time_over_gemv(self, n):
        return _time_over_gemv(self.E, self.q, self.costs, self.budget)

    track_time_over_gemv.unit = "x E@q"

    def track_extra_memory_over_input(self, n):
        """Peak memory beyond the input, as a fraction of the input's size (O(n) => small)."""
        extra = extra_peak_bytes(lambda: mmr_select(self.E, self.q, self.costs, self.budget))
        return extra / self.E.nbytes

    track_extra_memory_over_input.unit = "fraction of E"


class FloorRetrievalOrder(Benchmark):
    """As :class:`Floor`, with the chunks in retrieval order (most relevant first).

    Retrieved sets usually arrive sorted by score, so the first MMR pick is
    found early and the speculative first pass reads ``E`` once instead of
    twice; random order (:class:`Floor`) is the harder case.
    """

    params = SIZES
    param_names = ["n"]
    number = 1
    repeat = 1

    def setup(self, n):
        E, self.q, costs, self.budget = gaussian(n, 384)
        order = np.argsort(-(E @ self.q) / np.linalg.norm(E, axis=1), kind="stable")
        self.E = np.ascontiguousarray(E[order])
        self.costs = costs[order]
        mmr_select(self.E, self.q, self.costs, self.budget)

    def track_time_over_gemv(self, n):
        return _time_over_gemv(self.E, self.q, self.costs, self.budget)

    track_time_over_gemv.unit = "x E@q"


class SpecTable(Benchmark):
    """The spec's table: n in 50..500, d = 32, ~150 tokens per chunk, budget 30%."""

    params = SPEC_SIZES
    param_names = ["n"]

    def setup(self, n):
        self.E, self.q, self.costs, self.budget = gaussian(n, 32)
        mmr_select(self.E, self.q, self.costs, self.budget)

    def time_lazy(self, n):
        mmr_select(self.E, self.q, self.costs, self.budget, method="lazy")

    def time_exact(self, n):
        mmr_select(self.E, self.q, self.costs, self.budget, method="exact")

    def track_speedup_lazy_vs_exact(self, n):
        args = (self.E, self.q, self.costs, self.budget)
        return best_time(lambda: mmr_select(*args, method="exact")) / best_time(
            lambda: mmr_select(*args, method="lazy")
        )

    track_speedup_lazy_vs_exact.unit = "x"

    def track_speedup_vs_pure_python(self, n):
        El = self.E.astype(np.float64).tolist()
        ql = self.q.astype(np.float64).tolist()
        cl = self.costs.tolist()
        pure = best_time(lambda: pure_python_mmr(El, ql, cl, self.budget), 1)
        return pure / best_time(lambda: mmr_select(self.E, self.q, self.costs, self.budget), 21)

    track_speedup_vs_pure_python.unit = "x"

    def track_speedup_vs_spec_lazy_heap(self, n):
        """Against the spec's own SCWO-fast written in plain Python (target >= 1000x at n = 500)."""
        El = self.E.astype(np.float64).tolist()
        ql = self.q.astype(np.float64).tolist()
        cl = self.costs.tolist()
        spec = best_time(lambda: spec_lazy_heap_mmr(El, ql, cl, self.budget), 2)
        return spec / best_time(lambda: mmr_select(self.E, self.q, self.costs, self.budget), 51)

    track_speedup_vs_spec_lazy_heap.unit = "x"

    def track_score_gain_over_truncation(self, n):
        """The spec's 'improvement': coverage of MMR over truncation, in percent."""
        sel = mmr_select(self.E, self.q, self.costs, self.budget)
        trunc = truncate(self.costs, self.budget)
        return 100 * (coverage(self.E[sel], self.q) / coverage(self.E[trunc], self.q) - 1)

    track_score_gain_over_truncation.unit = "%"


class SmallSets(Benchmark):
    """Per-call overhead on retrieved sets of typical size: n chunks of d = 384, pick k.

    ``pyversity`` (``diversify(..., strategy="mmr")``, the ``bench`` extra) is
    given the relevance scores precomputed, so it does less work than
    ``mmr_select``, which computes them.  Targets: <= 12 us at n = 20 and
    <= 30 us at n = 100, >= 5x pyversity at both.
    """

    params = sizes(20, 100)
    param_names = ["n"]

    def setup(self, n):
        rng = np.random.default_rng(0)
        self.E = rng.standard_normal((n, 384)).astype(np.float32)
        self.q = rng.standard_normal(384).astype(np.float32)
        self.costs = np.ones(n, dtype=np.int64)
        self.k = 5 if n == 20 else 10
        mmr_select(self.E, self.q, self.costs, self.k)

    def time_mmr_select(self, n):
        mmr_select(self.E, self.q, self.costs, self.k)

    def _pyversity(self):
        try:
            from pyversity import diversify
        except ImportError:
            raise NotImplementedError("pyversity is not installed (pip install '.[bench]')") from None
        rel = (self.E @ self.q) / (np.linalg.norm(self.E, axis=1) * np.linalg.norm(self.q))
        return lambda: diversify(self.E, rel, k=self.k, strategy="mmr", diversity=0.3)

    def track_speedup_vs_pyversity(self, n):
        theirs = self._pyversity()
        ours = best_time(lambda: mmr_select(self.E, self.q, self.costs, self.k), 2001)
        return best_time(theirs, 2001) / ours

    track_speedup_vs_pyversity.unit = "x"

    track_speedup_vs_pyversity.setup = lambda *_: need("pyversity")

    def track_microseconds(self, n):
        """Best of 2,001 calls, in microseconds (asv's own timer rounds tiny times)."""
        return 1e6 * best_time(lambda: mmr_select(self.E, self.q, self.costs, self.k), 2001)

    track_microseconds.unit = "us"


class Quality(Benchmark):
    """Coverage on the bundled real sample (mean over its 32 queries), budget 1,500 tokens."""

    params = ["mmr", "mmr-cost-aware", "topk", "truncate"]
    param_names = ["selector"]

    def setup(self, selector):
        self.E, self.costs, self.Q = pydoc()

    def track_coverage(self, selector):
        scores = []
        for q in self.Q:
            if selector == "mmr":
                sel = mmr_select(self.E, q, self.costs, 1500)
            elif selector == "mmr-cost-aware":
                sel = mmr_select(self.E, q, self.costs, 1500, cost_aware=True)
            elif selector == "topk":
                sel = topk_relevance(self.E, q, self.costs, 1500)
            else:
                sel = truncate(self.costs, 1500)
            scores.append(coverage(self.E[sel], q))
        return float(np.mean(scores))


class CostAware(Benchmark):
    """Answer quality of plain MMR and the cost-aware modes on the bundled real queries.

    ``scwo bench --cost-aware`` prints the same rows; tracked here so a change
    that makes the cost-aware mode lose recall or fill shows up over time.
    """

    params = ["MMR", "cost-aware (r = 0.25, the default)", "knapsack mode (r = 1, shift = 1)"]
    param_names = ["selector"]
    number = 1
    repeat = 1

    def setup(self, selector):
        try:
            from scwo_np.bench._table import cost_aware_rows
        except ImportError:  # commits before scwo_np.bench (0.2), which asv's history still runs
            from scwo_np.select._bench import cost_aware_rows

        rows = cost_aware_rows(budgets=(400,))
        self.row = next(r for r in rows if r["selector"] == selector)

    def track_module_hit_held_out(self, selector):
        return self.row["held-out"][0]

    def track_on_module_tokens_held_out(self, selector):
        return self.row["held-out"][1]

    def track_fill_held_out(self, selector):
        return self.row["held-out"][2]


class MultiQuery(Benchmark):
    params = (sizes(10_000, 100_000), sizes(1, 4, 16))
    param_names = ["n", "queries"]

    def setup(self, n, m):
        self.E, _, self.costs, self.budget = gaussian(n, 384)
        self.Q = np.random.default_rng(1).standard_normal((m, 384)).astype(np.float32)
        mmr_select_multi(self.E, self.Q, self.costs, self.budget)

    def time_select_multi(self, n, m):
        mmr_select_multi(self.E, self.Q, self.costs, self.budget)


class Compile(Benchmark):
    """Import + first call in a fresh interpreter: with the on-disk JIT cache
    (what a user sees after the first run) and with an empty cache (a fresh install)."""

    repeat = (1, 3, 60.0)
    timeout = 600

    def setup(self):
        skip_in_smoke("compile time")

    _code = """
import numpy as np
from scwo_np import mmr_select, select_batch
E = np.random.default_rng(0).standard_normal((200, 32)).astype(np.float32)
mmr_select(E, E[0], np.full(200, 100), 3000)
select_batch(E.reshape(4, 50, 32), E[:4], np.full(200, 100).reshape(4, 50), 1000)
"""

    def timeraw_first_call_warm_cache(self):
        return self._code

    def timeraw_first_call_cold_cache(self):
        return "import os, tempfile\nos.environ['NUMBA_CACHE_DIR'] = tempfile.mkdtemp()\n" + self._code

    def timeraw_first_call_fresh_install(self):
        """A new user's first call: an empty per-user cache, filled from the seed the wheel ships.

        asv installs the project from a wheel, so ``scwo_np/_jit_seed`` is
        there (target: <= 1 s for the first ``mmr_select``); in a source tree
        without a seed this measures the cold cache.
        """
        return (
            "import os, tempfile\nos.environ.pop('NUMBA_CACHE_DIR', None)\n"
            "os.environ['SCWO_NP_CACHE_DIR'] = tempfile.mkdtemp()\n" + self._code
        )
