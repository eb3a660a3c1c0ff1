"""Budgeted max-sum diversity (issue 19): equal to the plain greedy and to pyversity's picks."""

import naive
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import selection_problems
from scwo_np import _dot
from scwo_np.select._msd import msd_select


@given(
    problem=selection_problems(),
    lam=st.sampled_from([0.0, 0.3, 0.5, 0.7, 1.0]) | st.floats(0, 1),
    r=st.sampled_from([0.0, 0.5, 1.0]),
)
def test_msd_equals_the_plain_greedy(problem, lam, r):
    E, q, costs, budget, _ = problem
    picks, gains = msd_select(E, q, costs, budget, lam=lam, cost_exponent=r, return_gains=True)
    rp, rg = naive.msd(E.tolist(), q.tolist(), costs.tolist(), budget, lam, r, dtype=E.dtype)
    assert picks.tolist() == rp
    np.testing.assert_array_equal(gains, np.array(rg, dtype=np.float64))
    assert costs[picks].sum() <= budget and len(set(picks.tolist())) == len(picks)


def test_the_threaded_pass_gives_the_same_picks(monkeypatch):
    rng = np.random.default_rng(5)
    E = rng.normal(size=(3000, 48)).astype(np.float32)
    q = rng.normal(size=48)
    costs = rng.integers(1, 30, 3000)
    serial = msd_select(E, q, costs, 300, lam=0.6)
    monkeypatch.setattr(_dot, "_nchunks", lambda E: 2)
    np.testing.assert_array_equal(msd_select(E, q, costs, 300, lam=0.6), serial)


@pytest.mark.integration
def test_it_matches_pyversity_on_unit_costs():
    pyversity = pytest.importorskip("pyversity")
    rng = np.random.default_rng(4)
    for n, k in ((20, 5), (100, 10), (300, 15)):
        E = rng.normal(size=(n, 32))
        q = rng.normal(size=32)
        rel = (E @ q) / (np.linalg.norm(E, axis=1) * np.linalg.norm(q))
        for lam in (0.3, 0.7):
            ours = msd_select(E, q, np.ones(n, dtype=np.int64), k, lam=lam)
            theirs = pyversity.diversify(E, rel, k, strategy="msd", diversity=1 - lam).indices
            assert ours.tolist() == theirs.tolist(), (n, lam)
