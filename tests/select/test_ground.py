"""Clustered ground sets (select/_ground.py): spherical k-means equals its reference; facility
location over centres equals the plain greedy over the same centres."""

from unittest import mock

import naive
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import tiled_problems
from scwo_np.select import _gram, cluster_ground, facility_location_select


@settings(max_examples=30, deadline=None)
@given(problem=tiled_problems(), k=st.integers(1, 9), iters=st.integers(0, 3), seed=st.integers(0, 5))
def test_cluster_ground_equals_the_reference(problem, k, iters, seed):
    E = problem[0]
    k = min(k, len(E))
    C, labels = cluster_ground(E, k, iters=iters, seed=seed)
    RC, rl = naive.spherical_kmeans(E.tolist(), k, iters, seed, dtype=E.dtype)
    assert C.dtype == E.dtype and C.shape == (k, E.shape[1])
    assert labels.tolist() == rl
    np.testing.assert_array_equal(C, np.array(RC, dtype=E.dtype))


def test_threads_do_not_change_the_clusters():
    E = np.random.default_rng(3).standard_normal((403, 48)).astype(np.float32)
    one = cluster_ground(E, 17)
    with mock.patch.object(_gram, "PARALLEL_MIN_MACS", 0):
        many = cluster_ground(E, 17)
    np.testing.assert_array_equal(one[0], many[0])
    np.testing.assert_array_equal(one[1], many[1])


@settings(max_examples=15, deadline=None)
@given(
    problem=tiled_problems(),
    k=st.integers(1, 6),
    lam=st.sampled_from([0.3, 0.7]),
    r=st.sampled_from([0.0, 1.0]),
)
def test_facility_location_over_centres_equals_the_plain_greedy(problem, k, lam, r):
    E, q, costs, budget = problem
    centres, labels = cluster_ground(E, min(k, len(E)), iters=2)
    rp, rg = naive.facility_location(
        E.tolist(), q.tolist(), costs.tolist(), budget, lam, r, dtype=E.dtype,
        ground=(centres.tolist(), labels.tolist()),
    )  # fmt: skip
    for cache in (256 << 20, 0):
        with mock.patch.object(_gram, "CACHE_MAX_BYTES", cache):
            picks, gains = facility_location_select(
                E, q, costs, budget, lam=lam, cost_exponent=r, ground=(centres, labels), return_gains=True
            )
        assert picks.tolist() == rp
        np.testing.assert_array_equal(gains, np.array(rg, dtype=np.float64))


def test_ground_k_is_cluster_ground_with_its_defaults():
    rng = np.random.default_rng(0)
    E = rng.standard_normal((300, 32)).astype(np.float32)
    q = E[:5].mean(axis=0)
    costs = rng.integers(50, 150, 300)
    want = facility_location_select(E, q, costs, 1500, ground=cluster_ground(E, 12))
    np.testing.assert_array_equal(facility_location_select(E, q, costs, 1500, ground=12), want)


def test_every_candidate_as_its_own_centre_is_the_dense_objective():
    """k = n with every row its own cluster: the ground is the candidates (unit rows rounded to
    the embeddings' type): the same picks as the dense form on well-separated data."""
    rng = np.random.default_rng(1)
    E = rng.standard_normal((40, 24))
    q = rng.standard_normal(24)
    centres, labels = cluster_ground(E, 40, iters=0)
    assert sorted(labels.tolist()) == list(range(40))
    costs = np.ones(40, dtype=np.int64)
    np.testing.assert_array_equal(
        facility_location_select(E, q, costs, 6, ground=(centres, labels)),
        facility_location_select(E, q, costs, 6),
    )


@pytest.mark.parametrize(
    "ground, match",
    [
        (0, "ground must be"),
        (True, "ground must be"),
        (2.5, "ground must be"),
        ((np.ones((2, 3)),), "ground must be"),
        ((np.ones((2, 5)), np.zeros(10, dtype=int)), r"shape \(k, 3\)"),
        ((np.ones((2, 3)), np.zeros(9, dtype=int)), "one per candidate"),
        ((np.ones((2, 3)), np.full(10, 2)), "lie in"),
        ((np.zeros((2, 3)), np.zeros(10, dtype=int)), "zero vector"),
    ],
)
def test_bad_ground_is_a_clear_error(ground, match):
    E = np.random.default_rng(0).standard_normal((10, 3))
    error = TypeError if isinstance(ground, bool | float) else ValueError  # the wrong type, or a wrong value
    with pytest.raises(error, match=match):
        facility_location_select(E, E[0], np.ones(10, dtype=int), 3, ground=ground)


@pytest.mark.parametrize(
    "k, iters, error",
    [(0, 1, ValueError), (-1, 1, ValueError), (2.5, 1, TypeError), (True, 1, TypeError), (2, -1, ValueError),
     (2, 1.5, TypeError)],
)  # fmt: skip
def test_bad_cluster_arguments_are_clear_errors(k, iters, error):
    with pytest.raises(error, match="k must|iters must"):
        cluster_ground(np.eye(4), k, iters=iters)
