"""Kernels of the lazy heap: re-scoring, pool refills, the cost-aware finish, the fused small-input path.

Private to :mod:`scwo_np.select._mmr` and :mod:`~scwo_np.select._batch`; they
take contiguous arrays of fixed dtype and preallocated outputs and never
validate.  See the module docs of :mod:`scwo_np.select._mmr`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .. import _dot
from .._config import JIT
from ._first_pass import (
    _before,
    _first_of,
    _first_pick,
    _fix_blocks,
    _fix_blocks_parallel,
    _fused_checks,
    _key,
    _norms_in_range,
    _pass_one_parallel,
    _pass_one_worker,
    _phase_exponent,
    _stale_blocks,
)


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
def _rekey(state, okey, hkey, hidx, size, rel, maxsim, costs, lam, use_sims, cexp, shift, nbins):
    """Keys from the stored score bounds under the exponent ``cexp``, for the heap (re-heapified) and
    the outsiders.  Returns ``(kmin, scale, has_sentinel, skey, sidx)`` for the refills."""
    one_m = 1.0 - lam
    for p in range(size):
        i = hidx[p]
        hkey[p] = _key(lam * rel[i] - one_m * (maxsim[i] if use_sims else 0.0), costs[i], cexp, shift)
    for pos in range(size // 2 - 1, -1, -1):
        _sift_down(hkey, hidx, size, pos)
    kmin = np.inf
    kmax = -np.inf
    has_sentinel = False
    skey = 0.0
    sidx = np.int64(-1)
    for i in range(okey.shape[0]):
        if state[i] != 0:
            continue
        k = _key(lam * rel[i] - one_m * (maxsim[i] if use_sims else 0.0), costs[i], cexp, shift)
        okey[i] = k
        kmin = min(kmin, k)
        kmax = max(kmax, k)
        if not has_sentinel or _before(k, i, skey, sidx):
            has_sentinel = True
            skey = k
            sidx = i
    scale = nbins / (kmax - kmin) if kmax > kmin else 0.0
    if not np.isfinite(scale):
        scale = 0.0
    return kmin, scale, has_sentinel, skey, sidx


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
    cur = _phase_exponent(cexp, budget - remaining, budget)  # the exponent in force

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
        k = _key(lam * rel[i] - one_m * m, costs[i], cur, shift)
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
                if bi >= 0:  # most likely the next to be re-scored: its row on the way
                    _dot._prefetch_row(E, bi)
                if bi < 0:
                    m = _catch_up(E, i, nrm[i], P, pnorm, gen[i], count, maxsim[i])
                    j = count
                else:
                    m, j = _catch_up_until(
                        E, i, nrm[i], P, pnorm, gen[i], count, maxsim[i],
                        lam * rel[i], one_m, costs[i], cur, shift, bk, bi,
                    )  # fmt: skip
                maxsim[i] = m
                gen[i] = j
                hkey[0] = _key(lam * rel[i] - one_m * m, costs[i], cur, shift)
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
        if cur != cexp and _phase_exponent(cexp, budget - remaining, budget) == cexp:
            # Half the budget is used: from here on keys are cost-scaled.  Every stored key
            # came from a score bound; re-scaling keeps it a bound on the new key.
            cur = cexp
            kmin, scale, has_sentinel, skey, sidx = _rekey(
                state, okey, hkey, hidx, size, rel, maxsim, costs, lam, use_sims, cur, shift, hist.shape[0]
            )
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
    first = _first_pick(rel, costs, budget, lam, _phase_exponent(cexp, 0, budget), shift)
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
def _pass_arrays(n, lam, block, nt):
    """The first pass's outputs and scratch for ``nt`` workers: ``(nrm, rel, sims, bcand, slots)``
    (``sims`` empty when ``lam == 1``: no cosine with the first pick is needed)."""
    sims = np.empty(n if lam != 1.0 else 0)
    return (
        np.empty(n),
        np.empty(n),
        sims,
        np.empty((n + block - 1) // block, np.int64),
        np.full(nt, -1, np.int64),
    )


@njit(**JIT)
def _fused_finish(E, nrm, rel, sims, costs, budget, lam, cexp, shift, pool, first):
    """The fused paths after the first pass: the lazy heap and the cost-aware finish."""
    n = E.shape[0]
    maxsim = sims if sims.shape[0] == n else np.empty(n)
    picks = np.empty(n, np.int64)
    gains = np.empty(n)
    count = _mmr_lazy_kernel(E, nrm, rel, costs, budget, lam, cexp, shift, first, maxsim, picks, gains, pool)
    count = _finish_cost_aware(E, nrm, rel, costs, budget, lam, cexp, shift, picks, gains, count, pool)
    return picks[:count].copy(), gains[:count].copy()


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
    n = E.shape[0]
    empty_i = np.empty(0, np.int64)
    empty_f = np.empty(0)
    ok, V, qnorm = _fused_checks(E, q, costs, qlo, qhi, max_cost)
    if not ok:
        return empty_i, empty_f, False
    nrm, rel, sims, bcand, slots = _pass_arrays(n, lam, block, 1)
    c0 = _phase_exponent(cexp, 0, budget)
    first = _pass_one_worker(
        E, V, qnorm, 1.0, nrm, rel, sims, costs, budget, lam, c0, shift, bcand, slots, block, 0, 1
    )
    if not _norms_in_range(nrm, qlo, qhi):
        return empty_i, empty_f, False
    if first < 0:
        return empty_i, empty_f, True
    if sims.shape[0]:
        blocks = _stale_blocks(bcand, first)
        _fix_blocks(E, E[first], nrm, nrm[first], sims, blocks, block, 0, blocks.shape[0])
    picks, gains = _fused_finish(E, nrm, rel, sims, costs, budget, lam, cexp, shift, pool, first)
    return picks, gains, True


@njit(**JIT)
def _select_fused_threaded(
    E, q, costs, budget, lam, cexp, shift, block, pool, qlo, qhi, max_cost, nt, fix_min
):
    """:func:`_select_fused` for a large input: the first pass on ``nt`` threads.

    The steps of the validating path's threaded ``_pass_one`` (the
    speculative pass, then the stale blocks again, on threads when they hold
    at least ``fix_min`` elements), in one call: a threaded call spends a
    good part of its time in Python between its kernels otherwise, most of
    all with cold caches.  Same checks and results as :func:`_select_fused`.
    """
    n, d = E.shape
    empty_i = np.empty(0, np.int64)
    empty_f = np.empty(0)
    ok, V, qnorm = _fused_checks(E, q, costs, qlo, qhi, max_cost)
    if not ok:
        return empty_i, empty_f, False
    nrm, rel, sims, bcand, slots = _pass_arrays(n, lam, block, nt)
    cands = np.empty(nt, np.int64)
    c0 = _phase_exponent(cexp, 0, budget)
    _pass_one_parallel(
        E, V[0], qnorm, 1.0, nrm, rel, sims, costs, budget, lam, c0, shift, bcand, slots, block, cands
    )
    if not _norms_in_range(nrm, qlo, qhi):
        return empty_i, empty_f, False
    first = _first_of(cands, rel, costs, lam, c0, shift)
    if first < 0:
        return empty_i, empty_f, True
    if sims.shape[0]:
        blocks = _stale_blocks(bcand, first)
        if blocks.shape[0] * block * d >= fix_min:
            _fix_blocks_parallel(E, E[first], nrm, nrm[first], sims, blocks, block, nt)
        else:
            _fix_blocks(E, E[first], nrm, nrm[first], sims, blocks, block, 0, blocks.shape[0])
    picks, gains = _fused_finish(E, nrm, rel, sims, costs, budget, lam, cexp, shift, pool, first)
    return picks, gains, True
