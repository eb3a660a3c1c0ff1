"""Kernels of the first pass of budgeted MMR: relevance, norms, the first pick (and its cosines).

Private to :mod:`scwo_np.select._mmr` (and :mod:`~scwo_np.select._batch`);
they take contiguous arrays and never validate.  See the module docs of
:mod:`scwo_np.select._mmr` for the speculative one-pass design.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .. import _dot
from .._config import JIT, PJIT


@njit(**JIT)
def _key(score, cost, cexp, shift):
    """The heap key: the score, or in the cost-aware mode (``cexp > 0``) ``v = score + shift``
    scaled by ``c = max(cost, 1) ** cexp``: ``v / c`` when ``v >= 0``, ``v * c`` when negative,
    so of two chunks with the same score the smaller always ranks first."""
    if cexp == 0.0:
        return score
    v = score + shift
    c = max(cost, 1) if cexp == 1.0 else max(cost, 1) ** cexp
    return v / c if v >= 0.0 else v * c


@njit(**JIT)
def _phase_exponent(cexp, used, budget):
    """The cost exponent in force once ``used`` tokens are picked: the default cost-aware mode
    (``0 < cexp < 1``) ranks by the plain score until half the budget is used, then by ``cexp``
    (the most relevant chunks are picked on merit; cost decides how the rest is filled); plain
    MMR (0) and value per token (1) keep theirs throughout."""
    if 0.0 < cexp < 1.0 and 2 * used < budget:
        return 0.0
    return cexp


@njit(**JIT)
def _row_norm(Q, j):
    """Canonical norm of row ``j`` of a matrix."""
    return np.sqrt(_dot._dotnorm1(Q, j, Q[j])[1][0])


@njit(**JIT)
def _accumulate_rel(rel, dots, nrm, qnorm, w):
    """``rel += w * (dots / (nrm * qnorm))`` element by element."""
    for i in range(rel.shape[0]):
        rel[i] = rel[i] + w * (dots[i] / (nrm[i] * qnorm))


@njit(**JIT)
def _first_pick_range(rel, costs, budget, lam, cexp, shift, start, stop):
    """Best chunk in ``[start, stop)`` for an empty selection, or -1."""
    one_m = 1.0 - lam
    best = -1
    best_key = 0.0
    for i in range(start, stop):
        if costs[i] > budget:
            continue
        k = _key(lam * rel[i] - one_m * 0.0, costs[i], cexp, shift)
        if best < 0 or k > best_key:
            best = i
            best_key = k
    return best


@njit(**JIT)
def _first_pick(rel, costs, budget, lam, cexp, shift):
    """Best chunk for an empty selection, or -1 if nothing fits."""
    return _first_pick_range(rel, costs, budget, lam, cexp, shift, 0, rel.shape[0])


@njit(**JIT)
def _pass_one_worker(
    E, V, qnorm, w, nrm, rel, sims, costs, budget, lam, cexp, shift, bcand, slots, block, t, nt
):
    """Worker ``t`` of ``nt`` of the fused first pass; returns its best first pick.

    Processes blocks ``t, t + nt, ...`` of ``block`` rows.  Every row is
    read once for its norm, its relevance ``0 + w * cos(e_i, q)`` and, when
    ``sims`` is not empty, its cosine with a *candidate* first pick: the best
    chunk seen so far by any worker when the block starts (``bcand[b]``, or
    -1).  ``V`` is this worker's scratch, ``V[0] = q``; ``V[1]`` holds the
    candidate's row.  Workers publish their best in ``slots``; a stale read
    only makes a worse candidate, never a wrong result, because the caller
    recomputes every block whose candidate is not the final first pick.
    """
    n, d = E.shape
    nb = (n + block - 1) // block
    speculate = sims.shape[0] == n
    best = np.int64(-1)
    best_key = 0.0
    cur = np.int64(-1)
    cnorm = 1.0
    for b in range(t, nb, nt):
        c = best
        ck = best_key
        for u in range(nt):
            j = slots[u]
            if u != t and j >= 0:
                kj = _key(lam * rel[j], costs[j], cexp, shift)
                if c < 0 or _before(kj, j, ck, c):
                    c = j
                    ck = kj
        lo = b * block
        hi = min(lo + block, n)
        if speculate and c >= 0:
            if c != cur:
                for k in range(d):
                    V[1, k] = E[c, k]
                cnorm = np.sqrt(_dot._dotnorm1(E, c, V[1])[1][0])
                cur = c
            bcand[b] = c
            for i in range(lo, hi):
                t2 = _dot._dotv2norm(E, i, V, 0)
                nrm[i] = np.sqrt(t2[1][0])
                rel[i] = 0.0 + w * (t2[0][0] / (nrm[i] * qnorm))
                sims[i] = t2[0][1] / (nrm[i] * cnorm)
        else:
            bcand[b] = -1
            for i in range(lo, hi):
                t1 = _dot._dotnorm1s(E, i, V[0])
                nrm[i] = np.sqrt(t1[1][0])
                rel[i] = 0.0 + w * (t1[0][0] / (nrm[i] * qnorm))
        f = _first_pick_range(rel, costs, budget, lam, cexp, shift, lo, hi)
        if f >= 0:
            fk = _key(lam * rel[f] - (1.0 - lam) * 0.0, costs[f], cexp, shift)
            if best < 0 or _before(fk, f, best_key, best):
                best = f
                best_key = fk
                slots[t] = best
    return best


@njit(**JIT)
def _first_of(cands, rel, costs, lam, cexp, shift):
    """Best of per-worker first picks ``cands`` (-1 = none), ties to the lowest index."""
    one_m = 1.0 - lam
    best = -1
    best_key = 0.0
    for c in range(cands.shape[0]):
        i = cands[c]
        if i < 0:
            continue
        k = _key(lam * rel[i] - one_m * 0.0, costs[i], cexp, shift)
        if best < 0 or _before(k, i, best_key, best):
            best = i
            best_key = k
    return best


@njit(**JIT)
def _scratch(q, d):
    V = np.empty((2, d), q.dtype)
    for k in range(d):
        V[0, k] = q[k]
    return V


@njit(**PJIT)
def _pass_one_parallel(
    E, q, qnorm, w, nrm, rel, sims, costs, budget, lam, cexp, shift, bcand, slots, block, cands
):
    nt = cands.shape[0]
    for t in prange(nt):
        cands[t] = _pass_one_worker(
            E, _scratch(q, E.shape[1]), qnorm, w, nrm, rel, sims, costs, budget, lam, cexp, shift,
            bcand, slots, block, t, nt,
        )  # fmt: skip


@njit(**JIT)
def _stale_blocks(bcand, first):
    out = np.empty(bcand.shape[0], np.int64)
    m = 0
    for b in range(bcand.shape[0]):
        if bcand[b] != first:
            out[m] = b
            m += 1
    return out[:m]


@njit(**JIT)
def _fix_blocks(E, v, nrm, vnorm, sims, blocks, block, start, stop):
    """``sims = cos(e_i, v)`` again for the rows of ``blocks[start:stop]``."""
    n = E.shape[0]
    for k in range(start, stop):
        lo = blocks[k] * block
        _dot._cosines_range4(E, v, nrm, vnorm, sims, lo, min(lo + block, n))


@njit(**PJIT)
def _fix_blocks_parallel(E, v, nrm, vnorm, sims, blocks, block, nt):
    m = blocks.shape[0]
    for t in prange(nt):
        _fix_blocks(E, v, nrm, vnorm, sims, blocks, block, t * m // nt, (t + 1) * m // nt)


@njit(**JIT)
def _before(ka, ia, kb, ib):
    """Heap order: larger key first, then lower index."""
    return ka > kb or (ka == kb and ia < ib)


@njit(**JIT)
def _fused_checks(E, q, costs, qlo, qhi, max_cost):
    """The fused paths' checks before any work (MMR's and the strategies' preparation):
    ``(ok, V, qnorm)`` with ``V[0] = q``.

    Costs outside ``[0, max_cost]`` or a query norm outside ``[qlo, qhi]``
    (also NaN, inf and zero) make ``ok`` false.
    """
    V = _scratch(q, E.shape[1])
    for i in range(costs.shape[0]):
        if costs[i] < 0 or costs[i] > max_cost:
            return False, V, 0.0
    qnorm = _row_norm(V, 0)
    return qlo <= qnorm <= qhi, V, qnorm


@njit(**JIT)
def _norms_in_range(nrm, lo, hi):
    """Every row norm in ``[lo, hi]`` (false on NaN, inf and zero rows)."""
    for i in range(nrm.shape[0]):
        if not (lo <= nrm[i] <= hi):
            return False
    return True
