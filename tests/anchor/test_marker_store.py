"""The omission marker and the store that gives dropped items back (issue 18)."""

import itertools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from scwo_np.anchor import crush, crush_json
from scwo_np.anchor._marker import is_marker
from scwo_np.anchor._store import CrushStore, array_key


def log(n=300, seed=0):
    rng = np.random.default_rng(seed)
    return [
        {
            "id": f"req-{i:04d}",
            "level": str(rng.choice(["INFO", "WARN", "ERROR"], p=[0.85, 0.13, 0.02])),
            "ms": round(float(rng.gamma(2.0, 20.0)), 2),
            **({"trace": {"span": i}} if i % 50 == 0 else {}),
        }
        for i in range(n)
    ]


def test_the_marker_says_how_many_from_where_and_what_without_touching_kept_items():
    items = log()
    text = json.dumps(items, indent=1)
    out = json.loads(crush_json(text, 20, marker=True))
    kept, m = out[:-1], out[-1]["_omitted"]
    idx = crush(items, 20).tolist()
    assert kept == [items[i] for i in idx] and is_marker(out[-1])
    dropped = sorted(set(range(len(items))) - set(idx))
    assert m["count"] == len(dropped) and m["of"] == len(items)
    listed = [i for a, b in m["ranges"] for i in range(a, b + 1)]
    assert listed == dropped[: len(listed)] and len(m["ranges"]) + m.get("more_ranges", 0) >= 2
    f = m["fields"]
    assert f["ms"]["min"] == min(items[i]["ms"] for i in dropped)
    assert f["ms"]["max"] == max(items[i]["ms"] for i in dropped)
    levels = [items[i]["level"] for i in dropped]
    assert f["level"]["top"][0] == ["INFO", levels.count("INFO")]
    assert f["id"] == {"count": len(dropped), "distinct": len(dropped)}
    assert f["trace"]["count"] == sum("trace" in items[i] for i in dropped)
    assert "key" not in m  # nothing stored, no key


def test_no_marker_when_nothing_was_dropped_and_marker_lines_in_json_lines():
    assert crush_json("[1, 2]", 5, marker=True) == "[1,2]"
    lines = "\n".join(json.dumps(x) for x in log(40))
    out = crush_json(lines, 5, marker=True).splitlines()
    assert is_marker(json.loads(out[-1])) and len(out) <= 6


def test_the_marker_sits_inside_a_wrapper_object():
    doc = {"took": 4, "results": log(60)}
    out = json.loads(crush_json(json.dumps(doc), 10, marker=True))
    assert out["took"] == 4 and is_marker(out["results"][-1])


def test_store_and_retrieve_by_range_and_by_field(tmp_path):
    items = log()
    path = tmp_path / "store.sqlite"
    out = json.loads(crush_json(json.dumps(items), 15, store=path))
    key = out[-1]["_omitted"]["key"]
    kept = set(crush(items, 15).tolist())
    dropped = [it for i, it in enumerate(items) if i not in kept]
    with CrushStore(path) as store:
        assert key in store and len(store) == 2  # the crush's key and its array's own
        assert store.retrieve(key) == dropped  # what was dropped, never what was kept (issue 40)
        assert store.retrieve(key, dropped_only=False) == items
        assert store.retrieve(key, start=10, stop=13, dropped_only=False) == items[10:13]
        assert store.retrieve(key, start=-2, dropped_only=False) == items[-2:]
        errors = [it for it in dropped if it["level"] == "ERROR"]
        assert store.retrieve(key, where={"level": "ERROR"}) == errors
        assert store.retrieve(key, where={"ms": lambda v: v > 100}) == [
            it for it in dropped if it["ms"] > 100
        ]
        assert store.retrieve(key, where=lambda it: "trace" in it) == [it for it in dropped if "trace" in it]
        assert json.loads(store.retrieve_json(key, start=0, stop=2, dropped_only=False)) == items[:2]
        with pytest.raises(KeyError, match="never stored there, or evicted"):
            store.retrieve("0" * 16)
        with pytest.raises(TypeError, match="where must be"):
            store.retrieve(key, where=3)


def test_retrieve_json_is_verbatim_and_the_key_is_the_crush():
    store = CrushStore(":memory:")
    text = '[{"x": 1.50}, {"x": 2.0}, {"x": 3}, {"x": 4}]'
    out = json.loads(crush_json(text, 2, store=store, config=None))
    key = out[-1]["_omitted"]["key"]
    pieces = ['{"x": 1.50}', '{"x": 2.0}', '{"x": 3}', '{"x": 4}']
    kept = crush(json.loads(text), 2)
    assert key == array_key(pieces, kept=kept) != array_key(pieces)
    assert store.retrieve_json(key, dropped_only=False, start=0, stop=2) == '[{"x": 1.50},{"x": 2.0}]'
    crush_json(text, 2, store=store)  # the same crush again: the same entries
    assert len(store) == 2


def test_the_store_evicts_the_least_recently_used(tmp_path):
    store = CrushStore(tmp_path / "s.sqlite", max_entries=3)
    store._clock = itertools.count(1.0).__next__  # a logical clock: each put or retrieve one tick later
    keys = [store.put([json.dumps({"i": i, "pad": "x" * 100})]) for i in range(3)]
    store.retrieve(keys[0])  # now the most recently used
    keys.append(store.put(['{"i": 3}']))
    assert set(store.keys()) == {keys[0], keys[2], keys[3]}
    small = CrushStore(tmp_path / "b.sqlite", max_bytes=2_000)
    rng = np.random.default_rng(0)
    for i in range(10):  # random text barely compresses: ~1 kB each
        small.put([json.dumps({"i": i, "r": rng.bytes(800).hex()})])
    sizes = small._db.execute("SELECT SUM(size), COUNT(*) FROM arrays").fetchone()
    assert sizes[0] <= 2_000 and sizes[1] >= 1


WRITER = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from scwo_np.anchor._store import CrushStore
    store = CrushStore(sys.argv[1])
    rng = np.random.default_rng(int(sys.argv[2]))
    i = 0
    while True:
        pieces = [json.dumps({"i": i, "j": j, "r": rng.bytes(64).hex()}) for j in range(20_000)]
        key = store.put(pieces)
        print(key, flush=True)
        i += 1
    """
)


def test_a_writer_killed_mid_write_leaves_the_store_readable(tmp_path):
    path = str(tmp_path / "store.sqlite")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for seed in range(3):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, path, str(seed)], stdout=subprocess.PIPE, text=True, env=env
        )
        committed = [proc.stdout.readline().strip() for _ in range(2)]
        time.sleep(0.05 + 0.1 * seed)  # somewhere inside a later put
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        with sqlite3.connect(path) as db:
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        with CrushStore(path) as store:
            for key in committed:
                got = store.retrieve(key)
                assert len(got) == 20_000 and got[0]["j"] == 0
                assert array_key([json.dumps(x) for x in got]) == key  # the content is whole


@pytest.mark.parametrize("pieces, bad", [(["1", "nope"], 1), (["1,2"], 0), (["{"], 0), (['"a"', ""], 1)])
def test_put_refuses_pieces_that_are_not_one_json_value(tmp_path, pieces, bad):
    """Issue 32: such a put returned a key that failed later, on retrieval."""
    store = CrushStore(tmp_path / "s.sqlite")
    with pytest.raises(ValueError, match=rf"pieces\[{bad}\] is not the JSON text of one value"):
        store.put(pieces)
    key = store.put(["1", '{"a": [2, 3]}'])
    assert store.retrieve(key) == [1, {"a": [2, 3]}]


def test_the_field_summary_quotes_a_long_value_by_its_start():
    """Copyright texts as a category's top values made a 4,171-token marker, and a budget of 8,000
    kept fewer items than one of 2,000."""
    from scwo_np.anchor import crush_json
    from scwo_np.anchor._marker import VALUE_CHARS

    licence = "Permission is hereby granted, free of charge, to any person obtaining a copy. " * 40
    items = [{"pkg": f"p{i}", "copyright": licence if i % 2 else "GPL-2+"} for i in range(200)]
    out = json.loads(crush_json(json.dumps(items), max_items=5, marker=True))
    top = out[-1]["_omitted"]["fields"]["copyright"]["top"]
    assert {len(v) for v, _ in top} <= {len("GPL-2+"), VALUE_CHARS} and any(v.endswith("…") for v, _ in top)
    assert len(json.dumps(out[-1])) < 1000
