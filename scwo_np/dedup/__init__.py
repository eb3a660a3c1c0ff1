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

from ._common import DEDUP_METHODS, Dedup
from ._cosine import cosine_pairs
from ._front import dedup
from ._jaccard import jaccard_pairs
from ._minhash import lsh_params, minhash_pairs
from ._sequence import sequence_pairs

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
