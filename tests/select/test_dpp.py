"""Budgeted DPP greedy MAP (issue 19): the lazy heap equals the plain greedy, and pyversity's picks."""

import naive
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import selection_problems
from scwo_np import mmr_select
from scwo_np.select._dpp import dpp_select


@given(
    problem=selection_problems(),
    lam=st.sampled_from([0.0, 0.3, 0.5, 0.7, 0.99]) | st.floats(0, 0.999),
    r=st.sampled_from([0.0, 0.5, 1.0]),
    scale=st.sampled_from([1.0, 2.5]),
)
def test_lazy_dpp_equals_the_plain_greedy(problem, lam, r, scale):
    E, q, costs, budget, _ = problem
    picks, gains = dpp_select(E, q, costs, budget, lam=lam, scale=scale, cost_exponent=r, return_gains=True)
    rp, rg = naive.dpp(E.tolist(), q.tolist(), costs.tolist(), budget, lam, scale, r, dtype=E.dtype)
    assert picks.tolist() == rp
    np.testing.assert_array_equal(gains, np.array(rg, dtype=np.float64))
    assert costs[picks].sum() <= budget and len(set(picks.tolist())) == len(picks)


@given(problem=selection_problems())
def test_lam_one_is_top_k_by_relevance(problem):
    E, q, costs, budget, _ = problem
    np.testing.assert_array_equal(
        dpp_select(E, q, costs, budget, lam=1.0), mmr_select(E, q, costs, budget, lam=1.0)
    )


def test_a_copy_adds_no_volume_and_picks_are_spread():
    E = np.array([[1.0, 0.1, 0.0], [1.0, 0.1, 0.0], [0.1, 1.0, 0.0], [0.0, 0.1, 1.0]])
    picks, gains = dpp_select(E, [1.0, 0.3, 0.1], [1, 1, 1, 1], 10, lam=0.5, return_gains=True)
    assert picks.tolist()[:1] == [0] and 1 not in picks.tolist() and sorted(picks.tolist()) == [0, 2, 3]
    assert np.all(np.diff(gains) <= 0) and gains[-1] > 0  # each pick adds less volume than the last


@pytest.mark.integration
def test_it_matches_pyversity_on_unit_costs():
    pyversity = pytest.importorskip("pyversity")
    rng = np.random.default_rng(3)
    for n, k in ((20, 5), (100, 10), (300, 15)):
        E = rng.normal(size=(n, 32))
        q = rng.normal(size=32)
        rel = (E @ q) / (np.linalg.norm(E, axis=1) * np.linalg.norm(q))
        for lam in (0.3, 0.7):
            ours = dpp_select(E, q, np.ones(n, dtype=np.int64), k, lam=lam)
            theirs = pyversity.diversify(E, rel, k, strategy="dpp", diversity=1 - lam).indices
            assert ours.tolist() == theirs.tolist(), (n, lam)
