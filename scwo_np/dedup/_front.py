"""The :func:`deduplicate` front: find duplicate pairs with one method, then keep and drop items (greedy or components)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numba import njit
from numpy.typing import ArrayLike

from .. import _dot
from .._config import JIT
from ..embed import as_embedder, embed_texts
from ..text import Ragged, _jaccard_sorted, word_sets
from ..validation import (
    check_embeddings,
    check_row_norms,
    check_scores,
    check_texts,
    check_unit_interval,
)
from ._common import (
    DEDUP_GROUPINGS,
    DEDUP_METHODS,
    Dedup,
    _all_pairs_star,
    _best_first,
    _classes,
    _components,
    _greedy,
    _identical,
    _identical_rows,
    _keep_best,
    _last_members,
    _unique_mask,
)
from ._cosine import cosine_pairs
from ._jaccard import jaccard_pairs
from ._minhash import minhash_pairs
from ._sequence import _check_entities, _sequence_data, _sequence_edges, _sequence_sims

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


def _star(cls, scores, pair_sims, ordered=False):
    """Threshold 0 on a similarity that is never negative: every item duplicates the best one, ``b0``.

    Edges from every other class to ``b0``'s.  With ``ordered`` (an
    asymmetric similarity, ``pair_sims(first, second)``) a class gets one
    edge for its members before ``b0`` and one for those after it, each
    computed in that order; :func:`_greedy` takes the one that holds.
    """
    b0 = _best_first(scores)[0]
    r0 = cls[b0]
    reps = np.unique(cls)
    others = reps[reps != r0]
    if not ordered:
        lo = np.minimum(others, r0)
        hi = np.maximum(others, r0)
        return lo, hi, pair_sims(lo, hi)
    before = others[others < b0]  # a class's label is its first member
    after = others[_last_members(cls)[others] > b0]
    first = np.concatenate([before, np.full(after.shape[0], r0, np.int64)])
    second = np.concatenate([np.full(before.shape[0], r0, np.int64), after])
    return first, second, pair_sims(first, second)


def deduplicate(
    texts: Sequence[str] | None = None,
    *,
    embeddings: ArrayLike | None = None,
    embedder: object = None,
    method: str = "jaccard",
    threshold: float | None = None,
    scores: ArrayLike | None = None,
    grouping: str = "greedy",
    entities: Sequence[Sequence[str]] | None = None,
    entity_weight: float = 0.3,
    lowercase: bool = True,
    num_perm: int = 128,
    seed: int = 0,
    sets: Ragged | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Dedup:
    """Remove near-duplicates: best first, an item is dropped only as a duplicate of a kept item.

    With ``grouping="greedy"`` (the default) the items are taken by score,
    highest first (without scores in input order; ties to the lowest index),
    and each is kept unless its similarity to an item already kept reaches
    ``threshold``; then it is dropped as a duplicate of the most similar kept
    item (ties to the lowest index).  So every reported ``similarity`` is at
    or above the threshold, and no two kept items reach it (for the exact
    methods; see ``method="minhash"``).  This is the "keep the best, compare
    with what is kept" loop of the KB Labs ADR and of MoRAG's redundancy
    filter.  ``grouping="components"`` joins items into connected
    components of the duplicate graph and keeps the best of each: chains of
    pairs can then join items that are not similar at all.

    Parameters
    ----------
    texts : sequence of str
        The items' text (for the text methods).
    embeddings : array_like, shape (n, d)
        The items' embeddings (for ``method="cosine"``).
    embedder : callable or {"lsa", "minilm"}, optional
        For ``method="cosine"`` without ``embeddings``: embeds ``texts``
        (see :func:`scwo_np.embed.as_embedder`).
    method : {"jaccard", "sequence", "cosine", "minhash"}
        Similarity (see the module documentation).
    threshold : float in [0, 1], optional
        Items whose similarity is ``>= threshold`` are duplicates; defaults
        to ``DEDUP_METHODS[method]``.  At 0 the text methods (never
        negative) drop everything but the best item at once; greedy cosine
        at 0 finds every pair with a cosine ``>= 0`` (up to ``n^2 / 2``).
    scores : array_like of float, optional
        Relevance of each item: items are taken highest score first (ties,
        and no scores, in input order).
    grouping : {"greedy", "components"}
        ``"greedy"`` (default): an item is dropped only when it reaches the
        threshold against a kept item.  ``"components"``: connected
        components of all pairs at or above the threshold, the best of each
        kept (a dropped item may be below the threshold against it).  See
        ``DEDUP_GROUPINGS``.
    entities, entity_weight, lowercase
        For ``method="sequence"``: see :func:`sequence_pairs`.
    num_perm, seed
        For ``method="minhash"``: see :func:`minhash_pairs`.
    sets : Ragged, optional
        ``word_sets(texts)[0]`` when already computed (jaccard, minhash), so
        a pipeline tokenizes once.
    progress : callable, optional
        Called as ``progress(items_done, items)`` as the work advances: as
        the pairwise comparison of ``method="sequence"`` (the slow one, a
        difflib ratio per candidate pair) goes through the items, and once at
        the end for every method.

    Returns
    -------
    Dedup
        ``(keep, dropped, duplicate_of, similarity)``.

    Examples
    --------
    >>> texts = ["The cat sat on the mat today", "the cat sat on the MAT today",
    ...          "Dogs bark at night", "The cat sat on the mat today"]
    >>> r = deduplicate(texts, scores=[0.2, 0.9, 0.5, 0.1])
    >>> r.keep, r.dropped, r.duplicate_of, r.similarity
    (array([1, 2]), array([0, 3]), array([1, 1]), array([1., 1.]))
    >>> E = np.array([[1.0, 0.0], [0.99, 0.05], [0.0, 1.0]])
    >>> deduplicate(embeddings=E, method="cosine").dropped
    array([1])
    >>> docs = ["Read a CSV file with csv.reader.", "read a csv file with csv.reader",
    ...         "json.load parses JSON.", "sqlite3 opens a database."]
    >>> deduplicate(docs, method="cosine", embedder="lsa", threshold=0.95).dropped
    array([1])

    A chain: ``b`` is close to ``a`` and to ``c``, which are not close to each
    other.  Greedy keeps ``a`` and ``c``; components drop ``c`` as a
    "duplicate" of ``a`` it is not similar to:

    >>> E = np.array([[1.0, 0.0], [0.96, 0.28], [0.8, 0.6]])
    >>> deduplicate(embeddings=E, method="cosine", threshold=0.9).keep
    array([0, 2])
    >>> r = deduplicate(embeddings=E, method="cosine", threshold=0.9, grouping="components")
    >>> r.keep, r.dropped, np.round(r.similarity, 2)
    (array([0]), array([1, 2]), array([0.96, 0.8 ]))
    """
    if progress is not None and not callable(progress):
        raise TypeError(
            f"progress must be a callable progress(done, total) or None; got {type(progress).__name__}."
        )
    res = _deduplicate(
        texts, embeddings=embeddings, embedder=embedder, method=method, threshold=threshold, scores=scores,
        grouping=grouping, entities=entities, entity_weight=entity_weight, lowercase=lowercase,
        num_perm=num_perm, seed=seed, sets=sets, progress=progress,
    )  # fmt: skip
    if progress is not None:
        n = res.keep.shape[0] + res.dropped.shape[0]
        progress(n, n)
    return res


def _deduplicate(
    texts, *, embeddings, embedder, method, threshold, scores, grouping, entities, entity_weight, lowercase,
    num_perm, seed, sets, progress,
) -> Dedup:  # fmt: skip
    """:func:`deduplicate`, its arguments given."""
    default = DEDUP_METHODS.lookup(method)
    DEDUP_GROUPINGS.lookup(grouping)
    greedy = grouping == "greedy"
    if threshold is None:
        t = default
    else:
        t = check_unit_interval(threshold, name="threshold", meaning="a similarity")
    if method == "cosine":
        if embeddings is None and embedder is not None:
            if texts is None:
                raise ValueError("embedder= embeds texts=; pass the items' text.")
            texts = check_texts(texts, nonempty=True)
            embeddings = embed_texts(as_embedder(embedder, texts), texts) if texts else np.empty((0, 1))
        if embeddings is None:
            raise ValueError(
                "method='cosine' needs embeddings=(n, d) array or an embedder= to embed texts; "
                "pass the items' embeddings or an embedder."
            )
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
        if greedy:  # cosines can be negative: threshold 0 needs the pairs too
            a, b, s = cosine_pairs(E[u_idx], t)
            return _greedy(n, _classes(n, ia, ib), u_idx[a], u_idx[b], s, sc)
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
        cls = _classes(n, ia, ib)
        if ents is not None:
            # Equal text with other entities scores differently against third items:
            # only (text, entity set) twins may skip the pairwise pass.
            ta, twins = _identical([(x, frozenset(e)) for x, e in zip(texts, ents, strict=True)])
            u_idx = np.flatnonzero(_unique_mask(n, twins))
            cls = _classes(n, ta, twins)
        sd = _sequence_data([x.lower() for x in texts] if lowercase else texts, ents)

        def sequence_sims(first, second):  # first: the earlier text (difflib's b)
            return _sequence_sims(sd.cptr, sd.cdata, sd.nchars, sd.eptr, sd.edata, 1.0 - w, w, first, second)

        # difflib's ratio is asymmetric: a class pair is scored in each order its members occur in.
        reps = np.zeros(n, dtype=bool)
        reps[u_idx] = True
        if t <= 0.0:
            if greedy:
                return _greedy(n, cls, *_star(cls, sc, sequence_sims, ordered=True), sc, ordered=True)
            edges = [(ia, ib), _all_pairs_star(n)]
        else:
            done = None if progress is None else lambda hi: progress(hi, n)
            a, b, s = _sequence_edges(sd, reps, w, t, _last_members(cls), done)
            if greedy:
                return _greedy(n, cls, a, b, s, sc, ordered=True)
            edges = [(ia, ib), (a, b)]
        return _group(n, edges, sc, identical_text, sequence_sims)

    full = word_sets(texts)[0] if sets is None else sets
    if len(full) != n:
        raise ValueError(f"sets has {len(full)} rows but there are {n} texts.")

    def jaccards(lo, hi):
        return np.array([_jaccard_sorted(full.row(x), full.row(y)) for x, y in zip(lo, hi, strict=True)])

    if greedy:
        cls = _classes(n, ia, ib)
        if t <= 0.0:  # Jaccard is never negative: every pair qualifies
            a, b, s = _star(cls, sc, jaccards)
        else:
            find = minhash_pairs if method == "minhash" else jaccard_pairs
            kw = {"num_perm": num_perm, "seed": seed} if method == "minhash" else {}
            a, b, s = find(full.take(u_idx), t, **kw)
            a, b = u_idx[a], u_idx[b]
        return _greedy(n, cls, a, b, s, sc)
    if t <= 0.0:
        edges = [(ia, ib), _all_pairs_star(n)]
    elif method == "minhash":
        a, b, _ = minhash_pairs(full.take(u_idx), t, num_perm=num_perm, seed=seed)
        edges = [(ia, ib), (u_idx[a], u_idx[b])]
    else:
        a, b, _ = jaccard_pairs(full.take(u_idx), t)
        edges = [(ia, ib), (u_idx[a], u_idx[b])]
    return _group(n, edges, sc, identical_text, jaccards)
