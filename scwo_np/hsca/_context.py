"""The context the map surfaces: what the model should read about a conversation, within a budget.

Seed 001 gives HSCA its purpose: a compressed relational map kept alongside the
window, which "governs what context is surfaced and how retrieval is scored".
:meth:`HSCAEngine.context <scwo_np.hsca.HSCAEngine.context>` is that: given a query
(or none) and a token budget, it returns the sentences of earlier turns the map
ranks highest, plus the newest turns, each cited by its turn and snapshot, and the
joined text is never over the budget by the engine's token counter.

How it works
------------
**Indexing.**  At ingest each turn is split into sentence units
(:func:`scwo_np.text.sentence_units`: a unit is kept or dropped whole, so a list item or a
code block is never cut) and each unit's content-word stems are counted
(:func:`scwo_np.text.words`, :func:`scwo_np.text.stem`); the topic-shift test of ingest uses
the same counts.  The token counts (by the engine's counter), the inverted indexes and the
vectors catch up in one batch at the next context call.

**Ranking, per call.**  A unit's relevance to the query fuses, each scaled to [0, 1]
over the session:

* ``unit`` — BM25 of the unit's own stems (the query's words in the answer), each query word
  weighted by its rarity in general English (its rank in layer 1's background corpus), so a
  common word such as "several" does not outweigh the word the question is about;
* ``turn`` — BM25 of its whole turn (a sentence's neighbours carry its topic);
* ``snapshot`` — BM25 of its snapshot's stems: the relational link between beats;
  a snapshot about the query's concepts lifts its turns (the open beat counts as one
  snapshot);
* ``domain`` — the cosine between the query's layer-2 domain scores and the
  snapshot's domain summary;

(the last three lift a unit only when it shares a word with the query or holds
:data:`GATE_WORDS` content words; and the turn right after a matching turn, an answer after its
question, takes :data:`NEXT` of that turn's relevance)
* ``embedding`` — with an ``embedder``, the cosine between the unit and the query;

and is then weighted by the map's view of the turn: ``0.75 + 0.25 * layer1`` (a
turn whose words relate to each other as real prose does counts fully; word salad
is discounted) and the engine's ``nuance_weights`` per flag (set by
:class:`~scwo_np.hsca.Tuner`; 1 by default).  Without a query, a unit's relevance
is its centrality: the cosine between the unit and its snapshot's centroid, so
each snapshot's most central sentences surface.

**Selection.**  A share ``recent`` (default 0.1) of the budget goes first to the newest turns,
whole, newest first (a newest turn longer than that share gives its last units).
The rest goes to budgeted MMR over the other units that hold a content word and (with a
query) have some relevance (:func:`scwo_np.select.mmr_with_relevance`: exact, never over its
budget), whose redundancy term is the cosine between units (the embedder's vectors, or else
hashed stem vectors); the room the text then leaves goes to the newest turns again (each new
block's citation counted), so a query that matches nothing still gets the end of the conversation.
The picks are rendered in conversation order, one block per turn,
``[turn 12, snapshot 3] sentence. sentence.``; sentences that were not adjacent in
the turn are joined by `` … `` (:mod:`~scwo_np.hsca._blocks`).  The citations and separators cost tokens too: the
joined text is counted, and while it is over the budget the selection runs again
with the inner budget lowered by the overflow, so the result never exceeds it (if nothing then
fits, the newest turn's last units that do).  Nor does
it exceed the conversation itself and one citation: the budget is at most the tokens of the
turns joined by blank lines and of :data:`ONE_CITATION`.

**A budget that holds the whole conversation** gives the whole conversation, each sentence once, in
runs: consecutive turns share one citation, ``[turns 1-6] first turn`` and the next ones after a blank
line each, as in the conversation (the pieces keep each turn's own citation and spans), so with the
room of one citation it is all there (a citation per turn had displaced whole turns: a six-turn
question-and-answer talk from the Debian FAQ, 265 tokens, came back without one of its turns at a
budget of 2,000, two of them by cl100k).  A budget below that loses what the citations displace
(:func:`whole_talk`): whole turns, those with no content word
first, then the ones least related to the query (in steps of :data:`RELATED_STEP` of the highest
relevance), the shortest first; the newest turn goes only after every other turn as related to the
query as it is (without a query, last), and the newest turns that fit whole in the ``recent`` share
stay.  (Budgeted MMR at a budget that held a four-turn talk dropped its answer, the newest turn: the
citations went over, and the selection ran again at a budget too small for it.)

**A sentence said in several turns** (a question asked again, a signature; the same text but for
case and spacing) is in the context once: a candidate where the map ranks it highest (the newest of
equals), and not at all when a newest turn holds it; the newest turns that fill what the ranked
sentences leave skip what is said already (they had repeated a sentence said in every turn 22 times).
"""

from __future__ import annotations

import math
import zlib
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..text import STOPWORDS, WORD, sentence_units, stem, words
from ..tokens import TokenCounter
from ._blocks import citation, join_blocks, kept_text

__all__ = ["ContextPiece", "HSCAContext", "REASONS"]

#: Why a piece is in the context: it is among the newest turns, the map ranked it
#: for the query, or (without a query) it is central to its snapshot.
REASONS = ("recent", "query", "central")

#: The longest citation a context is allowed beyond the conversation's own tokens.
ONE_CITATION = "[turn 9999, snapshot 9999] "

#: Dimension of the hashed stem vectors that measure redundancy without an embedder.
HASH_DIM = 256

#: BM25 parameters (Robertson's, with Lucene's positive idf).
_K1, _B = 1.2, 0.75

#: The weights of the relevance signals (see the module documentation), without and with an
#: embedder.  Chosen on three tune sources (the Python, Django and Debian FAQs as sessions) and
#: checked on four held out (the Git user manual, gitfaq, the SQLite and SQLAlchemy FAQs;
#: ``python -m scwo_evals.hsca_context``): without an embedder, moving weight between the lexical
#: signals changed the hit rate at 400 tokens by at most 2 points either way, so the map's signals
#: keep a share; with MiniLM, the embedding's share was raised 0.45 -> 0.9 on the tune sources
#: (0.816 -> 0.926) and the held-out sources followed (0.881 -> 0.917).
WEIGHTS = {"unit": 0.45, "turn": 0.25, "snapshot": 0.2, "domain": 0.1}
WEIGHTS_EMBEDDING = {"unit": 0.04, "turn": 0.04, "snapshot": 0.02, "domain": 0.0, "embedding": 0.9}

#: How much layer 1 weighs in: relevance x (1 - LAYER1_SHARE + LAYER1_SHARE * layer1).  With
#: MiniLM, 0.25 against 0 (layer 1 ignored): 0.816 vs 0.812 on the tune sources, 0.881 vs 0.846 held
#: out; 0.5 was worse on both.
LAYER1_SHARE = 0.25

#: The share of the budget for the newest turns (0.25 -> 0.1 raised the tune sources' hit rate at
#: 400 tokens 0.730 -> 0.746 without an embedder, 0.893 -> 0.908 with MiniLM).
RECENT = 0.1

#: How much a query word's rarity in general English weighs its terms (see :func:`query_terms`):
#: 1 against 0 (every word alike) moved the hit rate at 400 tokens from 0.749 to 0.763 on the
#: tune sources and from 0.822 to 0.836 held out, without an embedder ("several" in "squash
#: several commits" no longer outweighs "squash"); 0.5 gave 0.754 / 0.839, 2 gave 0.745 / 0.829.
BACKGROUND_SHARE = 1.0
#: A unit's surroundings (turn, snapshot, domain) lift it only when it shares a word with the
#: query or holds at least this many content words: added to every unit of a matching turn, they
#: made a "Yes." or a lone ``$ find .`` cheap picks.
GATE_WORDS = 4

#: The turn right after a matching one is lifted to this share of its predecessor's turn
#: relevance: in a conversation the answer follows its question and rarely repeats its words.  On
#: the Python FAQ as 80 question/answer exchanges, asking each question again ("Remind me: ..."),
#: 0.8 against 0 raised the hit rate from 0.671 to 0.816 at 200 tokens and from 0.855 to 0.934 at
#: 400 (only within a beat: 0.776 / 0.895, the topic-shift test splits some exchanges); on the FAQ
#: sessions of answers only it moved the tune sources' hit rate at 400 by -0.8 points and the
#: held-out sources' by -0.2 (0.834).
NEXT = 0.8

#: How finely the turns a whole conversation's citations displace are told apart by relevance
#: (:func:`whole_talk`, where the choice is measured).
RELATED_STEP = 0.2

#: MMR's trade-off over the units (relevance vs redundancy with what is already picked).
LAM = 0.7


@dataclass(frozen=True)
class ContextPiece:
    """What the context keeps of one turn, with where it came from (for citation).

    Parameters
    ----------
    turn : int
        The turn's number in the session, from 1.
    chunk_id : str
        The turn's chunk id (:class:`~scwo_np.hsca.WeightedChunk`).
    snapshot_id : str or None
        The id of the snapshot that holds the turn; None while the turn is in the open beat.
    snapshot : int or None
        That snapshot's number in the session, from 1 (its ``conversation_position + 1``).
    spans : list of (int, int)
        The character spans of the turn's text that are kept, in order.
    text : str
        The kept text, without the citation (units not adjacent in the turn joined by ``" … "``).
    score : float
        The highest relevance among its kept units (0 for a recent turn picked for its recency).
    reason : str
        ``"recent"``, ``"query"`` or ``"central"`` (:data:`REASONS`).

    Examples
    --------
    >>> from scwo_np.hsca import HSCAEngine
    >>> eng = HSCAEngine()
    >>> _ = eng.ingest_turn("The court ruled that the contract was void.")
    >>> piece = eng.context("contract", budget=50).pieces[0]
    >>> piece.turn, piece.text, piece.reason
    (1, 'The court ruled that the contract was void.', 'query')
    """

    turn: int
    chunk_id: str
    snapshot_id: str | None
    snapshot: int | None
    spans: list[tuple[int, int]]
    text: str
    score: float
    reason: str

    @property
    def citation(self) -> str:
        """The piece's citation as the context writes it: ``"turn 12, snapshot 3"`` or ``"turn 40"``."""
        return citation(self.turn, self.snapshot)

    def to_dict(self) -> dict:
        """The piece as a JSON-ready dict.

        Returns
        -------
        dict
            The fields by name.

        Examples
        --------
        >>> ContextPiece(3, "c3", None, None, [(0, 4)], "Yes.", 0.0, "recent").to_dict()["spans"]
        [[0, 4]]
        """
        return {
            "turn": self.turn,
            "chunk_id": self.chunk_id,
            "snapshot_id": self.snapshot_id,
            "snapshot": self.snapshot,
            "spans": [list(s) for s in self.spans],
            "text": self.text,
            "score": round(self.score, 6),
            "reason": self.reason,
        }


@dataclass(frozen=True)
class HSCAContext:
    """The context :meth:`HSCAEngine.context <scwo_np.hsca.HSCAEngine.context>` surfaces.

    Parameters
    ----------
    text : str
        What the model reads: one block per piece, ``[turn 12, snapshot 3] ...``, in
        conversation order, separated by blank lines; within ``budget`` tokens.  When the budget
        holds the whole conversation, consecutive pieces make one block, ``[turns 1-6] ...``, their
        texts separated by blank lines too.
    pieces : list of ContextPiece
        The pieces, in conversation order.
    tokens : int
        Tokens of ``text`` by the engine's counter.
    budget : int
        The budget asked for.
    token_counter : str
        The name of the counter.
    turns : int
        How many turns the session holds.
    query : str or None
        The query the context is for.

    Examples
    --------
    >>> from scwo_np.hsca import HSCAEngine
    >>> eng = HSCAEngine()
    >>> for turn in ["The court ruled that the contract was void.",
    ...              "The telescope recorded the spectrum of a distant galaxy."]:
    ...     _ = eng.ingest_turn(turn)
    >>> ctx = eng.context("What did the court decide?", budget=20)
    >>> print(ctx)
    [turn 1, snapshot 1] The court ruled that the contract was void.
    >>> ctx.tokens <= ctx.budget, ctx.turns
    (True, 2)

    A budget that holds the whole conversation and one citation gives all of it, consecutive turns
    under one citation (each piece still cites its own turn; turn 2 is in the open beat):

    >>> ctx = eng.context("What did the court decide?", budget=40)
    >>> print(ctx)
    [turns 1-2] The court ruled that the contract was void.
    <BLANKLINE>
    The telescope recorded the spectrum of a distant galaxy.
    >>> [p.citation for p in ctx.pieces]
    ['turn 1, snapshot 1', 'turn 2']
    """

    text: str
    pieces: list[ContextPiece] = field(default_factory=list)
    tokens: int = 0
    budget: int = 0
    token_counter: str = "estimate"
    turns: int = 0
    query: str | None = None

    def __str__(self) -> str:
        return self.text

    def to_dict(self) -> dict:
        """The context as a JSON-ready dict.

        Returns
        -------
        dict
            The fields by name, pieces as dicts.

        Examples
        --------
        >>> HSCAContext("", budget=100).to_dict()["budget"]
        100
        """
        return {
            "text": self.text,
            "pieces": [p.to_dict() for p in self.pieces],
            "tokens": self.tokens,
            "budget": self.budget,
            "token_counter": self.token_counter,
            "turns": self.turns,
            "query": self.query,
        }


def stem_counts(text: str) -> Counter:
    """Snowball stems of the content words (3+ letters, not stop words) of ``text``, counted."""
    return Counter(stem(w) for w in words(text, min_chars=3, stopwords=False))


def query_terms(query: str) -> dict[str, float]:
    """The query's content stems, each weighted by how rare its word is in general English:
    ``(log(2 + rank) / log(2 + V)) ** BACKGROUND_SHARE``, ``rank`` the word's frequency rank in
    layer 1's background corpus (:mod:`~scwo_np.hsca._background`: its words are stored most
    frequent first), ``V`` its vocabulary size; a word it never saw weighs 1."""
    from ._background import background

    vocab = background().vocab
    top = math.log(2.0 + len(vocab))
    out: dict[str, float] = {}
    for w in words(query, min_chars=3, stopwords=False):
        rank = vocab.get(w.lower())
        weight = 1.0 if rank is None else (math.log(2.0 + rank) / top) ** BACKGROUND_SHARE
        key = stem(w)
        out[key] = max(out.get(key, 0.0), weight)
    return out


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
        units = (sentence_units(text) if units is None else units) or [(0, len(text))]
        first = len(self.unit_turn)
        per_unit = [Counter() for _ in units]
        k = 0
        for m in WORD.finditer(text):  # one pass over the turn (stem_counts of each unit, in effect)
            w = m.group().lower()
            if len(w) < 3 or w in STOPWORDS:
                continue
            while m.start() >= units[k][1] and k + 1 < len(units):
                k += 1
            per_unit[k][stem(w)] += 1
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


def scaled(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """``x`` divided by its maximum (all zeros stay zeros)."""
    top = float(x.max()) if len(x) else 0.0
    return x / top if top > 0 else x


def as_pieces(
    picks: dict[int, dict[int, float]],
    reasons: dict[int, str],
    turn_text: Callable[[int], str],
    turn_meta: Callable[[int], tuple[str, str | None, int | None]],
    index: ContextIndex,
) -> list[ContextPiece]:
    """The kept units, turn by turn in conversation order, as pieces."""
    out = []
    for t in sorted(picks):
        units = sorted(picks[t])
        spans = [index.unit_span[u] for u in units]
        text = turn_text(t)
        chunk_id, snapshot_id, snapshot = turn_meta(t)
        score = max(picks[t].values()) if picks[t] else 0.0
        out.append(
            ContextPiece(
                t + 1, chunk_id, snapshot_id, snapshot, spans, kept_text(text, spans), score, reasons[t]
            )
        )
    return out


def once_each(index: ContextIndex, units: range) -> list[int]:
    """``units`` without those whose text (:attr:`ContextIndex.unit_keys`) an earlier one says."""
    first: dict[str, int] = {}
    for u in units:
        first.setdefault(index.unit_keys[u], u)
    return list(first.values())


def recent_units(
    index: ContextIndex, reserve: int, taken: Collection = (), said: set | None = None, cite: int = 0
) -> list[int]:
    """The newest turns' units not ``taken`` and not ``said`` (their keys, :attr:`ContextIndex.unit_keys`),
    within ``reserve`` tokens: whole turns, newest first, each unit +1 token for its join and a turn
    none of whose units is ``taken`` ``cite`` more (its citation); when the first turn with something
    new does not fit whole, its last units that do.  A sentence is taken once: ``said`` gains the
    keys taken."""
    said = set() if said is None else said
    present = {index.unit_turn[u] for u in taken}
    keys = index.unit_keys
    out: list[int] = []
    left = reserve
    for t in range(len(index) - 1, -1, -1):
        units = [u for u in once_each(index, index.turn_units[t]) if u not in taken and keys[u] not in said]
        if not units:  # nothing new to say
            continue
        extra = 0 if t in present else cite
        cost = sum(index.unit_cost[u] + 1 for u in units) + extra
        if cost <= left:
            out.extend(units)
            said.update(keys[u] for u in units)
            left -= cost
            continue
        if not out:  # the newest turn, too long: its last units
            left -= extra
            for u in reversed(units):
                if index.unit_cost[u] + 1 > left:
                    break
                out.append(u)
                said.add(keys[u])
                left -= index.unit_cost[u] + 1
        break
    return out


def check_embedder(embedder: object) -> Callable | None:
    """``embedder=`` of the engine: None (the map's lexical signals only), ``"minilm"``, or a
    callable ``texts -> (n, d) array``.  ``"lsa"`` is refused: it is fitted to a fixed corpus,
    and a conversation grows."""
    if embedder is None:
        return None
    if isinstance(embedder, str) and embedder == "lsa":
        raise ValueError(
            "embedder='lsa' is fitted to a fixed corpus and a conversation grows; pass embedder=None (the "
            "map's own lexical signals), 'minilm', or an embedder already fitted (an LSAEmbedder instance)."
        )
    from ..embed import as_embedder

    return as_embedder(embedder)


def _turn_snapshots(engine: Any) -> tuple[NDArray[np.int64], list]:
    """Each turn's group (its snapshot's position; the open beat is one more group) and, per
    group, its snapshot (None for the open beat)."""
    snaps = engine._snapshots
    sizes = [len(s.chunks) for s in snaps]
    groups: list = list(snaps)
    if engine._buffer:
        sizes.append(len(engine._buffer))
        groups.append(None)
    return np.repeat(np.arange(len(sizes), dtype=np.int64), sizes), groups


def _grouped_bm25(index: ContextIndex, terms: dict[str, float], group: NDArray[np.int64], n: int) -> NDArray:
    """BM25 of each group of turns (a snapshot's stems are its turns' stems) against ``terms``."""
    out = np.zeros(n)
    lengths = np.bincount(group, weights=np.asarray(index.turns.lengths, dtype=np.float64), minlength=n)
    avg = lengths.mean() or 1.0
    norm = _K1 * (1.0 - _B + _B * lengths / avg)
    for term, weight in terms.items():
        docs = index.turns.docs.get(term)
        if not docs:
            continue
        tf = np.bincount(
            group[np.asarray(docs)], weights=np.asarray(index.turns.tfs[term], float), minlength=n
        )
        df = int(np.count_nonzero(tf))
        idf = weight * math.log(1.0 + (n - df + 0.5) / (df + 0.5))
        out += idf * tf * (_K1 + 1.0) / (tf + norm)
    return out


def _relevance(engine: Any, query: str | None, V: NDArray, qv: NDArray | None) -> NDArray[np.float64]:
    """Each unit's relevance to ``query`` (its centrality in its snapshot without one)."""
    from ._layer2 import domain_scores

    index: ContextIndex = engine._index
    chunks = engine.get_micro_context()
    unit_turn = np.asarray(index.unit_turn, dtype=np.int64)
    turn_group, groups = _turn_snapshots(engine)
    unit_group = turn_group[unit_turn]
    if query is None or not (terms := query_terms(query)) and qv is None:
        C = np.zeros((len(groups), V.shape[1]))
        np.add.at(C, unit_group, V.astype(np.float64))  # (cast first: float32 rows took 11 ms, not 2)
        C /= np.maximum(np.linalg.norm(C, axis=1, keepdims=True), 1e-12)
        rel = np.einsum("ij,ij->i", V, C[unit_group])
    else:
        w = WEIGHTS if qv is None else WEIGHTS_EMBEDDING
        own = scaled(index.units.bm25(terms))
        turn_rel = scaled(index.turns.bm25(terms))
        if NEXT and len(turn_rel) > 1:  # a turn after a matching one (an answer after its question)
            turn_rel[1:] = np.maximum(turn_rel[1:], NEXT * turn_rel[:-1])
        near = w["turn"] * turn_rel[unit_turn]
        near += w["snapshot"] * scaled(_grouped_bm25(index, terms, turn_group, len(groups)))[unit_group]
        qd = domain_scores(query, engine.domain_weights, engine.domain_words)
        if qd and w["domain"]:
            near += w["domain"] * _domain_match(engine, groups, qd)[unit_group]
        lengths = np.asarray(index.units.lengths)
        rel = w["unit"] * own + np.where((own > 0) | (lengths >= GATE_WORDS), near, 0.0)
        if qv is not None:
            rel += w["embedding"] * np.clip(V @ qv, 0.0, None)
    layer1 = np.array([c.layer1_score for c in chunks])
    factor = 1.0 - LAYER1_SHARE + LAYER1_SHARE * layer1
    if engine.nuance_weights:
        for t, c in enumerate(chunks):
            for f in c.nuance_flags:
                factor[t] *= engine.nuance_weights.get(f, 1.0)
    return np.maximum(rel, 0.0) * factor[unit_turn]


def _domain_match(engine: Any, groups: list, qd: dict[str, float]) -> NDArray:
    """The cosine between the query's domain scores and each group's domain summary (a snapshot's,
    or the open beat's turns' tags counted), one column per tag (a domain model may give any)."""
    summaries = [g.domain_summary if g is not None else _beat_summary(engine) for g in groups]
    cols: dict[str, int] = {}
    for d in (qd, *summaries):
        for tag in d:
            cols.setdefault(tag, len(cols))
    M = np.zeros((len(summaries), len(cols)))
    for k, d in enumerate(summaries):
        M[k, [cols[t] for t in d]] = list(d.values())
    q = np.zeros(len(cols))
    q[[cols[t] for t in qd]] = list(qd.values())
    den = np.linalg.norm(M, axis=1) * np.linalg.norm(q)
    return np.divide(M @ q, den, out=np.zeros(len(summaries)), where=den > 0)


def _beat_summary(engine: Any) -> dict[str, float]:
    """The open beat's domain summary: its turns' tags, counted."""
    tags = Counter(t for c in engine._buffer for t in c.domain_tags)
    total = sum(tags.values())
    return {t: v / total for t, v in tags.items()}


def whole_talk(
    index: ContextIndex, rel: NDArray, once: NDArray, cap: int, recent: float, query: str | None, measure
) -> tuple | None:
    """The context when the budget holds the whole conversation: every turn, each sentence once, in
    runs of consecutive turns under one citation (``measure`` renders them so), and when even those
    citations do not fit they make room for themselves by whole turns.  The newest turns that fit whole in
    ``recent`` of the cap stay; the newest turn says its sentences first; the other turns go first
    that have no content word, then (with a query) the least related to it (in steps of
    :data:`RELATED_STEP` of the highest relevance; the newest turn last in its step), then the
    shortest (the least text lost for a citation), the oldest first, and the older of the newest
    turns kept last; then what the drops freed beyond the overflow takes back the dropped turns
    that fit, the last dropped first.  None when even the newest turns kept do not fit (a counter
    whose counts do not add up): the budgeted selection decides.  Returns the kept units by turn,
    each turn's reason, the text and its tokens; ``measure`` gives the text of units by turn and its
    tokens.

    The steps of :data:`RELATED_STEP`: on 60 five-turn question/answer talks of the Python FAQ
    asked their next question, 0.2 kept 0.975 of the answers (by relevance alone 0.750: a question
    sharing one more word with the query outranked its answer; shortest first 0.983; the budgeted
    selection before 0.925); on the seven FAQ sessions of ``python -m scwo_evals.hsca_context`` at
    a budget of their whole, it held the answer for 0.963-1.0 of the questions (by relevance alone
    0.971-1.0, shortest first 0.771-1.0, the budgeted selection before 0.977-1.0)."""
    n, costs = len(index), np.asarray(index.unit_cost, dtype=np.int64) + 1
    per_turn = int(index.counter.count([ONE_CITATION])[0]) + 1  # a block's citation and separator
    keys, lengths = index.unit_keys, index.units.lengths
    last = once_each(index, index.turn_units[n - 1])  # the newest turn, each sentence once
    said: set[str] = set()
    units_of: dict[int, list[int]] = {}
    if int(costs[last].sum()) + per_turn <= int(recent * cap):  # (else no newest turn fits whole)
        for u in recent_units(index, int(recent * cap), said=said, cite=per_turn):
            units_of.setdefault(index.unit_turn[u], []).append(u)
    kept_recent = sorted(units_of)
    if not units_of:
        units_of[n - 1] = last
        said.update(keys[u] for u in last)
    fixed = set(units_of)
    for u in np.flatnonzero(once).tolist():  # the other turns: each sentence where the map ranks it highest
        t = index.unit_turn[u]
        if t not in fixed and keys[u] not in said:
            units_of.setdefault(t, []).append(u)
    reasons = {t: "central" if query is None else "query" for t in units_of}
    reasons.update((t, "recent") for t in kept_recent)
    if n - 1 not in kept_recent and (query is None or not rel[last].max() > 0):
        reasons[n - 1] = "recent"  # kept as the newest (with a query it relates to: "query")
    size = {t: int(costs[us].sum()) + per_turn for t, us in units_of.items()}
    top = float(rel.max()) if query is not None and len(rel) else 0.0

    def value(t: int) -> tuple:  # the order in which the turns go
        related = math.floor(max(float(rel[u]) for u in units_of[t]) / top / RELATED_STEP) if top > 0 else 0
        return (t == n - 1 or any(lengths[u] > 0 for u in units_of[t]), related, t == n - 1, size[t], t)

    order = sorted((t for t in units_of if t not in kept_recent), key=value) + kept_recent[:-1]
    keep, dropped = set(units_of), []
    while (fit := measure(picks := {t: units_of[t] for t in keep}))[1] > cap:
        if not order:
            return None
        freed = 0
        while freed < fit[1] - cap and order:
            dropped.append(t := order.pop(0))
            keep.discard(t)
            freed += size[t]
    room, back = cap - fit[1], set()
    for t in reversed(dropped):
        if size[t] <= room:
            back.add(t)
            room -= size[t]
    if back and (more := measure(fuller := {t: units_of[t] for t in keep | back}))[1] <= cap:
        return fuller, reasons, *more
    return (picks, reasons, *fit) if picks else None


def surface(engine: Any, query: str | None, budget: int, recent: float, lam: float) -> HSCAContext:
    """:meth:`HSCAEngine.context`'s work (see the module documentation)."""
    from ..select import mmr_with_relevance

    index: ContextIndex = engine._index
    counter = engine.token_counter
    n_turns = len(index)
    empty = HSCAContext("", [], 0, budget, counter.name, n_turns, query)
    if not n_turns or not budget:
        return empty
    chunks = engine.get_micro_context()
    index.sync()
    if engine.embedder is not None:
        V = index.embeddings(engine.embedder)
        qv = None
        if query is not None:
            from ..embed import embed_texts

            qv = embed_texts(engine.embedder, [query])[0].astype(np.float32)
            qv /= max(float(np.linalg.norm(qv)), 1e-12)
    else:
        V, qv = index.vectors(), None
    rel = _relevance(engine, query, V, qv)
    turn_group, groups = _turn_snapshots(engine)
    costs = np.asarray(index.unit_cost, dtype=np.int64) + 1  # + the join to the next unit

    def meta(t: int) -> tuple[str, str | None, int | None]:
        g = groups[turn_group[t]]
        return (
            chunks[t].chunk_id,
            (g.snapshot_id if g else None),
            (g.conversation_position + 1 if g else None),
        )

    # Never more than the conversation itself and one citation (the least a context can say, one
    # cited turn): with a budget that holds it all, the citations take the place of some of its
    # turns (whole_talk; the context was 26,663 tokens of a 24,796-token talk).
    # (Counted only when the budget could reach it: a text counts at least its units' tokens less one
    # a join, by a counter whose counts nearly add up, so a budget below that is the cap itself.)
    one = int(counter.count([ONE_CITATION])[0])
    cap, whole = budget, None
    if budget >= int(costs.sum()) - 2 * len(costs):
        whole = index.whole_tokens()
        cap = min(budget, whole + one)
    # A sentence said in several turns is a candidate once: where the map ranks it highest (the
    # newest of equals), and not at all when a newest turn already holds it.
    keys = index.unit_keys
    best: dict[str, int] = {}
    for u in np.lexsort((np.arange(len(rel)), rel)).tolist():  # ascending: the last one seen wins
        best[keys[u]] = u
    once = np.zeros(len(rel), dtype=bool)
    once[list(best.values())] = True
    per_turn = one + 1  # what a block's citation and its separator add, at most

    def measure(picks: dict[int, list[int]], runs: bool = False) -> tuple[str, int]:
        """The text of the kept units (by turn) and its tokens (with ``runs``, consecutive turns
        under one citation: :func:`~scwo_np.hsca._blocks.join_blocks`)."""
        spans = {t: [index.unit_span[u] for u in sorted(us)] for t, us in picks.items()}
        blocks = [
            (t + 1, citation(t + 1, meta(t)[2]), kept_text(chunks[t].text, spans[t])) for t in sorted(picks)
        ]
        text = join_blocks(blocks, runs=runs)
        return text, (int(counter.count([text])[0]) if text else 0)

    def done(picks: dict[int, list[int]], reasons: dict[int, str], text: str, tokens: int) -> HSCAContext:
        scored = {t: {u: float(rel[u]) for u in us} for t, us in picks.items()}
        pieces = as_pieces(scored, reasons, lambda t: chunks[t].text, meta, index)
        return HSCAContext(text, pieces, tokens, budget, counter.name, n_turns, query)

    def newest_end() -> HSCAContext:
        """When nothing fits by the costs (each a little over), the most of the newest turn's last
        units that fit by the count."""
        units = once_each(index, index.turn_units[n_turns - 1])
        fit = empty
        for k in range(1, len(units) + 1):
            picks = {n_turns - 1: units[-k:]}
            if (last := measure(picks))[1] > cap:
                break
            fit = done(picks, {n_turns - 1: "recent"}, *last)
        return fit

    if whole is not None and budget >= whole:  # it all fits but the citations
        talk = whole_talk(index, rel, once, cap, recent, query, lambda p: measure(p, runs=True))
        if talk is not None:
            return done(*talk)
    inner = cap
    while True:
        said: set[str] = set()
        recents = recent_units(index, int(recent * inner), said=said)
        left = inner - int(costs[recents].sum()) if recents else inner
        picks: dict[int, list[int]] = {}
        reasons: dict[int, str] = {}
        for u in recents:
            picks.setdefault(index.unit_turn[u], []).append(u)
            reasons[index.unit_turn[u]] = "recent"
        mask = once.copy()
        mask[recents] = False
        if said:
            mask &= np.fromiter((k not in said for k in keys), dtype=bool, count=len(keys))
        if query is not None:  # with a query, what the map does not relate to it is not surfaced
            mask &= rel > 0
        mask &= np.asarray(index.units.lengths) > 0  # a unit without a content word says nothing alone
        cand = np.flatnonzero(mask)
        if left > 0 and len(cand):
            chosen, _ = mmr_with_relevance(V[cand], rel[cand], costs[cand], left, lam=lam)
            for u in cand[chosen].tolist():
                t = index.unit_turn[u]
                picks.setdefault(t, []).append(u)
                reasons.setdefault(t, "query" if query is not None else "central")
                said.add(keys[u])
        # The room the text leaves goes to the newest turns too (no query match, a small budget).
        text, tokens = measure(picks)
        taken = frozenset(u for us in picks.values() for u in us)
        more = recent_units(index, cap - tokens, taken, said, per_turn)
        if more:
            fuller = {t: list(us) for t, us in picks.items()}
            for u in more:
                fuller.setdefault(index.unit_turn[u], []).append(u)
                reasons.setdefault(index.unit_turn[u], "recent")
            if (filled := measure(fuller))[1] <= cap:  # (else a counter whose counts do not add up)
                return done(fuller, reasons, *filled)
        if tokens <= cap:
            return done(picks, reasons, text, tokens) if picks else newest_end()
        inner = max(0, inner - (tokens - cap))
