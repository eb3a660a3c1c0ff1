"""max_items="auto" (issue 18): the size follows the information in the data."""

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scwo_np.anchor import AnchorConfig, columns, crush, crush_json
from scwo_np.anchor._auto import _coverage_curve, _facts, auto_size, information_curve
from tests import naive


@given(st.lists(st.lists(st.integers(0, 15), max_size=6), max_size=25), st.integers(1, 30))
@settings(max_examples=300, deadline=None)
def test_the_lazy_coverage_curve_equals_plain_greedy(item_facts, limit):
    uniq = [sorted(set(f)) for f in item_facts]
    indptr = np.zeros(len(uniq) + 1, dtype=np.int64)
    np.cumsum([len(f) for f in uniq], out=indptr[1:])
    facts = np.array([x for f in uniq for x in f], dtype=np.int64)
    limit = min(limit, len(uniq))
    got = _coverage_curve(indptr, facts, np.int64(16), np.int64(limit)).tolist()
    assert got == naive.greedy_coverage_curve(uniq, limit)


def test_facts_are_what_the_module_says():
    items = [
        {"id": "req-000731", "svc": "svc2", "ms": 3, "msg": "user logged in from the mobile app today"},
        {"id": "req-000732", "svc": "svc3", "ms": 900, "msg": "user logged out"},
        {"id": "req-000733", "svc": "svc3", "ok": True},
    ]
    indptr, facts, n = _facts(columns(items))
    per_item = [set(facts[indptr[i] : indptr[i + 1]].tolist()) for i in range(3)]
    # id and svc normalise to one fact each; the long message is words; the field sets differ.
    assert len(per_item[0] & per_item[1]) == 2 + 1  # id, svc, and the word "user"/"logged" share
    assert len(per_item[0]) == 2 + 1 + 7 + 1  # id, svc, ms bucket, 7 distinct words, field set
    assert information_curve(columns(items))[-1] == len(set().union(*per_item)) <= n


def _log(n, seed=0):
    rng = np.random.default_rng(seed)
    return [
        {"ts": f"2024-05-01T10:{i // 60 % 60:02d}:{i % 60:02d}", "service": f"svc{rng.integers(0, 4)}",
         "level": "INFO", "msg": f"request {i} handled in {rng.integers(1, 50)} ms"}
        for i in range(n)
    ]  # fmt: skip


def _diverse(n, seed=0):
    rng = np.random.default_rng(seed)
    words = [
        f"w{chr(97 + a)}{chr(97 + b)}{chr(97 + c)}" for a in range(8) for b in range(8) for c in range(8)
    ]
    return [{"title": " ".join(rng.choice(words, 6)), "url": f"https://example.org/{i}"} for i in range(n)]


def test_repetitive_data_keeps_few_and_diverse_data_keeps_many():
    small = auto_size(columns(_log(2000)))
    large = auto_size(columns(_diverse(2000)))
    assert small <= 15 and large >= 60, (small, large)
    assert len(crush(_log(2000), "auto")) < 30 <= len(crush(_diverse(2000), "auto"))


def test_bias_and_upper_bound():
    c = columns(_diverse(2000))
    sizes = [auto_size(c, bias=b) for b in ("aggressive", "balanced", "conservative")]
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1]
    assert auto_size(c, upper=20) == 20
    assert auto_size(c, bias=0.5) <= sizes[0]
    with pytest.raises(ValueError, match="bias must be one of"):
        auto_size(c, bias="wild")
    with pytest.raises(ValueError, match="bias must be one of"):
        auto_size(c, bias=1.5)


def test_auto_keeps_every_error_anomaly_and_query_match():
    items = _log(3000)
    errs = [5, 700, 1500, 2200, 2999] + list(range(100, 140))
    for i in errs:
        items[i] = dict(items[i], level="ERROR")
    kept, rep = crush(items, "auto", query="what happened to svc3", report=True)
    assert set(errs) <= set(kept.tolist())
    assert rep.max_items >= len(errs) + rep.query_matches and len(kept) <= rep.max_items
    assert rep.must_keep_dropped == 0


def test_small_arrays_pass_through_and_crush_json_takes_auto():
    assert crush([{"a": i} for i in range(3)], "auto").tolist() == [0, 1, 2]
    out = json.loads(crush_json(json.dumps({"rows": _log(500)}), "auto", marker=True))
    assert len(out["rows"]) < 40 and out["rows"][-1]["_omitted"]["of"] == 500
    with pytest.raises(ValueError, match="positive integer or 'auto'"):
        crush(_log(10), "many")


def test_the_curve_ends_at_the_total():
    c = columns(_log(300))
    curve = information_curve(c)
    indptr, facts, _ = _facts(c)
    assert curve.shape == (300,) and (np.diff(curve) >= 0).all() and curve[-1] == np.unique(facts).size


@given(st.text(st.sampled_from(list("aZ09#-_ éÉ東😀İ\x1f")), max_size=40))
def test_norm_equals_the_plain_regular_expressions(s):
    import re

    from scwo_np.anchor._auto import _HEX, _norm

    low = s.lower()
    if re.search("[0-9a-f]{8}", low[:4096]):
        low = _HEX.sub("#", low)
    assert _norm(s) == re.sub("#+", "#", re.sub("[0-9]", "#", low))


@given(st.text(st.sampled_from(list("0123456789abcdefgA é\ud800")), max_size=30), st.integers(0, 4200))
def test_hex_runs_are_found_as_the_regular_expression_finds_them(s, pad):
    import re

    from scwo_np.anchor._auto import _has_hex_run

    for text in (s, "z" * pad + s, s * 300):
        assert _has_hex_run(text) == bool(re.search("[0-9a-f]{8}", text[:4096]))


DPKG_LOG = Path("/var/log/dpkg.log")


def _dpkg_log() -> list[dict]:
    """This machine's dpkg.log as records: time, action, and the rest as dpkg wrote it."""
    out = []
    for line in DPKG_LOG.read_text(encoding="utf-8", errors="replace").splitlines():
        parts = line.split()
        if len(parts) >= 3:
            out.append({"ts": f"{parts[0]}T{parts[1]}", "action": parts[2], "detail": " ".join(parts[3:])})
    return out


@pytest.mark.skipif(not DPKG_LOG.exists(), reason="no /var/log/dpkg.log on this machine")
def test_auto_keeps_every_must_keep_record_of_a_real_log():
    """ "auto" sizes itself to hold every must-keep record *and* the timeline's newest and spread:
    on dpkg.log (5,089 records here) it kept 161 and dropped 8 of its 158 rare records."""
    items = _dpkg_log()
    if len(items) < 200:
        pytest.skip("too short a dpkg.log to crush")
    kept, rep = crush(items, "auto", report=True)
    assert rep.pattern == "logs" and len(kept) < len(items)
    assert rep.must_keep_dropped == 0 and not rep.must_keep_by_kind, rep.must_keep_by_kind
    assert int(kept[-1]) == len(items) - 1  # the newest record


@pytest.mark.skipif(not DPKG_LOG.exists(), reason="no /var/log/dpkg.log on this machine")
def test_dropped_query_matches_are_announced():
    """More query matches than half the slots: the best are kept, and every match as good as those
    left out is counted in the marker (84 records naming a package, 11 kept, the rest unsaid)."""
    from scwo_np.anchor._keep import query_matches

    items = _dpkg_log()
    words = Counter(
        w.split(":")[0] for it in items for w in it["detail"].split()[:1] if "-" in w or w.isalpha()
    )
    name = next((w for w, k in words.most_common() if k >= 12), None)
    if name is None:
        pytest.skip("no package with 12 records in this dpkg.log")
    query = f"when was {name} installed"
    kept, rep = crush(items, 8, query=query, report=True)
    qm = query_matches(rep.columns, query, AnchorConfig())
    taken = rep.must_keep["query_matches"]
    assert taken.size > 4  # more matches as good as the kept ones than half the 8 slots
    left = np.setdiff1d(taken, kept)
    assert left.size and rep.must_keep_by_kind["query_matches"] == left.size
    assert qm[left].min() >= qm[np.intersect1d(kept, np.flatnonzero(qm))].min()
    marker = json.loads(crush_json(json.dumps(items), 8, query=query, marker=True))[-1]["_omitted"]
    assert marker["must_keep_by_kind"]["query_matches"] == left.size
