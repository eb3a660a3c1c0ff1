"""Budgeted MMR selection (SCWO): pick relevant, non-redundant chunks that fit.

At every step the chunk with the best key among those whose token cost fits
the remaining budget is taken (ties to the lowest index); selection stops when
nothing fits.  The MMR score of chunk ``i`` given the selected set ``S`` is::

    score(i, S) = lam * rel(i) - (1 - lam) * max_{j in S} sim(i, j)

with cosine similarities and ``max`` over the empty set equal to 0.  In the
default mode the key is the score; in the cost-aware mode it is the score
scaled by the chunk's cost (see *Cost-aware selection*).

Methods (all return exactly the same indices in the same order):

``"exact"``
    Every step scores every remaining chunk, keeping the running
    max-similarity vector (no ``n x n`` matrix).  ``O(n d)`` per pick.
``"lazy"``
    The spec's SCWO-fast lazy heap.  A chunk's stored key is an upper bound
    on its current key, so only chunks that reach the top of the heap are
    re-scored.  See *Lazy heap and negative similarities* below.
``"auto"``
    ``"lazy"``; it is faster than ``"exact"`` at every size we measured
    (``scwo bench``), so ``"exact"`` is kept as the cross-check.

Both run in the one MMR driver, :mod:`scwo_np.select._driver` (Numba, one
thread or many), which also holds the checklist for changing a kernel: this
module validates, converts and calls it.

Lazy heap and negative similarities
-----------------------------------
The spec claims the lazy heap is lossless because scores only decrease as
``S`` grows.  That is false for the first pick: with ``S`` empty the penalty is
``max(empty) = 0``, but after the first pick it is ``sim(i, first)``, which is
*negative* for chunks pointing away from it, so their scores *rise*.  A heap
keyed on relevance alone then returns a different (wrong) selection whenever
some similarity is negative.  From the second pick on, ``max`` over a growing
set can only grow, so scores really are non-increasing.  The fix used here:
take the first pick from relevance alone, compute every chunk's exact score
after it (one more pass over the embeddings, the same cost as ``E @ q``), and
run the lazy heap from there.  It is then lossless on every input, which the
property tests check against the plain reference.

Similarities are computed in the embeddings' precision with a fixed
summation order, then widened to float64 (see ``scwo_np._dot``), so the
methods, the batch API and the pure-Python reference agree to the last bit,
including on exact ties and duplicate rows.

Cost-aware selection
--------------------
``cost_aware=True`` ranks by ``v = score + shift`` scaled by
``c = max(cost, 1) ** cost_exponent``: ``v / c``, or ``v * c`` when ``v`` is
negative, so that of two chunks with the same score the shorter always ranks
first.

* ``cost_exponent < 1`` (default 0.25, ``shift=0``): a mild preference for
  short chunks *once half the budget is used*: until then the key is the
  plain score, so the most relevant chunks are picked on merit and cost only
  decides how the rest of the window is filled.  (Scaling from the first
  pick let a shorter, slightly less relevant chunk take the first slot and
  lost the answer paragraph in 5 of 93 contexts at 200 tokens on the FAQ
  questions of :func:`~scwo_np.datasets.load_faq`; now answer recall equals
  plain MMR's at 200-800 tokens on both halves.)  With a *fill guard*: when
  plain MMR's selection would use more of the budget, that selection is
  returned instead, so the mode never leaves the context emptier than plain
  MMR.  On the bundled sample's real queries (``scwo bench --cost-aware``;
  top-50 candidates, budgets of 400, 800 and 1,500 tokens) it finds the
  queried module as often as plain MMR on both halves of the queries, keeps
  the share of on-module tokens within 2 points, and fills the budget at
  least as well.  Use it when chunk lengths vary a lot and the budget is
  tight.  (In the lazy heap the switch re-keys every stored bound once.)
* ``cost_exponent=1, shift=1`` is the knapsack mode: value per token plus
  the best-singleton check, with the guarantee below.  It packs many tiny
  chunks (headings, one-liners) and on the same queries loses 6-20 points of
  module hits and 15-25 points of on-module tokens against plain MMR: use it
  only when the objective really is total relevance.  This was the default
  cost-aware mode before; the spec's "value per token" idea is kept there.

Guarantees
----------
* Plain MMR (``lam < 1``) is a heuristic.  Its per-pick score is not the
  marginal gain of any set function (the order of picks changes the total),
  so no approximation ratio applies; the spec's (1 - 1/e) claim does not hold.
* ``lam = 1`` is the 0/1 knapsack on relevance.  Plain greedy has no constant
  factor (one large relevant chunk can crowd out many).  The knapsack mode
  (``cost_aware=True, cost_exponent=1``: greedy by ``(rel + shift) / cost``
  plus the best-singleton check, ``shift >= 1`` so every value is
  non-negative) is a 1/2-approximation of ``max sum_{i in S} (rel_i + shift)``
  when all costs are positive.
* The budget is never exceeded, in any mode.
"""

from __future__ import annotations

import numba
import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import _dot
from .._registry import Registry
from ..validation import (
    MAX_BUDGET,
    MAX_COST,
    NORM_RANGE,
    check_budget,
    check_costs,
    check_embeddings,
    check_lam,
    check_ndim,
    check_nonnegative_float,
    check_queries,
    check_query,
    check_query_weights,
    check_row_norms,
    check_scores,
    check_unit_interval,
)
from ._auto import _rule
from ._driver import _first_pass, _first_pick, _from_first, _phase_exponent, _select

__all__ = ["mmr_select", "mmr_select_multi", "mmr_with_relevance", "MMR_METHODS"]

#: Rows per block of the fused first pass (see ``_driver._pass_one_worker``).
#: Read at call time, so tests can shrink it.
BLOCK = 128

#: Candidates first moved into the lazy heap (doubling at each refill).
#: A module attribute, read at call time, so tests can shrink it.
POOL = 256

_SCANS = {"auto": None, "exact": True, "lazy": None}

#: Registry of selection methods (``method=``): name -> the driver's ``scan`` argument
#: (None: the lazy heap; True: the exact scan); tests parametrise over it.
MMR_METHODS: Registry = Registry("method", _SCANS)

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_NORM_RANGE = {dt: NORM_RANGE[dt.name] for dt in _FLOATS}


def _threads(E: np.ndarray) -> int | None:
    """The driver's ``threads``: None (one thread) or the thread count, for a pass over ``E``."""
    return numba.get_num_threads() if _dot._nchunks(E) else None


def _drive(E, Q, w, costs, budget, lam, scan, cexp, shift):
    """``(picks, gains, ok)`` from the driver, :func:`~scwo_np.select._driver._select`, for the
    queries ``Q`` (weights ``w``, None for one query)."""
    lo, hi = _NORM_RANGE[E.dtype]
    return _select(
        E, Q[0], None if w is None else Q, w, costs, budget, lam, cexp, shift, scan, BLOCK, POOL,
        lo, hi, MAX_COST, _threads(E), _dot.PARALLEL_MIN_ELEMENTS,
    )  # fmt: skip


def _fast(E, q, costs, budget, lam, method, cexp, shift):
    """``(picks, gains)`` from the driver, or None for the validating path.

    Taken only when every argument already has the type the kernels use (or
    converts without any judgement, :func:`_fast_inputs`).  Everything the
    validating path checks is checked here or inside the driver; on any doubt
    this returns None and :func:`_run` validates from scratch, so errors are
    the same either way.  (The driver is called here, not through
    :func:`_drive`: a small input takes a few microseconds, a Python call a
    tenth of one.)
    """
    if type(method) is not str or method not in _SCANS:
        return None
    if not (isinstance(lam, float) and 0.0 <= lam <= 1.0):
        return None
    if not (isinstance(shift, float) and 0.0 <= shift < np.inf):
        return None
    inputs = _fast_inputs(E, q, costs, budget)
    if inputs is None:
        return None
    E, q, costs = inputs
    lo, hi = _NORM_RANGE[E.dtype]
    threads = numba.get_num_threads() if _dot._nchunks(E) else None
    picks, gains, ok = _select(
        E, q, None, None, costs, budget, float(lam), cexp, shift, _SCANS[method], BLOCK, POOL,
        lo, hi, MAX_COST, threads, _dot.PARALLEL_MIN_ELEMENTS,
    )  # fmt: skip
    return (picks, gains) if ok else None


def _fast_inputs(E, q, costs, budget):
    """``(E, q, costs)`` as the kernels take them, or None when that needs a judgement.

    ``E`` must already be a C-contiguous float32/float64 matrix with rows and
    columns, ``q`` one float vector of its length (converted to ``E``'s type),
    ``costs`` integers (list, tuple or array; converted to int64: wrapped values
    come out negative, and the kernels' checks reject them) and ``budget`` an
    int in range.  MMR's fast path and the strategies' preparation share it.
    """
    if type(E) is not np.ndarray or type(q) is not np.ndarray:
        return None
    dt = E.dtype
    if E.ndim != 2 or dt not in _FLOATS or not E.flags.c_contiguous:
        return None
    n, d = E.shape
    if n == 0 or d == 0:
        return None
    if q.shape != (d,) or q.dtype not in _FLOATS:
        return None
    if q.dtype != dt or not q.flags.c_contiguous:
        q = np.ascontiguousarray(q, dtype=dt)
    if type(costs) is not np.ndarray:
        if not isinstance(costs, list | tuple):
            return None
        costs = np.asarray(costs)
    if costs.shape != (n,) or costs.dtype.kind not in "iu":
        return None
    if costs.dtype != np.int64 or not costs.flags.c_contiguous:
        costs = costs.astype(np.int64)
    if type(budget) is not int or not 0 <= budget <= MAX_BUDGET:
        return None
    return E, q, costs


def _relevance(E, Q, w, costs, budget):
    """``(nrm, rel, ok)``: row norms and relevance by the driver's first pass (``lam = 1``), as
    MMR computes them, for the queries ``Q`` (weights ``w``, None for one query); ``ok`` as in
    :func:`~scwo_np.select._driver._select`."""
    lo, hi = _NORM_RANGE[E.dtype]
    nrm, rel, _, _, ok = _first_pass(
        E, Q[0], None if w is None else Q, w, costs, budget, 1.0, 0.0, 0.0, BLOCK, lo, hi, MAX_COST,
        _threads(E), _dot.PARALLEL_MIN_ELEMENTS,
    )  # fmt: skip
    return nrm, rel, ok


def _cost_exponent(cost_aware: object, cost_exponent: object) -> float:
    """The kernels' ``cexp``: 0.0 for plain MMR, else the cost exponent in (0, 1]."""
    if not isinstance(cost_aware, bool | np.bool_):
        raise TypeError(f"cost_aware must be True or False; got {cost_aware!r}.")
    r = check_unit_interval(cost_exponent, name="cost_exponent", meaning="the power of the token cost")
    if not cost_aware:
        return 0.0
    if r == 0.0:
        raise ValueError(
            "cost_exponent must be > 0 when cost_aware=True (0 would ignore the cost: plain MMR)."
        )
    return r


def _raise_row_norms(E: np.ndarray) -> None:
    """Raise the validation error for the row the driver refused (a zero, NaN, inf or out-of-range norm)."""
    check_row_norms(_dot.dots_norms(E, E[0])[1], E)
    raise AssertionError("the MMR driver refused rows that validation accepts")  # pragma: no cover


def _run(E, Q, w, costs, budget, lam, method, cexp, shift, return_gains):
    E = check_embeddings(E)
    n, dim = E.shape
    costs = check_costs(costs, n)
    budget = check_budget(budget)
    lam = check_lam(lam, auto=True)
    scan = MMR_METHODS.lookup(method)
    shift = check_nonnegative_float(shift, name="shift")
    if np.ndim(Q) == 2:
        Q = check_queries(Q, dim, dtype=E.dtype, name="query")
    else:
        Q = check_query(Q, dim, dtype=E.dtype).reshape(1, -1)
    if w is None and Q.shape[0] > 1:
        w = np.full(Q.shape[0], 1.0 / Q.shape[0])
    if n == 0:
        empty = np.empty(0, dtype=np.int64)
        return (empty, np.empty(0)) if return_gains else empty
    if lam == "auto":  # the same first pass at lam = 1 (no speculation), then the rule on its relevance
        nrm, rel, ok = _relevance(E, Q, w, costs, budget)
        if not ok:
            _raise_row_norms(E)
        lam = _rule(rel)
        picks, gains = _after_first(E, nrm, rel, costs, budget, lam, scan, cexp, shift)
    else:
        picks, gains, ok = _drive(E, Q, w, costs, budget, lam, scan, cexp, shift)
        if not ok:
            _raise_row_norms(E)
    return (picks, gains) if return_gains else picks


def _after_first(E, nrm, rel, costs, budget, lam, scan, cexp, shift):
    """The driver from given norms and relevance: the first pick, then every pick after it."""
    first = _first_pick(rel, costs, budget, lam, _phase_exponent(cexp, 0, budget), shift)
    if first < 0:
        return np.empty(0, dtype=np.int64), np.empty(0)
    return _from_first(
        E, nrm, rel, np.empty(0), costs, budget, lam, cexp, shift, scan, POOL, first, _threads(E)
    )


def mmr_select(
    embeddings: ArrayLike,
    query: ArrayLike,
    costs: ArrayLike,
    budget: int,
    *,
    lam: float | str = 0.7,
    method: str = "auto",
    cost_aware: bool = False,
    cost_exponent: float = 0.25,
    shift: float = 0.0,
    return_gains: bool = False,
) -> NDArray[np.int64] | tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Select chunks by budgeted Maximal Marginal Relevance.

    Parameters
    ----------
    embeddings : array_like, shape (n, d)
        One embedding per chunk, float32 or float64 (kept as given; other
        numbers become float64).  Similarities are computed in this
        precision (float32: good to about 1e-7, like BLAS).  Need not be
        normalised; no row may be zero, NaN or inf.
    query : array_like, shape (d,)
        Query embedding (non-zero), rounded to the embeddings' precision.
    costs : array_like of int, shape (n,)
        Token count of each chunk (non-negative whole numbers).
    budget : int
        Token budget; the selected costs never sum to more.
    lam : float or "auto", default 0.7
        Relevance/diversity trade-off in [0, 1]: 1 ranks by relevance only,
        0 by novelty only.  ``"auto"`` chooses it from the candidates' relevance
        (:func:`~scwo_np.select.auto_lam`: 0.7, or 0.9 when a group of them stands out).
    method : {"auto", "exact", "lazy"}
        Algorithm; all return identical results (see module docs).
    cost_aware : bool, default False
        Prefer shorter chunks: rank by ``v = score + shift`` scaled by
        ``c = max(cost, 1) ** cost_exponent`` (``v / c``, or ``v * c`` when
        ``v < 0``), so of two similar chunks the shorter wins and more fit.
        See *Cost-aware selection* in the module docs for when it helps.
    cost_exponent : float in (0, 1], default 0.25
        How strongly cost counts in the cost-aware mode.  0.25 (the
        default) stays within a point of plain MMR's answer recall on the
        bundled questions while filling the budget as well; 1 is value per
        token, which with ``shift=1`` is the knapsack mode (see below).
    shift : float, default 0.0
        Non-negative offset added to scores in the cost-aware mode.  With
        ``cost_exponent=1, shift=1`` every numerator is non-negative and the
        best-singleton check runs: the 1/2-approximation of the knapsack
        on ``rel + 1`` at ``lam = 1``.
    return_gains : bool, default False
        Also return the MMR score of each chunk at the moment it was picked.

    Returns
    -------
    indices : ndarray of int64
        Selected chunk indices, in pick order.
    gains : ndarray of float64
        Only with ``return_gains=True``.

    Raises
    ------
    ValueError, TypeError
        On malformed input, naming the argument and the fix.

    Examples
    --------
    Two near-duplicate chunks about the query and one about something else:
    MMR keeps one of the duplicates and spends the rest of the budget on the
    different chunk.

    >>> import numpy as np
    >>> E = np.array([[1.0, 0.1], [1.0, 0.12], [0.2, 1.0]])
    >>> q = np.array([1.0, 0.3])
    >>> mmr_select(E, q, costs=[100, 100, 100], budget=200, lam=0.5)
    array([1, 2])
    >>> mmr_select(E, q, costs=[100, 100, 100], budget=200, lam=1.0)
    array([1, 0])
    >>> idx, gains = mmr_select(E, q, [100, 100, 100], 200, lam=0.5, return_gains=True)
    >>> np.round(gains, 3)
    array([0.493, 0.079])
    """
    cexp = _cost_exponent(cost_aware, cost_exponent)
    fast = _fast(embeddings, query, costs, budget, lam, method, cexp, shift)
    if fast is not None:
        return fast if return_gains else fast[0]
    check_ndim(query, 1, name="query", what="one embedding (for several queries use mmr_select_multi)")
    return _run(embeddings, query, None, costs, budget, lam, method, cexp, shift, return_gains)


def mmr_select_multi(
    embeddings: ArrayLike,
    queries: ArrayLike,
    costs: ArrayLike,
    budget: int,
    *,
    weights: ArrayLike | None = None,
    lam: float | str = 0.7,
    method: str = "auto",
    cost_aware: bool = False,
    cost_exponent: float = 0.25,
    shift: float = 0.0,
    return_gains: bool = False,
) -> NDArray[np.int64] | tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Budgeted MMR for several queries at once (the spec's "multi-query SCWO").

    The relevance of chunk ``i`` is the weighted mean of its cosine similarity
    to each query, ``rel(i) = sum_j w_j cos(e_i, q_j)`` with ``sum_j w_j = 1``;
    maximising the sum of the per-query MMR scores picks the same chunks.
    With one query it returns exactly what :func:`mmr_select` returns.

    Parameters
    ----------
    embeddings : array_like, shape (n, d)
        One embedding per chunk, as in :func:`mmr_select`.
    queries : array_like, shape (m, d)
        One row per query (each non-zero).
    costs : array_like of int, shape (n,)
        Token count of each chunk.
    budget : int
        Token budget; the selected costs never sum to more.
    weights : array_like, shape (m,), optional
        Non-negative query weights, normalised to sum to 1; equal by default.
    lam : float or "auto", default 0.7
        Relevance/diversity trade-off in [0, 1], or ``"auto"`` (as in :func:`mmr_select`).
    method : {"auto", "exact", "lazy"}
        Algorithm; all return identical results.
    cost_aware : bool, default False
        Prefer shorter chunks, as in :func:`mmr_select`.
    cost_exponent : float in (0, 1], default 0.25
        How strongly cost counts in the cost-aware mode.
    shift : float, default 0.0
        Non-negative offset added to scores in the cost-aware mode.
    return_gains : bool, default False
        Also return the MMR score of each chunk at the moment it was picked.

    Returns
    -------
    indices : ndarray of int64
        Selected chunk indices, in pick order.
    gains : ndarray of float64
        Only with ``return_gains=True``.

    Examples
    --------
    >>> import numpy as np
    >>> E = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]])
    >>> Q = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> mmr_select_multi(E, Q, costs=[1, 1, 1], budget=2)
    array([1, 2])
    >>> mmr_select_multi(E, Q, costs=[1, 1, 1], budget=2, weights=[1.0, 0.0], lam=1.0)
    array([0, 1])
    """
    Q = check_ndim(queries, 2, name="queries", what="(n_queries, dim)")
    w = None
    if weights is not None:
        w = check_query_weights(weights, Q.shape[0])
    elif Q.shape[0] > 1:
        w = np.full(Q.shape[0], 1.0 / Q.shape[0])
    cexp = _cost_exponent(cost_aware, cost_exponent)
    return _run(embeddings, Q, w, costs, budget, lam, method, cexp, shift, return_gains)


def mmr_with_relevance(
    embeddings: ArrayLike,
    relevance: ArrayLike,
    costs: ArrayLike,
    budget: int,
    *,
    lam: float | str = 0.7,
    method: str = "auto",
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Budgeted MMR whose relevance is given, one value per row, instead of cosines to a query.

    The kernels of :func:`mmr_select` from its first pass on: ``relevance[i]`` replaces
    ``cos(e_i, q)`` and redundancy is still the cosine between rows, so the picks are
    exact and their costs never sum to more than ``budget``.  For relevance that is not a
    cosine to one vector: sentence selection scores a sentence by its own and its chunk's
    similarity to the query, HSCA's context fuses the signals of its map.

    Parameters
    ----------
    embeddings : array_like, shape (n, d)
        One non-zero row per item; their cosines are the redundancy.
    relevance : array_like, shape (n,)
        Each item's relevance (finite).
    costs : array_like of int, shape (n,)
        Token count of each item.
    budget : int
        Token budget; the selected costs never sum to more.
    lam : float or "auto", default 0.7
        Relevance/diversity trade-off in [0, 1], or ``"auto"`` (as in :func:`mmr_select`).
    method : {"auto", "exact", "lazy"}
        Algorithm; all return identical results.

    Returns
    -------
    indices : ndarray of int64
        Selected items, in pick order.
    gains : ndarray of float64
        The MMR score of each item at the moment it was picked.

    Examples
    --------
    >>> import numpy as np
    >>> E = np.array([[1.0, 0.0], [0.99, 0.1], [0.0, 1.0]])
    >>> picks, gains = mmr_with_relevance(E, [0.9, 0.8, 0.5], costs=[1, 1, 1], budget=2)
    >>> picks
    array([0, 2])
    """
    E = check_embeddings(embeddings)
    n = E.shape[0]
    rel = check_scores(relevance, n, name="relevance")
    costs = check_costs(costs, n)
    budget = check_budget(budget)
    lam = check_lam(lam, auto=True)
    scan = MMR_METHODS.lookup(method)
    if n == 0:
        return np.empty(0, dtype=np.int64), np.empty(0)
    if lam == "auto":
        lam = _rule(rel)
    _, nrm = _dot.dots_norms(E, E[0])
    check_row_norms(nrm, E)
    return _after_first(E, nrm, rel, costs, budget, lam, scan, 0.0, 0.0)
