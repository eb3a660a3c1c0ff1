"""Budgeted DPP: greedy MAP of a quality x similarity kernel, with a lazy heap.

The kernel is ``L[i, j] = w_i * cos(e_i, e_j) * w_j`` with quality
``w_i = exp(beta * z_i)``, ``z`` the relevance standardised over the candidates
(``(rel - mean) / (std + 1e-12)``) and ``beta = scale * lam`` (pyversity's
``beta = (1 - diversity) * scale``).  The greedy MAP step of Chen, Zhang and
Zhou (2018, "Fast Greedy MAP Inference for Determinantal Point Process") takes
the item with the largest ``d_i^2 = det(L[S+i]) / det(L[S])``, the part of its
weighted vector outside the span of the picked ones:

    d_i^2 = w_i^2 * (1 - sum_t (u_t . x_i)^2),   x_i = e_i / |e_i|

where ``u_1, u_2, ...`` is the orthonormal basis (Gram-Schmidt, float64) of the
picked items' unit vectors.  Chen et al. update every ``d_i^2`` after each pick
(one pass over all candidates per pick, as pyversity does); here a candidate's
``d_i^2`` is recomputed only when it reaches the top of a heap.  That is exact:
``d_i^2`` can only shrink as the span grows, and so can its floating-point value
(each step adds a non-negative square to the sum, and subtraction and scaling
by a non-negative number are monotone), so a stale value is an upper bound; a
recomputed candidate that still beats every bound in the heap is the true
maximum.  Ties go to the lowest index.  The cost is one pass over the
embeddings for relevance plus ``O(t * d)`` per re-scored candidate.

Budget: at each step the best candidate that fits the remaining tokens is
taken; with ``cost_exponent = r > 0`` the key is ``d_i^2 / max(cost, 1)^r``.
A candidate whose unit vector has at most ``1e-6`` of its squared norm outside
the span counts as inside it (gain 0; rows are unit only to rounding), and selection stops when nothing fits
or no candidate adds volume (the determinant would not grow).  ``lam = 1`` is relevance alone: top-k by relevance, exactly
``mmr_select(..., lam=1)`` (pyversity's ``diversity = 0``).

Guarantee: log-determinant greedy MAP has none in general (``log det`` is
submodular but not monotone and can be negative); it is a heuristic, as MMR.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from .._config import JIT
from ..validation import check_lam, check_positive_float
from ._common import (
    _cost_key,
    _dot_row64,
    _extend_basis,
    _mean_std,
    _unit_row,
    check_cost_exponent,
    run_greedy,
    top_k,
)
from ._heap import _full_heap, _pop, _sift_down

__all__ = ["dpp_select"]

#: A unit row with at most this much squared norm outside the span counts as inside it (gain 0):
#: rows are unit only to rounding (float32 norms: about 1e-7), so an exact copy of a pick would
#: otherwise keep a residual of that size and be "picked" for nothing.  About 0.06 degrees.
IN_SPAN = 1e-6


def dpp_select(
    embeddings: ArrayLike,
    query: ArrayLike,
    costs: ArrayLike,
    budget: int,
    *,
    weights: ArrayLike | None = None,
    lam: float = 0.7,
    scale: float = 1.0,
    cost_exponent: float = 0.0,
    return_gains: bool = False,
) -> NDArray[np.int64] | tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Budgeted greedy MAP of a DPP whose quality follows relevance.

    Parameters
    ----------
    embeddings, query, costs, budget
        As in :func:`~scwo_np.select.mmr_select`; ``query`` may also be several
        queries, shape ``(m, d)``: relevance is then the weighted mean of the
        cosines, as in :func:`~scwo_np.select.mmr_select_multi`.
    weights : array_like, shape (m,), optional
        Query weights (with several queries), normalised; equal by default.
    lam : float in [0, 1]
        Weight of relevance in the quality (``beta = scale * lam``); 0 is pure
        diversity, 1 relevance alone (top-k by relevance).
    scale : float > 0
        Multiplies ``beta`` (pyversity's ``scale``).
    cost_exponent : float in [0, 1]
        0 ranks by ``d_i^2``; ``r > 0`` by ``d_i^2 / max(cost, 1) ** r``.
    return_gains : bool
        Also return ``d_i^2`` of each pick (the determinant ratio it brought).

    Returns
    -------
    indices : ndarray of int64
        Selected chunk indices, in pick order; their costs sum to at most ``budget``.
    gains : ndarray of float64
        Each pick's gain when it was picked; only with ``return_gains=True``.

    Examples
    --------
    Two copies of the best chunk: after the first, the copy adds no volume, and
    the different chunk is taken.

    >>> import numpy as np
    >>> E = np.array([[1.0, 0.1], [1.0, 0.1], [0.1, 1.0]])
    >>> dpp_select(E, [1.0, 0.2], costs=[1, 1, 1], budget=3, lam=0.5)
    array([0, 2])
    """
    lam = check_lam(lam)
    scale = check_positive_float(scale, name="scale", meaning="a multiplier of the quality exponent")
    cexp = check_cost_exponent(cost_exponent)
    if lam == 1.0:
        return top_k(embeddings, query, costs, budget, weights, cexp, return_gains)
    return run_greedy(
        embeddings, query, costs, budget, weights, return_gains,
        lambda E, nrm, rel, c, b, p, g: _dpp_lazy(E, nrm, _quality_squared(rel, scale * lam), c, b, cexp, p, g),
    )  # fmt: skip


@njit(**JIT)
def _quality_squared(rel, beta):
    """``w_i^2`` with ``w_i = exp(beta * (rel_i - mean) / (std + 1e-12))``."""
    mean, std = _mean_std(rel)
    out = np.empty(rel.shape[0])
    for i in range(rel.shape[0]):
        # math.exp is libm's, as the reference's (np.exp in plain Python is NumPy's own)
        w = math.exp(beta * ((rel[i] - mean) / (std + 1e-12)))
        out[i] = w * w
    return out


@njit(**JIT)
def _residual(E, nrm, w2, i, U, t, acc, stamp):
    """``d_i^2`` against the first ``t`` basis vectors.

    ``acc[i]`` holds ``sum (u_r . x_i)^2`` over the first ``stamp[i]`` of them
    (accumulated in basis order, so the sum is the same whenever it is asked
    for); only the newer ones are dotted.  ``u_r . x_i = (u_r . e_i) / |e_i|``.
    """
    s = acc[i]
    for r in range(stamp[i], t):
        c = _dot_row64(E, i, U[r]) / nrm[i]
        s += c * c
    acc[i] = s
    stamp[i] = t
    left = 1.0 - s  # the squared norm outside the span (of a unit row; see IN_SPAN)
    return w2[i] * left if left > IN_SPAN else 0.0


@njit(**JIT)
def _dpp_lazy(E, nrm, w2, costs, budget, cexp, picks, gains):
    n, d = E.shape
    cap = min(n, d) + 1
    U = np.empty((cap, d))
    e = np.empty(d)
    acc = np.zeros(n)  # sum of squared projections so far (see _residual)
    stamp = np.zeros(n, np.int64)  # basis vectors included in acc
    keys = np.empty(n)
    for i in range(n):
        keys[i] = _cost_key(w2[i], costs[i], cexp)
    hk, hi, size = _full_heap(keys)
    t = 0
    count = 0
    remaining = budget
    cmin = costs.min()
    while size > 0 and remaining >= cmin:  # else nothing fits (and draining the heap costs n log n)
        i = hi[0]
        if costs[i] > remaining:  # never fits again: the budget only shrinks
            size = _pop(hk, hi, size)
            continue
        if stamp[i] < t:  # stale: re-score and let the heap decide again
            hk[0] = _cost_key(_residual(E, nrm, w2, i, U, t, acc, stamp), costs[i], cexp)
            _sift_down(hk, hi, size, 0)
            continue
        if hk[0] <= 0.0:  # fresh and the best: nothing left adds volume
            break
        picks[count] = i
        gains[count] = _residual(E, nrm, w2, i, U, t, acc, stamp)
        count += 1
        remaining -= costs[i]
        size = _pop(hk, hi, size)
        if t + 1 >= cap:  # the span is the whole space: every residual is 0
            break
        _unit_row(E, nrm, i, e)
        _extend_basis(U, t, e)
        t += 1
    return count
