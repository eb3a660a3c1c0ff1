"""What every selection strategy starts from: validated arrays, row norms and relevance."""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from .. import _dot
from .._config import JIT
from ..validation import (
    check_budget,
    check_costs,
    check_embeddings,
    check_queries,
    check_query,
    check_query_weights,
    check_unit_interval,
)
from ._mmr import _fast_inputs, _raise_row_norms, _relevance


def prepare(
    embeddings: ArrayLike,
    query: ArrayLike,
    costs: ArrayLike,
    budget: object,
    weights: ArrayLike | None = None,
):
    """``(E, costs, budget, nrm, rel)``: checked inputs, row norms and cosine relevance.

    Relevance is computed as :func:`~scwo_np.select.mmr_select` computes it
    (canonical dot products, widened to float64), so every strategy ranks equal
    chunks alike; with several queries (``query`` of shape ``(m, d)``) it is the
    weighted mean of the cosines, as :func:`~scwo_np.select.mmr_select_multi`
    has it (``weights`` normalised to sum 1, equal by default).  ``nrm`` and
    ``rel`` are empty when there are no rows.  Inputs with one query that
    already have the kernels' types take one numba call with the checks inside
    (as MMR's fused path; threaded for large inputs); on any doubt the validating
    path runs and raises the precise error.
    """
    if weights is None:
        fast = _prepare_fast(embeddings, query, costs, budget)
        if fast is not None:
            return fast
    E = check_embeddings(embeddings)
    n, d = E.shape
    costs = check_costs(costs, n)
    budget = check_budget(budget)
    if np.ndim(query) == 2:
        Q = check_queries(query, d, dtype=E.dtype, name="query")
        w = query_weights(weights, Q.shape[0])
    else:
        if weights is not None:
            raise ValueError("weights apply to several queries; query is one embedding (pass shape (m, d)).")
        Q = check_query(query, d, dtype=E.dtype).reshape(1, -1)
        w = None
    if n == 0:
        return E, costs, budget, np.empty(0), np.empty(0)
    nrm, rel, ok = _relevance(E, Q, w, costs, budget)
    if not ok:
        _raise_row_norms(E)
    return E, costs, budget, nrm, rel


def query_weights(weights: ArrayLike | None, m: int) -> NDArray[np.float64]:
    """Non-negative query weights normalised to sum 1 (equal by default), as ``mmr_select_multi``."""
    if weights is None:
        return np.full(m, 1.0 / m) if m > 1 else np.ones(1)
    return check_query_weights(weights, m)


def top_k(embeddings, query, costs, budget, weights, cexp, return_gains):
    """Relevance alone (``lam = 1``): :func:`mmr_select` or, for several queries, ``mmr_select_multi``."""
    from ._mmr import mmr_select, mmr_select_multi

    kw = dict(lam=1.0, return_gains=return_gains, cost_aware=cexp > 0.0, cost_exponent=cexp or 0.25)
    if np.ndim(query) == 2:
        return mmr_select_multi(embeddings, query, costs, budget, weights=weights, **kw)
    if weights is not None:
        raise ValueError("weights apply to several queries; query is one embedding (pass shape (m, d)).")
    return mmr_select(embeddings, query, costs, budget, **kw)


@njit(**JIT)
def _cost_key(value, cost, cexp):
    """The ranking key of a gain: itself, or scaled by the cost as MMR's cost-aware mode does."""
    if cexp == 0.0:
        return value
    c = max(cost, 1) ** cexp if cexp != 1.0 else float(max(cost, 1))
    return value / c if value >= 0.0 else value * c


@njit(**JIT)
def _unit_row(E, nrm, i, out):
    """``out = E[i] / nrm[i]`` in float64."""
    for k in range(E.shape[1]):
        out[k] = np.float64(E[i, k]) / nrm[i]


@njit(**JIT)
def _extend_basis(U, t, x):
    """``U[t]``: ``x`` minus its projections on ``U[:t]`` (modified Gram-Schmidt, float64), normalised.

    ``x`` is overwritten.  DPP's and SSD's basis of the picks (SSD's rows carry the bias 1).
    """
    m = x.shape[0]
    for r in range(t):
        c = _dot64(U[r], x)
        for k in range(m):
            x[k] -= c * U[r, k]
    norm = np.sqrt(_dot64(x, x))
    for k in range(m):
        U[t, k] = x[k] / norm


@njit(**JIT)
def _dot64(a, b):
    """``a . b`` of two float64 vectors in eight lanes, folded in halves (as :func:`_dot_row64`).

    The order of ``tests/naive.dot`` in float64; eight independent sums instead
    of one chain of dependent additions, in one vector register.
    """
    return _dot._dotw1(a.reshape(1, a.shape[0]), 0, b)[0]


@njit(**JIT)
def _sum8(t):
    """``sum(t)`` in eight lanes (element ``k`` into lane ``k % 8``), folded in halves."""
    a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = 0.0
    m = t.shape[0]
    full = m - m % 8
    for k in range(0, full, 8):
        a0 += t[k]
        a1 += t[k + 1]
        a2 += t[k + 2]
        a3 += t[k + 3]
        a4 += t[k + 4]
        a5 += t[k + 5]
        a6 += t[k + 6]
        a7 += t[k + 7]
    rest = m - full
    if rest > 0:
        a0 += t[full]
    if rest > 1:
        a1 += t[full + 1]
    if rest > 2:
        a2 += t[full + 2]
    if rest > 3:
        a3 += t[full + 3]
    if rest > 4:
        a4 += t[full + 4]
    if rest > 5:
        a5 += t[full + 5]
    if rest > 6:
        a6 += t[full + 6]
    return ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7))


@njit(**JIT)
def _dot_row64(E, i, u):
    """``E[i] . u`` in float64 in eight lanes (element ``k`` into lane ``k % 8``), folded in halves.

    The order of ``tests/naive.dot`` in float64: fixed, so exact against it, and
    without one long chain of dependent additions (``scwo_np._dot._dotw1``:
    float32 rows are widened as they are loaded).
    """
    return _dot._dotw1(E, i, u)[0]


@njit(**JIT)
def _mean_std(x):
    """Mean and population standard deviation, summed in index order."""
    n = x.shape[0]
    mean = 0.0
    for i in range(n):
        mean += x[i]
    mean /= n
    var = 0.0
    for i in range(n):
        var += (x[i] - mean) * (x[i] - mean)
    return mean, np.sqrt(var / n)


def run_greedy(embeddings, query, costs, budget, weights, return_gains, kernel):
    """Prepare the inputs, then ``count = kernel(E, nrm, rel, costs, budget, picks, gains)``; the result.

    The shared tail of every greedy strategy: ``picks`` and ``gains`` are
    preallocated for ``n`` items, the kernel fills the first ``count``.
    """
    E, costs, budget, nrm, rel = prepare(embeddings, query, costs, budget, weights)
    n = E.shape[0]
    if n == 0:
        return empty_selection(return_gains)
    picks = np.empty(n, dtype=np.int64)
    gains = np.empty(n)
    count = kernel(E, nrm, rel, costs, budget, picks, gains)
    return as_result(picks, gains, count, return_gains)


def empty_selection(return_gains: bool):
    picks = np.empty(0, dtype=np.int64)
    return (picks, np.empty(0)) if return_gains else picks


def check_cost_exponent(value: object) -> float:
    """The cost exponent ``r`` in [0, 1] (0: rank by the gain itself)."""
    return check_unit_interval(value, name="cost_exponent", meaning="the power of the token cost")


def as_result(picks: NDArray[np.int64], gains: NDArray[np.float64], count: int, return_gains: bool):
    p = picks[:count].copy()
    return (p, gains[:count].copy()) if return_gains else p


def _prepare_fast(E, q, costs, budget):
    """``prepare``'s result for inputs that already have the kernels' types, or None."""
    inputs = _fast_inputs(E, q, costs, budget)
    if inputs is None:
        return None
    E, q, costs = inputs
    nrm, rel, ok = _relevance(E, q.reshape(1, -1), None, costs, budget)
    return (E, costs, budget, nrm, rel) if ok else None
