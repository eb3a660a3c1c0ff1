"""The spec's baselines and its coverage metric.

``truncate`` is what a pipeline does when it just cuts the retrieved list at
the budget; ``topk_relevance`` ranks by relevance alone.  ``coverage`` is the
spec's quality score, used to compare any selection with them.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import _dot
from ..validation import check_budget, check_costs, check_embeddings, check_ndim, check_query, check_row_norms
from ._mmr import mmr_select

__all__ = ["truncate", "topk_relevance", "coverage"]


def truncate(costs: ArrayLike, budget: int) -> NDArray[np.int64]:
    """The longest prefix of the chunks, in the given order, that fits the budget.

    Parameters
    ----------
    costs : array_like of int
        Token count of each chunk, in the given order.
    budget : int
        Token budget.

    Returns
    -------
    numpy.ndarray
        int64 indices ``0 .. k - 1`` of the longest prefix that fits.

    Examples
    --------
    >>> truncate([100, 200, 50, 10], budget=320)
    array([0, 1])
    """
    check_ndim(costs, 1, name="costs", what="one token count per chunk")
    c = check_costs(costs, len(costs))
    budget = check_budget(budget)
    k = int(np.searchsorted(np.cumsum(c), budget, side="right"))
    return np.arange(k, dtype=np.int64)


def topk_relevance(
    embeddings: ArrayLike, query: ArrayLike, costs: ArrayLike, budget: int
) -> NDArray[np.int64]:
    """Chunks in decreasing cosine relevance, skipping those that no longer fit.

    Identical to ``mmr_select(..., lam=1.0)``: relevance ties go to the lower
    index, and a chunk too long for the remaining budget is skipped (shorter
    ones after it may still fit).

    Parameters
    ----------
    embeddings : array_like, shape (n, d)
        One embedding per chunk.
    query : array_like, shape (d,)
        The query embedding.
    costs : array_like of int, shape (n,)
        Token count of each chunk.
    budget : int
        Token budget.

    Returns
    -------
    numpy.ndarray
        int64 chunk indices, most relevant first.

    Examples
    --------
    >>> import numpy as np
    >>> E = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]])
    >>> topk_relevance(E, [1.0, 0.0], costs=[300, 100, 100], budget=250)
    array([1, 2])
    """
    return mmr_select(embeddings, query, costs, budget, lam=1.0)


def coverage(embeddings_selected: ArrayLike, query: ArrayLike) -> float:
    """The spec's coverage score of a selection: higher is better.

    ``0.6 * mean_i cos(e_i, q) + 0.4 * (1 - mean_{i<j} cos(e_i, e_j))``.
    An empty selection scores 0; a single chunk has no pairs, so its
    diversity term is 1 (nothing redundant).

    Parameters
    ----------
    embeddings_selected : array_like, shape (k, d)
        The embeddings of the selected chunks.
    query : array_like, shape (d,)
        The query embedding.

    Returns
    -------
    float
        The coverage score (0 for an empty selection).

    Examples
    --------
    >>> import numpy as np
    >>> coverage(np.array([[1.0, 0.0], [0.0, 1.0]]), [1.0, 1.0])
    0.8243
    """
    if isinstance(embeddings_selected, list | tuple) and len(embeddings_selected) == 0:
        return 0.0  # an empty selection (as a list; an empty (0, d) array is handled below)
    E = check_embeddings(embeddings_selected, name="embeddings_selected")
    if E.shape[0] == 0:
        return 0.0
    q = check_query(query, E.shape[1], dtype=E.dtype)
    dots, nrm = _dot.dots_norms(E, q)
    check_row_norms(nrm, E, name="embeddings_selected")
    qn = _dot.dots_norms(q.reshape(1, -1), q)[1][0]
    rel = float(np.mean(dots / (nrm * qn)))
    k = E.shape[0]
    if k < 2:
        return 0.6 * rel + 0.4
    total = 0.0
    for i in range(k - 1):
        sims = _dot.dots(E[i + 1 :], E[i]) / (nrm[i + 1 :] * nrm[i])
        total += float(sims.sum())
    mean_pair = total / (k * (k - 1) / 2)
    return 0.6 * rel + 0.4 * (1.0 - mean_pair)
