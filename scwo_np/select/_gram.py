"""Dot products between candidates and a ground set, in register tiles: the pairwise pass of coverage.

Facility location and cover score a candidate by its cosines with every row
of a *ground set* ``G`` (the candidates they should stand for), so their
first gains take all ``n x m`` products.  One canonical dot product at a time
is add-latency bound (one chain of vector adds); a 4 x 4 tile of rows against
rows (:data:`scwo_np._dot._dot4x4`) keeps 16 independent chains in flight
and reads each block of the 8 rows once for 16 products: about 3.5x faster
per product, near BLAS ``sgemm`` per core, while every product is still the
canonical one (``scwo_np._dot``), bit for bit ``_dot._dot_row(G, j, E[i])``.

The products are kept in the embeddings' type (they are computed in it, so
nothing is rounded) when they fit :data:`CACHE_MAX_BYTES`; the ground block of
that matrix is symmetric to the bit, so only its upper triangle is computed.
Cosines are formed by the caller as ``dot / (gnrm[j] * nrm[i])``, as everywhere
in :mod:`scwo_np.select`.  Large passes are split across threads; no value
depends on the split.

The tile's 16 accumulators of 16 float32 lanes fill AVX-512's 32 registers; a
narrower vector unit (AVX2, NEON) spills some of them to the stack: the same
bits, more slowly (not measured on aarch64 yet).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from .. import _dot
from .._config import JIT, PJIT

#: Rows per tile (both ways): :data:`scwo_np._dot._dot4x4`.
TILE = 4

#: The dot products with the ground set are kept whole (in the embeddings'
#: type: the canonical products are computed in it, so nothing is rounded)
#: when they take at most this many bytes, and later evaluations read a row
#: instead of computing one.  Read at call time, so tests can change it.
CACHE_MAX_BYTES = 512 << 20

#: Passes of fewer multiply-adds than this run on one thread.
PARALLEL_MIN_MACS = 1 << 24


@njit(**JIT)
def _dot_rows(E, i0, r, G, out, o0):
    """``out[o0 + a, j] = e_{i0 + a} . g_j`` (canonical) for ``a < r <= 4`` and every ``j``, in 4 x 4 tiles."""
    m = G.shape[0]
    if r < TILE:
        for a in range(r):
            _dot_row_into(E, i0 + a, G, out[o0 + a])
        return
    j = 0
    while j + TILE <= m:
        t = _dot._dot4x4(E, i0, G, j)
        for a in range(TILE):
            for b in range(TILE):
                out[o0 + a, j + b] = t[a * TILE + b]
        j += TILE
    for a in range(TILE):
        for b in range(j, m):
            out[o0 + a, b] = _dot._dot1(E, i0 + a, G[b])[0]


@njit(**JIT)
def _dot_row_into(E, i, G, out):
    """``out[j] = e_i . g_j`` for every ``j``: one row against four ground rows at a time."""
    m = G.shape[0]
    j = 0
    while j + 4 <= m:
        t = _dot._dotv4(E, i, G, j)
        for b in range(4):
            out[j + b] = t[b]
        j += 4
    for b in range(j, m):
        out[b] = _dot._dot1(E, i, G[b])[0]


@njit(**JIT)
def _sym_fill_range(G, D, b0, b1):
    """``D[i, j] = D[j, i] = g_i . g_j`` for the row blocks ``[b0, b1)`` of ``G`` and every ``j`` from the
    block on: the upper triangle of the Gram matrix in 4 x 4 tiles, each mirrored (a canonical product
    is symmetric to the bit: the same pairs in the same lanes)."""
    m = G.shape[0]
    full = m - m % TILE
    for b in range(b0, b1):
        i0 = b * TILE
        if i0 >= full:  # the last, partial block: its rows against themselves
            for a in range(i0, m):
                for c in range(a, m):
                    x = _dot._dot1(G, a, G[c])[0]
                    D[a, c] = x
                    D[c, a] = x
            continue
        for j0 in range(i0, full, TILE):
            t = _dot._dot4x4(G, i0, G, j0)
            for a in range(TILE):
                for c in range(TILE):
                    D[i0 + a, j0 + c] = t[a * TILE + c]
                    D[j0 + c, i0 + a] = t[a * TILE + c]
        for a in range(i0, i0 + TILE):
            for c in range(full, m):
                x = _dot._dot1(G, a, G[c])[0]
                D[a, c] = x
                D[c, a] = x


@njit(**PJIT)
def _sym_fill_parallel(G, D, bounds):
    for c in prange(bounds.shape[0] - 1):
        _sym_fill_range(G, D, bounds[c], bounds[c + 1])


@njit(**JIT)
def _rows_fill_range(E, G, D, o0, b0, b1):
    """``D[o0 + i, j] = e_i . g_j`` for the rows of blocks ``[b0, b1)`` of ``E``."""
    n = E.shape[0]
    for b in range(b0, b1):
        i0 = b * TILE
        _dot_rows(E, i0, min(TILE, n - i0), G, D, o0 + i0)


@njit(**PJIT)
def _rows_fill_parallel(E, G, D, o0, nchunks):
    nb = (E.shape[0] + TILE - 1) // TILE
    for c in prange(nchunks):
        _rows_fill_range(E, G, D, o0, c * nb // nchunks, (c + 1) * nb // nchunks)


def gram_with_ground(E: np.ndarray, ground: np.ndarray, G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every product of a candidate with the ground set, ``(D, drow)``: ``D[drow[i], j] = e_i . g_j``.

    ``G = E[ground]`` (``ground`` increasing).  ``D`` holds the ground rows
    first, in ground order, then the other candidates: the ground block is
    symmetric, so only its upper triangle is computed (half the products when
    every candidate is in the ground set).  ``D`` is in ``E``'s type, where the
    canonical products are exact.  Unvalidated; threads for large inputs.
    """
    n, d = E.shape
    m = G.shape[0]
    if m == n:  # every candidate is in the ground set
        rest = ground[:0]
        drow = np.arange(n, dtype=np.int64)
    else:
        outside = np.ones(n, dtype=bool)
        outside[ground] = False
        rest = np.flatnonzero(outside)
        drow = np.empty(n, dtype=np.int64)
        drow[ground] = np.arange(m)
        drow[rest] = np.arange(m, n)
    D = np.empty((n, m), E.dtype)
    nb = -(-m // TILE)
    if nb > 1 and m * m * d // 2 >= PARALLEL_MIN_MACS and numba.get_num_threads() > 1:
        work = np.cumsum(nb - np.arange(nb))  # tiles in the upper triangle, block by block
        parts = min(8 * numba.get_num_threads(), nb)
        bounds = np.searchsorted(work, work[-1] * np.arange(parts + 1) / parts).astype(np.int64)
        bounds[0], bounds[-1] = 0, nb
        _sym_fill_parallel(G, D, np.unique(bounds))
    else:
        _sym_fill_range(G, D, 0, nb)
    if rest.shape[0]:
        R = np.ascontiguousarray(E[rest])
        nch = nchunks(R.shape[0], m, d)
        if nch:
            _rows_fill_parallel(R, G, D, m, nch)
        else:
            _rows_fill_range(R, G, D, m, 0, -(-R.shape[0] // TILE))
    return D, drow


@njit(**JIT)
def dots_of(E, D, drow, i, G, buf):
    """Row ``i`` of the products with the ground set: ``D[drow[i]]`` when kept, else computed into ``buf``."""
    if D.shape[0] > 0:
        return D[drow[i]]
    _dot_row_into(E, i, G, buf)
    return buf


def products(E: np.ndarray, G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(D, drow)`` with ``D[drow[i], j] = e_i . g_j`` (``drow`` the identity) for any ground rows ``G``."""
    n = E.shape[0]
    D = np.empty((n, G.shape[0]), E.dtype)
    if G.shape[0]:
        nch = nchunks(n, G.shape[0], E.shape[1])
        if nch:
            _rows_fill_parallel(E, G, D, 0, nch)
        else:
            _rows_fill_range(E, G, D, 0, 0, -(-n // TILE))
    return D, np.arange(n, dtype=np.int64)


def nchunks(n: int, m: int, d: int) -> int:
    """Thread chunks for a pass over ``n x m`` pairs of length ``d``, or 0 for one thread."""
    if n * m * d < PARALLEL_MIN_MACS:
        return 0
    threads = numba.get_num_threads()
    return 0 if threads < 2 else min(8 * threads, -(-n // TILE))


def kept_products(E: np.ndarray, G: np.ndarray, ground: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """``(D, drow)`` to keep: :func:`gram_with_ground` when ``G = E[ground]``, :func:`products`
    when ``ground`` is None (any rows), or empty arrays (rows computed when asked for) when the
    products would take more than :data:`CACHE_MAX_BYTES`."""
    if E.shape[0] * G.shape[0] * E.dtype.itemsize > CACHE_MAX_BYTES:
        return np.empty((0, 0), E.dtype), np.empty(0, np.int64)
    return products(E, G) if ground is None else gram_with_ground(E, ground, G)


def ground_set(E: np.ndarray, nrm: np.ndarray, weight: np.ndarray, ground: np.ndarray):
    """``(G, gnrm, gw)``: the rows ``ground`` (those of positive ``weight``; all of ``E`` when every one is).

    A row of weight 0 adds exactly 0 to every gain, so leaving it out of the
    ground set changes no bit of any sum.
    """
    if ground.shape[0] == E.shape[0]:
        return E, nrm, weight
    return np.ascontiguousarray(E[ground]), nrm[ground], weight[ground]
