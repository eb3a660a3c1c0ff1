import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scwo_np.anchor import (
    AnchorConfig,
    AnchorWeights,
    anchor_budget,
    columns,
    crush,
    crush_json,
    detect_pattern,
    query_intents,
)


def logs(n=1000):
    return [
        {
            "timestamp": f"2024-01-01T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}",
            "level": "INFO",
            "message": f"request {i} served",
        }
        for i in range(n)
    ]


def test_query_shift_on_1000_log_rows():
    items = logs()
    _, neutral = crush(items, 40, report=True)
    _, latest = crush(items, 40, query="show the latest requests", report=True)
    _, first = crush(items, 40, query="what happened first", report=True)
    assert neutral.pattern == "logs"
    f0, b0, _ = neutral.anchor_slots
    fl, bl, _ = latest.anchor_slots
    ff, bf, _ = first.anchor_slots
    assert bl > fl and bl >= b0  # "latest": most anchor slots at the back
    assert ff > bf and ff > f0  # "first": most anchor slots at the front
    back_half = lambda r: int(np.sum(r.kept >= 500))  # noqa: E731
    assert back_half(latest) > back_half(neutral) > back_half(first)


def test_intents_are_whole_words():
    assert query_intents("I know what happened") == ()  # "know" is not "now", "last" not in "lasting"
    assert query_intents("a lasting effect") == ()
    assert query_intents("the LATEST and the first, all of them") == ("recency", "historical", "range")


def test_deterministic():
    rng = np.random.default_rng(0)
    items = [{"id": int(i), "cat": f"c{rng.integers(0, 4)}", "v": float(rng.normal())} for i in range(500)]
    a = crush(items, 25, query="c2 latest")
    b = crush([dict(x) for x in items], 25, query="c2 latest")
    assert a.tolist() == b.tolist()


def test_random_lookup_hit_rate_matches_keep_fraction():
    """The plan's random-query test, over many lookups: kept 15 of 100 -> 15% of uniform lookups hit."""
    items = [{"id": i, "name": f"Item {i}", "category": f"cat_{i % 5}"} for i in range(100)]
    kept = set(crush(items, 15).tolist())
    rng = np.random.default_rng(0)
    hits = np.isin(rng.integers(0, 100, 20000), list(kept)).mean()
    assert len(kept) == 15 and abs(hits - 0.15) < 0.01


def test_errors_beyond_the_budget_keep_the_most_severe():
    items = [{"status": "ok", "v": i} for i in range(200)]
    for i in range(0, 200, 10):
        items[i] = {"status": "error", "v": i}
    items[105] = {"status": "critical", "v": 105}
    idx, rep = crush(items, 5, report=True)
    assert len(idx) == 5 and 105 in idx
    assert rep.errors == 21 and rep.must_keep_dropped == 16


def test_duplicates_never_waste_slots():
    items = [{"a": 1}] * 50 + [{"a": k} for k in range(2, 12)]
    idx = crush(items, 12)
    vals = [items[i]["a"] for i in idx]
    assert vals.count(1) == 1 and len(idx) == 11  # 11 distinct items, one slot left unused


def test_static_strategy_is_first_three_and_last_two():
    items = [{"i": i} for i in range(100)]
    idx = crush(items, 5, config=AnchorConfig(strategy="static"))
    assert idx.tolist() == [0, 1, 2, 98, 99]


def test_budget_table_without_size_scaling_is_the_plans():
    cfg = AnchorConfig(size_scaling=False)
    assert [anchor_budget(n, m, cfg) for n, m in [(50, 10), (200, 15), (1000, 20), (5000, 30)]] == [
        3,
        3,
        4,
        6,
    ]


def test_learned_weights_replace_the_pattern():
    items = [{"id": i, "value": i} for i in range(300)]
    _, rep = crush(items, 20, learned=AnchorWeights(0.0, 1.0, 0.0), report=True)
    assert rep.learned and rep.anchor_slots[0] == 0
    _, off = crush(
        items,
        20,
        learned=AnchorWeights(0.0, 1.0, 0.0),
        config=AnchorConfig(use_learned_positions=False),
        report=True,
    )
    assert not off.learned


def test_patterns_detected():
    assert (
        detect_pattern(columns([{"title": f"t{i}", "score": 1 - i / 10} for i in range(10)]))
        == "search_results"
    )
    assert detect_pattern(columns(logs(20))) == "logs"
    assert (
        detect_pattern(columns([{"ts": f"2024-01-{i + 1:02d}", "temp": 20.0 + i} for i in range(20)]))
        == "time_series"
    )
    assert detect_pattern(columns([{"name": f"n{i}"} for i in range(20)])) == "generic"


def test_rows_sorted_by_a_number_largest_first_are_a_ranking_and_keep_their_head():
    """``select name, size from packages order by size desc limit 150`` through the MCP proxy kept
    a spread of the 150 rows (the 1st, 3rd, 6th..., rows near the 150th), not the largest: with no
    time in them, rows a number sorts largest first are a ranking, read as search results."""
    import sys

    names = sorted(sys.stdlib_module_names)
    rows = sorted(
        ({"name": n, "size": 1000 * len(n) + i} for i, n in enumerate(names)), key=lambda r: -r["size"]
    )
    rows = rows[:150]
    assert detect_pattern(columns(rows)) == "search_results"
    kept = json.loads(crush_json(json.dumps(rows), budget=300))
    head = [r["name"] for r in rows[:6]]
    assert [k["name"] for k in kept if "_omitted" not in k][:6] == head
    # the same rows in ascending order (an id, a counter), with a tie-only column, stay generic
    assert detect_pattern(columns(rows[::-1])) == "generic"
    assert detect_pattern(columns([{"n": f"x{i}", "flag": int(i < 5)} for i in range(20)])) == "generic"
    # and a number that falls in rows in time order is not a ranking: they are a time series
    ticks = [{"ts": f"2024-01-01T10:00:{i:02d}", "left": 100 - i} for i in range(20)]
    assert detect_pattern(columns(ticks)) == "time_series"


def test_crush_json_copies_items_verbatim_in_order():
    text = json.dumps([{"i": i, "x": 1.5} for i in range(50)]).replace("1.5", "1.50")
    out = crush_json(text, 7)
    kept = json.loads(out)
    assert len(kept) == 7 and [k["i"] for k in kept] == sorted(k["i"] for k in kept)
    assert '"x": 1.50' in out  # the original text, not a re-serialisation


leaf = st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=True) | st.text(max_size=8)
obj = st.dictionaries(
    st.sampled_from(["id", "status", "value", "ts", "name", "score", "extra"]),
    leaf | st.lists(leaf, max_size=2),
    max_size=5,
)


@given(
    st.lists(obj, max_size=60), st.integers(1, 20), st.sampled_from(["", "latest", "first all", "error 3"])
)
def test_never_longer_than_max_items_on_any_schema(items, k, query):
    idx = crush(items, k, query=query)
    assert len(idx) <= k and idx.dtype == np.int64
    assert idx.tolist() == sorted(set(idx.tolist())) and all(0 <= i < len(items) for i in idx)
    if len(items) <= k:
        assert len(idx) == len(items)


def test_scalars_and_huge_strings():
    assert crush(list(range(100)), 5).tolist()[0] == 0  # scalars read as {"value": x}
    items = [{"s": "x" * 1_000_000 if i == 3 else "y", "v": math.nan if i == 4 else i} for i in range(40)]
    assert len(crush(items, 6)) <= 6


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: crush([{"a": 1}, 2], 1), TypeError, "mixes objects and scalars"),
        (lambda: crush([[1, 2], [3]], 1), TypeError, "nested list"),
        (lambda: crush({"a": 1}, 1), TypeError, "list of JSON objects"),
        (lambda: crush([{"a": 1}], 0), ValueError, "max_items must be an integer >= 1"),
        (lambda: crush([{"a": 1}], 2, pattern="table"), ValueError, "pattern must be one of"),
        (lambda: crush_json('{"a": [1, 2]}', 3, path="b"), ValueError, "has no key 'b'"),
        (lambda: crush_json("[1, 2,", 3), ValueError, "malformed JSON"),
        (lambda: crush_json("[1, 2] x", 3), ValueError, "malformed JSON at character 7"),
        (lambda: AnchorConfig(strategy="fixed"), ValueError, "strategy"),
    ],
)
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


json_leaf = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.sampled_from(list('ab,[]{}":\\\n\t é東😀')), max_size=6)
)
json_obj = st.dictionaries(
    st.text("xyz", min_size=1, max_size=2), json_leaf | st.lists(json_leaf, max_size=3), max_size=4
)


@given(st.lists(json_obj, max_size=30), st.integers(1, 8), st.booleans())
def test_crush_json_equals_crush_on_the_parsed_array(items, k, pretty):
    text = json.dumps(items, indent=2 if pretty else None, ensure_ascii=False)
    out = json.loads(crush_json(text, k))
    assert out == [items[i] for i in crush(items, k)]


@given(st.lists(json_obj, max_size=30), st.booleans())
def test_columns_read_every_field_of_every_item(items, same_keys):
    if same_keys and items:  # every item with the first's keys, in varying order: the fast path
        keys = list(items[0])
        items = [{k: it.get(k, 0) for k in (keys if i % 2 else keys[::-1])} for i, it in enumerate(items)]
    c = columns(items)
    assert c.names == list(dict.fromkeys(k for it in items for k in it))
    plain_length = np.full(len(items), 2)
    for f, name in enumerate(c.names):
        for i, it in enumerate(items):
            code = int(c.codes[f, i])
            if name not in it:
                assert code == -1
                continue
            v = c.values[f][code]
            assert v == it[name] and type(v) is type(it[name])
            plain_length[i] += len(name) + 4 + len(str(it[name]))
    floats = sum(
        1 for it in items for v in it.values() if type(v) is float and not 0 < abs(v) < 1e-4
    )  # a float's length is estimated (see _number_lengths); everything else is exact
    assert np.abs(c.length - plain_length).sum() <= 3 * floats


def test_an_int_and_an_equal_float_are_two_values():
    """Hypothesis found ``[{"x": None}, {"x": 0}, {"x": 0.0}]`` read as 0 twice (a dict has one key
    for 0 and 0.0): the columns said the third item held an int."""
    c = columns([{"x": None}, {"x": 0}, {"x": 0.0}, {"x": 1.5}, {"x": 1}])
    got = [c.values[0][k] for k in c.codes[0].tolist()]
    assert got == [None, 0, 0.0, 1.5, 1] and [type(v) for v in got] == [type(None), int, float, float, int]


def test_number_lengths_are_exact_for_integers_and_close_for_floats():
    from scwo_np.anchor._columns import _number_lengths

    rng = np.random.default_rng(0)
    ints = [0, 9, 10, 99, 100, -1, -10, 2**53 - 1, *map(int, rng.integers(-(10**15), 10**15, 200))]
    got = _number_lengths(np.array(ints, dtype=float), {int}, ints)
    assert got.tolist() == [len(str(v)) for v in ints]
    floats = [3.0, -7.25, 0.1 + 0.2, 1e-05, -0.00012, 1e15 + 0.5, 2.5e-300]
    floats += [
        round(float(x), int(k)) for x, k in zip(rng.gamma(2, 50, 300), rng.integers(0, 8, 300), strict=True)
    ]
    got = _number_lengths(np.array(floats), {float}, floats)
    err = got - np.array([len(str(v)) for v in floats])
    assert np.abs(err).max() <= 3 and (err == 0).mean() > 0.85
    assert got[[0, 1, 3, 4]].tolist() == [3, 5, 5, 8] and got[6] == len("2.5e-300")  # exact when short
    mixed = [1, 2.5, 300, -4.125, 1e300]  # non-finite or huge values are spelled
    assert _number_lengths(np.array(mixed), {int, float}, mixed).tolist() == [len(str(v)) for v in mixed]


@given(
    st.lists(st.floats(-1e6, 1e6) | st.integers(-5, 5).map(float), min_size=1, max_size=40),
    st.sampled_from([0.0, 0.125, 0.25, 0.5, 0.75, 0.875, 1.0]),
)
def test_sorted_quantile_is_numpys_linear_quantile(values, q):
    from scwo_np.anchor._columns import _sorted_quantile

    s = np.sort(np.array(values))
    assert _sorted_quantile(s, q) == float(np.quantile(s, q))
