"""Every strategy (issue 19) through select(), with several queries and in batches."""

import naive
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conftest import selection_problems
from scwo_np import STRATEGIES, mmr_select_multi, select_batch, select_texts
from scwo_np.select import select_by_strategy

REFERENCE = {
    "msd": naive.msd,
    "dpp": naive.dpp,
    "ssd": naive.ssd,
    "cover": naive.cover,
    "facility_location": naive.facility_location,
    "xquad": naive.xquad,
    "rxquad": naive.rxquad,
    "gist": naive.gist,
}


@pytest.mark.parametrize(
    "strategy", ["msd", "dpp", "ssd", "cover", "facility_location", "xquad", "rxquad", "gist", "knapsack"]
)
@given(problem=selection_problems(allow_empty=False), data=st.data())
def test_several_queries_equal_the_plain_reference(strategy, problem, data):
    E, q, costs, budget, lam = problem
    lam = min(lam, 0.99)
    d = E.shape[1]
    Q = data.draw(hnp.arrays(np.float64, (data.draw(st.integers(1, 3)), d), elements=st.floats(-3, 3)))
    Q[np.abs(Q).sum(axis=1) < 1e-6, 0] = 1.0
    w = data.draw(st.none() | hnp.arrays(np.float64, Q.shape[0], elements=st.floats(0.1, 2)))
    wn = None if w is None else (w / w.sum()).tolist()
    if strategy == "knapsack":
        got = select_by_strategy(E, Q, costs, budget, strategy="knapsack", weights=w)
        want = naive.knapsack(E.tolist(), Q.tolist(), costs.tolist(), budget, dtype=E.dtype, weights=wn)
    else:
        got = select_by_strategy(E, Q, costs, budget, strategy=strategy, lam=lam, weights=w)
        want = REFERENCE[strategy](
            E.tolist(), Q.tolist(), costs.tolist(), budget, lam, dtype=E.dtype, weights=wn
        )[0]
    assert got.tolist() == want


@given(problem=selection_problems(allow_empty=False))
def test_mmr_with_several_queries_is_mmr_select_multi(problem):
    E, q, costs, budget, lam = problem
    other = -q + 0.5
    Q = np.stack([q, np.where(other == 0, 1.0, other)])  # never the zero vector (q = 0.5 everywhere)
    np.testing.assert_array_equal(
        select_by_strategy(E, Q, costs, budget, lam=lam), mmr_select_multi(E, Q, costs, budget, lam=lam)
    )


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_batch_is_each_set_alone(strategy):
    rng = np.random.default_rng(7)
    sizes = [0, 1, 5, 30, 12]
    off = np.concatenate([[0], np.cumsum(sizes)])
    E = rng.normal(size=(off[-1], 8))
    Q = rng.normal(size=(len(sizes), 8))
    costs = rng.integers(1, 20, off[-1])
    opts = {} if strategy == "knapsack" else {"lam": 0.6}
    res = select_batch(E, Q, costs, 40, offsets=off, strategy=strategy, **opts)
    for b, picks in enumerate(res.split()):
        s, e = off[b], off[b + 1]
        np.testing.assert_array_equal(
            picks, select_by_strategy(E[s:e], Q[b], costs[s:e], 40, strategy=strategy, **opts)
        )


def test_select_texts_refuses_auto_lam_for_another_strategy():
    """It ran with MMR's rule's lam (0.9) passed into the DPP's objective."""
    texts = ["The cache keeps the newest entries.", "Old entries are evicted first.", "Logs rotate daily."]
    with pytest.raises(ValueError, match="lam='auto' chooses MMR's trade-off; strategy='dpp' takes a number"):
        select_texts(texts, "cache eviction", 100, strategy="dpp", lam="auto")
    assert select_texts(texts, "cache eviction", 100, lam="auto").lam >= 0


def test_batch_options_are_checked():
    E, Q = np.eye(3), np.eye(3)[:1]
    with pytest.raises(ValueError, match="cost_aware and shift are MMR's"):
        select_batch(E, Q, [1, 1, 1], 2, offsets=[0, 3], strategy="dpp", cost_aware=True)
    with pytest.raises(TypeError, match="unexpected keyword arguments \\['scale'\\]"):
        select_batch(E, Q, [1, 1, 1], 2, offsets=[0, 3], scale=2.0)
    with pytest.raises(ValueError, match="weights apply to several queries"):
        select_by_strategy(E, [1.0, 0, 0], [1, 1, 1], 2, strategy="dpp", weights=[1.0])
