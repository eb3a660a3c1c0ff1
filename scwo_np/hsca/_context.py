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
:data:`GATE_WORDS` content words, and a line of a pasted file (:func:`file_lines`) only when it
shares a word; and the turn right after a matching turn, an answer after its question, takes
:data:`NEXT` of that turn's relevance)
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
hashed stem vectors); a unit that ends its turn with ":" announces the next turn and is chosen with
that turn's first unit (their costs and a citation counted together), never alone; the room the text then leaves goes to the newest turns again (each new
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
from collections import Counter
from collections.abc import Collection
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._blocks import as_pieces, citation, join_blocks, kept_text, line_spans
from ._index import _B, _K1, ContextIndex
from ._layer1 import NUMBER_WEIGHT, query_terms, stem_counts
from ._types import REASONS, ContextPiece, HSCAContext

__all__ = ["ContextPiece", "HSCAContext", "REASONS"]


#: The longest citation a context is allowed beyond the conversation's own tokens.
ONE_CITATION = "[turn 9999, snapshot 9999] "


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

#: A unit's surroundings (turn, snapshot, domain) lift it only when it shares a word with the
#: query or holds at least this many content words: added to every unit of a matching turn, they
#: made a "Yes." or a lone ``$ find .`` cheap picks.
GATE_WORDS = 4

#: A pasted file's line right after a comment (:data:`COMMENTS`) that shares a word with the query
#: takes this share of its relevance: a config file's comment names what the next line sets.
LINE_AFTER = 0.8
#: The lines around a pasted file's line that shares a word with the query take this share of its
#: relevance per line of distance after it (and :data:`LINE_BEFORE`'s before it), up to
#: :data:`LINE_SPAN` lines: what an excerpt of the file gave, as units (a function's arguments after
#: its name, ``Status XShapeQueryExtents (`` then ``Display *dpy,``...).
LINE_NEAR = 0.6
LINE_BEFORE = 0.4
LINE_SPAN = 8
#: What a comment line starts with, in config files and code.
COMMENTS = ("#", "//", ";", "--", "/*", "*")

#: The turn right after a matching one is lifted to this share of its predecessor's turn relevance:
#: an answer follows its question and rarely repeats its words.  The Python FAQ as 80 exchanges, each
#: question asked again: 0.8 against 0 gave 0.671 -> 0.816 at 200 tokens, 0.855 -> 0.934 at 400; on
#: FAQ sessions of answers only, -0.8 points at 400 on the tune sources, -0.2 held out (0.834).
NEXT = 0.8

#: How finely the turns a whole conversation's citations displace are told apart by relevance
#: (:func:`whole_talk`, where the choice is measured).
RELATED_STEP = 0.2

#: MMR's trade-off over the units (relevance vs redundancy with what is already picked).
LAM = 0.7

#: The newest exchange with ``exchange=3``: the newest message, and the question and answer before
#: it that a follow-up ("Was it enabled by default?") refers to, first, whole, newest first, as
#: many as fit, beyond the ``recent`` share (at 10% of 200 tokens the exchange before a follow-up
#: was dropped for older entries matching "enabled" and "default").  Off by default (the engine's
#: ``exchange=0``): questions about earlier turns lost their room to it (docs/user_guide/hsca.md).
EXCHANGE = 3

#: A limit no count reaches.
INFINITE = 1 << 62

#: The least room worth an excerpt of a unit too large for it (:func:`surface`).
EXCERPT_MIN = 16

#: How many smaller budgets a context tries so that a larger budget never gives fewer tokens
#: (:func:`surface`; only the budgets above what the first try used can give more).
MONOTONE_PROBES = 64


def scaled(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """``x`` divided by its maximum (all zeros stay zeros)."""
    top = float(x.max()) if len(x) else 0.0
    return x / top if top > 0 else x


def once_each(index: ContextIndex, units: range) -> list[int]:
    """``units`` without those whose text (:attr:`ContextIndex.unit_keys`) an earlier one says."""
    first: dict[str, int] = {}
    for u in units:
        first.setdefault(index.unit_keys[u], u)
    return list(first.values())


def recent_units(
    index: ContextIndex,
    reserve: int,
    taken: Collection = (),
    said: set | None = None,
    cite: int = 0,
    *,
    exchange: int = 0,
    limit: int = 0,
    skip: bool = False,
) -> list[int]:
    """The newest turns' units not ``taken`` and not ``said`` (their keys, :attr:`ContextIndex.unit_keys`),
    within ``reserve`` tokens: whole turns, newest first, each unit +1 token for its join and a turn
    none of whose units is ``taken`` ``cite`` more (its citation); the first ``exchange`` turns with
    something new (the newest exchange) may take up to ``limit`` tokens in all, the later ones what
    is left of ``reserve``.  When the first turn with something new does not fit whole, its last
    units that do; a later turn that does not fit ends the walk (with ``skip``, it is passed over
    and older turns that fit still come).  A sentence is taken once: ``said`` gains the keys taken."""
    said = set() if said is None else said
    present = {index.unit_turn[u] for u in taken}
    keys = index.unit_keys
    out: list[int] = []
    spent = whole_turns = 0
    for t in range(len(index) - 1, -1, -1):
        units = [u for u in once_each(index, index.turn_units[t]) if u not in taken and keys[u] not in said]
        if not units:  # nothing new to say
            continue
        extra = 0 if t in present else cite
        cost = sum(index.unit_cost[u] + 1 for u in units) + extra
        room = (max(limit, reserve) if whole_turns < exchange else reserve) - spent
        if cost <= room:
            out.extend(units)
            said.update(keys[u] for u in units)
            spent += cost
            whole_turns += 1
            continue
        if skip:
            continue
        if not out:  # the newest turn, too long: its last units
            left = room - extra
            for u in reversed(units):
                if index.unit_cost[u] + 1 > left:
                    break
                out.append(u)
                said.add(keys[u])
                left -= index.unit_cost[u] + 1
        break
    return out


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
        # (a pasted file's line that shares no word with the query is not lifted by its turn: a
        # .bashrc's lines about history and lesspipe outranked its force_color_prompt lines)
        lifted = (own > 0) | ((lengths >= GATE_WORDS) & ~np.asarray(index.unit_line, dtype=bool))
        rel = w["unit"] * own + np.where(lifted, near, 0.0)
        # a pasted file's line after a comment that matches (it says what the line sets): LINE_AFTER
        # of the comment's relevance ("HISTSIZE=1000" after "# for setting history length ...")
        line = np.asarray(index.unit_line, dtype=bool)
        after = np.flatnonzero(line[1:] & line[:-1] & (unit_turn[1:] == unit_turn[:-1])) + 1
        after = after[[index.unit_text(u - 1).lstrip().startswith(COMMENTS) for u in after.tolist()]]
        rel[after] = np.maximum(rel[after], LINE_AFTER * rel[after - 1] * (own[after - 1] > 0))
        rel = np.maximum(rel, _near_lines(rel * (line & (own > 0)), line, unit_turn))
        if qv is not None:
            rel += w["embedding"] * np.clip(V @ qv, 0.0, None)
        if numbers := {k: v for k, v in terms.items() if k[:1].isdigit()}:  # a version, a bug named
            rel += NUMBER_WEIGHT * scaled(index.units.bm25(numbers))
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
    index: ContextIndex, rel: NDArray, cap: int, recent: float, query: str | None, measure, exchange: int
) -> tuple | None:
    """The context when the budget holds the whole conversation: every turn whole, in order, in runs
    of consecutive turns under one citation (``measure`` renders them so), repeats and all (a turn
    said twice is two turns of the talk).  When even those citations do not fit, they make room for
    themselves by whole turns: the newest exchange and the newest turns that fit in ``recent`` of
    the cap stay; the other turns go first that only repeat what other turns say (an "ok" said
    twice), then those that have no content word, then (with a query) the least related to it (in
    steps of :data:`RELATED_STEP` of the highest relevance; the newest turn last in its step), then
    the shortest (the least text lost for a citation), the oldest first, and the older of the newest
    turns kept last; then what the drops freed beyond the overflow takes back the dropped turns that
    fit, the last dropped first.  None when even the newest turns kept do not fit (a counter whose
    counts do not add up): the budgeted selection decides.  Returns the kept units by turn, each
    turn's reason, the text and its tokens; ``measure`` gives the text of units by turn and its
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
    units_of = {t: list(index.turn_units[t]) for t in range(n)}  # exchange: 0 when recent is
    recents = recent_units(index, int(recent * cap), cite=per_turn, exchange=exchange, limit=cap)
    kept_recent = sorted({index.unit_turn[u] for u in recents})
    in_turns = Counter(k for t in range(n) for k in {keys[u] for u in units_of[t]})
    reasons = {t: "central" if query is None else "query" for t in units_of}
    reasons.update((t, "recent") for t in kept_recent)
    last = units_of[n - 1]
    if query is None or not rel[last].max() > 0:
        reasons[n - 1] = "recent"  # kept as the newest (with a query it relates to: "query")
    size = {t: int(costs[us].sum()) + per_turn for t, us in units_of.items()}
    top = float(rel.max()) if query is not None and len(rel) else 0.0

    def value(t: int) -> tuple:  # the order in which the turns go
        related = math.floor(max(float(rel[u]) for u in units_of[t]) / top / RELATED_STEP) if top > 0 else 0
        repeats = all(in_turns[keys[u]] > 1 for u in units_of[t])
        has_words = t == n - 1 or any(lengths[u] > 0 for u in units_of[t])
        return (not repeats, has_words, related, t == n - 1, size[t], t)

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


def _near_lines(matched: NDArray, line: NDArray, unit_turn: NDArray) -> NDArray[np.float64]:
    """Each line's lift by the matching lines of its file (``matched``: their relevance, else 0):
    :data:`LINE_NEAR` ``** d`` of one ``d`` lines above it, :data:`LINE_BEFORE` ``** d`` below."""
    lift = np.zeros(len(matched))
    for d in range(1, min(LINE_SPAN, len(matched) - 1) + 1):
        same = line[d:] & line[:-d] & (unit_turn[d:] == unit_turn[:-d])
        lift[d:] = np.maximum(lift[d:], np.where(same, matched[:-d] * LINE_NEAR**d, 0.0))
        lift[:-d] = np.maximum(lift[:-d], np.where(same, matched[d:] * LINE_BEFORE**d, 0.0))
    return lift


def _nearness(k: int, matches: list[int]) -> tuple[int, bool, int]:
    """How near line ``k`` is to the nearest of ``matches``: its distance, then whether no match is
    that far above it (the line after a match before the line before it), then its place."""
    d = min(abs(k - j) for j in matches)
    return d, d not in {k - j for j in matches}, k


def surface(
    engine: Any, query: str | None, budget: int, recent: float, lam: float, exchange: int = EXCHANGE
) -> HSCAContext:
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
    lengths = np.asarray(index.units.lengths)

    def meta(t: int) -> tuple[str, str | None, int | None]:
        g = groups[turn_group[t]]
        return (
            chunks[t].chunk_id,
            (g.snapshot_id if g else None),
            (g.conversation_position + 1 if g else None),
        )

    # Never more than the conversation and one citation (a context of 26,663 tokens for a talk of
    # 24,796 was), counted only when the budget could reach it (a text counts at least its units'
    # tokens less a join each, by a counter whose counts nearly add up); else the cap is the budget.
    one = int(counter.count([ONE_CITATION])[0])
    cap, whole = budget, None
    if budget >= int(costs.sum()) - 2 * len(costs):
        whole = index.whole_tokens()
        cap = min(budget, whole + one)
    # Below the whole conversation a sentence said in several turns is a candidate once: where the
    # map ranks it highest (the newest of equals), and not at all when a newest turn already holds it.
    keys = index.unit_keys
    best: dict[str, int] = {}
    for u in np.lexsort((np.arange(len(rel)), rel)).tolist():  # ascending: the last one seen wins
        best[keys[u]] = u
    once = np.zeros(len(rel), dtype=bool)
    once[list(best.values())] = True
    per_turn = one + 1  # what a block's citation and its separator add, at most
    # A unit that ends its turn with ":" announces the next turn ("... which can be run via:" before
    # "$ ./test/integration/run-tests"): it is chosen with the next turn's first unit, never alone (it
    # was, and a larger budget's context lost the command the smaller one had).
    announces = np.full(len(rel), -1, dtype=np.int64)
    for t in range(len(index) - 1):
        us, nxt = index.turn_units[t], index.turn_units[t + 1]
        if len(us) and len(nxt) and keys[us[-1]].rstrip().endswith(":"):
            announces[us[-1]] = nxt[0]
    paired = announces >= 0
    pair_costs = costs.copy()
    pair_costs[paired] += costs[announces[paired]] + per_turn
    exchange = exchange if recent > 0 else 0
    terms = query_terms(query) if query is not None else {}
    by_rel = np.argsort(-rel, kind="stable")
    has_text = np.array([bool(chunks[index.unit_turn[u]].text) for u in range(len(rel))], dtype=bool)

    measured: dict[tuple, tuple[str, int]] = {}  # the probes below often render the same picks again

    def measure(
        picks: dict[int, list[int]], runs: bool = False, extra: dict | None = None
    ) -> tuple[str, int]:
        """The text of the kept units (by turn) and of an excerpt's lines (``extra``: turn -> its line
        spans and score), and its tokens (with ``runs``, consecutive turns under one citation:
        :func:`~scwo_np.hsca._blocks.join_blocks`)."""
        extra = extra or {}
        key = (
            runs,
            tuple(sorted((t, tuple(sorted(us))) for t, us in picks.items())),
            tuple(sorted((t, tuple(e[0])) for t, e in extra.items())),
        )
        if key not in measured:
            measured[key] = _render(picks, runs, extra)
        return measured[key]

    def _render(picks: dict[int, list[int]], runs: bool, extra: dict) -> tuple[str, int]:
        blocks = []
        for t in sorted(set(picks) | set(extra)):
            if not chunks[t].text:  # a turn stored without its text (keep_text=False): nothing to show
                continue
            spans = sorted([index.unit_span[u] for u in picks.get(t, ())] + list(extra.get(t, ((), 0))[0]))
            cite = citation(t + 1, meta(t)[2], excerpt=t in extra)
            # (a whole turn of a run as it was said: its first line's indentation too)
            lines = runs or t in extra or any(index.unit_line[u] for u in picks.get(t, ()))
            blocks.append((t + 1, cite, kept_text(chunks[t].text, spans, lines=lines)))
        text = join_blocks(blocks, runs=runs)
        return text, (int(counter.count([text])[0]) if text else 0)

    def done(
        picks: dict[int, list[int]],
        reasons: dict[int, str],
        text: str,
        tokens: int,
        extra: dict | None = None,
    ) -> HSCAContext:
        scored = {t: {u: float(rel[u]) for u in us} for t, us in picks.items() if chunks[t].text}
        pieces = as_pieces(scored, reasons, lambda t: chunks[t].text, meta, index, extra)
        return HSCAContext(text, pieces, tokens, budget, counter.name, n_turns, query)

    def newest_end(c: int) -> HSCAContext:
        """When nothing fits by the costs (each a little over), the most of the newest turn's last
        units that fit by the count."""
        units = once_each(index, index.turn_units[n_turns - 1])
        fit = empty
        for k in range(1, len(units) + 1):
            picks = {n_turns - 1: units[-k:]}
            if (last := measure(picks))[1] > c:
                break
            fit = done(picks, {n_turns - 1: "recent"}, *last)
        return fit

    def excerpt(picks: dict[int, list[int]], said: set[str], c: int, tokens: int) -> tuple | None:
        """The lines that match the query of the most relevant unit left out for its size (a pasted
        file), within the room the text leaves: ``(extra, the unit, text, tokens)`` or None."""
        room = c - tokens
        if not terms or room < EXCERPT_MIN:
            return None
        taken = {u for us in picks.values() for u in us}
        tried = 0
        for u in by_rel.tolist():
            if rel[u] <= 0 or tried == 3:
                break
            if u in taken or costs[u] <= room or not lengths[u] or keys[u] in said:
                continue
            tried += 1
            t, (a, b) = index.unit_turn[u], index.unit_span[u]
            text = chunks[t].text
            lines = line_spans(text, a, b)
            score = [sum(terms.get(k, 0.0) for k in stem_counts(text[x:y])) for x, y in lines]
            ranked = sorted((k for k in range(len(lines)) if score[k] > 0), key=lambda k: (-score[k], k))
            if len(lines) < 2 or not ranked:
                continue
            line_costs = counter.count([text[x:y] for x, y in lines]).tolist()
            left = room - (0 if t in picks else per_turn)
            chosen: list[int] = []
            # the matching lines, best first, then the lines around them, nearest first, and of two
            # as near the one after a match first (a config file's comment, then its setting:
            # "# The login shell to be used for all new users." before "DSHELL=/bin/bash")
            top = ranked[:50]
            near = sorted(range(len(lines)), key=lambda k: _nearness(k, top))
            # (each matching line with the line after it: a comment, then the setting it names)
            paired = [x for j in ranked for x in (j, j + 1) if x < len(lines)]
            for k in dict.fromkeys(paired + near):
                cost = line_costs[k] + 1 + (0 if {k - 1, k + 1} & set(chosen) else 3)  # (an elision)
                if cost <= left:
                    chosen.append(k)
                    left -= cost
            while chosen:
                extra = {t: (sorted(lines[k] for k in chosen), float(rel[u]))}
                if (fit := measure(picks, extra=extra))[1] <= c:
                    return extra, u, *fit
                chosen.pop()
        return None

    def newest_exchange(c: int) -> int:
        """How many of the newest turns (those with something new to say, up to :data:`EXCHANGE`)
        fit whole within ``c`` tokens by the count: they come first, whatever the ``recent`` share."""
        k = 0
        for j in range(1, exchange + 1):
            units = recent_units(index, 0, said=set(), exchange=j, limit=INFINITE)
            picks: dict[int, list[int]] = {}
            for u in units:
                picks.setdefault(index.unit_turn[u], []).append(u)
            if len(picks) < j or measure(picks)[1] > c:
                break
            k = j
        return k

    def at(c: int) -> HSCAContext:
        """The context within ``c`` tokens."""
        if whole is not None and c >= whole:  # it all fits but the citations
            talk = whole_talk(index, rel, c, recent, query, lambda p: measure(p, runs=True), exchange)
            if talk is not None:
                return done(*talk)
        k = newest_exchange(c)
        inner = c
        while True:
            said: set[str] = set()
            recents = recent_units(
                index, int(recent * inner), said=said, cite=per_turn, exchange=k, limit=INFINITE
            )
            picks: dict[int, list[int]] = {}
            reasons: dict[int, str] = {}
            for u in recents:
                picks.setdefault(index.unit_turn[u], []).append(u)
                reasons[index.unit_turn[u]] = "recent"
            left = inner - int(costs[recents].sum()) - per_turn * len(picks)
            mask = once.copy()
            mask[recents] = False
            if said:
                mask &= np.fromiter((k not in said for k in keys), dtype=bool, count=len(keys))
            if query is not None:  # with a query, what the map does not relate to it is not surfaced
                mask &= rel > 0
            mask &= lengths > 0  # a unit without a content word says nothing alone
            mask &= has_text  # nor one of a turn stored without its text
            cand = np.flatnonzero(mask)
            if left > 0 and len(cand):
                chosen, _ = mmr_with_relevance(V[cand], rel[cand], pair_costs[cand], left, lam=lam)
                for u in cand[chosen].tolist():
                    for w in (u, int(announces[u])) if paired[u] else (u,):
                        t = index.unit_turn[w]
                        if w not in picks.get(t, ()):
                            picks.setdefault(t, []).append(w)
                        reasons.setdefault(t, "query" if query is not None else "central")
                        said.add(keys[w])
            text, tokens = measure(picks)
            if tokens > c:
                inner = max(0, inner - (tokens - c))
                continue
            taken = {u for us in picks.values() for u in us}
            extra = None
            if (cut := excerpt(picks, said, c, tokens)) is not None:  # part of a unit too large
                extra, u, text, tokens = cut
                taken.add(u)
                said.add(keys[u])
                reasons.setdefault(index.unit_turn[u], "query")
            # The room the text leaves goes to the newest turns that fit (no query match, a small budget).
            if more := recent_units(index, c - tokens, taken, said, per_turn, skip=True):
                fuller = {t: list(us) for t, us in picks.items()}
                for u in more:
                    fuller.setdefault(index.unit_turn[u], []).append(u)
                    reasons.setdefault(index.unit_turn[u], "recent")
                if (filled := measure(fuller, extra=extra))[
                    1
                ] <= c:  # (else a counter whose counts do not add up)
                    return done(fuller, reasons, *filled, extra)
            return done(picks, reasons, text, tokens, extra) if picks or extra else newest_end(c)

    # A larger budget never gives less: the budgets between what this one used and it are tried too
    # (only they could give more), and the fullest context is kept, unless it lost one of the
    # newest turns this budget holds (the newest exchange comes first).
    best_ctx = at(cap)
    newest = set(range(n_turns - newest_exchange(cap) + 1, n_turns + 1)) & {p.turn for p in best_ctx.pieces}
    for c in range(cap - 1, max(best_ctx.tokens, cap - 1 - MONOTONE_PROBES), -1):
        if c <= best_ctx.tokens:
            break
        other = at(c)
        if other.tokens > best_ctx.tokens and newest <= {p.turn for p in other.pieces}:
            best_ctx = other
    return best_ctx
