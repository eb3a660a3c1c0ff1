"""Lexical relevance for selection from text: the question's own words in the candidates.

An embedding places a text near the question by meaning; it can miss the one word that
decides ("Why is ``-22 // 10`` -4?" against a paragraph about floor division).  BM25
(Robertson's, with Lucene's positive idf, ``k1 = 1.2``, ``b = 0.75``) scores each candidate
by the question's content words it holds, rarer words weighing more.  The words are
:data:`scwo_np.text.WORD` words, lower case, not :data:`~scwo_np.text.STOPWORDS`, stemmed
(:func:`scwo_np.text.stem`), so "parsing" finds "parses".  Document frequencies are counted
over the candidates themselves: the retrieved set is the collection, as in a reranker.

Units (sentences) and their texts are scored in one pass over the units: a text's term
counts are the sums of its units' (every word of a text lies in one of its units).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain

import numpy as np
from numpy.typing import NDArray

from ..text import STOPWORDS, WORD, stem

__all__ = ["LEXICAL", "bm25", "lexical_relevance", "query_stems", "term_counts"]

#: BM25's parameters (Robertson's, with Lucene's positive idf).
_K1, _B = 1.2, 0.75

#: The default weight of the question's words beside the embedding (``select_texts(lexical=)``),
#: per granularity, chosen by leave-one-source-out on five documentation sources
#: (``python -m scwo_evals.relevance``; the text guide has the figures): over whole texts 0.05 was
#: chosen in every fold (0, 0.05, 0.1 and 0.2 tried); over sentences the other parts of a unit's
#: relevance (``_units``) already take what the words added, and 0 was chosen in four folds of five.
LEXICAL = {"chunk": 0.05, "sentence": 0.0}


def query_stems(query: str) -> list[str]:
    """The distinct stems of the question's content words, in order of first appearance."""
    return list(dict.fromkeys(stem(w) for w in WORD.findall(query.lower()) if w not in STOPWORDS))


def term_counts(docs: Sequence[str], stems: Sequence[str]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(tf, lengths)``: how often each doc holds each of ``stems`` (shape ``(len(docs),
    len(stems))``) and each doc's length in words (every :data:`~scwo_np.text.WORD` word)."""
    lists = [WORD.findall(d.lower()) for d in docs]
    lengths = np.fromiter(map(len, lists), dtype=np.float64, count=len(lists))
    tf = np.zeros((len(docs), len(stems)))
    if not stems or not lists:
        return tf, lengths
    column = {s: k for k, s in enumerate(stems)}
    # Each distinct word is stemmed once (the stems are cached across calls too).
    hits = {
        w: k
        for w in set(chain.from_iterable(lists))
        if w not in STOPWORDS and (k := column.get(stem(w))) is not None
    }
    if not hits:
        return tf, lengths
    rows: list[int] = []
    cols: list[int] = []
    for i, ws in enumerate(lists):
        found = [hits[w] for w in ws if w in hits]
        rows += [i] * len(found)
        cols += found
    np.add.at(tf, (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)), 1.0)
    return tf, lengths


def bm25(tf: NDArray[np.float64], lengths: NDArray[np.float64]) -> NDArray[np.float64]:
    """BM25 of each row of ``tf`` (term counts of the query's terms), df over the rows."""
    n = tf.shape[0]
    if n == 0 or tf.shape[1] == 0:
        return np.zeros(n)
    avg = float(lengths.mean()) or 1.0
    df = np.count_nonzero(tf, axis=0)
    idf = np.log1p((n - df + 0.5) / (df + 0.5))
    norm = _K1 * (1.0 - _B + _B * lengths / avg)
    return (tf * (_K1 + 1.0) / (tf + norm[:, None])) @ idf


def lexical_relevance(docs: Sequence[str], query: str) -> NDArray[np.float64]:
    """Each doc's BM25 against the question's content words, over the best doc's: in [0, 1], all
    zeros when no doc holds a word of the question (or the question has none)."""
    s = bm25(*term_counts(docs, query_stems(query)))
    top = float(s.max()) if s.size else 0.0
    return s / top if top > 0.0 else s
