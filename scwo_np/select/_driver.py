"""The one MMR driver: exact, lazy and threaded budgeted MMR, top-down in one module.

Every MMR selection of the package runs through here: :func:`~scwo_np.select.mmr_select`
and ``mmr_select_multi`` (fast path and validating path alike), ``method="exact"`` and
``"lazy"``, ``lam="auto"``, sentence selection (``mmr_with_relevance``),
:func:`~scwo_np.select.select_batch` (per set :func:`_lazy_serial`, then :func:`_finish_cost_aware`) and
the other strategies' relevance (their preparation is :func:`_first_pass` at ``lam = 1``).
The kernel path is three modules and its calls only go down::

    select/_driver.py   this module: the steps of MMR, in the order they run
        -> select/_heap.py   the struct-of-arrays heap (MMR's pool and every strategy's)
        -> _dot.py           every dot product, in one canonical summation order

Reading order (each function calls only those below it):

1. :func:`_select` — one call does it all: checks, the first pass, the rest.  The
   thread count is a parameter: ``threads=None`` is the one-thread specialisation
   (Numba prunes the ``threads is None`` branches when it compiles, so small
   inputs never compile the ``prange`` kernels: cold start), an int runs the first
   pass and the passes after it on that many threads.  ``scan=None`` is the lazy
   heap, ``scan=True`` the exact scan (every candidate re-scored at every pick);
   both give the same bits.
2. :func:`_first_pass` — row norms, relevance (weighted over several queries), the
   first pick and, speculatively, every row's cosine with it (one read of ``E``).
   Inlined into :func:`_select` when compiled (``IJIT``: a level less to link, half a
   second of cold start); called alone for ``lam="auto"`` and the strategies.
3. :func:`_from_first` — the similarities to the first pick (unless the first pass
   has them), then the lazy heap (:func:`_lazy`) or the exact scan (:func:`_scan`),
   then the cost-aware finish (:func:`_finish_cost_aware`).
4. The keys (:func:`_key`, :func:`_phase_exponent`) that every step ranks by.

Changing the kernel safely
--------------------------
The short form of the one checklist in ``docs/architecture.md`` ("Changing a kernel"),
which also holds the rules every kernel keeps.

* **What the golden bits pin.** ``tests/test_golden.py`` compares with
  ``tests/golden/golden.npz`` (made on x86-64 by ``tests/golden/cases.py``, checked on
  aarch64 too) the bit patterns of the picks *and the gains* of ``mmr_select``
  (``method="exact"`` and ``"lazy"``, several ``lam``, cost-aware, float32 and float64)
  and ``select_batch`` on fixed inputs.  A change that moves one bit of a similarity or
  a key (another summation order, a fused multiply-add, a reassociated expression, a
  ``-0.0`` that became ``0.0``) fails it.  Never rebuild the golden file to make a
  kernel change pass: a moved bit is a changed result for every user.
* **Which tests.** ``HYPOTHESIS_PROFILE=dev python -m pytest tests/select -q -x``
  (every method == the plain reference of ``tests/naive.py``: exact, lazy, threaded
  via tiny ``BLOCK``/``POOL`` and forced threads, batch, multi-query, cost-aware, ties,
  duplicates, negative similarities), then the same without the JIT for line coverage:
  ``NUMBA_DISABLE_JIT=1 HYPOTHESIS_PROFILE=nojit python -m pytest tests/select -q -x
  -W ignore::RuntimeWarning``, and ``python -m pytest tests/test_architecture.py``
  (the kernel path stays these three modules, calls going down).
* **Which gate.** ``python asv_benchmarks/gate.py --against main`` (or the commit your
  change started from): the same workloads timed with both trees in one interleaved
  run, failing only on a slowdown outside the noise it measures
  (``docs/user_guide/performance.md``).  Add the asv figures of
  ``asv_benchmarks/benchmarks/select/mmr.py`` (before/after ratios from one run) to the
  note, and keep the cold start: no ``prange`` around a large call tree, no new
  branch that makes the one-thread specialisation compile a parallel kernel.

Kernels only: contiguous arrays of fixed dtype, no validation (the wrappers in
:mod:`~scwo_np.select._mmr` validate; see their module docs for the semantics, the
speculative first pass and why the lazy heap is exact).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .. import _dot
from .._config import IJIT, JIT, PJIT
from ._heap import (
    _NBINS,
    _before,
    _bin_scale,
    _grown,
    _grown_rows,
    _heapify,
    _pop,
    _refill,
    _runner_up,
    _sift_down,
)

# --------------------------------------------------------------------------
# 1. The driver
# --------------------------------------------------------------------------


@njit(**JIT)
def _select(
    E, q, Q, w, costs, budget, lam, cexp, shift, scan, block, pool, qlo, qhi, max_cost, threads, fix_min
):
    """Budgeted MMR of ``E`` for the query ``q``: ``(picks, gains, ok)``.

    Several queries: ``q = Q[0]``, ``Q`` every query and ``w`` their weights; one query:
    ``Q`` and ``w`` None (weight 1; Numba prunes the several-queries code then).

    ``ok`` is False, with nothing selected, when a cost is outside ``[0, max_cost]``
    or the first query's norm or a row norm is outside ``[qlo, qhi]`` (also NaN, inf
    and zero rows): the caller's validating path then raises the precise error.
    ``threads``: None (one thread) or the thread count; ``scan``: None (lazy heap)
    or True (exact scan).  ``fix_min``: the least elements for a threaded re-pass.
    """
    nrm, rel, first, sims, ok = _first_pass(
        E, q, Q, w, costs, budget, lam, cexp, shift, block, qlo, qhi, max_cost, threads, fix_min
    )
    if not ok or first < 0:
        return np.empty(0, np.int64), np.empty(0), ok
    picks, gains = _from_first(E, nrm, rel, sims, costs, budget, lam, cexp, shift, scan, pool, first, threads)
    return picks, gains, True


# --------------------------------------------------------------------------
# 2. The first pass: norms, relevance, the first pick (and its cosines)
# --------------------------------------------------------------------------


@njit(**IJIT)
def _first_pass(E, q, Q, w, costs, budget, lam, cexp, shift, block, qlo, qhi, max_cost, threads, fix_min):
    """``(nrm, rel, first, sims, ok)``: row norms, relevance ``sum_j w_j cos(e_i, q_j)``, the
    first pick (-1 if nothing fits) and every row's cosine with it.

    With one query and ``lam < 1`` this is one pass over ``E`` that also computes
    every row's cosine with a *candidate* first pick, speculatively (see
    :func:`_pass_one_worker`); only the blocks read before the first pick was
    found are read again.  ``sims`` is empty when not computed (several queries,
    ``lam == 1``).  ``q``, ``Q``, ``w`` and ``ok`` as in :func:`_select`.
    """
    n, d = E.shape
    if Q is None:
        m = 1
        w0 = 1.0
    else:
        m = Q.shape[0]
        w0 = w[0]
    speculate = m == 1 and lam != 1.0
    nrm = np.empty(n)
    rel = np.empty(n)
    sims = np.empty(n if speculate else 0)
    ok, V, qnorm = _fused_checks(E, q, costs, qlo, qhi, max_cost)
    if not ok:
        return nrm, rel, -1, sims, False
    bcand = np.empty((n + block - 1) // block, np.int64)
    c0 = _phase_exponent(cexp, 0, budget)
    if threads is None:
        slots = np.full(1, -1, np.int64)
        first = _pass_one_worker(
            E, V, qnorm, w0, nrm, rel, sims, costs, budget, lam, c0, shift, bcand, slots, block, 0, 1
        )
    else:
        slots = np.full(threads, -1, np.int64)
        cands = np.empty(threads, np.int64)
        _pass_one_parallel(
            E, V[0], qnorm, w0, nrm, rel, sims, costs, budget, lam, c0, shift, bcand, slots, block, cands
        )
        first = _first_of(cands, rel, costs, lam, c0, shift)
    if not _norms_in_range(nrm, qlo, qhi):
        return nrm, rel, -1, sims, False
    if Q is not None and m > 1:
        dots = np.empty(n)
        for j in range(1, m):
            if threads is None:
                _dot._dots_serial(E, Q[j], dots)
            else:
                _dot._dots_parallel(E, Q[j], dots, 8 * threads)
            _accumulate_rel(rel, dots, nrm, _row_norm(Q, j), w[j])
        first = _first_pick(rel, costs, budget, lam, c0, shift)
    elif speculate and first >= 0:
        blocks = _stale_blocks(bcand, first)
        if threads is None:
            _fix_blocks(E, E[first], nrm, nrm[first], sims, blocks, block, 0, blocks.shape[0])
        elif blocks.shape[0] * block * d >= fix_min:
            _fix_blocks_parallel(E, E[first], nrm, nrm[first], sims, blocks, block, threads)
        else:
            _fix_blocks(E, E[first], nrm, nrm[first], sims, blocks, block, 0, blocks.shape[0])
    return nrm, rel, first, sims, True


@njit(**JIT)
def _fused_checks(E, q, costs, qlo, qhi, max_cost):
    """The checks before any work (MMR's and the strategies' preparation): ``(ok, V, qnorm)``
    with ``V[0] = q``.

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
def _first_pick(rel, costs, budget, lam, cexp, shift):
    """Best chunk for an empty selection, or -1 if nothing fits."""
    return _first_pick_range(rel, costs, budget, lam, cexp, shift, 0, rel.shape[0])


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
def _stale_blocks(bcand, first):
    out = np.empty(bcand.shape[0], np.int64)
    m = 0
    for b in range(bcand.shape[0]):
        if bcand[b] != first:
            out[m] = b
            m += 1
    return out[:m]


@njit(**PJIT)
def _fix_blocks_parallel(E, v, nrm, vnorm, sims, blocks, block, nt):
    m = blocks.shape[0]
    for t in prange(nt):
        _fix_blocks(E, v, nrm, vnorm, sims, blocks, block, t * m // nt, (t + 1) * m // nt)


@njit(**JIT)
def _fix_blocks(E, v, nrm, vnorm, sims, blocks, block, start, stop):
    """``sims = cos(e_i, v)`` again for the rows of ``blocks[start:stop]``."""
    n = E.shape[0]
    for k in range(start, stop):
        lo = blocks[k] * block
        _dot._cosines_range4(E, v, nrm, vnorm, sims, lo, min(lo + block, n))


@njit(**JIT)
def _row_norm(Q, j):
    """Canonical norm of row ``j`` of a matrix."""
    return np.sqrt(_dot._dotnorm1(Q, j, Q[j])[1][0])


@njit(**JIT)
def _accumulate_rel(rel, dots, nrm, qnorm, w):
    """``rel += w * (dots / (nrm * qnorm))`` element by element."""
    for i in range(rel.shape[0]):
        rel[i] = rel[i] + w * (dots[i] / (nrm[i] * qnorm))


# --------------------------------------------------------------------------
# 3. After the first pick: the lazy heap or the exact scan, then the finish
# --------------------------------------------------------------------------


@njit(**JIT)
def _from_first(E, nrm, rel, sims, costs, budget, lam, cexp, shift, scan, pool, first, threads):
    """Every pick after ``first``: ``(picks, gains)``, the cost-aware finish included.

    ``sims`` holds every row's cosine with ``first`` (or is empty: then it is
    computed here when ``lam < 1``, on ``threads`` threads when not None).
    """
    n = E.shape[0]
    if sims.shape[0] == n:
        maxsim = sims
    else:
        maxsim = np.empty(n)
        if lam != 1.0:
            if threads is None:
                _sims_to_row(E, nrm, first, maxsim)
            else:
                _dot._cosines_parallel(E, E[first], nrm, nrm[first], maxsim, 8 * threads)
    picks = np.empty(n, np.int64)
    gains = np.empty(n)
    if scan is None:
        count = _lazy(E, nrm, rel, costs, budget, lam, cexp, shift, first, maxsim, picks, gains, pool)
    else:
        count = _scan(E, nrm, rel, costs, budget, lam, cexp, shift, first, maxsim, picks, gains)
    count = _finish_cost_aware(E, nrm, rel, costs, budget, lam, cexp, shift, picks, gains, count, pool)
    return picks[:count].copy(), gains[:count].copy()


@njit(**JIT)
def _lazy_serial(E, nrm, rel, costs, budget, lam, cexp, shift, picks, gains, pool):
    """The first pick, the pass after it and the lazy heap, all on one thread (no finish)."""
    first = _first_pick(rel, costs, budget, lam, _phase_exponent(cexp, 0, budget), shift)
    if first < 0:
        return 0
    maxsim = np.empty(rel.shape[0])
    if lam != 1.0:
        _sims_to_row(E, nrm, first, maxsim)
    return _lazy(E, nrm, rel, costs, budget, lam, cexp, shift, first, maxsim, picks, gains, pool)


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
def _scan(E, nrm, rel, costs, budget, lam, cexp, shift, first, maxsim, picks, gains):
    """Exact MMR after the first pick: every candidate scored at every step.  Returns the count.

    ``maxsim`` as in :func:`_lazy` (updated in place).  ``O(n d)`` per pick: the
    cross-check of the lazy heap (``method="exact"``), with the same keys and bits.
    """
    n = E.shape[0]
    one_m = 1.0 - lam
    avail = np.ones(n, np.bool_)
    sims = np.empty(n)
    picks[0] = first
    gains[0] = lam * rel[first] - one_m * 0.0
    avail[first] = False
    remaining = budget - costs[first]
    count = np.int64(1)
    i = first
    while True:
        if one_m != 0.0 and count > 1:
            _dot._cosines_range4(E, E[i], nrm, nrm[i], sims, np.int64(0), n)
            for j in range(n):
                if sims[j] > maxsim[j]:
                    maxsim[j] = sims[j]
        r = _phase_exponent(cexp, budget - remaining, budget)
        i = np.int64(-1)
        bk = 0.0
        for j in range(n):
            if avail[j] and costs[j] <= remaining:
                k = _key(lam * rel[j] - one_m * (maxsim[j] if one_m != 0.0 else 0.0), costs[j], r, shift)
                if i < 0 or k > bk:
                    i = j
                    bk = k
        if i < 0:
            return count
        picks[count] = i
        gains[count] = lam * rel[i] - one_m * (maxsim[i] if one_m != 0.0 else 0.0)
        avail[i] = False
        remaining -= costs[i]
        count += 1


@njit(**JIT)
def _lazy(E, nrm, rel, costs, budget, lam, cexp, shift, first, maxsim, picks, gains, pool):
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
    scale = _bin_scale(kmin, kmax, nbins)

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
def _raise_max(m, t, nrm_i, pnorm, j):
    """``max(m, t[r] / (nrm_i * pnorm[j + r]))`` over the dot products ``t``."""
    for r in range(len(t)):
        s = t[r] / (nrm_i * pnorm[j + r])
        if s > m:
            m = s
    return m


@njit(**JIT)
def _rekey(state, okey, hkey, hidx, size, rel, maxsim, costs, lam, use_sims, cexp, shift, nbins):
    """Keys from the stored score bounds under the exponent ``cexp``, for the heap (re-heapified) and
    the outsiders.  Returns ``(kmin, scale, has_sentinel, skey, sidx)`` for the refills."""
    one_m = 1.0 - lam
    for p in range(size):
        i = hidx[p]
        hkey[p] = _key(lam * rel[i] - one_m * (maxsim[i] if use_sims else 0.0), costs[i], cexp, shift)
    _heapify(hkey, hidx, size)
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
    return kmin, _bin_scale(kmin, kmax, nbins), has_sentinel, skey, sidx


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
    c2 = _lazy_serial(E, nrm, rel, costs, budget, lam, 0.0, shift, p2, g2, pool)
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


# --------------------------------------------------------------------------
# 4. The keys every step ranks by
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
def _phase_exponent(cexp, used, budget):
    """The cost exponent in force once ``used`` tokens are picked: the default cost-aware mode
    (``0 < cexp < 1``) ranks by the plain score until half the budget is used, then by ``cexp``
    (the most relevant chunks are picked on merit; cost decides how the rest is filled); plain
    MMR (0) and value per token (1) keep theirs throughout."""
    if 0.0 < cexp < 1.0 and 2 * used < budget:
        return 0.0
    return cexp
