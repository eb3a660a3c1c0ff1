"""Near-duplicate removal: which retrieved chunks say the same thing twice.

:func:`deduplicate` finds every pair of items whose similarity reaches a threshold,
then walks the items best first (highest score; without scores in input
order; ties to the lowest index) and keeps each one unless it reaches the
threshold against an item already kept: it is then dropped as a duplicate of
the most similar kept item (ties to the lowest index).  An item is never
dropped against an item that is itself dropped, so every reported similarity
is at or above the threshold, as the KB Labs ADR's and MoRAG's "compare with
what is kept" loops intend.  The result depends only on the pairs and the
scores, not on the order in which pairs are found.  ``grouping="components"``
keeps the former behaviour: connected components of the duplicate graph (by
union-find), the best member of each kept; chains of pairs can then join
items that are not alike (``a ~ b ~ c`` drops ``c`` against ``a``).
Identical items (same text, or the same embedding row) are grouped by
hashing before any similarity is computed and count as similarity 1.0;
the others are compared class by class (see ``"sequence"`` below for the
one asymmetric similarity).

Exactness.  ``jaccard``, ``sequence`` and ``cosine`` report every pair at or
above the threshold (their filters only skip pairs whose upper bound is below
it), so the greedy result is the exact greedy result on the true similarities:
no dropped item is below the threshold against its kept item, and no two kept
items reach it.  ``minhash`` reports only pairs that LSH makes candidates and
that pass an exact Jaccard check: the result is the exact greedy result *on the
pairs it reports*.  Its dropped items are still never below the threshold
against their kept item, but two kept items can reach the threshold when LSH
missed their pair.

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
    and ``entity_weight=w`` (MoRAG's 0.7/0.3 split by default).  The ratio
    is asymmetric (``ratio(a, b) != ratio(b, a)`` in general: "on the the"
    then "the cat the" is 0.667, the other way round 0.381), so a pair of
    classes of identical texts is scored once per order in which their
    members occur: classes C and D, C's first member earlier, in C-then-D
    order, and also in D-then-C order when a member of C comes after D's
    first member.  Classes of one item (most of them) need one order only;
    a class of k copies adds one pass over the classes it interleaves
    with, not k.  Every reported similarity is that of the two items
    themselves, in their own order.
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

import sys
import types
import warnings

from ..validation import RenamedWarning, renamed_attributes
from ._common import DEDUP_GROUPINGS, DEDUP_METHODS, Dedup
from ._cosine import cosine_pairs
from ._front import deduplicate
from ._jaccard import jaccard_pairs
from ._minhash import lsh_params, minhash_pairs
from ._sequence import sequence_pairs

__all__ = [
    "DEDUP_GROUPINGS",
    "DEDUP_METHODS",
    "Dedup",
    "cosine_pairs",
    "deduplicate",
    "jaccard_pairs",
    "lsh_params",
    "minhash_pairs",
    "sequence_pairs",
]

#: ``scwo_np.dedup.dedup`` was the function's name until 0.2: it still works, with a DeprecationWarning.
__getattr__ = renamed_attributes(__name__, {"dedup": "deduplicate"})


class _DedupPackage(types.ModuleType):
    """This package, callable for one minor version: ``scwo_np.dedup(texts)`` is :func:`deduplicate`.

    Before 0.2 the function had the package's name, so ``scwo_np.dedup(texts)`` failed with
    "'module' object is not callable".  Calling the package now works and warns.
    """

    def __call__(self, *args, **kwargs):
        warnings.warn(
            "scwo_np.dedup is a package: calling it works until 0.3 (deprecated since 0.2); call "
            "scwo_np.deduplicate(...), the function that was scwo_np.dedup.dedup.",
            RenamedWarning,
            2,
        )
        return deduplicate(*args, **kwargs)


sys.modules[__name__].__class__ = _DedupPackage
