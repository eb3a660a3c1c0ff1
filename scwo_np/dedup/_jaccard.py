"""Word-set Jaccard: every pair at or above a threshold, by prefix filtering (the KB Labs ADR's similarity)."""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.typing import NDArray

from .._config import JIT
from ..text import Ragged, _jaccard_sorted
from ..validation import (
    check_unit_interval,
)
from ._common import _push_edge


@njit(**JIT)
def _overlap_at_least(x, y, need):
    """``|x & y|`` of sorted unique arrays, or -1 as soon as it cannot reach ``need``."""
    i = 0
    j = 0
    inter = 0
    while i < x.shape[0] and j < y.shape[0]:
        if inter + min(x.shape[0] - i, y.shape[0] - j) < need:
            return -1
        if x[i] == y[j]:
            inter += 1
            i += 1
            j += 1
        elif x[i] < y[j]:
            i += 1
        else:
            j += 1
    return inter


@njit(**JIT)
def _jaccard_join(indptr, ranks, t, plen, pptr, plist, ppos):
    """Every pair ``i < j`` with Jaccard >= ``t``, from the prefix index.

    ``ranks`` holds each set's tokens as global ranks (rarest first), sorted
    within each set; ``plen[i]`` is set ``i``'s prefix length and
    ``plist[pptr[r]:pptr[r + 1]]`` the sets with rank ``r`` in their prefix
    (ascending), at positions ``ppos``.  The first prefix token two sets
    share is their first common token, so the overlap is at most one plus
    the shorter remainder (positional filter); survivors are verified with
    an early-exit merge, and the ratio itself decides.
    """
    n = indptr.shape[0] - 1
    seen = np.full(n, -1, np.int64)
    ea = np.empty(0, np.int64)
    eb = np.empty(0, np.int64)
    es = np.empty(0)
    m = np.int64(0)
    frac = t / (1.0 + t) - 1e-9  # J >= t  <=>  |A & B| >= t / (1 + t) * (|A| + |B|)
    for i in range(n):
        si = indptr[i + 1] - indptr[i]
        if si == 0:
            continue
        x = ranks[indptr[i] : indptr[i + 1]]
        for p in range(plen[i]):
            r = x[p]
            for k in range(pptr[r], pptr[r + 1]):
                j = plist[k]
                if j <= i or seen[j] == i:
                    continue
                seen[j] = i
                sj = indptr[j + 1] - indptr[j]
                need = np.ceil(frac * (si + sj))
                if 1 + min(si - p - 1, sj - ppos[k] - 1) < need:
                    continue
                y = ranks[indptr[j] : indptr[j + 1]]
                inter = _overlap_at_least(x, y, need)
                if inter < 0:
                    continue
                s = inter / (si + sj - inter)
                if s >= t:
                    ea, eb, es, m = _push_edge(ea, eb, es, m, i, j, s)
    return ea[:m], eb[:m], es[:m]


def jaccard_pairs(
    sets: Ragged, threshold: float
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
    """All pairs ``i < j`` of word sets with Jaccard ``>= threshold``, exactly.

    ``sets`` is a :class:`~scwo_np.text.Ragged` of sorted unique token ids
    (as from :func:`~scwo_np.text.word_sets`).  Returns ``(i, j, jaccard)``
    sorted by ``(i, j)``.  With ``threshold == 0`` every pair qualifies, so
    this is ``O(n^2)``; :func:`deduplicate` short-cuts that case.

    Parameters
    ----------
    sets : Ragged
        Sorted unique token ids per item (from :func:`~scwo_np.text.word_sets`).
    threshold : float
        The least Jaccard similarity of a pair, in [0, 1].

    Returns
    -------
    i, j : numpy.ndarray
        int64 indices of each pair, ``i < j``, sorted by ``(i, j)``.
    similarity : numpy.ndarray
        float64, each pair's similarity.

    Examples
    --------
    >>> from scwo_np.text import word_sets
    >>> sets, _ = word_sets(["red green blue", "green blue red", "cyan magenta"])
    >>> jaccard_pairs(sets, 0.9)
    (array([0]), array([1]), array([1.]))
    """
    t = check_unit_interval(threshold, name="threshold", meaning="a Jaccard similarity")
    n = len(sets)
    lengths = sets.lengths()
    if t <= 0.0:
        i, j = np.triu_indices(n, 1)
        s = np.array([_jaccard_sorted(sets.row(a), sets.row(b)) for a, b in zip(i, j, strict=True)])
        return i.astype(np.int64), j.astype(np.int64), s.reshape(-1)
    # Global ranks: rarest token first (ties by id), and each set sorted by rank.
    freq = np.bincount(sets.data, minlength=1) if sets.data.size else np.zeros(1, np.int64)
    order = np.lexsort((np.arange(freq.shape[0]), freq))
    rank_of = np.empty_like(order)
    rank_of[order] = np.arange(order.shape[0])
    owner = np.repeat(np.arange(n, dtype=np.int64), lengths)
    key = (owner << 32) | rank_of[sets.data]  # sort each set by rank, in one global sort
    key.sort()
    ranks = key & 0xFFFFFFFF
    # Prefix length |A| - o + 1 with o = ceil(t |A|), lowered a hair against rounding.
    overlap = np.maximum(np.ceil(lengths * (t - 1e-9)), 1).astype(np.int64)
    plen = np.where(lengths > 0, lengths - overlap + 1, 0).astype(np.int64)
    pos = np.arange(ranks.shape[0]) - sets.indptr[owner]
    in_prefix = pos < plen[owner]
    pr = ranks[in_prefix]
    srt = np.argsort((pr << 32) | owner[in_prefix], kind="stable")
    plist = np.ascontiguousarray(owner[in_prefix][srt])
    ppos = np.ascontiguousarray(pos[in_prefix][srt])
    pptr = np.zeros(order.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(pr, minlength=order.shape[0]), out=pptr[1:])
    a, b, s = _jaccard_join(sets.indptr, ranks, t, plen, pptr, plist, ppos)
    srt = np.lexsort((b, a))
    return a[srt], b[srt], s[srt]
