"""Sentence-level selection: the MMR over units with given relevance, against its reference."""

import naive
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conftest import selection_problems
from scwo_np import METHODS
from scwo_np.select._mmr import mmr_with_relevance


@pytest.mark.parametrize("method", METHODS)
@given(problem=selection_problems(), data=st.data())
def test_mmr_with_given_relevance_equals_the_reference(method, problem, data):
    E, _, costs, budget, lam = problem
    n = E.shape[0]
    rel = data.draw(
        hnp.arrays(np.float64, n, elements=st.sampled_from([0.0, 0.25, 0.5, -0.5]) | st.floats(-1, 1))
    )
    picks, gains = mmr_with_relevance(E, rel, costs, budget, lam=lam, method=method)
    rp, rg = naive.mmr_with_relevance(
        E.tolist(), rel.tolist(), costs.tolist(), budget, lam=lam, dtype=E.dtype
    )
    assert picks.tolist() == rp
    np.testing.assert_array_equal(gains, np.array(rg, dtype=np.float64))
    assert costs[picks].sum() <= budget


def test_mmr_with_relevance_checks_its_arguments():
    E = np.eye(3)
    with pytest.raises(ValueError, match="relevance"):
        mmr_with_relevance(E, [0.1, np.nan, 0.2], [1, 1, 1], 2)
    with pytest.raises(ValueError, match="relevance"):
        mmr_with_relevance(E, [0.1, 0.2], [1, 1, 1], 2)
    picks, gains = mmr_with_relevance(np.empty((0, 3)), [], [], 5)
    assert picks.size == 0 and gains.size == 0
