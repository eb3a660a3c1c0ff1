"""Budgeted GIST (issue 45): equal to the plain algorithm, and to divsel where it solves the same problem."""

import naive
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import selection_problems, tiled_problems
from scwo_np.select._gist import diameter, gist_select

LAMS = st.sampled_from([0.0, 0.3, 0.5, 0.7, 1.0]) | st.floats(0, 1)


@given(
    problem=selection_problems(),
    lam=LAMS,
    eps=st.sampled_from([0.1, 0.5, 1.0]),
    r=st.sampled_from([0.0, 0.5, 1.0]),
)
def test_gist_equals_the_plain_algorithm(problem, lam, eps, r):
    E, q, costs, budget, _ = problem
    picks, gains = gist_select(E, q, costs, budget, lam=lam, eps=eps, cost_exponent=r, return_gains=True)
    rp, rg = naive.gist(E.tolist(), q.tolist(), costs.tolist(), budget, lam, eps, r, dtype=E.dtype)
    assert picks.tolist() == rp
    np.testing.assert_array_equal(gains, np.array(rg, dtype=np.float64))
    assert costs[picks].sum() <= budget and len(set(picks.tolist())) == len(picks)


@settings(max_examples=15, deadline=None)
@given(problem=tiled_problems(), lam=st.sampled_from([0.3, 0.7]))
def test_tiles_and_threads_equal_the_plain_algorithm(problem, lam):
    """Sizes where the diameter's 4 x 4 tiles and their edges occur, on one thread and several."""
    from unittest import mock

    from scwo_np.select import _gram

    E, q, costs, budget = problem
    rp, _ = naive.gist(E.tolist(), q.tolist(), costs.tolist(), budget, lam, dtype=E.dtype)
    for macs in (1 << 62, 0):
        with mock.patch.object(_gram, "PARALLEL_MIN_MACS", macs):
            assert gist_select(E, q, costs, budget, lam=lam).tolist() == rp, macs


def test_the_diameter_and_the_farthest_pair_that_fits():
    E = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [-1.0, 0.0]])
    nrm = np.linalg.norm(E, axis=1)
    dmax, d, i, j = diameter(E, nrm, np.array([1, 1, 5, 1]), 2)
    assert dmax == 2.0 and (i, j) == (0, 3) and d == 2.0  # (0, 2) is as far but does not fit
    assert diameter(E[:1], nrm[:1], np.array([1]), 2) == (0.0, 0.0, -1, -1)


def test_bad_eps_is_named():
    with pytest.raises(ValueError, match="eps"):
        gist_select(np.eye(2), [1.0, 0.0], [1, 1], 2, eps=0)
    with pytest.raises(TypeError, match="eps"):
        gist_select(np.eye(2), [1.0, 0.0], [1, 1], 2, eps="small")


@pytest.mark.integration
def test_it_reaches_divsels_objective_on_unit_costs():
    """divsel 0.1 on the same problem: metric="euclidean" on unit rows is our chordal distance, its
    utilities our relevance (all positive here, as divsel requires), its lam ``(1 - lam) / lam``."""
    divsel = pytest.importorskip("divsel")
    rng = np.random.default_rng(3)
    for n, k in ((50, 5), (300, 12)):
        E = np.abs(rng.normal(size=(n, 24))).astype(np.float32)
        q = np.abs(rng.normal(size=24))
        U = np.ascontiguousarray(E / np.linalg.norm(E, axis=1, keepdims=True), dtype=np.float32)
        Ud = U.astype(np.float64)
        rel = Ud @ (q / np.linalg.norm(q))

        def f(S, lam, Ud=Ud, rel=rel):
            S = list(S)
            D = np.sqrt(np.maximum(2 - 2 * Ud[S] @ Ud[S].T, 0))
            div = D[np.triu_indices(len(S), 1)].min() if len(S) > 1 else 0.0
            return lam * rel[S].sum() + (1 - lam) * div

        for lam in (0.3, 0.7):
            ours = gist_select(E, q, np.ones(n, dtype=np.int64), k, lam=lam)
            theirs = divsel.gist_select(U, rel, k=k, lam=(1 - lam) / lam, eps=0.1, metric="euclidean")
            assert len(ours) <= k
            assert f(ours, lam) >= f(theirs, lam) - 1e-5, (n, lam)
