"""Budgeted MMR selection (SCWO): pick relevant, non-redundant chunks that fit.

At every step the chunk with the best key among those whose token cost fits
the remaining budget is taken (ties to the lowest index); selection stops when
nothing fits.  The MMR score of chunk ``i`` given the selected set ``S`` is::

    score(i, S) = lam * rel(i) - (1 - lam) * max_{j in S} sim(i, j)

with cosine similarities and ``max`` over the empty set equal to 0.  In the
default mode the key is the score; in the cost-aware mode it is the score
scaled by the chunk's cost (see *Cost-aware selection*).

Methods (all return exactly the same indices in the same order):

``"exact"``
    Vectorised NumPy: every step scores every remaining chunk, keeping the
    running max-similarity vector (no ``n x n`` matrix).  ``O(n d)`` per pick.
``"lazy"``
    The spec's SCWO-fast lazy heap, in Numba.  A chunk's stored key is an
    upper bound on its current key, so only chunks that reach the top of the
    heap are re-scored.  See *Lazy heap and negative similarities* below.
``"auto"``
    ``"lazy"``; it is faster than ``"exact"`` at every size we measured
    (``scwo bench``), so ``"exact"`` is kept as the vectorised reference.

Lazy heap and negative similarities
-----------------------------------
The spec claims the lazy heap is lossless because scores only decrease as
``S`` grows.  That is false for the first pick: with ``S`` empty the penalty is
``max(empty) = 0``, but after the first pick it is ``sim(i, first)``, which is
*negative* for chunks pointing away from it, so their scores *rise*.  A heap
keyed on relevance alone then returns a different (wrong) selection whenever
some similarity is negative.  From the second pick on, ``max`` over a growing
set can only grow, so scores really are non-increasing.  The fix used here:
take the first pick from relevance alone, compute every chunk's exact score
after it (one more pass over the embeddings, the same cost as ``E @ q``), and
run the lazy heap from there.  It is then lossless on every input, which the
property tests check against the plain reference.

Similarities are computed in the embeddings' precision with a fixed
summation order, then widened to float64 (see ``scwo_np._dot``), so the
methods, the batch API and the pure-Python reference agree to the last bit,
including on exact ties and duplicate rows.

Cost-aware selection
--------------------
``cost_aware=True`` ranks by ``v = score + shift`` scaled by
``c = max(cost, 1) ** cost_exponent``: ``v / c``, or ``v * c`` when ``v`` is
negative, so that of two chunks with the same score the shorter always ranks
first.

* ``cost_exponent < 1`` (default 0.25, ``shift=0``): a mild preference for
  short chunks, with a *fill guard*: when plain MMR's selection would use
  more of the budget, that selection is returned instead, so the mode never
  leaves the context emptier than plain MMR.  On the bundled sample's real
  queries (``scwo bench --cost-aware``; top-50 candidates, budgets of 400,
  800 and 1,500 tokens) it finds the queried module as often as plain MMR on
  both the tuning and the held-out half of the queries, keeps the share of
  on-module tokens within 2 points, and fills the budget at least as well.
  Use it when chunk lengths vary a lot and the budget is tight.
* ``cost_exponent=1, shift=1`` is the knapsack mode: value per token plus
  the best-singleton check, with the guarantee below.  It packs many tiny
  chunks (headings, one-liners) and on the same queries loses 6-20 points of
  module hits and 15-25 points of on-module tokens against plain MMR: use it
  only when the objective really is total relevance.  This was the default
  cost-aware mode before; the spec's "value per token" idea is kept there.

Guarantees
----------
* Plain MMR (``lam < 1``) is a heuristic.  Its per-pick score is not the
  marginal gain of any set function (the order of picks changes the total),
  so no approximation ratio applies; the spec's (1 - 1/e) claim does not hold.
* ``lam = 1`` is the 0/1 knapsack on relevance.  Plain greedy has no constant
  factor (one large relevant chunk can crowd out many).  The knapsack mode
  (``cost_aware=True, cost_exponent=1``: greedy by ``(rel + shift) / cost``
  plus the best-singleton check, ``shift >= 1`` so every value is
  non-negative) is a 1/2-approximation of ``max sum_{i in S} (rel_i + shift)``
  when all costs are positive.
* The budget is never exceeded, in any mode.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange
from numpy.typing import ArrayLike, NDArray

from . import _dot
from ._config import JIT, PJIT
from .validation import (
    MAX_BUDGET,
    MAX_COST,
    NORM_RANGE,
    check_budget,
    check_costs,
    check_embeddings,
    check_lam,
    check_method,
    check_nonnegative_float,
    check_queries,
    check_query,
    check_row_norms,
    check_unit_interval,
)

__all__ = ["mmr_select", "mmr_select_multi", "METHODS"]

#: Registry of selection methods; tests parametrise over it.
METHODS = ("auto", "exact", "lazy")


# --------------------------------------------------------------------------
# Numba building blocks (serial; shared by the single and batch paths)
# --------------------------------------------------------------------------


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


#: Rows per block of the fused first pass (see :func:`_pass_one_worker`).
#: Read at call time, so tests can shrink it.
BLOCK = 128


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
        _dot._cosines_range(E, v, nrm, vnorm, sims, lo, min(lo + block, n))


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
def _pop(hkey, hidx, size):
    size -= 1
    if size > 0:
        hkey[0] = hkey[size]
        hidx[0] = hidx[size]
        _sift_down(hkey, hidx, size, np.int64(0))
    return size


@njit(**JIT)
def _raise_max(m, t, nrm_i, pnorm, j):
    """``max(m, t[r] / (nrm_i * pnorm[j + r]))`` over the dot products ``t``."""
    for r in range(len(t)):
        s = t[r] / (nrm_i * pnorm[j + r])
        if s > m:
            m = s
    return m


@njit(**JIT)
def _catch_up(E, i, nrm_i, P, pnorm, j0, j1, m):
    """``max(m, sim(i, P[j]) for j0 <= j < j1)``, several picks at a time."""
    j = j0
    while j + 4 <= j1:
        m = _raise_max(m, _dot._dotv4(E, i, P, j), nrm_i, pnorm, j)
        j += 4
    if j + 2 <= j1:
        m = _raise_max(m, _dot._dotv2(E, i, P, j), nrm_i, pnorm, j)
        j += 2
    if j < j1:
        s = _dot._dot1(E, i, P[j])[0] / (nrm_i * pnorm[j])
        if s > m:
            m = s
    return m


@njit(**JIT)
def _catch_up_until(E, i, nrm_i, P, pnorm, j0, j1, m, base, one_m, cost, cexp, shift, bk, bi):
    """:func:`_catch_up`, stopping once chunk ``i`` orders after ``(bk, bi)``.

    Returns ``(m, j)``: the max similarity to picks ``[0, j)``.  Picks are
    read four at a time; after each group the key ``base - one_m * m`` is
    compared with the bound (the best other candidate), and once it orders
    after the bound the chunk cannot be the next pick, so the rest of the
    catch-up waits: the partial max is still an upper bound on its key.
    """
    j = j0
    while j + 4 <= j1:
        m = _raise_max(m, _dot._dotv4(E, i, P, j), nrm_i, pnorm, j)
        j += 4
        if j < j1 and not _before(_key(base - one_m * m, cost, cexp, shift), i, bk, bi):
            return m, j
    return _catch_up(E, i, nrm_i, P, pnorm, j, j1, m), j1


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


#: Candidates first moved into the lazy heap (doubling at each refill).
#: A module attribute, read at call time, so tests can shrink it.
POOL = 256

#: Histogram bins used to find the refill threshold.
_NBINS = 1024


@njit(**JIT)
def _bin(k, kmin, scale, nbins):
    x = (k - kmin) * scale
    if not x > 0.0:  # also NaN: never convert it to an integer
        return 0
    if x >= nbins:
        return nbins - 1
    return int(x)


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
    for pos in range(size // 2 - 1, -1, -1):
        _sift_down(hkey, hidx, size, pos)
    return size, has_sentinel, skey, sidx, hkey, hidx


@njit(**JIT)
def _mmr_lazy_kernel(E, nrm, rel, costs, budget, lam, cexp, shift, first, maxsim, picks, gains, pool):
    """Lazy-heap MMR after the first pick.  Returns the number of picks.

    ``maxsim[i]`` holds ``sim(i, first)`` on entry (ignored when ``lam == 1``)
    and is updated in place.  ``picks``/``gains`` have room for every chunk.

    Only a pool of the best candidates (by their key after the first pick,
    about ``pool`` of them at first) lives in the heap.  The best candidate
    left outside is the *sentinel*: its key bounds every outsider's, so a
    fresh heap top that orders before it is the true argmax; otherwise the
    pool is refilled with about twice as many.
    """
    n = rel.shape[0]
    d = E.shape[1]
    one_m = 1.0 - lam
    use_sims = one_m != 0.0
    picks[0] = first
    gains[0] = lam * rel[first] - one_m * 0.0
    remaining = budget - costs[first]
    count = np.int64(1)

    state = np.zeros(n, np.uint8)  # 0 outside, 1 pooled or picked, 2 retired
    state[first] = 1
    gen = np.empty(n, np.int64)
    okey = np.empty(n)
    min_cost = np.int64(-1)
    kmin = np.inf
    kmax = -np.inf
    for i in range(n):
        if i == first:
            continue
        if min_cost < 0 or costs[i] < min_cost:
            min_cost = costs[i]
        m = maxsim[i] if use_sims else 0.0
        k = _key(lam * rel[i] - one_m * m, costs[i], cexp, shift)
        okey[i] = k
        kmin = min(kmin, k)
        kmax = max(kmax, k)
    nbins = min(_NBINS, max(n, 1))  # any count is correct; few bins suffice for few keys
    hist = np.empty(nbins, np.int64)
    scale = nbins / (kmax - kmin) if kmax > kmin else 0.0
    if not np.isfinite(scale):  # keys closer than ~1e-305: one bin
        scale = 0.0

    want = max(min(pool, n), 1)
    hkey = np.empty(want + 1)
    hidx = np.empty(want + 1, np.int64)
    size = np.int64(0)
    has_sentinel = True
    skey = 0.0
    sidx = np.int64(0)

    pcap = np.int64(16)
    P = np.empty((pcap, d), E.dtype)  # picked rows, for re-scoring
    pnorm = np.empty(pcap)
    for k in range(d):
        P[0, k] = E[first, k]
    pnorm[0] = nrm[first]

    while min_cost >= 0 and remaining >= min_cost:
        need = size == 0
        if not need:
            i = hidx[0]
            if costs[i] > remaining:  # the budget only shrinks: never fits again
                size = _pop(hkey, hidx, size)
                continue
            if use_sims and gen[i] < count:
                bk, bi = _runner_up(hkey, hidx, size, has_sentinel, skey, sidx)
                if bi < 0:
                    m = _catch_up(E, i, nrm[i], P, pnorm, gen[i], count, maxsim[i])
                    j = count
                else:
                    m, j = _catch_up_until(
                        E, i, nrm[i], P, pnorm, gen[i], count, maxsim[i],
                        lam * rel[i], one_m, costs[i], cexp, shift, bk, bi,
                    )  # fmt: skip
                maxsim[i] = m
                gen[i] = j
                hkey[0] = _key(lam * rel[i] - one_m * m, costs[i], cexp, shift)
                _sift_down(hkey, hidx, size, np.int64(0))
                continue
            need = has_sentinel and not _before(hkey[0], i, skey, sidx)
        if need:
            if not has_sentinel:
                break
            size, has_sentinel, skey, sidx, hkey, hidx = _refill(
                state, okey, costs, remaining, want, kmin, scale, hist, gen, hkey, hidx, size
            )
            want = min(2 * want, n)
            continue
        # The top is fresh and orders before every outsider: it is the argmax.
        size = _pop(hkey, hidx, size)
        m = maxsim[i] if use_sims else 0.0
        picks[count] = i
        gains[count] = lam * rel[i] - one_m * m
        remaining -= costs[i]
        if use_sims:
            if count == pcap:
                pcap *= 2
                P = _grown_rows(P, count, pcap)
                pnorm = _grown(pnorm, count, pcap)
            for k in range(d):
                P[count, k] = E[i, k]
            pnorm[count] = nrm[i]
        count += 1
    return count


@njit(**JIT)
def _sims_to_row(E, nrm, f, out):
    """``out[i] = sim(i, f)`` for every row, serially (canonical)."""
    v = np.empty(E.shape[1], E.dtype)
    for k in range(E.shape[1]):
        v[k] = E[f, k]
    _dot._dots_range(E, v, out, 0, E.shape[0])
    for i in range(E.shape[0]):
        out[i] = out[i] / (nrm[i] * nrm[f])


@njit(**JIT)
def _select_lazy_serial(E, nrm, rel, costs, budget, lam, cexp, shift, picks, gains, pool):
    """First pick, the pass after it and the lazy heap, all on one thread."""
    first = _first_pick(rel, costs, budget, lam, cexp, shift)
    if first < 0:
        return 0
    maxsim = np.empty(rel.shape[0])
    if lam != 1.0:
        _sims_to_row(E, nrm, first, maxsim)
    return _mmr_lazy_kernel(E, nrm, rel, costs, budget, lam, cexp, shift, first, maxsim, picks, gains, pool)


@njit(**JIT)
def _best_singleton(rel, costs, budget, lam, shift, picks, gains, count):
    """The cost-aware mode's final check: one chunk alone may beat the greedy set.

    Compares ``sum_k (gain_k + shift)`` of the greedy picks with
    ``lam * rel_j + shift`` of the best single chunk that fits; rewrites
    ``picks``/``gains`` in place and returns the new count.
    """
    one_m = 1.0 - lam
    best = -1
    best_val = 0.0
    for j in range(rel.shape[0]):
        if costs[j] <= budget:
            val = (lam * rel[j] - one_m * 0.0) + shift
            if best < 0 or val > best_val:
                best = j
                best_val = val
    if best < 0:
        return count
    total = 0.0
    for k in range(count):
        total += gains[k] + shift
    if best_val > total:
        picks[0] = best
        gains[0] = lam * rel[best] - one_m * 0.0
        return 1
    return count


@njit(**JIT)
def _finish_cost_aware(E, nrm, rel, costs, budget, lam, cexp, shift, picks, gains, count, pool):
    """The cost-aware mode's last step; rewrites ``picks``/``gains`` and returns the count.

    ``cexp == 1`` (value per token): the best-singleton check, which makes it
    the knapsack 1/2-approximation.  ``0 < cexp < 1``: the fill guard — when
    plain MMR would use more of the budget, its selection is returned
    instead, so preferring short chunks never leaves the context emptier.
    """
    if cexp == 1.0:
        return _best_singleton(rel, costs, budget, lam, shift, picks, gains, count)
    if cexp == 0.0:
        return count
    n = rel.shape[0]
    p2 = np.empty(n, np.int64)
    g2 = np.empty(n)
    c2 = _select_lazy_serial(E, nrm, rel, costs, budget, lam, 0.0, shift, p2, g2, pool)
    used = 0
    for k in range(count):
        used += costs[picks[k]]
    used2 = 0
    for k in range(c2):
        used2 += costs[p2[k]]
    if used2 <= used:
        return count
    for k in range(c2):
        picks[k] = p2[k]
        gains[k] = g2[k]
    return c2


@njit(**JIT)
def _select_fused(E, q, costs, budget, lam, cexp, shift, block, pool, qlo, qhi, max_cost):
    """Everything :func:`mmr_select` does for one small input, in one call.

    The same steps as the validating path (``_pass_one`` on one thread, the
    lazy heap, the best-singleton check), so the same bits, without the
    Python-level set-up between them.  The checks ride along: costs outside
    ``[0, max_cost]``, a query norm and row norms outside ``[qlo, qhi]``
    (which also catches NaN, inf and zero rows) return ``ok = False`` before
    anything is selected, and the caller re-runs the validating path, which
    raises the precise error.  Returns ``(picks, gains, ok)``.
    """
    n, d = E.shape
    empty_i = np.empty(0, np.int64)
    empty_f = np.empty(0)
    for i in range(n):
        if costs[i] < 0 or costs[i] > max_cost:
            return empty_i, empty_f, False
    V = _scratch(q, d)
    qnorm = _row_norm(V, 0)
    if not (qlo <= qnorm <= qhi):
        return empty_i, empty_f, False
    nrm = np.empty(n)
    rel = np.empty(n)
    speculate = lam != 1.0
    sims = np.empty(n if speculate else 0)
    bcand = np.empty((n + block - 1) // block, np.int64)
    slots = np.full(1, -1, np.int64)
    first = _pass_one_worker(
        E, V, qnorm, 1.0, nrm, rel, sims, costs, budget, lam, cexp, shift, bcand, slots, block, 0, 1
    )
    for i in range(n):
        if not (qlo <= nrm[i] <= qhi):
            return empty_i, empty_f, False
    if first < 0:
        return empty_i, empty_f, True
    if speculate:
        blocks = _stale_blocks(bcand, first)
        _fix_blocks(E, E[first], nrm, nrm[first], sims, blocks, block, 0, blocks.shape[0])
        maxsim = sims
    else:
        maxsim = np.empty(n)
    picks = np.empty(n, np.int64)
    gains = np.empty(n)
    count = _mmr_lazy_kernel(E, nrm, rel, costs, budget, lam, cexp, shift, first, maxsim, picks, gains, pool)
    count = _finish_cost_aware(E, nrm, rel, costs, budget, lam, cexp, shift, picks, gains, count, pool)
    return picks[:count].copy(), gains[:count].copy(), True


# --------------------------------------------------------------------------
# Python-level steps
# --------------------------------------------------------------------------


def _pass_one(E, Q, w, costs, budget, lam, cexp, shift):
    """Row norms, relevance ``sum_j w_j cos(e_i, q_j)``, the first pick and its sims.

    Validates the rows (through their norms).  With one query and ``lam < 1``
    this is one (threaded) pass over ``E`` that also computes every row's
    cosine with the first pick, speculatively (see :func:`_pass_one_worker`):
    only the blocks read before the first pick was found are read again.
    Returns ``(nrm, rel, first, sims)``; ``sims`` is None when not computed.
    """
    n, d = E.shape
    nrm = np.empty(n)
    rel = np.empty(n)
    speculate = Q.shape[0] == 1 and lam != 1.0
    sims = np.empty(n if speculate else 0)
    block = BLOCK
    bcand = np.empty(-(-n // block), dtype=np.int64)
    nt = numba.get_num_threads() if _dot._nchunks(E) else 1
    slots = np.full(nt, -1, dtype=np.int64)
    cands = np.empty(nt, dtype=np.int64)
    args = (
        Q[0],
        _row_norm(Q, 0),
        w[0],
        nrm,
        rel,
        sims,
        costs,
        budget,
        lam,
        cexp,
        shift,
        bcand,
        slots,
        block,
    )
    if nt > 1:
        _pass_one_parallel(E, *args, cands)
    else:
        cands[0] = _pass_one_worker(E, _scratch(Q[0], d), *args[1:], 0, 1)
    check_row_norms(nrm, E)
    if Q.shape[0] == 1:
        first = int(_first_of(cands, rel, costs, lam, cexp, shift))
        if not speculate:
            return nrm, rel, first, None
        if first >= 0:
            blocks = _stale_blocks(bcand, first)
            v = E[first]
            if nt > 1 and blocks.shape[0] * block * d >= _dot.PARALLEL_MIN_ELEMENTS:
                _fix_blocks_parallel(E, v, nrm, nrm[first], sims, blocks, block, nt)
            else:
                _fix_blocks(E, v, nrm, nrm[first], sims, blocks, block, 0, blocks.shape[0])
        return nrm, rel, first, sims
    for j in range(1, Q.shape[0]):
        _accumulate_rel(rel, _dot.dots(E, Q[j]), nrm, _row_norm(Q, j), w[j])
    return nrm, rel, int(_first_pick(rel, costs, budget, lam, cexp, shift)), None


def _select_exact(E, nrm, rel, costs, budget, lam, cexp, shift, first, sims):
    n = rel.shape[0]
    one_m = 1.0 - lam
    denom = np.maximum(costs, 1).astype(np.float64)
    avail = np.ones(n, dtype=bool)
    maxsim = np.zeros(n)  # only read while S is empty, where max(empty) = 0
    remaining = budget
    picks: list[int] = []
    gains: list[float] = []
    while True:
        fits = avail & (costs <= remaining)
        if not fits.any():
            break
        score = lam * rel - one_m * maxsim
        if cexp:
            v = score + shift
            c = (
                denom if cexp == 1.0 else np.array([x**cexp for x in denom.tolist()])
            )  # libm pow, as the kernels
            key = np.where(v >= 0.0, v / c, v * c)
        else:
            key = score
        i = int(np.argmax(np.where(fits, key, -np.inf)))
        picks.append(i)
        gains.append(float(score[i]))
        avail[i] = False
        remaining -= int(costs[i])
        if one_m != 0.0:
            sims = _dot.dots_numpy(E, E[i]) / (nrm * nrm[i])
            maxsim = sims if len(picks) == 1 else np.maximum(maxsim, sims)
    return np.asarray(picks, dtype=np.int64), np.asarray(gains, dtype=np.float64)


def _select_lazy(E, nrm, rel, costs, budget, lam, cexp, shift, first, sims):
    n = rel.shape[0]
    picks = np.empty(n, dtype=np.int64)
    gains = np.empty(n)
    if first < 0:
        return picks[:0], gains[:0]
    if sims is not None:
        maxsim = sims
    elif lam != 1.0:
        # The pass after the first pick, threaded for large inputs.
        maxsim = _dot.cosines(E, E[first], nrm, nrm[first])
    else:
        maxsim = np.empty(n)
    count = _mmr_lazy_kernel(E, nrm, rel, costs, budget, lam, cexp, shift, first, maxsim, picks, gains, POOL)
    return picks[:count].copy(), gains[:count].copy()


_IMPLS = {"exact": _select_exact, "lazy": _select_lazy}


_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_NORM_RANGE = {dt: NORM_RANGE[dt.name] for dt in _FLOATS}


def _fast(E, q, costs, budget, lam, method, cexp, shift):
    """``(picks, gains)`` from :func:`_select_fused`, or None for the validating path.

    Taken only when every argument already has the type the kernels use (or
    converts without any judgement: a query or costs array of another
    numeric dtype) and the input is small enough that the first pass would
    run on one thread anyway.  Everything the validating path checks is
    checked here or inside the kernel; on any doubt this returns None and
    :func:`_run` validates from scratch, so errors are the same either way.
    """
    if type(E) is not np.ndarray or type(q) is not np.ndarray or method not in ("auto", "lazy"):
        return None
    dt = E.dtype
    if E.ndim != 2 or dt not in _FLOATS or not E.flags.c_contiguous:
        return None
    n, d = E.shape
    if n == 0 or d == 0 or n * d >= _dot.PARALLEL_MIN_ELEMENTS:
        return None
    if q.shape != (d,) or q.dtype not in _FLOATS:
        return None
    if q.dtype != dt or not q.flags.c_contiguous:
        q = np.ascontiguousarray(q, dtype=dt)
    if type(costs) is not np.ndarray:
        if not isinstance(costs, list | tuple):
            return None
        costs = np.asarray(costs)
    if costs.shape != (n,) or costs.dtype.kind not in "iu":
        return None
    if costs.dtype != np.int64 or not costs.flags.c_contiguous:
        costs = costs.astype(np.int64)  # wrapped values come out negative: rejected below
    if type(budget) is not int or not 0 <= budget <= MAX_BUDGET:
        return None
    if not (isinstance(lam, float) and 0.0 <= lam <= 1.0):
        return None
    if not (isinstance(shift, float) and 0.0 <= shift < np.inf):
        return None
    lo, hi = _NORM_RANGE[dt]
    picks, gains, ok = _select_fused(
        E, q, costs, budget, float(lam), cexp, shift, BLOCK, POOL, lo, hi, MAX_COST
    )
    return (picks, gains) if ok else None


def _cost_exponent(cost_aware: object, cost_exponent: object) -> float:
    """The kernels' ``cexp``: 0.0 for plain MMR, else the cost exponent in (0, 1]."""
    if not isinstance(cost_aware, bool | np.bool_):
        raise TypeError(f"cost_aware must be True or False; got {cost_aware!r}.")
    r = check_unit_interval(cost_exponent, name="cost_exponent", meaning="the power of the token cost")
    if not cost_aware:
        return 0.0
    if r == 0.0:
        raise ValueError(
            "cost_exponent must be > 0 when cost_aware=True (0 would ignore the cost: plain MMR)."
        )
    return r


def _run(E, Q, w, costs, budget, lam, method, cexp, shift, return_gains):
    E = check_embeddings(E)
    n, dim = E.shape
    costs = check_costs(costs, n)
    budget = check_budget(budget)
    lam = check_lam(lam)
    method = check_method(method, METHODS)
    shift = check_nonnegative_float(shift, name="shift")
    if np.ndim(Q) == 2:
        Q = check_queries(Q, dim, dtype=E.dtype, name="query")
    else:
        Q = check_query(Q, dim, dtype=E.dtype).reshape(1, -1)
    if w is None:
        w = np.full(Q.shape[0], 1.0 / Q.shape[0]) if Q.shape[0] > 1 else np.ones(1)
    if n == 0:
        empty = np.empty(0, dtype=np.int64)
        return (empty, np.empty(0)) if return_gains else empty
    nrm, rel, first, sims = _pass_one(E, Q, w, costs, budget, lam, cexp, shift)
    impl = _IMPLS["lazy" if method == "auto" else method]
    picks, gains = impl(E, nrm, rel, costs, budget, lam, cexp, shift, first, sims)
    if cexp:
        p = np.empty(n, dtype=np.int64)
        g = np.empty(n)
        p[: picks.shape[0]] = picks
        g[: gains.shape[0]] = gains
        count = _finish_cost_aware(E, nrm, rel, costs, budget, lam, cexp, shift, p, g, picks.shape[0], POOL)
        picks, gains = p[:count].copy(), g[:count].copy()
    return (picks, gains) if return_gains else picks


def mmr_select(
    embeddings: ArrayLike,
    query: ArrayLike,
    costs: ArrayLike,
    budget: int,
    *,
    lam: float = 0.7,
    method: str = "auto",
    cost_aware: bool = False,
    cost_exponent: float = 0.25,
    shift: float = 0.0,
    return_gains: bool = False,
) -> NDArray[np.int64] | tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Select chunks by budgeted Maximal Marginal Relevance.

    Parameters
    ----------
    embeddings : array_like, shape (n, d)
        One embedding per chunk, float32 or float64 (kept as given; other
        numbers become float64).  Similarities are computed in this
        precision (float32: good to about 1e-7, like BLAS).  Need not be
        normalised; no row may be zero, NaN or inf.
    query : array_like, shape (d,)
        Query embedding (non-zero), rounded to the embeddings' precision.
    costs : array_like of int, shape (n,)
        Token count of each chunk (non-negative whole numbers).
    budget : int
        Token budget; the selected costs never sum to more.
    lam : float, default 0.7
        Relevance/diversity trade-off in [0, 1]: 1 ranks by relevance only,
        0 by novelty only.
    method : {"auto", "exact", "lazy"}
        Algorithm; all return identical results (see module docs).
    cost_aware : bool, default False
        Prefer shorter chunks: rank by ``v = score + shift`` scaled by
        ``c = max(cost, 1) ** cost_exponent`` (``v / c``, or ``v * c`` when
        ``v < 0``), so of two similar chunks the shorter wins and more fit.
        See *Cost-aware selection* in the module docs for when it helps.
    cost_exponent : float in (0, 1], default 0.25
        How strongly cost counts in the cost-aware mode.  0.25 (the
        default) stays within a point of plain MMR's answer recall on the
        bundled questions while filling the budget as well; 1 is value per
        token, which with ``shift=1`` is the knapsack mode (see below).
    shift : float, default 0.0
        Non-negative offset added to scores in the cost-aware mode.  With
        ``cost_exponent=1, shift=1`` every numerator is non-negative and the
        best-singleton check runs: the 1/2-approximation of the knapsack
        on ``rel + 1`` at ``lam = 1``.
    return_gains : bool, default False
        Also return the MMR score of each chunk at the moment it was picked.

    Returns
    -------
    indices : ndarray of int64
        Selected chunk indices, in pick order.
    gains : ndarray of float64
        Only with ``return_gains=True``.

    Raises
    ------
    ValueError, TypeError
        On malformed input, naming the argument and the fix.

    Examples
    --------
    Two near-duplicate chunks about the query and one about something else:
    MMR keeps one of the duplicates and spends the rest of the budget on the
    different chunk.

    >>> import numpy as np
    >>> E = np.array([[1.0, 0.1], [1.0, 0.12], [0.2, 1.0]])
    >>> q = np.array([1.0, 0.3])
    >>> mmr_select(E, q, costs=[100, 100, 100], budget=200, lam=0.5)
    array([1, 2])
    >>> mmr_select(E, q, costs=[100, 100, 100], budget=200, lam=1.0)
    array([1, 0])
    >>> idx, gains = mmr_select(E, q, [100, 100, 100], 200, lam=0.5, return_gains=True)
    >>> np.round(gains, 3)
    array([0.493, 0.079])
    """
    cexp = _cost_exponent(cost_aware, cost_exponent)
    fast = _fast(embeddings, query, costs, budget, lam, method, cexp, shift)
    if fast is not None:
        return fast if return_gains else fast[0]
    if np.ndim(query) != 1:
        raise ValueError(
            f"query must be one embedding, shape (dim,); got shape {np.shape(query)}. "
            "For several queries use mmr_select_multi."
        )
    return _run(embeddings, query, None, costs, budget, lam, method, cexp, shift, return_gains)


def mmr_select_multi(
    embeddings: ArrayLike,
    queries: ArrayLike,
    costs: ArrayLike,
    budget: int,
    *,
    weights: ArrayLike | None = None,
    lam: float = 0.7,
    method: str = "auto",
    cost_aware: bool = False,
    cost_exponent: float = 0.25,
    shift: float = 0.0,
    return_gains: bool = False,
) -> NDArray[np.int64] | tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Budgeted MMR for several queries at once (the spec's "multi-query SCWO").

    The relevance of chunk ``i`` is the weighted mean of its cosine similarity
    to each query, ``rel(i) = sum_j w_j cos(e_i, q_j)`` with ``sum_j w_j = 1``;
    maximising the sum of the per-query MMR scores picks the same chunks.
    With one query it returns exactly what :func:`mmr_select` returns.

    Parameters
    ----------
    queries : array_like, shape (m, d)
        One row per query (each non-zero).
    weights : array_like, shape (m,), optional
        Non-negative query weights, normalised to sum to 1; equal by default.

    Other parameters are as in :func:`mmr_select`.

    Examples
    --------
    >>> import numpy as np
    >>> E = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]])
    >>> Q = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> mmr_select_multi(E, Q, costs=[1, 1, 1], budget=2)
    array([1, 2])
    >>> mmr_select_multi(E, Q, costs=[1, 1, 1], budget=2, weights=[1.0, 0.0], lam=1.0)
    array([0, 1])
    """
    Q = np.asarray(queries)
    if Q.ndim != 2:
        raise ValueError(f"queries must be 2-D (n_queries, dim); got shape {Q.shape}.")
    w = None
    if weights is not None:
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (Q.shape[0],):
            raise ValueError(f"weights must have shape ({Q.shape[0]},), one per query; got {w.shape}.")
        if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise ValueError("weights must be finite, non-negative and not all zero.")
        w = np.ascontiguousarray(w / w.sum())
    elif Q.shape[0] > 1:
        w = np.full(Q.shape[0], 1.0 / Q.shape[0])
    cexp = _cost_exponent(cost_aware, cost_exponent)
    return _run(embeddings, Q, w, costs, budget, lam, method, cexp, shift, return_gains)
