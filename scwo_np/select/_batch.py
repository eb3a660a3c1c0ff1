"""Many selection problems in one call: one query per candidate set.

Batch reranking jobs select from thousands of small retrieved sets.  Calling
:func:`~scwo_np.mmr_select` in a Python loop pays the interpreter and
dispatch overhead per set; :func:`select_batch` runs every set inside one
Numba kernel, spread over threads, and returns exactly what
:func:`~scwo_np.mmr_select` returns for each set.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from .. import _dot
from .._config import JIT
from .._parallel import run_chunks
from ..validation import (
    NORM_RANGE,
    as_array,
    check_budget,
    check_costs,
    check_embeddings,
    check_lam,
    check_nonnegative_float,
    check_queries,
    check_row_norms,
)
from ._auto import AUTO_LOOKUP, _auto_lam
from ._driver import _accumulate_rel, _finish_cost_aware, _lazy_serial, _row_norm
from ._front import STRATEGIES
from ._mmr import POOL, _cost_exponent

__all__ = ["select_batch", "BatchSelection"]


class _Picks(NamedTuple):
    indices: NDArray[np.int64]
    offsets: NDArray[np.int64]
    gains: NDArray[np.float64]


class BatchSelection(_Picks):
    """Ragged result of :func:`select_batch`: a named tuple ``(indices, offsets, gains)`` and ``lams``.

    ``indices[offsets[b]:offsets[b + 1]]`` are the picks of problem ``b``, as
    indices *within* that problem's candidate set, in pick order; ``gains``
    are their MMR scores at pick time.  ``lams`` is an attribute, not a fourth
    element, so ``indices, offsets, gains = select_batch(...)`` still unpacks.

    Parameters
    ----------
    indices : ndarray of int64
        Every problem's picks, one after another.
    offsets : ndarray of int64, shape (B + 1,)
        Where each problem's picks start and end in ``indices``.
    gains : ndarray of float64
        Each pick's score when it was picked.
    lams : ndarray of float64, shape (B,), optional
        Each problem's ``lam``: the one ``lam="auto"`` chose for it, else the one given.

    Examples
    --------
    >>> import numpy as np
    >>> res = BatchSelection(np.array([2, 0, 1]), np.array([0, 2, 3]), np.array([0.9, 0.5, 0.7]))
    >>> res.split()
    [array([2, 0]), array([1])]
    >>> indices, offsets, gains = res
    """

    lams: NDArray[np.float64] | None

    def __new__(
        cls,
        indices: NDArray[np.int64],
        offsets: NDArray[np.int64],
        gains: NDArray[np.float64],
        lams: NDArray[np.float64] | None = None,
    ) -> BatchSelection:
        self = super().__new__(cls, indices, offsets, gains)
        self.lams = lams
        return self

    def __getnewargs__(self) -> tuple:  # pickles (Dask) keep lams
        return (*self, self.lams)

    def split(self) -> list[NDArray[np.int64]]:
        """The picks of every problem as a list of arrays.

        Returns
        -------
        list of ndarray of int64
            Problem ``b``'s picks at position ``b``.

        Examples
        --------
        >>> import numpy as np
        >>> BatchSelection(np.array([2, 0, 1]), np.array([0, 2, 2, 3]), np.zeros(3)).split()
        [array([2, 0]), array([], dtype=int64), array([1])]
        """
        return [self.indices[a:b] for a, b in zip(self.offsets[:-1], self.offsets[1:], strict=True)]


def _batch_by_set(E, starts, stops, Q, c, bud, strategy, lam, options) -> BatchSelection:
    """Every set through the strategy's own function, one call each."""
    fn = STRATEGIES[strategy]
    kw = dict(options)
    if strategy != "knapsack":
        kw.setdefault("lam", lam)
    idx, gains, offs = [], [], [0]
    for b in range(starts.shape[0]):
        s, e = int(starts[b]), int(stops[b])
        try:
            p, g = fn(E[s:e], Q[b], c[s:e], int(bud[b]), return_gains=True, **kw)
        except ValueError as exc:  # the set's own rows: say which set
            msg = re.sub(r"\brow (\d+)\b", lambda m, b=b: f"problem {b}, row {m[1]}", str(exc))
            raise ValueError(
                re.sub(r"\bcosts\[(\d+)\]", lambda m, b=b: f"costs of problem {b}[{m[1]}]", msg)
            ) from None
        idx.append(p)
        gains.append(g)
        offs.append(offs[-1] + p.shape[0])
    empty = np.empty(0)
    return BatchSelection(
        np.concatenate(idx).astype(np.int64) if idx else empty.astype(np.int64),
        np.asarray(offs, dtype=np.int64),
        np.concatenate(gains) if gains else empty,
        np.full(starts.shape[0], float(lam)),
    )


@njit(**JIT)
def _solve_one(
    E, s, e, Q, b, costs, budget, lam, cexp, shift, nrm_all, out_idx, out_gain, out_lam, pool, lo, hi
):  # fmt: skip
    """Problem ``E[s:e]`` with query ``Q[b]``, on one thread; returns its pick count.

    ``out_lam[b]`` receives the problem's ``lam`` (the rule's choice for ``lam < 0``, "auto").
    Returns -1, without selecting, when a row norm is outside ``[lo, hi]``
    (NaN, inf, zero or out of range); the caller raises the error.
    """
    m = e - s
    out_lam[b] = lam if lam >= 0.0 else AUTO_LOOKUP  # an empty set: the rule's default
    if m == 0:
        return 0
    Eb = E[s:e]
    nrm = nrm_all[s:e]
    dots = np.empty(m)
    _dot._dots_norms_range(Eb, Q[b], dots, nrm, 0, m)
    for i in range(m):
        if not (lo <= nrm[i] <= hi):
            return -1
    rel = np.zeros(m)
    _accumulate_rel(rel, dots, nrm, _row_norm(Q, b), 1.0)
    if lam < 0.0:  # lam="auto": the rule on this problem's relevance
        lam = _auto_lam(rel, False)
    out_lam[b] = lam
    picks = out_idx[s:e]
    gains = out_gain[s:e]
    cb = costs[s:e]
    cnt = _lazy_serial(Eb, nrm, rel, cb, budget, lam, cexp, shift, picks, gains, pool)
    return _finish_cost_aware(Eb, nrm, rel, cb, budget, lam, cexp, shift, picks, gains, cnt, pool)


@njit(**JIT)
def _solve_range(
    E, starts, stops, Q, costs, budgets, lam, cexp, shift, nrm_all, out_idx, out_gain, out_lam, counts, pool,
    nlo, nhi, lo, hi,
):  # fmt: skip
    """Problems ``lo <= b < hi`` (run on threads by :func:`~scwo_np._parallel.run_chunks`)."""
    for b in range(lo, hi):
        counts[b] = _solve_one(
            E,
            starts[b],
            stops[b],
            Q,
            b,
            costs,
            budgets[b],
            lam,
            cexp,
            shift,
            nrm_all,
            out_idx,
            out_gain,
            out_lam,
            pool,
            nlo,
            nhi,
        )


def select_batch(
    embeddings: ArrayLike,
    queries: ArrayLike,
    costs: ArrayLike,
    budgets: int | ArrayLike,
    *,
    offsets: ArrayLike | None = None,
    lengths: ArrayLike | None = None,
    lam: float | str = 0.7,
    cost_aware: bool = False,
    cost_exponent: float = 0.25,
    shift: float = 0.0,
    strategy: str = "mmr",
    **options: Any,
) -> BatchSelection:
    """Budgeted MMR (or any strategy) for many (query, candidate set) problems at once.

    Two layouts are accepted:

    * **padded**: ``embeddings`` of shape ``(B, n, d)`` and ``costs`` of
      shape ``(B, n)``; optional ``lengths`` ``(B,)`` says how many leading
      rows of each set are real (the rest is padding and ignored);
    * **ragged**: ``embeddings`` of shape ``(N, d)`` and ``costs`` ``(N,)``
      with ``offsets`` ``(B + 1,)``: set ``b`` is rows
      ``offsets[b]:offsets[b + 1]``.

    Parameters
    ----------
    embeddings : array_like, shape (B, n, d) or (N, d)
        The candidate sets, padded or ragged (see above).
    queries : array_like, shape (B, d)
        One query per problem.
    costs : array_like of int, shape (B, n) or (N,)
        Token counts, in the layout of ``embeddings``.
    budgets : int or array_like of int, shape (B,)
        Token budget per problem (one int applies to all).
    offsets : array_like of int, shape (B + 1,), optional
        The ragged layout's set boundaries.
    lengths : array_like of int, shape (B,), optional
        The padded layout's real rows per set (default: all ``n``).
    lam, cost_aware, cost_exponent, shift
        As in :func:`~scwo_np.mmr_select`.
    strategy : str
        One of :data:`~scwo_np.select.STRATEGIES`.  MMR runs every set in one
        threaded kernel; the others call their function once per set (with
        ``lam`` where it has one, ``**options`` passed on; the cost-aware
        arguments are MMR's).
    **options
        Passed to the strategy's function (``gamma``, ``scale``, ``ground``...).

    Returns
    -------
    BatchSelection
        ``(indices, offsets, gains)``; for every ``b`` the slice equals
        ``mmr_select(set_b, queries[b], costs_b, budgets[b], ...)``.

    Examples
    --------
    >>> import numpy as np
    >>> E = np.array([[[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]],
    ...               [[0.0, 1.0], [1.0, 1.0], [1.0, 0.0]]])
    >>> Q = np.array([[1.0, 0.2], [0.0, 1.0]])
    >>> res = select_batch(E, Q, costs=np.ones((2, 3), int), budgets=2, lam=0.5)
    >>> res.split()
    [array([1, 2]), array([0, 1])]
    """
    E = as_array(embeddings, name="embeddings")
    c = as_array(costs, name="costs")
    if offsets is None:
        if E.ndim != 3:
            raise ValueError(
                f"embeddings must be (B, n, d) padded, or (N, d) with offsets=; got shape {E.shape}."
            )
        B, n, _ = E.shape
        if c.shape != (B, n):
            raise ValueError(
                f"costs must have shape ({B}, {n}) to match the padded embeddings; got {c.shape}."
            )
        if lengths is None:
            ln = np.full(B, n, dtype=np.int64)
        else:
            ln = np.asarray(lengths)
            if ln.shape != (B,) or ln.dtype.kind not in "iu" or np.any(ln < 0) or np.any(ln > n):
                raise ValueError(f"lengths must be {B} integers in [0, {n}]; got {lengths!r}.")
        starts = np.arange(B, dtype=np.int64) * n
        stops = starts + ln.astype(np.int64)
        E = E.reshape(B * n, E.shape[2]) if B * n else E.reshape(0, max(E.shape[2], 1))
        c = c.reshape(B * n)
    else:
        off = np.asarray(offsets)
        if off.ndim != 1 or off.shape[0] < 1 or off.dtype.kind not in "iu":
            raise ValueError("offsets must be a 1-D integer array of length B + 1.")
        if off[0] != 0 or np.any(np.diff(off) < 0) or (E.ndim == 2 and off[-1] != E.shape[0]):
            raise ValueError(
                "offsets must start at 0, never decrease, and end at the number of embedding rows."
            )
        starts = off[:-1].astype(np.int64)
        stops = off[1:].astype(np.int64)
        B = starts.shape[0]
    try:
        E = check_embeddings(E)
        N, dim = E.shape
        c = check_costs(c, N)
    except ValueError as exc:
        if offsets is not None or not n:
            raise
        raise ValueError(_padded_position(str(exc), n)) from None
    Q = check_queries(queries, dim, dtype=E.dtype, name="queries") if B else np.zeros((0, dim), E.dtype)
    if Q.shape[0] != B:
        raise ValueError(f"queries must have one row per problem ({B}); got {Q.shape[0]}.")
    if np.ndim(budgets) == 0:
        bud = np.full(B, check_budget(budgets, name="budgets"), dtype=np.int64)
    else:
        bud = np.array(
            [check_budget(x, name="budgets") for x in np.asarray(budgets).tolist()], dtype=np.int64
        )
        if bud.shape != (B,):
            raise ValueError(f"budgets must be one int or {B} ints; got shape {np.shape(budgets)}.")
    lam = check_lam(lam, auto=True)
    shift = check_nonnegative_float(shift, name="shift")
    cexp = _cost_exponent(cost_aware, cost_exponent)
    STRATEGIES.lookup(strategy)
    if strategy != "mmr":
        check_lam(lam)  # "auto" is MMR's
        if cexp or shift:
            raise ValueError(
                f"cost_aware and shift are MMR's; for strategy {strategy!r} pass its own options "
                "(e.g. cost_exponent=) as keywords."
            )
        return _batch_by_set(E, starts, stops, Q, c, bud, strategy, lam, options)
    if options:
        raise TypeError(
            f"select_batch got unexpected keyword arguments {sorted(options)} for strategy 'mmr'."
        )

    lam = -1.0 if lam == "auto" else lam  # the kernel's sign for "auto"
    nrm = np.ones(N)
    out_idx = np.empty(N, dtype=np.int64)
    out_gain = np.empty(N)
    out_lam = np.empty(B)
    counts = np.zeros(B, dtype=np.int64)
    nlo, nhi = NORM_RANGE[E.dtype.name]
    args = (
        E,
        starts,
        stops,
        Q,
        c,
        bud,
        lam,
        cexp,
        shift,
        nrm,
        out_idx,
        out_gain,
        out_lam,
        counts,
        POOL,
        nlo,
        nhi,
    )
    run_chunks(_solve_range, B, *args)
    if np.any(counts < 0):  # a set with a bad row: report it (rows outside every set keep norm 1)
        mask = np.zeros(N, dtype=bool)
        for b in range(B):
            mask[starts[b] : stops[b]] = True
        try:
            check_row_norms(np.where(mask, nrm, 1.0), E)
        except ValueError as exc:
            if offsets is not None or not n:
                raise
            raise ValueError(_padded_position(str(exc), n)) from None

    res_off = np.zeros(B + 1, dtype=np.int64)
    np.cumsum(counts, out=res_off[1:])
    owner = np.repeat(np.arange(B, dtype=np.int64), counts)  # the set of each result row
    take = starts[owner] + (np.arange(res_off[-1], dtype=np.int64) - res_off[owner])
    return BatchSelection(out_idx[take], res_off, out_gain[take], out_lam)


def _padded_position(message: str, n: int) -> str:
    """A flat row of padded ``(B, n, d)`` input as the problem and row the user indexes by: "zero
    vector at row 54" of (2, 50, 384) is problem 1, row 4; ``costs[50]`` is ``costs[1, 0]``."""
    message = re.sub(r"\brow (\d+)\b", lambda m: f"problem {int(m[1]) // n}, row {int(m[1]) % n}", message)
    return re.sub(r"\bcosts\[(\d+)\]", lambda m: f"costs[{int(m[1]) // n}, {int(m[1]) % n}]", message)
