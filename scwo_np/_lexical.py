"""The question's own words in the candidates: BM25, and hashed TF-IDF vectors (the core, no model).

An embedding places a text near the question by meaning; it can miss the one word that
decides ("How do I set ``O_NONBLOCK``?" against fifty paragraphs about file descriptors).  BM25
(Robertson's, with Lucene's positive idf, ``k1 = 1.2``, ``b = 0.75``) scores each candidate
by the question's content words it holds, rarer words weighing more.  The words are
:data:`scwo_np.text.WORD` words, lower case, not :data:`~scwo_np.text.STOPWORDS`, stemmed
(:func:`scwo_np.text.stem`), so "parsing" finds "parses"; numbers and symbols are not words
here ("``-22 // 10``" holds none, "``sha256``" is "sha").  Document frequencies are counted
over the candidates themselves: the retrieved set is the collection, as in a reranker.

:func:`lexical_relevance` gives each candidate its BM25 over the best candidate's (chunk
selection adds it to the cosine); :func:`question_share` gives each its BM25 over the most any
candidate could score, the share of the question's weight it holds (sentence selection adds its
text's share to each unit's relevance: a question whose words no candidate holds moves nothing).

:func:`hashed_tfidf` turns texts into vectors with no fitting and no model: each content stem
goes, with a sign, to one of ``dim`` buckets (by CRC-32: the same on every machine and in
every process), weighted by sublinear tf times smooth idf over the texts at hand.  Cosines
between these vectors are TF-IDF cosines up to bucket collisions.  ``scwo mcp proxy`` ranks the
sentences of a long prose result with them: fitting :class:`~scwo_np.embed.LSAEmbedder` on
240 sentences took 17 ms of the 20 ms a 100 KB result may cost; these take about 1 ms.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from functools import lru_cache
from itertools import chain, repeat

import numpy as np
from numpy.typing import NDArray

from .text import STOPWORDS, find_words, stem

__all__ = [
    "bm25",
    "hashed_tfidf",
    "lexical_relevance",
    "query_stems",
    "question_share",
    "term_counts",
    "word_lists",
]

#: BM25's parameters (Robertson's, with Lucene's positive idf).
_K1, _B = 1.2, 0.75


def query_stems(query: str) -> list[str]:
    """The distinct stems of the question's content words, in order of first appearance."""
    return list(dict.fromkeys(stem(w) for w in find_words(query.lower()) if w not in STOPWORDS))


def word_lists(docs: Sequence[str]) -> list[list[str]]:
    """Each doc's :data:`~scwo_np.text.WORD` words, lower case, in order (every word, stop words too)."""
    return [find_words(d.lower()) for d in docs]


def term_counts(
    docs: Sequence[str], stems: Sequence[str], lists: list[list[str]] | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(tf, lengths)``: how often each doc holds each of ``stems`` (shape ``(len(docs),
    len(stems))``) and each doc's length in words (every :data:`~scwo_np.text.WORD` word).
    ``lists``: the docs' :func:`word_lists`, when the caller has them already."""
    if lists is None:
        lists = word_lists(docs)
    lengths = np.fromiter(map(len, lists), dtype=np.float64, count=len(lists))
    tf = np.zeros((len(docs), len(stems)))
    if not stems or not lists:
        return tf, lengths
    column = {s: k for k, s in enumerate(stems)}
    # Each distinct word is stemmed once (the stems are cached across calls too).
    hits = {
        w: k
        for w in set(chain.from_iterable(lists))
        if (got := _bucket(w)) is not None and (k := column.get(got[0])) is not None
    }
    if not hits:
        return tf, lengths
    r, c = _positions(lists, hits)
    np.add.at(tf, (r, c), 1.0)
    return tf, lengths


def _idf(tf: NDArray[np.float64]) -> NDArray[np.float64]:
    """Lucene's positive idf of each column of ``tf``, df over its rows (never 0)."""
    n = tf.shape[0]
    df = np.count_nonzero(tf, axis=0)
    return np.log1p((n - df + 0.5) / (df + 0.5))


def bm25(tf: NDArray[np.float64], lengths: NDArray[np.float64]) -> NDArray[np.float64]:
    """BM25 of each row of ``tf`` (term counts of the query's terms), df over the rows."""
    n = tf.shape[0]
    if n == 0 or tf.shape[1] == 0:
        return np.zeros(n)
    avg = float(lengths.mean()) or 1.0
    norm = _K1 * (1.0 - _B + _B * lengths / avg)
    return (tf * (_K1 + 1.0) / (tf + norm[:, None])) @ _idf(tf)


def question_share(
    docs: Sequence[str], query: str, lists: list[list[str]] | None = None
) -> NDArray[np.float64]:
    """Each doc's share of the question's BM25 weight, in [0, 1): its BM25 against the question's
    content words over ``(k1 + 1)`` times the sum of their idf, the most a doc could score (df over
    the docs; a word no doc holds counts in the sum too).  Unlike :func:`lexical_relevance`, not
    relative to the best doc: when the docs hold little of the question, all score little.  All
    zeros when the question has no content word.  ``lists``: the docs' :func:`word_lists`."""
    tf, lengths = term_counts(docs, query_stems(query), lists)
    if tf.shape[0] == 0 or tf.shape[1] == 0:
        return np.zeros(tf.shape[0])
    return bm25(tf, lengths) / ((_K1 + 1.0) * float(_idf(tf).sum()))


def lexical_relevance(
    docs: Sequence[str], query: str, lists: list[list[str]] | None = None
) -> NDArray[np.float64]:
    """Each doc's BM25 against the question's content words, over the best doc's: in [0, 1], all
    zeros when no doc holds a word of the question (or the question has none).  ``lists``: the
    docs' :func:`word_lists`, when the caller has them already."""
    s = bm25(*term_counts(docs, query_stems(query), lists))
    top = float(s.max()) if s.size else 0.0
    return s / top if top > 0.0 else s


def _positions(
    lists: Sequence[Sequence[str]], column: dict[str, int]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """``(rows, cols)``: each occurrence of a word of ``column`` (its list, its column), in order."""
    lengths = np.fromiter(map(len, lists), np.int64, len(lists))
    codes = np.fromiter(map(column.get, chain.from_iterable(lists), repeat(-1)), np.int64, int(lengths.sum()))
    rows = np.repeat(np.arange(len(lists), dtype=np.int64), lengths)
    found = codes >= 0
    return rows[found], codes[found]


@lru_cache(maxsize=1 << 16)
def _bucket(word: str) -> tuple[str, int] | None:
    """A lower-case word's stem and its signed bucket code (CRC-32 of the stem); None for a stop word."""
    if word in STOPWORDS:
        return None
    s = stem(word)
    return s, zlib.crc32(s.encode("utf-8", "surrogatepass"))


def hashed_tfidf(lists: Sequence[Sequence[str]], dim: int = 256) -> NDArray[np.float32]:
    """Unit TF-IDF vectors of word lists, their content stems hashed into ``dim`` signed buckets.

    Weights: ``(1 + log tf) * (1 + log((1 + n) / (1 + df)))`` over the ``n`` lists; a stem goes
    to bucket ``crc32(stem) % dim`` with the sign of bit 31 of that code.  A list with no
    content word (or whose weights cancel) gets the extra last axis: cosine 0 with every
    text that has words, 1 with every other such list.

    Parameters
    ----------
    lists : sequence of sequences of str
        Lower-case words of each text (:func:`word_lists`).
    dim : int
        Buckets; the vectors have ``dim + 1`` components.

    Returns
    -------
    ndarray of float32, shape (len(lists), dim + 1)
        Unit rows.

    Examples
    --------
    >>> V = hashed_tfidf(word_lists(["The parser parses JSON.", "Parsing JSON files", "the of a"]))
    >>> V.shape, [round(float(x), 2) for x in V @ V[0]]
    ((3, 257), [1.0, 0.54, 0.0])
    """
    n = len(lists)
    # Sorted, so that the sums below run in one order in every process (sets follow string hashes).
    vocab = {w: got for w in sorted(set(chain.from_iterable(lists))) if (got := _bucket(w)) is not None}
    stems = {s: k for k, s in enumerate(dict.fromkeys(got[0] for got in vocab.values()))}
    column = {w: stems[got[0]] for w, got in vocab.items()}  # word -> its stem's column
    codes = np.zeros(len(stems), np.int64)
    for stem_, code in vocab.values():
        codes[stems[stem_]] = code
    r, c = _positions(lists, column)
    V = np.zeros((n, dim + 1))
    if c.size:
        pair, tf = np.unique(r * len(stems) + c, return_counts=True)
        r, c = pair // len(stems), pair % len(stems)
        df = np.bincount(c, minlength=len(stems))
        w = (1.0 + np.log(tf)) * (1.0 + np.log((1.0 + n) / (1.0 + df[c])))
        sign = np.where(codes[c] & (1 << 31), -1.0, 1.0)
        np.add.at(V, (r, codes[c] % dim), sign * w)
    norms = np.linalg.norm(V, axis=1)
    empty = norms < 1e-12
    V[empty, dim] = 1.0
    norms[empty] = 1.0
    return (V / norms[:, None]).astype(np.float32)
