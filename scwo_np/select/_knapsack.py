"""The exact optimum of total relevance under the token budget (0/1 knapsack).

``knapsack`` is the strategy with no diversity term: the set of chunks whose
summed relevance is largest among all sets that fit the budget.  It is the true
optimum that every greedy strategy can be measured against at ``lam = 1`` (top-k
by relevance skips a long chunk that no longer fits, and can be far from it);
no peer library offers it.

Method: dynamic programming over the budget (``best[c]``, the most relevance
within ``c`` tokens, item by item, ``O(n * budget)`` time and one bit per cell
to read the set back).  Only chunks with positive relevance that fit the budget
take part (one with relevance <= 0 never raises the total); chunks of cost 0
with positive relevance are always in.  An item replaces the current best only
when it is *strictly* better, so among sets of equal relevance the one built
from lower indices wins; sums are formed in index order, so the result is
deterministic and equals the plain reference in ``tests/naive.py`` to the last
bit.  The answer is returned in pick order: by relevance, highest first, ties
to the lowest index.

Relevance is the cosine of each chunk with the query, computed exactly as
:func:`~scwo_np.select.mmr_select` computes it, so ``knapsack`` and ``mmr``
rank equal chunks alike.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from .._config import JIT
from ..validation import check_int
from ._common import prepare

__all__ = ["MAX_CELLS", "knapsack_select"]

#: The largest table (candidates x (budget + 1) cells, one byte each) solved exactly.
MAX_CELLS = 100_000_000


def knapsack_select(
    embeddings: ArrayLike,
    query: ArrayLike,
    costs: ArrayLike,
    budget: int,
    *,
    weights: ArrayLike | None = None,
    max_cells: int = MAX_CELLS,
    return_gains: bool = False,
) -> NDArray[np.int64] | tuple[NDArray[np.int64], NDArray[np.float64]]:
    """The set of chunks with the most total relevance that fits the budget, exactly.

    Parameters
    ----------
    embeddings, query, costs, budget
        As in :func:`~scwo_np.select.mmr_select`; ``query`` may also be several
        queries, shape ``(m, d)``: relevance is then the weighted mean of the
        cosines, as in :func:`~scwo_np.select.mmr_select_multi`.
    weights : array_like, shape (m,), optional
        Query weights (with several queries), normalised; equal by default.
    max_cells : int
        The largest dynamic-programming table to build (candidates with positive
        relevance x (budget + 1)); beyond it a ``ValueError`` says what to do.
    return_gains : bool
        Also return each chosen chunk's relevance (its share of the total).

    Returns
    -------
    ndarray of int64
        The chosen chunks, by relevance (highest first, ties to the lowest index).

    Examples
    --------
    Top-k by relevance takes the best chunk and then nothing else fits; the
    optimum takes the next two, which together are worth more:

    >>> import numpy as np
    >>> E = np.array([[1.0, 0.0], [0.95, 0.31], [0.9, 0.44], [0.0, 1.0]])
    >>> knapsack_select(E, [1.0, 0.0], costs=[300, 150, 150, 10], budget=300)
    array([1, 2])
    """
    max_cells = check_int(max_cells, name="max_cells", low=1)
    E, costs, budget, _, rel = prepare(embeddings, query, costs, budget, weights)
    picks = solve_knapsack(rel, costs, budget, max_cells) if E.shape[0] else np.empty(0, dtype=np.int64)
    return (picks, rel[picks] if picks.size else np.empty(0)) if return_gains else picks


def solve_knapsack(
    rel: NDArray[np.float64], costs: NDArray[np.int64], budget: int, max_cells: int = MAX_CELLS
) -> NDArray[np.int64]:
    """The exact 0/1 knapsack on ``rel`` (validated arrays), in pick order."""
    cand = np.flatnonzero((rel > 0.0) & (costs <= budget))
    free = cand[costs[cand] == 0]
    paid = cand[costs[cand] > 0]
    cap = int(min(budget, int(costs[paid].sum())))
    cells = paid.size * (cap + 1)
    if cells > max_cells:
        raise ValueError(
            f"the exact knapsack needs a table of {paid.size} candidates x {cap + 1} budget cells = "
            f"{cells:,} > max_cells={max_cells:,}; pass fewer candidates (e.g. the top 1,000 by "
            "relevance), a smaller budget, or a larger max_cells (one byte per cell)."
        )
    take = _knapsack_kernel(rel[paid], costs[paid], cap) if paid.size else np.zeros(0, np.bool_)
    chosen = np.concatenate([free, paid[take]])
    return chosen[np.lexsort((chosen, -rel[chosen]))].astype(np.int64)


@njit(**JIT)
def _knapsack_kernel(v, w, cap):
    """Items taken by the 0/1 knapsack (values ``v`` > 0, weights ``w`` >= 1, capacity ``cap``)."""
    m = v.shape[0]
    best = np.zeros(cap + 1)
    keep = np.zeros((m, cap + 1), np.bool_)
    for i in range(m):
        wi = w[i]
        vi = v[i]
        for c in range(cap, wi - 1, -1):
            cand = best[c - wi] + vi
            if cand > best[c]:  # strictly: ties keep the set of lower indices
                best[c] = cand
                keep[i, c] = True
    take = np.zeros(m, np.bool_)
    c = cap
    for i in range(m - 1, -1, -1):
        if keep[i, c]:
            take[i] = True
            c -= w[i]
    return take
