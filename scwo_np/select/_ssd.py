"""Budgeted SSD (sliding spectrum decomposition), pyversity's definition, with a lazy heap.

Each chunk is its unit embedding with a constant 1 appended (the paper's bias
dimension, section 5.3), ``x_i = [e_i / |e_i|, 1]``; its score given the picks is::

    score(i, S) = lam * z_i + (1 - lam) * gamma * |r_i|

with ``z`` the relevance standardised over the candidates (``(rel - mean) / std``,
or ``rel - mean`` when all are equal) and ``r_i`` the part of ``x_i`` outside the
span of the picked ones (Gram-Schmidt in float64, the stabilised "SSD*" of the
paper as pyversity has it).  ``lam = 1`` is relevance alone (top-k, as
``mmr_select(..., lam=1)``).  pyversity's window defaults to the number of picks, so
nothing slides out of it: neither does it here, and then ``|r_i|`` can only
shrink as picks are added.  A stale score is therefore an upper bound and a lazy
heap re-scores only the candidates that reach its top, exactly as in
:mod:`~scwo_np.select._dpp`; each keeps its sum of squared projections.  A chunk
with at most ``1e-6`` of ``|x_i|^2 = 2`` outside the span has ``|r_i| = 0``.

Budget: the best-scoring chunk that fits is taken (``cost_exponent = r > 0``
scales the score by the cost as MMR's cost-aware mode does); ties go to the lowest
index; selection stops when nothing fits.  With no picks, ``|r_i| = sqrt(2)`` for
every chunk, so the first pick is the most relevant one (pyversity takes it by
relevance even at ``lam = 0``, where every score here is equal and the lowest
index wins).  SSD's objective has no approximation guarantee; it is a heuristic.
"""

from __future__ import annotations

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

__all__ = ["ssd_select"]

#: Squared norm outside the span (of ``|x|^2 = 2``) at or below which a chunk counts as inside it.
IN_SPAN = 2e-6


def ssd_select(
    embeddings: ArrayLike,
    query: ArrayLike,
    costs: ArrayLike,
    budget: int,
    *,
    weights: ArrayLike | None = None,
    lam: float = 0.7,
    gamma: float = 1.0,
    cost_exponent: float = 0.0,
    return_gains: bool = False,
) -> NDArray[np.int64] | tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Budgeted sliding spectrum decomposition (no sliding: every pick stays in the window).

    Parameters
    ----------
    embeddings, query, costs, budget
        As in :func:`~scwo_np.select.mmr_select`; ``query`` may also be several
        queries, shape ``(m, d)``: relevance is then the weighted mean of the
        cosines, as in :func:`~scwo_np.select.mmr_select_multi`.
    weights : array_like, shape (m,), optional
        Query weights (with several queries), normalised; equal by default.
    lam : float in [0, 1]
        Weight of the standardised relevance (pyversity's ``1 - diversity``).
    gamma : float > 0
        Scale of the novelty term (pyversity's ``gamma``).
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
    >>> E = np.array([[1.0, 0.0], [0.99, 0.1], [0.0, 1.0]])
    >>> ssd_select(E, [1.0, 0.1], costs=[1, 1, 1], budget=2, lam=0.3)
    array([1, 2])
    """
    lam = check_lam(lam)
    gamma = check_positive_float(gamma, name="gamma", meaning="the scale of the novelty term")
    cexp = check_cost_exponent(cost_exponent)
    if lam == 1.0:
        return top_k(embeddings, query, costs, budget, weights, cexp, return_gains)
    return run_greedy(
        embeddings, query, costs, budget, weights, return_gains,
        lambda E, nrm, rel, c, b, p, g: _ssd_lazy(E, nrm, _standardised(rel), c, b, lam, gamma, cexp, p, g),
    )  # fmt: skip


@njit(**JIT)
def _standardised(rel):
    """``(rel - mean) / std`` (population std), or ``rel - mean`` when it is 0."""
    mean, std = _mean_std(rel)
    out = np.empty(rel.shape[0])
    for i in range(rel.shape[0]):
        out[i] = (rel[i] - mean) / std if std > 0.0 else rel[i] - mean
    return out


@njit(**JIT)
def _score(E, nrm, z, i, U, t, acc, stamp, lam, gamma):
    """The score of chunk ``i`` against the first ``t`` basis vectors (its projections cached)."""
    d = E.shape[1]
    s = acc[i]
    for r in range(stamp[i], t):
        c = _dot_row64(E, i, U[r]) / nrm[i] + U[r, d]  # x_i . u_r, with x_i = [e_i / |e_i|, 1]
        s += c * c
    acc[i] = s
    stamp[i] = t
    left = 2.0 - s
    norm = np.sqrt(left) if left > IN_SPAN else 0.0
    return lam * z[i] + (1.0 - lam) * gamma * norm


@njit(**JIT)
def _ssd_lazy(E, nrm, z, costs, budget, lam, gamma, cexp, picks, gains):
    n, d = E.shape
    cap = min(n, d + 1) + 1
    U = np.empty((cap, d + 1))
    x = np.empty(d + 1)
    acc = np.zeros(n)
    stamp = np.zeros(n, np.int64)
    keys = np.empty(n)
    for i in range(n):
        keys[i] = _cost_key(lam * z[i] + (1.0 - lam) * gamma * np.sqrt(2.0), costs[i], cexp)
    hk, hi, size = _full_heap(keys)
    t = 0
    count = 0
    remaining = budget
    cmin = costs.min()
    while size > 0 and remaining >= cmin:
        i = hi[0]
        if costs[i] > remaining:
            size = _pop(hk, hi, size)
            continue
        if stamp[i] < t:
            hk[0] = _cost_key(_score(E, nrm, z, i, U, t, acc, stamp, lam, gamma), costs[i], cexp)
            _sift_down(hk, hi, size, 0)
            continue
        picks[count] = i
        gains[count] = _score(E, nrm, z, i, U, t, acc, stamp, lam, gamma)
        count += 1
        remaining -= costs[i]
        size = _pop(hk, hi, size)
        if t + 1 >= cap or 2.0 - acc[i] <= IN_SPAN:  # full span, or the pick adds no direction
            continue
        _unit_row(E, nrm, i, x)
        x[d] = 1.0
        _extend_basis(U, t, x)
        t += 1
    return count
