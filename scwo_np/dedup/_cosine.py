"""Cosine similarity of embeddings: every pair at or above a threshold, tile by tile with a low-dimensional bound."""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from .. import _dot
from .._config import JIT
from ..validation import (
    check_embeddings,
    check_int,
    check_row_norms,
    check_unit_interval,
)
from ._common import (
    _push_edge,
)

# --------------------------------------------------------------------------
# Cosine on embeddings, tile by tile with a low-dimensional bound
# --------------------------------------------------------------------------

#: Rows per tile of the blocked cosine join (a tile of scores is block^2 float32).
COSINE_BLOCK = 2048

#: Slack added to the bound: far above the float32 rounding of the projected
#: products (~1e-6), so the bound never rejects a true pair.
_COS_MARGIN = 1e-4


@njit(**JIT)
def _check_pairs(ca, cb, i0, j0, S, R, Y, r2, E, nrm, t):
    """Second bound and exact check for candidate entries ``(ca[k], cb[k])`` of one tile.

    ``S[a, b]`` bounds the cosine of rows ``i0 + a`` and ``j0 + b`` from
    above: the product of the leading coordinates plus ``R[i] * R[j]`` (the
    residual norms), both from one BLAS call on rows augmented with ``R``.
    The second bound is the leading product plus that of the next
    coordinates (``Y``) plus the residual norms beyond them (``r2``);
    survivors are checked exactly with the canonical cosine.
    """
    ea = np.empty(0, np.int64)
    eb = np.empty(0, np.int64)
    es = np.empty(0)
    m = np.int64(0)
    fine = t - _COS_MARGIN
    for k in range(ca.shape[0]):
        a = ca[k]
        b = cb[k]
        gi = i0 + a
        gj = j0 + b
        lead = np.float64(S[a, b]) - np.float64(R[gi]) * np.float64(R[gj])
        s2 = 0.0
        for q in range(Y.shape[1]):
            s2 += np.float64(Y[gi, q]) * np.float64(Y[gj, q])
        bound = lead + s2 + r2[gi] * r2[gj]
        if bound < fine and bound > -np.inf:  # NaN or -inf (a BLAS's garbage): check exactly
            continue
        s = _dot._dot1(E, gi, E[gj])[0] / (nrm[gi] * nrm[gj])
        if s >= t:
            ea, eb, es, m = _push_edge(ea, eb, es, m, gi, gj, s)
    return ea[:m], eb[:m], es[:m]


def _principal_axes(X: np.ndarray) -> np.ndarray:
    """Orthonormal axes of ``X``'s rows (float32 columns), largest energy first.

    Any orthonormal rotation keeps every dot product (up to float32
    rounding, which the bound's margin covers); this one puts as much of
    each row's energy as possible into the leading coordinates, which makes
    the bound tight on real, anisotropic embeddings.
    """
    _, V = np.linalg.eigh((X.T @ X).astype(np.float64))
    return np.ascontiguousarray(V[:, ::-1].astype(np.float32))


def _bound_columns(E, inv, V, k):
    """Unit rows (rotated by ``V``): leading ``k`` coordinates (+ a slot for the residual
    norm), the next ``k``, and the norms of what follows each; a slab at a time."""
    n, d = E.shape
    k2 = min(2 * k, d)  # the second stage adds the next k coordinates
    XQ = np.empty((n, k + 1), dtype=np.float32)  # leading coordinates and the residual norm
    Y = np.empty((n, k2 - k), dtype=np.float32)
    R = np.empty(n)
    R2 = np.empty(n)
    for c0 in range(0, n, 8192):  # unit rows, rotated, a slab at a time: O(n k) memory
        X = E[c0 : c0 + 8192] * inv[c0 : c0 + 8192, None]
        if V is not None:
            X = X @ V
        c1 = c0 + X.shape[0]
        XQ[c0:c1, :k] = X[:, :k]
        Y[c0:c1] = X[:, k:k2]
        R[c0:c1] = np.sqrt(np.einsum("ij,ij->i", X[:, k:], X[:, k:]).astype(np.float64))
        R2[c0:c1] = np.sqrt(np.einsum("ij,ij->i", X[:, k2:], X[:, k2:]).astype(np.float64))
    return XQ, Y, R, R2


def cosine_pairs(
    embeddings: ArrayLike, threshold: float, *, block: int = COSINE_BLOCK
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
    """All pairs ``i < j`` of rows with cosine ``>= threshold``, exactly.

    Cosines are the canonical ones of :mod:`scwo_np._dot` (the same bits as
    selection).  Never builds the ``n x n`` matrix: rows are rotated onto
    their principal axes, and tiles of ``block x block`` products of the
    leading quarter of the coordinates (one BLAS call each) plus the
    residual norms bound every cosine from above; only pairs whose bound
    reaches the threshold are computed exactly.  Memory ``O(n d + block^2)``.
    Returns ``(i, j, cosine)`` sorted by ``(i, j)``.

    Parameters
    ----------
    embeddings : array_like, shape (n, d)
        One embedding per item (no zero, NaN or inf row).
    threshold : float
        The least cosine similarity of a pair, in [0, 1].
    block : int
        Rows per tile of the bounding products (memory ``O(block^2)``).

    Returns
    -------
    i, j : numpy.ndarray
        int64 indices of each pair, ``i < j``, sorted by ``(i, j)``.
    similarity : numpy.ndarray
        float64, each pair's similarity.

    Examples
    --------
    >>> E = np.array([[1.0, 0.0], [0.99, 0.05], [0.0, 1.0]])
    >>> i, j, s = cosine_pairs(E, 0.9)
    >>> i, j, np.round(s, 4)
    (array([0]), array([1]), array([0.9987]))
    """
    E = check_embeddings(embeddings)
    t = check_unit_interval(threshold, name="threshold", meaning="a cosine similarity")
    block = check_int(block, name="block", low=1, high=1 << 16, clamp=True)
    n, d = E.shape
    if n == 0:
        e = np.empty(0, np.int64)
        return e, e, np.empty(0)
    _, nrm = _dot.dots_norms(E, E[0])
    check_row_norms(nrm, E)  # also for one row: a NaN row is an error, not "no duplicates"
    if n < 2:
        e = np.empty(0, np.int64)
        return e, e, np.empty(0)
    # Leading coordinates for the bound: about a fifth, in multiples of 16 (at
    # d = 384, 80 of them: measured on random unit vectors, 64 left ~0.3% of
    # pairs to check at t = 0.9 and 80 left ~2e-5, for 30% more BLAS work).
    k = d if d < 48 else 16 * max(2, round(d / 76.8))
    inv = (1.0 / nrm).astype(np.float32)
    V = _principal_axes(E[:: max(1, n // 20000)] * inv[:: max(1, n // 20000), None]) if k < d else None
    for _attempt in range(2):
        XQ, Y, R, R2 = _bound_columns(E, inv, V, k)
        if V is None or (np.isfinite(XQ[:, :k]).all() and np.isfinite(Y).all()):
            break
        V, k = None, d  # a BLAS returned NaN or inf in the rotation: bound on the raw coordinates
    R = (R * (1 + 1e-3) + 1e-6).astype(np.float32)  # inflated: a bound must not be low
    R2 = R2 * (1 + 1e-3) + 1e-6
    XQ[:, k] = R  # one BLAS product per tile then gives the whole first bound
    parts = []
    raised: list[int] = []  # floating-point exceptions of the tile products (see below)
    fine32 = np.float32(t - _COS_MARGIN)
    buf = np.empty((min(block, n), min(block, n)), dtype=np.float32)
    for i0 in range(0, n, block):
        i1 = min(i0 + block, n)
        for j0 in range(i0, n, block):
            j1 = min(j0 + block, n)
            # Unit rows cannot overflow, so a floating-point exception here means the BLAS
            # wrote garbage (OpenBLAS's armv9sme sgemm did under QEMU: NaN and inf entries
            # in a 13 x 13 tile; see CONTRIBUTING); then every non-finite entry is a
            # candidate and is checked exactly.  Costs nothing when nothing is raised.
            with np.errstate(over="call", invalid="call", divide="call", call=lambda *_: raised.append(1)):
                if (i1 - i0, j1 - j0) == buf.shape:  # reuse one buffer: no page faults per tile
                    S = np.matmul(XQ[i0:i1], XQ[j0:j1].T, out=buf)
                else:
                    S = XQ[i0:i1] @ XQ[j0:j1].T
            # Candidates by one vectorised compare (numba's loop was 3x slower here);
            # almost every entry fails it.
            if raised:
                raised.clear()
                flat = np.flatnonzero((S >= fine32) | ~np.isfinite(S))
            else:
                flat = np.flatnonzero(S >= fine32)
            ca, cb = np.divmod(flat, S.shape[1])
            if i0 == j0:
                upper = cb > ca
                ca, cb = ca[upper], cb[upper]
            parts.append(_check_pairs(ca, cb, i0, j0, S, R, Y, R2, E, nrm, t))
    a = np.concatenate([p[0] for p in parts])
    b = np.concatenate([p[1] for p in parts])
    s = np.concatenate([p[2] for p in parts])
    srt = np.lexsort((b, a))
    return a[srt], b[srt], s[srt]
