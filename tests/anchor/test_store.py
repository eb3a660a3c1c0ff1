"""CrushStore retrieval (issue 40): what was dropped, filtered, ranked and paged within a token ceiling."""

import json
import os
import sqlite3

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scwo_np.anchor import OPERATORS, CrushStore, Page, array_key, crush, crush_json
from scwo_np.tokens import count_tokens
from tests import naive

# ---------------------------------------------------------------------------
# random arrays, crushes and filters

WORDS = [
    "disk",
    "full",
    "errors",
    "error",
    "ok",
    "install",
    "remove",
    "libc6",
    "timeout",
    "slow",
    "2026-01-05",
]
FIELDS = ["a", "b", "msg", "date"]

values = st.one_of(
    st.integers(-5, 5),
    st.sampled_from([0.5, 1.0, 2.5, -1.5]),
    st.booleans(),
    st.none(),
    st.sampled_from(["2026-01-01", "2026-01-05", "2026-02-10T09:00:00", "2025-12-31"]),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join),
    st.lists(st.integers(0, 3), max_size=2),
)
records = st.dictionaries(st.sampled_from(FIELDS), values, max_size=4)
item = st.one_of(records, records, records, st.integers(0, 3), st.sampled_from(["ok", "disk full"]))


def operator_condition():
    num = st.sampled_from([-2, 0, 1, 2.5])
    date = st.sampled_from(["2026-01-01", "2026-01-05", "2026-02"])
    return st.one_of(
        st.builds(lambda v: {"eq": v}, values),
        st.builds(lambda v: {"contains": v}, st.sampled_from(["disk", "1", "2026-01", "tr", "e"])),
        st.builds(lambda v: {"exists": v}, st.booleans()),
        st.builds(lambda op, v: {op: v}, st.sampled_from(["gt", "gte", "lt", "lte"]), st.one_of(num, date)),
        st.builds(lambda lo, hi: {"gte": lo, "lt": hi}, num, num),
    )


conditions = st.one_of(values, operator_condition())
wheres = st.one_of(st.none(), st.dictionaries(st.sampled_from(FIELDS), conditions, min_size=1, max_size=2))


@st.composite
def crushes(draw):
    items = draw(st.lists(item, max_size=25))
    n = len(items)
    kept = draw(st.one_of(st.none(), st.lists(st.integers(0, max(n - 1, 0)), max_size=n).map(sorted)))
    if not n:
        kept = None if kept is None else []
    indent = draw(st.sampled_from([None, 1]))  # pretty-printed pieces: the page compacts them
    pieces = [json.dumps(x, indent=indent) for x in items]
    return items, pieces, kept


filters = st.fixed_dictionaries(
    {},
    optional={
        "where": wheres,
        "fields": st.lists(st.sampled_from(FIELDS), min_size=1, max_size=3),
        "start": st.integers(-30, 30),
        "stop": st.integers(-30, 30),
        "offset": st.integers(0, 8),
        "limit": st.integers(0, 8),
        "dropped_only": st.booleans(),
        "query": st.lists(st.sampled_from([*WORDS, "the", "latest"]), max_size=3).map(" ".join),
    },
)


def _stored(items, pieces, kept):
    store = CrushStore(":memory:")
    return store, store.put(pieces, kept=kept)


def _words(s):
    return len(s.split(",")) + len(s) // 7  # a counter that is not the estimate, still monotone


COUNTERS = [None, _words]


def _count(counter, text):
    return int(count_tokens([text], counter)[0])


# ---------------------------------------------------------------------------
# fast == reference


@given(crushes(), filters)
def test_retrieve_equals_the_reference(crush_, kw):
    items, pieces, kept = crush_
    store, key = _stored(items, pieces, kept)
    try:
        want, want_at = naive.crush_retrieve(items, kept, **kw)
    except ValueError:  # a filter that cannot match this array: an error in both
        with pytest.raises(ValueError):
            store.retrieve(key, **kw)
        return
    got, at = store.retrieve(key, **kw, with_positions=True)
    assert at == want_at
    assert json.dumps(got) == json.dumps(want)  # the same values and types (True is not 1)
    assert store.positions(key, **kw) == want_at
    assert json.loads(store.retrieve_json(key, **kw)) == json.loads(json.dumps(want))


@given(crushes(), filters, st.integers(1, 120), st.sampled_from(COUNTERS))
def test_a_page_equals_the_reference(crush_, kw, budget, counter):
    items, pieces, kept = crush_
    store, key = _stored(items, pieces, kept)
    try:
        text, at, nxt, remaining = naive.crush_page(
            items, pieces, kept, budget, lambda s: _count(counter, s), **kw
        )
    except ValueError:  # a filter that cannot match this array: an error in both
        with pytest.raises(ValueError):
            store.page(key, budget=budget, token_counter=counter, **kw)
        return
    window = naive.crush_retrieve(items, kept, **{**kw, "offset": kw.get("offset", 0)})[1]
    if window and not at:  # the first item alone does not fit: an error, never a cut item or an empty page
        with pytest.raises(ValueError, match="alone makes a page of"):
            store.page(key, budget=budget, token_counter=counter, **kw)
        return
    if _count(counter, "[]") > budget:
        with pytest.raises(ValueError, match="empty page"):
            store.page(key, budget=budget, token_counter=counter, **kw)
        return
    page = store.page(key, budget=budget, token_counter=counter, **kw)
    assert (page.text, page.positions, page.next_offset, page.remaining) == (text, at, nxt, remaining)
    assert page.tokens == _count(counter, page.text) <= budget
    assert json.loads(page.text) == json.loads(json.dumps(page.items))


@given(
    crushes(),
    wheres,
    st.sampled_from(COUNTERS),
    st.integers(0, 40),
    st.one_of(st.none(), st.just("disk error")),
)
def test_pages_walk_through_exactly_the_dropped_matching_items_once(crush_, where, counter, extra, query):
    items, pieces, kept = crush_
    store, key = _stored(items, pieces, kept)
    try:
        _, want = naive.crush_retrieve(items, kept, where=where, query=query)
    except ValueError:  # a filter that cannot match this array: an error in both
        with pytest.raises(ValueError):
            store.page(key, budget=100, token_counter=counter, where=where, query=query)
        return
    dropped = set(range(len(items))) - set(kept or ())
    assert set(want) <= dropped
    # a budget every single item fits in, plus some room
    single = [_count(counter, "[" + naive.compact_json(pieces[i]) + "]") for i in want]
    budget = max([*single, _count(counter, "[]")]) + extra
    seen, offset, pages = [], 0, 0
    while offset is not None:
        page = store.page(key, budget=budget, token_counter=counter, where=where, query=query, offset=offset)
        assert page.tokens == _count(counter, page.text) <= budget
        assert page.offset == offset and page.remaining == len(want) - len(seen) - len(page.positions)
        assert page.positions or not want
        seen += page.positions
        offset = page.next_offset
        pages += 1
        assert pages <= len(want) + 1
    assert seen == want  # every matching dropped item, once, in order (ranked order with a query)
    if query is None:
        assert seen == sorted(seen)


# ---------------------------------------------------------------------------
# the semantics, case by case

LOG = [
    {"date": "2026-01-01", "time": "10:00:00", "action": "install", "package": "libc6", "ms": 5},
    {"date": "2026-01-02", "time": "11:00:00", "action": "status", "package": "libc6", "state": None},
    {"date": "2026-01-03", "time": "12:00:00", "action": "install", "package": "curl", "ms": 250},
    {"date": "2026-02-01", "time": "09:30:00", "action": "remove", "package": "vim", "ms": 1},
    {"date": "2026-02-02", "time": "09:31:00", "action": "install", "package": "vim-tiny", "ok": True},
    {"date": "2026-03-01", "time": "08:00:00", "action": "install", "package": "python3", "ok": 1},
    "a line that is not an object",
]


@pytest.fixture
def logstore():
    store = CrushStore(":memory:")
    key = store.put([json.dumps(x) for x in LOG], kept=[0, 6])
    return store, key


def test_by_default_only_dropped_items_come_back(logstore):
    store, key = logstore
    assert store.positions(key) == [1, 2, 3, 4, 5]
    assert store.positions(key, dropped_only=False) == list(range(7))
    assert store.positions(key, where={"action": "install"}) == [2, 4, 5]


def test_the_operators(logstore):
    store, key = logstore
    p = store.positions
    assert set(OPERATORS) == {"eq", "contains", "exists", "gt", "gte", "lt", "lte"}
    assert p(key, where={"ok": True}) == [4] and p(key, where={"ok": 1}) == [5]  # True is not 1
    assert p(key, where={"ok": {"eq": True}}) == [4]
    assert p(key, where={"state": {"exists": True}}) == [1]  # present, though null
    assert p(key, where={"ms": {"exists": False}}) == [1, 4, 5]
    assert p(key, where={"package": {"contains": "vim"}}) == [3, 4]
    assert p(key, where={"ms": {"contains": "25"}}) == [2]  # a number's JSON text
    assert p(key, where={"ms": {"gte": 5, "lt": 300}}) == [2]
    assert p(key, where={"date": {"gte": "2026-02-01", "lt": "2026-03"}}) == [3, 4]  # ISO dates as strings
    with pytest.raises(ValueError, match=r"'ms' holds no strings"):  # a number is not compared with a string
        p(key, where={"ms": {"gt": "1"}})
    assert p(key, where={"date": lambda d: d.endswith("-01")}) == [3, 5]
    assert p(key, where=lambda it: isinstance(it, str), dropped_only=False) == [6]
    assert p(key, where={"x": {"exists": False}}, dropped_only=False) == [0, 1, 2, 3, 4, 5]  # objects only
    with pytest.raises(ValueError, match="are not operators"):  # a plain object where no item has one
        p(key, where={"ms": {"between": [1, 300]}})
    with pytest.raises(ValueError, match="did you mean 'action'"):  # a field no item has
        p(key, where={"Action": "install"})
    assert p(key, where={"action": "frobnicate"}) == []  # a field that exists, a value none has: no match


def test_filters_come_before_paging(logstore):
    """Issue 40: --where action=install --range 0:3 returned [] (the range was applied first)."""
    store, key = logstore
    assert store.positions(key, where={"action": "install"}, offset=0, limit=2) == [2, 4]
    assert store.positions(key, where={"action": "install"}, offset=2, limit=2) == [5]
    assert store.retrieve(key, where={"action": "install"}, fields=["package"], limit=3) == [
        {"package": "curl"},
        {"package": "vim-tiny"},
        {"package": "python3"},
    ]


def test_query_ranks_the_dropped_items_and_ties_keep_array_order(logstore):
    store, key = logstore
    assert store.positions(key, query="which vim packages") == [3, 4, 1, 2, 5]
    assert store.positions(key, query="the latest") == [1, 2, 3, 4, 5]  # no terms left: array order
    assert store.positions(key, query="curl", limit=1) == [2]


def test_a_page_is_within_the_budget_and_says_where_the_next_begins(logstore):
    store, key = logstore
    page = store.page(key, budget=25, where={"action": "install"}, fields=["date", "package"])
    assert isinstance(page, Page)
    assert page.text == '[{"date":"2026-01-03","package":"curl"},{"date":"2026-02-02","package":"vim-tiny"}]'
    assert page.tokens == count_tokens([page.text])[0] <= 25
    assert (page.positions, page.offset, page.next_offset, page.remaining) == ([2, 4], 0, 2, 1)
    last = store.page(key, budget=25, where={"action": "install"}, fields=["date", "package"], offset=2)
    assert (last.positions, last.next_offset, last.remaining) == ([5], None, 0)
    assert store.page(key, budget=5, where={"action": "nothing"}).text == "[]"
    with pytest.raises(
        ValueError,
        match=r"position 1 \(offset 0\) alone makes a page of \d+ tokens.*or pass offset=1 to page on past it",
    ):
        store.page(key, budget=10)
    past = store.page(key, budget=25, offset=1)  # as the error says: the page goes on past that item
    assert past.offset == 1 and 1 not in past.positions


def test_two_crushes_of_one_array_have_their_own_keys(tmp_path):
    pieces = [json.dumps({"i": i}) for i in range(10)]
    store = CrushStore(tmp_path / "s.sqlite")
    a, b = store.put(pieces, kept=[0, 1]), store.put(pieces, kept=[8, 9])
    assert a != b and a == array_key(pieces, kept=[1, 0]) and b == array_key(pieces, kept=np.array([9, 8]))
    assert store.positions(a) == list(range(2, 10)) and store.positions(b) == list(range(8))
    assert store._db.execute("SELECT COUNT(*) FROM arrays").fetchone()[0] == 1  # the array stored once
    whole = store.put(pieces)
    assert whole == array_key(pieces) and store.positions(whole) == list(range(10))


def test_crush_json_records_what_it_kept_in_both_modes(tmp_path):
    items = [
        {"i": i, "level": "ERROR" if i in (5, 77) else "INFO", "msg": f"GET /o/{i * 37 % 101}"}
        for i in range(200)
    ]
    text = json.dumps(items)
    store = CrushStore(tmp_path / "s.sqlite")
    for kw in ({"max_items": 12}, {"budget": 400}):
        out = json.loads(crush_json(text, store=store, **kw))
        kept, key = out[:-1], out[-1]["_omitted"]["key"]
        back = store.retrieve(key)
        assert len(back) + len(kept) == len(items)
        assert sorted(back + kept, key=lambda x: x["i"]) == items
        assert not {x["i"] for x in back} & {x["i"] for x in kept}
    by_items = crush(items, 12)
    assert json.loads(crush_json(text, 12, store=store))[-1]["_omitted"]["key"] == array_key(
        [json.dumps(x) for x in items], kept=by_items
    )


def _old_file(path, pieces):
    """A crush store file as the previous version wrote it: the arrays table alone, marked."""
    import time
    import zlib

    body = zlib.compress(("[" + ",".join(pieces) + "]").encode(), 1)
    key = array_key(pieces)
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE arrays (key TEXT PRIMARY KEY, created REAL NOT NULL, used REAL NOT NULL, n INTEGER NOT NULL, "
        "size INTEGER NOT NULL, body BLOB NOT NULL); CREATE INDEX arrays_used ON arrays (used);"
        "PRAGMA application_id = 1396922179; PRAGMA user_version = 1;"
    )
    db.execute(
        "INSERT INTO arrays VALUES (?, ?, ?, ?, ?, ?)",
        (key, time.time(), time.time(), len(pieces), len(body), body),
    )
    db.commit()
    db.close()
    return key


@pytest.mark.parametrize("marked", [True, False])
def test_a_file_of_the_previous_version_opens_and_its_keys_give_every_item(tmp_path, marked):
    path = str(tmp_path / "old.sqlite")
    pieces = [json.dumps({"i": i}) for i in range(5)]
    key = _old_file(path, pieces)
    if not marked:
        with sqlite3.connect(path) as db:
            db.execute("PRAGMA application_id = 0")
    with CrushStore(path) as store:
        assert store.positions(key) == [0, 1, 2, 3, 4]  # no kept positions recorded: all retrievable
        crushed = store.put(pieces, kept=[0])
        assert store.positions(crushed) == [1, 2, 3, 4] and store.positions(key) == [0, 1, 2, 3, 4]
    with CrushStore(path) as store:  # reopened: the migration is done once, the crush is there
        assert store.positions(crushed) == [1, 2, 3, 4]


def test_eviction_takes_an_array_s_crushes_with_it(tmp_path):
    store = CrushStore(tmp_path / "s.sqlite", max_entries=2)
    keys = [store.put([json.dumps({"i": i, "j": j}) for j in range(4)], kept=[0]) for i in range(3)]
    assert keys[0] not in store and keys[1] in store and keys[2] in store
    assert store._db.execute("SELECT COUNT(*) FROM crushes").fetchone()[0] == 2
    with pytest.raises(KeyError):
        store.retrieve(keys[0])
    many = [store.put([json.dumps({"i": 9, "j": j}) for j in range(4)], kept=[j]) for j in range(4)]
    assert store._db.execute("SELECT COUNT(*) FROM crushes").fetchone()[0] == 2  # crushes bounded too
    assert many[-1] in store and many[0] not in store


@pytest.mark.parametrize(
    "kw, error, match",
    [
        ({"where": {"ms": {"gt": 1, "between": [1, 2]}}}, ValueError, "unknown operator"),
        ({"where": {"ms": {"gte": float("nan")}}}, ValueError, "NaN"),
        ({"where": {"ms": {"gt": None}}}, TypeError, "must be a number or a string"),
        ({"where": {"msg": {"contains": 5}}}, TypeError, "contains"),
        ({"where": {"msg": {"exists": 1}}}, TypeError, "exists"),
        ({"where": 5}, TypeError, "where must be"),
        ({"fields": "date"}, TypeError, "fields must be a list"),
        ({"fields": []}, ValueError, "fields must name"),
        ({"limit": -1}, ValueError, "limit"),
        ({"offset": 1.5}, TypeError, "offset"),
        ({"dropped_only": "yes"}, TypeError, "dropped_only"),
        ({"query": b"disk"}, TypeError, "query"),
    ],
)
def test_bad_filters_name_the_argument_before_the_store_is_read(kw, error, match):
    store = CrushStore(":memory:")
    with pytest.raises(error, match=match):
        store.retrieve("no-such-key", **kw)  # checked first: not a KeyError
    with pytest.raises(error, match=match):
        store.page("no-such-key", budget=100, **kw)


def test_put_checks_kept():
    store = CrushStore(":memory:")
    with pytest.raises(ValueError, match="kept holds position 3, outside 0..2"):
        store.put(["1", "2", "3"], kept=[3])
    with pytest.raises(TypeError, match="kept must be a flat list of int"):
        store.put(["1", "2", "3"], kept=[True])
    assert store.positions(store.put(["1", "2", "3"], kept=[])) == [0, 1, 2]


# ---------------------------------------------------------------------------
# real data: a package manager's log no one here wrote


def _dpkg(limit=None):
    path = "/var/log/dpkg.log"
    if not os.path.exists(path):
        pytest.skip("no /var/log/dpkg.log on this machine")
    out = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) < 3:
                continue
            rec = {"date": parts[0], "time": parts[1], "action": parts[2]}
            if parts[2] == "status" and len(parts) >= 6:
                rec.update(state=parts[3], package=parts[4], version=parts[5])
            elif (
                parts[2] in ("install", "upgrade", "remove", "purge", "trigproc", "configure")
                and len(parts) >= 4
            ):
                rec.update(package=parts[3], **({"version": parts[-1]} if len(parts) >= 5 else {}))
            else:
                rec["detail"] = " ".join(parts[3:])
            out.append(rec)
    return out[:limit]


def test_real_dpkg_log_pages_through_every_dropped_install_once(tmp_path):
    records = _dpkg()
    store = CrushStore(tmp_path / "s.sqlite")
    out = json.loads(crush_json(json.dumps(records), budget=500, store=store))
    kept, key = out[:-1], out[-1]["_omitted"]["key"]
    dropped = store.positions(key)
    assert len(dropped) == len(records) - len(kept)
    kept_texts = {json.dumps(x, sort_keys=True) for x in kept}
    assert not [i for i in dropped if json.dumps(records[i], sort_keys=True) in kept_texts and
                records.count(records[i]) == 1]  # fmt: skip
    want = [i for i in dropped if records[i]["action"] == "install"]
    seen, offset = [], 0
    while offset is not None:
        page = store.page(key, budget=300, where={"action": "install"}, offset=offset)
        assert count_tokens([page.text])[0] <= 300
        seen += page.positions
        offset = page.next_offset
    assert seen == want and want
    three = store.retrieve(key, where={"action": "install"}, limit=3, with_positions=True)
    assert three[1] == want[:3] and [x["action"] for x in three[0]] == ["install"] * 3


def test_where_and_fields_on_text_items_say_they_are_for_objects():
    """Records, sentences and hunks are stored as text: where matched nothing and fields did nothing,
    silently (a new user's retrieve_dropped calls through the proxy)."""
    store = CrushStore(":memory:")
    key = store.put(['"2026-01-01 INFO ok"', '"2026-01-02 ERROR disk full"'], kept=[])
    with pytest.raises(
        ValueError, match="where filters JSON objects by their fields; the items under this key are text"
    ):
        store.retrieve(key, where={"level": "ERROR"})
    with pytest.raises(ValueError, match="fields project JSON objects; the items under this key are text"):
        store.retrieve(key, fields=["level"])
    assert store.retrieve(key, query="disk")[0] == "2026-01-02 ERROR disk full"  # what works on text


def test_a_field_no_item_has_is_a_typo_not_empty_objects():
    """``scwo crush --retrieve KEY --fields pakage`` gave ``[{},{},{}]`` and exit 0, where ``--where
    pakage=git`` said "did you mean"."""
    store = CrushStore(":memory:")
    key = store.put(['{"package": "git", "v": 1}', '{"package": "vim"}'])
    assert store.retrieve(key, fields=["v", "package"]) == [{"v": 1, "package": "git"}, {"package": "vim"}]
    with pytest.raises(
        ValueError, match=r"fields names 'pakage', which no item has \(did you mean 'package'\?\)"
    ):
        store.retrieve(key, fields=["pakage"])
    with pytest.raises(ValueError, match="the items' fields are 'package', 'v'"):
        store.retrieve_json(key, fields=["nope"])
