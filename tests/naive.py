"""Plain-Python reference implementations.

Slow and obvious on purpose: loops over Python floats, no NumPy in the logic.
Every fast function in scwo_np is compared against one of these, to the bit.
The similarity recipe is the one documented in ``scwo_np._dot``: float64,
element ``k`` into partial sum ``k % 8``, then a halving fold.
"""

from __future__ import annotations

import math

LANES = 8


def dot(x, y):
    """Canonical float64 dot product of two sequences."""
    acc = [0.0] * LANES
    for k in range(len(x)):
        acc[k % LANES] = acc[k % LANES] + float(x[k]) * float(y[k])
    w = LANES
    while w > 1:
        w //= 2
        for lane in range(w):
            acc[lane] = acc[lane] + acc[lane + w]
    return acc[0]


def norm(x):
    return math.sqrt(dot(x, x))


def cosine(x, y):
    return dot(x, y) / (norm(x) * norm(y))


def relevance(E, queries, weights=None):
    """``rel[i] = sum_j w_j cos(E[i], q_j)``, accumulated from 0.0 in query order."""
    m = len(queries)
    if weights is None:
        weights = [1.0] if m == 1 else [1.0 / m] * m
    rel = []
    for e in E:
        r = 0.0
        for q, w in zip(queries, weights, strict=True):
            r = r + w * (dot(e, q) / (norm(e) * norm(q)))
        rel.append(r)
    return rel


def mmr_select(E, queries, costs, budget, lam=0.7, weights=None, cost_aware=False, shift=1.0):
    """Textbook budgeted MMR greedy.  Returns (picks, gains) as Python lists."""
    rel = relevance(E, queries, weights)
    n = len(E)
    picks, gains = [], []
    remaining = budget
    while True:
        best, best_key, best_score = None, None, None
        for i in range(n):
            if i in picks or costs[i] > remaining:
                continue
            m = max((cosine(E[i], E[j]) for j in picks), default=0.0)
            score = lam * rel[i] - (1.0 - lam) * m
            key = (score + shift) / max(costs[i], 1) if cost_aware else score
            if best is None or key > best_key:
                best, best_key, best_score = i, key, score
        if best is None:
            break
        picks.append(best)
        gains.append(best_score)
        remaining -= costs[best]
    if cost_aware:
        best, best_val = None, None
        for i in range(n):
            if costs[i] <= budget:
                val = (lam * rel[i] - (1.0 - lam) * 0.0) + shift
                if best is None or val > best_val:
                    best, best_val = i, val
        total = 0.0
        for g in gains:
            total += g + shift
        if best is not None and best_val > total:
            return [best], [lam * rel[best] - (1.0 - lam) * 0.0]
    return picks, gains
