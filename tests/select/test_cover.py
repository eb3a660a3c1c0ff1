"""Budgeted cover (issue 19): the lazy greedy equals the plain one, and pyversity's picks."""

import naive
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import selection_problems, tiled_problems
from scwo_np import mmr_select
from scwo_np.select import _gram
from scwo_np.select._cover import cover_select


@given(
    problem=selection_problems(),
    lam=st.sampled_from([0.0, 0.3, 0.7, 0.99]) | st.floats(0, 0.999),
    gamma=st.sampled_from([0.5, 1.0, 0.25]),
    r=st.sampled_from([0.0, 0.5, 1.0]),
)
def test_lazy_cover_equals_the_plain_greedy(problem, lam, gamma, r):
    E, q, costs, budget, _ = problem
    picks, gains = cover_select(E, q, costs, budget, lam=lam, gamma=gamma, cost_exponent=r, return_gains=True)
    rp, rg = naive.cover(E.tolist(), q.tolist(), costs.tolist(), budget, lam, gamma, r, dtype=E.dtype)
    assert picks.tolist() == rp
    np.testing.assert_array_equal(gains, np.array(rg, dtype=np.float64))


@given(problem=selection_problems())
def test_lam_one_is_top_k_by_relevance(problem):
    E, q, costs, budget, _ = problem
    np.testing.assert_array_equal(
        cover_select(E, q, costs, budget, lam=1.0), mmr_select(E, q, costs, budget, lam=1.0)
    )


@pytest.mark.integration
def test_it_matches_pyversity_on_unit_costs():
    pyversity = pytest.importorskip("pyversity")
    rng = np.random.default_rng(8)
    for n, k in ((20, 5), (100, 10), (200, 12)):
        E = rng.normal(size=(n, 32))
        q = rng.normal(size=32)
        rel = (E @ q) / (np.linalg.norm(E, axis=1) * np.linalg.norm(q))
        for lam in (0.3, 0.7):
            ours = cover_select(E, q, np.ones(n, dtype=np.int64), k, lam=lam)
            theirs = pyversity.diversify(E, rel, k, strategy="cover", diversity=1 - lam).indices
            assert ours.tolist() == theirs.tolist(), (n, lam)


@settings(max_examples=15, deadline=None)
@given(problem=tiled_problems(), lam=st.sampled_from([0.3, 0.7]), gamma=st.sampled_from([0.5, 0.25]))
def test_every_path_equals_the_plain_greedy(problem, lam, gamma):
    """Kept products or rows on demand, one thread or several: the reference's picks and scores."""
    from unittest import mock

    E, q, costs, budget = problem
    rp, rg = naive.cover(E.tolist(), q.tolist(), costs.tolist(), budget, lam, gamma, dtype=E.dtype)
    for cache, macs in ((256 << 20, 1 << 62), (0, 1 << 62), (256 << 20, 0), (0, 0)):
        with (
            mock.patch.object(_gram, "CACHE_MAX_BYTES", cache),
            mock.patch.object(_gram, "PARALLEL_MIN_MACS", macs),
        ):
            picks, gains = cover_select(E, q, costs, budget, lam=lam, gamma=gamma, return_gains=True)
        assert picks.tolist() == rp, (cache, macs)
        np.testing.assert_array_equal(gains, np.array(rg, dtype=np.float64))
