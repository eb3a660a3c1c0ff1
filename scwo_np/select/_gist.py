"""Budgeted GIST: relevance plus the max-min distance of the picks (Fahrbach et al. 2025).

GIST ("Greedy Independent Set Thresholding", Fahrbach, Ramalingam,
Zadimoghaddam, Ahmadian, Citovsky and DeSalvo, NeurIPS 2025) maximises::

    f(S) = lam * sum_{i in S} rel_i + (1 - lam) * div(S),
    div(S) = min_{i != j in S} dist(i, j)   (0 when |S| <= 1)

with ``dist(i, j) = |e_i/|e_i| - e_j/|e_j|| = sqrt(max(2 - 2 cos(e_i, e_j), 0))``,
the chordal distance of the unit vectors: a true metric (``1 - cos`` is not),
ordered as the cosine distance.  ``lam`` weighs relevance as in every strategy
here; the paper's ``g + lambda' div`` is ``lambda' = (1 - lam) / lam`` (times ``lam``).

The algorithm (the paper's Algorithm 1, under a token budget):

1. ``S``: the greedy with threshold 0, the best items by key that fit the budget
   (key: ``lam * rel``, or scaled by ``max(cost, 1) ** r`` with ``cost_exponent = r``);
2. the farthest pair of candidates whose costs fit together replaces ``S`` when its
   ``f`` is larger (the paper's diameter pair);
3. for every threshold ``d`` of ``{eps d_max / 2 * (1 + eps)^i} <= d_max``
   (``d_max``: the largest distance between two candidates that fit the budget
   alone; the thresholds computed by repeated multiplication), the greedy
   independent set of the threshold graph: repeatedly the best item by key that
   fits the remaining budget and lies at distance ``>= d`` from every pick,
   until none is left; it replaces ``S`` when its ``f`` is larger.

Ties go to the lowest index everywhere (keys, the farthest pair, and the first of
equal sets wins).  The utility is linear, so an item's gain never changes and
each greedy is one scan in key order (an item blocked or too large stays so).

Guarantee.  With unit costs (the budget a number of items), relevance ``>= 0``
(a monotone utility) and this metric, the paper proves ``f(S) >= (1/2 - eps)
OPT`` for GIST with any monotone submodular utility (its Theorem 3.1), and
``(2/3 - eps) OPT`` for a linear utility as here (Theorem 3.3).  Under a token
budget no constant factor is claimed: the threshold greedy is a knapsack
greedy, which can be arbitrarily far from the best set (one large chunk can
take the budget of many relevant small ones); the result is still the best of
all the sets the search builds, never over the budget.

Cost.  ``d_max`` and the farthest pair take every pairwise distance once (the
upper triangle in 4 x 4 tiles of canonical dot products, threaded): ``O(n^2 d)``,
as divsel's exact diameter.  Each threshold is one scan; the distances of a pick
to every candidate are computed once and shared by all thresholds (``8 n`` bytes for
each distinct pick: a few tens of MB at n = 10,000).  Measured at n = 10,000, d = 384,
20 picks (2-core VM, shared): 0.9-1.2 s; divsel 0.1's time over ours on the same
problem 1.2-1.8 in most runs, 0.8 under heavy load (asv ``select.gist.VsDivsel``); the
same picks and max-min distance.
"""

from __future__ import annotations

import math
from functools import partial

import numba
import numpy as np
from numba import njit, prange
from numpy.typing import ArrayLike, NDArray

from .. import _dot
from .._config import JIT, PJIT
from ..validation import check_lam, check_unit_interval
from . import _gram
from ._common import _cost_key, check_cost_exponent, run_greedy
from ._heap import _grown_rows

__all__ = ["gist_select"]


def gist_select(
    embeddings: ArrayLike,
    query: ArrayLike,
    costs: ArrayLike,
    budget: int,
    *,
    weights: ArrayLike | None = None,
    lam: float = 0.7,
    eps: float = 0.1,
    cost_exponent: float = 0.0,
    return_gains: bool = False,
) -> NDArray[np.int64] | tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Budgeted GIST max-min diversification: relevance plus the smallest distance between picks.

    Parameters
    ----------
    embeddings, query, costs, budget
        As in :func:`~scwo_np.select.mmr_select`; ``query`` may also be several
        queries, shape ``(m, d)`` (relevance: the weighted mean of the cosines).
    weights : array_like, shape (m,), optional
        Query weights (with several queries).
    lam : float in [0, 1]
        Weight of the relevance sum against the max-min distance.
    eps : float in (0, 1]
        Spacing of the distance thresholds (``1 + eps`` apart, from
        ``eps * d_max / 2``): smaller is closer to the bound and slower.
    cost_exponent : float in [0, 1]
        0 ranks items by ``lam * rel``; ``r > 0`` scales that by ``max(cost, 1) ** r``.
    return_gains : bool
        Also return each pick's share of the utility, ``lam * rel``.

    Returns
    -------
    indices : ndarray of int64
        Selected chunk indices, in pick order; their costs sum to at most ``budget``.
    gains : ndarray of float64
        Each pick's ``lam * rel``; only with ``return_gains=True``.

    Examples
    --------
    Two near-copies and a distant chunk: the set that keeps its picks apart wins.

    >>> import numpy as np
    >>> E = np.array([[1.0, 0.0], [0.99, 0.1], [0.0, 1.0]])
    >>> gist_select(E, [1.0, 0.2], costs=[1, 1, 1], budget=2, lam=0.5)
    array([0, 2])
    """
    lam = check_lam(lam)
    eps = check_unit_interval(eps, name="eps", meaning="the spacing of the distance thresholds")
    if eps == 0.0:
        raise ValueError("eps must be in (0, 1]; 0 would make the thresholds never grow.")
    cexp = check_cost_exponent(cost_exponent)
    kernel = partial(_gist, lam=lam, eps=eps, cexp=cexp)
    return run_greedy(embeddings, query, costs, budget, weights, return_gains, kernel)


def _gist(E, nrm, rel, costs, budget, picks, gains, *, lam, eps, cexp):
    """The candidates that fit, their key order, the diameter and the farthest pair, then the search."""
    fit = np.flatnonzero(costs <= budget)
    if fit.shape[0] == 0:
        return 0
    if fit.shape[0] < E.shape[0]:
        EV, nv, relv, cv = np.ascontiguousarray(E[fit]), nrm[fit], rel[fit], costs[fit]
    else:
        EV, nv, relv, cv = E, nrm, rel, costs
    keys = _keys(relv, cv, lam, cexp)
    order = np.argsort(-keys, kind="stable").astype(np.int64)
    dmax, pd, pi, pj = diameter(EV, nv, cv, budget)
    count = _search(EV, nv, relv, cv, budget, order, dmax, pi, pj, lam, eps, picks)
    sel = picks[:count].copy()
    picks[:count] = fit[sel]
    gains[:count] = lam * relv[sel]
    return count


@njit(**JIT)
def _keys(rel, costs, lam, cexp):
    out = np.empty(rel.shape[0])
    for i in range(rel.shape[0]):
        out[i] = _cost_key(lam * rel[i], costs[i], cexp)
    return out


@njit(**JIT)
def _dist(x, ni, nj):
    """The chordal distance of two rows from their canonical dot product ``x`` and norms."""
    return math.sqrt(max(2.0 - 2.0 * (x / (ni * nj)), 0.0))


@njit(**JIT)
def _before(d, i, j, bd, bi, bj):
    """Farther first, then the lower ``(i, j)``."""
    return d > bd or (d == bd and (i < bi or (i == bi and j < bj)))


@njit(**JIT)
def _pair(nrm, costs, budget, i, j, x, st):
    """Fold the pair ``(i < j)`` with dot product ``x`` into ``st = [dmax, pd, pi, pj]``."""
    dd = _dist(x, nrm[i], nrm[j])
    if dd > st[0]:
        st[0] = dd
    if costs[i] + costs[j] <= budget and (st[2] < 0 or _before(dd, i, j, st[1], st[2], st[3])):
        st[1] = dd
        st[2] = i
        st[3] = j


@njit(**JIT)
def _diameter_range(E, nrm, costs, budget, b0, b1, st):
    """Every pair ``i < j`` with ``i`` in the row blocks ``[b0, b1)``, in 4 x 4 tiles."""
    n = E.shape[0]
    T = _gram.TILE
    full = n - n % T
    for b in range(b0, b1):
        i0 = b * T
        if i0 >= full:  # the last, partial block
            for a in range(i0, n):
                for c in range(a + 1, n):
                    _pair(nrm, costs, budget, a, c, _dot._dot1(E, a, E[c])[0], st)
            continue
        for j0 in range(i0, full, T):
            t = _dot._dot4x4(E, i0, E, j0)
            for a in range(T):
                for c in range(T):
                    if j0 + c > i0 + a:
                        _pair(nrm, costs, budget, i0 + a, j0 + c, t[a * T + c], st)
        for a in range(i0, i0 + T):
            for c in range(full, n):
                _pair(nrm, costs, budget, a, c, _dot._dot1(E, a, E[c])[0], st)


@njit(**PJIT)
def _diameter_parallel(E, nrm, costs, budget, bounds, out):
    for c in prange(bounds.shape[0] - 1):
        _diameter_range(E, nrm, costs, budget, bounds[c], bounds[c + 1], out[c])


def diameter(E: np.ndarray, nrm: np.ndarray, costs: np.ndarray, budget: int) -> tuple[float, float, int, int]:
    """``(d_max, d, i, j)``: the largest pairwise distance, and the farthest pair ``i < j`` whose costs fit
    ``budget`` together (``i = j = -1`` when none does).  Unvalidated; threaded for large inputs."""
    n, d = E.shape
    nb = -(-n // _gram.TILE)
    threads = numba.get_num_threads()
    if nb > 1 and n * n * d // 2 >= _gram.PARALLEL_MIN_MACS and threads > 1:
        work = np.cumsum(nb - np.arange(nb))
        parts = min(8 * threads, nb)
        bounds = np.searchsorted(work, work[-1] * np.arange(parts + 1) / parts).astype(np.int64)
        bounds[0], bounds[-1] = 0, nb
        bounds = np.unique(bounds)
        out = np.zeros((bounds.shape[0] - 1, 4))
        out[:, 2:] = -1.0
        _diameter_parallel(E, nrm, costs, budget, bounds, out)
    else:
        out = np.array([[0.0, 0.0, -1.0, -1.0]])
        _diameter_range(E, nrm, costs, budget, 0, nb, out[0])
    dmax, pd, pi, pj = 0.0, 0.0, -1, -1
    for r in out.tolist():
        dmax = max(dmax, r[0])
        if r[2] >= 0 and (pi < 0 or _before(r[1], int(r[2]), int(r[3]), pd, pi, pj)):
            pd, pi, pj = r[1], int(r[2]), int(r[3])
    return dmax, pd, pi, pj


@njit(**JIT)
def _row(E, nrm, p, out):
    """``out[j] = dist(p, j)`` for every row ``j``, four rows at a time."""
    n = E.shape[0]
    v = E[p]
    j = 0
    while j + 4 <= n:
        t = _dot._dot4r(E, j, v)
        for r in range(4):
            out[j + r] = _dist(t[r], nrm[j + r], nrm[p])
        j += 4
    for k in range(j, n):
        out[k] = _dist(_dot._dot_row(E, k, v), nrm[k], nrm[p])


@njit(**JIT)
def _greedy(E, nrm, costs, budget, order, t, cmin, slot, rows, used, blocked, sel):
    """The greedy independent set at threshold ``t`` into ``sel``: ``(count, rows, used)``."""
    n = E.shape[0]
    for j in range(n):
        blocked[j] = False
    count = 0
    remaining = budget
    for k in range(n):
        if remaining < cmin:
            break
        v = order[k]
        if blocked[v] or costs[v] > remaining:
            continue
        sel[count] = v
        count += 1
        remaining -= costs[v]
        if t > 0.0:
            if slot[v] < 0:
                if used == rows.shape[0]:
                    rows = _grown_rows(rows, used, 2 * used)
                _row(E, nrm, v, rows[used])
                slot[v] = used
                used += 1
            r = rows[slot[v]]
            for j in range(n):
                if r[j] < t:
                    blocked[j] = True
    return count, rows, used


@njit(**JIT)
def _value(E, nrm, rel, sel, count, lam):
    """``f`` of the first ``count`` of ``sel``: ``lam * sum rel`` (in pick order) plus ``(1 - lam) * div``."""
    s = 0.0
    for a in range(count):
        s += rel[sel[a]]
    div = 0.0
    if count > 1:
        div = np.inf
        for a in range(count):
            for b in range(a + 1, count):
                i, j = sel[a], sel[b]
                dd = _dist(_dot._dot_row(E, j, E[i]), nrm[i], nrm[j])
                if dd < div:
                    div = dd
    return lam * s + (1.0 - lam) * div


@njit(**JIT)
def _search(E, nrm, rel, costs, budget, order, dmax, pi, pj, lam, eps, picks):
    """Algorithm 1: the threshold-0 greedy, the farthest pair, every threshold; the best set into ``picks``."""
    n = E.shape[0]
    cmin = costs.min()
    slot = np.full(n, -1, np.int64)
    rows = np.empty((min(n, 16), n))
    used = 0
    blocked = np.zeros(n, np.bool_)
    sel = np.empty(n, np.int64)
    best, rows, used = _greedy(E, nrm, costs, budget, order, 0.0, cmin, slot, rows, used, blocked, picks)
    fbest = _value(E, nrm, rel, picks, best, lam)
    if pi >= 0:
        rank = np.empty(n, np.int64)
        for k in range(n):
            rank[order[k]] = k
        sel[0], sel[1] = (pi, pj) if rank[pi] < rank[pj] else (pj, pi)
        f = _value(E, nrm, rel, sel, 2, lam)
        if f > fbest:
            fbest, best = f, 2
            picks[0], picks[1] = sel[0], sel[1]
    if dmax > 0.0:
        t = eps * dmax / 2.0
        while t <= dmax:
            count, rows, used = _greedy(E, nrm, costs, budget, order, t, cmin, slot, rows, used, blocked, sel)
            f = _value(E, nrm, rel, sel, count, lam)
            if f > fbest:
                fbest, best = f, count
                for a in range(count):
                    picks[a] = sel[a]
            t *= 1.0 + eps
    return best
