import naive
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numba import njit

from scwo_np import _dot


@st.composite
def matrices(draw):
    n = draw(st.integers(0, 9))
    d = draw(st.integers(1, 35))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    E = draw(hnp.arrays(dtype, (n, d), elements=st.floats(-1e3, 1e3, width=32)))
    v = draw(hnp.arrays(np.float64, d, elements=st.floats(-1e3, 1e3)))
    return E, v


@given(matrices())
def test_dots_match_reference_to_the_bit(args):
    E, v = args
    v = v.astype(E.dtype)
    dt = E.dtype.name
    ref = np.array([naive.dot(E[i], v, dt) for i in range(E.shape[0])])
    ref_n = np.array([naive.norm(E[i], dt) for i in range(E.shape[0])])
    d, nr = _dot.dots_norms(E, v)
    np.testing.assert_array_equal(d, ref)
    np.testing.assert_array_equal(nr, ref_n)
    np.testing.assert_array_equal(_dot.dots(E, v), ref)
    np.testing.assert_array_equal(_dot.dots_numpy(E, v), ref)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_parallel_pass_equals_serial(dtype, monkeypatch):
    monkeypatch.setattr(_dot, "PARALLEL_MIN_ELEMENTS", 1 << 21)  # the threaded pass at a small size
    rng = np.random.default_rng(0)
    E = rng.standard_normal((6000, 401)).astype(dtype)  # above that threshold
    v = rng.standard_normal(401).astype(dtype)
    assert _dot._nchunks(E) > 0 or _dot.numba.get_num_threads() < 2
    d1, n1 = _dot.dots_norms(E, v)
    d2, n2 = np.empty(6000), np.empty(6000)
    _dot._dots_norms_serial(E, v, d2, n2)
    np.testing.assert_array_equal(d1, d2)
    np.testing.assert_array_equal(n1, n2)
    np.testing.assert_array_equal(_dot.dots(E, v), d2)


def test_duplicate_rows_get_identical_similarities():
    rng = np.random.default_rng(1)
    row = rng.standard_normal(384).astype(np.float32)
    E = np.tile(row, (37, 1))
    d = _dot.dots(E, rng.standard_normal(384).astype(np.float32))
    assert np.unique(d).size == 1


@njit
def _multi_vector_dots(E, V):
    out = np.empty((E.shape[0], 7))
    for i in range(E.shape[0]):
        a = _dot._dotv4(E, i, V, 0)
        b = _dot._dotv2(E, i, V, 1)
        c, (nn,) = _dot._dotv2norm(E, i, V, 2)
        out[i, 0], out[i, 1], out[i, 2], out[i, 3] = a
        out[i, 4] = b[1]
        out[i, 5] = c[0]
        out[i, 6] = nn
    return out


@given(matrices())
def test_multi_vector_dots_match_reference_to_the_bit(args):
    """One row against several vectors (and itself): the same bits as one at a time."""
    E, v = args
    V = np.ascontiguousarray(np.stack([v * (r + 1) - r for r in range(4)]).astype(E.dtype))
    out = _multi_vector_dots(E, V)
    dt = E.dtype.name
    for i in range(E.shape[0]):
        ref = [naive.dot(E[i], V[r], dt) for r in range(4)]
        np.testing.assert_array_equal(out[i, :4], ref)
        assert out[i, 4] == ref[2] and out[i, 5] == ref[2]
        assert np.sqrt(out[i, 6]) == naive.norm(E[i], dt)


@njit
def _widened_dots(E, u):
    out = np.empty(E.shape[0])
    for i in range(E.shape[0]):
        out[i] = _dot._dotw1(E, i, u)[0]
    return out


@given(matrices())
def test_widened_dots_match_the_float64_recipe(args):
    """``_dotw1``: E's elements widened to float64 on load, then the float64 recipe (8 lanes)."""
    E, u = args
    ref = [naive.dot([float(x) for x in E[i]], u, "float64") for i in range(E.shape[0])]
    np.testing.assert_array_equal(_widened_dots(E, u), np.array(ref, dtype=np.float64).reshape(-1))


@given(matrices())
def test_four_by_four_tiles_match_the_reference(args):
    E, v = args
    V = np.ascontiguousarray(np.stack([v * (r + 1) - r for r in range(4)]).astype(E.dtype))
    if E.shape[0] < 4:
        return
    t = _tile(E, V)
    dt = E.dtype.name
    for a in range(4):
        for b in range(4):
            assert t[a * 4 + b] == naive.dot(E[a], V[b], dt)


@njit
def _tile(E, V):
    return _dot._dot4x4(E, 0, V, 0)


@njit
def _four_rows(E, v):
    out = np.empty(E.shape[0] - E.shape[0] % 4)
    for i in range(0, out.shape[0], 4):
        t = _dot._dot4r(E, i, v)
        for r in range(4):
            out[i + r] = t[r]
    return out


@given(matrices())
def test_four_rows_at_a_time_match_the_reference(args):
    E, v = args
    v = v.astype(E.dtype)
    got = _four_rows(E, v)
    np.testing.assert_array_equal(got, [naive.dot(E[i], v, E.dtype.name) for i in range(got.shape[0])])
