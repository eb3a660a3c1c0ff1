"""MinHash signatures and LSH banding over word sets, every candidate verified with exact Jaccard."""

from __future__ import annotations

import functools

import numpy as np
from numba import njit
from numpy.typing import NDArray

from .._config import JIT
from .._parallel import run_chunks
from ..text import Ragged, _jaccard_sorted
from ..validation import (
    check_int,
    check_unit_interval,
)
from ._common import _mix64

# --------------------------------------------------------------------------
# MinHash + LSH banding, verified with exact Jaccard
# --------------------------------------------------------------------------


@njit(**JIT)
def _signatures(indptr, tokens, seeds, out, lo, hi):
    """``out[i, k] = min over tokens x of set i of mix64(x ^ seeds[k])``, rows ``lo:hi``."""
    nperm = seeds.shape[0]
    for i in range(lo, hi):
        for k in range(nperm):
            out[i, k] = np.uint64(0xFFFFFFFFFFFFFFFF)
        for q in range(indptr[i], indptr[i + 1]):
            x = np.uint64(tokens[q])
            for k in range(nperm):
                h = _mix64(x ^ seeds[k])
                if h < out[i, k]:
                    out[i, k] = h


@njit(**JIT)
def _band_keys(sig, bands, rows, out):
    """One 64-bit key per (set, band): the band's ``rows`` values hashed together."""
    for i in range(sig.shape[0]):
        for b in range(bands):
            h = np.uint64(0x9E3779B97F4A7C15) * np.uint64(b + 1)
            for r in range(rows):
                h = _mix64(h ^ sig[i, b * rows + r])
            out[b, i] = h


@njit(**JIT)
def _bucket_pairs(order, keys, valid):
    """Pairs ``(i, j)``, ``i < j``, of valid items whose keys are equal (``order`` sorts ``keys``)."""
    n = order.shape[0]
    cnt = 0
    s = 0
    while s < n:
        e = s + 1
        while e < n and keys[order[e]] == keys[order[s]]:
            e += 1
        m = 0
        for q in range(s, e):
            m += valid[order[q]]
        cnt += m * (m - 1) // 2
        s = e
    a = np.empty(cnt, np.int64)
    b = np.empty(cnt, np.int64)
    c = 0
    s = 0
    while s < n:
        e = s + 1
        while e < n and keys[order[e]] == keys[order[s]]:
            e += 1
        for p in range(s, e):
            x = order[p]
            if not valid[x]:
                continue
            for q in range(p + 1, e):
                y = order[q]
                if valid[y]:
                    a[c] = min(x, y)
                    b[c] = max(x, y)
                    c += 1
        s = e
    return a, b


@njit(**JIT)
def _verify_jaccard(indptr, tokens, a, b, t):
    keep = np.zeros(a.shape[0], np.bool_)
    sim = np.empty(a.shape[0])
    for k in range(a.shape[0]):
        s = _jaccard_sorted(tokens[indptr[a[k]] : indptr[a[k] + 1]], tokens[indptr[b[k]] : indptr[b[k] + 1]])
        sim[k] = s
        keep[k] = s >= t
    return keep, sim


#: Largest ``num_perm`` accepted: 1,024 hash functions estimate a Jaccard
#: similarity to about 0.015 (one standard error at 0.9), and choosing the
#: bands for it takes under a second; beyond that time grows, accuracy hardly.
MAX_NUM_PERM = 1024


def _check_num_perm(num_perm: object) -> int:
    return check_int(num_perm, name="num_perm", low=1, high=MAX_NUM_PERM)


def lsh_params(threshold: float, num_perm: int, miss_weight: float = 0.5) -> tuple[int, int]:
    """Bands and rows ``(b, r)``, ``b * r <= num_perm``, minimising missed plus spurious pairs.

    The probability that a pair of Jaccard ``s`` shares a band is
    ``1 - (1 - s^r)^b``; this picks the ``(b, r)`` minimising
    ``(1 - miss_weight)`` times the integral of that probability below
    ``threshold`` plus ``miss_weight`` times the integral of its complement
    above it.  ``miss_weight = 0.5`` is datasketch's ``MinHashLSH`` rule.

    Parameters
    ----------
    threshold : float
        The Jaccard similarity that separates duplicates from the rest, in [0, 1].
    num_perm : int
        The number of MinHash permutations.
    miss_weight : float
        The weight of missed pairs against spurious ones, in [0, 1].

    Returns
    -------
    bands, rows : int
        The LSH bands and rows per band.

    Examples
    --------
    >>> lsh_params(0.9, 128)
    (5, 25)
    >>> lsh_params(0.9, 128, miss_weight=0.9)
    (8, 16)
    """
    num_perm = _check_num_perm(num_perm)
    threshold = check_unit_interval(threshold, name="threshold")
    miss_weight = check_unit_interval(miss_weight, name="miss_weight")
    return _lsh_params(threshold, num_perm, miss_weight)


@functools.lru_cache(maxsize=64)
def _lsh_params(threshold: float, num_perm: int, miss_weight: float) -> tuple[int, int]:
    from scipy.integrate import quad

    best, best_err = (1, num_perm), np.inf
    for b in range(1, num_perm + 1):
        for r in range(1, num_perm // b + 1):
            fp = quad(lambda s, b=b, r=r: 1.0 - (1.0 - s ** float(r)) ** float(b), 0.0, threshold)[0]
            fn = quad(lambda s, b=b, r=r: (1.0 - s ** float(r)) ** float(b), threshold, 1.0)[0]
            err = (1.0 - miss_weight) * fp + miss_weight * fn
            if err < best_err:
                best, best_err = (b, r), err
    return best


def minhash_pairs(
    sets: Ragged, threshold: float, *, num_perm: int = 128, seed: int = 0, miss_weight: float = 0.9
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
    """Pairs ``i < j`` of word sets with Jaccard ``>= threshold``, found by MinHash LSH.

    Signatures (``num_perm`` hash functions, in Numba, over the sets' token
    ids) are cut into ``b`` bands of ``r`` rows (:func:`lsh_params`); sets
    sharing a band are candidates, and every candidate's Jaccard is computed
    exactly, so every pair returned is a true one.  A true pair is missed
    with probability ``(1 - s^r)^b`` for Jaccard ``s``.  Because spurious
    candidates only cost a verification, the bands are chosen to weigh
    misses 9:1 (``miss_weight=0.9``) rather than datasketch's 1:1: more
    recall for the same ``num_perm``.  Empty sets are never paired.
    Returns ``(i, j, jaccard)`` sorted by ``(i, j)``.

    Parameters
    ----------
    sets : Ragged
        Sorted unique token ids per item (from :func:`~scwo_np.text.word_sets`).
    threshold : float
        The least Jaccard similarity of a pair, in [0, 1].
    num_perm : int
        MinHash permutations per item.
    seed : int
        Seed of the hash family (the same seed gives the same pairs).
    miss_weight : float
        The LSH bands' weight of missed pairs against spurious ones (see :func:`lsh_params`).

    Returns
    -------
    i, j : numpy.ndarray
        int64 indices of each pair, ``i < j``, sorted by ``(i, j)``.
    similarity : numpy.ndarray
        float64, each pair's similarity.

    Examples
    --------
    >>> from scwo_np.text import word_sets
    >>> sets, _ = word_sets(["one two three four five six", "one two three four five six seven",
    ...                      "completely different words here"])
    >>> minhash_pairs(sets, 0.8)[:2]
    (array([0]), array([1]))
    """
    n = len(sets)
    t = check_unit_interval(threshold, name="threshold", meaning="a Jaccard similarity")
    num_perm = _check_num_perm(num_perm)
    bands, rows = lsh_params(t, int(num_perm), float(miss_weight))  # cached
    rng = np.random.default_rng(check_int(seed, name="seed"))
    seeds = rng.integers(0, 2**63, size=bands * rows, dtype=np.uint64)
    sig = np.empty((n, bands * rows), dtype=np.uint64)
    tokens = np.ascontiguousarray(sets.data, dtype=np.int64)
    run_chunks(_signatures, n, sets.indptr, tokens, seeds, sig, chunk=2048)
    keys = np.empty((bands, n), dtype=np.uint64)
    _band_keys(sig, bands, rows, keys)
    valid = sets.lengths() > 0
    found = []
    for b in range(bands):
        a, c = _bucket_pairs(np.argsort(keys[b], kind="stable"), keys[b], valid)
        found.append(a * n + c)
    cand = np.unique(np.concatenate(found)) if found else np.empty(0, np.int64)
    a, c = cand // max(n, 1), cand % max(n, 1)
    keep, sim = _verify_jaccard(sets.indptr, tokens, a, c, t)
    return a[keep], c[keep], sim[keep]
