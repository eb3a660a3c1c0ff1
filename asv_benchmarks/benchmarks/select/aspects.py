"""xQuAD and RxQuAD (issue 45) against a faithful NumPy implementation of the same objective.

The NumPy side follows pyversity's main-branch ``xquad``/``rxquad`` line by line (unit
rows, the clipped cosine ``P``, ``P @ (w * R)`` per step, ``R *= 1 - P[best]``) with the
budget added as ours has it (the best chunk that fits, until none does), and computes
its relevance from the same inputs, as ours does.  n chunks of d = 384 (float32),
100..200 tokens, a 3,000-token budget (about 20 picks), 8 given aspects (sub-queries
around the query).  Target (issue 45): >= 10x at n = 1,000 and 10,000.
"""

import numpy as np

from scwo_np.select import rxquad_select, xquad_select

from ..common import Benchmark, best_times, sizes
from ..datasets import gaussian

OURS = {"xquad": xquad_select, "rxquad": rxquad_select}


def numpy_xquad(E, q, A, costs, budget, lam=0.5, inferred=False):
    """Budgeted xQuAD / RxQuAD in NumPy, after pyversity's ``_xquad_select`` (float32 as pyversity)."""
    X = E / np.linalg.norm(E, axis=1, keepdims=True)
    rel = X @ (q / np.linalg.norm(q)).astype(np.float32)
    An = (A / np.linalg.norm(A, axis=1, keepdims=True)).astype(np.float32)
    P = np.clip(X @ An.T, 0.0, 1.0)
    if inferred:
        w = np.maximum(rel @ P, 0.0)
        w = w / (w.sum() + np.float32(1e-12))
    else:
        w = np.full(A.shape[0], 1.0 / A.shape[0], dtype=np.float32)
    R = np.ones(A.shape[0], dtype=np.float32)
    avail = np.ones(E.shape[0], dtype=bool)
    picks, remaining = [], budget
    while True:
        ok = avail & (costs <= remaining)
        if not ok.any():
            return np.array(picks, dtype=np.int64)
        score = lam * rel + (1.0 - lam) * (P @ (w * R))
        score[~ok] = -np.inf
        best = int(np.argmax(score))
        picks.append(best)
        avail[best] = False
        remaining -= costs[best]
        R *= 1.0 - P[best]


class VsNumPy(Benchmark):
    params = (sizes(1_000, 10_000), list(OURS))
    param_names = ["n", "strategy"]
    number = 1
    repeat = 1

    def setup(self, n, strategy):
        self.E, self.q, self.costs, self.budget = gaussian(n, 384)
        rng = np.random.default_rng(2)
        self.A = (self.q + 0.7 * rng.standard_normal((8, 384))).astype(np.float32)
        self.ours = lambda: OURS[strategy](self.E, self.q, self.costs, self.budget, lam=0.5, aspects=self.A)
        self.theirs = lambda: numpy_xquad(
            self.E, self.q, self.A, self.costs, self.budget, 0.5, inferred=strategy == "rxquad"
        )
        self.ours()  # JIT warm-up

    def time_ours(self, n, strategy):
        self.ours()

    def time_numpy(self, n, strategy):
        self.theirs()

    def track_speedup(self, n, strategy):
        theirs, mine = best_times(self.theirs, self.ours, repeat=21 if n <= 1_000 else 7)
        return theirs / mine

    track_speedup.unit = "x"

    def track_same_picks(self, n, strategy):
        """1 when both pick the same chunks in the same order (float32 against float64: may differ)."""
        return float(self.ours().tolist() == self.theirs().tolist())
