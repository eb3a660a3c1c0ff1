"""The engine's index of its turns for :meth:`HSCAEngine.context <scwo_np.hsca.HSCAEngine.context>`:
sentence units, their stems and token counts, inverted indexes (BM25) and hashed stem vectors,
brought up to date in one batch at each context call (:mod:`scwo_np.hsca._context` ranks and
selects over it)."""

from __future__ import annotations

import math
import zlib
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from ..text import STOPWORDS, WORD, sentence_units, stem
from ..tokens import TokenCounter
from ._blocks import fenced_lines, file_lines
from ._layer1 import CJK, NUMBER, number_terms, word_terms

__all__ = ["HASH_DIM", "ContextIndex"]

#: Dimension of the hashed stem vectors that measure redundancy without an embedder.
HASH_DIM = 256

#: BM25 parameters (Robertson's, with Lucene's positive idf).
_K1, _B = 1.2, 0.75


def _hashed(counts: Counter, fallback: str) -> NDArray[np.float32]:
    """A unit vector of ``HASH_DIM`` from stem counts (signed feature hashing, sublinear tf);
    a unit without stems gets a vector of its own text's hash, so no row is zero."""
    v = np.zeros(HASH_DIM, dtype=np.float32)
    items = counts.items() if counts else [(fallback, 1)]
    for term, tf in items:
        h = zlib.crc32(term.encode("utf-8", "surrogatepass"))
        v[h % HASH_DIM] += (1.0 if h & 0x80000000 else -1.0) * (1.0 + math.log(tf))
    n = float(np.linalg.norm(v))
    if n == 0.0:  # two terms cancelled in one bucket
        v[zlib.crc32(fallback.encode("utf-8", "surrogatepass")) % HASH_DIM] = 1.0
        n = 1.0
    return v / n


class _Postings:
    """An inverted index over growing documents: stem -> (doc ids, term frequencies)."""

    def __init__(self) -> None:
        self.docs: dict[str, list[int]] = {}
        self.tfs: dict[str, list[int]] = {}
        self.lengths: list[int] = []

    def add(self, doc: int, counts: Counter) -> None:
        while len(self.lengths) <= doc:
            self.lengths.append(0)
        for term, tf in counts.items():
            d = self.docs.setdefault(term, [])
            t = self.tfs.setdefault(term, [])
            if d and d[-1] == doc:
                t[-1] += tf
            else:
                d.append(doc)
                t.append(tf)
        self.lengths[doc] += sum(counts.values())

    def bm25(self, terms: dict[str, float]) -> NDArray[np.float64]:
        """BM25 of every document against ``terms`` (term -> weight; df over these documents)."""
        n = len(self.lengths)
        out = np.zeros(n)
        if not n:
            return out
        lengths = np.asarray(self.lengths, dtype=np.float64)
        avg = lengths.mean() or 1.0
        norm = _K1 * (1.0 - _B + _B * lengths / avg)
        for term, weight in terms.items():
            docs = self.docs.get(term)
            if not docs:
                continue
            d = np.asarray(docs)
            tf = np.asarray(self.tfs[term], dtype=np.float64)
            idf = weight * math.log(1.0 + (n - len(d) + 0.5) / (len(d) + 0.5))
            out[d] += idf * tf * (_K1 + 1.0) / (tf + norm[d])
        return out


class ContextIndex:
    """The engine's index of its turns for :meth:`HSCAEngine.context` (private to the engine).

    At ingest (:meth:`add`) a turn is split into sentence units and their content stems are
    counted (the topic-shift test needs them at once); the rest — token counts, the inverted
    indexes, hashed vectors, an embedder's vectors — is brought up to date by :meth:`sync` at the
    next context call, in one batch, so ingest pays only for what it uses.
    """

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self.texts: list[str] = []
        self.unit_turn: list[int] = []  # 0-based turn of each unit
        self.unit_span: list[tuple[int, int]] = []
        self.unit_stems: list[Counter] = []
        self.unit_line: list[bool] = []  # a line of a pasted file (:func:`file_lines`)
        self.unit_cost: list[int] = []
        self.turn_units: list[range] = []  # each turn's units
        self.turn_stems: list[Counter] = []
        self.units = _Postings()
        self.turns = _Postings()
        self._synced = 0  # turns whose costs, postings and vectors are up to date
        self.unit_keys: list[
            str
        ] = []  # each unit's text, case and spacing aside: the same key, the same text
        self._whole = (0, 0)  # (turns, their tokens joined)
        self._vec = np.zeros((0, HASH_DIM), dtype=np.float32)
        self._emb: NDArray[np.float32] | None = None  # the embedder's unit vectors, unit length
        self._emb_name: str | None = None

    def __len__(self) -> int:
        return len(self.turn_units)

    def add(self, text: str, units: list[tuple[int, int]] | None = None) -> Counter:
        """Split one turn into units (unless given: its ``sentence_units``) and count their stems;
        returns the turn's stem counts."""
        t = len(self.turn_units)
        units, fenced = fenced_lines(
            text, (sentence_units(text) if units is None else units) or [(0, len(text))]
        )
        first = len(self.unit_turn)
        per_unit = [Counter() for _ in units]
        k = 0
        for m in WORD.finditer(text):  # one pass over the turn (stem_counts of each unit, in effect)
            w = m.group().lower()
            if w.isascii() or not CJK.search(w):
                if len(w) < 3 or w in STOPWORDS:
                    continue
                terms = (stem(w),)
            else:
                terms = word_terms(w)
            while m.start() >= units[k][1] and k + 1 < len(units):
                k += 1
            for term in terms:
                per_unit[k][term] += 1
        self.unit_line.extend(f or p for f, p in zip(fenced, file_lines(text, units), strict=True))
        ends = [b for _, b in units]
        for m in NUMBER.finditer(text):  # and its numbers (stem_counts' terms, in effect)
            per_unit[min(bisect_right(ends, m.start()), len(units) - 1)].update(number_terms(m.group()))
        whole = Counter()
        for (a, b), counts in zip(units, per_unit, strict=True):
            self.unit_turn.append(t)
            self.unit_span.append((a, b))
            self.unit_stems.append(counts)
            whole.update(counts)
        self.texts.append(text)
        self.turn_units.append(range(first, first + len(units)))
        self.turn_stems.append(whole)
        return whole

    def unit_text(self, u: int) -> str:
        a, b = self.unit_span[u]
        return self.texts[self.unit_turn[u]][a:b]

    def sync(self) -> None:
        """Token counts, inverted indexes and hashed vectors of the turns added since the last call."""
        if self._synced == len(self.turn_units):
            return
        first = self.turn_units[self._synced].start
        n = len(self.unit_turn)
        texts = [self.unit_text(u) for u in range(first, n)]
        self.unit_cost.extend(int(c) for c in self.counter.count(texts))
        vec = np.empty((n - first, HASH_DIM), dtype=np.float32)
        for k, u in enumerate(range(first, n)):
            self.units.add(u, self.unit_stems[u])
            vec[k] = _hashed(self.unit_stems[u], texts[k])
        self._vec = np.concatenate([self._vec, vec])
        for t in range(self._synced, len(self.turn_units)):
            self.turns.add(t, self.turn_stems[t])
        self.unit_keys.extend(" ".join(t.lower().split()) for t in texts)
        self._synced = len(self.turn_units)

    def whole_tokens(self) -> int:
        """What the conversation itself costs, its turns joined by blank lines (counted once per turn
        count): the most a context is."""
        if self._whole[0] != len(self.texts):
            self._whole = (len(self.texts), int(self.counter.count(["\n\n".join(self.texts)])[0]))
        return self._whole[1]

    def vectors(self) -> NDArray[np.float32]:
        self.sync()
        return self._vec

    def embeddings(self, embedder: Callable) -> NDArray[np.float32]:
        """The embedder's vector of every unit, unit length, computing only the units not seen yet."""
        from ..embed import embed_texts, embedder_name

        name = embedder_name(embedder)
        n = len(self.unit_turn)
        have = 0 if self._emb is None or self._emb_name != name else len(self._emb)
        if have < n:
            new = embed_texts(embedder, [self.unit_text(u) for u in range(have, n)]).astype(np.float32)
            new /= np.maximum(np.linalg.norm(new, axis=1, keepdims=True), np.float32(1e-12))
            self._emb = new if have == 0 else np.concatenate([self._emb, new])
            self._emb_name = name
        return self._emb[:n]
