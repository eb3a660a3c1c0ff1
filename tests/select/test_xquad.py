"""Budgeted xQuAD and RxQuAD (issue 45): the lazy greedy equals the plain one, pyversity's definitions."""

import naive
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conftest import selection_problems, tiled_problems
from scwo_np import mmr_select
from scwo_np.select._xquad import rxquad_select, xquad_select

LAMS = st.sampled_from([0.0, 0.3, 0.5, 0.99]) | st.floats(0, 0.999)
RS = st.sampled_from([0.0, 0.5, 1.0])


@st.composite
def aspect_sets(draw, d, dtype):
    """Given aspect rows (small integers: ties and duplicates, or floats, some negative) with optional weights."""
    m = draw(st.integers(1, 4))
    if draw(st.booleans()):
        A = draw(hnp.arrays(np.int8, (m, d), elements=st.integers(-2, 2))).astype(np.float64)
    else:
        A = draw(hnp.arrays(np.float64, (m, d), elements=st.floats(-3, 3, width=32)))
    A[np.sqrt((A**2).sum(axis=1)) < 1e-6] = 1.0
    w = draw(st.none() | hnp.arrays(np.float64, m, elements=st.floats(0.1, 2)))
    return A, w, A.astype(dtype).tolist(), None if w is None else (w / w.sum()).tolist()


@given(problem=selection_problems(), lam=LAMS, r=RS, data=st.data())
def test_xquad_with_given_aspects_equals_the_plain_greedy(problem, lam, r, data):
    E, q, costs, budget, _ = problem
    A, w, Al, wl = data.draw(aspect_sets(E.shape[1], E.dtype))
    picks, gains = xquad_select(
        E, q, costs, budget, lam=lam, aspects=A, aspect_weights=w, cost_exponent=r, return_gains=True
    )
    rp, rg = naive.xquad(E.tolist(), q.tolist(), costs.tolist(), budget, lam, r, E.dtype, None, Al, wl)
    assert picks.tolist() == rp
    np.testing.assert_array_equal(gains, np.array(rg, dtype=np.float64))
    assert costs[picks].sum() <= budget and len(set(picks.tolist())) == len(picks)


@given(problem=selection_problems(), lam=LAMS, r=RS, k=st.sampled_from([None, 1, 2, 3]))
def test_xquad_with_derived_aspects_equals_the_plain_greedy(problem, lam, r, k):
    E, q, costs, budget, _ = problem
    picks, gains = xquad_select(E, q, costs, budget, lam=lam, aspects=k, cost_exponent=r, return_gains=True)
    rp, rg = naive.xquad(E.tolist(), q.tolist(), costs.tolist(), budget, lam, r, E.dtype, None, k)
    assert picks.tolist() == rp
    np.testing.assert_array_equal(gains, np.array(rg, dtype=np.float64))


@given(problem=selection_problems(), lam=LAMS, r=RS, data=st.data())
def test_rxquad_equals_the_plain_greedy(problem, lam, r, data):
    E, q, costs, budget, _ = problem
    if data.draw(st.booleans()):
        A, _, Al, _ = data.draw(aspect_sets(E.shape[1], E.dtype))
    else:
        A = Al = data.draw(st.sampled_from([None, 1, 3]))
    picks, gains = rxquad_select(E, q, costs, budget, lam=lam, aspects=A, cost_exponent=r, return_gains=True)
    rp, rg = naive.rxquad(E.tolist(), q.tolist(), costs.tolist(), budget, lam, r, E.dtype, None, Al)
    assert picks.tolist() == rp
    np.testing.assert_array_equal(gains, np.array(rg, dtype=np.float64))
    assert costs[picks].sum() <= budget


@settings(max_examples=15, deadline=None)
@given(problem=tiled_problems(), lam=st.sampled_from([0.3, 0.7]))
def test_tiled_sizes_and_threads_equal_the_plain_greedy(problem, lam):
    """Sizes where the 4 x 4 tiles and their edges occur, on one thread and several."""
    from unittest import mock

    from scwo_np.select import _gram

    E, q, costs, budget = problem
    A = np.random.default_rng(1).standard_normal((5, E.shape[1]))
    rp, _ = naive.xquad(
        E.tolist(), q.tolist(), costs.tolist(), budget, lam, 0.0, E.dtype, None, A.astype(E.dtype).tolist()
    )
    for macs in (1 << 62, 0):
        with mock.patch.object(_gram, "PARALLEL_MIN_MACS", macs):
            assert xquad_select(E, q, costs, budget, lam=lam, aspects=A).tolist() == rp, macs


@given(problem=selection_problems())
def test_lam_one_is_top_k_by_relevance(problem):
    E, q, costs, budget, _ = problem
    want = mmr_select(E, q, costs, budget, lam=1.0)
    np.testing.assert_array_equal(xquad_select(E, q, costs, budget, lam=1.0), want)
    np.testing.assert_array_equal(rxquad_select(E, q, costs, budget, lam=1.0), want)


def test_the_second_intent_is_covered():
    E = np.array([[1.0, 0.0], [0.99, 0.1], [0.98, 0.12], [0.0, 1.0]])
    A = np.eye(2)
    assert xquad_select(E, [1.0, 0.1], [1, 1, 1, 1], 2, lam=0.3, aspects=A).tolist()[1] == 3
    # an aspect weighted 0 is never served for itself
    assert 3 not in xquad_select(E, [1.0, 0.1], [1, 1, 1, 1], 2, lam=0.3, aspects=A, aspect_weights=[1, 0])


def test_bad_aspects_are_named():
    E, q = np.eye(3), [1.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="aspects"):
        xquad_select(E, q, [1, 1, 1], 2, aspects=np.ones((2, 4)))
    with pytest.raises(ValueError, match="aspects"):
        xquad_select(E, q, [1, 1, 1], 2, aspects=np.zeros((2, 3)))
    with pytest.raises(ValueError, match="aspects"):
        xquad_select(E, q, [1, 1, 1], 2, aspects=0)
    with pytest.raises(TypeError, match="aspects"):
        xquad_select(E, q, [1, 1, 1], 2, aspects="two")
    with pytest.raises(ValueError, match="aspect_weights"):
        xquad_select(E, q, [1, 1, 1], 2, aspects=np.eye(3), aspect_weights=[1, -1, 0])
    with pytest.raises(ValueError, match="aspect_weights"):
        xquad_select(E, q, [1, 1, 1], 2, aspect_weights=[1.0])


@pytest.mark.integration
def test_it_matches_pyversity_on_unit_costs():
    """pyversity's main branch (xquad, rxquad); skipped where the installed pyversity has neither."""
    pyversity = pytest.importorskip("pyversity")
    if not hasattr(pyversity, "xquad"):
        pytest.skip("the installed pyversity has no xquad (main branch only)")
    rng = np.random.default_rng(4)
    for n, k in ((20, 5), (100, 10)):
        E = rng.normal(size=(n, 32))
        q = rng.normal(size=32)
        A = rng.normal(size=(4, 32))
        rel = (E @ q) / (np.linalg.norm(E, axis=1) * np.linalg.norm(q))
        for lam in (0.3, 0.7):
            ours = xquad_select(E, q, np.ones(n, dtype=np.int64), k, lam=lam, aspects=A)
            theirs = pyversity.xquad(E, rel, k, diversity=1 - lam, aspect_embeddings=A).indices
            assert ours.tolist() == theirs.tolist(), (n, lam)


def _pyversity_loop(E, rel, k, diversity, A, weights=None, inferred=False):
    """pyversity's main-branch ``xquad``/``rxquad`` (``_xquad_select``) written out in float64."""
    X = E / np.linalg.norm(E, axis=1, keepdims=True)
    An = A / np.linalg.norm(A, axis=1, keepdims=True)
    P = np.clip(X @ An.T, 0.0, 1.0)
    if inferred:
        w = np.maximum(rel @ P, 0.0)
        w = w / w.sum()
    else:
        w = np.full(len(A), 1.0 / len(A)) if weights is None else weights / weights.sum()
    R = np.ones(len(A))
    taken = np.zeros(len(E), dtype=bool)
    picks = []
    for _ in range(k):
        combined = (1.0 - diversity) * rel + diversity * (P @ (w * R))
        combined[taken] = -np.inf
        best = int(np.argmax(combined))
        picks.append(best)
        taken[best] = True
        R *= 1.0 - P[best]
    return picks


@pytest.mark.parametrize("inferred", [False, True])
def test_unit_costs_pick_what_pyversitys_loop_picks(inferred):
    rng = np.random.default_rng(6)
    for n, k in ((30, 5), (300, 15)):
        E = rng.normal(size=(n, 32))
        q = rng.normal(size=32)
        A = q + rng.normal(size=(4, 32))
        w = rng.uniform(0.5, 2.0, 4)
        rel = (E @ q) / (np.linalg.norm(E, axis=1) * np.linalg.norm(q))
        for lam in (0.3, 0.7):
            if inferred:
                ours = rxquad_select(E, q, np.ones(n, dtype=np.int64), k, lam=lam, aspects=A)
            else:
                ours = xquad_select(E, q, np.ones(n, dtype=np.int64), k, lam=lam, aspects=A, aspect_weights=w)
            theirs = _pyversity_loop(E, rel, k, 1 - lam, A, None if inferred else w, inferred)
            assert ours.tolist() == theirs, (n, lam)
