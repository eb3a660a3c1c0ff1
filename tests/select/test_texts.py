"""select_texts: mmr_select on the texts' vectors and token counts, then a layout; on real text."""

import inspect
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scwo_np import load_sample, mmr_select, select_by_strategy, select_texts
from scwo_np.embed import EmbeddingCache, LSAEmbedder
from scwo_np.select import ORDERS, STRATEGIES, arrange
from scwo_np.select._units import LEXICAL
from scwo_np.tokens import WordPieceCounter, count_tokens
from tests import naive


@pytest.fixture(scope="module")
def sample():
    return load_sample()


@pytest.fixture(scope="module")
def pool(sample):
    """The 60 chunks nearest the first question, as a retriever would hand them over."""
    cand = np.argsort(-(sample.embeddings @ sample.query_embeddings[0]), kind="stable")[:60]
    return cand, [sample.texts[i] for i in cand]


def test_identical_to_mmr_select_on_the_same_vectors_and_costs(sample, pool):
    cand, texts = pool
    E, q, c = sample.embeddings[cand], sample.query_embeddings[0], sample.costs[cand]
    for lam in (0.3, 0.7, 1.0):
        for method in ("exact", "lazy", "auto"):
            sel = select_texts(texts, q, 900, embeddings=E, costs=c, lam=lam, method=method, separator="")
            idx, gains = mmr_select(E, q, c, 900, lam=lam, method=method, return_gains=True)
            np.testing.assert_array_equal(sel.indices, idx)
            np.testing.assert_array_equal(sel.gains, gains)
            assert sel.texts == [texts[i] for i in idx] and sel.total_tokens == c[idx].sum() <= 900
            assert sel.token_counter == "given" and sel.embedder == "given"


def test_a_text_and_its_copies_are_one_candidate(sample, pool):
    """Twenty copies of one line that matches the question were all picked (MMR's redundancy term
    lowers a copy by 1 - lam only); a copy is not a candidate, and the picks are mmr_select's over
    the first copies, mapped back."""
    cand, texts = pool
    line = "Could you show me how to read a CSV file with the csv module?"
    copies = texts[:30] + [line] + [line + ("\n" if k % 2 else "") for k in range(19)] + texts[30:]
    E = np.vstack([sample.embeddings[cand[:30]], np.repeat(sample.query_embeddings[:1], 20, axis=0),
                   sample.embeddings[cand[30:]]])  # fmt: skip
    c = np.concatenate([sample.costs[cand[:30]], np.full(20, 15), sample.costs[cand[30:]]])
    q = sample.query_embeddings[0]
    sel = select_texts(copies, q, 600, embeddings=E, costs=c, lam=0.7, separator="")
    assert sum(t.strip() == line for t in sel.texts) == 1
    first = np.asarray(naive.first_copies(copies))
    idx, gains = mmr_select(E[first], q, c[first], 600, lam=0.7, return_gains=True)
    np.testing.assert_array_equal(sel.indices, first[idx])
    np.testing.assert_array_equal(sel.gains, gains)


def test_from_text_alone_it_embeds_with_lsa_and_counts_with_the_estimate(sample, pool):
    _, texts = pool
    query = sample.queries[0]
    sel = select_texts(texts, query, 600)
    lsa = LSAEmbedder(texts + [query])
    costs = np.array([-(-len(t) // 4) for t in texts])
    E, q = lsa(texts), lsa([query])[0]
    # the cosine plus the question's words (select_texts' default lexical)
    rel = np.asarray(naive.relevance(E, [q])) + LEXICAL["chunk"] * np.asarray(
        naive.lexical_relevance(texts, query)
    )
    want, _ = naive.mmr_with_relevance(E, rel, costs, 600)
    np.testing.assert_array_equal(sel.indices, want)
    # with lexical=0, mmr_select on LSA's vectors exactly
    only = select_texts(texts, query, 600, lexical=0)
    np.testing.assert_array_equal(only.indices, mmr_select(E, q, costs, 600))
    assert sel.embedder == lsa.name and sel.token_counter == "estimate"
    assert sel.total_tokens <= 600 and list(sel.tokens) == list(costs[want])


@pytest.mark.integration
def test_budget_in_the_counter_s_tokens(pool):
    _, texts = pool
    wp = WordPieceCounter()
    sel = select_texts(texts, "How do I read a CSV file?", 500, token_counter=wp)
    assert sel.token_counter == "wordpiece:all-MiniLM-L6-v2"
    np.testing.assert_array_equal(sel.tokens, wp.count(sel.texts))
    assert sel.total_tokens <= 500


def test_given_costs_with_their_counter_are_held_to_the_budget_in_the_joined_context(sample):
    texts = list(sample.texts[:200])

    def quarter(t):  # len(text) // 4 rounds each piece down: the joined context counts more
        return len(t) // 4

    costs = count_tokens(texts, quarter)
    for q in sample.queries[:5]:
        for budget in (120, 300, 700):
            sel = select_texts(texts, q, budget, costs=costs, token_counter=quarter)
            assert sel.context_tokens == quarter(sel.context) <= budget
    # costs alone: the user's counts are the truth, their sum and the separators'
    sel = select_texts(texts, sample.queries[0], 300, costs=costs)
    sep = int(count_tokens(["\n\n"], "estimate")[0])
    assert (
        len(sel) > 1
        and sel.token_counter == "given"
        and sel.context_tokens == int(costs[sel.indices].sum()) + sep * (len(sel) - 1)
    )


@pytest.mark.parametrize("order", ORDERS)
def test_orders_are_layouts_of_the_same_picks(sample, pool, order):
    cand, texts = pool
    E, q, c = sample.embeddings[cand], sample.query_embeddings[0], sample.costs[cand]
    pick = select_texts(texts, q, 1200, embeddings=E, costs=c)
    sel = select_texts(texts, q, 1200, embeddings=E, costs=c, order=order)
    assert sorted(sel.indices) == sorted(pick.indices) and sel.order == order
    np.testing.assert_array_equal(pick.indices[sel.ranks], sel.indices)  # ranks: places in pick order
    np.testing.assert_array_equal(pick.gains[sel.ranks], sel.gains)
    rel = {int(i): r for i, r in zip(pick.indices, pick.relevance, strict=True)}
    if order == "original":
        assert list(sel.indices) == sorted(pick.indices)
    if order == "edges":
        by_rel = sorted(pick.indices, key=lambda i: (-rel[int(i)], list(pick.indices).index(i)))
        assert list(sel.indices) == naive.long_context_reorder(by_rel)
        ends = {int(sel.indices[0]), int(sel.indices[-1])}
        assert ends == {int(by_rel[0]), int(by_rel[1])}  # the two most relevant at the two ends
    np.testing.assert_allclose(sel.relevance, [rel[int(i)] for i in sel.indices])


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(0, 12),
    ties=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_arrange_matches_long_context_reorder(n, ties, seed):
    rng = np.random.default_rng(seed)
    picks = rng.permutation(100)[:n]
    rel = rng.integers(0, 3, n).astype(float) if ties else rng.normal(size=n)
    by_rel = sorted(range(n), key=lambda k: (-rel[k], k))
    assert list(arrange(picks, rel, "edges")) == naive.long_context_reorder(by_rel)
    assert list(picks[arrange(picks, rel, "original")]) == sorted(picks)
    assert list(arrange(picks, rel, "pick")) == list(range(n))


def test_the_cache_embeds_nothing_the_second_time(pool, tmp_path):
    _, texts = pool
    calls = []
    lsa = LSAEmbedder(texts + ["csv files"])

    def counted(ts):
        calls.append(len(ts))
        return lsa(ts)

    counted.name = lsa.name
    a = select_texts(texts, "csv files", 700, embedder=counted, cache=tmp_path / "e.sqlite")
    assert sum(calls) == len(set(texts)) + 1
    with EmbeddingCache(tmp_path / "e.sqlite") as cache:
        b = select_texts(texts, "csv files", 700, embedder=counted, cache=cache)
    assert sum(calls) == len(set(texts)) + 1  # all from the cache
    np.testing.assert_array_equal(a.indices, b.indices)


def test_no_texts_selects_nothing():
    sel = select_texts([], "anything", 100)
    assert len(sel) == 0 and sel.indices.dtype == np.int64 and sel.total_tokens == 0


@pytest.mark.parametrize("granularity, what", [("chunk", "text"), ("sentence", "sentence")])
def test_nothing_that_fits_is_said(granularity, what):
    texts = ["JSON is parsed by json.load from an open file.", "Files are opened with open()."]
    with pytest.warns(
        UserWarning,
        match=rf"no {what} fits in a budget of 3 tokens \(the smallest costs 8, counted by 'estimate'\)",
    ):
        sel = select_texts(texts, "parse json", 3, granularity=granularity)
    assert sel.context == "" and len(sel) == 0
    with warnings.catch_warnings():  # and nothing said when something fits
        warnings.simplefilter("error")
        assert len(select_texts(texts, "parse json", 40, granularity=granularity)) == 2


@pytest.mark.parametrize(
    "kwargs, err, match",
    [
        (dict(texts=["a b", None]), TypeError, r"texts\[1\] is None"),
        (dict(texts=["a b", 3]), TypeError, r"texts\[1\] is int"),
        (dict(texts=["a b", "  "]), ValueError, r"texts\[1\] is empty"),
        (dict(texts="one string"), TypeError, "sequence of strings"),
        (dict(query="  "), ValueError, "query is empty"),
        (dict(order="middle"), ValueError, "order"),
        (dict(budget=-1), ValueError, "budget"),
        (dict(lam=2.0), ValueError, "lam"),
        (dict(embedder=lambda ts: np.ones((1, 3))), ValueError, "returned 1 row"),
        (dict(embedder=lambda ts: np.full((len(ts), 3), np.nan)), ValueError, "NaN"),
        (dict(token_counter=lambda s: -2), ValueError, "cannot be negative"),
        (dict(embedder="bert"), ValueError, "embedder must be one of 'lsa', 'minilm'; got 'bert'"),
        (dict(embedder=42), TypeError, "embedder must be callable"),
        (dict(embeddings=np.eye(2)), ValueError, "pass embedder="),
        (
            dict(query=np.ones(3), embeddings=np.ones((5, 3)), costs=[1, 1]),
            ValueError,
            r"embeddings must have one row per text \(2\); got 5",
        ),  # not a costs error
        (
            dict(texts=["same text"] * 2, query=np.ones(3), embeddings=np.ones((5, 3))),
            ValueError,
            r"embeddings must have one row per text \(2\); got 5",
        ),  # nor silence for copies
    ],
)
def test_bad_input_names_the_argument(kwargs, err, match):
    args = dict(texts=["csv.reader reads rows", "json.load parses JSON"], query="read csv", budget=50)
    args.update(kwargs)
    with pytest.raises(err, match=match):
        select_texts(args.pop("texts"), args.pop("query"), args.pop("budget"), **args)


@pytest.mark.parametrize("strategy", [s for s in STRATEGIES if s != "mmr"])
@pytest.mark.parametrize("budget", [0, 12, 40])
def test_a_strategy_over_texts_is_select_by_strategy_on_their_vectors(strategy, budget):
    texts = ["Use csv.reader to read a CSV file row by row.", "csv.reader reads a CSV file one row at a time.",
             "json.load parses a JSON document from a file.", "The sqlite3 module is a DB-API interface for SQLite.",
             "pathlib.Path.read_text reads a whole file."]  # fmt: skip
    emb = LSAEmbedder(texts + ["how do I read a CSV file?"], dim=4)
    sel = select_texts(
        texts, "how do I read a CSV file?", budget, embedder=emb, strategy=strategy, separator=""
    )
    E = emb(texts)
    q = emb(["how do I read a CSV file?"])[0]
    costs = count_tokens(texts, "estimate")
    options = {"lam": 0.7} if "lam" in inspect.signature(STRATEGIES[strategy]).parameters else {}
    want = select_by_strategy(E, q, costs, budget, strategy=strategy, **options)
    assert sel.indices.tolist() == want.tolist()
    assert sel.total_tokens <= budget


def test_a_strategy_is_for_whole_texts():
    with pytest.raises(ValueError, match="granularity='chunk'"):
        select_texts(["a b c.", "d e f."], "b", 10, strategy="dpp", granularity="sentence")
    with pytest.raises(ValueError, match="lexical is MMR's"):
        select_texts(["read a file.", "parse some json."], "read", 10, strategy="dpp", lexical=0.1)
    with pytest.raises(ValueError, match="strategy must be one of"):
        select_texts(["a b c.", "d e f."], "b", 10, strategy="nope")


def test_strategy_options_and_a_sentence_embedder_of_another_dimension_are_named():
    texts = ["Use csv.reader to read a CSV file.", "json.load parses a JSON document."]
    with pytest.raises(ValueError, match="strategy 'ssd' takes 'lam', 'gamma', 'cost_exponent'; got 'gama'"):
        select_texts(texts, "read csv", 20, strategy="ssd", strategy_options={"gama": 0.5})
    with pytest.raises(ValueError, match="strategy_options are for the other strategies"):
        select_texts(texts, "read csv", 20, strategy_options={"gamma": 0.5})
    E = np.eye(2, 5)  # the documents' vectors: 5 dimensions; the embedder's: 2
    with pytest.raises(ValueError, match="gives vectors of dimension 2 but embeddings have dimension 5"):
        select_texts(texts, "read csv", 20, granularity="sentence", embeddings=E,
                     embedder=lambda ts: [[1.0, len(t)] for t in ts])  # fmt: skip
