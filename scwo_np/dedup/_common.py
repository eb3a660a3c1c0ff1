"""What the dedup methods share: the result type, greedy and union-find grouping, identical items."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numba import njit
from numpy.typing import NDArray

from .._config import JIT
from .._registry import Registry

#: Registry of dedup methods (``method=``): name -> default threshold; tests parametrise over it.
DEDUP_METHODS: Registry[float] = Registry(
    "method", {"jaccard": 0.9, "sequence": 0.7, "cosine": 0.9, "minhash": 0.9}
)

#: Registry of groupings (``grouping=``): how duplicate pairs become kept and dropped items.
DEDUP_GROUPINGS: Registry[str] = Registry(
    "grouping",
    {
        "greedy": "best first; an item is dropped only when it reaches the threshold against a kept item",
        "components": "connected components of the duplicate graph; the best of each kept (chains)",
    },
)


class Dedup(NamedTuple):
    """What :func:`deduplicate` kept and dropped, and why.

    ``keep`` and ``dropped`` are ascending indices into the input;
    ``duplicate_of[k]`` is the kept item that ``dropped[k]`` duplicates and
    ``similarity[k]`` their similarity under the method (1.0 for identical
    items).  With ``grouping="greedy"`` (the default) every ``similarity``
    is at or above the threshold; with ``grouping="components"`` a dropped
    item can sit below it against the kept one, when a chain of pairs above
    the threshold links them.

    Parameters
    ----------
    keep : ndarray of int64
        The items kept, ascending.
    dropped : ndarray of int64
        The items dropped, ascending.
    duplicate_of : ndarray of int64
        For each dropped item, the kept item it duplicates.
    similarity : ndarray of float64
        For each dropped item, its similarity to that kept item.

    Examples
    --------
    >>> from scwo_np.dedup import deduplicate
    >>> r = deduplicate(["the cat sat on the mat", "the cat sat on the mat", "a dog"])
    >>> r.keep, r.dropped, r.duplicate_of, r.similarity
    (array([0, 2]), array([1]), array([0]), array([1.]))
    """

    keep: NDArray[np.int64]
    dropped: NDArray[np.int64]
    duplicate_of: NDArray[np.int64]
    similarity: NDArray[np.float64]


# --------------------------------------------------------------------------
# Greedy grouping: best first, dropped only against a kept item
# --------------------------------------------------------------------------


@njit(**JIT)
def _greedy_kernel(order, cls, ptr, nbr, sim, when, keep_of, dup_of, dup_sim):
    """Walk ``order``; keep an item unless a kept item is a neighbour of its class.

    ``cls[i]`` is the class (identical items) of item ``i``; ``ptr``/``nbr``/
    ``sim``/``when`` are the CSR adjacency between classes (both directions,
    each entry's similarity, and when it holds: 0 always, 1 only when the
    row's item comes before the neighbour's kept item in input order, 2 only
    when it comes after).  ``keep_of[c]`` is the kept item of class ``c`` or
    -1 (filled here).  A dropped item gets the most similar kept item
    (1.0 for its own class's), ties to the lowest index.
    """
    for q in range(order.shape[0]):
        i = order[q]
        c = cls[i]
        if keep_of[c] >= 0:  # an identical item is kept: no other kept item can be a neighbour
            dup_of[i] = keep_of[c]
            dup_sim[i] = 1.0
            continue
        best = -1
        best_s = 0.0
        for k in range(ptr[c], ptr[c + 1]):
            j = keep_of[nbr[k]]
            if j < 0 or (when[k] == 1 and i > j) or (when[k] == 2 and i < j):
                continue
            s = sim[k]
            if best < 0 or s > best_s or (s == best_s and j < best):
                best = j
                best_s = s
        if best < 0:
            keep_of[c] = i
            dup_of[i] = -1
        else:
            dup_of[i] = best
            dup_sim[i] = best_s


@njit(**JIT)
def _csr(n, a, b, s, ordered):
    """Both directions of every edge ``(a[k], b[k], s[k])`` as CSR rows (a counting sort, O(n + m)).

    With ``ordered`` an edge holds only when ``a``'s item comes before
    ``b``'s (``when`` 1 in ``a``'s row, 2 in ``b``'s); otherwise always (0).
    """
    ptr = np.zeros(n + 1, np.int64)
    for k in range(a.shape[0]):
        ptr[a[k] + 1] += 1
        ptr[b[k] + 1] += 1
    for i in range(n):
        ptr[i + 1] += ptr[i]
    fill = ptr[:-1].copy()
    nbr = np.empty(2 * a.shape[0], np.int64)
    sim = np.empty(2 * a.shape[0])
    when = np.zeros(2 * a.shape[0], np.int8)
    for k in range(a.shape[0]):
        x = a[k]
        y = b[k]
        nbr[fill[x]] = y
        sim[fill[x]] = s[k]
        nbr[fill[y]] = x
        sim[fill[y]] = s[k]
        if ordered:
            when[fill[x]] = 1
            when[fill[y]] = 2
        fill[x] += 1
        fill[y] += 1
    return ptr, nbr, sim, when


def _best_first(scores: NDArray[np.float64]) -> NDArray[np.int64]:
    """Indices by score, highest first, ties to the lowest index."""
    n = scores.shape[0]
    return np.lexsort((np.arange(n), -scores)).astype(np.int64)


def _greedy(
    n: int,
    cls: NDArray[np.int64],
    a: NDArray[np.int64],
    b: NDArray[np.int64],
    s: NDArray[np.float64],
    scores: NDArray[np.float64],
    ordered: bool = False,
) -> Dedup:
    """Greedy grouping over edges ``(a, b, s)`` between class labels (``cls`` values).

    Exact with respect to the edges: the result is that of walking the items
    best first and keeping each one unless an item already kept is its twin
    (same class) or shares an edge with its class.  With ``ordered`` (an
    asymmetric similarity) the edge ``(a, b, s)`` is the similarity of an
    item of class ``a`` and a later item of class ``b`` only: the reverse
    order of the same two classes needs its own edge ``(b, a, s')``.
    """
    ptr, nbr, sim, when = _csr(
        n, np.ascontiguousarray(a, np.int64), np.ascontiguousarray(b, np.int64),
        np.ascontiguousarray(s, np.float64), ordered,
    )  # fmt: skip
    keep_of = np.full(n, -1, np.int64)
    dup_of = np.full(n, -1, np.int64)
    dup_sim = np.zeros(n)
    _greedy_kernel(
        _best_first(scores),
        np.ascontiguousarray(cls, np.int64),
        ptr,
        nbr,
        sim,
        when,
        keep_of,
        dup_of,
        dup_sim,
    )
    dropped = np.flatnonzero(dup_of >= 0)
    return Dedup(np.flatnonzero(dup_of < 0), dropped, dup_of[dropped], dup_sim[dropped])


def _classes(n: int, a: NDArray[np.int64], b: NDArray[np.int64]) -> NDArray[np.int64]:
    """Class label of every item from :func:`_identical`'s edges (first item -> later twin)."""
    cls = np.arange(n, dtype=np.int64)
    cls[b] = a
    return cls


def _last_members(cls: NDArray[np.int64]) -> NDArray[np.int64]:
    """``last[c]``: the last item of class ``c`` (``c`` a class label, its first item)."""
    n = cls.shape[0]
    last = np.arange(n, dtype=np.int64)
    np.maximum.at(last, cls, np.arange(n, dtype=np.int64))
    return last


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
def _mix64(x):
    """splitmix64's finaliser: a 64-bit bijection with full avalanche."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


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
