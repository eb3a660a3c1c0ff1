"""The tiled pairwise products (select/_gram.py) equal the canonical dot product, pair by pair."""

from unittest import mock

import naive
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from scwo_np.select import _gram


@st.composite
def matrices(draw, max_n=23, max_d=40):
    n = draw(st.integers(1, max_n))
    d = draw(st.integers(1, max_d))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    E = rng.standard_normal((n, d)).astype(dtype)
    if n > 2 and draw(st.booleans()):
        E[n - 1] = E[0]  # a duplicate row
    ground = np.flatnonzero(rng.random(n) < draw(st.sampled_from([0.0, 0.5, 1.0])))
    return E, ground


@settings(max_examples=40, deadline=None)
@given(problem=matrices(), threads=st.booleans())
def test_gram_with_ground_holds_every_canonical_product(problem, threads):
    E, ground = problem
    G = np.ascontiguousarray(E[ground])
    with mock.patch.object(_gram, "PARALLEL_MIN_MACS", 0 if threads else 1 << 62):
        D, drow = _gram.gram_with_ground(E, ground, G)
    assert D.dtype == E.dtype and D.shape == (len(E), len(ground))
    assert sorted(drow.tolist()) == list(range(len(E)))
    want = [[naive.dot(E[i].tolist(), G[j].tolist(), E.dtype) for j in range(len(G))] for i in range(len(E))]
    np.testing.assert_array_equal(D[drow].astype(np.float64), np.array(want).reshape(len(E), len(G)))


@settings(max_examples=40, deadline=None)
@given(problem=matrices())
def test_row_tiles_and_single_rows_agree(problem):
    E, _ = problem
    n = len(E)
    out = np.empty((4, n), E.dtype)
    row = np.empty(n, E.dtype)
    for i0 in range(0, n, 4):
        r = min(4, n - i0)
        _gram._dot_rows(E, i0, r, E, out, 0)
        for a in range(r):
            _gram._dot_row_into(E, i0 + a, E, row)
            np.testing.assert_array_equal(out[a], row)
            np.testing.assert_array_equal(
                row.astype(np.float64), [naive.dot(E[i0 + a], y, E.dtype) for y in E]
            )


def test_threaded_triangle_equals_one_thread():
    """Threads take balanced slices of the upper triangle; the mirror fills the rest."""
    E = np.random.default_rng(0).standard_normal((203, 16)).astype(np.float32)
    with mock.patch.object(_gram, "PARALLEL_MIN_MACS", 0):
        D, drow = _gram.gram_with_ground(E, np.arange(203), E)
    np.testing.assert_array_equal(D, D.T)
    np.testing.assert_array_equal(drow, np.arange(203))
    S, _ = _gram.gram_with_ground(E, np.arange(203), E)  # one thread
    np.testing.assert_array_equal(D, S)
