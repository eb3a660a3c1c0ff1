"""Records in time order keep their time (issue 40): the newest, a spread, must-keep items across the timeline."""

import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scwo_np.anchor import columns, crush, crush_json, detect_pattern, is_marker
from scwo_np.anchor._keep import error_severity, rare_groups
from scwo_np.anchor._patterns import timeline_fields, timeline_order
from scwo_np.anchor._timeline import spread, water_fill
from scwo_np.tokens import count_tokens
from tests import naive

DPKG_LOG = Path("/var/log/dpkg.log")  # read at run time, never copied into the repository

ACTIONS = ["status"] * 12 + ["configure"] * 4 + ["install"] * 4 + ["upgrade", "startup", "trigproc", "remove"]


@st.composite
def log_records(draw, min_size=0, max_size=160):
    """dpkg-like records in time order (date and time split), some of them errors."""
    n = draw(st.integers(min_size, max_size))
    steps = draw(st.lists(st.integers(0, 30_000), min_size=n, max_size=n))  # 0: records in the same second
    t, out = 0, []
    for s in steps:
        t += s
        day, sec = divmod(t, 86_400)  # at most 56 days: the dates stay in 2025
        rec = {
            "date": f"2025-{1 + day // 28:02d}-{1 + day % 28:02d}",
            "time": f"{sec // 3600:02d}:{sec // 60 % 60:02d}:{sec % 60:02d}",
            "action": draw(st.sampled_from(ACTIONS)),
            "package": f"pkg{draw(st.integers(0, 30))}",
        }
        if draw(st.integers(0, 19)) == 0:
            rec["status"] = "error"
        out.append(rec)
    return out


def _rank(order):
    rank = np.empty(order.size, np.int64)
    rank[order] = np.arange(order.size)
    return rank


def _check_kept(items, kept):
    """The guarantees on one crush's kept positions."""
    n = len(items)
    order = timeline_order(columns(items))
    if kept.size:
        assert int(order[-1]) in kept.tolist()  # the newest record, whenever anything is kept
    if kept.size >= 20:  # every tenth of the timeline has a kept record
        assert set((_rank(order)[kept] * 10 // n).tolist()) == set(range(10))


@settings(max_examples=60, deadline=None)
@given(items=log_records(), k=st.integers(1, 60), reverse=st.booleans())
def test_crush_keeps_the_newest_and_a_spread(items, k, reverse):
    items = items[::-1] if reverse else items  # newest first, as changelogs are written
    kept, rep = crush(items, k, report=True)
    assert len(kept) <= k and list(kept) == sorted(set(kept.tolist()))
    if len(items) > k:
        assert rep.pattern == "logs"
        _check_kept(items, kept)
        assert rep.must_keep_dropped == sum(rep.must_keep_by_kind.values())


@settings(max_examples=40, deadline=None)
@given(items=log_records(), k=st.integers(1, 60))
def test_position_alone_is_a_timeline(items, k):
    items = [
        {"msg": f"{r['action']} {r['package']}", **({"level": "ERROR"} if "status" in r else {})}
        for r in items
    ]
    kept = crush(items, k, pattern="logs")
    if len(items) > k and kept.size:
        assert kept[-1] == len(items) - 1
    if kept.size >= 20:
        assert set((kept * 10 // len(items)).tolist()) == set(range(10))


def _positions(items, out):
    """Kept positions read from the marker (its ranges' complement), checked against the kept items."""
    arr = json.loads(out)
    marker = arr[-1]["_omitted"] if arr and is_marker(arr[-1]) else None
    kept_items = arr[:-1] if marker else arr
    if marker is None:
        assert kept_items == items
        return np.arange(len(items)), None
    listed = [p for a, b in marker["ranges"] for p in range(a, b + 1)]
    assert listed == sorted(set(listed))
    kept = np.array(sorted(set(range(len(items))) - set(listed)), dtype=np.int64)
    assert [items[i] for i in kept.tolist()] == kept_items  # exactly the complement, verbatim, in order
    assert marker["count"] == len(listed) == len(items) - len(kept) and marker["of"] == len(items)
    return kept, marker


def pieces(text: str) -> int:
    """Words and punctuation marks, one token each (a WordPiece-like counter the core can run)."""
    return len(re.findall(r"\w+|[^\w\s]", text))


pieces.name = "pieces"


@settings(max_examples=50, deadline=None)
@given(
    items=log_records(min_size=1),
    budget=st.integers(40, 2500),
    counter=st.sampled_from(["estimate", pieces]),
    query=st.sampled_from(["", "latest installs", "first configure"]),
)
def test_crush_json_to_a_ceiling(items, budget, counter, query):
    try:
        out = crush_json(json.dumps(items), budget=budget, token_counter=counter, query=query)
    except ValueError as exc:
        assert "too small" in str(exc)
        return
    assert count_tokens([out], counter)[0] <= budget  # never over the ceiling
    doc = json.loads(out)
    if isinstance(doc, dict) and "_columnar" in doc:  # the lossless form: nothing dropped
        return
    kept, marker = _positions(items, out)
    _check_kept(items, kept)
    if marker is not None and "must_keep_by_kind" in marker:
        assert marker["must_keep_dropped"] == sum(marker["must_keep_by_kind"].values())


def test_errors_that_do_not_fit_are_chosen_across_the_timeline():
    items = [{"date": f"2025-01-{1 + i // 100:02d}", "time": f"{i % 100 // 60:02d}:{i % 60:02d}:00",
              "level": "ERROR" if i % 10 == 0 else "INFO", "msg": f"job {i}"} for i in range(1000)]  # fmt: skip
    kept, rep = crush(items, 30, report=True)
    errs = [i for i in kept.tolist() if items[i]["level"] == "ERROR"]
    assert 990 in errs and errs[0] < 300 and max(np.diff(errs)) < 300  # the newest error, and a spread
    assert rep.must_keep_by_kind == {"errors": 100 - len(errs)} and rep.must_keep_dropped == 100 - len(errs)
    out = crush_json(json.dumps(items), budget=400)
    m = json.loads(out)[-1]["_omitted"]
    assert (
        set(m["must_keep_by_kind"]) == {"errors"}
        and m["must_keep_dropped"] == m["must_keep_by_kind"]["errors"]
    )


def test_errors_come_before_rare_kinds_and_the_spread_in_a_small_budget():
    """dpkg records with three errors (62, 37 and 47 tokens): at 300 tokens one was kept, beside six
    records of rare kinds and the spread; all three and the newest fit."""
    rare = {700: "startup", 900: "remove", 1100: "trigproc", 1300: "purge"}
    items = [{"date": f"2026-05-{1 + i // 200:02d}", "time": f"{i % 200 // 60:02d}:{i % 60:02d}:00",
              "action": next((a for m, a in rare.items() if i % m == 0), ("status", "configure", "install")[i % 3]),
              "detail": f"libpkg{i}:amd64 1.{i}"} for i in range(1, 5001)]  # fmt: skip
    for k, pos in enumerate((1000, 2500, 4000)):
        items[pos] = {**items[pos], "level": "ERROR", "action": "error",
                      "detail": f"dpkg: error processing package postgresql-{15 + k} (--configure): installed "
                                "post-installation script subprocess returned error exit status 1"}  # fmt: skip
    text = json.dumps(items)
    for budget in (300, 400):
        kept = json.loads(crush_json(text, budget=budget))
        assert sum(x.get("level") == "ERROR" for x in kept) == 3 and kept[-2] == items[-1], budget


def test_a_query_moves_the_spread():
    items = [{"date": "2025-01-01", "time": f"{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}",
              "action": "install", "package": f"p{i}"} for i in range(2000)]  # fmt: skip
    place = {q: float(np.mean(crush(items, 40, query=q))) for q in ("", "latest", "the first ones")}
    assert place["latest"] > place[""] > place["the first ones"]


def test_split_date_and_time_are_a_timeline():
    rows = [{"date": "2025-06-24", "time": "14:36:25", "action": "startup", "what": "archives"},
            {"date": "2025-06-24", "time": "14:36:26", "action": "install", "package": "less"}] * 10  # fmt: skip
    c = columns(rows)
    assert timeline_fields(c) == ("date", "time") and detect_pattern(c) == "logs"
    line = columns([{"line": i, "text": f"Unpacking p{i}"} for i in range(10)])
    assert timeline_fields(line) == ("line",) and detect_pattern(line) == "logs"


@pytest.mark.skipif(not DPKG_LOG.exists(), reason="no /var/log/dpkg.log on this machine")
def test_a_real_dpkg_log_keeps_its_time():
    """This machine's dpkg.log (a real package manager's log): the newest record and every tenth survive."""
    from scwo_evals.logs import check_output, dpkg_records

    recs = dpkg_records(DPKG_LOG.read_text(encoding="utf-8", errors="replace").splitlines())
    if len(recs) < 100:
        pytest.skip("too short a dpkg.log")
    for budget in (500, 1500):
        out = crush_json(json.dumps(recs), budget=budget)
        r = check_output(recs, out, budget, lambda s: int(count_tokens([s])[0]))
        assert r["newest"] and not r["over"] and r["ranges_exact"]
        assert r["kept"] < 20 or r["tenths"] == 10


# ---- fast == reference ---------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    dates=st.lists(
        st.one_of(st.none(), st.sampled_from(["2025-01-01", "2025-01-02", "2025-02-01"])), max_size=30
    ),
    times=st.data(),
)
def test_timeline_order_matches_the_reference(dates, times):
    ts = times.draw(st.lists(st.sampled_from(["00:00:01", "09:30:00", "23:59:59"]), min_size=len(dates),
                             max_size=len(dates)))  # fmt: skip
    rows = [
        {"time": t, "msg": "x"} | ({"date": d} if d is not None else {})
        for d, t in zip(dates, ts, strict=True)
    ]
    if not rows:
        return
    c = columns(rows)
    fields = ("date", "time") if "date" in c.names else ("time",)
    keys = [(r["date"], r["time"]) if "date" in r else None for r in rows] if "date" in c.names else ts
    assert timeline_order(c, fields).tolist() == naive.timeline_order(keys)


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(
        st.dictionaries(
            st.sampled_from(["a", "b", "c"]),
            st.one_of(st.sampled_from(["x", "y", "z", "w"]), st.booleans()),
            min_size=1,
        ),
        max_size=60,
    ),  # fmt: skip
    share=st.sampled_from([0.01, 0.1, 0.3]),
)
def test_rare_groups_match_the_reference(rows, share):
    if not rows:
        return
    got = rare_groups(columns(rows), share).tolist()
    want = naive.rare_groups(rows, share)
    assert [g < 0 for g in got] == [w is None for w in want]
    pairs = {}
    for g, w in zip(
        got, want, strict=True
    ):  # one number per (field, value), and one (field, value) per number
        if g >= 0:
            assert pairs.setdefault(g, w) == w
    assert len(set(pairs.values())) == len(pairs)


@given(needs=st.lists(st.integers(0, 20), max_size=6), room=st.integers(-2, 80))
def test_water_fill_matches_the_reference(needs, room):
    assert water_fill(needs, room) == naive.water_fill(needs, room)


@given(m=st.integers(1, 200), r=st.integers(1, 200))
def test_spread_is_even_and_ends_at_the_last(m, r):
    s = spread(m, r)
    assert s.size == min(m, r) and s[-1] == m - 1 and (np.diff(s) > 0).all()
    gaps = np.diff(np.concatenate([[-1], s]))
    assert gaps.max() - gaps.min() <= 1


# ---- the last raw messages (8) -----------------------------------------------------------


def test_non_string_keys_are_named():
    with pytest.raises(TypeError, match=r"items\[1\] has the key 1 \(int\).*keys are strings"):
        crush([{"a": 1}, {1: 2}] * 10, 3)


def test_sets_and_unhashable_values_are_handled():
    items = [{"id": i, "tags": {"a", f"t{i % 3}"}, "extra": [{1, 2}] if i == 7 else []} for i in range(50)]
    kept = crush(items, 5)
    assert len(kept) == 5
    out = crush([{"k": bytearray(b"x")}, {"k": {"s": {1}}}, {"k": {1: "a", "b": 2}}] * 5, 2)
    assert len(out) <= 2


def test_error_words_in_a_text_field_make_an_error():
    """dpkg's log as JSON records: its lower-case "dpkg: error processing ..." lines were not errors
    (no status or level field), and none of four was kept at 300 to 1,000 tokens."""
    names = ("libfoo", "liberror-perl", "libgpg-error-dev")  # a name is not an error
    items = [{"date": "2026-05-09", "time": f"{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}",
              "msg": f"status installed {names[i % 3]}{i}:amd64 1.{i}"} for i in range(4000)]  # fmt: skip
    for k, pos in enumerate((800, 2000, 3200, 3950)):
        items[pos] = {**items[pos], "msg": f"dpkg: error processing package mysql-server-{k} (--configure):"}
    kept = json.loads(crush_json(json.dumps(items), budget=300))
    assert sum("dpkg: error" in x.get("msg", "") for x in kept) == 4 and kept[-2] == items[-1]
    assert np.flatnonzero(error_severity(columns(items))).tolist() == [800, 2000, 3200, 3950]


def test_an_error_word_in_a_description_is_not_an_error():
    """/var/lib/dpkg/status as JSON: valgrind's and libasan's descriptions ("a fast memory error
    detector") made ten healthy packages "errors", kept first and announced as dropped errors in
    the marker. A field that describes a thing is not read for error words; a message field is."""
    pkgs = [{"Package": f"lib{i}", "Status": "install ok installed", "Version": f"1.{i}",
             "Description": f"library number {i}\n common files"} for i in range(300)]  # fmt: skip
    for k in (40, 120, 260):
        pkgs[k] = {**pkgs[k], "Description": "a fast memory error detector\n AddressSanitizer finds errors."}
    pkgs[200] = {**pkgs[200], "Package": "libcom-err2", "Summary": "common error description library"}
    assert not error_severity(columns(pkgs)).any()
    kept = json.loads(crush_json(json.dumps(pkgs), budget=300))
    marker = [x for x in kept if is_marker(x)]
    assert len(marker) == 1 and '"errors"' not in json.dumps(marker)
    log = [{"time": f"10:00:{i:02d}", "message": f"unpacked lib{i}"} for i in range(50)]
    log[30] = {"time": "10:00:30", "message": "dpkg: error processing package lib30 (--configure)"}
    assert (
        error_severity(columns(log))[30] > 0
        and error_severity(columns(log)).sum() == error_severity(columns(log))[30]
    )
