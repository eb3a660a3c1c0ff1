"""The question's words beside the embedding: BM25 of each candidate (fast == the plain reference),
and select_texts' fused relevance, chunk and sentence, against references built from it."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scwo_np import mmr_select, select_texts
from scwo_np._lexical import hashed_tfidf, lexical_relevance, question_share, word_lists
from scwo_np.select._units import LEXICAL
from tests import naive

VOCAB = ["the", "JSON", "json", "parses", "parsing", "parser", "file", "files", "don't", "it's", "CSV", "read",
         "reads", "reader", "x_1", "3.14", "Ünïcode", "écrire", "is", "a", "of", "…", "—", ":", "."]  # fmt: skip

text = st.lists(st.sampled_from(VOCAB), min_size=0, max_size=30).map(" ".join)


@given(st.lists(text, min_size=0, max_size=8), text)
def test_lexical_relevance_equals_the_reference(docs, query):
    got = lexical_relevance(docs, query)
    want = naive.lexical_relevance(docs, query)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    assert got.shape == (len(docs),) and ((got >= 0) & (got <= 1)).all()


@given(st.lists(text, min_size=0, max_size=8), text)
def test_question_share_equals_the_reference(docs, query):
    got = question_share(docs, query)
    np.testing.assert_allclose(got, naive.question_share(docs, query), rtol=1e-12, atol=1e-15)
    assert got.shape == (len(docs),) and ((got >= 0) & (got < 1)).all()


def test_question_share_is_not_relative_to_the_best_doc():
    """Docs that hold one rare word of a three-word question share less than one that holds all three."""
    docs = ["The parser reads a CSV file.", "JSON files are text.", "Cats sleep."]
    some = question_share(docs, "read CSV files")
    one = question_share(docs[1:], "read CSV files")
    assert some[0] > some[1] > 0 == some[2]
    assert 0 < one[0] < 1 and one.max() < some.max() * 1.5  # the best of these is not scaled up to 1
    assert not question_share(docs, "what is it").any()  # stop words only: no signal


@pytest.mark.parametrize(
    "docs, query",
    [
        ([], "read a file"),  # no docs
        (["read the file"], "read"),  # one doc: it is the best
        (["a b c", "the of"], "what is it"),  # a question of stop words only: no signal
        (["json", "json"], "csv"),  # no doc holds a word of the question
        (["json json", "json json"], "json"),  # ties
        (["", "json"], "json"),  # an empty doc
    ],
)
def test_lexical_relevance_edge_cases(docs, query):
    np.testing.assert_allclose(lexical_relevance(docs, query), naive.lexical_relevance(docs, query))
    np.testing.assert_allclose(question_share(docs, query), naive.question_share(docs, query), rtol=1e-12)


def test_stems_meet_and_stop_words_never_match():
    rel = lexical_relevance(["The parser parses it.", "It is what it is.", "Reading files"], "parsing")
    assert rel[0] == 1.0 and rel[1] == 0.0 and rel[2] == 0.0


CHUNKS = [
    "Use csv.reader to read a CSV file row by row.",
    "csv.reader reads a CSV file one row at a time; each row is a list of strings.",
    "json.load parses a JSON document from a file object.",
    "The sqlite3 module is a DB-API interface for SQLite databases.",
    "To read a file line by line, iterate over the file object.",
]


class Letters:
    """A tiny real embedder: letter counts (no model, deterministic)."""

    name = "letters"

    def __call__(self, texts):
        return [[t.count(c) + 0.5 for c in "aeijosnrt"] for t in texts]


def words(text):
    return len(text.split())


@pytest.mark.parametrize("lam", [0.0, 0.5, 0.7, 1.0])
@pytest.mark.parametrize("budget", [0, 10, 25, 60])
def test_chunks_are_mmr_over_the_fused_relevance(lam, budget):
    query = "how do I read a CSV file?"
    sel = select_texts(CHUNKS, query, budget, embedder=Letters(), token_counter=words, lam=lam, separator="")
    E = Letters()(CHUNKS)
    q = Letters()([query])[0]
    rel = [
        naive.cosine(e, q) + LEXICAL["chunk"] * s
        for e, s in zip(E, naive.lexical_relevance(CHUNKS, query), strict=True)
    ]
    costs = [words(t) for t in CHUNKS]
    picks = naive.fused_chunks(E, q, CHUNKS, query, costs, budget, LEXICAL["chunk"], lam=lam)
    assert sel.indices.tolist() == picks
    np.testing.assert_allclose(sel.relevance, [rel[i] for i in picks])


def test_lexical_zero_or_a_vector_query_is_mmr_select_exactly():
    query = "how do I read a CSV file?"
    E = np.asarray(Letters()(CHUNKS), dtype=np.float64)
    q = np.asarray(Letters()([query])[0])
    costs = np.array([words(t) for t in CHUNKS])
    want = mmr_select(E, q, costs, 30)
    # (words add up across a blank line; joined by "" two words would merge into one, and the
    # context, counted at less than MMR paid, would be selected again with more room)
    by_text = select_texts(CHUNKS, query, 30, embedder=Letters(), token_counter=words, lexical=0)
    by_vector = select_texts(CHUNKS, q, 30, embeddings=E, costs=costs, separator="")
    np.testing.assert_array_equal(by_text.indices, want)
    np.testing.assert_array_equal(by_vector.indices, want)


def test_the_question_s_words_lift_the_chunk_that_holds_them():
    """On a real retrieved set: a word the embedding cannot see decides."""
    texts = [
        "Floor division rounds toward negative infinity, so the result is never larger than the true quotient.",
        "Integer arithmetic in Python has unlimited precision.",
        "The modulo operator returns the remainder of a division.",
    ]
    q = "Why is -22 // 10 equal to -3? floor division"
    rel = lexical_relevance(texts, q)
    assert rel.argmax() == 0


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan"), "high"])
def test_bad_lexical_is_a_clear_error(bad):
    with pytest.raises((ValueError, TypeError), match="lexical"):
        select_texts(CHUNKS, "read", 20, embedder=Letters(), lexical=bad)


@given(st.lists(st.tuples(st.integers(0, 3), st.floats(-1, 1)), max_size=12))
def test_neighbour_lift_equals_a_plain_loop(rows):
    from scwo_np.select._units import neighbour_lift

    rows = sorted(rows, key=lambda r: r[0])  # units come text by text
    text_of = np.array([t for t, _ in rows], dtype=np.int64)
    best = np.array([b for _, b in rows], dtype=np.float64)
    want = []
    for k, (t, b) in enumerate(rows):
        near = [rows[j][1] for j in (k - 1, k + 1) if 0 <= j < len(rows) and rows[j][0] == t]
        want.append(max(0.0, max(near, default=b) - b))
    np.testing.assert_array_equal(neighbour_lift(best, text_of), want)


@given(st.lists(st.integers(0, 4), min_size=1, max_size=10), st.integers(1, 5))
def test_units_of_one_text_are_partly_redundant(text_of, d):
    from scwo_np.select._units import SAME_TEXT, spread_over_texts

    text_of = np.sort(np.asarray(text_of, dtype=np.int64))
    rng = np.random.default_rng(len(text_of) * 7 + d)
    V = rng.normal(size=(len(text_of), d)) + 0.1
    out = spread_over_texts(V, text_of)
    for i in range(len(V)):
        for j in range(len(V)):
            c = naive.cosine(V[i], V[j])
            want = (
                (c + SAME_TEXT**2) / (1 + SAME_TEXT**2)
                if text_of[i] == text_of[j]
                else c / (1 + SAME_TEXT**2)
            )
            assert abs(naive.cosine(out[i], out[j]) - want) < 1e-12


class QueryLetters(Letters):
    """An asymmetric embedder: questions by their own method (as E5's "query:" prefix)."""

    name = "query-letters"

    def embed_query(self, text):
        return [text.count(c) + 2.5 for c in "aeijosnrt"]


@pytest.mark.parametrize("granularity", ["chunk", "sentence"])
def test_the_question_is_embedded_by_the_embedder_s_embed_query(granularity):
    query = "how do I read a CSV file?"
    emb = QueryLetters()
    q = np.asarray(emb.embed_query(query))
    # with sentences, the question's words off: then the same as the question's vector
    lexical = None if granularity == "chunk" else 0.0
    sel = select_texts(
        CHUNKS, query, 30, embedder=emb, token_counter=words, separator="", granularity=granularity,
        lexical=lexical,
    )  # fmt: skip
    if granularity == "chunk":
        E = Letters()(CHUNKS)
        want = naive.fused_chunks(E, q, CHUNKS, query, [words(t) for t in CHUNKS], 30, LEXICAL["chunk"])
    else:
        want = select_texts(
            CHUNKS, q, 30, embedder=Letters(), token_counter=words, separator="", granularity=granularity
        ).indices.tolist()
    assert sel.indices.tolist() == want
    assert not np.allclose(q, Letters()([query])[0])


@given(st.lists(text, min_size=0, max_size=8), st.sampled_from([1, 2, 16, 256]))
def test_hashed_tfidf_equals_the_reference(docs, dim):
    """The proxy's sentence vectors (no fitting, no model) against the plain reference; the same in
    every process (CRC-32 buckets, not Python's salted string hashes)."""
    got = hashed_tfidf(word_lists(docs), dim)
    assert got.shape == (len(docs), dim + 1) and got.dtype == np.float32
    np.testing.assert_allclose(got, np.asarray(naive.hashed_tfidf(docs, dim), dtype=np.float64).reshape(got.shape),
                               atol=1e-6)  # fmt: skip
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, rtol=1e-6)


def test_hashed_tfidf_ranks_by_shared_rare_words():
    docs = ["How do I merge two git branches?", "Merging branches in git", "The weather is fine", "the of a"]
    V = hashed_tfidf(word_lists(docs))
    sims = V @ V[0]
    assert sims[1] > 0.3 > abs(sims[2]) and sims[3] == 0.0  # no content word: the axis of its own
