"""crush_json(budget=...) (issue 35): a hard ceiling, kept items whole, every drop announced."""

import importlib.util
import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scwo_np.anchor import CrushStore, crush_json, is_marker, lossless_decode
from scwo_np.tokens import count_tokens


def words(text: str) -> int:
    return len(text.split())


words.name = "words"

fields = st.dictionaries(
    st.sampled_from(["id", "msg", "host", "path", "user", "extra"]),
    st.one_of(st.integers(-5, 10**6), st.text(max_size=30), st.booleans(), st.none(),
              st.lists(st.integers(0, 9), max_size=3)),
    max_size=5,
)  # fmt: skip


@st.composite
def tool_outputs(draw):
    n = draw(st.integers(0, 120))
    items = []
    for i in range(n):
        item = draw(fields)
        item["level"] = "ERROR" if draw(st.integers(0, 9)) == 0 else "INFO"
        item["seq"] = i
        items.append(item)
    return items


def _parts(out: str):
    """(kept items, marker or None) of a crushed array, or None for the columnar form."""
    arr = json.loads(out)
    if isinstance(arr, dict) and "_columnar" in arr:  # (a kept value may be the text "_columnar")
        return None
    marker = arr[-1]["_omitted"] if arr and is_marker(arr[-1]) else None
    return (arr[:-1] if marker else arr), marker


@settings(max_examples=150, deadline=None)
@given(items=tool_outputs(), budget=st.integers(1, 3000), counter=st.sampled_from(["estimate", words]))
def test_the_ceiling_holds_kept_items_are_whole_and_drops_are_announced(items, budget, counter):
    text = json.dumps(items)
    try:
        out = crush_json(text, budget=budget, token_counter=counter)
    except ValueError as exc:  # only when not even an empty array and a short marker fit
        need = int(str(exc).split("budget >= ")[1].rstrip("."))
        assert need > budget
        return
    assert count_tokens([out], counter)[0] <= budget
    parts = _parts(out)
    if parts is None:  # lossless: everything, exactly
        assert json.loads(lossless_decode(out)) == items
        return
    kept, marker = parts
    seqs = [k["seq"] for k in kept]
    assert seqs == sorted(seqs)
    for k in kept:  # every kept item is an input item with every field, unchanged
        assert k == items[k["seq"]]
    if marker is None:
        assert len(kept) == len(items)
    else:
        assert marker["count"] == len(items) - len(kept) and marker["of"] == len(items)
    errors = {i for i, it in enumerate(items) if it["level"] == "ERROR"}
    if marker is not None:  # the positions not listed are exactly the kept ones
        listed = {p for a, b in marker["ranges"] for p in range(a, b + 1)}
        assert sorted(set(range(len(items))) - listed) == seqs
    if errors - set(seqs):  # an error was dropped: the marker says so, and the newest record is kept
        assert marker.get("must_keep_dropped", 0) >= 1
        assert marker["must_keep_by_kind"].get("errors", 0) >= 1
        # whenever anything fits, unless the newest costs more than all that was kept (twelve errors,
        # the newest with one more field: at 36 tokens it and the marker were 37)
        newest = count_tokens([json.dumps(items[-1], separators=(",", ":"))], counter)[0]
        kept_cost = count_tokens([json.dumps(kept, separators=(",", ":"))], counter)[0]
        assert not seqs or seqs[-1] == len(items) - 1 or newest > kept_cost - 2


def _logs(n=2000):
    return [
        {"ts": f"2026-11-25T10:{i // 60 % 60:02d}:{i % 60:02d}", "level": "ERROR" if i % 397 == 5 else "INFO",
         "svc": f"api-{i % 7}", "msg": f"GET /orders/{i * 31 % 9973} {200 if i % 397 != 5 else 500}", "ms": i % 90}
        for i in range(n)
    ]  # fmt: skip


@pytest.mark.parametrize("budget", [60, 300, 2000, 10_000])
def test_logs_keep_their_errors_across_the_timeline(budget):
    items = _logs()
    out = crush_json(json.dumps(items), budget=budget)
    assert count_tokens([out])[0] <= budget
    kept, marker = _parts(out)
    errors = [it for it in items if it["level"] == "ERROR"]
    kept_errors = [k for k in kept if k["level"] == "ERROR"]
    assert kept and kept[-1] == items[-1]  # the newest record
    if kept_errors and len(kept_errors) < len(errors):  # not the first ones: the newest error, and spread
        assert kept_errors[-1] == errors[-1] and kept_errors != errors[: len(kept_errors)]
    if len(kept_errors) < len(errors):
        assert marker["must_keep_dropped"] == len(errors) - len(kept_errors)
        assert marker["must_keep_by_kind"] == {"errors": len(errors) - len(kept_errors)}
    # the budget is used: within 20% of the ceiling, or one more item (about 26 tokens) would not fit
    assert count_tokens([out])[0] >= min(0.8 * budget, budget - 30) or marker is None


def test_must_keep_items_too_big_for_the_budget_leave_it_to_the_items_that_fit(tmp_path):
    """The errors are 900 tokens each and the budget 700: the crush's own picks cannot fit, and the
    room goes to the small items that can (a new user got the marker alone, 41 tokens of 700), the
    newest first; the marker counts the errors left out, and the store gives back exactly the rest."""
    big = "x " * 1800
    items = [
        {
            "id": i,
            "level": "ERROR" if i in (10, 40) else "INFO",
            "msg": big if i in (10, 40) else f"step {i} ok",
        }
        for i in range(60)
    ]
    with CrushStore(tmp_path / "s.sqlite") as store:
        out = crush_json(json.dumps(items), budget=700, store=store)
        kept, marker = _parts(out)
        back = store.retrieve(marker["key"])
    assert 0.8 * 700 <= count_tokens([out])[0] <= 700
    assert kept[-1] == items[-1] and all(k["level"] == "INFO" for k in kept) and len(kept) > 10
    assert marker["must_keep_by_kind"] == {"errors": 2}
    assert back == [it for it in items if it not in kept]


def test_the_whole_document_and_the_lossless_form_come_first():
    items = [{"id": i, "svc": "api", "ok": True} for i in range(50)]
    text = json.dumps(items, separators=(",", ":"))
    whole = crush_json(text, budget=10**6)
    assert json.loads(whole) == items  # fits: every item, as it was
    out = crush_json(text, budget=count_tokens([whole])[0] - 1)
    assert '"_columnar"' in out and json.loads(lossless_decode(out)) == items  # nothing dropped
    # json.dumps' ", " and ": " (or indentation): the same values without the spaces come before
    spaced = json.dumps(items, indent=1)
    out = crush_json(spaced, budget=count_tokens([text])[0])
    assert out == text and json.loads(out) == items
    dropped = crush_json(text, budget=60, lossless=False)
    assert is_marker(json.loads(dropped)[-1])


def test_a_store_keeps_what_was_dropped(tmp_path):
    items = _logs(500)
    with CrushStore(tmp_path / "s.sqlite") as store:
        out = crush_json(json.dumps(items), budget=400, store=store)
        kept, marker = _parts(out)
        back, at = store.retrieve(marker["key"], with_positions=True)
        everything = store.retrieve(marker["key"], dropped_only=False)
    assert everything == items
    # what was dropped, each once, in order: the kept items are not given back (issue 40)
    assert back == [items[i] for i in at] and len(at) == marker["count"] == len(items) - len(kept)
    assert not {json.dumps(x) for x in back} & {json.dumps(x) for x in kept}


def test_object_and_json_lines_forms():
    doc = {"took": 12, "hits": _logs(300)}
    out = crush_json(json.dumps(doc), budget=500)
    assert count_tokens([out])[0] <= 500
    parsed = json.loads(out)
    assert parsed["took"] == 12 and is_marker(parsed["hits"][-1])
    lines = "\n".join(json.dumps(x) for x in _logs(300))
    out = crush_json(lines, budget=500)
    assert count_tokens([out])[0] <= 500 and is_marker(json.loads(out.splitlines()[-1]))


def test_max_items_and_max_tokens_together():
    out = crush_json(json.dumps(_logs(1000)), 5, budget=10**5)
    kept, marker = _parts(out)
    assert len(kept) <= 5 and marker["count"] == 1000 - len(kept)


def test_bad_arguments_are_named():
    text = json.dumps(_logs(50))
    with pytest.raises(TypeError, match="needs max_items, budget or both"):
        crush_json(text)
    with pytest.raises(ValueError, match="budget must be"):
        crush_json(text, budget=0)
    with pytest.raises(ValueError, match="marker=False does not go with budget"):
        crush_json(text, budget=100, marker=False)
    with pytest.raises(ValueError, match=r"budget=3 is too small.*give budget >= \d+"):
        crush_json(json.dumps({"a long preamble " * 5: _logs(10)}), budget=3)


def test_indented_output_is_crushed_compact():
    """``findmnt -J``'s indented output: at 600 tokens it was refused ("the text around the array ...
    take 633 tokens"), compact it is 541. Indented or spaced JSON is crushed without its spaces:
    the same values, more of them in the budget."""
    mounts = [{"target": f"/srv/vol{i}", "source": f"/dev/sd{chr(97 + i % 26)}{i % 9 + 1}", "fstype": "ext4",
               "options": "rw,relatime,errors=remount-ro",
               "children": [{"target": f"/srv/vol{i}/sub{j}", "source": "tmpfs", "fstype": "tmpfs",
                             "options": "rw,nosuid,nodev"} for j in range(3)]}
              for i in range(40)]  # fmt: skip
    doc = {"filesystems": [{"target": "/", "source": "/dev/sda1", "fstype": "ext4", "children": mounts}]}
    pretty, compact = json.dumps(doc, indent=3), json.dumps(doc, separators=(",", ":"))
    budget = count_tokens([compact])[0] // 2
    out = crush_json(pretty, budget=budget, path="filesystems.0.children")
    assert count_tokens([out])[0] <= budget and "\n" not in out and ": " not in out
    kept = json.loads(out)["filesystems"][0]["children"]
    assert len(kept) - 1 >= 15 and all(m in mounts for m in kept[:-1]) and is_marker(kept[-1])


def _module_docs(names):
    """The standard library's own docstrings, a module's members keyed by name (real text)."""
    import importlib

    out = []
    for m in names:
        mod = importlib.import_module(m)
        members = {k: str(getattr(mod, k).__doc__ or "")[:300] for k in dir(mod) if not k.startswith("_")}
        out.append({"module": m, "members": members})
    return out


def _kept_leaves(node, ref, out, path=()):
    """Every value shown in ``node`` (markers aside), checked equal to its place in ``ref``."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k != "_omitted":
                _kept_leaves(v, ref[k], out, (*path, k))
    elif isinstance(node, list):
        for v in (x for x in node if not (isinstance(x, dict) and "_omitted" in x)):
            same = next(r for r in ref if r.get("module") == v.get("module"))  # the module it came from
            _kept_leaves(v, same, out, path)
    else:
        assert node == ref
        out.append(path)
    return out


def test_json_one_crush_cannot_fit_has_its_collections_crushed_in_turn():
    """The text around the collection over the budget (a schema's ``definitions`` beside its
    ``properties``) was refused; every item over the budget alone (botocore's partitions) gave the
    marker alone. Both are crushed collection by collection, still JSON, within the budget."""
    docs = _module_docs(["os", "pathlib", "subprocess", "inspect", "shutil", "tarfile", "logging", "socket"])
    deep = json.dumps({"modules": docs})
    framed = json.dumps({"definitions": docs[0]["members"], "properties": docs[1]["members"], "n": 2})
    for text, budget in ((deep, 1000), (framed, 300), (framed, 1000)):
        out = crush_json(text, budget=budget, query="subprocess run")
        assert -(-len(out) // 4) <= budget and "_omitted" in out
        assert len(_kept_leaves(json.loads(out), json.loads(text), [])) >= 3


def test_a_collection_crushed_to_its_marker_keeps_the_item_the_query_names():
    """Crushed to its marker beside a frame over the budget, a collection kept its newest item (a
    few dozen tokens) where the query named another of 80."""
    a = [{"id": i, "text": f"plain record {i}"} for i in range(40)]
    a[17] = {"id": 17, "text": "needle " + "detail " * 40}
    b = {f"k{i}": {"v": "word " * 30} for i in range(10)}
    out = crush_json(json.dumps({"a": a, "b": b}), budget=300, query="needle")
    assert -(-len(out) // 4) <= 300 and a[17] in json.loads(out)["a"]


def test_as_a_last_resort_any_object_s_entries_are_crushed():
    """A long text beside an array: with the array as its marker still over the budget, refused
    ("give budget >= 787"); the object's own entries are crushed, the text left out and announced."""
    text = json.dumps({"note": "word " * 600, "rows": list(range(500))})
    got = json.loads(out := crush_json(text, budget=100))
    assert -(-len(out) // 4) <= 100 and "note" not in got and got["_omitted"]["count"] == 1
    assert got["rows"][-1]["_omitted"]["of"] == 500


_SETUPTOOLS = importlib.util.find_spec("setuptools")  # (a Python 3.11 venv has it; 3.12's may not)
SCHEMA = (
    os.path.join(os.path.dirname(_SETUPTOOLS.origin), "config", "setuptools.schema.json")
    if _SETUPTOOLS
    else ""
)


@pytest.mark.skipif(not os.path.exists(SCHEMA), reason="no setuptools JSON schema in this environment")
@pytest.mark.parametrize("budget", [400, 700])
def test_room_the_crush_leaves_is_filled_by_crushing_a_dropped_object_into_it(tmp_path, budget):
    """setuptools' JSON schema (4,000 tokens): its 8 entries are the collection, ``properties``
    (1,900 tokens) and ``definitions`` (1,000) each over the budget. At 400 and 700 tokens the crush
    gave the 6 small entries in 208 tokens, both large ones dropped whole; they are crushed into the
    room now, each with its own marker and key, the ceiling held."""
    text = open(SCHEMA, encoding="utf-8").read()
    ref = json.loads(text)
    store = CrushStore(tmp_path / "s.sqlite")
    out = crush_json(text, budget=budget, store=store)
    got = json.loads(out)
    assert count_tokens([out])[0] <= budget and count_tokens([out])[0] >= 0.6 * budget
    inner = [k for k, v in got.items() if isinstance(v, dict) and "_omitted" in v and k != "_omitted"]
    assert inner  # a large entry crushed inside, not dropped whole
    for k in inner:
        mark = got[k]["_omitted"]
        shown = {e: v for e, v in got[k].items() if e != "_omitted"}
        # kept entries verbatim, or (a large one) crushed in turn, its own marker inside it
        assert all(ref[k][e] == v or "_omitted" in json.dumps(v) for e, v in shown.items())
        back = store.retrieve(mark["key"])  # the entries left out of it, and only those
        assert (
            sorted(r["key"] for r in back) == sorted(set(ref[k]) - set(shown)) and len(back) == mark["count"]
        )
    outer = got.get("_omitted")
    whole = {k for k in ref if k not in got}
    assert (outer is None and not whole) or {r["key"] for r in store.retrieve(outer["key"])} == whole


def _api_spec() -> dict:
    """An API description shaped as botocore's service files: metadata, operations and shapes
    keyed by name, each operation listing the errors it may raise."""
    words = "Returns the queue attributes for the given queue and the caller's permissions on it. ".split()
    doc = lambda i, n: " ".join(words[(i + k) % len(words)] for k in range(n))  # noqa: E731
    return {
        "version": "2.0",
        "metadata": {f"field{i}": f"value {i}" for i in range(13)},
        "operations": {
            f"Op{i}": {"name": f"Op{i}", "documentation": doc(i, 120), "errors": [{"shape": "E"}]}
            for i in range(23)
        },  # fmt: skip
        "shapes": {f"Shape{i}": {"type": "structure", "documentation": doc(i, 30)} for i in range(114)},
    }


@pytest.mark.parametrize("budget", [100, 300, 1000])
def test_a_crushed_mapping_s_marker_is_never_crushed_as_data(tmp_path, budget):
    """The last resort read any object of two entries as a collection, and a mapping's marker (its
    entry "_omitted": count, of, ranges, key) is one: it was crushed, and its key gave back
    {"key": "count", "value": 113} ... instead of the 113 shapes.  A query naming items of a
    one-item collection raised KeyError: 'query_matches'."""
    spec = _api_spec()
    store = CrushStore(tmp_path / "s.sqlite")
    for query in ("", "Op7 attributes"):
        got = json.loads(out := crush_json(json.dumps(spec), budget=budget, store=store, query=query))
        assert count_tokens([out])[0] <= budget

        def walk(node, where):
            if isinstance(node, dict):
                mark = node.get("_omitted")
                if isinstance(mark, dict):
                    assert "_omitted" not in mark and "count" in mark, where  # a marker, not crushed data
                    if "key" in mark and where in spec and isinstance(spec[where], dict):
                        back = store.retrieve(mark["key"])
                        assert {r["key"] for r in back} <= set(spec[where]), where  # the collection's names
                for k, v in node.items():
                    if k != "_omitted":
                        walk(v, k)
            elif isinstance(node, list):
                for v in node:
                    walk(v, where)

        walk(got, "")
    one = json.dumps({"note": "word " * 600, "rows": [{"id": 1, "text": "needle " * 300}]})
    assert count_tokens([crush_json(one, budget=budget, query="needle")])[0] <= budget


def test_the_collections_left_to_crush_are_never_inside_a_marker():
    from scwo_np.anchor._json import open_collections

    crushed = {
        "version": "2.0",
        "shapes": {"Token": {"type": "string"},
                   "_omitted": {"count": 113, "of": 114, "ranges": [[0, 109], [111, 113]],
                                "must_keep_by_kind": {"errors": 28, "rare": 2}, "key": "0123456789abcdef"}},
        "ops": [{"name": "a"}, {"_omitted": {"count": 5, "of": 6, "ranges": [[1, 5]]}}],
    }  # fmt: skip
    for minimum in (8, 2):
        paths = [p for _, p in open_collections(crushed, minimum)]
        assert not [p for p in paths if "_omitted" in p], paths  # (the ranges were arrays to crush)
    assert [p for _, p in open_collections(crushed, 2)] == [[]]  # the root alone: the rest is crushed


def test_a_document_within_the_budget_comes_back_as_it_came(tmp_path):
    """botocore's paginators file (91 tokens) at 3,000 came back re-joined (`},"ListQueues": {`)."""
    text = json.dumps({"pagination": {f"List{n}": {"input_token": "NextToken", "output_token": "NextToken",
                                                  "limit_key": "MaxResults", "result_key": n}
                                      for n in ("Queues", "DeadLetterSourceQueues", "MessageMoveTasks")}},
                      indent=4) + "\n"  # fmt: skip
    assert crush_json(text, budget=3000) == text and crush_json(text.encode(), budget=3000) == text
    from scwo_np.cli import main

    path = tmp_path / "p.json"
    path.write_text(text)
    out = tmp_path / "out.json"
    assert main(["crush", str(path), "--budget", "3000", "-o", str(out)]) == 0
    assert out.read_text() == text


def test_a_marker_s_field_summary_never_lists_an_inner_marker():
    """A dropped record that held an inner marker (crushed inside before) listed "_omitted" among the
    fields of the records left out: to a reader, a marker inside the marker."""
    rows = [{"name": f"r{i}", "_omitted": {"count": 3}} if i % 2 else {"name": f"r{i}"} for i in range(40)]
    out = json.loads(crush_json(json.dumps(rows), 5, marker=True))
    fields = out[-1]["_omitted"]["fields"]
    assert "name" in fields and "_omitted" not in fields
