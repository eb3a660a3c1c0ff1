"""The exact knapsack strategy (issue 19) and the ``select_by_strategy`` entry point."""

import itertools

import naive
import numpy as np
import pytest
from hypothesis import given

import scwo_np
from conftest import selection_problems
from scwo_np import STRATEGIES, mmr_select
from scwo_np.select import knapsack_select, select_by_strategy


@given(problem=selection_problems())
def test_knapsack_equals_the_plain_table(problem):
    E, q, costs, budget, _ = problem
    picks = knapsack_select(E, q, costs, budget)
    assert picks.dtype == np.int64
    assert picks.tolist() == naive.knapsack(E.tolist(), q.tolist(), costs.tolist(), budget, dtype=E.dtype)
    assert costs[picks].sum() <= budget and len(set(picks.tolist())) == len(picks)


@given(problem=selection_problems(max_n=9))
def test_knapsack_is_the_optimum_and_no_greedy_beats_it(problem):
    E, q, costs, budget, _ = problem
    rel = np.array(naive.relevance(E.tolist(), [q.tolist()], dtype=E.dtype))
    best = 0.0
    for r in range(len(E) + 1):
        for s in itertools.combinations(range(len(E)), r):
            if costs[list(s)].sum() <= budget:
                best = max(best, float(rel[list(s)].sum()))
    got = float(rel[knapsack_select(E, q, costs, budget)].sum())
    assert got == pytest.approx(best, rel=1e-12, abs=1e-12)
    for lam in (1.0, 0.7):
        assert float(rel[mmr_select(E, q, costs, budget, lam=lam)].sum()) <= got + 1e-12


def test_the_optimum_where_top_k_by_relevance_is_far_from_it():
    E = np.array([[1.0, 0.0], [0.95, 0.31], [0.9, 0.44], [0.0, 1.0], [-1.0, 0.0]])
    costs = [300, 150, 150, 0, 0]  # a free chunk of relevance 0 and one of -1 are never taken
    assert knapsack_select(E, [1.0, 0.0], costs, 300).tolist() == [1, 2]
    assert mmr_select(E, [1.0, 0.0], costs, 300, lam=1.0).tolist() == [0, 3, 4]
    assert knapsack_select(E, [1.0, 0.0], costs, 0).tolist() == []
    assert knapsack_select(np.empty((0, 2)), [1.0, 0.0], [], 10).tolist() == []
    dup = np.array([[1.0, 0.0]] * 3)  # equal sets: the lower indices
    assert knapsack_select(dup, [1.0, 0.0], [5, 5, 5], 10).tolist() == [0, 1]


def test_a_table_too_large_is_refused_with_what_to_do():
    E = np.random.default_rng(0).normal(size=(50, 4))
    E[:, 0] = np.abs(E[:, 0]) + 3  # every chunk relevant to the query below
    with pytest.raises(ValueError, match="max_cells=100.*fewer candidates"):
        knapsack_select(E, [1.0, 0, 0, 0], np.full(50, 40), 4000, max_cells=100)


def test_knapsack_at_the_issue_size_answers_at_once():
    rng = np.random.default_rng(1)
    E = rng.normal(size=(50, 384)).astype(np.float32)
    costs = rng.integers(20, 400, 50)
    picks = knapsack_select(E, E[0] + 0.5 * E[1], costs, 4000)
    assert costs[picks].sum() <= 4000 and 0 in picks.tolist()


@given(problem=selection_problems())
def test_select_dispatches_by_name_and_the_package_is_callable(problem):
    E, q, costs, budget, lam = problem
    np.testing.assert_array_equal(
        select_by_strategy(E, q, costs, budget, lam=lam), mmr_select(E, q, costs, budget, lam=lam)
    )
    np.testing.assert_array_equal(
        scwo_np.select_by_strategy(E, q, costs, budget, strategy="knapsack"),
        knapsack_select(E, q, costs, budget),
    )


def test_select_names_the_strategies_and_the_options():
    assert tuple(STRATEGIES) == (
        "mmr",
        "msd",
        "dpp",
        "ssd",
        "cover",
        "facility_location",
        "xquad",
        "rxquad",
        "gist",
        "knapsack",
    )
    E = np.eye(3)
    with pytest.raises(
        ValueError,
        match="strategy must be one of 'mmr', 'msd', 'dpp', 'ssd', 'cover', 'facility_location', 'xquad', 'rxquad', 'gist', 'knapsack'; got 'dpp2'",
    ):
        select_by_strategy(E, [1.0, 0, 0], [1, 1, 1], 2, strategy="dpp2")
    with pytest.raises(TypeError, match="lam"):
        select_by_strategy(E, [1.0, 0, 0], [1, 1, 1], 2, strategy="knapsack", lam=0.5)


@given(problem=selection_problems(allow_empty=False))
def test_the_fused_preparation_equals_the_validating_one(problem):
    from scwo_np.select._common import prepare

    E, q, costs, budget, _ = problem
    fast = prepare(E, q, costs, budget)  # arrays of the kernels' types: the fused path
    slow = prepare(E, q, costs.tolist(), budget)  # a list: the validating path
    for a, b in zip(fast[3:], slow[3:], strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_threaded_fused_preparation_equals_the_validating_one(dtype, monkeypatch):
    """Above PARALLEL_MIN_ELEMENTS the fused preparation runs its pass on threads: same bits;
    a NaN row still falls back to the validating path's error."""
    import scwo_np._dot
    from scwo_np.select._common import prepare

    rng = np.random.default_rng(2)
    monkeypatch.setattr(scwo_np._dot, "PARALLEL_MIN_ELEMENTS", 1 << 18)  # a threaded size, small
    n = -(-scwo_np._dot.PARALLEL_MIN_ELEMENTS // 16) + 5
    E = rng.standard_normal((n, 16)).astype(dtype)
    q = rng.standard_normal(16).astype(dtype)
    costs = rng.integers(1, 9, n)
    fast = prepare(E, q, costs, 100)
    slow = prepare(E, q, costs.tolist(), 100)
    for a, b in zip(fast[3:], slow[3:], strict=True):
        np.testing.assert_array_equal(a, b)
    E[n - 2, 0] = np.nan
    with pytest.raises(ValueError, match=f"row {n - 2}"):
        prepare(E, q, costs, 100)
