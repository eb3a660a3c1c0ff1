"""Budgeted xQuAD and RxQuAD: relevance plus the coverage of the query's aspects (pyversity's definitions).

A query with several intents has *aspects* ``a_1 .. a_m`` (sub-query vectors)
with weights ``w_c`` summing to 1.  The score of chunk ``i`` given the picks
``S`` is (Santos, Macdonald and Ounis 2010, "Exploiting Query Reformulations for
Web Search Result Diversification"; the form of pyversity's main branch)::

    score(i, S) = lam * rel_i + (1 - lam) * sum_c P_ic * (w_c * R_c),
    P_ic = clip(cos(e_i, a_c), 0, 1),   R_c = prod_{j in S} (1 - P_jc)

``P_ic`` is how well chunk ``i`` serves aspect ``c`` (pyversity: the clipped
cosine, no softmax), ``R_c`` how much of aspect ``c`` is still uncovered
(1 before the first pick); ``lam`` is pyversity's ``1 - diversity``.  The terms
are summed in aspect order.

Aspects: given as ``aspects=`` (an ``(m, d)`` array, rounded to the embeddings'
type) with ``aspect_weights=`` (normalised; equal by default), or derived from the
candidates when ``aspects`` is None (8) or a number ``k``: the ``k`` centres of
a spherical k-means of the candidates (:func:`~scwo_np.select.cluster_ground`,
seed 0, four rounds: deterministic), each weighted by the relevance mass of its
members (``sum max(rel_j, 0)``; equal weights when no candidate is relevant).

RxQuAD (``rxquad_select``) is the same greedy with the weights *inferred* from the
retrieval, as pyversity defines it: ``w_c = max(sum_i rel_i P_ic, 0)``
normalised (all 0, and the score is relevance alone, when no aspect gets a
positive mass).  Vargas, Castells and Vallet (2012) define RxQuAD differently
(a relevance-based novelty ``prod (1 - alpha P)`` with graded relevance); we
follow pyversity, whose users are the ones who compare, and whose form keeps the
objective submodular (below) so that the lazy greedy is exact.

The objective ``lam sum_S rel + (1 - lam) sum_c w_c (1 - prod_S (1 - P_jc))``
is submodular (a probabilistic coverage plus a modular term), so a chunk's
score only shrinks as ``S`` grows, and in floating point too: ``R_c`` is
multiplied by numbers in [0, 1], every term is a product of non-negative
factors, and they are summed in a fixed order.  The greedy is therefore run
lazily (a heap of stale scores, each an upper bound; the top re-scored until a
fresh one leads), exactly as the plain greedy.  Budget: at each step the best
chunk that fits the remaining tokens (``cost_exponent = r > 0``: the score
scaled by ``max(cost, 1) ** r``, as in MMR's cost-aware mode); ties to the
lowest index; it stops when nothing fits.  With unit costs and non-negative
relevance the greedy reaches ``1 - 1/e`` of the best set of its size; no bound
is claimed under a token budget.  ``lam = 1`` is relevance alone (top-k).

Cost: one pass over the embeddings for relevance, the ``n x m`` cosines with the
aspects in 4 x 4 tiles (threaded for large inputs), then ``O(m)`` per re-scored
candidate.
"""

from __future__ import annotations

from functools import partial

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from .. import _dot
from .._config import JIT
from ..validation import check_int, check_lam, check_queries, check_query_weights, check_row_norms
from . import _gram
from ._common import _cost_key, check_cost_exponent, run_greedy, top_k
from ._ground import _spherical_kmeans, ground_weights
from ._heap import _full_heap, _pop, _sift_down

__all__ = ["rxquad_select", "xquad_select"]

#: Aspects derived from the candidates when none are given: this many k-means centres.
DEFAULT_ASPECTS = 8


def xquad_select(
    embeddings: ArrayLike,
    query: ArrayLike,
    costs: ArrayLike,
    budget: int,
    *,
    weights: ArrayLike | None = None,
    lam: float = 0.7,
    aspects: ArrayLike | int | None = None,
    aspect_weights: ArrayLike | None = None,
    cost_exponent: float = 0.0,
    return_gains: bool = False,
) -> NDArray[np.int64] | tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Budgeted xQuAD: relevance plus the coverage of the query's aspects, lazy and exact.

    Parameters
    ----------
    embeddings, query, costs, budget
        As in :func:`~scwo_np.select.mmr_select`; ``query`` may also be several
        queries, shape ``(m, d)`` (relevance: the weighted mean of the cosines).
    weights : array_like, shape (m,), optional
        Query weights (with several queries).
    lam : float in [0, 1]
        Weight of relevance (pyversity's ``1 - diversity``).
    aspects : None, int or array_like of shape (k, d)
        The query's aspects (sub-query vectors); None derives 8 from the
        candidates, an int ``k`` derives ``k`` (spherical k-means centres; module docs).
    aspect_weights : array_like, shape (k,), optional
        Each given aspect's weight (normalised; equal by default).  Derived
        aspects are weighted by their members' relevance.
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
    A query with two intents: after the best chunk for the first, the second
    intent's chunk beats the near-copy of the first.

    >>> import numpy as np
    >>> E = np.array([[1.0, 0.0], [0.99, 0.1], [0.0, 1.0]])
    >>> A = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> xquad_select(E, [1.0, 0.3], costs=[1, 1, 1], budget=2, lam=0.3, aspects=A)
    array([1, 2])
    """
    lam = check_lam(lam)
    cexp = check_cost_exponent(cost_exponent)
    aspects = _check_aspect_arg(aspects)
    if aspect_weights is not None and not isinstance(aspects, _Vectors):
        raise ValueError("aspect_weights weigh given aspects; pass aspects as an array of vectors too.")
    if lam == 1.0:
        return top_k(embeddings, query, costs, budget, weights, cexp, return_gains)
    kernel = partial(
        _xquad, lam=lam, cexp=cexp, aspects=aspects, aspect_weights=aspect_weights, inferred=False
    )
    return run_greedy(embeddings, query, costs, budget, weights, return_gains, kernel)


def rxquad_select(
    embeddings: ArrayLike,
    query: ArrayLike,
    costs: ArrayLike,
    budget: int,
    *,
    weights: ArrayLike | None = None,
    lam: float = 0.7,
    aspects: ArrayLike | int | None = None,
    cost_exponent: float = 0.0,
    return_gains: bool = False,
) -> NDArray[np.int64] | tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Budgeted RxQuAD: xQuAD with the aspects' weights inferred from relevance, lazy and exact.

    The weight of aspect ``c`` is ``max(sum_i rel_i * P_ic, 0)``, normalised
    (pyversity's definition; module docs).

    Parameters
    ----------
    embeddings, query, costs, budget, weights, lam, aspects, cost_exponent, return_gains
        As in :func:`xquad_select`.

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
    >>> A = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> rxquad_select(E, [1.0, 0.8], costs=[1, 1, 1], budget=2, lam=0.3, aspects=A)
    array([1, 2])

    When nothing relevant serves the second aspect, it weighs (almost) nothing:

    >>> rxquad_select(E, [1.0, 0.0], costs=[1, 1, 1], budget=2, lam=0.3, aspects=A)
    array([0, 1])
    """
    lam = check_lam(lam)
    cexp = check_cost_exponent(cost_exponent)
    aspects = _check_aspect_arg(aspects)
    if lam == 1.0:
        return top_k(embeddings, query, costs, budget, weights, cexp, return_gains)
    kernel = partial(_xquad, lam=lam, cexp=cexp, aspects=aspects, aspect_weights=None, inferred=True)
    return run_greedy(embeddings, query, costs, budget, weights, return_gains, kernel)


def _check_aspect_arg(aspects: object):
    """None or an int -> a number of centres; anything else -> a float64 array (checked later against d)."""
    if aspects is None:
        return DEFAULT_ASPECTS
    if isinstance(aspects, bool):
        raise TypeError(f"aspects must be None, a number of aspects or an array of vectors; got {aspects!r}.")
    if isinstance(aspects, int | np.integer):
        return check_int(aspects, name="aspects", low=1)
    if isinstance(aspects, str | bytes) or np.ndim(aspects) == 0:
        raise TypeError(f"aspects must be None, a number of aspects or an array of vectors; got {aspects!r}.")
    return _Vectors(aspects)


class _Vectors:
    """Aspect vectors as given (checked against the embeddings' dimension once it is known)."""

    def __init__(self, rows: object) -> None:
        self.rows = rows


def _aspects(E, nrm, rel, aspects, aspect_weights, inferred):
    """``(A, anrm, w)``: aspect rows in ``E``'s type, their norms, and their weights (None when inferred)."""
    if isinstance(aspects, int):
        A, labels = _spherical_kmeans(E, nrm, min(aspects, E.shape[0]), 4, 0)
        anrm = _dot.dots_norms(A, A[0])[1]
        if inferred:
            return A, anrm, None
        return A, anrm, _normalised(ground_weights(labels, np.maximum(rel, 0.0), A.shape[0]), equal=True)
    A = check_queries(aspects.rows, E.shape[1], dtype=E.dtype, name="aspects")
    anrm = _dot.dots_norms(A, A[0])[1]
    check_row_norms(anrm, A, name="aspects")
    if inferred:
        return A, anrm, None
    if aspect_weights is None:
        return A, anrm, np.full(A.shape[0], 1.0 / A.shape[0])
    return A, anrm, check_query_weights(aspect_weights, A.shape[0], name="aspect_weights")


def _normalised(w: np.ndarray, equal: bool) -> np.ndarray:
    """``w / sum(w)`` (summed in order); when the sum is 0: equal weights or zeros."""
    total = 0.0
    for x in w.tolist():
        total += x
    if total > 0.0:
        return w / total
    return np.full(w.shape[0], 1.0 / w.shape[0]) if equal else np.zeros(w.shape[0])


def _xquad(E, nrm, rel, costs, budget, picks, gains, *, lam, cexp, aspects, aspect_weights, inferred):
    """The aspects, every chunk's ``P_ic``, (RxQuAD) the inferred weights, then the lazy greedy."""
    A, anrm, w = _aspects(E, nrm, rel, aspects, aspect_weights, inferred)
    D, _ = _gram.products(E, A)
    P = _probabilities(D, nrm, anrm)
    if inferred:
        w = _normalised(_inferred_mass(P, rel), equal=False)
    return _xquad_lazy(
        P, rel, np.ascontiguousarray(w, dtype=np.float64), costs, budget, lam, cexp, picks, gains
    )


@njit(**JIT)
def _probabilities(D, nrm, anrm):
    """``P[i, c] = clip(D[i, c] / (anrm[c] * nrm[i]), 0, 1)`` in float64."""
    n, m = D.shape
    P = np.empty((n, m))
    for i in range(n):
        for c in range(m):
            P[i, c] = min(max(D[i, c] / (anrm[c] * nrm[i]), 0.0), 1.0)
    return P


@njit(**JIT)
def _inferred_mass(P, rel):
    """``max(sum_i rel_i * P_ic, 0)``, summed in index order (RxQuAD's weights before normalising)."""
    n, m = P.shape
    w = np.zeros(m)
    for i in range(n):
        for c in range(m):
            w[c] += rel[i] * P[i, c]
    for c in range(m):
        w[c] = max(w[c], 0.0)
    return w


@njit(**JIT)
def _score(P, i, wr, rel_i, lam):
    """``lam rel_i + (1 - lam) sum_c P_ic wr_c`` with ``wr_c = w_c R_c``, summed in aspect order."""
    s = 0.0
    for c in range(P.shape[1]):
        s += P[i, c] * wr[c]
    return lam * rel_i + (1.0 - lam) * s


@njit(**JIT)
def _xquad_lazy(P, rel, w, costs, budget, lam, cexp, picks, gains):
    n, m = P.shape
    R = np.ones(m)
    wr = w.copy()  # w_c * R_c
    stamp = np.zeros(n, np.int64)
    keys = np.empty(n)
    for i in range(n):
        keys[i] = _cost_key(_score(P, i, wr, rel[i], lam), costs[i], cexp)
    hk, hi, size = _full_heap(keys)
    count = 0
    remaining = budget
    cmin = costs.min()
    while size > 0 and remaining >= cmin:
        i = hi[0]
        if costs[i] > remaining:  # never fits again: the budget only shrinks
            size = _pop(hk, hi, size)
            continue
        if stamp[i] < count:  # stale: re-score and let the heap decide again
            hk[0] = _cost_key(_score(P, i, wr, rel[i], lam), costs[i], cexp)
            stamp[i] = count
            _sift_down(hk, hi, size, 0)
            continue
        picks[count] = i
        gains[count] = _score(P, i, wr, rel[i], lam)
        count += 1
        remaining -= costs[i]
        size = _pop(hk, hi, size)
        for c in range(m):
            R[c] *= 1.0 - P[i, c]
            wr[c] = w[c] * R[c]
    return count
