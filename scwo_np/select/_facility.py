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
bound.  The floating-point gain is non-increasing too: every term
``a_j * max(s_ij - cover_j, 0)`` is, and they are summed in a fixed order (eight
lanes over the ground set, folded in halves; the reference sums the same way),
so the lazy greedy equals the plain greedy exactly, ties to the lowest index.

Cost.  The first gains take every cosine between a candidate and the *ground set*
(the candidates of positive relevance; the others weigh 0 and add exactly 0), in
4 x 4 register tiles of canonical dot products (:mod:`~scwo_np.select._gram`),
on every thread for large inputs.  When all these products fit in
``_gram.CACHE_MAX_BYTES`` (512 MB: n = m = 11,585 in float32) they are kept, the
symmetric ground block computed once for both halves, and each later evaluation
reads a row; beyond, rows are computed again when asked for, which is much
slower.  Measured at n = 10,000, d = 384 (2-core VM): 0.4-0.6 s, about the time
of one BLAS ``X @ X.T`` of the same data (0.36-0.94 s), against 2.6-4.5 s for
apricot-select's lazy facility location (which starts from that product).
"""

from __future__ import annotations

from functools import partial

import numpy as np
from numba import njit, prange
from numpy.typing import ArrayLike, NDArray

from .. import _dot
from .._config import JIT, PJIT
from ..validation import check_int, check_lam, check_row_norms
from . import _gram
from ._common import _cost_key, _sum8, check_cost_exponent, run_greedy
from ._ground import _spherical_kmeans, ground_weights
from ._heap import _full_heap, _pop, _sift_down

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
    ground: int | tuple[ArrayLike, ArrayLike] | None = None,
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
    ground : None, int or (centres, labels)
        What the picks should cover.  None (default): every candidate, each
        weighted by its relevance (the exact objective; ``O(n^2 d)``, for up
        to about 10,000 candidates).  An int ``k``: ``k`` cluster centres of
        the candidates (:func:`~scwo_np.select.cluster_ground`), each
        weighted by its members' relevance, ``O(n k d)``: for large ``n``, at
        a measured cost in objective value (module docs).  ``(centres,
        labels)``: centres from an earlier ``cluster_ground`` of the same
        candidates, reused across queries.
    return_gains : bool
        Also return each pick's gain ``f(S + i) - f(S)`` when it was taken.

    Returns
    -------
    indices : ndarray of int64
        Selected chunk indices, in pick order; their costs sum to at most ``budget``.
    gains : ndarray of float64
        Each pick's gain when it was picked; only with ``return_gains=True``.

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
    if ground is not None and not isinstance(ground, tuple):
        ground = _check_k(ground)
    kernel = partial(_facility, lam=lam, cexp=cexp, ground=ground)
    return run_greedy(embeddings, query, costs, budget, weights, return_gains, kernel)


def _check_k(k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise TypeError(
            f"ground must be None, a positive number of cluster centres or (centres, labels); got {k!r}."
        )
    return check_int(k, name="ground", low=1)


def _checked_clusters(ground, E, nrm):
    """``(centres, labels)`` for ``ground=k`` (clustered now) or as given (checked against ``E``)."""
    if isinstance(ground, int):
        return _spherical_kmeans(E, nrm, min(ground, E.shape[0]), 4, 0)
    if len(ground) != 2:
        raise ValueError("ground must be (centres, labels) as cluster_ground returns them.")
    C = np.ascontiguousarray(np.asarray(ground[0], dtype=np.float64), dtype=E.dtype)
    labels = np.asarray(ground[1])
    if C.ndim != 2 or C.shape[1] != E.shape[1] or C.shape[0] == 0:
        raise ValueError(f"ground centres must have shape (k, {E.shape[1]}); got {C.shape}.")
    if labels.shape != (E.shape[0],) or labels.dtype.kind not in "iu":
        raise ValueError(
            f"ground labels must be {E.shape[0]} whole numbers, one per candidate; got {labels.shape}."
        )
    if labels.size and (labels.min() < 0 or labels.max() >= C.shape[0]):
        raise ValueError(f"ground labels must lie in [0, {C.shape[0]}); cluster the same candidates again.")
    check_row_norms(_dot.dots_norms(C, C[0])[1], C, name="ground centres")
    return C, labels.astype(np.int64)


def _facility(E, nrm, rel, costs, budget, picks, gains, *, lam, cexp, ground):
    """The ground set, the first gains, then the lazy greedy."""
    a = np.maximum(rel, 0.0)
    if ground is None:  # every candidate of positive relevance (the others weigh 0)
        keep = np.flatnonzero(a > 0.0)
        G, gnrm, ga = _gram.ground_set(E, nrm, a, keep)
        D, drow = _gram.kept_products(E, G, keep)
    else:  # cluster centres, weighted by their members' relevance
        C, labels = _checked_clusters(ground, E, nrm)
        w = ground_weights(labels, a, C.shape[0])
        keep = np.flatnonzero(w > 0.0)
        G, ga = np.ascontiguousarray(C[keep]), w[keep]
        gnrm = _dot.dots_norms(G, G[0])[1] if G.shape[0] else np.empty(0)
        D, drow = _gram.kept_products(E, G, None)
    single = np.empty(E.shape[0])
    nch = _gram.nchunks(E.shape[0], G.shape[0], 1 if D.shape[0] else E.shape[1])
    if nch:
        _singles_parallel(E, nrm, D, drow, G, gnrm, a, ga, lam, single, nch)
    else:
        _singles_range(E, nrm, D, drow, G, gnrm, a, ga, lam, single, 0, -(-E.shape[0] // _gram.TILE))
    return _facility_lazy(E, nrm, D, drow, G, gnrm, a, ga, single, costs, budget, lam, cexp, picks, gains)


@njit(**JIT)
def _gain(dots, gnrm, ni, ga, cover, ai, lam, t):
    """``f(S + i) - f(S)`` from row ``i`` of the dot products with the ground set (``ni = |e_i|``).

    ``cover_j = max_{p in S} s_pj``; ``t`` is scratch of the ground set's size.
    The terms ``ga_j * max(s_ij - cover_j, 0)`` are formed in one vectorised
    pass (the cosine ``dots_j / (gnrm_j * ni)`` on the way), then summed in
    eight lanes folded in halves, the order of
    :func:`~scwo_np.select._common._dot64` that the reference uses: eight
    independent chains of additions instead of one.
    """
    m = dots.shape[0]
    for j in range(m):
        x = dots[j] / (gnrm[j] * ni) - cover[j]
        t[j] = ga[j] * (x if x > 0.0 else 0.0)
    return lam * ai + (1.0 - lam) * _sum8(t)


@njit(**JIT)
def _singles_range(E, nrm, D, drow, G, gnrm, a, ga, lam, single, b0, b1):
    """``single[i] = f({i})`` for the rows of blocks ``[b0, b1)`` (four rows each): from ``D`` when
    kept, else computed a tile at a time."""
    n = E.shape[0]
    cover = np.zeros(G.shape[0])
    t = np.empty(G.shape[0])
    buf = np.empty((0 if D.shape[0] else _gram.TILE, G.shape[0]), E.dtype)
    for b in range(b0, b1):
        i0 = b * _gram.TILE
        r = min(_gram.TILE, n - i0)
        if D.shape[0] == 0:
            _gram._dot_rows(E, i0, r, G, buf, 0)
        for u in range(r):
            dots = D[drow[i0 + u]] if D.shape[0] else buf[u]
            single[i0 + u] = _gain(dots, gnrm, nrm[i0 + u], ga, cover, a[i0 + u], lam, t)


@njit(**PJIT)
def _singles_parallel(E, nrm, D, drow, G, gnrm, a, ga, lam, single, nchunks):
    nb = (E.shape[0] + _gram.TILE - 1) // _gram.TILE
    for c in prange(nchunks):
        _singles_range(
            E, nrm, D, drow, G, gnrm, a, ga, lam, single, c * nb // nchunks, (c + 1) * nb // nchunks
        )


@njit(**JIT)
def _facility_lazy(E, nrm, D, drow, G, gnrm, a, ga, single, costs, budget, lam, cexp, picks, gains):
    n = E.shape[0]
    cover = np.zeros(G.shape[0])
    buf = np.empty(G.shape[0], E.dtype)
    t = np.empty(G.shape[0])
    stamp = np.zeros(n, np.int64)  # picks made when the key was computed
    keys = np.empty(n)
    for i in range(n):
        keys[i] = _cost_key(single[i], costs[i], cexp)
    hk, hi, size = _full_heap(keys)
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
            g = _gain(_gram.dots_of(E, D, drow, i, G, buf), gnrm, nrm[i], ga, cover, a[i], lam, t)
            hk[0] = _cost_key(g, costs[i], cexp)
            stamp[i] = count
            _sift_down(hk, hi, size, 0)
            continue
        g = (
            single[i]
            if count == 0
            else _gain(_gram.dots_of(E, D, drow, i, G, buf), gnrm, nrm[i], ga, cover, a[i], lam, t)
        )
        picks[count] = i
        gains[count] = g
        total += g
        count += 1
        remaining -= costs[i]
        size = _pop(hk, hi, size)
        dots = _gram.dots_of(E, D, drow, i, G, buf)  # the new pick's row: what it now covers
        for j in range(G.shape[0]):
            s = dots[j] / (gnrm[j] * nrm[i])
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
