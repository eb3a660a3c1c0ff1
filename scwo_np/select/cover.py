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

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from .._config import JIT
from ..validation import check_lam, check_unit_interval
from ._common import (
    _cosine_row,
    _cost_key,
    _heapify,
    _pop,
    _sift_down,
    check_cost_exponent,
    cosine_cache,
    run_greedy,
    top_k,
)

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
    return run_greedy(
        embeddings, query, costs, budget, weights, return_gains,
        lambda E, nrm, rel, c, b, p, g: _cover_lazy(E, nrm, cosine_cache(E, nrm), rel, c, b, lam, gamma, cexp, p, g),
    )  # fmt: skip


@njit(**JIT)
def _power(x, gamma):
    """``x ** gamma``; the square root when ``gamma = 0.5`` (the default: a vector instruction, not a call)."""
    return np.sqrt(x) if gamma == 0.5 else x**gamma


@njit(**JIT)
def _score(E, nrm, S, rel, i, cov, covp, lam, gamma):
    """The score of ``i``; ``covp[j] = cov[j] ** gamma``; a candidate ``i`` does not reach adds exactly 0."""
    g = 0.0
    for j in range(E.shape[0]):
        s = min(max(_cosine_row(E, nrm, S, i, j), 0.0), 1.0)
        if s > 0.0:
            g += _power(cov[j] + s, gamma) - covp[j]
    return lam * rel[i] + (1.0 - lam) * g


@njit(**JIT)
def _stored(key):
    """The heap's key: strictly increasing in ``key``, with a margin over rounding for stale bounds."""
    return key + 1e-9 * abs(key)


@njit(**JIT)
def _cover_lazy(E, nrm, S, rel, costs, budget, lam, gamma, cexp, picks, gains):
    n = E.shape[0]
    cov = np.zeros(n)
    covp = np.zeros(n)  # cov ** gamma
    stamp = np.zeros(n, np.int64)
    hk = np.empty(n)
    hi = np.empty(n, np.int64)
    for i in range(n):
        hk[i] = _stored(_cost_key(_score(E, nrm, S, rel, i, cov, covp, lam, gamma), costs[i], cexp))
        hi[i] = i
    size = n
    _heapify(hk, hi, size)
    count = 0
    remaining = budget
    cmin = costs.min()
    while size > 0 and remaining >= cmin:
        i = hi[0]
        if costs[i] > remaining:
            size = _pop(hk, hi, size)
            continue
        if stamp[i] < count:
            hk[0] = _stored(_cost_key(_score(E, nrm, S, rel, i, cov, covp, lam, gamma), costs[i], cexp))
            stamp[i] = count
            _sift_down(hk, hi, size, 0)
            continue
        picks[count] = i
        gains[count] = _score(E, nrm, S, rel, i, cov, covp, lam, gamma)
        count += 1
        remaining -= costs[i]
        size = _pop(hk, hi, size)
        for j in range(n):
            s = min(max(_cosine_row(E, nrm, S, i, j), 0.0), 1.0)
            if s > 0.0:
                cov[j] += s
                covp[j] = _power(cov[j], gamma)
    return count
