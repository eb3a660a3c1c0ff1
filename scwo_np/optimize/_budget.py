"""Fitting chunks to a token budget and taking the top k (the KB Labs ADR's steps 3 and 4).

* :func:`estimate_tokens` — the specs' estimate, about 4 characters per token
  (it lives in :mod:`scwo_np.tokens` with the other token counters).
* :func:`fit_budget` — take chunks best-first while they fit: ``mode="stop"``
  ends at the first one that does not (the ADR's "stops when budget
  reached"); ``mode="skip"`` passes over it and keeps looking for smaller
  ones (MoRAG's ``_fit_token_budget``).
* :func:`top_k` — the ``k`` best.

"Best" is always the highest score, ties to the lowest index; results are
indices into the input, in that order.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._registry import Registry
from ..tokens import CHARS_PER_TOKEN, estimate_tokens
from ..validation import (
    check_budget,
    check_costs,
    check_int,
    check_ndim,
    check_scores,
)

__all__ = ["estimate_tokens", "fit_budget", "top_k", "best_first", "CHARS_PER_TOKEN", "FIT_MODES"]

#: ``fit_budget(mode=)``: what happens at the first chunk that does not fit -> what it does.
FIT_MODES: Registry[str] = Registry(
    "mode",
    {"stop": "stop there, as the ADR's loop (the default)", "skip": "skip it and try the next ones"},
)


def _length(x: object, name: str, what: str) -> int:
    """Length of a 1-D array argument, or a clear error."""
    return check_ndim(x, 1, name=name, what=what).shape[0]


def best_first(scores: ArrayLike | None, n: int) -> NDArray[np.int64]:
    """Indices by descending score, ties to the lowest index (input order without scores).

    Parameters
    ----------
    scores : array_like of float or None
        Relevance of each item (None: input order).
    n : int
        The number of items.

    Returns
    -------
    numpy.ndarray
        int64 indices by descending score, ties to the lower index.

    Examples
    --------
    >>> best_first([0.2, 0.9, 0.9], 3), best_first(None, 3)
    (array([1, 2, 0]), array([0, 1, 2]))
    """
    n = check_int(n, name="n", low=0)
    s = check_scores(scores, n)
    return np.lexsort((np.arange(n), -s)).astype(np.int64)


def fit_budget(
    costs: ArrayLike,
    budget: int,
    *,
    scores: ArrayLike | None = None,
    mode: str = "stop",
) -> NDArray[np.int64]:
    """Chunks best-first while their token costs fit in ``budget``.

    Parameters
    ----------
    costs : array_like of int
        Tokens of each chunk (see :func:`estimate_tokens` when only text is known).
    budget : int
        Token budget; the selected costs never sum to more.
    scores : array_like of float, optional
        Relevance; without it, chunks are taken in input order.
    mode : {"stop", "skip"}
        ``"stop"``: end at the first chunk that does not fit (KB ADR).
        ``"skip"``: leave it out and keep going (MoRAG).

    Returns
    -------
    ndarray of int64
        Selected indices, best first.

    Examples
    --------
    >>> fit_budget([50, 80, 10], 100, scores=[0.9, 0.8, 0.1])
    array([0])
    >>> fit_budget([50, 80, 10], 100, scores=[0.9, 0.8, 0.1], mode="skip")
    array([0, 2])
    """
    c = check_costs(costs, _length(costs, "costs", "one token count per chunk"))
    b = check_budget(budget)
    FIT_MODES.lookup(mode)
    if scores is not None and _length(scores, "scores", "one score per chunk") != c.shape[0]:
        raise ValueError(
            f"scores has {np.shape(scores)[0]} values but costs has {c.shape[0]}; give one score per chunk."
        )
    order = best_first(scores, c.shape[0])
    if mode == "stop":
        total = np.cumsum(c[order])
        return order[: int(np.searchsorted(total, b, side="right"))]
    out = []
    left = b
    for i in order.tolist():
        if c[i] <= left:
            out.append(i)
            left -= int(c[i])
    return np.asarray(out, dtype=np.int64)


def top_k(scores: ArrayLike, k: int | None) -> NDArray[np.int64]:
    """The ``k`` highest-scoring indices, best first (all of them when ``k`` is None).

    Parameters
    ----------
    scores : array_like of float
        Relevance of each item.
    k : int or None
        How many to return (None: all).

    Returns
    -------
    numpy.ndarray
        int64 indices, best first.

    Examples
    --------
    >>> top_k([0.2, 0.9, 0.9, 0.5], 2)
    array([1, 2])
    """
    order = best_first(scores, _length(scores, "scores", "one per chunk"))
    if k is None:
        return order
    return order[: check_int(k, name="k", low=0, high=order.shape[0], clamp=True)]
