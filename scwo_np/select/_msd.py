"""Budgeted max-sum diversity (MSD), pyversity's definition under a token budget.

The score of chunk ``i`` given the selected set ``S`` is::

    score(i, S) = lam * rel(i) + (1 - lam) * sum_{j in S} (1 - clip(sim(i, j), -1, 1))

(relevance plus the summed cosine distance to everything already picked).  At
each step the best chunk whose cost fits the remaining budget is taken (with
``cost_exponent = r > 0`` the key is the score scaled by the cost as in MMR's
cost-aware mode); ties go to the lowest index; selection stops when nothing
fits.  With ``S`` empty the score is ``lam * rel``: the first pick is the most
relevant chunk (pyversity takes it by relevance even at ``lam = 0``, where
every score here is 0 and the lowest index wins).

Unlike MMR's penalty, the distance sum *grows* with ``S`` for every chunk, so no
stale score bounds the current one and there is no lazy shortcut: each pick
costs one pass over the candidates (their cosines with the new pick, computed
as MMR computes them, threaded for large inputs), fused with the choice of the
next pick.  The objective ``sum rel + sum of pairwise distances`` is not
submodular in general; the greedy is a heuristic (a 2-approximation holds for
the dispersion variant under a cardinality constraint, not with costs).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange
from numpy.typing import ArrayLike, NDArray

from .. import _dot
from .._config import JIT, PJIT
from ..validation import check_lam
from ._common import _cost_key, check_cost_exponent, run_greedy

__all__ = ["msd_select"]


def msd_select(
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
    """Budgeted max-sum diversity: relevance plus summed distance to the picks.

    Parameters
    ----------
    embeddings, query, costs, budget
        As in :func:`~scwo_np.select.mmr_select`; ``query`` may also be several
        queries, shape ``(m, d)``: relevance is then the weighted mean of the
        cosines, as in :func:`~scwo_np.select.mmr_select_multi`.
    weights : array_like, shape (m,), optional
        Query weights (with several queries), normalised; equal by default.
    lam : float in [0, 1]
        Weight of relevance (pyversity's ``1 - diversity``).
    cost_exponent : float in [0, 1]
        0 ranks by the score; ``r > 0`` scales it by ``max(cost, 1) ** r``.
    return_gains : bool
        Also return each pick's score at the moment it was taken.

    Returns
    -------
    indices : ndarray of int64
        Selected chunk indices, in pick order; their costs sum to at most ``budget``.
    gains : ndarray of float64
        Each pick's gain when it was picked; only with ``return_gains=True``.

    Examples
    --------
    The most relevant chunk first, then the one farthest from it rather than
    its near-copy:

    >>> import numpy as np
    >>> E = np.array([[1.0, 0.0], [0.99, 0.1], [0.0, 1.0]])
    >>> msd_select(E, [1.0, 0.1], costs=[1, 1, 1], budget=2, lam=0.3)
    array([1, 2])
    """
    lam = check_lam(lam)
    cexp = check_cost_exponent(cost_exponent)
    return run_greedy(
        embeddings, query, costs, budget, weights, return_gains,
        lambda E, nrm, rel, c, b, p, g: _msd_kernel(E, nrm, rel, c, b, lam, cexp, p, g, _dot._nchunks(E)),
    )  # fmt: skip


@njit(**JIT)
def _add_distances(E, b, nrm, dist, avail, start, stop):
    """``dist[i] += 1 - clip(cos(e_i, e_b))`` for the available rows of ``[start, stop)``, four rows
    at a time (four independent sums; the same bits as one row at a time)."""
    v = E[b]
    i = start
    while i + 4 <= stop:
        t = _dot._dot4r(E, i, v)
        for r in range(4):
            if avail[i + r]:
                s = t[r] / (nrm[i + r] * nrm[b])
                dist[i + r] += 1.0 - min(max(s, -1.0), 1.0)
        i += 4
    for j in range(i, stop):
        if avail[j]:
            s = _dot._dot_row(E, j, v) / (nrm[j] * nrm[b])
            dist[j] += 1.0 - min(max(s, -1.0), 1.0)


@njit(**PJIT)
def _add_distances_parallel(E, b, nrm, dist, avail, nchunks):
    n = E.shape[0]
    for c in prange(nchunks):
        _add_distances(E, b, nrm, dist, avail, c * n // nchunks, (c + 1) * n // nchunks)


@njit(**JIT)
def _msd_kernel(E, nrm, rel, costs, budget, lam, cexp, picks, gains, nchunks):
    n = E.shape[0]
    dist = np.zeros(n)  # summed cosine distance to the picks
    avail = np.ones(n, np.bool_)
    one_m = 1.0 - lam
    remaining = budget
    count = 0
    while True:
        best = -1
        bk = 0.0
        bs = 0.0
        for i in range(n):
            if avail[i] and costs[i] <= remaining:
                score = lam * rel[i] + one_m * dist[i]
                key = _cost_key(score, costs[i], cexp)
                if best < 0 or key > bk:
                    best, bk, bs = i, key, score
        if best < 0:
            return count
        picks[count] = best
        gains[count] = bs
        count += 1
        avail[best] = False
        remaining -= costs[best]
        if one_m != 0.0:
            if nchunks > 1:
                _add_distances_parallel(E, best, nrm, dist, avail, nchunks)
            else:
                _add_distances(E, best, nrm, dist, avail, 0, n)
