"""Plain-Python reference implementations.

Slow and obvious on purpose: loops over Python floats, no NumPy in the logic.
Every fast function in scwo_np is compared against one of these, to the bit.
The similarity recipe is the one documented in ``scwo_np._dot``: arithmetic
in the embeddings' precision, element ``k`` into partial sum ``k % L`` (16
lanes for float32, 8 for float64), then a halving fold, widened to float64.
float32 arithmetic is emulated by rounding every float64 result to float32,
which is exact for ``+`` and ``*`` of float32 operands (53 >= 2 * 24 + 2).
"""

from __future__ import annotations

import math
import struct

LANES = {"float32": 16, "float64": 8}


def f32(x):
    """Round a Python float to the nearest float32 (ties to even; inf beyond range)."""
    try:
        return struct.unpack("f", struct.pack("f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def _same(x):
    return x


def dot(x, y, dtype="float64"):
    """Canonical dot product of two sequences, computed in ``dtype``."""
    dtype = str(dtype)
    L = LANES[dtype]
    r = f32 if dtype == "float32" else _same
    acc = [0.0] * L
    for k in range(len(x)):
        acc[k % L] = r(acc[k % L] + r(r(float(x[k])) * r(float(y[k]))))
    w = L
    while w > 1:
        w //= 2
        for lane in range(w):
            acc[lane] = r(acc[lane] + acc[lane + w])
    return acc[0]


def norm(x, dtype="float64"):
    return math.sqrt(dot(x, x, dtype))


def cosine(x, y, dtype="float64"):
    return dot(x, y, dtype) / (norm(x, dtype) * norm(y, dtype))


def relevance(E, queries, weights=None, dtype="float64"):
    """``rel[i] = sum_j w_j cos(E[i], q_j)``, accumulated from 0.0 in query order."""
    m = len(queries)
    if weights is None:
        weights = [1.0] if m == 1 else [1.0 / m] * m
    rel = []
    for e in E:
        r = 0.0
        for q, w in zip(queries, weights, strict=True):
            r = r + w * (dot(e, q, dtype) / (norm(e, dtype) * norm(q, dtype)))
        rel.append(r)
    return rel


def mmr_select(
    E,
    queries,
    costs,
    budget,
    lam=0.7,
    weights=None,
    cost_aware=False,
    cost_exponent=0.25,
    shift=0.0,
    dtype="float64",
):
    """Textbook budgeted MMR greedy.  Returns (picks, gains) as Python lists.

    ``dtype`` is the precision of the embeddings (similarities are computed
    in it, as in the library).  The cost-aware mode ranks by ``score + shift``
    divided by ``max(cost, 1) ** cost_exponent`` (multiplied when negative);
    with exponent 1 it ends with the best-singleton check, below 1 with the
    fill guard (plain MMR's picks when they use more tokens).
    """
    if cost_aware and cost_exponent < 1.0:
        p, g = _mmr(E, queries, costs, budget, lam, weights, True, cost_exponent, shift, dtype)
        p0, g0 = mmr_select(E, queries, costs, budget, lam, weights, False, cost_exponent, shift, dtype)
        return (p0, g0) if sum(costs[i] for i in p0) > sum(costs[i] for i in p) else (p, g)
    return _mmr(E, queries, costs, budget, lam, weights, cost_aware, cost_exponent, shift, dtype)


def mmr_with_relevance(E, rel, costs, budget, lam=0.7, dtype="float64"):
    """Textbook budgeted MMR with the relevance of each row given (sentence-level selection)."""
    return _mmr(E, None, costs, budget, lam, None, False, 0.25, 0.0, dtype, rel=[float(r) for r in rel])


def _mmr(E, queries, costs, budget, lam, weights, cost_aware, cost_exponent, shift, dtype, rel=None):
    if rel is None:
        rel = relevance(E, queries, weights, dtype)
    n = len(E)
    picks, gains = [], []
    remaining = budget
    sim, lengths = {}, {}  # each pair's cosine and each row's norm once per call: the same values

    def length(i):
        if i not in lengths:
            lengths[i] = norm(E[i], dtype)
        return lengths[i]

    def cos(i, j):  # cosine(E[i], E[j], dtype), the same expression
        if (i, j) not in sim:
            sim[i, j] = dot(E[i], E[j], dtype) / (length(i) * length(j))
        return sim[i, j]

    while True:
        best, best_key, best_score = None, None, None
        for i in range(n):
            if i in picks or costs[i] > remaining:
                continue
            m = max((cos(i, j) for j in picks), default=0.0)
            score = lam * rel[i] - (1.0 - lam) * m
            # The default cost-aware mode (exponent < 1) ranks by the score until half the budget is used.
            if cost_aware and (cost_exponent == 1.0 or 2 * (budget - remaining) >= budget):
                v = score + shift
                c = max(costs[i], 1) ** cost_exponent if cost_exponent != 1.0 else max(costs[i], 1)
                key = v / c if v >= 0.0 else v * c
            else:
                key = score
            if best is None or key > best_key:
                best, best_key, best_score = i, key, score
        if best is None:
            break
        picks.append(best)
        gains.append(best_score)
        remaining -= costs[best]
    if cost_aware and cost_exponent == 1.0:
        best, best_val = None, None
        for i in range(n):
            if costs[i] <= budget:
                val = (lam * rel[i] - (1.0 - lam) * 0.0) + shift
                if best is None or val > best_val:
                    best, best_val = i, val
        total = 0.0
        for g in gains:
            total += g + shift
        if best is not None and best_val > total:
            return [best], [lam * rel[best] - (1.0 - lam) * 0.0]
    return picks, gains


def _relevance_of(E, query, weights, dtype):
    """One query (a vector) or several (a list of vectors, with optional normalised weights)."""
    if query and isinstance(query[0], list | tuple):
        return relevance(E, query, weights, dtype)
    return relevance(E, [query], None, dtype)


def knapsack(E, query, costs, budget, dtype="float64", weights=None):
    """Plain 0/1 knapsack on relevance: the same table, filled item by item, read back from the end.

    Candidates: positive relevance and cost within the budget; cost-0 ones are
    always taken.  A set replaces the best only when strictly better.  Returned
    by relevance, highest first, ties to the lowest index.
    """
    rel = _relevance_of(E, query, weights, dtype)
    cand = [i for i in range(len(E)) if rel[i] > 0.0 and costs[i] <= budget]
    free = [i for i in cand if costs[i] == 0]
    paid = [i for i in cand if costs[i] > 0]
    cap = min(budget, sum(costs[i] for i in paid))
    best = [0.0] * (cap + 1)
    keep = []
    for i in paid:
        row = [False] * (cap + 1)
        for c in range(cap, costs[i] - 1, -1):
            v = best[c - costs[i]] + rel[i]
            if v > best[c]:
                best[c] = v
                row[c] = True
        keep.append(row)
    take, c = [], cap
    for k in range(len(paid) - 1, -1, -1):
        if keep[k][c]:
            take.append(paid[k])
            c -= costs[paid[k]]
    return sorted(free + take, key=lambda i: (-rel[i], i))


def _cost_key(value, cost, cexp):
    if cexp == 0.0:
        return value
    c = max(cost, 1) ** cexp if cexp != 1.0 else float(max(cost, 1))
    return value / c if value >= 0.0 else value * c


def _mean_std(x):
    """Mean and population standard deviation, summed in order."""
    mean = 0.0
    for v in x:
        mean += v
    mean /= len(x)
    var = 0.0
    for v in x:
        var += (v - mean) * (v - mean)
    return mean, math.sqrt(var / len(x))


def _dot64(a, b):
    """Two float64 vectors' dot product, in the library's eight lanes (``dot`` in float64)."""
    return dot(a, b, "float64")


def _sum8(t):
    """A float64 sum in the library's eight lanes, folded in halves (``1.0 * x`` is ``x`` exactly)."""
    return _dot64([1.0] * len(t), t)


def msd(E, query, costs, budget, lam=0.7, cost_exponent=0.0, dtype="float64", weights=None):
    """Plain budgeted max-sum diversity: ``lam rel_i + (1 - lam) sum_S (1 - clip(cos))``.  (picks, gains)"""
    rel = _relevance_of(E, query, weights, dtype)
    n = len(E)
    dist = [0.0] * n
    picks, gains, remaining = [], [], budget
    while True:
        best, best_key, best_score = None, None, None
        for i in range(n):
            if i in picks or costs[i] > remaining:
                continue
            score = lam * rel[i] + (1.0 - lam) * dist[i]
            key = _cost_key(score, costs[i], cost_exponent)
            if best is None or key > best_key:
                best, best_key, best_score = i, key, score
        if best is None:
            return picks, gains
        picks.append(best)
        gains.append(best_score)
        remaining -= costs[best]
        if lam != 1.0:
            for i in range(n):
                if i not in picks:
                    dist[i] += 1.0 - min(max(cosine(E[i], E[best], dtype), -1.0), 1.0)


def ssd(E, query, costs, budget, lam=0.7, gamma=1.0, cost_exponent=0.0, dtype="float64", weights=None):
    """Plain budgeted SSD without sliding: ``lam z_i + (1 - lam) gamma |r_i|``, every candidate every step.

    ``x_i = [e_i/|e_i|, 1]``; ``|r_i|^2 = 2 - sum_u (x_i . u)^2`` (0 when at most 2e-6);
    the basis grows by modified Gram-Schmidt from each pick unless the pick lies in the
    span or the span is full.  Returns (picks, gains).
    """
    rel = _relevance_of(E, query, weights, dtype)
    n = len(E)
    if n == 0:
        return [], []
    mean, std = _mean_std(rel)
    z = [(r - mean) / std if std > 0.0 else r - mean for r in rel]
    d = len(E[0])
    nrms = [norm(e, dtype) for e in E]
    rows = [[float(x) for x in e] for e in E]
    cap = min(n, d + 1) + 1
    U, picks, gains, remaining = [], [], [], budget

    def parts(i):
        s = 0.0
        for u in U:
            c = dot(rows[i], u[:d], "float64") / nrms[i] + u[d]
            s += c * c
        left = 2.0 - s
        return s, lam * z[i] + (1.0 - lam) * gamma * (math.sqrt(left) if left > 2e-6 else 0.0)

    while True:
        best, best_key, best_score, best_s = None, None, None, None
        for i in range(n):
            if i in picks or costs[i] > remaining:
                continue
            s_i, score = parts(i)
            key = _cost_key(score, costs[i], cost_exponent)
            if best is None or key > best_key:
                best, best_key, best_score, best_s = i, key, score, s_i
        if best is None:
            return picks, gains
        picks.append(best)
        gains.append(best_score)
        remaining -= costs[best]
        if len(U) + 1 >= cap or 2.0 - best_s <= 2e-6:
            continue
        x = [v / nrms[best] for v in rows[best]] + [1.0]
        for u in U:
            c = _dot64(u, x)
            x = [a - c * b for a, b in zip(x, u, strict=True)]
        nm = math.sqrt(_dot64(x, x))
        U.append([a / nm for a in x])


def facility_location(
    E, query, costs, budget, lam=0.7, cost_exponent=0.0, dtype="float64", weights=None, ground=None
):
    """Plain budgeted greedy of ``lam sum_S a_i + (1 - lam) sum_j w_j max_S s_ij`` (a = rel+, s = cos+).

    The ground set: every candidate with ``w = a`` (``ground=None``), or the centres of
    ``ground = (centres, labels)`` with ``w_c`` the sum of its members' ``a`` in index
    order.  Every candidate's gain recomputed at every step; with a cost exponent > 0
    the best single item replaces the greedy set when it is worth more.  Returns
    (picks, gains).
    """
    rel = _relevance_of(E, query, weights, dtype)
    a = [max(r, 0.0) for r in rel]
    n = len(E)
    if ground is None:
        rows, w = E, a
    else:
        rows, labels = ground
        w = [0.0] * len(rows)
        for j in range(n):
            w[labels[j]] += a[j]
    keep = [j for j in range(len(rows)) if w[j] > 0.0]  # the rest weigh 0
    cover = [0.0] * len(rows)

    def gain(i):
        terms = []
        for j in keep:
            x = cosine(rows[j], E[i], dtype) - cover[j]
            terms.append(x if x > 0.0 else 0.0)
        return lam * a[i] + (1.0 - lam) * _dot64([w[j] for j in keep], terms)

    single = [gain(i) for i in range(n)]
    picks, gains, remaining, total = [], [], budget, 0.0
    while True:
        best, best_key, best_gain = None, None, None
        for i in range(n):
            if i in picks or costs[i] > remaining:
                continue
            g = gain(i)
            key = _cost_key(g, costs[i], cost_exponent)
            if best is None or key > best_key:
                best, best_key, best_gain = i, key, g
        if best is None:
            break
        picks.append(best)
        gains.append(best_gain)
        total += best_gain
        remaining -= costs[best]
        for j in range(len(rows)):
            cover[j] = max(cover[j], cosine(rows[j], E[best], dtype))
    if cost_exponent > 0.0:
        fit = [i for i in range(n) if costs[i] <= budget]
        if fit:
            b = max(fit, key=lambda i: (single[i], -i))
            if single[b] > total:
                return [b], [single[b]]
    return picks, gains


def cover(E, query, costs, budget, lam=0.7, gamma=0.5, cost_exponent=0.0, dtype="float64", weights=None):
    """Plain budgeted cover: ``lam rel_i + (1 - lam) sum_j ((C_j + s_ij)^gamma - C_j^gamma)``.  (picks, gains)"""
    rel = _relevance_of(E, query, weights, dtype)
    n = len(E)
    cov = [0.0] * n

    def power(x):
        return math.sqrt(x) if gamma == 0.5 else x**gamma

    def score(i):
        terms = []
        for j in range(n):
            s = min(max(cosine(E[j], E[i], dtype), 0.0), 1.0)
            terms.append(power(cov[j] + s) - power(cov[j]) if s > 0.0 else 0.0)
        return lam * rel[i] + (1.0 - lam) * _sum8(terms)

    picks, gains, remaining = [], [], budget
    while True:
        best, best_key, best_score = None, None, None
        for i in range(n):
            if i in picks or costs[i] > remaining:
                continue
            sc = score(i)
            key = _cost_key(sc, costs[i], cost_exponent)
            if best is None or key > best_key:
                best, best_key, best_score = i, key, sc
        if best is None:
            return picks, gains
        picks.append(best)
        gains.append(best_score)
        remaining -= costs[best]
        for j in range(n):
            s = min(max(cosine(E[j], E[best], dtype), 0.0), 1.0)
            if s > 0.0:
                cov[j] += s


def dpp(E, query, costs, budget, lam=0.7, scale=1.0, cost_exponent=0.0, dtype="float64", weights=None):
    """Plain budgeted greedy MAP of the DPP (every candidate re-scored at every step).

    ``d_i^2 = w_i^2 (1 - sum_t ((u_t . e_i) / |e_i|)^2)`` with the basis ``u`` built by
    modified Gram-Schmidt from the picks; the best key that fits is taken (ties:
    lowest index) until nothing fits, no key is positive, or the basis
    spans the space; a row with at most 1e-6 of its squared norm outside the
    span has gain 0.  Returns (picks, gains).
    """
    rel = _relevance_of(E, query, weights, dtype)
    n = len(E)
    if n == 0:
        return [], []
    beta = scale * lam
    mean, std = _mean_std(rel)
    w2 = []
    for r in rel:
        w = math.exp(beta * ((r - mean) / (std + 1e-12)))
        w2.append(w * w)
    unit = [[float(x) / norm(e, dtype) for x in e] for e in E]
    d = len(E[0])
    U, picks, gains, remaining = [], [], [], budget

    nrms = [norm(e, dtype) for e in E]

    def residual(i):
        s = 0.0
        for u in U:
            c = dot([float(x) for x in E[i]], u, "float64") / nrms[i]
            s += c * c
        left = 1.0 - s
        return w2[i] * left if left > 1e-6 else 0.0

    while True:
        best, best_key = None, None
        for i in range(n):
            if i in picks or costs[i] > remaining:
                continue
            key = _cost_key(residual(i), costs[i], cost_exponent)
            if best is None or key > best_key:
                best, best_key = i, key
        if best is None or best_key <= 0.0:
            break
        picks.append(best)
        gains.append(residual(best))
        remaining -= costs[best]
        if len(U) + 1 >= min(n, d) + 1:
            break
        e = list(unit[best])
        for u in U:
            c = _dot64(u, e)
            e = [x - c * y for x, y in zip(e, u, strict=True)]
        nm = math.sqrt(_dot64(e, e))
        U.append([x / nm for x in e])
    return picks, gains


def _normalised(w, equal):
    """``w / sum(w)`` (summed in order); when the sum is 0: equal weights or zeros."""
    total = 0.0
    for x in w:
        total += x
    if total > 0.0:
        return [x / total for x in w]
    return [1.0 / len(w)] * len(w) if equal else [0.0] * len(w)


def xquad(
    E, query, costs, budget, lam=0.7, cost_exponent=0.0, dtype="float64", weights=None,
    aspects=None, aspect_weights=None, inferred=False,
):  # fmt: skip
    """Plain budgeted xQuAD (``inferred=True``: RxQuAD), every candidate re-scored at every step.

    ``score = lam rel_i + (1 - lam) sum_c P_ic (w_c R_c)`` with ``P_ic = clip(cos(a_c, e_i), 0, 1)``
    and ``R_c = prod_S (1 - P_jc)``.  ``aspects``: rows in ``dtype`` (``aspect_weights`` already
    normalised, equal when None), or None / k: the k-means centres of :func:`spherical_kmeans`
    (8 when None) weighted by their members' ``max(rel, 0)``.  RxQuAD's weights:
    ``max(sum_i rel_i P_ic, 0)``, normalised (zeros when the sum is 0).  Returns (picks, gains).
    """
    rel = _relevance_of(E, query, weights, dtype)
    n = len(E)
    if n == 0:
        return [], []
    if aspects is None or isinstance(aspects, int):
        A, labels = spherical_kmeans(E, min(8 if aspects is None else aspects, n), 4, 0, dtype)
        w = [0.0] * len(A)
        for j in range(n):
            w[labels[j]] += max(rel[j], 0.0)
        w = _normalised(w, equal=True)
    else:
        A = aspects
        w = aspect_weights if aspect_weights is not None else [1.0 / len(A)] * len(A)
    m = len(A)
    P = [[min(max(cosine(A[c], E[i], dtype), 0.0), 1.0) for c in range(m)] for i in range(n)]
    if inferred:
        mass = [0.0] * m
        for i in range(n):
            for c in range(m):
                mass[c] += rel[i] * P[i][c]
        w = _normalised([max(x, 0.0) for x in mass], equal=False)
    R = [1.0] * m

    def score(i):
        s = 0.0
        for c in range(m):
            s += P[i][c] * (w[c] * R[c])
        return lam * rel[i] + (1.0 - lam) * s

    picks, gains, remaining = [], [], budget
    while True:
        best, best_key, best_score = None, None, None
        for i in range(n):
            if i in picks or costs[i] > remaining:
                continue
            sc = score(i)
            key = _cost_key(sc, costs[i], cost_exponent)
            if best is None or key > best_key:
                best, best_key, best_score = i, key, sc
        if best is None:
            return picks, gains
        picks.append(best)
        gains.append(best_score)
        remaining -= costs[best]
        for c in range(m):
            R[c] *= 1.0 - P[best][c]


def rxquad(E, query, costs, budget, lam=0.7, cost_exponent=0.0, dtype="float64", weights=None, aspects=None):
    """Plain budgeted RxQuAD: :func:`xquad` with the weights inferred from relevance."""
    return xquad(E, query, costs, budget, lam, cost_exponent, dtype, weights, aspects, inferred=True)


def gist(E, query, costs, budget, lam=0.7, eps=0.1, cost_exponent=0.0, dtype="float64", weights=None):
    """Plain budgeted GIST: ``f(S) = lam sum_S rel + (1 - lam) min_{i != j in S} dist`` (0 for |S| <= 1).

    ``dist = sqrt(max(2 - 2 cos, 0))``.  Candidates: cost within the budget.  The greedy at
    threshold ``t`` repeatedly takes the best key (``lam rel`` through the cost key; ties to
    the lowest index) that fits the remaining budget and is at distance ``>= t`` from every
    pick.  The best of: the greedy at 0; the farthest pair fitting together (lexicographic
    ties; ordered by key); the greedy at ``eps d_max / 2 * (1 + eps)^i <= d_max``; a later set
    only when strictly better.  Returns (picks, gains) with gains ``lam rel``.
    """
    rel = _relevance_of(E, query, weights, dtype)
    V = [i for i in range(len(E)) if costs[i] <= budget]
    key = {i: _cost_key(lam * rel[i], costs[i], cost_exponent) for i in V}

    def dist(i, j):
        return math.sqrt(max(2.0 - 2.0 * cosine(E[i], E[j], dtype), 0.0))

    def value(S):
        s = 0.0
        for i in S:
            s += rel[i]
        div = min((dist(S[a], S[b]) for a in range(len(S)) for b in range(a + 1, len(S))), default=0.0)
        return lam * s + (1.0 - lam) * div

    def greedy(t):
        S, remaining = [], budget
        while True:
            best = None
            for i in V:
                if i in S or costs[i] > remaining or any(dist(i, p) < t for p in S):
                    continue
                if best is None or key[i] > key[best]:
                    best = i
            if best is None:
                return S
            S.append(best)
            remaining -= costs[best]

    S = greedy(0.0)
    f = value(S)
    dmax, pair = 0.0, None
    for a in range(len(V)):
        for b in range(a + 1, len(V)):
            i, j = V[a], V[b]
            dd = dist(i, j)
            dmax = max(dmax, dd)
            if costs[i] + costs[j] <= budget and (pair is None or dd > pair[0]):
                pair = (dd, i, j)
    if pair is not None:
        T = sorted(pair[1:], key=lambda i: (-key[i], i))
        if value(T) > f:
            S, f = T, value(T)
    if dmax > 0.0:
        t = eps * dmax / 2.0
        while t <= dmax:
            T = greedy(t)
            if value(T) > f:
                S, f = T, value(T)
            t *= 1.0 + eps
    return S, [lam * rel[i] for i in S]


# --------------------------------------------------------------------------
# Deduplication
# --------------------------------------------------------------------------


def quantize_piece(row):
    """A piece vector to 8 bits: over the smallest power of two s with max|x| <= 127 s, round(x / s) * s."""
    top = max((abs(x) for x in row), default=0.0)
    if top == 0:
        return [0.0 for _ in row]
    e = math.ceil(math.log2(top / 127.0))
    while top > 127.0 * 2.0**e:  # log2's rounding
        e += 1
    while top <= 127.0 * 2.0 ** (e - 1):
        e -= 1
    e = min(max(e, -128), 121)  # the exponents' range (int8, and 127 * 2**121 below float32's largest)
    return [max(-127, min(127, round(x / 2.0**e))) * 2.0**e for x in row]


def piece_match(query, sentences):
    """Late interaction (MaxSim): the mean over the question's pieces of each one's best dot with a
    piece of the text (its sentences' pieces together); 0 when either has none."""
    text = [p for sentence in sentences for p in sentence]
    if not query or not text:
        return 0.0
    return sum(max(dot(q, p) for p in text) for q in query) / len(query)


def first_copies(texts):
    """Plainly: the index of each text's first copy, copies being the same but for white space."""
    out, seen = [], []
    for i, t in enumerate(texts):
        said = " ".join(t.split())
        if said not in seen:
            seen.append(said)
            out.append(i)
    return out


def words(text):
    """The KB Labs ADR's word set: lowercased, whitespace split, longer than 2."""
    return {w for w in text.lower().split() if len(w) > 2}


def jaccard(text1, text2):
    """The ADR's ``calculateTextSimilarity``; 0 when both word sets are empty."""
    a, b = words(text1), words(text2)
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def dedup(texts, sim, threshold, scores=None):
    """``grouping="greedy"``: best first, keep an item unless it reaches the threshold against a kept one.

    Items are taken by score, highest first (ties and no scores: lowest index
    first).  ``texts[i] == texts[j]`` counts as similarity 1.0 (identical
    items); otherwise the similarity is ``sim(min, max)``.  A dropped item's
    ``duplicate_of`` is the most similar item kept before it (ties: lowest
    index).  Returns ``(keep, dropped, duplicate_of, similarity)`` as
    ascending lists (``duplicate_of``/``similarity`` in ``dropped``'s order).
    """
    n = len(texts)
    kept, why = [], {}
    for i in best_first(scores, n):
        best, best_s = None, None
        for j in kept:
            s = 1.0 if texts[i] == texts[j] else sim(min(i, j), max(i, j))
            if s >= threshold and (best is None or s > best_s or (s == best_s and j < best)):
                best, best_s = j, s
        if best is None:
            kept.append(i)
        else:
            why[i] = (best, best_s)
    dropped = sorted(why)
    return sorted(kept), dropped, [why[i][0] for i in dropped], [why[i][1] for i in dropped]


def dedup_components(texts, sim, threshold, scores=None):
    """``grouping="components"``: group all pairs ``i < j`` with identical text or ``sim(i, j) >= threshold``
    into connected components; keep the best-scoring member (ties: lowest index).

    Returns ``(keep, dropped, duplicate_of, similarity)`` as lists, the
    similarity of a dropped item to its kept one as ``sim(min, max)`` (1.0 when
    the texts are identical).
    """
    n = len(texts)
    scores = [0.0] * n if scores is None else list(scores)
    adj = [[] for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            if texts[i] == texts[j] or sim(i, j) >= threshold:
                adj[i].append(j)
                adj[j].append(i)
    comp = [-1] * n
    for s in range(n):
        if comp[s] >= 0:
            continue
        comp[s] = s
        stack = [s]
        while stack:
            u = stack.pop()
            for v in adj[u]:
                if comp[v] < 0:
                    comp[v] = s
                    stack.append(v)
    best = {}
    for i in range(n):
        c = comp[i]
        if c not in best or scores[i] > scores[best[c]]:
            best[c] = i
    keep = sorted(best.values())
    dropped = [i for i in range(n) if best[comp[i]] != i]
    dup_of = [best[comp[i]] for i in dropped]
    similarity = [
        1.0 if texts[d] == texts[k] else sim(min(d, k), max(d, k))
        for d, k in zip(dropped, dup_of, strict=True)
    ]
    return keep, dropped, dup_of, similarity


def sequence_similarity(text_a, text_b, ents_a=None, ents_b=None, entity_weight=0.3, lowercase=True):
    """MoRAG's ``_chunks_similar`` score: difflib ratio (``a`` the later text), entity Jaccard."""
    from difflib import SequenceMatcher

    if lowercase:
        text_a, text_b = text_a.lower(), text_b.lower()
    content = SequenceMatcher(None, text_a, text_b).ratio()
    if ents_a is None:
        return content
    e1, e2 = set(ents_a), set(ents_b)
    if not e1 or not e2:  # no entities on one side: the entity term does not count
        return content
    overlap = len(e1 & e2) / max(len(e1 | e2), 1)
    return (1.0 - entity_weight) * content + entity_weight * overlap


def best_first(scores, n):
    scores = [0.0] * n if scores is None else list(scores)
    return sorted(range(n), key=lambda i: (-scores[i], i))


def diversify(n, sources, scores, max_per_source, threshold, sim):
    """Best-first: keep a chunk under the source cap whose similarity to every kept one is <= 1 - threshold."""
    keep, dropped, reason, similar_to, similarity = [], [], [], [], []
    count = {}
    for i in best_first(scores, n):
        src = ("own", i) if sources is None or sources[i] is None else sources[i]
        if max_per_source is not None and count.get(src, 0) >= max_per_source:
            dropped.append(i)
            reason.append(0)
            similar_to.append(-1)
            similarity.append(float("nan"))
            continue
        if threshold > 0 and keep:
            best, best_s = None, None
            for j in keep:
                s = sim(i, j)
                if best is None or s > best_s:
                    best, best_s = j, s
            if best_s > 1.0 - threshold:
                dropped.append(i)
                reason.append(1)
                similar_to.append(best)
                similarity.append(best_s)
                continue
        keep.append(i)
        count[src] = count.get(src, 0) + 1
    return keep, dropped, reason, similar_to, similarity


def fit_budget(costs, budget, scores=None, mode="stop"):
    out, left = [], budget
    for i in best_first(scores, len(costs)):
        if costs[i] <= left:
            out.append(i)
            left -= costs[i]
        elif mode == "stop":
            break
    return out


# --------------------------------------------------------------------------
# MoRAG context optimizer, ported from the spec (with the documented changes)
# --------------------------------------------------------------------------


def morag_relationship(c1, c2):
    """The spec's ``_analyze_chunk_relationship`` (description: shared entities in c1's order)."""
    e1, e2 = set(c1.entities or []), set(c2.entities or [])
    shared = e1 & e2
    if not shared:
        return None
    overlap = len(shared) / len(e1 | e2)
    if overlap > 0.5:
        rel_type, strength = "strong_overlap", overlap
    elif overlap > 0.2:
        rel_type, strength = "moderate_overlap", overlap
    else:
        rel_type, strength = "weak_overlap", overlap
    if c1.timestamp and c2.timestamp and c1.timestamp < c2.timestamp:
        rel_type, strength = "temporal_sequence", max(strength, 0.6)
    if c1.source_document == c2.source_document:
        rel_type, strength = "same_document", max(strength, 0.4)
    names = [e for e in dict.fromkeys(c1.entities or []) if e in e2]
    return (c1.id, c2.id, rel_type, strength, f"Shared entities: {', '.join(names[:3])}")


def morag_relationships(chunks):
    out = []
    for i, c1 in enumerate(chunks):
        for c2 in chunks[i + 1 :]:
            r = morag_relationship(c1, c2)
            if r:
                out.append(r)
    return out


def morag_optimize(chunks, query, strategy, max_tokens):
    """The spec's pipeline, step by step, on plain lists (ids out)."""
    import dataclasses

    chunks = [c for c in chunks if c.relevance_score >= 0.3]
    texts = [c.content for c in chunks]

    def sim(i, j):
        return sequence_similarity(texts[j], texts[i], chunks[j].entities or [], chunks[i].entities or [])

    keep, dropped, _, _ = dedup(texts, sim, 0.7, [c.relevance_score for c in chunks])
    unique = [chunks[i] for i in keep]
    rels = morag_relationships(unique)
    rel_score = {}
    for a, b, _, s, _ in rels:
        rel_score[a] = rel_score.get(a, 0) + s
        rel_score[b] = rel_score.get(b, 0) + s
    q = set(query.lower().split())
    pri = []
    for c in unique:
        overlap = len(q & set(c.content.lower().split())) / max(len(q), 1)
        score = c.relevance_score + rel_score.get(c.id, 0) * 0.2 + overlap * 0.3 + (0.1 if c.timestamp else 0)
        pri.append(dataclasses.replace(c, relevance_score=score))
    pri.sort(key=lambda c: c.relevance_score, reverse=True)
    final, removed, used_tokens = [], [], 0
    for c in pri:
        t = len(c.content) // 4
        if used_tokens + t <= max_tokens - 500:
            final.append(c)
            used_tokens += t
        else:
            removed.append(c.id)
    if strategy == "auto":
        ids = {c.id for c in final}
        n_rel = sum(1 for a, b, *_ in rels if a in ids and b in ids)
        if sum(1 for c in final if c.timestamp) > len(final) * 0.5:
            strategy = "temporal"
        elif n_rel / max(len(final) * (len(final) - 1) / 2, 1) > 0.3:
            strategy = "topical"
        else:
            strategy = "relevance"
    if strategy == "temporal":
        final = sorted((c for c in final if c.timestamp), key=lambda c: c.timestamp) + [
            c for c in final if not c.timestamp
        ]
    elif strategy == "topical":
        pos = {c.id: k for k, c in enumerate(final)}
        adj = {k: [] for k in range(len(final))}
        for a, b, _, s, _ in rels:
            if s > 0.3 and a in pos and b in pos:
                adj[pos[a]].append(pos[b])
                adj[pos[b]].append(pos[a])
        seen, clusters = set(), []
        for k in range(len(final)):
            if k in seen:
                continue
            stack, comp = [k], []
            seen.add(k)
            while stack:
                u = stack.pop()
                comp.append(u)
                for v in adj[u]:
                    if v not in seen:
                        seen.add(v)
                        stack.append(v)
            clusters.append(sorted(comp))
        clusters.sort(key=lambda cl: -sum(final[m].relevance_score for m in cl) / len(cl))
        final = [final[m] for cl in clusters for m in sorted(cl, key=lambda m: -final[m].relevance_score)]
    return [c.id for c in final], removed, strategy, len(dropped)


def _recurring(words, sent, window):
    """Content-word pairs (min, max) within ``window`` in the same sentence, found in 2+ sentences."""
    where = {}
    for p in range(len(words)):
        for q in range(p + 1, min(p + window, len(words))):
            if sent[q] != sent[p]:
                break
            if words[p] != words[q]:
                where.setdefault((min(words[p], words[q]), max(words[p], words[q])), set()).add(sent[p])
    return {k for k, v in where.items() if len(v) >= 2}


def mattr(words, w):
    """Moving-average type-token ratio over windows of ``w`` words (the whole list if shorter)."""
    if not words:
        return 1.0
    w = min(w, len(words))
    return sum(len(set(words[i : i + w])) for i in range(len(words) - w + 1)) / ((len(words) - w + 1) * w)


def hsca_layer1_score(text, window=5):
    """Layer 1 in plain Python: share of neighbouring word pairs that are links, scaled by diversity."""
    from scwo_np.hsca._background import background
    from scwo_np.hsca._layer1 import DIVERSITY_FLOOR, DIVERSITY_WINDOW, tokenize

    tok = tokenize([text])
    bg = background()
    words, sent, para = tok.words.tolist(), tok.sent.tolist(), tok.para.tolist()
    seq, seq_word, seq_sent = tok.seq.tolist(), tok.seq_word.tolist(), tok.seq_sent.tolist()
    linked = _recurring(words, sent, window)
    nsent = len(para)
    tot, hit = [0] * nsent, [0] * nsent
    for p in range(len(seq) - 1):
        a, b = seq[p], seq[p + 1]
        if a == -2 or b == -2:
            continue
        s = seq_sent[p]
        tot[s] += 1
        ca, cb = seq_word[p], seq_word[p + 1]
        assoc = a >= 0 and b >= 0 and b in bg.indices[bg.indptr[a] : bg.indptr[a + 1]].tolist()
        recur = ca >= 0 and cb >= 0 and ca != cb and (min(ca, cb), max(ca, cb)) in linked
        hit[s] += assoc or recur
    groups = {}
    for s, p in enumerate(para):
        if tot[s]:
            groups.setdefault(p, []).append(hit[s] / tot[s])
    raw = sum(sum(g) / len(g) for g in groups.values()) / len(groups) if groups else 0.0
    return raw * min(1.0, mattr(words, DIVERSITY_WINDOW) / DIVERSITY_FLOOR)


def hsca_beat_weights(texts, window=5):
    """Beat weights in plain Python: per text, the mean over its sentences (with pairs) of recurring pairs."""
    from scwo_np.hsca._layer1 import tokenize

    tok = tokenize(texts)
    words, sent = tok.words.tolist(), tok.sent.tolist()
    linked = _recurring(words, sent, window)
    nsent = int(tok.sent_ptr[-1])
    tot, hit = [0] * nsent, [0] * nsent
    for p in range(len(words)):
        for q in range(p + 1, min(p + window, len(words))):
            if sent[q] != sent[p]:
                break
            if words[p] != words[q]:
                tot[sent[p]] += 1
                hit[sent[p]] += (min(words[p], words[q]), max(words[p], words[q])) in linked
    out = []
    for t in range(len(texts)):
        sc = [hit[s] / tot[s] for s in range(tok.sent_ptr[t], tok.sent_ptr[t + 1]) if tot[s]]
        out.append(sum(sc) / len(sc) if sc else 0.0)
    return out


def long_context_reorder(items):
    """LangChain's ``LongContextReorder`` (langchain_community.document_transformers), as written
    there: ``items`` most relevant first; the result puts the most relevant at the two ends."""
    items = list(items)
    items.reverse()
    out = []
    for i, value in enumerate(items):
        if i % 2 == 1:
            out.append(value)
        else:
            out.insert(0, value)
    return out


def greedy_coverage_curve(item_facts, limit):
    """Plain greedy maximum coverage: after each of the first ``limit`` picks, the facts covered.

    Each step takes the item with the most facts not yet covered (ties: lowest index).
    """
    covered: set = set()
    left = list(range(len(item_facts)))
    curve = []
    for _ in range(min(limit, len(item_facts))):
        best = max(left, key=lambda i: (len(set(item_facts[i]) - covered), -i))
        covered |= set(item_facts[best])
        left.remove(best)
        curve.append(len(covered))
    return curve + [len(covered)] * (limit - len(curve))


def spherical_kmeans(E, k, iters=4, seed=0, dtype="float64"):
    """Plain spherical k-means as ``scwo_np.select.cluster_ground`` runs it: ``(centres, labels)``.

    Start: ``k`` rows drawn by numpy's seeded generator, as unit vectors; then ``iters``
    rounds of (assign by canonical cosine, ties to the lowest centre; move every
    non-empty centre to the normalised float64 mean of its members' unit rows,
    summed in index order), and a last assignment.  Centres are rounded to ``dtype``.
    """
    import numpy as np

    r = f32 if str(dtype) == "float32" else _same
    n, d = len(E), len(E[0])
    nrm = [norm(e, dtype) for e in E]
    start = sorted(np.random.default_rng(seed).choice(n, size=k, replace=False).tolist())
    C = [[r(float(E[i][t]) / nrm[i]) for t in range(d)] for i in start]
    labels = [0] * n
    for it in range(iters + 1):
        cn = [norm(c, dtype) for c in C]
        for i in range(n):
            scores = [dot(E[i], C[c], dtype) / cn[c] for c in range(k)]
            labels[i] = max(range(k), key=lambda c: (scores[c], -c))
        if it == iters:
            break
        acc = [[0.0] * d for _ in range(k)]
        count = [0] * k
        for i in range(n):
            count[labels[i]] += 1
            for t in range(d):
                acc[labels[i]][t] += float(E[i][t]) / nrm[i]
        for c in range(k):
            if count[c] == 0:
                continue
            s = 0.0
            for t in range(d):
                s += acc[c][t] * acc[c][t]
            s = math.sqrt(s)
            if s > 0.0:
                C[c] = [r(acc[c][t] / s) for t in range(d)]
    return C, labels


BROAD_WORDS = (
    "difference between", "differences between", "different between", "compare", "compares", "compared",
    "comparing", "comparison", "versus", "vs", "overview", "summary", "summarise", "summarize",
    "list all", "list the", "list every", "what are the", "what are all", "types of", "kinds of",
    "ways to", "ways of", "pros and cons", "advantages", "tradeoff", "tradeoffs", "trade-off", "trade-offs",
)  # fmt: skip


def auto_lam(rel, question=None):
    """``lam="auto"``, written out: 0.9 for a broad question or a set whose most relevant tenth
    stands more than 2.45 standard deviations above its mean relevance, else 0.7."""
    if question is not None:
        words = " ".join("".join(ch if ch.isalnum() or ch == "-" else " " for ch in question.lower()).split())
        if any(f" {w} " in f" {words} " for w in BROAD_WORDS):
            return 0.9
    rel = [float(r) for r in rel]
    n = len(rel)
    if n < 10:
        return 0.7
    mean = sum(rel) / n
    sd = (sum((r - mean) ** 2 for r in rel) / n) ** 0.5
    if not sd > 1e-12:
        return 0.7
    k = n // 10
    top = sorted(rel)[-k:]
    return 0.9 if (sum(top) / k - mean) / sd > 2.45 else 0.7


# --------------------------------------------------------------------------
# Crush store retrieval (CrushStore.retrieve / page): filter, rank, page, project
# --------------------------------------------------------------------------

BM25_K1, BM25_B = 1.2, 0.75


def _json_equal(a, b):
    """JSON equality: True/False equal only themselves; numbers by value; containers element by element."""
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        if sorted(a) != sorted(b):
            return False
        return all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        if len(a) != len(b):
            return False
        return all(_json_equal(a[k], b[k]) for k in range(len(a)))
    if isinstance(a, dict | list | tuple) or isinstance(b, dict | list | tuple):
        return False
    return a == b


def _value_text(v):
    import json

    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def _is_num(v):
    return isinstance(v, int | float) and type(v) is not bool


def _holds(item, field, cond):
    """Whether ``item`` (a dict) meets one field's condition."""
    ops = ("eq", "contains", "exists", "gt", "gte", "lt", "lte")
    if callable(cond):
        return field in item and bool(cond(item[field]))
    if isinstance(cond, dict) and any(k in ops for k in cond):
        for op in cond:
            want = cond[op]
            if op == "exists":
                if (field in item) != want:
                    return False
                continue
            if field not in item:
                return False
            got = item[field]
            if op == "eq":
                ok = _json_equal(got, want)
            elif op == "contains":
                ok = want in _value_text(got)
            elif isinstance(want, str):
                ok = isinstance(got, str) and {"gt": got > want, "gte": got >= want, "lt": got < want,
                                                "lte": got <= want}[op]  # fmt: skip
            else:
                ok = _is_num(got) and {"gt": got > want, "gte": got >= want, "lt": got < want,
                                       "lte": got <= want}[op]  # fmt: skip
            if not ok:
                return False
        return True
    return field in item and _json_equal(item[field], cond)


def _words_of(v, out):
    import re

    import snowballstemmer

    stem = snowballstemmer.stemmer("english").stemWord
    if isinstance(v, str):
        out += [stem(w) for w in re.findall(r"\w+", v.lower())]
    elif isinstance(v, dict):
        for k in v:
            out += [stem(w) for w in re.findall(r"\w+", str(k).lower())]
            _words_of(v[k], out)
    elif isinstance(v, list | tuple):
        for x in v:
            _words_of(x, out)
    elif v is not None and type(v) is not bool:
        out += [stem(w) for w in re.findall(r"\w+", _value_text(v).lower())]


def _query_terms(query):
    import re

    from scwo_np.anchor._config import AnchorConfig
    from scwo_np.anchor._keep import _STOP

    c = AnchorConfig()
    intent = {k.lower() for k in (*c.recency_keywords, *c.historical_keywords, *c.range_keywords)}
    import snowballstemmer

    stem = snowballstemmer.stemmer("english").stemWord
    terms = []
    for t in re.findall(r"\w+", query.lower()):
        if len(t) > 1 and t not in _STOP and t not in intent and stem(t) not in terms:
            terms.append(stem(t))
    return terms


def bm25(docs, terms):
    """BM25 of each (stemmed) word list against the (stemmed) terms (k1 1.2, b 0.75, Lucene's idf)."""
    n = len(docs)
    scores = [0.0] * n
    if n == 0:
        return scores
    avg = sum(len(d) for d in docs) / n or 1.0
    for t in terms:
        tf = [sum(1 for w in d if w == t) for d in docs]
        df = sum(1 for x in tf if x > 0)
        if df == 0:
            continue
        idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
        for i in range(n):
            if tf[i] > 0:
                denom = tf[i] + BM25_K1 * (1.0 - BM25_B + BM25_B * len(docs[i]) / avg)
                scores[i] += idf * (tf[i] * (BM25_K1 + 1.0)) / denom
    return scores


def crush_retrieve(items, kept, *, where=None, fields=None, start=None, stop=None, offset=0, limit=None,
                   dropped_only=True, query=None):  # fmt: skip
    """``CrushStore.retrieve(..., with_positions=True)`` written out: (projected items, positions)."""
    n = len(items)
    if fields is not None and items and all(isinstance(it, str) for it in items):
        raise ValueError("fields on text items")
    names = {k for it in items if isinstance(it, dict) for k in it}
    if fields is not None and names and any(f not in names for f in fields):
        raise ValueError("a field no item has")
    first, last, _ = slice(start, stop).indices(n)
    out = []
    for i in range(first, last):
        if dropped_only and kept is not None and i in set(kept):
            continue
        if where is not None:
            if callable(where):
                if not where(items[i]):
                    continue
            elif not isinstance(items[i], dict) or not all(_holds(items[i], f, c) for f, c in where.items()):
                continue
        out.append(i)
    if not out and isinstance(where, dict):
        _cannot_match(where, items)
    if query is not None and query.strip():
        terms = _query_terms(query)
        if terms:
            docs = []
            for i in out:
                words = []
                _words_of(items[i], words)
                docs.append(words)
            scores = bm25(docs, terms)
            out = [i for _, _, i in sorted((-scores[k], k, i) for k, i in enumerate(out))]
    out = out[offset:] if limit is None else out[offset : offset + limit]
    got = []
    for i in out:
        x = items[i]
        if fields is not None and isinstance(x, dict):
            x = {f: x[f] for f in dict.fromkeys(fields) if f in x}
        got.append(x)
    return got, out


def _cannot_match(where, items):
    """A ``ValueError`` when a ``where`` that matched nothing cannot match these items: a field
    none has (unless only tested for absence), a plain object where the field never holds one,
    a string bound on a field with no strings or a number bound on one with no numbers."""
    objects = [it for it in items if isinstance(it, dict)]
    if not objects:
        if items and all(isinstance(it, str) for it in items):
            raise ValueError("where on text items")
        return
    ops = ("eq", "contains", "exists", "gt", "gte", "lt", "lte")
    for field, cond in where.items():
        if callable(cond):
            continue
        values = [it[field] for it in objects if field in it]
        used = [k for k in cond if k in ops] if isinstance(cond, dict) else []
        if not values:
            if used and set(used) == {"exists"}:
                continue
            raise ValueError(f"no item has the field {field!r}")
        if isinstance(cond, dict) and not used and not any(isinstance(v, dict) for v in values):
            raise ValueError(f"{field!r}: not operators")
        for op in used:
            if op in ("gt", "gte", "lt", "lte"):
                if isinstance(cond[op], str) and not any(isinstance(v, str) for v in values):
                    raise ValueError(f"{field!r} holds no strings")
                if _is_num(cond[op]) and not any(_is_num(v) for v in values):
                    raise ValueError(f"{field!r} holds no numbers")


def compact_json(text):
    """A JSON text without the whitespace outside its strings (character by character)."""
    out, in_str, escaped = [], False, False
    for ch in text:
        if in_str:
            out.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
            out.append(ch)
        elif ch not in " \t\n\r":
            out.append(ch)
    return "".join(out)


def crush_page(items, pieces, kept, budget, count, **filters):
    """``CrushStore.page`` written out: the items from ``offset`` on, one at a time, while the whole
    text ``[a,b,...]`` counts at most ``budget``. Returns (text, positions, next_offset, remaining)."""
    import json

    offset, limit = filters.get("offset", 0), filters.get("limit")
    _, every = crush_retrieve(items, kept, **{**filters, "offset": 0, "limit": None})
    window = every[offset:] if limit is None else every[offset : offset + limit]
    fields = filters.get("fields")
    texts = []
    for i in window:
        if fields is not None and isinstance(items[i], dict):
            proj = {f: items[i][f] for f in dict.fromkeys(fields) if f in items[i]}
            t = json.dumps(proj, ensure_ascii=False, separators=(",", ":"))
        else:
            t = compact_json(pieces[i])
        if count("[" + ",".join([*texts, t]) + "]") > budget:
            break
        texts.append(t)
    k = len(texts)
    remaining = len(every) - min(offset, len(every)) - k
    return "[" + ",".join(texts) + "]", window[:k], (offset + k if remaining > 0 else None), remaining


# anchor: records in time order (scwo_np/anchor/_timeline.py, _patterns.py, _keep.py)
# --------------------------------------------------------------------------


def timeline_order(keys):
    """Positions in time order from per-item sortable keys (None: missing), as ``timeline_order`` defines it.

    A missing key takes the previous known one (a leading gap the first known); already
    rising keys keep the array order; when the first key is later than the last, the array
    is read backwards (ties: the later position first); otherwise a stable sort.
    """
    n = len(keys)
    known = [k for k in keys if k is not None]
    if n < 2 or not known:
        return list(range(n))
    filled, last = [], known[0]
    for k in keys:
        last = k if k is not None else last
        filled.append(last)
    if all(filled[i] <= filled[i + 1] for i in range(n - 1)):
        return list(range(n))
    if filled[0] > filled[-1]:
        return sorted(range(n), key=lambda i: (filled[i], -i))
    return sorted(range(n), key=lambda i: (filled[i], i))


def rare_groups(rows, share=0.01, max_distinct=20):
    """Per item, its rarest rare categorical value as (field, value), or None (``rare_groups``'s rule).

    ``rows`` is a list of dicts holding only str/bool values; returns the (field, value)
    pairs instead of ``rare_groups``'s numbers.
    """
    n = len(rows)
    fields = list(dict.fromkeys(k for r in rows for k in r))
    out, best = [None] * n, [math.inf] * n
    for f in fields:
        held = [r[f] for r in rows if f in r]
        counts = {}
        for v in held:
            key = (type(v), v)
            counts[key] = counts.get(key, 0) + 1
        if not 2 <= len(counts) <= max_distinct or len(held) < 0.5 * n:
            continue
        rare = {key for key, c in counts.items() if c < share * len(held)}
        if not rare or len(rare) == len(counts):
            continue
        for i, r in enumerate(rows):
            if f in r and (type(r[f]), r[f]) in rare and counts[(type(r[f]), r[f])] < best[i]:
                best[i] = counts[(type(r[f]), r[f])]
                out[i] = (f, r[f])
    return out


def water_fill(needs, room):
    """One slot at a time to the kind furthest below its need relative to the others (first on ties)."""
    give = [0] * len(needs)
    for _ in range(max(room, 0)):
        open_ = [k for k in range(len(needs)) if give[k] < needs[k]]
        if not open_:
            break
        k = min(open_, key=lambda j: (give[j], j))
        give[k] += 1
    return give


def nuance_pattern_flags(text):
    """Layer 3's pattern flags as the patterns alone give them (scwo_np.hsca._layer3 checks a
    literal first)."""
    from scwo_np.hsca import _layer3 as l3

    flags = []
    if l3._HEDGED.search(text):
        flags.append("hedged")
    if l3._ABSOLUTE.search(text):
        flags.append("absolute")
    if l3._RHETORICAL.search(text) or l3._ANSWERED.search(text):
        flags.append("rhetorical_question")
    if l3._IMPERATIVE.search(text) or l3._YOU_SHOULD.search(text):
        flags.append("instructional")
    if l3._URGENT.search(text):
        flags.append("urgent")
    return flags


def _question_and_docs(docs, query):
    """The question's distinct content stems, and each doc's words stemmed (a stop word as "":
    it takes its place in the length and matches no term)."""
    import re

    from scwo_np.text import STOPWORDS, stem

    word = r"[^\W\d_]+(?:['’][^\W\d_]+)?"
    terms = []
    for w in re.findall(word, query.lower()):
        if w not in STOPWORDS and stem(w) not in terms:
            terms.append(stem(w))
    words = [[stem(w) if w not in STOPWORDS else "" for w in re.findall(word, d.lower())] for d in docs]
    return terms, words


def lexical_relevance(docs, query):
    """``select_texts``' lexical signal written out: BM25 of each doc against the question's
    content stems (df over the docs, length = every word), over the best doc's (0 when none)."""
    terms, words = _question_and_docs(docs, query)
    scores = bm25(words, terms)
    top = max(scores, default=0.0)
    return [s / top if top > 0 else 0.0 for s in scores]


def question_share(docs, query):
    """Sentence selection's lexical signal written out: each doc's BM25 against the question's
    content stems (df over the docs) over (k1 + 1) times the sum of those stems' idf (a stem no
    doc holds counts too); all 0 when the question has no content word."""
    terms, words = _question_and_docs(docs, query)
    n = len(docs)
    total = 0.0
    for t in terms:
        df = sum(1 for d in words if t in d)
        total += math.log(1.0 + (n - df + 0.5) / (df + 0.5))
    if not terms or n == 0:
        return [0.0] * n
    return [s / ((BM25_K1 + 1.0) * total) for s in bm25(words, terms)]


def hashed_tfidf(docs, dim=256):
    """The proxy's sentence vectors written out: per doc, each content stem's ``(1 + log tf) *
    (1 + log((1 + n) / (1 + df)))`` added with the sign of bit 31 of ``crc32(stem)`` to bucket
    ``crc32(stem) % dim``; the row scaled to unit length, or the last axis when it has no weight."""
    import re
    import zlib

    from scwo_np.text import STOPWORDS, stem

    word = r"[^\W\d_]+(?:['’][^\W\d_]+)?"
    bags = [[stem(w) for w in re.findall(word, d.lower()) if w not in STOPWORDS] for d in docs]
    n = len(docs)
    df = {}
    for bag in bags:
        for t in set(bag):
            df[t] = df.get(t, 0) + 1
    out = []
    for bag in bags:
        v = [0.0] * (dim + 1)
        for t in sorted(set(bag)):
            code = zlib.crc32(t.encode("utf-8", "surrogatepass"))
            w = (1.0 + math.log(bag.count(t))) * (1.0 + math.log((1.0 + n) / (1.0 + df[t])))
            v[code % dim] += -w if code & (1 << 31) else w
        norm = math.sqrt(sum(x * x for x in v))
        if norm < 1e-12:
            v, norm = [0.0] * dim + [1.0], 1.0
        out.append([x / norm for x in v])
    return out


def fused_chunks(E, q, docs, query, costs, budget, lexical, lam=0.7):
    """``select_texts``' chunk selection for a question given as text, written out: budgeted MMR
    over each chunk's cosine with the question plus ``lexical`` times its :func:`lexical_relevance`."""
    rel = [cosine(e, q) + lexical * s for e, s in zip(E, lexical_relevance(docs, query), strict=True)]
    picks, _ = mmr_with_relevance(E, rel, costs, budget, lam=lam)
    return list(picks)


def text_levels(texts):
    """Each text's error level, one text at a time, by the error words written plainly (one pattern
    a level, the look-behind of lower-case "error" before the word, as first written; a word followed
    by a dot or an at sign and a letter is part of a name: "fatal.se", "Error.java")."""
    import re

    name = r"(?![.@]\w)"
    critical = re.compile(
        r"(?:FATAL|Fatal|fatal|CRITICAL|Critical|critical|PANIC|Panic|panic|EMERG(?:ENCY)?)\b" + name
    )
    error = re.compile(
        r"(?:ERR(?:OR)?|Exception|Error|Errors were|Traceback|FAIL(?:ED|URE)?|[Ff]ailed|[Uu]nable to|"
        r"No such file or directory|[Pp]ermission denied)\b" + name + r"|(?<![\w.+-])error(?![\w+-]|\.\w)"
    )
    return ["critical" if critical.search(t) else "error" if error.search(t) else "" for t in texts]
