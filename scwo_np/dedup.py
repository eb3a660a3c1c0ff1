"""Near-duplicate removal: which retrieved chunks say the same thing twice.

:func:`dedup` finds every pair of items whose similarity reaches a threshold,
joins them into groups (connected components of that duplicate graph, by
union-find), and keeps the highest-scoring member of each group; ties go to
the lowest index.  The result does not depend on the order in which pairs are
found, unlike the specs' greedy "compare with the first member of each group"
loops.  Identical items (same text, or the same embedding row) are grouped by
hashing before any similarity is computed.

Methods (``method=``), each exact unless stated:

``"jaccard"`` (default threshold 0.9)
    The KB Labs ADR's word-set Jaccard: lowercased, whitespace split, words
    longer than two characters; ``|A & B| / |A | B|``, and 0 when both sets
    are empty.  All pairs above the threshold are found by prefix filtering
    (a pair with Jaccard >= t must share one of the rarest
    ``|A| - ceil(t |A|) + 1`` words of each set) and verified exactly.
``"sequence"`` (default threshold 0.7)
    MoRAG's similarity, difflib ``SequenceMatcher(None, a, b).ratio()``
    exactly, with ``a`` the later and ``b`` the earlier text of the pair.
    Optionally ``(1 - w) * ratio + w * entity_jaccard`` with ``entities=``
    and ``entity_weight=w`` (MoRAG's 0.7/0.3 split by default).
``"cosine"`` (default threshold 0.9)
    Cosine similarity of embeddings, computed tile by tile so memory stays
    ``O(n * block)``.
``"minhash"`` (default threshold 0.9)
    MinHash signatures over the same word sets and LSH banding for corpora of
    100k texts and more; every candidate pair is verified with exact Jaccard,
    so there are no false positives, but a pair whose signatures never share
    a band is missed (probability ``(1 - s^r)^b`` for Jaccard ``s``, ``b``
    bands of ``r`` rows).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from . import _dot
from ._config import JIT
from ._parallel import map_chunks, run_chunks
from .text import Ragged, code_points, word_sets
from .validation import (
    check_embeddings,
    check_int,
    check_method,
    check_row_norms,
    check_scores,
    check_texts,
    check_unit_interval,
)

__all__ = [
    "DEDUP_METHODS",
    "Dedup",
    "cosine_pairs",
    "dedup",
    "jaccard_pairs",
    "lsh_params",
    "minhash_pairs",
    "sequence_pairs",
]

#: Registry of dedup methods and their default thresholds; tests parametrise over it.
DEDUP_METHODS = {"jaccard": 0.9, "sequence": 0.7, "cosine": 0.9, "minhash": 0.9}


class Dedup(NamedTuple):
    """What :func:`dedup` kept and dropped, and why.

    ``keep`` and ``dropped`` are ascending indices into the input;
    ``duplicate_of[k]`` is the kept item that ``dropped[k]`` was grouped with
    and ``similarity[k]`` their similarity under the method (1.0 for
    identical items).  Groups are connected components, so a dropped item can
    sit below the threshold against the kept one when a chain of pairs above
    it links them.
    """

    keep: NDArray[np.int64]
    dropped: NDArray[np.int64]
    duplicate_of: NDArray[np.int64]
    similarity: NDArray[np.float64]


# --------------------------------------------------------------------------
# Union-find over the duplicate graph
# --------------------------------------------------------------------------


@njit(**JIT)
def _find(parent, x):
    while parent[x] != x:
        parent[x] = parent[parent[x]]  # path halving
        x = parent[x]
    return x


@njit(**JIT)
def _union_edges(parent, a, b):
    """Union every edge ``(a[k], b[k])``; the smaller root becomes the parent."""
    for k in range(a.shape[0]):
        ra = _find(parent, a[k])
        rb = _find(parent, b[k])
        if ra < rb:
            parent[rb] = ra
        elif rb < ra:
            parent[ra] = rb


@njit(**JIT)
def _roots(parent):
    out = np.empty(parent.shape[0], np.int64)
    for i in range(parent.shape[0]):
        out[i] = _find(parent, i)
    return out


def _components(n: int, edges: list[tuple[NDArray[np.int64], NDArray[np.int64]]]) -> NDArray[np.int64]:
    """Component label (its smallest member) of every item."""
    parent = np.arange(n, dtype=np.int64)
    for a, b in edges:
        _union_edges(parent, np.ascontiguousarray(a, np.int64), np.ascontiguousarray(b, np.int64))
    return _roots(parent)


def _keep_best(roots: NDArray[np.int64], scores: NDArray[np.float64]) -> NDArray[np.int64]:
    """For every item, the best member of its group: highest score, then lowest index."""
    n = roots.shape[0]
    order = np.lexsort((np.arange(n), -scores, roots))
    first = np.ones(n, dtype=bool)
    first[1:] = roots[order[1:]] != roots[order[:-1]]
    best_of_root = np.empty(n, dtype=np.int64)
    best_of_root[roots[order[first]]] = order[first]
    return best_of_root[roots]


def _identical(keys: Sequence) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Edges joining every item to the first item with an equal (hashable) key."""
    first: dict = {}
    a, b = [], []
    for i, k in enumerate(keys):
        j = first.setdefault(k, i)
        if j != i:
            a.append(j)
            b.append(i)
    return np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)


# --------------------------------------------------------------------------
# Jaccard on word sets, by prefix filtering
# --------------------------------------------------------------------------


@njit(**JIT)
def _jaccard_sorted(x, y):
    """Jaccard of two sorted unique integer arrays (0 when both are empty)."""
    i = 0
    j = 0
    inter = 0
    while i < x.shape[0] and j < y.shape[0]:
        if x[i] == y[j]:
            inter += 1
            i += 1
            j += 1
        elif x[i] < y[j]:
            i += 1
        else:
            j += 1
    union = x.shape[0] + y.shape[0] - inter
    if union == 0:
        return 0.0
    return inter / union


@njit(**JIT)
def _push_edge(ea, eb, es, m, a, b, s):
    if m == ea.shape[0]:
        cap = 2 * m + 16
        na = np.empty(cap, np.int64)
        nb = np.empty(cap, np.int64)
        ns = np.empty(cap)
        for k in range(m):
            na[k] = ea[k]
            nb[k] = eb[k]
            ns[k] = es[k]
        ea, eb, es = na, nb, ns
    ea[m] = a
    eb[m] = b
    es[m] = s
    return ea, eb, es, m + 1


@njit(**JIT)
def _overlap_at_least(x, y, need):
    """``|x & y|`` of sorted unique arrays, or -1 as soon as it cannot reach ``need``."""
    i = 0
    j = 0
    inter = 0
    while i < x.shape[0] and j < y.shape[0]:
        if inter + min(x.shape[0] - i, y.shape[0] - j) < need:
            return -1
        if x[i] == y[j]:
            inter += 1
            i += 1
            j += 1
        elif x[i] < y[j]:
            i += 1
        else:
            j += 1
    return inter


@njit(**JIT)
def _jaccard_join(indptr, ranks, t, plen, pptr, plist, ppos):
    """Every pair ``i < j`` with Jaccard >= ``t``, from the prefix index.

    ``ranks`` holds each set's tokens as global ranks (rarest first), sorted
    within each set; ``plen[i]`` is set ``i``'s prefix length and
    ``plist[pptr[r]:pptr[r + 1]]`` the sets with rank ``r`` in their prefix
    (ascending), at positions ``ppos``.  The first prefix token two sets
    share is their first common token, so the overlap is at most one plus
    the shorter remainder (positional filter); survivors are verified with
    an early-exit merge, and the ratio itself decides.
    """
    n = indptr.shape[0] - 1
    seen = np.full(n, -1, np.int64)
    ea = np.empty(0, np.int64)
    eb = np.empty(0, np.int64)
    es = np.empty(0)
    m = np.int64(0)
    frac = t / (1.0 + t) - 1e-9  # J >= t  <=>  |A & B| >= t / (1 + t) * (|A| + |B|)
    for i in range(n):
        si = indptr[i + 1] - indptr[i]
        if si == 0:
            continue
        x = ranks[indptr[i] : indptr[i + 1]]
        for p in range(plen[i]):
            r = x[p]
            for k in range(pptr[r], pptr[r + 1]):
                j = plist[k]
                if j <= i or seen[j] == i:
                    continue
                seen[j] = i
                sj = indptr[j + 1] - indptr[j]
                need = np.ceil(frac * (si + sj))
                if 1 + min(si - p - 1, sj - ppos[k] - 1) < need:
                    continue
                y = ranks[indptr[j] : indptr[j + 1]]
                inter = _overlap_at_least(x, y, need)
                if inter < 0:
                    continue
                s = inter / (si + sj - inter)
                if s >= t:
                    ea, eb, es, m = _push_edge(ea, eb, es, m, i, j, s)
    return ea[:m], eb[:m], es[:m]


def jaccard_pairs(
    sets: Ragged, threshold: float
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
    """All pairs ``i < j`` of word sets with Jaccard ``>= threshold``, exactly.

    ``sets`` is a :class:`~scwo_np.text.Ragged` of sorted unique token ids
    (as from :func:`~scwo_np.text.word_sets`).  Returns ``(i, j, jaccard)``
    sorted by ``(i, j)``.  With ``threshold == 0`` every pair qualifies, so
    this is ``O(n^2)``; :func:`dedup` short-cuts that case.

    Examples
    --------
    >>> from scwo_np.text import word_sets
    >>> sets, _ = word_sets(["red green blue", "green blue red", "cyan magenta"])
    >>> jaccard_pairs(sets, 0.9)
    (array([0]), array([1]), array([1.]))
    """
    t = check_unit_interval(threshold, name="threshold", meaning="a Jaccard similarity")
    n = len(sets)
    lengths = sets.lengths()
    if t <= 0.0:
        i, j = np.triu_indices(n, 1)
        s = np.array([_jaccard_sorted(sets.row(a), sets.row(b)) for a, b in zip(i, j, strict=True)])
        return i.astype(np.int64), j.astype(np.int64), s.reshape(-1)
    # Global ranks: rarest token first (ties by id), and each set sorted by rank.
    freq = np.bincount(sets.data, minlength=1) if sets.data.size else np.zeros(1, np.int64)
    order = np.lexsort((np.arange(freq.shape[0]), freq))
    rank_of = np.empty_like(order)
    rank_of[order] = np.arange(order.shape[0])
    owner = np.repeat(np.arange(n, dtype=np.int64), lengths)
    key = (owner << 32) | rank_of[sets.data]  # sort each set by rank, in one global sort
    key.sort()
    ranks = key & 0xFFFFFFFF
    # Prefix length |A| - o + 1 with o = ceil(t |A|), lowered a hair against rounding.
    overlap = np.maximum(np.ceil(lengths * (t - 1e-9)), 1).astype(np.int64)
    plen = np.where(lengths > 0, lengths - overlap + 1, 0).astype(np.int64)
    pos = np.arange(ranks.shape[0]) - sets.indptr[owner]
    in_prefix = pos < plen[owner]
    pr = ranks[in_prefix]
    srt = np.argsort((pr << 32) | owner[in_prefix], kind="stable")
    plist = np.ascontiguousarray(owner[in_prefix][srt])
    ppos = np.ascontiguousarray(pos[in_prefix][srt])
    pptr = np.zeros(order.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(pr, minlength=order.shape[0]), out=pptr[1:])
    a, b, s = _jaccard_join(sets.indptr, ranks, t, plen, pptr, plist, ppos)
    srt = np.lexsort((b, a))
    return a[srt], b[srt], s[srt]


# --------------------------------------------------------------------------
# difflib's SequenceMatcher.ratio(), compiled
# --------------------------------------------------------------------------


@njit(**JIT)
def _b2j(b, nchars):
    """difflib's ``b2j`` as CSR over character ids, with ``autojunk``'s popular purge.

    ``pos[start[c]:start[c + 1]]`` are the positions of character ``c`` in
    ``b``, ascending; a character occurring more than ``len(b) // 100 + 1``
    times in a ``b`` of 200 or more is "popular" and has no positions.
    """
    lb = b.shape[0]
    cnt = np.zeros(nchars + 1, np.int64)
    for j in range(lb):
        cnt[b[j] + 1] += 1
    if lb >= 200:
        ntest = lb // 100 + 1
        for c in range(nchars):
            if cnt[c + 1] > ntest:
                cnt[c + 1] = 0
    start = np.empty(nchars + 1, np.int64)
    start[0] = 0
    for c in range(nchars):
        start[c + 1] = start[c] + cnt[c + 1]
    fill = start.copy()
    pos = np.empty(start[nchars], np.int64)
    for j in range(lb):
        c = b[j]
        if fill[c] < start[c + 1]:
            pos[fill[c]] = j
            fill[c] += 1
    return start, pos


@njit(**JIT)
def _longest_match(a, b, start, pos, alo, ahi, blo, bhi, jlen, jstamp, gen):
    """difflib's ``find_longest_match`` (no junk function), exactly.

    ``jlen``/``jstamp`` are ``(2, len(b))`` scratch rows standing in for the
    ``j2len`` dicts of consecutive ``i``: a value is valid when its stamp is
    the row's generation, so nothing is ever cleared.  Returns
    ``(i, j, size, gen)``.
    """
    besti = alo
    bestj = blo
    bestsize = 0
    gen += 2  # the first row must not see the previous call's last row
    for i in range(alo, ahi):
        cur = i & 1
        prv = 1 - cur
        c = a[i]
        for q in range(start[c], start[c + 1]):
            j = pos[q]
            if j < blo:
                continue
            if j >= bhi:
                break
            k = 1
            if j > 0 and jstamp[prv, j - 1] == gen - 1:
                k = jlen[prv, j - 1] + 1
            jlen[cur, j] = k
            jstamp[cur, j] = gen
            if k > bestsize:
                besti = i - k + 1
                bestj = j - k + 1
                bestsize = k
        gen += 1
    while besti > alo and bestj > blo and a[besti - 1] == b[bestj - 1]:
        besti -= 1
        bestj -= 1
        bestsize += 1
    while besti + bestsize < ahi and bestj + bestsize < bhi and a[besti + bestsize] == b[bestj + bestsize]:
        bestsize += 1
    return besti, bestj, bestsize, gen


@njit(**JIT)
def _matches(a, b, start, pos, jlen, jstamp, gen, stack):
    """Total size of difflib's ``get_matching_blocks`` (the ratio's numerator)."""
    total = 0
    top = 0
    stack[0, 0] = 0
    stack[0, 1] = a.shape[0]
    stack[0, 2] = 0
    stack[0, 3] = b.shape[0]
    top = 1
    while top > 0:
        top -= 1
        alo = stack[top, 0]
        ahi = stack[top, 1]
        blo = stack[top, 2]
        bhi = stack[top, 3]
        i, j, k, gen = _longest_match(a, b, start, pos, alo, ahi, blo, bhi, jlen, jstamp, gen)
        if k:
            total += k
            if alo < i and blo < j:
                stack[top, 0] = alo
                stack[top, 1] = i
                stack[top, 2] = blo
                stack[top, 3] = j
                top += 1
            if i + k < ahi and j + k < bhi:
                stack[top, 0] = i + k
                stack[top, 1] = ahi
                stack[top, 2] = j + k
                stack[top, 3] = bhi
                top += 1
    return total, gen


@njit(**JIT)
def _char_overlap(ca, na, cb, nb):
    """``sum_c min(count_a(c), count_b(c))`` from sorted (char, count) rows."""
    i = 0
    j = 0
    s = 0
    while i < ca.shape[0] and j < cb.shape[0]:
        if ca[i] == cb[j]:
            s += min(na[i], nb[j])
            i += 1
            j += 1
        elif ca[i] < cb[j]:
            i += 1
        else:
            j += 1
    return s


@njit(**JIT)
def _pair_weights(eptr, i, j, w_content, w_entity):
    """``(w_content, w_entity)`` for a pair, or ``(1, 0)`` when either has no entities.

    An item without entities says nothing about entity overlap, so the
    entity term does not count for it (instead of counting as 0, which would
    cap the pair's similarity at ``w_content`` and merge only exact copies).
    """
    if eptr[i + 1] == eptr[i] or eptr[j + 1] == eptr[j]:
        return 1.0, 0.0
    return w_content, w_entity


@njit(**JIT)
def _sequence_join(
    cptr, cdata, hptr, hchar, hcount, nchars, eptr, edata, active, w_content, w_entity, t, lo, hi
):
    """Pairs ``(i, j)``, ``j < i``, with ``w_c * ratio(text_i, text_j) + w_e * ej >= t``.

    Texts are character-id rows (``cdata``) with their character histograms
    (``hchar``/``hcount``); ``ej`` is the entity Jaccard (0 without entities).
    For every "b" text ``j`` in ``[lo, hi)`` (the earlier one of each pair),
    difflib's upper bounds ``real_quick_ratio`` (lengths) and
    ``quick_ratio`` (character counts) discard pairs that cannot pass; the
    rest are matched exactly.
    """
    n = cptr.shape[0] - 1
    ea = np.empty(0, np.int64)
    eb = np.empty(0, np.int64)
    es = np.empty(0)
    m = np.int64(0)
    gen = np.int64(0)
    stack = np.empty((16, 4), np.int64)
    for j in range(lo, hi):
        if not active[j]:
            continue
        b = cdata[cptr[j] : cptr[j + 1]]
        lb = b.shape[0]
        built = False
        start = np.empty(0, np.int64)
        pos = np.empty(0, np.int64)
        jlen = np.empty((2, lb), np.int64)
        jstamp = np.full((2, lb), -1, np.int64)
        for i in range(j + 1, n):
            if not active[i]:
                continue
            a = cdata[cptr[i] : cptr[i + 1]]
            la = a.shape[0]
            ej = _jaccard_sorted(edata[eptr[i] : eptr[i + 1]], edata[eptr[j] : eptr[j + 1]])
            wc, we = _pair_weights(eptr, i, j, w_content, w_entity)
            L = la + lb
            if L == 0:
                r = 1.0
            else:
                if wc * (2.0 * min(la, lb) / L) + we * ej < t:
                    continue
                ov = _char_overlap(
                    hchar[hptr[i] : hptr[i + 1]], hcount[hptr[i] : hptr[i + 1]],
                    hchar[hptr[j] : hptr[j + 1]], hcount[hptr[j] : hptr[j + 1]],
                )  # fmt: skip
                if wc * (2.0 * ov / L) + we * ej < t:
                    continue
                if not built:
                    start, pos = _b2j(b, nchars)
                    built = True
                if stack.shape[0] < min(la, lb) + 2:
                    stack = np.empty((min(la, lb) + 2, 4), np.int64)
                mt, gen = _matches(a, b, start, pos, jlen, jstamp, gen, stack)
                r = 2.0 * mt / L
            s = wc * r + we * ej
            if s >= t:
                ea, eb, es, m = _push_edge(ea, eb, es, m, j, i, s)
    return ea[:m], eb[:m], es[:m]


@njit(**JIT)
def _sequence_sims(cptr, cdata, nchars, eptr, edata, w_content, w_entity, lo, hi):
    """The combined similarity of each pair ``(lo[k], hi[k])``, ``lo < hi`` (b = lo)."""
    out = np.empty(lo.shape[0])
    gen = np.int64(0)
    for k in range(lo.shape[0]):
        j = lo[k]
        i = hi[k]
        b = cdata[cptr[j] : cptr[j + 1]]
        a = cdata[cptr[i] : cptr[i + 1]]
        L = a.shape[0] + b.shape[0]
        start, pos = _b2j(b, nchars)
        jlen = np.empty((2, b.shape[0]), np.int64)
        jstamp = np.full((2, b.shape[0]), -1, np.int64)
        stack = np.empty((min(a.shape[0], b.shape[0]) + 2, 4), np.int64)
        mt, gen = _matches(a, b, start, pos, jlen, jstamp, gen, stack)
        r = 2.0 * mt / L if L else 1.0
        ej = _jaccard_sorted(edata[eptr[i] : eptr[i + 1]], edata[eptr[j] : eptr[j + 1]])
        wc, we = _pair_weights(eptr, i, j, w_content, w_entity)
        out[k] = wc * r + we * ej
    return out


@njit(**JIT)
def _char_tables(indptr, data):
    """Dense character ids (in code point order) and each text's sorted character histogram."""
    n = indptr.shape[0] - 1
    top = 0
    for k in range(data.shape[0]):
        top = max(top, data[k])
    lut = np.full(top + 1, -1, np.int64)
    for k in range(data.shape[0]):
        lut[data[k]] = 0
    nchars = 0
    for c in range(top + 1):
        if lut[c] == 0:
            lut[c] = nchars
            nchars += 1
    cdata = np.empty(data.shape[0], np.int64)
    for k in range(data.shape[0]):
        cdata[k] = lut[data[k]]
    count = np.zeros(max(nchars, 1), np.int64)
    hptr = np.zeros(n + 1, np.int64)
    hchar = np.empty(data.shape[0], np.int64)
    hcount = np.empty(data.shape[0], np.int64)
    m = 0
    for i in range(n):
        start = m
        for k in range(indptr[i], indptr[i + 1]):
            c = cdata[k]
            if count[c] == 0:
                hchar[m] = c
                m += 1
            count[c] += 1
        srt = np.sort(hchar[start:m])
        for q in range(m - start):  # a loop, not slice assignment (cheaper to compile)
            hchar[start + q] = srt[q]
        for q in range(start, m):
            hcount[q] = count[hchar[q]]
            count[hchar[q]] = 0
        hptr[i + 1] = m
    return cdata, nchars, hptr, hchar[:m].copy(), hcount[:m].copy()


class _SequenceData(NamedTuple):
    cptr: NDArray[np.int64]
    cdata: NDArray[np.int64]
    hptr: NDArray[np.int64]
    hchar: NDArray[np.int64]
    hcount: NDArray[np.int64]
    nchars: int
    eptr: NDArray[np.int64]
    edata: NDArray[np.int64]


def _sequence_data(texts: Sequence[str], entities: Sequence[Sequence[str]] | None) -> _SequenceData:
    """Character ids, character histograms and entity-id sets, as CSR arrays."""
    cps = code_points(texts)
    n = len(cps)
    cdata, nchars, hptr, hchar, hcount = _char_tables(cps.indptr, cps.data)
    ent = _id_sets(entities if entities is not None else [[] for _ in range(n)])
    return _SequenceData(
        cps.indptr, cdata, hptr, hchar, hcount, max(nchars, 1),
        ent.indptr, ent.data.astype(np.int64),
    )  # fmt: skip


def _id_sets(items: Sequence[Sequence[str]]) -> Ragged:
    """Each item's set of strings as sorted unique integer ids (CSR)."""
    vocab: dict[str, int] = {}
    get = vocab.setdefault
    rows = [sorted({get(e, len(vocab)) for e in row}) for row in items]
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in rows], out=indptr[1:])
    data = np.array([x for r in rows for x in r], dtype=np.int64)
    return Ragged(indptr, data)


def sequence_pairs(
    texts: Sequence[str],
    threshold: float,
    *,
    entities: Sequence[Sequence[str]] | None = None,
    entity_weight: float = 0.3,
    lowercase: bool = True,
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
    """All pairs ``i < j`` whose MoRAG similarity is ``>= threshold``, exactly.

    The similarity is ``SequenceMatcher(None, texts[j], texts[i]).ratio()``
    (difflib, ``autojunk`` on: the later text is ``a``, the earlier ``b``),
    or with ``entities`` MoRAG's ``(1 - w) * ratio + w * entity_jaccard``
    (``w = entity_weight``).  When either item of a pair has no entities
    the entity term does not count and the similarity is the ratio alone
    (MoRAG's formula would count it as 0, so without entities only exact
    copies could ever reach its 0.7 threshold).
    With ``lowercase`` (the default) both texts are compared as
    ``str.lower()``: redundancy should not hinge on capitals, and without it
    the MoRAG spec's own example ("AI is transforming healthcare" against
    "Artificial intelligence is changing healthcare", same entities) scores
    0.692 and is not merged at the spec's 0.7, while its test expects it to
    be (lowercased: 0.711).
    difflib's own upper bounds (length, then character counts) skip pairs
    that cannot pass; the others are matched by a compiled port of
    difflib's ``get_matching_blocks``, block for block.  Returns
    ``(i, j, similarity)`` sorted by ``(i, j)``.

    Examples
    --------
    >>> texts = ["AI is transforming healthcare", "Artificial intelligence is changing healthcare",
    ...          "Machine learning in finance"]
    >>> ents = [["AI", "healthcare"], ["AI", "healthcare"], ["ML", "finance"]]
    >>> i, j, s = sequence_pairs(texts, 0.7, entities=ents)
    >>> i, j, np.round(s, 3)
    (array([0]), array([1]), array([0.711]))
    >>> sequence_pairs(texts, 0.7, entities=ents, lowercase=False)[0]
    array([], dtype=int64)
    """
    texts = check_texts(texts)
    if lowercase:
        texts = [x.lower() for x in texts]
    t = check_unit_interval(threshold, name="threshold", meaning="a similarity")
    w = check_unit_interval(entity_weight, name="entity_weight", meaning="the weight of entity overlap")
    n = len(texts)
    if entities is not None:
        entities = _check_entities(entities, n)
    else:
        w = 0.0
    return _sequence_edges(_sequence_data(texts, entities), np.ones(n, dtype=np.bool_), w, t)


def _sequence_edges(sd: _SequenceData, active: NDArray[np.bool_], w: float, t: float):
    """Pairs among the ``active`` texts of ``sd`` (see :func:`sequence_pairs`)."""
    n = active.shape[0]
    args = (
        sd.cptr,
        sd.cdata,
        sd.hptr,
        sd.hchar,
        sd.hcount,
        sd.nchars,
        sd.eptr,
        sd.edata,
        active,
        1.0 - w,
        w,
        t,
    )
    # Small inputs on one thread (a task costs ~30 us to hand over); larger ones in chunks of "b" texts.
    parts = map_chunks(_sequence_join, n, *args, chunk=max(n, 1) if n <= 256 else 8)
    a = np.concatenate([p[0] for p in parts]) if parts else np.empty(0, np.int64)
    b = np.concatenate([p[1] for p in parts]) if parts else np.empty(0, np.int64)
    s = np.concatenate([p[2] for p in parts]) if parts else np.empty(0)
    srt = np.lexsort((b, a))
    return a[srt], b[srt], s[srt]


def _check_entities(entities: object, n: int) -> list[list[str]]:
    """One list of entity names per item; a bare string is an error, not a list of letters."""
    if isinstance(entities, str | bytes | Mapping):
        raise TypeError(
            f"entities must be a list of lists of strings, one list per item; got {type(entities).__name__}."
        )
    try:
        rows = list(entities)  # type: ignore[call-overload]
    except TypeError:
        raise TypeError("entities must be a list of lists of strings, one list per item.") from None
    for i, r in enumerate(rows):
        if isinstance(r, str | bytes) or not isinstance(r, Iterable):
            raise TypeError(
                f"entities[{i}] is {type(r).__name__}; each item needs a list of entity names (e.g. [{r!r}])."
            )
    rows = [list(r) for r in rows]
    if len(rows) != n:
        raise ValueError(f"entities must have one list per item ({n}); got {len(rows)}.")
    for i, r in enumerate(rows):
        for e in r:
            if not isinstance(e, str):
                raise TypeError(f"entities[{i}] holds {type(e).__name__}, not str; entities are names.")
    return rows


# --------------------------------------------------------------------------
# MinHash + LSH banding, verified with exact Jaccard
# --------------------------------------------------------------------------


@njit(**JIT)
def _mix64(x):
    """splitmix64's finaliser: a 64-bit bijection with full avalanche."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


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
    if (
        isinstance(num_perm, bool)
        or not isinstance(num_perm, int | np.integer)
        or not 1 <= num_perm <= MAX_NUM_PERM
    ):
        raise ValueError(f"num_perm must be an integer in [1, {MAX_NUM_PERM}]; got {num_perm!r}.")
    return int(num_perm)


def lsh_params(threshold: float, num_perm: int, miss_weight: float = 0.5) -> tuple[int, int]:
    """Bands and rows ``(b, r)``, ``b * r <= num_perm``, minimising missed plus spurious pairs.

    The probability that a pair of Jaccard ``s`` shares a band is
    ``1 - (1 - s^r)^b``; this picks the ``(b, r)`` minimising
    ``(1 - miss_weight)`` times the integral of that probability below
    ``threshold`` plus ``miss_weight`` times the integral of its complement
    above it.  ``miss_weight = 0.5`` is datasketch's ``MinHashLSH`` rule.

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
    rng = np.random.default_rng(seed)
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
        if lead + s2 + r2[gi] * r2[gj] < fine:
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
    R = (R * (1 + 1e-3) + 1e-6).astype(np.float32)  # inflated: a bound must not be low
    R2 = R2 * (1 + 1e-3) + 1e-6
    XQ[:, k] = R  # one BLAS product per tile then gives the whole first bound
    parts = []
    fine32 = np.float32(t - _COS_MARGIN)
    buf = np.empty((min(block, n), min(block, n)), dtype=np.float32)
    for i0 in range(0, n, block):
        i1 = min(i0 + block, n)
        for j0 in range(i0, n, block):
            j1 = min(j0 + block, n)
            if (i1 - i0, j1 - j0) == buf.shape:  # reuse one buffer: no page faults per tile
                S = np.matmul(XQ[i0:i1], XQ[j0:j1].T, out=buf)
            else:
                S = XQ[i0:i1] @ XQ[j0:j1].T
            # Candidates by one vectorised compare (numba's loop was 3x slower here);
            # almost every entry fails it.
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


# --------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------


@njit(**JIT)
def _pair_cosines(E, nrm, a, b):
    out = np.empty(a.shape[0])
    for k in range(a.shape[0]):
        out[k] = _dot._dot1(E, a[k], E[b[k]])[0] / (nrm[a[k]] * nrm[b[k]])
    return out


def _group(n, edges, scores, identical_pair, pair_sims) -> Dedup:
    """Components of the duplicate graph, the best of each kept, the rest explained."""
    roots = _components(n, edges)
    best = _keep_best(roots, scores)
    ar = np.arange(n)
    keep = np.flatnonzero(best == ar)
    dropped = np.flatnonzero(best != ar)
    dup_of = best[dropped]
    lo = np.minimum(dropped, dup_of)
    hi = np.maximum(dropped, dup_of)
    same = identical_pair(lo, hi)
    sim = np.ones(dropped.shape[0])
    if (~same).any():
        sim[~same] = pair_sims(lo[~same], hi[~same])
    return Dedup(keep, dropped, dup_of, sim)


def dedup(
    texts: Sequence[str] | None = None,
    *,
    embeddings: ArrayLike | None = None,
    method: str = "jaccard",
    threshold: float | None = None,
    scores: ArrayLike | None = None,
    entities: Sequence[Sequence[str]] | None = None,
    entity_weight: float = 0.3,
    lowercase: bool = True,
    num_perm: int = 128,
    seed: int = 0,
    sets: Ragged | None = None,
) -> Dedup:
    """Remove near-duplicates, keeping the highest-scoring member of each group.

    Parameters
    ----------
    texts : sequence of str
        The items' text (for the text methods).
    embeddings : array_like, shape (n, d)
        The items' embeddings (for ``method="cosine"``).
    method : {"jaccard", "sequence", "cosine", "minhash"}
        Similarity (see the module documentation).
    threshold : float in [0, 1], optional
        Items whose similarity is ``>= threshold`` are duplicates; defaults
        to ``DEDUP_METHODS[method]``.
    scores : array_like of float, optional
        Relevance of each item; the best of each group is kept (ties, and
        no scores, keep the lowest index).
    entities, entity_weight, lowercase
        For ``method="sequence"``: see :func:`sequence_pairs`.
    num_perm, seed
        For ``method="minhash"``: see :func:`minhash_pairs`.
    sets : Ragged, optional
        ``word_sets(texts)[0]`` when already computed (jaccard, minhash), so
        a pipeline tokenizes once.

    Returns
    -------
    Dedup
        ``(keep, dropped, duplicate_of, similarity)``.

    Examples
    --------
    >>> texts = ["The cat sat on the mat today", "the cat sat on the MAT today",
    ...          "Dogs bark at night", "The cat sat on the mat today"]
    >>> r = dedup(texts, scores=[0.2, 0.9, 0.5, 0.1])
    >>> r.keep, r.dropped, r.duplicate_of, r.similarity
    (array([1, 2]), array([0, 3]), array([1, 1]), array([1., 1.]))
    >>> E = np.array([[1.0, 0.0], [0.99, 0.05], [0.0, 1.0]])
    >>> dedup(embeddings=E, method="cosine").dropped
    array([1])
    """
    method = check_method(method, list(DEDUP_METHODS))
    if threshold is None:
        t = DEDUP_METHODS[method]
    else:
        t = check_unit_interval(threshold, name="threshold", meaning="a similarity")
    if method == "cosine":
        if embeddings is None:
            raise ValueError("method='cosine' needs embeddings=(n, d) array; pass the items' embeddings.")
        E = check_embeddings(embeddings)
        n = E.shape[0]
        if texts is not None and len(check_texts(texts)) != n:
            raise ValueError(f"texts has {len(texts)} items but embeddings has {n} rows.")
    else:
        if texts is None:
            raise ValueError(f"method={method!r} needs texts=; pass the items' text.")
        texts = check_texts(texts)
        n = len(texts)
    sc = check_scores(scores, n)
    if n == 0:
        e = np.empty(0, np.int64)
        return Dedup(e, e, e, np.empty(0))

    if method == "cosine":
        _, nrm = _dot.dots_norms(E, E[0])
        check_row_norms(nrm, E)  # before identical rows are merged: NaN or zero rows are errors
        ia, ib = _identical_rows(E)
        u_idx = np.flatnonzero(_unique_mask(n, ib))
        if t <= 0.0:
            edges = [(ia, ib), _all_pairs_star(n)]
        else:
            a, b, _ = cosine_pairs(E[u_idx], t)
            edges = [(ia, ib), (u_idx[a], u_idx[b])]

        def identical_pair(lo, hi):
            return np.array([np.array_equal(E[x], E[y]) for x, y in zip(lo, hi, strict=True)], dtype=bool)

        def pair_sims(lo, hi):
            return _pair_cosines(E, nrm, lo, hi)

        return _group(n, edges, sc, identical_pair, pair_sims)

    ia, ib = _identical(texts)
    u_idx = np.flatnonzero(_unique_mask(n, ib))

    def identical_text(lo, hi):
        return np.array([texts[x] == texts[y] for x, y in zip(lo, hi, strict=True)], dtype=bool)

    if method == "sequence":
        ents = None if entities is None else _check_entities(entities, n)
        w = 0.0 if ents is None else check_unit_interval(entity_weight, name="entity_weight")
        if ents is not None:
            # Equal text with other entities scores differently against third items:
            # only (text, entity set) twins may skip the pairwise pass.
            _, twins = _identical([(x, frozenset(e)) for x, e in zip(texts, ents, strict=True)])
            u_idx = np.flatnonzero(_unique_mask(n, twins))
        sd = _sequence_data([x.lower() for x in texts] if lowercase else texts, ents)
        if t <= 0.0:
            edges = [(ia, ib), _all_pairs_star(n)]
        else:
            a, b, _ = _sequence_edges(sd, _unique_mask(n, np.setdiff1d(np.arange(n), u_idx)), w, t)
            edges = [(ia, ib), (a, b)]

        def sequence_sims(lo, hi):
            return _sequence_sims(sd.cptr, sd.cdata, sd.nchars, sd.eptr, sd.edata, 1.0 - w, w, lo, hi)

        return _group(n, edges, sc, identical_text, sequence_sims)

    full = word_sets(texts)[0] if sets is None else sets
    if len(full) != n:
        raise ValueError(f"sets has {len(full)} rows but there are {n} texts.")
    if t <= 0.0:
        edges = [(ia, ib), _all_pairs_star(n)]
    elif method == "minhash":
        a, b, _ = minhash_pairs(full.take(u_idx), t, num_perm=num_perm, seed=seed)
        edges = [(ia, ib), (u_idx[a], u_idx[b])]
    else:
        a, b, _ = jaccard_pairs(full.take(u_idx), t)
        edges = [(ia, ib), (u_idx[a], u_idx[b])]

    def jaccards(lo, hi):
        return np.array([_jaccard_sorted(full.row(x), full.row(y)) for x, y in zip(lo, hi, strict=True)])

    return _group(n, edges, sc, identical_text, jaccards)


@njit(**JIT)
def _hash_rows(W, out, r0):
    """A 64-bit hash of each row of the bit patterns ``W`` (uint32 or uint64 words)."""
    for i in range(W.shape[0]):
        h = np.uint64(0x243F6A8885A308D3)
        for k in range(W.shape[1]):
            h = _mix64(h ^ np.uint64(W[i, k]))
        out[r0 + i] = h


def _identical_rows(E: np.ndarray) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Edges joining every row to the first row with equal values (-0.0 == 0.0), via 64-bit hashes."""
    n = E.shape[0]
    h = np.empty(n, dtype=np.uint64)
    word = np.uint32 if E.dtype == np.float32 else np.uint64
    for r0 in range(0, n, 8192):
        _hash_rows(np.ascontiguousarray(E[r0 : r0 + 8192] + 0.0).view(word), h, r0)  # + 0.0: -0.0 -> 0.0
    a, b = _identical(h.tolist())
    same = np.array(
        [np.array_equal(E[x], E[y]) for x, y in zip(a.tolist(), b.tolist(), strict=True)], dtype=bool
    )
    if same.all():
        return a, b
    return _identical([r.tobytes() for r in E + 0.0])  # pragma: no cover - a 64-bit hash collision


def _unique_mask(n: int, repeated: NDArray[np.int64]) -> NDArray[np.bool_]:
    mask = np.ones(n, dtype=bool)
    mask[repeated] = False
    return mask


def _all_pairs_star(n: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Edges joining item 0 to every other: one group of all (threshold 0)."""
    return np.zeros(n - 1, np.int64), np.arange(1, n, dtype=np.int64)
