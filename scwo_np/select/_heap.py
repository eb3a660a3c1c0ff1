"""The one struct-of-arrays max-heap of :mod:`scwo_np.select`: MMR's lazy heap and every strategy's.

A heap is two parallel arrays, ``hkey`` (float64 keys) and ``hidx`` (int64 item
indices), and a size: the best item at ``[0]``, "best" meaning the larger key,
then the lower index (:func:`_before`), so ties always go to the lowest index,
as every selection method promises.  The functions move both arrays together
and never allocate, except :func:`_grown` and :func:`_refill` when a pool
outgrows its arrays.

Users: the MMR driver (:mod:`~scwo_np.select._driver`, with a *pool* of the best
candidates in the heap and a *sentinel* bounding everything outside it:
:func:`_refill`, :func:`_runner_up`) and the lazy greedy strategies (``_dpp``,
``_ssd``, ``_cover``, ``_facility``: :func:`_full_heap`, :func:`_pop`,
:func:`_sift_down`).  Kernels only: contiguous arrays, no validation.  This
module imports nothing of the package but the Numba flags.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._config import JIT

#: Histogram bins used to find the refill threshold.
_NBINS = 1024


@njit(**JIT)
def _before(ka, ia, kb, ib):
    """Heap order: larger key first, then lower index."""
    return ka > kb or (ka == kb and ia < ib)


@njit(**JIT)
def _sift_down(hkey, hidx, size, pos):
    """Restore the heap below ``pos`` (best element, by :func:`_before`, at the root)."""
    k = hkey[pos]
    ix = hidx[pos]
    while True:
        child = 2 * pos + 1
        if child >= size:
            break
        right = child + 1
        if right < size:
            # Branch-free choice of the better child: which one wins is a coin
            # flip to the branch predictor, and mispredictions dominated re-scoring.
            kr = hkey[right]
            kc = hkey[child]
            child += np.int64((kr > kc) | ((kr == kc) & (hidx[right] < hidx[child])))
        if not _before(hkey[child], hidx[child], k, ix):
            break
        hkey[pos] = hkey[child]
        hidx[pos] = hidx[child]
        pos = child
    hkey[pos] = k
    hidx[pos] = ix


@njit(**JIT)
def _heapify(hkey, hidx, size):
    """Order the first ``size`` entries as a heap, in ``O(size)``."""
    for pos in range(size // 2 - 1, -1, -1):
        _sift_down(hkey, hidx, size, pos)


@njit(**JIT)
def _full_heap(keys):
    """``(hkey, hidx, size)``: every item ``i`` with key ``keys[i]`` (the array is taken, not copied)."""
    n = keys.shape[0]
    hidx = np.empty(n, np.int64)
    for i in range(n):
        hidx[i] = i
    _heapify(keys, hidx, n)
    return keys, hidx, n


@njit(**JIT)
def _pop(hkey, hidx, size):
    """Drop the root; returns the new size."""
    size -= 1
    if size > 0:
        hkey[0] = hkey[size]
        hidx[0] = hidx[size]
        _sift_down(hkey, hidx, size, np.int64(0))
    return size


@njit(**JIT)
def _runner_up(hkey, hidx, size, has_sentinel, skey, sidx):
    """The best key other than the heap's root (its children and the sentinel)."""
    bk = -np.inf
    bi = np.int64(-1)
    for c in range(1, min(3, size)):
        if bi < 0 or _before(hkey[c], hidx[c], bk, bi):
            bk = hkey[c]
            bi = hidx[c]
    if has_sentinel and (bi < 0 or _before(skey, sidx, bk, bi)):
        bk = skey
        bi = sidx
    return bk, bi


@njit(**JIT)
def _grown(a, used, cap):
    """A copy of the vector ``a`` with room for ``cap``, first ``used`` copied.

    Loops rather than slice assignment: numba's slice assignment pulls in
    broadcasting code that costs seconds of compile time.
    """
    out = np.empty(cap, a.dtype)
    for k in range(used):
        out[k] = a[k]
    return out


@njit(**JIT)
def _grown_rows(a, used, cap):
    """:func:`_grown` for a matrix: ``cap`` rows, the first ``used`` copied."""
    out = np.empty((cap, a.shape[1]), a.dtype)
    for r in range(used):
        for k in range(a.shape[1]):
            out[r, k] = a[r, k]
    return out


@njit(**JIT)
def _bin(k, kmin, scale, nbins):
    x = (k - kmin) * scale
    if not x > 0.0:  # also NaN: never convert it to an integer
        return 0
    if x >= nbins:
        return nbins - 1
    return int(x)


@njit(**JIT)
def _bin_scale(kmin, kmax, nbins):
    """Histogram scale for keys in ``[kmin, kmax]``; 0 (one bin) when they are closer than ~1e-305."""
    scale = nbins / (kmax - kmin) if kmax > kmin else 0.0
    return scale if np.isfinite(scale) else 0.0


@njit(**JIT)
def _refill(state, okey, costs, remaining, want, kmin, scale, hist, gen, hkey, hidx, size):
    """Move the best ``~want`` outsiders (``state == 0``) that still fit into the heap.

    Outsiders' keys ``okey`` never change (their max-similarity is still the
    one to the first pick), so a histogram of them gives a threshold bin with
    at least ``want`` keys above it; those join the heap, which is rebuilt in
    ``O(size)``.  Returns ``(size, has_sentinel, skey, sidx, hkey, hidx)``:
    the sentinel is the best outsider left, whose key bounds every other
    outsider's.  Outsiders that no longer fit are retired for good.
    """
    n = okey.shape[0]
    nb = hist.shape[0]
    for b in range(nb):
        hist[b] = 0
    for i in range(n):
        if state[i] != 0:
            continue
        if costs[i] > remaining:
            state[i] = 2
            continue
        hist[_bin(okey[i], kmin, scale, nb)] += 1
    tb = nb - 1
    cnt = hist[tb]
    while tb > 0 and cnt < want:
        tb -= 1
        cnt += hist[tb]
    if size + cnt > hkey.shape[0]:
        cap = 2 * (size + cnt)
        hkey = _grown(hkey, size, cap)
        hidx = _grown(hidx, size, cap)
    has_sentinel = False
    skey = 0.0
    sidx = np.int64(-1)
    for i in range(n):
        if state[i] != 0:
            continue
        k = okey[i]
        if _bin(k, kmin, scale, nb) >= tb:
            hkey[size] = k
            hidx[size] = i
            size += 1
            state[i] = 1
            gen[i] = 1
        elif not has_sentinel or _before(k, i, skey, sidx):
            has_sentinel = True
            skey = k
            sidx = i
    _heapify(hkey, hidx, size)
    return size, has_sentinel, skey, sidx, hkey, hidx
