"""lam="auto" (issue 34): the rule equals its plain reference, and every MMR entry point applies it."""

import naive
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conftest import selection_problems
from scwo_np import MMR_METHODS, mmr_select, mmr_select_multi
from scwo_np.cli import main
from scwo_np.select import (
    STRATEGIES,
    auto_lam,
    query_kind,
    select_batch,
    select_by_strategy,
    select_texts,
)

BROAD = [
    "What is the difference between a list and a tuple?",
    "Compare asyncio and threading.",
    "Give an overview of the json module.",
    "List all the ways to format a string.",
    "What are the pros and cons of using __slots__?",
    "Summarize the changes in Python 3.12.",
    "python vs. ruby for scripting",
    "What kinds of exceptions can open() raise?",
]
LOOKUP = [
    "How do I read a file line by line?",
    "Why does Python use indentation?",
    "Is there a mailing list for Python?",  # "list" alone is not a cue
    "What is a generator?",
    "How can I find the methods or attributes of an object?",
]


@pytest.mark.parametrize("q", BROAD)
def test_broad_questions(q):
    assert query_kind(q) == "broad" and naive.auto_lam([], q) == 0.9 == auto_lam([], q)


@pytest.mark.parametrize("q", LOOKUP)
def test_lookup_questions(q):
    assert query_kind(q) == "lookup" and naive.auto_lam([], q) == 0.7 == auto_lam([], q)


relevances = st.one_of(
    hnp.arrays(np.float64, st.integers(0, 60), elements=st.floats(-1, 1)),
    hnp.arrays(np.float64, st.integers(0, 60), elements=st.sampled_from([0.1, 0.5, 0.9])),  # ties
    st.integers(10, 60).map(lambda n: np.r_[np.full(5, 0.8), np.linspace(0.3, 0.2, n - 5)]),  # a group
)


@given(rel=relevances, question=st.none() | st.sampled_from(BROAD + LOOKUP))
def test_the_rule_equals_its_reference(rel, question):
    assert auto_lam(rel, question) == naive.auto_lam(rel.tolist(), question)


def test_the_rule_on_sets_made_by_hand():
    flat = np.linspace(0.6, 0.4, 50)
    group = np.r_[[0.8, 0.79, 0.78, 0.78, 0.77], np.linspace(0.45, 0.40, 45)]
    assert auto_lam(flat) == 0.7 and auto_lam(group) == 0.9
    assert auto_lam(group[:9]) == 0.7  # too few candidates to tell
    # the same shape at 500 candidates: its top tenth stands out as much
    assert auto_lam(np.repeat(group, 10)) == 0.9 and auto_lam(np.repeat(flat, 10)) == 0.7
    assert auto_lam(np.full(30, 0.5)) == 0.7  # nothing stands out: all equal
    # shifting and scaling every cosine (another embedder's scale) changes nothing
    assert auto_lam(0.3 * group + 0.5) == 0.9 and auto_lam(0.3 * flat + 0.5) == 0.7


@pytest.mark.parametrize("method", MMR_METHODS)
@given(problem=selection_problems(max_n=30))
def test_mmr_select_auto_equals_the_reference(method, problem):
    E, q, costs, budget, _ = problem
    lam = naive.auto_lam(naive.relevance(E.tolist(), [q.tolist()], dtype=E.dtype))
    picks, gains = mmr_select(E, q, costs, budget, lam="auto", method=method, return_gains=True)
    rp, rg = naive.mmr_select(E.tolist(), [q.tolist()], costs.tolist(), budget, lam=lam, dtype=E.dtype)
    assert picks.tolist() == rp
    np.testing.assert_array_equal(gains, np.array(rg))


@given(problem=selection_problems(allow_empty=False), w=st.floats(0.1, 0.9))
def test_mmr_select_multi_auto_equals_the_reference(problem, w):
    E, q, costs, budget, _ = problem
    Q = np.stack([q, E[0].astype(np.float64)])
    rel = naive.relevance(E.tolist(), Q.tolist(), [w, 1 - w], dtype=E.dtype)
    lam = naive.auto_lam(rel)
    picks = mmr_select_multi(E, Q, costs, budget, weights=[w, 1 - w], lam="auto")
    rp, _ = naive.mmr_select(E.tolist(), Q.tolist(), costs.tolist(), budget, lam=lam, weights=[w, 1 - w],
                             dtype=E.dtype)  # fmt: skip
    assert picks.tolist() == rp


def test_select_batch_auto_is_each_problems_own():
    rng = np.random.default_rng(3)
    sizes = [0, 1, 9, 12, 40, 40]
    E = rng.standard_normal((sum(sizes), 64))
    offsets = np.r_[0, np.cumsum(sizes)]
    Q = rng.standard_normal((len(sizes), 64))
    g = offsets[5]  # the last set: its tenth closest to its query stands out together
    E[g : g + 4] = Q[5] + 0.05 * rng.standard_normal((4, 64))
    costs = rng.integers(1, 5, sum(sizes))
    res = select_batch(E, Q, costs, 20, offsets=offsets, lam="auto")
    lams = []
    for b in range(len(sizes)):
        s, e = offsets[b], offsets[b + 1]
        mine = mmr_select(E[s:e], Q[b], costs[s:e], 20, lam="auto")
        assert (
            res.indices[res.offsets[b] : res.offsets[b + 1]].tolist() == mine.tolist()
        )  # positions in the set
        lams.append(naive.auto_lam(naive.relevance(E[s:e].tolist(), [Q[b].tolist()])))
    assert 0.9 in lams and 0.7 in lams  # both sides of the rule were taken
    assert res.lams.tolist() == lams  # and the result says which lam each problem took
    fixed = select_batch(E, Q, costs, 20, offsets=offsets, lam=0.5)
    assert fixed.lams.tolist() == [0.5] * len(sizes)
    other = select_batch(E, Q, costs, 20, offsets=offsets, lam=0.5, strategy="dpp")
    assert other.lams.tolist() == [0.5] * len(sizes)


def test_select_by_strategy_mmr_takes_auto_and_the_others_say_why_not():
    rng = np.random.default_rng(0)
    E, q, costs = rng.standard_normal((30, 8)), rng.standard_normal(8), np.ones(30, int)
    assert (
        select_by_strategy(E, q, costs, 5, strategy="mmr", lam="auto").tolist()
        == mmr_select(E, q, costs, 5, lam="auto").tolist()
    )
    for s in STRATEGIES:
        if s in ("mmr", "knapsack"):
            continue
        with pytest.raises(ValueError, match="lam='auto' chooses MMR's trade-off"):
            select_by_strategy(E, q, costs, 5, strategy=s, lam="auto")
    with pytest.raises(ValueError, match="lam='auto' chooses MMR's trade-off"):
        select_batch(E, q[None], costs, 5, offsets=[0, 30], lam="auto", strategy="dpp")
    with pytest.raises(TypeError, match="or 'auto'"):
        mmr_select(E, q, costs, 5, lam="0.5")


TEXTS = [
    "A list is a mutable sequence. You can append to it.",
    "A tuple is an immutable sequence. It cannot change after creation.",
    "Dictionaries map keys to values.",
    "Sets hold unique elements.",
    "Strings are sequences of characters.",
    "Lists and tuples both support indexing and slicing.",
]


def _same(a, b):
    return a.indices.tolist() == b.indices.tolist() and a.texts == b.texts and a.spans == b.spans


@pytest.mark.parametrize("granularity", ["chunk", "sentence"])
def test_select_texts_reads_the_question(granularity):
    def sel(question, lam):
        return select_texts(TEXTS, question, 30, lam=lam, granularity=granularity)

    broad = sel("What is the difference between a list and a tuple?", "auto")
    assert broad.lam == 0.9 and _same(broad, sel("What is the difference between a list and a tuple?", 0.9))
    look = sel("How do I append to a list?", "auto")
    assert look.lam == 0.7 and _same(look, sel("How do I append to a list?", 0.7))
    assert sel("How do I append?", 0.5).lam == 0.5


def test_select_texts_with_a_vector_query_uses_the_set_alone():
    rng = np.random.default_rng(1)
    E = rng.standard_normal((12, 8))
    texts = [f"text number {i}." for i in range(12)]
    sel = select_texts(texts, E[0], 100, embeddings=E, lam="auto")
    rel = E @ E[0] / (np.linalg.norm(E, axis=1) * np.linalg.norm(E[0]))
    assert sel.lam == naive.auto_lam(rel.tolist())
    assert sel.indices.tolist() == mmr_select(E, E[0], [3] * 12, 100, lam=sel.lam).tolist()


def test_scwo_select_lam_auto(tmp_path, capsys):
    import json

    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in TEXTS))
    argv = ["select", str(path), "--query", "Compare lists and tuples.", "--budget", "30", "--no-cache", "-q"]
    assert main(argv + ["--lam", "auto"]) == 0
    auto = capsys.readouterr().out
    assert main(argv + ["--lam", "0.9"]) == 0
    assert capsys.readouterr().out == auto
