"""Budgeted cover: relevance plus a concave coverage of the candidates, pyversity's definition.

The score of chunk ``i`` given the picks ``S`` is::

    score(i, S) = lam * rel_i + (1 - lam) * sum_j ((C_j + s_ij) ** gamma - C_j ** gamma)

with ``s_ij = clip(cos(e_i, e_j), 0, 1)``, ``C_j = sum_{p in S} s_pj`` (how much
candidate ``j`` is covered already) and ``0 < gamma <= 1`` (pyversity's ``cover``;
its ``theta`` is ``lam``).  The coverage ``sum_j (C_j) ** gamma`` is a concave
function of a modular one, so the objective is submodular and every gain can only
shrink as ``S`` grows: the greedy is run lazily (re-scoring only what reaches the
top of a heap), exactly as the plain greedy.  Floating-point powers are not
exactly monotone, so the heap stores every key through the strictly increasing
``x + 1e-9 |x|``: a stale key keeps a margin far above any rounding, and keys
keep their order and their ties.  Ties go to the lowest index; ``lam = 1`` is
relevance alone (top-k).  With unit costs and non-negative relevance the greedy
reaches ``1 - 1/e`` of the best set of its size.  The first scores take all
pairwise cosines (``O(n^2 d)``), kept in one matrix up to 2,896 candidates (then
each evaluation is ``O(n)``) and recomputed row by row beyond.
"""

from __future__ import annotations

from functools import partial

import numpy as np
from numba import njit, prange
from numpy.typing import ArrayLike, NDArray

from .._config import JIT, PJIT
from ..validation import check_lam, check_unit_interval
from . import _gram
from ._common import _cost_key, _sum8, check_cost_exponent, run_greedy, top_k
from ._heap import _full_heap, _pop, _sift_down

__all__ = ["cover_select"]


def cover_select(
    embeddings: ArrayLike,
    query: ArrayLike,
    costs: ArrayLike,
    budget: int,
    *,
    weights: ArrayLike | None = None,
    lam: float = 0.7,
    gamma: float = 0.5,
    cost_exponent: float = 0.0,
    return_gains: bool = False,
) -> NDArray[np.int64] | tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Budgeted greedy of relevance plus concave coverage (pyversity's ``cover``), lazy and exact.

    Parameters
    ----------
    embeddings, query, costs, budget
        As in :func:`~scwo_np.select.mmr_select`; ``query`` may also be several
        queries, shape ``(m, d)`` (relevance: the weighted mean of the cosines).
    weights : array_like, shape (m,), optional
        Query weights (with several queries).
    lam : float in [0, 1]
        Weight of relevance (pyversity's ``1 - diversity``).
    gamma : float in (0, 1]
        Concavity of the coverage: lower values favour covering new candidates.
    cost_exponent : float in [0, 1]
        0 ranks by the score; ``r > 0`` scales it by ``max(cost, 1) ** r``.
    return_gains : bool
        Also return each pick's score when it was taken.

    Returns
    -------
    indices : ndarray of int64
        Selected chunk indices, in pick order; their costs sum to at most ``budget``.
    gains : ndarray of float64
        Each pick's gain when it was picked; only with ``return_gains=True``.

    Examples
    --------
    >>> import numpy as np
    >>> E = np.array([[1.0, 0.0], [0.99, 0.05], [0.0, 1.0], [0.05, 0.99]])
    >>> cover_select(E, [1.0, 0.3], costs=[1, 1, 1, 1], budget=2, lam=0.3)
    array([1, 3])
    """
    lam = check_lam(lam)
    gamma = check_unit_interval(gamma, name="gamma", meaning="the concavity of the coverage")
    if gamma == 0.0:
        raise ValueError("gamma must be in (0, 1]; 0 would make every coverage the same.")
    cexp = check_cost_exponent(cost_exponent)
    if lam == 1.0:
        return top_k(embeddings, query, costs, budget, weights, cexp, return_gains)
    kernel = partial(_cover, lam=lam, gamma=gamma, cexp=cexp)
    return run_greedy(embeddings, query, costs, budget, weights, return_gains, kernel)


def _cover(E, nrm, rel, costs, budget, picks, gains, *, lam, gamma, cexp):
    """Every candidate's first score (all pairwise cosines, in tiles), then the lazy greedy."""
    n = E.shape[0]
    D, drow = _gram.kept_products(E, E, np.arange(n))
    first = np.empty(n)
    nch = _gram.nchunks(n, n, 1 if D.shape[0] else E.shape[1])
    if nch:
        _firsts_parallel(E, nrm, D, drow, rel, lam, gamma, first, nch)
    else:
        _firsts_range(E, nrm, D, drow, rel, lam, gamma, first, 0, -(-n // _gram.TILE))
    return _cover_lazy(E, nrm, D, drow, rel, first, costs, budget, lam, gamma, cexp, picks, gains)


@njit(**JIT)
def _power(x, gamma):
    """``x ** gamma``; the square root when ``gamma = 0.5`` (the default: a vector instruction, not a call)."""
    return np.sqrt(x) if gamma == 0.5 else x**gamma


@njit(**JIT)
def _score(dots, nrm, ni, cov, covp, gamma, t, rel_i, lam):
    """The score of a candidate from its row of dot products (``ni`` its norm); ``covp[j] = cov[j] ** gamma``.

    The terms ``(cov_j + s_ij) ** gamma - covp_j`` (0 where ``s_ij = 0``) are
    formed in one pass into the scratch ``t``, then summed in eight lanes, as
    the reference does.
    """
    if gamma == 0.5:  # the default: one loop of square roots the compiler can vectorise
        for j in range(dots.shape[0]):
            s = min(max(dots[j] / (nrm[j] * ni), 0.0), 1.0)
            t[j] = np.sqrt(cov[j] + s) - covp[j] if s > 0.0 else 0.0
    else:
        for j in range(dots.shape[0]):
            s = min(max(dots[j] / (nrm[j] * ni), 0.0), 1.0)
            t[j] = (cov[j] + s) ** gamma - covp[j] if s > 0.0 else 0.0
    return lam * rel_i + (1.0 - lam) * _sum8(t)


@njit(**JIT)
def _stored(key):
    """The heap's key: strictly increasing in ``key``, with a margin over rounding for stale bounds."""
    return key + 1e-9 * abs(key)


@njit(**JIT)
def _firsts_range(E, nrm, D, drow, rel, lam, gamma, first, b0, b1):
    """The scores with nothing picked, for the rows of blocks ``[b0, b1)`` (four rows each)."""
    n = E.shape[0]
    zero = np.zeros(n)
    t = np.empty(n)
    buf = np.empty((0 if D.shape[0] else _gram.TILE, n), E.dtype)
    for b in range(b0, b1):
        i0 = b * _gram.TILE
        r = min(_gram.TILE, n - i0)
        if D.shape[0] == 0:
            _gram._dot_rows(E, i0, r, E, buf, 0)
        for u in range(r):
            dots = D[drow[i0 + u]] if D.shape[0] else buf[u]
            first[i0 + u] = _score(dots, nrm, nrm[i0 + u], zero, zero, gamma, t, rel[i0 + u], lam)


@njit(**PJIT)
def _firsts_parallel(E, nrm, D, drow, rel, lam, gamma, first, nchunks):
    nb = (E.shape[0] + _gram.TILE - 1) // _gram.TILE
    for c in prange(nchunks):
        _firsts_range(E, nrm, D, drow, rel, lam, gamma, first, c * nb // nchunks, (c + 1) * nb // nchunks)


@njit(**JIT)
def _cover_lazy(E, nrm, D, drow, rel, first, costs, budget, lam, gamma, cexp, picks, gains):
    n = E.shape[0]
    cov = np.zeros(n)
    covp = np.zeros(n)  # cov ** gamma
    t = np.empty(n)
    buf = np.empty(n, E.dtype)
    stamp = np.zeros(n, np.int64)
    keys = np.empty(n)
    for i in range(n):
        keys[i] = _stored(_cost_key(first[i], costs[i], cexp))
    hk, hi, size = _full_heap(keys)
    count = 0
    remaining = budget
    cmin = costs.min()
    while size > 0 and remaining >= cmin:
        i = hi[0]
        if costs[i] > remaining:
            size = _pop(hk, hi, size)
            continue
        if stamp[i] < count:
            sc = _score(_gram.dots_of(E, D, drow, i, E, buf), nrm, nrm[i], cov, covp, gamma, t, rel[i], lam)
            hk[0] = _stored(_cost_key(sc, costs[i], cexp))
            stamp[i] = count
            _sift_down(hk, hi, size, 0)
            continue
        picks[count] = i
        if count == 0:
            gains[count] = first[i]
        else:
            dots = _gram.dots_of(E, D, drow, i, E, buf)
            gains[count] = _score(dots, nrm, nrm[i], cov, covp, gamma, t, rel[i], lam)
        count += 1
        remaining -= costs[i]
        size = _pop(hk, hi, size)
        dots = _gram.dots_of(E, D, drow, i, E, buf)
        for j in range(n):
            s = min(max(dots[j] / (nrm[j] * nrm[i]), 0.0), 1.0)
            if s > 0.0:
                cov[j] += s
                covp[j] = _power(cov[j], gamma)
    return count
