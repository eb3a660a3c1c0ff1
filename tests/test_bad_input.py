"""Bad input: the budget holds, sizes are bounded, errors name the argument.

The cases found by the systematic pass of issue 12 (costs that wrapped to
negative int64, budgets too large to convert, a 2-D query taken for several,
an unbounded ``num_perm``), on every selection entry point.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from scwo_np import mmr_select, select_batch, topk_relevance, truncate
from scwo_np.dedup import deduplicate, lsh_params
from scwo_np.optimize._budget import fit_budget
from scwo_np.validation import MAX_BUDGET, MAX_COST

E = np.random.default_rng(0).standard_normal((6, 4))
HUGE_COSTS = [
    [1e30, 5, 2, 7, 1, 4],
    [2.0**63, 5, 2, 7, 1, 4],
    [2**62, 5, 2, 7, 1, 4],
    [MAX_COST + 1, 1, 1, 1, 1, 1],
]

SELECTORS = {
    "mmr_select": lambda c, b: mmr_select(E, E[0], c, b),
    "mmr_select exact": lambda c, b: mmr_select(E, E[0], c, b, method="exact"),
    "select_batch": lambda c, b: select_batch(E[None], E[:1], np.asarray(c)[None], b).indices,
    "topk_relevance": lambda c, b: topk_relevance(E, E[0], c, b),
    "truncate": lambda c, b: truncate(c, b),
    "fit_budget stop": lambda c, b: fit_budget(c, b),
    "fit_budget skip": lambda c, b: fit_budget(c, b, mode="skip"),
}


@pytest.mark.parametrize("name", SELECTORS)
@pytest.mark.parametrize("costs", HUGE_COSTS, ids=["1e30", "2^63 float", "2^62", "MAX_COST+1"])
def test_costs_too_large_are_rejected_not_wrapped(name, costs):
    # select_batch's padded (1, n) input names the problem and the row: costs[0, 0]
    with pytest.raises(ValueError, match=r"costs\[0(, 0)?\] = .* more than one chunk can hold"):
        SELECTORS[name](costs, 10)


@pytest.mark.parametrize("name", SELECTORS)
def test_fractional_costs_are_rejected(name):
    with pytest.raises(ValueError, match="whole token counts"):
        SELECTORS[name]([3.7, 1, 1, 1, 1, 1], 3)


@pytest.mark.parametrize("name", SELECTORS)
@pytest.mark.parametrize("budget", [10**30, 2**64 - 1, 2**63, float(2**70), MAX_BUDGET])
def test_huge_budgets_mean_everything_fits(name, budget):
    costs = [MAX_COST] * 6
    got = np.sort(np.asarray(SELECTORS[name](costs, budget)))
    assert got.tolist() == list(range(6))


@pytest.mark.parametrize("name", SELECTORS)
def test_the_same_huge_budget_gives_the_same_answer_every_call(name):
    first = SELECTORS[name]([1, 5, 2, 7, 1, 4], 10**30)
    for budget in (10**30, 2**64 - 1, MAX_BUDGET):
        assert np.array_equal(SELECTORS[name]([1, 5, 2, 7, 1, 4], budget), first)


def test_a_2d_query_is_not_taken_for_several():
    with pytest.raises(ValueError, match="mmr_select_multi"):
        mmr_select(E, E[:2], np.ones(6), 3)


@pytest.mark.parametrize(
    "num_perm, error", [(0, ValueError), (100_000, ValueError), (1.5, TypeError), (True, TypeError)]
)
def test_num_perm_is_bounded(num_perm, error):
    with pytest.raises(error, match="num_perm"):
        deduplicate(["a b c", "a b c"], method="minhash", num_perm=num_perm)
    with pytest.raises(error, match="num_perm"):
        lsh_params(0.9, num_perm)


def test_cli_huge_token_count_is_bad_input(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"embedding": [1, 0], "tokens": 1e30}\n{"embedding": [0, 1], "tokens": 3}\n')
    r = subprocess.run(
        [sys.executable, "-m", "scwo_np.cli", "select", str(path), "--query-index", "1", "--budget", "10"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2 and r.stdout == ""
    assert "more than one chunk can hold" in r.stderr and "Traceback" not in r.stderr


def test_cli_quiet_on_a_closed_pipe(tmp_path):
    r = subprocess.run(
        f"{sys.executable} -m scwo_np.cli sample | head -c 10 > /dev/null",
        shell=True,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0
    assert r.stderr == ""


def test_lsa_without_a_corpus_says_where_the_texts_go():
    """as_embedder("lsa") said only "corpus must hold at least 2 non-empty texts" (a new user's
    first try): it names the argument and the alternative now."""
    from scwo_np.embed import as_embedder

    with pytest.raises(ValueError, match=r"as_embedder\('lsa', corpus\) fits the space on corpus.*'minilm'"):
        as_embedder("lsa")
