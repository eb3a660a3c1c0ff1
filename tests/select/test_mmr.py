import naive
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import selection_problems
from scwo_np import MMR_METHODS, mmr_select, mmr_select_multi


def _check(E, q, costs, budget, lam, method, **kw):
    picks, gains = mmr_select(E, q, costs, budget, lam=lam, method=method, return_gains=True, **kw)
    rp, rg = naive.mmr_select(E.tolist(), [q.tolist()], costs.tolist(), budget, lam=lam, dtype=E.dtype, **kw)
    assert picks.dtype == np.int64
    assert picks.tolist() == rp
    np.testing.assert_array_equal(gains, np.array(rg, dtype=np.float64))
    assert costs[picks].sum() <= budget
    assert len(set(picks.tolist())) == len(picks)


@pytest.mark.parametrize("method", MMR_METHODS)
@given(problem=selection_problems())
def test_every_method_equals_reference(method, problem):
    _check(*problem, method=method)


@pytest.mark.parametrize("method", MMR_METHODS)
@given(
    problem=selection_problems(),
    shift=st.sampled_from([0.0, 0.5, 1.0]),
    r=st.sampled_from([0.25, 0.5, 1.0]) | st.floats(0.01, 1.0),
)
def test_cost_aware_equals_reference(method, problem, shift, r):
    _check(*problem, method=method, cost_aware=True, shift=shift, cost_exponent=r)


@given(problem=selection_problems(allow_empty=False), r=st.sampled_from([0.25, 0.5]) | st.floats(0.01, 0.99))
def test_cost_aware_never_fills_less_than_plain_mmr(problem, r):
    E, q, costs, budget, lam = problem
    plain = mmr_select(E, q, costs, budget, lam=lam)
    aware = mmr_select(E, q, costs, budget, lam=lam, cost_aware=True, cost_exponent=r)
    assert costs[aware].sum() >= costs[plain].sum()
    assert costs[aware].sum() <= budget


@pytest.mark.usefixtures("small_pool")
@given(problem=selection_problems(max_n=30))
def test_lazy_refills_are_exact(problem):
    _check(*problem, method="lazy")


@pytest.mark.usefixtures("small_pool")
@given(
    problem=selection_problems(max_n=30), r=st.sampled_from([0.25, 0.5]), shift=st.sampled_from([0.0, 1.0])
)
def test_cost_aware_switch_with_outsiders_is_exact(problem, r, shift):
    """The default cost-aware mode re-keys the heap and the outsiders once half the budget is used."""
    _check(*problem, method="lazy", cost_aware=True, cost_exponent=r, shift=shift)


def test_cost_aware_ranks_by_merit_until_half_the_budget():
    """Two chunks about the query, the better one long: plain keys take it first; past half the
    budget the short ones win over equally good long ones."""
    E = np.array([[1.0, 0.0], [0.95, 0.31], [0.0, 1.0], [0.1, 1.0]])
    q = np.array([1.0, 0.05])
    costs = np.array([60, 10, 30, 10])
    plain = mmr_select(E, q, costs, 100, lam=0.9)
    aware = mmr_select(E, q, costs, 100, lam=0.9, cost_aware=True, cost_exponent=0.5)
    assert plain[0] == aware[0] == 0  # the most relevant chunk, long as it is


@pytest.mark.usefixtures("tiny_blocks")
@given(problem=selection_problems(max_n=30), cost_aware=st.booleans())
def test_speculative_first_pass_is_exact(problem, cost_aware):
    """With tiny_blocks every input takes the threaded fused kernel (the driver with threads)."""
    _check(*problem, method="lazy", cost_aware=cost_aware)


@pytest.mark.usefixtures("tiny_blocks", "no_fused_path")
@given(problem=selection_problems(max_n=30), cost_aware=st.booleans())
def test_threaded_validating_path_is_exact(problem, cost_aware):
    _check(*problem, method="lazy", cost_aware=cost_aware)


@pytest.mark.volume
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_threaded_fused_path_equals_validating_path_at_threaded_size(dtype, monkeypatch):
    """Above PARALLEL_MIN_ELEMENTS mmr_select runs the threaded fused kernel: same picks and
    gains as the validating path, and its checks fall back to the validating path's errors."""
    import scwo_np._dot
    import scwo_np.select._mmr as mmr_module

    rng = np.random.default_rng(5)
    monkeypatch.setattr(scwo_np._dot, "PARALLEL_MIN_ELEMENTS", 1 << 18)  # a threaded size, small
    n = -(-scwo_np._dot.PARALLEL_MIN_ELEMENTS // 32) + 3
    E = rng.standard_normal((n, 32)).astype(dtype)
    q = rng.standard_normal(32)
    costs = rng.integers(1, 300, n)
    got = mmr_select(E, q, costs, 5_000, return_gains=True, cost_aware=True)
    aware = mmr_select(E, q, costs, 5_000, return_gains=True)
    monkeypatch.setattr(mmr_module, "_fast", lambda *a: None)
    for fast, kw in ((got, {"cost_aware": True}), (aware, {})):
        want = mmr_select(E, q, costs, 5_000, return_gains=True, **kw)
        np.testing.assert_array_equal(fast[0], want[0])
        np.testing.assert_array_equal(fast[1], want[1])
    monkeypatch.undo()
    monkeypatch.setattr(scwo_np._dot, "PARALLEL_MIN_ELEMENTS", 1 << 18)  # the threaded path's checks
    E[n - 7, 3] = np.nan
    with pytest.raises(ValueError, match=f"row {n - 7}"):
        mmr_select(E, q, costs, 5_000)


@pytest.mark.usefixtures("no_fused_path")
@given(problem=selection_problems(max_n=30), cost_aware=st.booleans())
def test_validating_path_equals_reference(problem, cost_aware):
    """Small inputs take the fused kernel; the validating path must agree too."""
    _check(*problem, method="lazy", cost_aware=cost_aware)


@pytest.mark.parametrize(
    "change",
    [
        lambda E, q, c: (E, q, [int(x) for x in c]),  # costs as a list
        lambda E, q, c: (E, q, c.astype(np.int32)),
        lambda E, q, c: (E, q.astype(np.float32), c),
        lambda E, q, c: (np.asfortranarray(E), q, c),  # validating path
        lambda E, q, c: (E.tolist(), q.tolist(), c.tolist()),  # validating path
    ],
)
def test_fused_and_validating_paths_agree_on_input_forms(change):
    rng = np.random.default_rng(3)
    E = rng.standard_normal((40, 8))
    q = rng.standard_normal(8)
    c = rng.integers(1, 9, 40)
    args = change(E, q, c)
    if np.asarray(args[1]).dtype == np.float32:  # the query rounded to float32 is a different query
        q = args[1].astype(np.float64)
    want = mmr_select(E, q, c, 60, return_gains=True)
    got = mmr_select(*args, 60, return_gains=True)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


def _relevance_keyed_lazy_heap(E, q, k, lam):
    """The spec's SCWO-fast as written: stale keys from relevance, unit costs."""
    import heapq

    rel = [naive.cosine(e, q) for e in E]
    heap = [(-lam * r, i, 0) for i, r in enumerate(rel)]
    heapq.heapify(heap)
    picks = []
    while heap and len(picks) < k:
        key, i, gen = heapq.heappop(heap)
        if gen == len(picks):
            picks.append(i)
            continue
        m = max(naive.cosine(E[i], E[j]) for j in picks)
        heapq.heappush(heap, (-(lam * rel[i] - (1 - lam) * m), i, len(picks)))
    return picks


def test_negative_similarity_breaks_relevance_keyed_lazy_heap_but_not_ours():
    # f is picked first.  Chunk B points away from f (cosine -0.68), so after
    # f its score *rises* from -0.15 to 0.19, above A's 0.035; a heap keyed on
    # relevance alone never re-scores B and takes A.
    E = np.array([[0.9, 0.436, 0.0], [0.7, 0.0, 0.714], [-0.3, -0.95, 0.0]])
    q = np.array([1.0, 0.0, 0.0])
    rp, _ = naive.mmr_select(E.tolist(), [q.tolist()], [1, 1, 1], 2, lam=0.5)
    assert rp == [0, 2]
    assert _relevance_keyed_lazy_heap(E.tolist(), q.tolist(), 2, 0.5) == [0, 1]
    for m in MMR_METHODS:
        assert mmr_select(E, q, [1, 1, 1], 2, lam=0.5, method=m).tolist() == rp


@given(problem=selection_problems(), m=st.integers(1, 3), data=st.data())
def test_multi_query_equals_reference(problem, m, data):
    E, q, costs, budget, lam = problem
    Q = np.vstack([q] + [np.roll(q, k) + 0.5 for k in range(1, m)])
    w = data.draw(st.none() | st.lists(st.floats(0.1, 2), min_size=m, max_size=m))
    for method in ("exact", "lazy"):
        picks = mmr_select_multi(E, Q, costs, budget, lam=lam, weights=w, method=method)
        ww = None if w is None else (np.asarray(w) / np.sum(w)).tolist()
        rp, _ = naive.mmr_select(
            E.tolist(), Q.tolist(), costs.tolist(), budget, lam=lam, weights=ww, dtype=E.dtype
        )
        assert picks.tolist() == rp


@given(problem=selection_problems())
def test_multi_with_one_query_equals_single(problem):
    E, q, costs, budget, lam = problem
    a = mmr_select_multi(E, q.reshape(1, -1), costs, budget, lam=lam, return_gains=True)
    b = mmr_select(E, q, costs, budget, lam=lam, return_gains=True)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


def test_empty_and_zero_budget():
    E = np.ones((3, 4))
    assert mmr_select(np.empty((0, 4)), np.ones(4), [], 10).shape == (0,)
    assert mmr_select(E, np.ones(4), [1, 1, 1], 0).size == 0
    assert mmr_select(E, np.ones(4), [0, 1, 0], 0).tolist() == [0, 2]


def test_input_not_mutated():
    rng = np.random.default_rng(3)
    E = rng.standard_normal((50, 8)).astype(np.float32)
    q = rng.standard_normal(8)
    c = rng.integers(1, 9, 50)
    E0, q0, c0 = E.copy(), q.copy(), c.copy()
    for m in MMR_METHODS:
        mmr_select(E, q, c, 40, method=m, cost_aware=True)
    np.testing.assert_array_equal(E, E0)
    np.testing.assert_array_equal(q, q0)
    np.testing.assert_array_equal(c, c0)


def test_larger_random_problem_methods_agree():
    rng = np.random.default_rng(7)
    E = rng.standard_normal((3000, 64)).astype(np.float32)
    E[1500:1600] = E[:100]  # duplicates
    q = rng.standard_normal(64)
    c = rng.integers(20, 200, 3000)
    a = mmr_select(E, q, c, 5000, method="exact", return_gains=True)
    b = mmr_select(E, q, c, 5000, method="lazy", return_gains=True)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"embeddings": [[1.0, np.nan], [1.0, 1.0]]}, ValueError, "NaN or inf at row 0"),
        ({"embeddings": [[1.0, 0.0], [0.0, 0.0]]}, ValueError, "zero vector at row 1"),
        ({"embeddings": [1.0, 2.0]}, ValueError, "must be 2-D"),
        ({"query": [1.0, 0.0, 0.0]}, ValueError, "dimension 3 but the embeddings have dimension 2"),
        ({"query": [0.0, 0.0]}, ValueError, "zero vector"),
        ({"query": [np.inf, 0.0]}, ValueError, "NaN or inf"),
        ({"costs": [1, -2]}, ValueError, "non-negative"),
        ({"costs": [1.5, 2]}, ValueError, "whole token counts"),
        ({"costs": [1]}, ValueError, r"shape \(2,\)"),
        ({"budget": -1}, ValueError, ">= 0"),
        ({"budget": 2.5}, TypeError, "whole number"),
        ({"lam": 1.2}, ValueError, r"\[0, 1\]"),
        ({"lam": float("nan")}, ValueError, r"\[0, 1\]"),
        ({"method": "fast"}, ValueError, "method must be one of"),
        ({"embeddings": [["a", "b"], ["c", "d"]]}, TypeError, "numbers"),
    ],
)
def test_bad_input_errors(kwargs, exc, match):
    args = {"embeddings": [[1.0, 0.0], [0.0, 1.0]], "query": [1.0, 0.5], "costs": [1, 1], "budget": 2}
    args.update(kwargs)
    method = args.pop("method", "auto")
    lam = args.pop("lam", 0.7)
    with pytest.raises(exc, match=match):
        mmr_select(args["embeddings"], args["query"], args["costs"], args["budget"], lam=lam, method=method)
