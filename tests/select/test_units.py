"""Sentence-level selection: the MMR over units with given relevance, against its reference."""

import naive
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conftest import selection_problems
from scwo_np import MMR_METHODS
from scwo_np.select._mmr import mmr_with_relevance


@pytest.mark.parametrize("method", MMR_METHODS)
@given(problem=selection_problems(), data=st.data())
def test_mmr_with_given_relevance_equals_the_reference(method, problem, data):
    E, _, costs, budget, lam = problem
    n = E.shape[0]
    rel = data.draw(
        hnp.arrays(np.float64, n, elements=st.sampled_from([0.0, 0.25, 0.5, -0.5]) | st.floats(-1, 1))
    )
    picks, gains = mmr_with_relevance(E, rel, costs, budget, lam=lam, method=method)
    rp, rg = naive.mmr_with_relevance(
        E.tolist(), rel.tolist(), costs.tolist(), budget, lam=lam, dtype=E.dtype
    )
    assert picks.tolist() == rp
    np.testing.assert_array_equal(gains, np.array(rg, dtype=np.float64))
    assert costs[picks].sum() <= budget


def test_mmr_with_relevance_checks_its_arguments():
    E = np.eye(3)
    with pytest.raises(ValueError, match="relevance"):
        mmr_with_relevance(E, [0.1, np.nan, 0.2], [1, 1, 1], 2)
    with pytest.raises(ValueError, match="relevance"):
        mmr_with_relevance(E, [0.1, 0.2], [1, 1, 1], 2)
    picks, gains = mmr_with_relevance(np.empty((0, 3)), [], [], 5)
    assert picks.size == 0 and gains.size == 0


# --- select_texts(..., granularity="sentence") ---------------------------------------------

from scwo_np.select import select_texts  # noqa: E402
from scwo_np.select._units import (  # noqa: E402
    LENGTH_COST,
    LEXICAL,
    NEIGHBOUR,
    PIECES,
    SAME_TEXT,
    SHORT_COST,
    SHORT_WORDS,
    first_copies,
    piece_match,
)
from scwo_np.text import sentence_units  # noqa: E402

CHUNKS = [
    "Lists are mutable sequences. They grow with append. Tuples are immutable. Use a tuple as a key.",
    "The json module parses JSON text. Use json.load for a file. It returns dicts and lists.",
    "Cats sleep most of the day. Dogs bark at strangers.",
    "To read a JSON file, open it and call json.load. However, large files need a streaming parser.",
]


class Letters:
    """A deterministic embedder: counts of a few letters (records every text it embeds)."""

    name = "letters-v1"

    def __init__(self):
        self.seen = []

    def __call__(self, texts):
        self.seen += list(texts)
        return [[t.count(c) + 0.5 for c in "aeijosnt"] for t in texts]


class LetterPieces(Letters):
    """Letters with word pieces: each word (split on white space) a piece, its letter counts at unit length."""

    name = "letter-pieces-v1"

    def embed_pieces(self, texts):
        return self(texts), [piece_vectors(t) for t in texts]


def piece_vectors(text, scale=1.0):
    rows = [[w.count(c) + 0.5 for c in "aeijosnt"] for w in text.split()]
    return [[scale * x / naive.norm(r) for x in r] for r in rows]


def words(text):
    return len(text.split())


@pytest.mark.parametrize("elision", [None, "…"])
@pytest.mark.parametrize("budget", [0, 3, 8, 15, 30, 200])
def test_sentences_fit_the_budget_and_keep_their_order(budget, elision):
    sel = select_texts(CHUNKS, "read json file", budget, granularity="sentence", embedder=Letters(),
                       token_counter=words, elision=elision)  # fmt: skip
    assert sel.granularity == "sentence" and sel.total_tokens <= budget
    for i, text, spans, tok in zip(sel.indices.tolist(), sel.texts, sel.spans, sel.tokens, strict=True):
        assert tok == words(text)
        assert list(spans) == sorted(spans)
        for a, b in spans:
            assert CHUNKS[i][a:b] in text
        assert set(spans) <= set(sentence_units(CHUNKS[i]))


#: CHUNKS and a text that repeats two of their sentences and holds a unit with no word.
REPEATS = [*CHUNKS, "Tuples are immutable.\n\n42.\n\nUse a tuple as a key.  See also: 7."]


@pytest.mark.parametrize("model, pieces", [(Letters, None), (LetterPieces, None), (LetterPieces, 0.9)])
@pytest.mark.parametrize("chunks", [CHUNKS, REPEATS], ids=["chunks", "repeats"])
@pytest.mark.parametrize("lexical", [None, 0.3])  # None: the sentences' default (LEXICAL["sentence"])
@pytest.mark.parametrize(
    "lam, w, budget", [(0.6, 0.5, 25), (0.7, 0.5, 12), (1.0, 0.3, 40), (0.0, 1.0, 30), (0.5, 0.0, 18)]
)
def test_sentence_selection_is_mmr_over_the_units_with_the_documented_relevance(
    lam, w, budget, lexical, chunks, model, pieces
):
    """The reference: units by sentence_units (a repeated unit once, none without a word); a unit's vector is the sum of its sentences' unit
    vectors, its relevance w * (its best sentence's cosine) + (1 - w) * (its text's cosine) + lexical
    * (its text's share of the question's BM25 weight) + PIECES * (with an embedder of word pieces: the mean
    over the question's pieces of the best cosine with a piece of its text's sentences, the pieces to 8 bits) + NEIGHBOUR * (its better neighbour's best cosine above its own) - LENGTH_COST * (its tokens over the mean unit's) - SHORT_COST if it has fewer than SHORT_WORDS words; naive MMR over the unit
    vectors with SAME_TEXT on an axis of their text."""
    from scwo_np.text import split_sentences

    emb = model()
    sel = select_texts(chunks, "read json file", budget, granularity="sentence", embedder=emb,
                       token_counter=words, lam=lam, sentence_weight=w, order="original", lexical=lexical,
                       pieces=pieces)  # fmt: skip
    q = Letters()(["read json file"])[0]
    units, U, rel, costs, bests = [], [], [], [], []
    for i, t in enumerate(chunks):
        sents = split_sentences(t)
        for a, b in sentence_units(t):
            vecs = [Letters()([t[x:y]])[0] for x, y in sents if a <= x and y <= b]
            unit = [sum(v[k] / naive.norm(v) for v in vecs) for k in range(len(q))]
            units.append((i, a, b))
            U.append(unit)
            best = max(naive.cosine(v, q) for v in vecs)
            bests.append(best)
            rel.append(w * best + (1 - w) * naive.cosine(Letters()([t])[0], q))
            costs.append(words(t[a:b]) + words(" "))
    # plus the lift toward a closer neighbour of the same text
    for k, (i, _, _) in enumerate(units):
        near = [bests[j] for j in (k - 1, k + 1) if 0 <= j < len(units) and units[j][0] == i]
        rel[k] += NEIGHBOUR * max(0.0, max(near, default=bests[k]) - bests[k])
    lexical = LEXICAL["sentence"] if lexical is None else lexical
    # plus the question's words in the unit's text (its share of their BM25 weight)
    share = naive.question_share(chunks, "read json file")
    rel = [r + lexical * share[i] for r, (i, _, _) in zip(rel, units, strict=True)]
    if model is LetterPieces:  # plus the question's word pieces matched in the unit's text

        def half(text):  # the pieces as kept: 8 bits
            return [naive.quantize_piece(row) for row in piece_vectors(text)]

        match = [
            naive.piece_match(half("read json file"), [half(t[a:b]) for a, b in split_sentences(t)])
            for t in chunks
        ]
        weight = PIECES if pieces is None else pieces
        rel = [r + weight * match[i] for r, (i, _, _) in zip(rel, units, strict=True)]
    # minus the length cost: its tokens over the mean unit's
    own = [words(chunks[i][a:b]) for i, a, b in units]
    rel = [r - LENGTH_COST * c / max(sum(own) / len(own), 1.0) for r, c in zip(rel, own, strict=True)]
    # minus the short-unit cost: fewer than SHORT_WORDS words split on white space
    rel = [
        r - SHORT_COST * (len(chunks[i][a:b].split()) < SHORT_WORDS)
        for r, (i, a, b) in zip(rel, units, strict=True)
    ]
    # each vector at unit length, with SAME_TEXT on an axis of its own text
    U = [[x / naive.norm(u) for x in u] + [SAME_TEXT * (k == i) for k in range(len(chunks))]
         for u, (i, _, _) in zip(U, units, strict=True)]  # fmt: skip
    # the candidates: no unit without a letter; of units equal but for white space, the most
    # relevant (the first of equals)
    import re

    cand = []
    for k, (i, a, b) in enumerate(units):
        text = " ".join(chunks[i][a:b].split())
        if not re.search(r"[^\W\d_]", text):
            continue
        same = [j for j in cand if " ".join(chunks[units[j][0]][units[j][1] : units[j][2]].split()) == text]
        if not same:
            cand.append(k)
        elif rel[k] > rel[same[0]]:
            cand[cand.index(same[0])] = k
    cand.sort()
    got, _ = naive.mmr_with_relevance([U[k] for k in cand], [rel[k] for k in cand], [costs[k] for k in cand],
                                      budget, lam=lam)  # fmt: skip
    picks = [cand[k] for k in got]
    want = {}
    for k in picks:
        i, a, b = units[k]
        want.setdefault(i, []).append((a, b))
    assert sel.indices.tolist() == sorted(want)
    assert [list(s) for s in sel.spans] == [sorted(want[i]) for i in sorted(want)]


def test_each_distinct_sentence_is_embedded_once_and_the_cache_makes_it_free(tmp_path):
    from scwo_np.embed import EmbeddingCache

    emb = Letters()
    texts = CHUNKS + [CHUNKS[0]]  # a repeated text: its sentences are embedded once
    select_texts(
        texts, "read json file", 30, granularity="sentence", embedder=emb, cache=tmp_path / "c.sqlite"
    )
    assert len(emb.seen) == len(set(emb.seen))
    emb.seen.clear()
    with EmbeddingCache(tmp_path / "c.sqlite") as cache:
        select_texts(texts, "read json file", 30, granularity="sentence", embedder=emb, cache=cache)
    assert emb.seen == []


def test_sentence_edge_cases_never_overrun():
    emb = Letters()
    one = "x" * 1_000_000  # a 1 MB "sentence": it cannot fit, so nothing is selected
    sel = select_texts([one, "no boundary here at all"], "x", 50, granularity="sentence", embedder=emb)
    assert sel.total_tokens <= 50 and all(len(t) < 1000 for t in sel.texts)
    assert (
        len(select_texts(CHUNKS, "json", 1, granularity="sentence", embedder=emb, token_counter=words)) == 0
    )
    assert len(select_texts([], "json", 10, granularity="sentence")) == 0


@pytest.mark.parametrize(
    "kwargs, err, match",
    [
        ({"costs": [1, 2, 3, 4]}, ValueError, "costs are per text"),
        ({"embeddings": np.eye(4)}, ValueError, "embeds every sentence"),
        ({"sentence_weight": float("nan")}, ValueError, "sentence_weight"),
        ({"sentence_weight": 2.0}, ValueError, "sentence_weight"),
        ({"elision": 3}, TypeError, "elision"),
        ({"granularity": "word"}, ValueError, "granularity must be one of 'chunk', 'sentence'"),
    ],
)
def test_bad_sentence_arguments(kwargs, err, match):
    kw = {"granularity": "sentence", **kwargs}
    with pytest.raises(err, match=match):
        select_texts(CHUNKS, "json", 10, **kw)


def test_non_string_items_are_a_type_error():
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        select_texts(["a. b.", 3], "json", 10, granularity="sentence")


@pytest.mark.parametrize(
    "query, match", [([0.0] * 8, "zero vector"), ([1.0, 2.0], "dimension"), ([np.nan] + [1.0] * 7, "NaN")]
)
def test_a_bad_query_vector_is_named(query, match):
    with pytest.raises(ValueError, match=match):
        select_texts(CHUNKS, query, 10, granularity="sentence", embedder=Letters())


def test_a_repeated_sentence_is_said_once_and_a_unit_with_no_word_never():
    """Two texts share "Tuples are immutable." and "Use a tuple as a key.": each is kept once
    at most; "42." (no word) is not kept even when everything else fits."""
    sel = select_texts(REPEATS, "read json file", 10_000, granularity="sentence", embedder=Letters(),
                       token_counter=words)  # fmt: skip
    assert sel.context.count("Tuples are immutable.") == 1
    assert sel.context.count("Use a tuple as a key.") == 1
    assert "42." not in sel.context and "See also: 7." in sel.context


@given(st.lists(st.sampled_from(["a b", "a  b", "a b\n", "c", " c", "", "\n", "d e f"]), max_size=12))
def test_first_copies_equals_the_reference(texts):
    assert first_copies(texts).tolist() == naive.first_copies(texts)


piece_rows = hnp.arrays(
    np.float32,
    st.tuples(st.integers(0, 4), st.just(3)),
    elements=st.sampled_from([0.0, 0.5, -1.0, 1.0]) | st.floats(-1, 1, width=32),
)


@pytest.mark.parametrize("layout", ["arrays", "one block", "one block, out of order"])
@given(query=piece_rows, sentences=st.lists(st.tuples(st.integers(0, 3), piece_rows), max_size=8))
def test_piece_match_equals_the_reference(layout, query, sentences):
    """Late interaction: per text, the mean over the question's pieces of their best dot with the
    text's pieces; 0 for a text without pieces or a question without any (ties, zero rows, empty).
    Pieces that are the rows of one block, in order (as a cache reads them), are used in place;
    any other layout is copied first: the same result."""
    sentences = sorted(sentences, key=lambda s: s[0])  # grouped by text, in order
    text_of = np.array([t for t, _ in sentences], dtype=np.int64)
    pieces = [p for _, p in sentences]
    if layout != "arrays" and pieces:
        order = list(range(len(pieces)))[:: -1 if layout.endswith("order") else 1]
        block = np.concatenate([pieces[k] for k in order]).astype(np.float32)
        views = np.split(block, np.cumsum([len(pieces[k]) for k in order])[:-1])
        pieces = [views[order.index(k)] for k in range(len(pieces))]
    got = piece_match(query, pieces, text_of, 4)
    want = [
        naive.piece_match(
            query.tolist(), [p.tolist() for t, p in zip(text_of, pieces, strict=True) if t == i]
        )
        for i in range(4)
    ]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


class ScaledPieces(LetterPieces):
    """LetterPieces with its pieces 1,000 times longer: only their directions may count."""

    name = "scaled-pieces-v1"

    def embed_pieces(self, texts):
        return self(texts), [piece_vectors(t, scale=1000.0) for t in texts]


class NoPieces(LetterPieces):
    """An embed_pieces that has nothing to give (returns None), and counts its calls."""

    name = "no-pieces-v1"

    def __init__(self):
        super().__init__()
        self.calls = 0

    def embed_pieces(self, texts):
        self.calls += 1


@pytest.mark.parametrize("budget", [12, 30])
def test_pieces_count_by_direction_and_pieces_0_reads_none(budget, tmp_path):
    from scwo_np.embed import CachedEmbedder, EmbeddingCache

    kw = dict(granularity="sentence", token_counter=words)
    a = select_texts(CHUNKS, "read json file", budget, embedder=LetterPieces(), **kw)
    b = select_texts(CHUNKS, "read json file", budget, embedder=ScaledPieces(), **kw)
    assert a.spans == b.spans
    plain = select_texts(CHUNKS, "read json file", budget, embedder=Letters(), **kw)
    emb = NoPieces()
    off = select_texts(
        CHUNKS, "read json file", budget, embedder=emb, pieces=0, cache=tmp_path / "c.sqlite", **kw
    )
    assert emb.calls == 0 and off.spans == plain.spans
    # an embed_pieces that gives None selects as an embedder without pieces, behind caches too
    cached = CachedEmbedder(
        CachedEmbedder(emb, EmbeddingCache(tmp_path / "d.sqlite")), EmbeddingCache(":memory:")
    )
    for e, cache in ((emb, None), (emb, tmp_path / "e.sqlite"), (cached, None)):
        assert (
            select_texts(CHUNKS, "read json file", budget, embedder=e, cache=cache, **kw).spans == plain.spans
        )


def test_bad_pieces_arguments():
    with pytest.raises(ValueError, match="pieces"):
        select_texts(CHUNKS, "json", 30, embedder=LetterPieces(), pieces=0.5)  # chunks do not use them
    with pytest.raises(ValueError, match="pieces"):
        select_texts(CHUNKS, "json", 30, embedder=LetterPieces(), granularity="sentence", pieces=1.5)
    assert len(select_texts(CHUNKS, "json", 30, embedder=Letters(), pieces=0)) > 0
