"""Budgeted facility location (issue 19): the lazy greedy equals the plain one; the guarantees hold."""

import itertools
from unittest import mock

import naive
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import selection_problems, tiled_problems
from scwo_np.select import _gram
from scwo_np.select._facility import facility_location_select


@given(
    problem=selection_problems(),
    lam=st.sampled_from([0.0, 0.3, 0.7, 1.0]) | st.floats(0, 1),
    r=st.sampled_from([0.0, 0.5, 1.0]),
)
def test_lazy_facility_location_equals_the_plain_greedy(problem, lam, r):
    E, q, costs, budget, _ = problem
    picks, gains = facility_location_select(E, q, costs, budget, lam=lam, cost_exponent=r, return_gains=True)
    rp, rg = naive.facility_location(E.tolist(), q.tolist(), costs.tolist(), budget, lam, r, dtype=E.dtype)
    assert picks.tolist() == rp
    np.testing.assert_array_equal(gains, np.array(rg, dtype=np.float64))
    assert costs[picks].sum() <= budget and len(set(picks.tolist())) == len(picks)


def _f(E, q, S, lam):
    unit = E / np.linalg.norm(E, axis=1, keepdims=True)
    a = np.maximum(unit @ (q / np.linalg.norm(q)), 0)
    if not S:
        return 0.0
    s = np.maximum(unit @ unit[list(S)].T, 0).max(axis=1)
    return lam * a[list(S)].sum() + (1 - lam) * (a * s).sum()


@settings(max_examples=60, deadline=None)
@given(problem=selection_problems(max_n=8, allow_empty=False), lam=st.sampled_from([0.0, 0.3, 0.7]))
def test_the_guarantees(problem, lam):
    E, q, costs, budget, _ = problem
    n = len(E)
    feasible = [
        S for r in range(n + 1) for S in itertools.combinations(range(n), r) if costs[list(S)].sum() <= budget
    ]
    best = max(_f(E, q, S, lam) for S in feasible)
    budgeted = facility_location_select(E, q, costs, budget, lam=lam, cost_exponent=1.0).tolist()
    assert _f(E, q, budgeted, lam) >= (1 - 1 / np.e) / 2 * best - 1e-9
    k = max(1, min(n, int(budget)))  # unit costs, budget k: the cardinality greedy
    card = facility_location_select(E, q, np.ones(n, dtype=np.int64), k, lam=lam).tolist()
    best_k = max(_f(E, q, S, lam) for S in itertools.combinations(range(n), min(k, n)))
    assert _f(E, q, card, lam) >= (1 - 1 / np.e) * best_k - 1e-9


@given(problem=selection_problems(allow_empty=False), lam=st.sampled_from([0.0, 0.5, 0.9]))
def test_rows_on_demand_give_what_the_kept_products_give(problem, lam):
    from scwo_np.select._cover import cover_select

    E, q, costs, budget, _ = problem
    with_matrix = [f(E, q, costs, budget, lam=lam) for f in (facility_location_select, cover_select)]
    with mock.patch.object(_gram, "CACHE_MAX_BYTES", 0):
        for f, want in zip((facility_location_select, cover_select), with_matrix, strict=True):
            np.testing.assert_array_equal(f(E, q, costs, budget, lam=lam), want)


@settings(max_examples=20, deadline=None)
@given(problem=tiled_problems(), lam=st.sampled_from([0.3, 0.7]), r=st.sampled_from([0.0, 1.0]))
def test_every_path_equals_the_plain_greedy(problem, lam, r):
    """Kept products or rows on demand, one thread or several: the reference's picks and gains."""
    E, q, costs, budget = problem
    rp, rg = naive.facility_location(E.tolist(), q.tolist(), costs.tolist(), budget, lam, r, dtype=E.dtype)
    for cache, macs in ((256 << 20, 1 << 62), (0, 1 << 62), (256 << 20, 0), (0, 0)):
        with (
            mock.patch.object(_gram, "CACHE_MAX_BYTES", cache),
            mock.patch.object(_gram, "PARALLEL_MIN_MACS", macs),
        ):
            picks, gains = facility_location_select(
                E, q, costs, budget, lam=lam, cost_exponent=r, return_gains=True
            )
        assert picks.tolist() == rp, (cache, macs)
        np.testing.assert_array_equal(gains, np.array(rg, dtype=np.float64))
