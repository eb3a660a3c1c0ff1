import itertools

import naive
import numpy as np
from hypothesis import given

from conftest import selection_problems
from scwo_np import coverage, mmr_select, topk_relevance, truncate


@given(selection_problems())
def test_truncate_is_longest_fitting_prefix(problem):
    _, _, costs, budget, _ = problem
    k = len(truncate(costs, budget))
    assert costs[:k].sum() <= budget
    assert k == len(costs) or costs[: k + 1].sum() > budget


@given(selection_problems())
def test_topk_is_lam_one(problem):
    E, q, costs, budget, _ = problem
    rp, _ = naive.mmr_select(E.tolist(), [q.tolist()], costs.tolist(), budget, lam=1.0, dtype=E.dtype)
    assert topk_relevance(E, q, costs, budget).tolist() == rp


@given(selection_problems(allow_empty=False))
def test_coverage_matches_reference(problem):
    E, q, *_ = problem
    dt = E.dtype
    rel = sum(naive.cosine(e, q, dt) for e in E) / len(E)
    pairs = [naive.cosine(E[i], E[j], dt) for i, j in itertools.combinations(range(len(E)), 2)]
    div = 1.0 - (sum(pairs) / len(pairs) if pairs else 0.0)
    np.testing.assert_allclose(coverage(E, q), 0.6 * rel + 0.4 * div, rtol=1e-12, atol=1e-12)


def test_coverage_empty_is_zero():
    assert coverage(np.empty((0, 3)), np.ones(3)) == 0.0


def test_mmr_beats_truncation_on_clustered_data():
    # Topic clusters: truncation takes the first cluster; MMR spreads out.
    rng = np.random.default_rng(0)
    centers = rng.standard_normal((5, 32))
    E = np.repeat(centers, 40, axis=0) + 0.1 * rng.standard_normal((200, 32))
    q = centers.mean(0)
    c = np.full(200, 150)
    budget = 1500
    sel = mmr_select(E, q, c, budget, lam=0.7)
    assert coverage(E[sel], q) > coverage(E[truncate(c, budget)], q)
