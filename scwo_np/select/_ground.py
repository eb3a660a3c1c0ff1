"""Ground sets for facility location at scale: a few cluster centres stand for every candidate.

Dense facility location scores a candidate by its cosines with *every*
candidate, ``O(n^2 d)`` for the first gains and ``n^2`` numbers to keep: at
n = 10,000 that is one BLAS ``X @ X.T``'s worth of work and 400 MB, at n =
1,000,000 it does not fit anywhere.  With a *clustered ground set* the
candidates to cover are replaced by ``k`` centres, each weighted by the
relevance its members carry, and the work is ``O(n k d)``:

    f(S) = lam * sum_{i in S} a_i + (1 - lam) * sum_c w_c * max_{i in S} max(cos(e_i, mu_c), 0),
    w_c  = sum of a_j over the candidates j of cluster c,   a = max(rel, 0).

The centres come from spherical k-means (:func:`cluster_ground`): ``k``
candidates drawn with a seeded generator, then a few rounds of assigning every
candidate to its nearest centre by cosine (ties to the lowest centre) and
moving each centre to the normalised mean of its members' unit rows (an empty
cluster keeps its centre).  Assignments use the canonical dot products in
4 x 4 tiles on every thread (:mod:`~scwo_np.select._gram`), and the means are
summed in index order, so the clusters are the same on every machine and
thread count.  The centres do not depend on the query, so a batch job that
asks several questions of one candidate set clusters once and passes the
result as ``ground=(centres, labels)``.

What it costs in objective value is measured, not assumed: see the README's
strategy section and ``asv`` ``select.strategies.FacilityVsApricot``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange
from numpy.typing import ArrayLike, NDArray

from .. import _dot
from .._config import JIT, PJIT
from ..validation import check_embeddings, check_int, check_row_norms
from . import _gram

__all__ = ["cluster_ground"]


def cluster_ground(
    embeddings: ArrayLike, k: int, *, iters: int = 4, seed: int = 0
) -> tuple[NDArray[np.floating], NDArray[np.int64]]:
    """Spherical k-means of the candidates: ``(centres, labels)`` for ``ground=`` of facility location.

    Parameters
    ----------
    embeddings : array_like, shape (n, d)
        The candidates (float32/float64; no zero, NaN or inf rows).
    k : int
        Number of centres (at most ``n``; fewer when there are fewer rows).
    iters : int, default 4
        At most this many rounds of re-centring after the seeded start (0:
        the drawn candidates themselves are the centres); it stops early
        when no candidate changes cluster, where more rounds change nothing.
    seed : int, default 0
        Seed of the draw of the starting centres.

    Returns
    -------
    centres : ndarray, shape (k, d)
        Unit vectors in the embeddings' type.
    labels : ndarray of int64, shape (n,)
        The centre of each candidate (nearest by cosine, ties to the lowest).

    Examples
    --------
    >>> import numpy as np
    >>> E = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
    >>> centres, labels = cluster_ground(E, 2)
    >>> labels
    array([1, 1, 0, 0])
    """
    E = check_embeddings(embeddings)
    k = check_int(k, name="k", low=1)
    iters = check_int(iters, name="iters", low=0)
    n = E.shape[0]
    if n == 0:
        raise ValueError("embeddings has no rows; there is nothing to cluster.")
    nrm = _dot.dots_norms(E, E[0])[1]
    check_row_norms(nrm, E)
    return _spherical_kmeans(E, nrm, min(int(k), n), int(iters), seed)


def _spherical_kmeans(E, nrm, k, iters, seed):
    n, d = E.shape
    start = np.sort(np.random.default_rng(seed).choice(n, size=k, replace=False))
    C = np.empty((k, d), E.dtype)
    _unit_rows(E, nrm, start, C)
    labels = np.empty(n, dtype=np.int64)
    assign(E, C, labels)
    for _ in range(iters):
        _recentre(E, nrm, labels, C)
        before = labels.copy()
        assign(E, C, labels)
        if np.array_equal(labels, before):
            break  # a fixed point: further rounds would give these centres and labels again
    return C, labels


@njit(**JIT)
def _unit_rows(E, nrm, rows, C):
    for c in range(rows.shape[0]):
        for k in range(E.shape[1]):
            C[c, k] = np.float64(E[rows[c], k]) / nrm[rows[c]]


@njit(**JIT)
def _recentre(E, nrm, labels, C):
    """Each centre to the normalised mean of its members' unit rows (summed in index order, in float64)."""
    k, d = C.shape
    acc = np.zeros((k, d))
    count = np.zeros(k, np.int64)
    for i in range(E.shape[0]):
        c = labels[i]
        count[c] += 1
        for t in range(d):
            acc[c, t] += np.float64(E[i, t]) / nrm[i]
    for c in range(k):
        if count[c] == 0:
            continue  # an empty cluster keeps its centre
        s = 0.0
        for t in range(d):
            s += acc[c, t] * acc[c, t]
        s = np.sqrt(s)
        if s > 0.0:
            for t in range(d):
                C[c, t] = acc[c, t] / s


@njit(**JIT)
def _assign_range(E, C, cn, labels, b0, b1):
    n = E.shape[0]
    k = C.shape[0]
    buf = np.empty((_gram.TILE, k), E.dtype)
    for b in range(b0, b1):
        i0 = b * _gram.TILE
        r = min(_gram.TILE, n - i0)
        _gram._dot_rows(E, i0, r, C, buf, 0)
        for u in range(r):
            best = 0
            best_s = buf[u, 0] / cn[0]
            for c in range(1, k):
                s = buf[u, c] / cn[c]
                if s > best_s:
                    best = c
                    best_s = s
            labels[i0 + u] = best


@njit(**PJIT)
def _assign_parallel(E, C, cn, labels, nchunks):
    nb = (E.shape[0] + _gram.TILE - 1) // _gram.TILE
    for c in prange(nchunks):
        _assign_range(E, C, cn, labels, c * nb // nchunks, (c + 1) * nb // nchunks)


def assign(E: np.ndarray, C: np.ndarray, labels: np.ndarray) -> None:
    """``labels[i]`` = the centre of largest cosine with row ``i`` (ties: the lowest). Unvalidated."""
    cn = _dot.dots_norms(C, C[0])[1]
    nch = _gram.nchunks(E.shape[0], C.shape[0], E.shape[1])
    if nch:
        _assign_parallel(E, C, cn, labels, nch)
    else:
        _assign_range(E, C, cn, labels, 0, -(-E.shape[0] // _gram.TILE))


def ground_weights(labels: np.ndarray, a: np.ndarray, k: int) -> np.ndarray:
    """``w_c = sum of a_j over the members j of centre c``, added in index order."""
    return _ground_weights(labels, a, np.zeros(k))


@njit(**JIT)
def _ground_weights(labels, a, w):
    for j in range(labels.shape[0]):
        w[labels[j]] += a[j]
    return w
