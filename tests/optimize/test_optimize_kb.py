import asyncio
import json
import warnings

import naive
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scwo_np import mmr_select
from scwo_np.optimize import KB_DEFAULTS, KBContextOptimizer

WORDS = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"]


@st.composite
def match_lists(draw, max_n=10):
    n = draw(st.integers(0, max_n))
    matches = []
    for i in range(n):
        if matches and draw(st.booleans()):
            text = matches[draw(st.integers(0, len(matches) - 1))]["text"]
        else:
            text = " ".join(draw(st.lists(st.sampled_from(WORDS), max_size=6)))
        m = {"id": f"m{i}", "text": text, "score": draw(st.sampled_from([0.1, 0.5, 0.9]))}
        if draw(st.booleans()):
            m["path"] = draw(st.sampled_from(["a.py", "b.py"]))
        if draw(st.booleans()):
            m["tokens"] = draw(st.integers(0, 60))
        matches.append(m)
    options = {
        "deduplication": draw(st.booleans()),
        "dedup_threshold": draw(st.sampled_from([0.5, 0.9])),
        "dedup_grouping": draw(st.sampled_from(["greedy", "components"])),
        "diversification": draw(st.booleans()),
        "diversity_threshold": draw(st.sampled_from([0.0, 0.3])),
        "max_per_source": draw(st.sampled_from([1, 3])),
        "adaptive_selection": draw(st.booleans()),
        "budget": draw(st.none() | st.integers(0, 150)),
        "max_chunks": draw(st.none() | st.integers(0, 5)),
    }
    return matches, options


def reference(matches, opts):
    """The ADR's four steps, composed from the plain references."""
    opts = {**KB_DEFAULTS, **opts}
    texts = [m["text"] for m in matches]
    scores = [m["score"] for m in matches]
    alive = naive.best_first(scores, len(matches))
    if opts["deduplication"]:
        ref = naive.dedup if opts["dedup_grouping"] == "greedy" else naive.dedup_components
        _, dropped, _, _ = ref(
            texts, lambda i, j: naive.jaccard(texts[i], texts[j]), opts["dedup_threshold"], scores
        )
        alive = [i for i in alive if i not in dropped]
    if opts["diversification"] and alive:
        keep = naive.diversify(
            len(alive), [matches[i].get("path") for i in alive], [scores[i] for i in alive],
            opts["max_per_source"], opts["diversity_threshold"],
            lambda x, y: naive.jaccard(texts[alive[x]], texts[alive[y]]),
        )[0]  # fmt: skip
        alive = [alive[x] for x in keep]
    if opts["adaptive_selection"] and opts["budget"] is not None:
        costs = [
            m.get("tokens", -(-len(m["text"]) // 4) if m["text"] else 200)
            for m in (matches[i] for i in alive)
        ]
        pick = naive.fit_budget(costs, opts["budget"], [scores[i] for i in alive], "stop")
        alive = [alive[x] for x in pick]
    if opts["max_chunks"] is not None:
        alive = alive[: opts["max_chunks"]]
    return alive


@given(match_lists())
def test_kb_pipeline_equals_composed_reference(case):
    matches, options = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # budget without adaptive_selection: the ADR's no-op
        res = KBContextOptimizer().optimize(matches, options)
    want = reference(matches, options)
    assert res.indices.tolist() == want
    assert [m["id"] for m in res.chunks] == [matches[i]["id"] for i in want]
    # Every match is either selected or removed exactly once, with a reason.
    assert sorted(res.indices.tolist() + [r.index for r in res.removed]) == list(range(len(matches)))
    assert all(r.reason for r in res.removed)


def test_adr_json_config_and_defaults():
    config = json.loads(
        '{"knowledge": {"engines": [{"options": {"search": {"optimization": {'
        '"deduplication": true, "dedup_threshold": 0.9, "diversification": true,'
        '"diversity_threshold": 0.3, "max_per_source": 3, "adaptive_selection": false,'
        '"avg_tokens_per_chunk": 200}}}}]}}'
    )
    opts = KBContextOptimizer.options(config)
    assert opts == KB_DEFAULTS
    matches = [
        {"id": i, "text": f"chunk number n{i:03d} of the same file", "path": "f.ts", "score": 1 - i / 10}
        for i in range(6)
    ]
    res = KBContextOptimizer().optimize(matches, config)
    assert res.indices.tolist() == [0]  # the others are too similar (Jaccard 5/7 > 0.7)
    assert {r.step for r in res.removed} == {"diversification"}


def test_mmr_selection_when_embeddings_are_given():
    rng = np.random.default_rng(0)
    E = rng.standard_normal((12, 8))
    q = rng.standard_normal(8)
    matches = [
        {
            "id": i,
            "text": f"distinct text {i} " + "w" * i,
            "score": float(E[i] @ q),
            "embedding": E[i].tolist(),
            "tokens": 30,
        }
        for i in range(12)
    ]
    opts = {
        "deduplication": False,
        "diversification": False,
        "budget": 100,
        "query_embedding": q.tolist(),
    }
    res = KBContextOptimizer().optimize(matches, opts)
    assert res.indices.tolist() == mmr_select(E, q, np.full(12, 30), 100).tolist()
    assert {r.step for r in res.removed} == {"mmr_selection"}
    with pytest.raises(ValueError, match="needs query_embedding"):
        KBContextOptimizer().optimize(matches[:2], {"selection": "mmr", "budget": 50})


def test_async_wrapper():
    res = asyncio.run(
        KBContextOptimizer().optimize_async([{"id": 1, "text": "hello there world", "score": 1.0}])
    )
    assert res.indices.tolist() == [0]


@pytest.mark.parametrize(
    "matches, options, exc, match",
    [
        ([{"id": 1, "score": 1.0}], {}, ValueError, "has no text"),
        (
            [{"id": 1, "text": "a", "score": 1.0}, {"id": 1, "text": "b", "score": 1.0}],
            {},
            ValueError,
            "unique",
        ),
        ([{"id": 1, "text": "a", "score": float("nan")}], {}, ValueError, "NaN"),
        ([], {"dedupThreshold": 0.5}, ValueError, "unknown option"),
        ([], {"dedup_threshold": 2}, ValueError, "dedup_threshold"),
        ([], {"max_per_source": 0}, ValueError, "max_per_source"),
        ([], {"budget": -5}, ValueError, "budget"),
        (["not a dict"], {}, TypeError, "must be a dict"),
    ],
)
def test_bad_input(matches, options, exc, match):
    with pytest.raises(exc, match=match):
        KBContextOptimizer().optimize(matches, options)


def test_no_scores_warns_and_ranks_in_input_order():
    matches = [
        {"id": i, "text": t, "path": f"f{i}.py"}
        for i, t in enumerate(["alpha beta", "gamma delta", "eps zeta"])
    ]
    with pytest.warns(UserWarning, match="3 of 3 matches have no 'score'"):
        res = KBContextOptimizer().optimize(matches, {"max_chunks": 2})
    assert [m["id"] for m in res.chunks] == [0, 1]


def test_no_scores_with_embeddings_ranks_by_the_query(recwarn):
    matches = [
        {"id": i, "text": t, "path": f"f{i}.py", "embedding": e}
        for i, (t, e) in enumerate(
            [("alpha beta", [1.0, 0.0]), ("gamma delta", [0.6, 0.8]), ("eps zeta", [0.0, 1.0])]
        )
    ]
    res = KBContextOptimizer().optimize(matches, {"max_chunks": 2, "query_embedding": [0.0, 1.0]})
    assert [m["id"] for m in res.chunks] == [2, 1]
    assert not [w for w in recwarn if "score" in str(w.message)]


@pytest.mark.parametrize("score, exc", [("high", TypeError), (True, TypeError), (float("nan"), ValueError)])
def test_bad_score_names_the_match(score, exc):
    with pytest.raises(exc, match=r"matches\[1\]"):
        KBContextOptimizer().optimize([{"text": "a", "score": 1.0}, {"text": "b", "score": score}])


TEXTS3 = ["alpha beta gamma", "delta epsilon zeta", "theta iota kappa"]


@pytest.mark.parametrize(
    "tokens, error, match",
    [
        (3.7, ValueError, r"matches\[1\] tokens must be a whole token count; got 3.7"),
        (10**30, ValueError, "more than one chunk can hold"),
        (1e30, ValueError, "more than one chunk can hold"),
        (float("nan"), ValueError, "whole token count"),
        (-1, ValueError, "non-negative"),
        ("3", TypeError, "whole token count"),
    ],
)
def test_given_token_counts_are_checked_never_truncated(tokens, error, match):
    """Issue 32: three chunks of 3.7 tokens were kept under a budget of 10 (int() truncated them)."""
    matches = [{"chunkId": str(i), "text": t, "score": 1.0, "tokens": 3} for i, t in enumerate(TEXTS3)]
    matches[1]["tokens"] = tokens
    with pytest.raises(error, match=match):
        KBContextOptimizer().optimize(matches, {"budget": 10, "adaptive_selection": True})
    matches[1]["tokens"] = 4.0  # a whole float is a count
    res = KBContextOptimizer().optimize(matches, {"budget": 10, "adaptive_selection": True})
    assert res.indices.tolist() == [0, 1, 2]


def test_token_budget_without_adaptive_selection_says_it_is_not_applied():
    matches = [{"chunkId": str(i), "text": t, "score": 1.0, "tokens": 5} for i, t in enumerate(TEXTS3)]
    with pytest.warns(UserWarning, match="budget=6 is not applied"):
        res = KBContextOptimizer().optimize(matches, {"budget": 6})
    assert res.indices.tolist() == [0, 1, 2]  # as the ADR says: no cut without adaptive_selection
    # with embeddings and a query_embedding, selection='sort' is what leaves the budget out, and it says so
    embedded = [{**m, "embedding": [1.0, float(i)]} for i, m in enumerate(matches)]
    with pytest.warns(UserWarning, match="selection='sort' takes the ADR's order"):
        KBContextOptimizer().optimize(
            embedded, {"budget": 6, "query_embedding": [1.0, 0.0], "selection": "sort"}
        )


def test_dedup_never_drops_a_match_against_a_dropped_one():
    """A chain a ~ b ~ c (Jaccard 9/11 each) with a, c far apart (8/12): c stays by default."""
    texts = [
        "one two three four five six seven eight nine ten",
        "one two three four five six seven eight nine eleven",
        "one two three four five six seven eight twelve eleven",
    ]
    matches = [{"id": k, "text": t, "score": 1.0 - k / 10} for k, t in enumerate(texts)]
    opts = {"dedup_threshold": 0.8, "diversification": False}
    res = KBContextOptimizer().optimize(matches, opts)
    assert [m["id"] for m in res.chunks] == [0, 2]
    [r] = res.removed_by("deduplication")
    assert r.index == 1 and r.detail["duplicate_of"] == 0 and r.detail["similarity"] >= 0.8
    res = KBContextOptimizer().optimize(matches, {**opts, "dedup_grouping": "components"})
    assert [m["id"] for m in res.chunks] == [0]
    with pytest.raises(ValueError, match="dedup_grouping must be one of 'greedy', 'components'"):
        KBContextOptimizer().optimize(matches, {"dedup_grouping": "chains"})
    with pytest.raises(TypeError, match="dedup_grouping"):
        KBContextOptimizer().optimize(matches, {"dedup_grouping": ["greedy"]})


def test_max_per_source_without_any_source_says_it_is_not_applied():
    """A new user's matches named their file in another field: no cap, and nothing said."""
    matches = [
        {"id": str(i), "text": f"{t} {i}", "score": 1.0 - i / 10, "filename": "a.py"}
        for i, t in enumerate(TEXTS3)
    ]
    with pytest.warns(
        UserWarning, match="max_per_source=1 is not applied: no match has a 'path', 'file' or 'source'"
    ):
        res = KBContextOptimizer().optimize(matches, {"max_per_source": 1})
    assert len(res.chunks) == len(matches)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        KBContextOptimizer().optimize([{**m, "path": m["filename"]} for m in matches], {"max_per_source": 1})
