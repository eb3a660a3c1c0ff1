import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import selection_problems
from scwo_np import mmr_select, select_batch


@given(
    problems=st.lists(selection_problems(max_n=8, max_d=4), min_size=1, max_size=5),
    cost_aware=st.booleans(),
    r=st.sampled_from([0.25, 1.0]),
)
def test_ragged_batch_equals_single(problems, cost_aware, r):
    d = 4
    Es, qs, cs, bs = [], [], [], []
    lam = problems[0][4]
    for E, q, c, b, _ in problems:
        E2 = np.ones((E.shape[0], d))
        E2[:, : E.shape[1]] = E
        q2 = np.ones(d)
        q2[: q.shape[0]] = q
        Es.append(E2)
        qs.append(q2)
        cs.append(c)
        bs.append(b)
    off = np.concatenate([[0], np.cumsum([e.shape[0] for e in Es])])
    res = select_batch(
        np.vstack(Es),
        np.vstack(qs),
        np.concatenate(cs),
        bs,
        offsets=off,
        lam=lam,
        cost_aware=cost_aware,
        cost_exponent=r,
    )
    for b, got in enumerate(res.split()):
        want = mmr_select(
            Es[b], qs[b], cs[b], bs[b], lam=lam, cost_aware=cost_aware, cost_exponent=r, return_gains=True
        )
        np.testing.assert_array_equal(got, want[0])
        np.testing.assert_array_equal(res.gains[res.offsets[b] : res.offsets[b + 1]], want[1])


def test_padded_with_lengths_equals_single():
    rng = np.random.default_rng(0)
    B, n, d = 20, 30, 16
    E = rng.standard_normal((B, n, d)).astype(np.float32)
    Q = rng.standard_normal((B, d))
    C = rng.integers(1, 50, (B, n))
    lengths = rng.integers(0, n + 1, B)
    E[lengths < n, -1] = 0.0  # padding rows may be anything, even zero
    res = select_batch(E, Q, C, 200, lengths=lengths, lam=0.6)
    for b in range(B):
        want = mmr_select(E[b, : lengths[b]], Q[b], C[b, : lengths[b]], 200, lam=0.6)
        np.testing.assert_array_equal(res.split()[b], want)


def test_batch_errors():
    E = np.ones((2, 3, 4))
    with pytest.raises(ValueError, match="costs must have shape"):
        select_batch(E, np.ones((2, 4)), np.ones((2, 2), int), 5)
    with pytest.raises(ValueError, match="one row per problem"):
        select_batch(E, np.ones((3, 4)), np.ones((2, 3), int), 5)
    with pytest.raises(ValueError, match="offsets must start at 0"):
        select_batch(np.ones((3, 4)), np.ones((1, 4)), np.ones(3, int), 5, offsets=[1, 3])
    bad = np.ones((2, 3, 4))
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match="NaN or inf at problem 1, row 2 "):  # flat row 5 of (2, 3, 4)
        select_batch(bad, np.ones((2, 4)), np.ones((2, 3), int), 5)


def test_padded_input_errors_name_the_problem_and_its_row():
    """(2, 50, d) input with a zero row at problem 1, row 4 said "zero vector at row 54", and a
    negative cost at [1, 0] "costs[50]": the positions the user indexes by are given now."""
    rng = np.random.default_rng(0)
    E, Q, c = rng.standard_normal((2, 50, 16)), rng.standard_normal((2, 16)), np.ones((2, 50), dtype=np.int64)
    zero = E.copy()
    zero[1, 4] = 0
    with pytest.raises(ValueError, match=r"zero vector at problem 1, row 4 "):
        select_batch(zero, Q, c, 10)
    nan = E.copy()
    nan[1, 7, 2] = np.nan
    with pytest.raises(ValueError, match=r"NaN or inf at problem 1, row 7 "):
        select_batch(nan, Q, c, 10)
    neg = c.copy()
    neg[1, 0] = -5
    with pytest.raises(ValueError, match=r"costs\[1, 0\] = -5"):
        select_batch(E, Q, neg, 10)

    # the other strategies run set by set: the set is named too (it said "row 7")
    with pytest.raises(ValueError, match=r"zero vector at problem 1, row 4 "):
        select_batch(zero, Q, c, 10, strategy="dpp")
