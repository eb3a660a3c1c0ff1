"""Diversification (the KB Labs ADR's step 2): spread the context over sources and content.

The ADR names two knobs, "max chunks per file" (default 3) and a "diversity
threshold" (default 0.3), without defining the second.  Here it is defined
as a minimum *dissimilarity*: going through the chunks best-first (highest
score, ties to the lowest index), a chunk is kept when

1. fewer than ``max_per_source`` chunks of its source are kept already, and
2. its similarity to every chunk kept so far is at most
   ``1 - diversity_threshold`` (0.7 by default): word-set Jaccard on the
   text, as the ADR's similarity, or cosine when embeddings are given.

``diversity_threshold=0`` turns the content check off; ``max_per_source=None``
turns the cap off.  A chunk with no source (``None``) counts as its own source.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from .. import _dot
from .._config import JIT
from ..text import Ragged, _jaccard_sorted, word_sets
from ..validation import (
    as_array,
    check_embeddings,
    check_int,
    check_row_norms,
    check_texts,
    check_unit_interval,
)
from ._budget import best_first

__all__ = ["Diversified", "diversify", "REASONS"]

#: Why a chunk was dropped (``Diversified.reason`` codes index this tuple).
REASONS = ("source_cap", "too_similar")


class Diversified(NamedTuple):
    """Result of :func:`diversify`.

    ``keep`` and ``dropped`` are indices in best-first order.  For each
    dropped chunk, ``reason`` is a code and ``reasons`` its name; when it is too
    similar, ``similar_to`` is the kept chunk it resembles most and
    ``similarity`` their similarity (otherwise -1 and NaN).

    Parameters
    ----------
    keep, dropped : ndarray of int64
        The kept and dropped chunks, best first.
    reason : ndarray of int64
        Per dropped chunk, a code: 0 for a source cap, 1 for too similar (``reasons``: their names).
    similar_to : ndarray of int64
        Per dropped chunk, the kept chunk it resembles most (-1 for a source cap).
    similarity : ndarray of float64
        Their similarity (NaN for a source cap).

    Examples
    --------
    >>> r = diversify(["alpha beta gamma", "alpha beta gamma", "other words here"], scores=[0.9, 0.8, 0.7])
    >>> r.keep, r.dropped, r.similar_to
    (array([0, 2]), array([1]), array([0]))
    """

    keep: NDArray[np.int64]
    dropped: NDArray[np.int64]
    reason: NDArray[np.int64]
    similar_to: NDArray[np.int64]
    similarity: NDArray[np.float64]

    @property
    def reasons(self) -> list[str]:
        """Per dropped chunk, why, by name: ``"source_cap"`` or ``"too_similar"``.

        Examples
        --------
        >>> diversify(["alpha beta gamma", "alpha beta gamma"], scores=[0.9, 0.8]).reasons
        ['too_similar']
        """
        return [REASONS[k] for k in self.reason.tolist()]


@njit(**JIT)
def _most_similar_jaccard(indptr, data, i, kept, nkept):
    best = -1
    best_s = -np.inf
    x = data[indptr[i] : indptr[i + 1]]
    for q in range(nkept):
        j = kept[q]
        s = _jaccard_sorted(x, data[indptr[j] : indptr[j + 1]])
        if s > best_s:
            best = j
            best_s = s
    return best, best_s


@njit(**JIT)
def _most_similar_cosine(E, nrm, i, kept, nkept):
    best = -1
    best_s = -np.inf
    for q in range(nkept):
        j = kept[q]
        s = _dot._dot1(E, i, E[j])[0] / (nrm[i] * nrm[j])
        if s > best_s:
            best = j
            best_s = s
    return best, best_s


@njit(**JIT)
def _greedy(
    order, src, cap, max_sim, use_sim, use_cos, indptr, data, E, nrm, keep, drop, reason, sim_to, sim
):
    """The best-first pass; returns ``(n_keep, n_drop)``."""
    count = np.zeros(src.max() + 1 if src.shape[0] else 1, np.int64)
    nk = 0
    nd = 0
    for i in order:
        if cap >= 0 and count[src[i]] >= cap:
            drop[nd] = i
            reason[nd] = 0
            sim_to[nd] = -1
            sim[nd] = np.nan
            nd += 1
            continue
        if use_sim and nk > 0:
            if use_cos:
                j, s = _most_similar_cosine(E, nrm, i, keep, nk)
            else:
                j, s = _most_similar_jaccard(indptr, data, i, keep, nk)
            if s > max_sim:
                drop[nd] = i
                reason[nd] = 1
                sim_to[nd] = j
                sim[nd] = s
                nd += 1
                continue
        keep[nk] = i
        nk += 1
        count[src[i]] += 1
    return nk, nd


def diversify(
    texts: Sequence[str] | None = None,
    *,
    sources: Sequence[object] | None = None,
    scores: ArrayLike | None = None,
    embeddings: ArrayLike | None = None,
    max_per_source: int | None = 3,
    diversity_threshold: float = 0.3,
    sets: Ragged | None = None,
) -> Diversified:
    """Keep chunks best-first under a per-source cap and a minimum dissimilarity.

    Parameters
    ----------
    texts : sequence of str, optional
        Chunk text, for the word-set Jaccard similarity.
    sources : sequence, optional
        Source (file, document) of each chunk, any hashable; ``None`` for unknown.
    scores : array_like of float, optional
        Relevance; without it chunks are taken in input order.
    embeddings : array_like, shape (n, d), optional
        When given, similarity is the cosine of embeddings instead of Jaccard.
    max_per_source : int or None, default 3
        At most this many chunks per source (None: no cap).
    diversity_threshold : float in [0, 1], default 0.3
        A kept chunk's similarity to every other kept chunk is at most
        ``1 - diversity_threshold`` (0: no content check).
    sets : Ragged, optional
        ``word_sets(texts)[0]`` when already computed.

    Returns
    -------
    Diversified
        What was kept, what was dropped, and why.

    Examples
    --------
    >>> texts = ["alpha beta gamma", "alpha beta gamma delta", "other words entirely", "more of file a"]
    >>> r = diversify(texts, sources=["a", "a", "b", "a"], scores=[0.9, 0.8, 0.7, 0.6], max_per_source=2)
    >>> r.keep, r.dropped, r.reasons, r.similar_to
    (array([0, 2, 3]), array([1]), ['too_similar'], array([0]))
    """
    n = _length(texts, sources, scores, embeddings)
    t = check_unit_interval(
        diversity_threshold, name="diversity_threshold", meaning="a minimum dissimilarity"
    )
    if max_per_source is not None:  # more than there are chunks means no cap: clamped to n
        max_per_source = check_int(max_per_source, name="max_per_source", low=1, high=max(n, 1), clamp=True)
    order = best_first(scores, n)
    src = _source_ids(sources, n)
    use_sim = t > 0.0
    use_cos = embeddings is not None
    indptr = np.zeros(n + 1, np.int64)
    data = np.empty(0, np.int32)
    E = np.zeros((n, 1))
    nrm = np.ones(n)
    if use_sim and use_cos:
        E = check_embeddings(embeddings)
        _, nrm = _dot.dots_norms(E, E[0]) if n else (None, np.ones(0))
        check_row_norms(nrm, E)
    elif use_sim:
        if texts is None:
            raise ValueError(
                "diversity_threshold > 0 needs texts= or embeddings= to compare chunks; "
                "pass one, or diversity_threshold=0 for the source cap alone."
            )
        ws = word_sets(check_texts(texts))[0] if sets is None else sets
        if len(ws) != n:
            raise ValueError(f"sets has {len(ws)} rows but there are {n} chunks.")
        indptr, data = ws.indptr, ws.data
    keep = np.empty(n, np.int64)
    drop = np.empty(n, np.int64)
    reason = np.empty(n, np.int64)
    sim_to = np.empty(n, np.int64)
    sim = np.empty(n)
    cap = -1 if max_per_source is None else int(max_per_source)
    nk, nd = _greedy(
        order, src, cap, 1.0 - t, use_sim, use_cos, indptr, data, E, nrm, keep, drop, reason, sim_to, sim
    )
    return Diversified(
        keep[:nk].copy(), drop[:nd].copy(), reason[:nd].copy(), sim_to[:nd].copy(), sim[:nd].copy()
    )


def _length(texts, sources, scores, embeddings) -> int:
    """The number of chunks, from whichever inputs are given (they must agree)."""
    if sources is not None and isinstance(sources, str | bytes | Mapping):
        raise TypeError(
            f"sources must be a sequence with one source per chunk; got {type(sources).__name__}."
        )
    sizes = {}
    if texts is not None:
        sizes["texts"] = len(check_texts(texts))
    if sources is not None:
        try:
            sizes["sources"] = len(sources)
        except TypeError:
            raise TypeError(f"sources must be a sequence; got {type(sources).__name__}.") from None
    for name, x in (("scores", scores), ("embeddings", embeddings)):
        if x is not None:
            arr = as_array(x, name=name)
            if arr.ndim == 0:
                raise TypeError(f"{name} must have one entry per chunk; got a single {type(x).__name__}.")
            sizes[name] = arr.shape[0]
    if not sizes:
        raise ValueError("diversify needs at least one of texts, sources, scores or embeddings.")
    if len(set(sizes.values())) > 1:
        raise ValueError(f"texts, sources, scores and embeddings must have one entry per chunk; got {sizes}.")
    return next(iter(sizes.values()))


def _source_ids(sources, n: int) -> NDArray[np.int64]:
    """Integer id per source; every ``None`` gets an id of its own."""
    if sources is None:
        return np.arange(n, dtype=np.int64)
    ids: dict = {}
    out = np.empty(n, np.int64)
    for i, s in enumerate(sources):
        if s is None:
            out[i] = len(ids) + n + i  # unique, never shared
            continue
        try:
            out[i] = ids.setdefault(s, len(ids))
        except TypeError:
            raise TypeError(
                f"sources[{i}] is {type(s).__name__}, which is not hashable; use a str id."
            ) from None
    # compact ids so the per-source counter stays O(n)
    _, out = np.unique(out, return_inverse=True)
    return out.astype(np.int64).reshape(-1)
