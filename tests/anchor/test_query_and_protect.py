"""Query position intent and protected items (issue 18)."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from scwo_np.anchor import crush, crush_json


def log(n=200, seed=3):
    rng = np.random.default_rng(seed)
    return [
        {
            "ts": f"2024-05-01T10:{i // 60:02d}:{i % 60:02d}",
            "service": f"svc{int(rng.integers(0, 8))}",
            "level": "ERROR" if rng.random() < 0.05 else "INFO",
            "msg": f"request {i} handled",
        }
        for i in range(n)
    ]


def test_latest_matches_are_the_most_recent_ones():
    items = log()
    svc2 = [i for i, it in enumerate(items) if it["service"] == "svc2"]
    kept, rep = crush(items, 12, query="latest errors in svc2", report=True)
    chosen = [i for i in kept.tolist() if items[i]["service"] == "svc2"]
    assert rep.query_matches > 0 and chosen
    # Every svc2 error is kept, and the other svc2 slots go to the most recent svc2 items.
    errors = [i for i in svc2 if items[i]["level"] == "ERROR"]
    assert set(errors) <= set(chosen)
    # Records in time order: the newest svc2 match is kept (the other kept svc2 items may be the
    # spread's, one record in each part of the timeline).
    plain = sorted(set(chosen) - set(errors))
    assert sorted(set(svc2) - set(errors))[-1] in plain
    first = crush(items, 12, query="first entries of svc2")
    early = sorted(i for i in first.tolist() if items[i]["service"] == "svc2")
    assert early[:3] == svc2[:3]


def test_a_plural_query_term_matches_its_singular():
    items = log()
    kept = crush(items, 12, query="errors in svc5")
    hits = [i for i in kept.tolist() if items[i]["level"] == "ERROR" and items[i]["service"] == "svc5"]
    assert hits == [i for i, it in enumerate(items) if it["level"] == "ERROR" and it["service"] == "svc5"]


def test_protected_items_are_always_kept_first():
    items = log()
    items[77]["msg"] = "payment gateway timeout"
    items[78] = dict(items[77])  # a copy: protected items are kept with their copies
    kept = crush(items, 6, protect=[r"gateway"])
    assert {77, 78} <= set(kept.tolist()) and len(kept) <= 6
    rule = {"service": "^svc7$", "msg": lambda m: "gateway" in m}
    want = [i for i, it in enumerate(items) if it["service"] == "svc7" or "gateway" in it["msg"]]
    assert crush(items, len(want), protect=rule).tolist() == want
    with pytest.raises(ValueError, match=f"{len(want)} items match protect, more than max_items=6"):
        crush(items, 6, protect=rule)


def test_protect_overflow_fails_closed_or_keeps_them_all():
    items = log()
    svc1 = [i for i, it in enumerate(items) if it["service"] == "svc1"]
    with pytest.raises(ValueError, match=f"{len(svc1)} items match protect, more than max_items=5"):
        crush(items, 5, protect={"service": "svc1"})
    kept, rep = crush(items, 5, protect={"service": "svc1"}, protect_overflow="keep", report=True)
    assert kept.tolist() == svc1 and rep.protected == len(svc1)


def test_protect_searches_json_spellings_and_checks_its_rules():
    items = [{"ok": True, "n": i, "tags": ["a", "b"] if i == 9 else []} for i in range(30)]
    assert 9 in crush(items, 3, protect=r'\["a", "b"\]').tolist()
    assert 20 in crush(items, 3, protect={"n": "^20$"}).tolist()
    with pytest.raises(ValueError, match="not a valid regular expression"):
        crush(items, 3, protect="(")
    with pytest.raises(ValueError, match=r"protect\['nope'\] is not a valid"):
        crush(items, 3, protect={"nope": "["})
    with pytest.raises(TypeError, match="protect must be"):
        crush(items, 3, protect=5)
    with pytest.raises(ValueError, match="protect_overflow must be"):
        crush(items, 3, protect="x", protect_overflow="drop")


def test_crush_json_passes_protect_through():
    items = log(50)
    out = json.loads(crush_json(json.dumps(items), 4, protect=re.compile("request 33 ")))
    assert items[33] in out


def test_rare_categories_are_kept_and_common_ones_are_not():
    items = [{"action": "install", "pkg": f"p{i}"} for i in range(1000)]
    for i in (13, 555, 901):
        items[i]["action"] = "remove"
    for i in range(0, 1000, 10):
        items[i]["action"] = "configure"  # 10%: common
    kept, rep = crush(items, 12, report=True)
    assert {13, 555, 901} <= set(kept.tolist()) and rep.rare == 3
    from scwo_np.anchor import AnchorConfig

    assert not {13, 555, 901} <= set(
        crush(items, 12, config=AnchorConfig(keep_rare_categories=False)).tolist()
    )
    few = items[:50]  # fewer than 1 / rare_share items: nothing is rare
    assert crush(few, 5, report=True)[1].rare == 0


def test_anomalies_stay_rare_when_a_spike_of_equal_values_collapses_the_mad():
    import numpy as np

    from scwo_np.anchor import columns
    from scwo_np.anchor._keep import anomaly_scores

    rng = np.random.default_rng(0)
    sizes = [4096] * 600 + [int(x) for x in rng.lognormal(8, 2, 1400)]  # directories, then files
    z = anomaly_scores(columns([{"size": s} for s in sizes]))
    assert 0 < (z > 3.5).sum() <= 20  # the most extreme 1%, not a third of the listing
    spike = [{"ms": 20.0 + (i % 5)} for i in range(500)]
    spike[250]["ms"] = 900.0
    assert np.flatnonzero(anomaly_scores(columns(spike)) > 3.5).tolist() == [250]  # one real outlier stays


def test_an_inflected_query_term_finds_the_bare_verb():
    # records name what happened by the bare verb; questions inflect it
    items = [
        {"seq": i, "action": "configure" if i % 10 == 3 else "status", "pkg": f"p{i}"} for i in range(200)
    ]
    want = [i for i, it in enumerate(items) if it["action"] == "configure"]
    for query in ("which were configured", "packages configuring"):
        kept = crush(items, 40, query=query).tolist()
        assert set(want) <= set(kept), query


def test_query_terms_drop_the_one_stop_word_list_but_keep_states_and_values():
    # scwo_np.text.STOPWORDS leaves a query, but words that name a record's state stay terms,
    # and numbers and ids are terms (scwo_np.text.TERM)
    from scwo_np.anchor._retrieval import query_terms

    assert query_terms("Show me where the hosts were down and the pages not found, please") == [
        "host", "down", "page", "not", "found",
    ]  # fmt: skip
    assert query_terms("how many 500 errors had user_id 42 in May") == [
        "mani",
        "500",
        "error",
        "user_id",
        "42",
        "may",
    ]
    items = [{"host": f"h{i}", "state": "down" if i == 37 else "up"} for i in range(120)]
    assert 37 in crush(items, 10, query="which host is down").tolist()


def _apt_history():
    """Records as /var/log/apt/history.log's: one per package, its command line on every record
    (a real one names several packages), so a package's name is a word of most records."""
    line = "apt-get install -qqy curl python3-dev python3-crcmod git make gnupg"
    names = ["curl", "python3-dev", "python3-crcmod", "git", "make", "gnupg", "python3", "libpython3-dev"]
    names += [f"lib{k}-dev" for k in range(300)] + [f"python3-mod{k}" for k in range(150)]
    return [{"timestamp": f"2025-06-24 14:{i // 60 % 60:02d}:{i % 60:02d}", "action": "install",
             "package": f"{p}:amd64", "commandline": line if i < 400 else "apt-get -qqy upgrade"}
            for i, p in enumerate(names)]  # fmt: skip


@pytest.mark.parametrize("query, want", [("python3-dev", "python3-dev:amd64"), ("git", "git:amd64")])
def test_a_package_named_by_the_query_is_kept_before_the_records_that_mention_it(query, want):
    """apt's history: "python3-dev" was split into "python3" and "dev", each a word of more than half
    the records, so nothing was left of the query; "git" tied its own record with the 300 whose
    command line names it. A name joined by punctuation is one term, and a whole value outranks a word."""
    items = _apt_history()
    kept = crush(items, 4, query=query)
    assert want in [items[i]["package"] for i in kept.tolist()]
    text = crush_json(json.dumps(items), budget=120, query=query)
    assert want in [x.get("package") for x in json.loads(text)]
    # its parts alone are not the name: python3-dev's record is not python3's
    assert "python3:amd64" not in [items[i]["package"] for i in crush(items, 2, query="python3-dev").tolist()]


DPKG_STATUS = Path("/var/lib/dpkg/status")


def _dpkg_status() -> list[dict]:
    """This machine's package database as JSON objects, one per package (fields as written)."""
    out = []
    for block in DPKG_STATUS.read_text(encoding="utf-8", errors="replace").split("\n\n"):
        rec, last = {}, None
        for line in block.splitlines():
            if line[:1] in (" ", "\t") and last:
                rec[last] += "\n" + line.strip()
            elif ":" in line:
                last, _, value = line.partition(":")
                rec[last] = value.strip()
        if rec:
            out.append(rec)
    return out


@pytest.mark.volume  # a real database of 680 kB crushed at 25 budgets
@pytest.mark.skipif(not DPKG_STATUS.exists(), reason="no /var/lib/dpkg/status on this machine")
def test_a_larger_budget_never_keeps_fewer_items_and_the_named_package_is_kept():
    """The package database as JSON: 400 tokens kept no item where 350 kept two (the room after the
    crush's picks was counted beside the marker's field summary, which goes first); 580 to 620 showed
    two records whole where 560 showed three (the crush's two picks were dearer than one pick and the
    items the room then took); and a query naming libssl3 kept other packages (libssl3 is in the
    Depends of many)."""
    items = _dpkg_status()
    text = json.dumps(items)
    # the records shown whole (a record crushed into the room left counts as part of one)
    kept = [
        sum("_omitted" not in x for x in json.loads(crush_json(text, budget=b))[:-1])
        for b in range(300, 800, 10)
    ]
    assert kept == sorted(kept) and kept[0] >= 1, kept
    name = "libssl3" if any(x.get("Package") == "libssl3" for x in items) else "libc6"
    for budget in (1000, 2000):
        out = json.loads(crush_json(text, budget=budget, query=name))
        assert name in [x.get("Package") for x in out[:-1]], budget


def test_a_term_matching_ten_times_fewer_items_goes_first():
    """A model price table (litellm's, 4,878 entries keyed by name) asked "claude-3-5-sonnet pricing":
    the 4 entries named so tied with the 1,450 whose source link says "pricing", and at 1,000
    tokens none of them was kept; among matches of as many terms, the rarer term's go first."""
    items = [
        {
            "model": f"vendor{i}/claude-3-5-sonnet" if i % 100 == 8 else f"vendor{i}/model-{i}",
            "source": f"https://vendor{i % 9}.example/pricing"
            if i % 2
            else f"https://vendor{i % 9}.example/docs",
            "cost": round(0.001 * (i % 17), 3),
        }
        for i in range(400)
    ]
    named = [i for i, it in enumerate(items) if it["model"].endswith("/claude-3-5-sonnet")]
    kept = crush(items, 8, query="claude-3-5-sonnet pricing")
    assert len(named) == 4 and set(named) <= set(kept.tolist())
