import naive
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import selection_problems
from scwo_np.optimize._budget import estimate_tokens, fit_budget, top_k
from scwo_np.optimize._diversify import REASONS, diversify

WORDS = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "Alpha", "x", "東京", "😀😀😀"]


@st.composite
def chunks(draw, max_n=12):
    n = draw(st.integers(0, max_n))
    texts = [" ".join(draw(st.lists(st.sampled_from(WORDS), max_size=5))) for _ in range(n)]
    sources = draw(st.none() | st.just([draw(st.sampled_from(["a", "b", "c", None])) for _ in range(n)]))
    scores = draw(st.none() | st.just([draw(st.sampled_from([0.0, 0.5, 1.0])) for _ in range(n)]))
    return texts, sources, scores


@given(chunks(), st.sampled_from([None, 1, 2, 3]), st.sampled_from([0.0, 0.3, 0.5, 1.0]))
def test_diversify_equals_reference(chunk, cap, thr):
    texts, sources, scores = chunk
    if not texts:
        return
    r = diversify(texts, sources=sources, scores=scores, max_per_source=cap, diversity_threshold=thr)
    want = naive.diversify(
        len(texts), sources, scores, cap, thr, lambda i, j: naive.jaccard(texts[i], texts[j])
    )
    assert r.keep.tolist() == want[0]
    assert r.dropped.tolist() == want[1]
    assert r.reason.tolist() == want[2]
    assert r.similar_to.tolist() == want[3]
    np.testing.assert_array_equal(r.similarity, np.array(want[4], dtype=np.float64))


@given(selection_problems(allow_empty=False), st.sampled_from([None, 1, 2]), st.sampled_from([0.0, 0.3, 0.9]))
def test_diversify_with_embeddings_equals_reference(problem, cap, thr):
    E, _, costs, _, _ = problem
    sources = [f"s{c % 3}" for c in costs.tolist()]
    scores = (costs % 4).astype(float)
    r = diversify(sources=sources, scores=scores, embeddings=E, max_per_source=cap, diversity_threshold=thr)
    dt = E.dtype
    want = naive.diversify(len(E), sources, scores, cap, thr, lambda i, j: naive.cosine(E[i], E[j], dt))
    assert r.keep.tolist() == want[0] and r.dropped.tolist() == want[1]
    assert r.similar_to.tolist() == want[3]


def test_diversify_defaults_and_reasons():
    texts = [f"unique words number {k} here{k}" for k in range(8)]
    r = diversify(texts, sources=["f"] * 8, scores=np.arange(8.0))
    assert r.keep.tolist() == [7, 6, 5]  # ADR default: 3 per file, best first
    assert {REASONS[k] for k in r.reason} == {"source_cap"}
    r = diversify(texts, sources=[None] * 8)  # unknown sources are never capped
    assert len(r.keep) == 8


@given(
    st.lists(st.integers(0, 50), max_size=12),
    st.integers(0, 120),
    st.none() | st.lists(st.sampled_from([0.1, 0.5, 0.9]), min_size=12, max_size=12),
    st.sampled_from(["stop", "skip"]),
)
def test_fit_budget_equals_reference(costs, budget, scores, mode):
    scores = None if scores is None else scores[: len(costs)]
    got = fit_budget(np.array(costs, dtype=np.int64), budget, scores=scores, mode=mode)
    assert got.tolist() == naive.fit_budget(costs, budget, scores, mode)
    assert sum(costs[i] for i in got) <= budget


def test_estimates_and_top_k():
    assert estimate_tokens(["x" * 9, "", "é" * 4]).tolist() == [2, 0, 1]
    assert estimate_tokens(["x" * 9], rounding="ceil").tolist() == [3]
    assert top_k([0.1, 0.3, 0.3], 2).tolist() == [1, 2]
    assert top_k([0.1, 0.3], None).tolist() == [1, 0]


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: diversify(["a b c"], diversity_threshold=1.5), ValueError, "diversity_threshold"),
        (lambda: diversify(["a"], max_per_source=0), ValueError, "max_per_source"),
        (lambda: diversify(sources=["a"], scores=[1.0, 2.0]), ValueError, "one entry per chunk"),
        (lambda: diversify(sources=["a", "b"]), ValueError, "needs texts= or embeddings="),
        (lambda: diversify(["a"], sources=[["list"]]), TypeError, "not hashable"),
        (lambda: diversify(["a", "b"], scores=[1.0, float("nan")]), ValueError, "NaN"),
        (lambda: fit_budget([1, -1], 5), ValueError, "non-negative"),
        (lambda: fit_budget([1, 2], 5, mode="greedy"), ValueError, "mode must be one of"),
        (lambda: top_k([1.0], -1), ValueError, "k must be an integer >= 0"),
        (lambda: estimate_tokens(["ok", None]), TypeError, r"texts\[1\]"),
    ],
)
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
