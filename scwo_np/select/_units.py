"""Sentence-level selection: the units of the retrieved texts, their scores, and the layout.

``select_texts(..., granularity="sentence")`` (in :mod:`._texts`) runs these steps:

1. **Units.** Each text is cut into units by :func:`scwo_np.text.sentence_units`: sentences,
   with a sentence that needs the one before it ("It ...", "However, ...", a list item, the
   code a colon announced) glued to it, so a unit can be kept or dropped whole.
2. **Scores.** Every distinct sentence is embedded once.  A unit's relevance is
   ``w * max(cos(sentence, q)) + (1 - w) * cos(text, q)`` over its sentences, with
   ``w = sentence_weight`` (0.5 by default): a sentence means what it says in its text's
   context, and the text's similarity carries that context; a unit glued for coherence counts
   as its best sentence, not as the blur of its sentences.  With the question as text, plus
   ``lexical`` (0.2 by default) times its text's share of the question's BM25 weight
   (:func:`scwo_np._lexical.question_share`: the question's own words in the answer); with an
   embedder that gives its word pieces' vectors (:func:`scwo_np.embed.embed_pieces`: MiniLM), plus
   :data:`PIECES` times how well the question's pieces are matched in the unit's text
   (:func:`piece_match`, late interaction); plus :data:`NEIGHBOUR` times how much closer to the
   question its better neighbour's best sentence is (:func:`neighbour_lift`); minus
   :data:`LENGTH_COST` times its tokens over the mean unit's; minus :data:`SHORT_COST` when it
   has fewer than :data:`SHORT_WORDS` words (:func:`short_units`).  A unit's vector is the sum of its sentences' unit vectors, scaled to unit
   length, with :data:`SAME_TEXT` on an axis of its own text; redundancy is the cosine between
   these, so two units of one text are partly redundant even when their sentences differ.
3. **Selection.** Budgeted MMR over the units (:func:`~scwo_np.select._mmr.mmr_with_relevance`,
   the kernels of :func:`~scwo_np.mmr_select`) under the one budget, each unit costing its
   tokens plus those of the separator that may precede it; a unit said twice (a sentence two
   texts share) is a candidate once, where it is most relevant, and a unit with no word ("2.",
   "---") is none (:func:`candidate_units`).
4. **Layout.** Each text's kept units come out in their original order, as one text; two
   units that were adjacent in the text keep the text between them, others are joined by a
   space or, with ``elision="…"``, by `` … ``.  Texts follow ``order``.  The joined texts are
   counted again; should any counter make them longer than the budget (a counter whose
   counts do not add up), MMR runs again with less room, or the last-picked unit is dropped
   until they fit, whichever holds more; should it count them at less than MMR paid (the
   estimate rounds each unit up), MMR runs again with the difference added (``_texts._fit``).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby

import numpy as np
from numpy.typing import NDArray

from .._registry import Registry
from .._sentences import units_and_sentences
from ..text import find_words

__all__ = [
    "GRANULARITIES",
    "LENGTH_COST",
    "LEXICAL",
    "NEIGHBOUR",
    "PIECES",
    "SAME_TEXT",
    "SHORT_COST",
    "SHORT_WORDS",
    "Units",
    "assemble",
    "candidate_units",
    "first_copies",
    "neighbour_lift",
    "piece_match",
    "short_units",
    "spread_over_texts",
]

#: Registry of what ``select_texts`` selects (``granularity=``): name -> what a unit is.
GRANULARITIES: Registry = Registry(
    "granularity",
    {
        "chunk": "whole retrieved texts",
        "sentence": "sentences of the retrieved texts (a sentence that needs its predecessor keeps it)",
    },
)


#: The default weight of the question's words beside the embedding (``select_texts(lexical=)``),
#: per granularity, chosen by leave-one-source-out (``python -m scwo_evals.relevance``; the text
#: guide has the figures).  Over whole texts, BM25 over the best text's
#: (:func:`scwo_np._lexical.lexical_relevance`): 0.05 was chosen in every fold of five sources (0,
#: 0.05, 0.1 and 0.2 tried).  Over sentences, the unit's text's share of the question's BM25
#: weight (:func:`scwo_np._lexical.question_share`): 0.2, chosen on eight sources on 2026-11-29
#: (the unit's own BM25 over the best unit's, 2026-11-27, had lost questions on the small FAQs).
LEXICAL = {"chunk": 0.05, "sentence": 0.2}

#: What a unit pays for its length: its relevance loses ``LENGTH_COST`` times its tokens over the
#: mean unit's, so of two units about as relevant the shorter, which leaves room for another
#: text, goes first.  Chosen with :data:`SAME_TEXT` by leave-one-source-out
#: (``python -m scwo_evals.relevance``; the selection guide has the figures).
LENGTH_COST = 0.06

#: How much two units of one text count as redundant beyond their cosine: each unit's vector (unit
#: length) gains a component ``SAME_TEXT`` along an axis of its own text, so two units of one text
#: have cosine ``(cos + SAME_TEXT**2) / (1 + SAME_TEXT**2)`` and units of two texts ``cos / (1 +
#: SAME_TEXT**2)``.  MMR then spreads the budget over more of the retrieved texts: the answer is
#: in one of them, and the retriever's order is a guess.
SAME_TEXT = 1.0


#: How much a unit next to a closer match is lifted toward it: ``NEIGHBOUR`` times how much more
#: similar to the question the better of its two neighbours (in its own text) is.  An answer's
#: sentences sit together, and the one beside the sentence that echoes the question is often the
#: answer ("Use X." after "How do I Y?").
NEIGHBOUR = 0.3


#: The weight of the question's word pieces matched in the unit's text (:func:`piece_match`), for
#: an embedder that gives its pieces' vectors (:func:`scwo_np.embed.embed_pieces`: MiniLM does)
#: and a question given as text.  Chosen by leave-one-source-out (``python -m
#: scwo_evals.relevance``; the text guide has the figures).
PIECES = 0.5


#: A unit of fewer than ``SHORT_WORDS`` words (split on white space) loses ``SHORT_COST`` of its
#: relevance: a heading, a "See also" line or "The default N is 1." means little out of its text,
#: and a context made of such fragments reads as scattered sentences.  Chosen by
#: leave-one-source-out (``python -m scwo_evals.relevance``; the text guide has the figures).
SHORT_WORDS = 7
SHORT_COST = 0.03


def _said(text: str) -> str:
    """What a text says, for telling copies apart: its words and spacing, the spacing made one space."""
    return " ".join(text.split())


def first_copies(texts: Sequence[str]) -> NDArray[np.int64]:
    """The index of each text's first copy (texts the same but for white space are copies), in order.

    Examples
    --------
    >>> first_copies(["a b", "c", "a  b", " c"]).tolist()
    [0, 1]
    """
    seen: dict[str, int] = {}
    for i, t in enumerate(texts):
        seen.setdefault(_said(t), i)
    return np.asarray(sorted(seen.values()), dtype=np.int64)


def candidate_units(texts: Sequence[str], rel: NDArray[np.float64]) -> NDArray[np.int64]:
    """The units MMR chooses from, in order: not one with no :data:`~scwo_np.text.WORD` word (a
    list number, a rule), and of units whose texts are the same but for white space only the most
    relevant (the first of equals): a sentence two retrieved texts share is said once."""
    best: dict[str, int] = {}
    for u, t in enumerate(texts):
        if not find_words(t):
            continue
        key = _said(t)
        if key not in best or rel[u] > rel[best[key]]:
            best[key] = u
    return np.asarray(sorted(best.values()), dtype=np.int64)


def short_units(texts: Sequence[str]) -> NDArray[np.bool_]:
    """Whether each unit has fewer than :data:`SHORT_WORDS` words (split on white space)."""
    return np.fromiter((len(t.split()) < SHORT_WORDS for t in texts), dtype=bool, count=len(texts))


def neighbour_lift(best: NDArray[np.float64], text_of: NDArray[np.int64]) -> NDArray[np.float64]:
    """``max(0, max(best[u - 1], best[u + 1]) - best[u])``, neighbours taken within the unit's text."""
    n = best.shape[0]
    near = np.full(n, -np.inf)
    if n > 1:
        same = text_of[1:] == text_of[:-1]  # units u and u + 1 are of one text
        near[1:] = np.where(same, best[:-1], -np.inf)
        near[:-1] = np.maximum(near[:-1], np.where(same, best[1:], -np.inf))
    return np.maximum(near - best, 0.0)


def _end_to_end(pieces: Sequence[NDArray[np.floating]], total: int) -> NDArray[np.float32] | None:
    """The pieces as one ``(total, d)`` float32 array without a copy, when they lie end to end in one
    array already (as a cache reads them: the rows of one block, in order); else None."""
    rows = [p for p in pieces if len(p)]
    base = rows[0].base if isinstance(rows[0], np.ndarray) else None
    if (
        not isinstance(base, np.ndarray)
        or base.dtype != np.float32
        or base.ndim != 2
        or not base.flags.c_contiguous
    ):
        return None
    at = rows[0].__array_interface__["data"][0]
    for p in rows:
        if not (
            isinstance(p, np.ndarray)
            and p.base is base
            and p.flags.c_contiguous
            and p.shape[1:] == base.shape[1:]
        ):
            return None
        if p.__array_interface__["data"][0] != at:
            return None
        at += p.nbytes
    first = (rows[0].__array_interface__["data"][0] - base.__array_interface__["data"][0]) // base.strides[0]
    return base[first : first + total]


def piece_match(
    query: NDArray[np.floating], pieces: Sequence[NDArray[np.floating]], text_of: NDArray[np.int64], n: int
) -> NDArray[np.float64]:
    """How well each of ``n`` texts matches the question piece by piece: late interaction (MaxSim).

    ``query`` holds the question's word-piece vectors (unit rows), ``pieces[s]`` those of
    sentence ``s``, a sentence of text ``text_of[s]`` (sentences grouped by text, in order).  A
    text's match is the mean, over the question's pieces, of each one's best cosine with a piece
    of the text's sentences (ColBERT's MaxSim over the pieces the embedder read of each
    sentence); a text with no piece, or a question with none, matches 0.  In float32 (one
    matrix product), then float64.
    """
    out = np.zeros(n)
    sizes = np.array([len(p) for p in pieces], dtype=np.int64)
    if not len(query) or not sizes.sum():
        return out
    D = _end_to_end(pieces, int(sizes.sum()))
    if D is None:
        D = np.concatenate(pieces, dtype=np.float32, casting="same_kind")  # one copy, float32
    owner = np.repeat(np.asarray(text_of, dtype=np.int64), sizes)
    sims = D @ np.asarray(query, dtype=np.float32).T  # (text pieces, question pieces)
    starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
    out[owner[starts]] = np.maximum.reduceat(sims, starts, axis=0).astype(np.float64).mean(axis=1)
    return out


def spread_over_texts(vectors: NDArray[np.float64], text_of: NDArray[np.int64]) -> NDArray[np.float64]:
    """The units' vectors, each scaled to unit length, with ``SAME_TEXT`` on an axis of its text
    appended (one axis per text that has units)."""
    n = vectors.shape[0]
    if not n:
        return vectors
    norms = np.linalg.norm(vectors, axis=1)
    out_texts, axis = np.unique(text_of, return_inverse=True)
    out = np.zeros((n, vectors.shape[1] + len(out_texts)))
    out[:, : vectors.shape[1]] = vectors / np.where(norms > 0, norms, 1.0)[:, None]
    out[np.arange(n), vectors.shape[1] + axis] = SAME_TEXT
    return out


class Units:
    """The units of many texts: ``text_of[u]``, ``spans[u]`` (in that text), ``texts[u]``, and the
    sentences they are made of: unit ``u`` is ``sentences[start[u]:start[u + 1]]`` (their texts)."""

    def __init__(self, texts: Sequence[str]):
        text_of: list[int] = []
        self.spans: list[tuple[int, int]] = []
        self.sentences: list[str] = []
        start: list[int] = []
        for i, t in enumerate(texts):
            units, sents, first = units_and_sentences(t)
            base = len(self.sentences)
            text_of += [i] * len(units)
            self.spans += units
            start += [base + k for k in first]
            self.sentences += [t[a:b] for a, b in sents]
        self.start = np.asarray(start, dtype=np.int64)
        self.text_of = np.asarray(text_of, dtype=np.int64)
        self.texts = [texts[i][a:b] for i, (a, b) in zip(text_of, self.spans, strict=True)]

    def __len__(self) -> int:
        return len(self.spans)


def assemble(
    texts: Sequence[str], units: Units, kept: NDArray[np.int64], separator: str
) -> dict[int, tuple[str, list[tuple[int, int]]]]:
    """Text -> (its kept units joined, their spans), for the texts that keep any unit.

    Units adjacent in their text keep the text between them; others are joined by
    ``separator``.
    """
    out: dict[int, tuple[str, list[tuple[int, int]]]] = {}
    # Units are numbered text by text, in order: sorted, the kept ones come grouped by text.
    for i, group in groupby(sorted(kept.tolist()), key=lambda u: int(units.text_of[u])):
        own = list(group)
        parts: list[str] = []
        for k, u in enumerate(own):
            a, b = units.spans[u]
            if k:
                prev = own[k - 1]
                parts.append(texts[i][units.spans[prev][1] : a] if u == prev + 1 else separator)
            parts.append(texts[i][a:b])
        out[i] = ("".join(parts), [units.spans[u] for u in own])
    return out
