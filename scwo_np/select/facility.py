"""Budgeted facility location: relevance-weighted coverage of the candidates (Lin & Bilmes 2011).

The objective of a selection ``S`` is::

    f(S) = lam * sum_{i in S} a_i + (1 - lam) * sum_j a_j * max_{i in S} s_ij

with ``a = max(rel, 0)`` and ``s_ij = max(cos(e_i, e_j), 0)``: the picks should be
relevant themselves and stand for every candidate, the relevant ones most (Lin &
Bilmes, "A Class of Submodular Functions for Document Summarization", 2011: a
coverage term plus a relevance term).  ``f`` is monotone submodular (non-negative
weights, a facility-location sum and a modular sum), so:

* the greedy that adds the item of largest gain ``f(S + i) - f(S)`` reaches at
  least ``1 - 1/e`` of the best set of the same size (Nemhauser, Wolsey and Fisher
  1978) when all costs are equal and the budget counts items;
* under a token budget, the greedy by gain per token (``cost_exponent=1``) and the
  best single item, whichever is better, reach at least ``(1 - 1/e) / 2`` of the
  best set that fits (Khuller, Moss and Naor 1999; Leskovec et al. 2007): with
  ``cost_exponent > 0`` the best single item is checked at the end.

Gains only shrink as ``S`` grows (``max`` over more picks), so the greedy is run
lazily (Minoux 1978): a heap holds each candidate's last gain, an upper bound on
its current one; the top is re-evaluated, and taken when it still beats every
bound.  The floating-point gain is non-increasing too (every term
``a_j * max(s_ij - cover_j, 0)`` is, and they are summed in index order), so the
lazy greedy equals the plain greedy exactly, ties to the lowest index.  The first
gains take all pairwise cosines (``O(n^2 d)``), kept in one matrix up to 2,896
candidates (each later evaluation is then ``O(n)``) and recomputed row by row
beyond, so this dense form suits retrieved sets (up to a few thousand candidates).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from .._config import JIT
from ..validation import check_lam
from ._common import (
    _cosine_row,
    _cost_key,
    _heapify,
    _pop,
    _sift_down,
    check_cost_exponent,
    cosine_cache,
    run_greedy,
)

__all__ = ["facility_location_select"]


def facility_location_select(
    embeddings: ArrayLike,
    query: ArrayLike,
    costs: ArrayLike,
    budget: int,
    *,
    weights: ArrayLike | None = None,
    lam: float = 0.7,
    cost_exponent: float = 0.0,
    return_gains: bool = False,
) -> NDArray[np.int64] | tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Budgeted greedy of relevance-weighted facility location (lazy, exact).

    Parameters
    ----------
    embeddings, query, costs, budget
        As in :func:`~scwo_np.select.mmr_select`; ``query`` may also be several
        queries, shape ``(m, d)`` (relevance: the weighted mean of the cosines).
    weights : array_like, shape (m,), optional
        Query weights (with several queries).
    lam : float in [0, 1]
        Weight of the picks' own relevance against their coverage of the others.
    cost_exponent : float in [0, 1]
        0 ranks by gain; ``r > 0`` by gain / ``max(cost, 1) ** r``, and the best
        single item is checked at the end (``r = 1``: the budgeted guarantee).
    return_gains : bool
        Also return each pick's gain ``f(S + i) - f(S)`` when it was taken.

    Examples
    --------
    Two groups of near-copies: the picks stand for both groups, not for one twice.

    >>> import numpy as np
    >>> E = np.array([[1.0, 0.0], [0.99, 0.05], [0.0, 1.0], [0.05, 0.99]])
    >>> facility_location_select(E, [1.0, 0.8], costs=[1, 1, 1, 1], budget=2)
    array([1, 3])
    """
    lam = check_lam(lam)
    cexp = check_cost_exponent(cost_exponent)
    return run_greedy(
        embeddings, query, costs, budget, weights, return_gains,
        lambda E, nrm, rel, c, b, p, g: _facility_lazy(
            E, nrm, cosine_cache(E, nrm), np.maximum(rel, 0.0), c, b, lam, cexp, p, g
        ),
    )  # fmt: skip


@njit(**JIT)
def _gain(E, nrm, S, a, i, cover, lam):
    """``f(S + i) - f(S)`` given ``cover_j = max_{p in S} s_pj``: one row of cosines."""
    g = 0.0
    for j in range(E.shape[0]):
        s = _cosine_row(E, nrm, S, i, j)
        if s > cover[j]:
            g += a[j] * (s - cover[j])
    return lam * a[i] + (1.0 - lam) * g


@njit(**JIT)
def _facility_lazy(E, nrm, S, a, costs, budget, lam, cexp, picks, gains):
    n = E.shape[0]
    cover = np.zeros(n)
    single = np.empty(n)  # f({i}), the first gains
    stamp = np.zeros(n, np.int64)  # picks made when the key was computed
    hk = np.empty(n)
    hi = np.empty(n, np.int64)
    for i in range(n):
        single[i] = _gain(E, nrm, S, a, i, cover, lam)
        hk[i] = _cost_key(single[i], costs[i], cexp)
        hi[i] = i
    size = n
    _heapify(hk, hi, size)
    count = 0
    remaining = budget
    cmin = costs.min()
    total = 0.0
    while size > 0 and remaining >= cmin:
        i = hi[0]
        if costs[i] > remaining:
            size = _pop(hk, hi, size)
            continue
        if stamp[i] < count:
            hk[0] = _cost_key(_gain(E, nrm, S, a, i, cover, lam), costs[i], cexp)
            stamp[i] = count
            _sift_down(hk, hi, size, 0)
            continue
        g = _gain(E, nrm, S, a, i, cover, lam)
        picks[count] = i
        gains[count] = g
        total += g
        count += 1
        remaining -= costs[i]
        size = _pop(hk, hi, size)
        for j in range(n):  # the new pick's row: what it now covers
            s = _cosine_row(E, nrm, S, i, j)
            if s > cover[j]:
                cover[j] = s
    if cexp > 0.0:  # the best single item that fits, if it beats the whole greedy set
        best = -1
        for i in range(n):
            if costs[i] <= budget and (best < 0 or single[i] > single[best]):
                best = i
        if best >= 0 and single[best] > total:
            picks[0] = best
            gains[0] = single[best]
            return 1
    return count
