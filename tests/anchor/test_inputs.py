"""Tool outputs as tools emit them (issue 18): arrays, objects holding one, JSON Lines, concatenated values."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scwo_np.anchor import crush, crush_json, lossless_encode
from scwo_np.anchor._inputs import read_document, squeeze_json
from scwo_np.anchor._keep import text_levels
from tests import naive
from tests.anchor.test_anchor import json_leaf

LOG = [{"id": i, "level": "ERROR" if i == 17 else "INFO", "ms": 1.50 + i} for i in range(40)]


def test_an_object_holding_one_array_is_returned_around_the_crushed_array_unchanged():
    text = '{"took": 1.50, "status" : "ok",\n "results": ' + json.dumps(LOG) + ', "next": null}'
    out = crush_json(text, 8)
    doc = json.loads(out)
    assert doc["took"] == 1.5 and doc["next"] is None and len(doc["results"]) <= 8
    assert doc["results"] == [LOG[i] for i in crush(LOG, 8)]
    assert out.startswith('{"took": 1.50, "status" : "ok",\n "results": [') and out.endswith(
        '], "next": null}'
    )


def test_the_largest_array_wins_and_a_path_overrides_it():
    text = json.dumps({"tags": ["a", "b", "c"], "data": {"items": LOG}, "more": [LOG[:5]]})
    doc = read_document(text)
    assert doc.form == "object" and doc.path == ("data", "items") and len(doc.items) == 40
    assert read_document(text, path="tags").items == ["a", "b", "c"]
    assert read_document(text, path="more/0").items == LOG[:5]
    assert read_document(text, path=("more", 0)).path == ("more", 0)
    named = read_document(text, path="data")  # an object named by the path: its entries
    assert named.form == "mapping" and named.items == [{"key": "items", "value": LOG}]
    with pytest.raises(ValueError, match="leads to a str, not an array or an object"):
        read_document(text, path="tags/0")
    with pytest.raises(ValueError, match="index 3 is out of range"):
        read_document(text, path="more.3")
    with pytest.raises(ValueError, match="cannot take 'x' of it"):
        read_document(text, path="tags.x")


def test_equal_arrays_go_to_the_first_in_document_order_and_duplicate_keys_to_the_last():
    assert read_document('{"a": [1, 2], "b": [3, 4]}').path == ("a",)
    doc = read_document('{"r": [1, 2, 3], "r": [4, 5, 6, 7]}')  # json.loads keeps the last "r"
    assert doc.items == [4, 5, 6, 7] and doc.pieces == ["4", "5", "6", "7"]
    assert doc.render(["5"]) == '{"r": [1, 2, 3], "r": [5]}'


def test_json_lines_and_concatenated_objects():
    lines = "\n".join(json.dumps(x) for x in LOG) + "\n"
    doc = read_document(lines.encode())
    assert doc.form == "jsonl" and doc.items == LOG
    out = crush_json(lines, 6)
    assert [json.loads(x) for x in out.splitlines()] == [LOG[i] for i in crush(LOG, 6)]
    cat = " ".join(json.dumps(x) for x in LOG[:5])
    doc = read_document(cat)
    assert doc.form == "concatenated" and doc.items == LOG[:5]
    assert read_document('{"a":1}{"a":2}').pieces == ['{"a":1}', '{"a":2}']


def test_one_value_without_an_array_is_kept_whole():
    assert crush_json('{"a": 1.50}', 3) == '{"a": 1.50}'
    assert crush_json(" 7 ", 1) == "7"


def test_bytes_with_a_bom_and_numbers_keep_their_spelling():
    text = '\ufeff{"hits": [{"x": 1.50}, {"x": 1e5}, {"x": -0.0}]}'.encode()
    assert crush_json(text, 5) == '{"hits": [{"x": 1.50},{"x": 1e5},{"x": -0.0}]}'


@pytest.mark.parametrize(
    "text, match",
    [
        ("", "empty"),
        ("   \n", "empty"),
        (b"\xff[1]", "not valid UTF-8"),
        ('{"a": [1, 2', "malformed JSON at character"),
        ('{"a": 1}\n{"a": 2', "value 1 of a JSON Lines"),
        ('{"a": 1} x', "malformed JSON"),
        ("[" * 100_000, "nested too deeply|malformed JSON"),
    ],
)
def test_bad_text_is_a_clear_error(text, match):
    with pytest.raises(ValueError, match=match):
        read_document(text)


def test_a_path_on_json_lines_or_of_the_wrong_type_is_refused():
    with pytest.raises(ValueError, match="several values"):
        read_document('{"a": [1]}\n{"a": [2]}', path="a")
    with pytest.raises(TypeError, match="path must be"):
        read_document("[1]", path=3.5)


json_value = st.recursive(
    json_leaf,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text("xy", max_size=2), c, max_size=3),
    max_leaves=8,
)


@given(
    st.dictionaries(st.text("kq", max_size=2), json_value, max_size=4),
    st.lists(json_value, min_size=0, max_size=12),
    st.booleans(),
)
def test_any_wrapper_round_trips_through_read_and_render(wrapper, array, pretty):
    doc = dict(wrapper, payload_array=array)
    text = json.dumps(doc, indent=2 if pretty else None, ensure_ascii=False)
    d = read_document(text, path=["payload_array"])
    assert d.items == array
    assert [json.loads(p) for p in d.pieces] == array
    assert json.loads(d.render(d.pieces)) == doc
    assert json.loads(d.render([])) == dict(doc, payload_array=[])


@given(
    st.one_of(
        st.binary(max_size=60),
        st.text(st.sampled_from(list('[]{}",: \n0123456789.eE-+truefalsnl\\u')), max_size=60),
    )
)
@settings(max_examples=400, deadline=None)
def test_any_input_is_an_answer_or_a_clear_error(raw):
    for call in (
        lambda: crush_json(raw, 3),
        lambda: crush_json(raw, "auto", marker=True),
        lambda: lossless_encode(raw),
    ):
        try:
            out = call()
        except (ValueError, TypeError) as exc:
            assert str(exc)  # a message, not an internal failure
        else:
            assert isinstance(out, str)


def _typed(x):
    """A value with every type spelled out (1 and 1.0 and True differ), NaN equal to itself."""
    if isinstance(x, dict):
        return ("dict", [(k, _typed(v)) for k, v in x.items()])
    if isinstance(x, list):
        return ("list", [_typed(v) for v in x])
    if isinstance(x, float) and x != x:
        return ("float", "nan")
    return (type(x).__name__, x)


def _read(text, parser):
    from unittest import mock

    from scwo_np.anchor import _inputs as inputs

    with mock.patch.object(inputs, "orjson", parser):
        try:
            d = read_document(text)
        except (ValueError, TypeError) as exc:
            return type(exc).__name__
    return _typed(d.items), d.pieces, d.form, d.path, d.head, d.tail


big_ints = st.integers(-(2**70), 2**70) | st.sampled_from([2**63, -(2**63) - 1, 2**64, 10**19, -(10**30)])


@given(
    st.lists(json_value | big_ints | st.floats(), max_size=8),
    st.sampled_from(["array", "jsonl", "object", "concatenated"]),
    st.booleans(),
)
@settings(max_examples=300, deadline=None)
def test_orjson_reads_exactly_what_json_reads(values, form, pretty):
    """The fast parser (orjson) gives json's answer: same values and types, same pieces, or the same error."""
    orjson = pytest.importorskip("orjson")
    dump = lambda v: json.dumps(v, indent=2 if pretty else None, ensure_ascii=pretty)  # noqa: E731
    text = {
        "array": lambda: dump(values),
        "jsonl": lambda: "\n".join(json.dumps(v) for v in values) + "\n",
        "object": lambda: dump({"took": 1.50, "hits": values}),
        "concatenated": lambda: " ".join(dump(v) for v in values),
    }[form]()
    assert _read(text, orjson) == _read(text, None)


@given(st.text(st.sampled_from(list('[]{}",: \n0123456789.eE-+truefalsnlNaI\\u\ud800é')), max_size=60))
@settings(max_examples=400, deadline=None)
def test_orjson_and_json_agree_on_json_ish_text(text):
    orjson = pytest.importorskip("orjson")
    assert _read(text, orjson) == _read(text, None)


def test_orjson_reads_arrays_and_json_lines_and_leaves_big_integers_to_json():
    from unittest import mock

    from scwo_np.anchor import _inputs as inputs

    orjson = pytest.importorskip("orjson")
    spy = mock.Mock(wraps=orjson)
    spy.JSONDecodeError = orjson.JSONDecodeError
    with mock.patch.object(inputs, "orjson", spy):
        assert read_document('[{"a": 1.50}, {"a": 2}]').pieces == ['{"a": 1.50}', '{"a": 2}']
        assert spy.loads.call_count == 1
        assert read_document('{"a": 1}\n{"a": "é"}\n').items == [{"a": 1}, {"a": "é"}]
        assert spy.loads.call_count == 1 + 1 + 2  # the whole text (refused: two values), then each line
        d = read_document("[18446744073709551616, 1]")  # 2**64: orjson would read a float
        assert d.items == [2**64, 1] and type(d.items[0]) is int and spy.loads.call_count == 4


@given(st.lists(json_value, max_size=8), st.booleans(), st.booleans())
def test_pieces_behave_as_the_list_of_element_texts(values, pretty, ascii_only):
    import pickle

    from scwo_np.anchor._inputs import Pieces, _array_pieces
    from scwo_np.anchor._store import _body

    text = json.dumps(values, indent=2 if pretty else None, ensure_ascii=ascii_only)
    _, pieces = _array_pieces(text, values)
    assert isinstance(pieces, Pieces)
    plain = list(pieces)
    assert [json.loads(p) for p in plain] == values and len(pieces) == len(values)
    assert pieces == plain and plain == pieces and pieces[1:3] == plain[1:3] and pieces[::-1] == plain[::-1]
    if values:
        assert pieces[-1] == plain[-1] and pieces[0] == plain[0]
    assert _body(pieces) == _body(plain)  # the compact text from the byte spans, as from the list
    assert pickle.loads(pickle.dumps(pieces)) == plain


# ----------------------------------------------------------------------------------------
# Records keyed by name: an object's entries as the items (the "mapping" form)
# ----------------------------------------------------------------------------------------


def _config_vars() -> str:
    """This interpreter's build configuration, as ``sysconfig`` gives it (~900 names): real data
    no one here wrote, a JSON object of values keyed by name with no array in it."""
    import sysconfig

    return json.dumps(sysconfig.get_config_vars(), indent=1, default=str)


def test_an_object_of_values_keyed_by_name_is_crushed_by_its_entries():
    """Such an object was one item: at any budget below it, the marker alone came back."""
    text = _config_vars()
    names = json.loads(text)
    doc = read_document(text)
    assert doc.form == "mapping" and doc.path == () and len(doc.items) == len(names)
    assert doc.items[0] == {"key": next(iter(names)), "value": names[next(iter(names))]}
    assert json.loads(doc.render(doc.pieces)) == names
    from scwo_np.anchor._columns import columns
    from scwo_np.anchor._keep import error_severity

    sev = error_severity(columns(doc.items))  # a name is not an event: HAVE_GAI_STRERROR took an error's slot
    named = [
        i for i, it in enumerate(doc.items) if "ERR" in it["key"] and it["value"] in (0, 1, "", "no", "yes")
    ]
    assert named and not sev[named].any()
    for budget in (100, 300, 1000):
        out = crush_json(text, budget=budget, query="py_version_nodot")
        assert -(-len(out) // 4) <= budget
        got = json.loads(out)
        marker = got.pop("_omitted")
        assert got and all(names[k] == v for k, v in got.items())
        assert "py_version_nodot" in got  # the entry the query names
        assert marker["count"] + len(got) == len(names) == marker["of"]


def test_the_collection_is_where_the_text_is():
    deps = {f"pkg-{i}": {"version": f"1.{i}.0", "dependencies": {"x": {"version": "2"}}} for i in range(12)}
    npm_like = {
        "version": "1.0.0",
        "name": "app",
        "problems": ["missing: a", "missing: b"],
        "dependencies": deps,
    }
    doc = read_document(json.dumps(npm_like, indent=2))
    assert doc.form == "mapping" and doc.path == ("dependencies",) and len(doc.items) == 12
    assert doc.items[3] == {"key": "pkg-3", **deps["pkg-3"]}
    # through objects of one entry, and arrays of one element, to where most of the text is
    wrapped = {"ok": True, "data": {"result": [{"rows": deps}]}}
    assert read_document(json.dumps(wrapped)).path == ("data", "result", 0, "rows")
    # a small object is the frame around its largest array, as before, even beside an object of records
    frame = {"took": 3, "hits": [{"id": i} for i in range(20)], "facets": {"a": {"n": 1}, "b": {"n": 2}}}
    assert read_document(json.dumps(frame)).path == ("hits",)
    # a small object with no array: its entries; one entry: one value, kept whole
    assert read_document('{"a": {"n": 1}, "b": {"n": 2}}').form == "mapping"
    assert read_document('{"a": {"n": 1}}').form == "concatenated"


def test_mapping_entries_keep_their_text_names_and_duplicates():
    text = '{ "é": {"key": 1, "v": 1.50} , "b": 2,\n "b": [3] }'
    doc = read_document(text, path="")
    assert doc.pieces == ['"é": {"key": 1, "v": 1.50}', '"b": 2', '"b": [3]']
    assert doc.items == [
        {"_key": "é", "key": 1, "v": 1.5},
        {"_key": "b", "value": 2},
        {"_key": "b", "value": [3]},
    ]
    assert doc.render(doc.pieces[1:]) == '{"b": 2,"b": [3]}'
    assert doc.values() == [
        '{"_key":"é","key": 1, "v": 1.50}',
        '{"_key":"b","value":2}',
        '{"_key":"b","value":[3]}',
    ]
    assert doc.render([doc.entry({"_omitted": {"count": 3}})]) == '{"_omitted":{"count":3}}'


def test_dropped_entries_come_back_from_the_store_with_their_names(tmp_path):
    from scwo_np.anchor import CrushStore

    records = {
        f"host-{i:02d}": {"state": "down" if i == 30 else "up", "load": round(0.1 * (i % 7), 1)}
        for i in range(60)
    }
    with CrushStore(tmp_path / "s.sqlite") as store:
        out = json.loads(crush_json(json.dumps(records), budget=150, store=store))
        marker = out.pop("_omitted")
        assert "host-30" in out  # the error keeps its place
        back = store.retrieve(marker["key"])  # each entry as the crush read it: its name under "key"
        assert len(back) == marker["count"] and not {b["key"] for b in back} & set(out)
        assert all(records[b.pop("key")] == b for b in back)
        down = store.retrieve(
            marker["key"], where={"state": "up"}, fields=["key", "load"], dropped_only=False
        )
        assert [d["key"] for d in down] == [k for k, r in records.items() if r["state"] == "up"]


@given(
    st.dictionaries(st.text('abé"\\', min_size=1, max_size=3), json_value, min_size=2, max_size=12),
    st.booleans(),
)
def test_any_mapping_round_trips_through_read_and_render(mapping, pretty):
    text = json.dumps({"n": 1, "records": mapping}, indent=2 if pretty else None, ensure_ascii=False)
    d = read_document(text, path="records")
    assert d.form == "mapping" and [json.loads(v) for v in d.values()] == d.items
    name = next(iter(d.items[0]))
    assert [it[name] for it in d.items] == list(mapping)
    assert [{k: v for k, v in it.items() if k != name} for it in d.items] == [
        v if isinstance(v, dict) else {"value": v} for v in mapping.values()
    ]
    assert json.loads(d.render(d.pieces)) == {"n": 1, "records": mapping}
    assert json.loads(d.render(d.pieces[:1])) == {"n": 1, "records": dict(list(mapping.items())[:1])}


_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(alphabet=' \t\n\r"\\ab/:,{}[]é'),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(alphabet=' "\\a:,', max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(
    _JSON_VALUES,
    st.sampled_from([None, 0, 1, 2, "\t"]),
    st.booleans(),
    st.sampled_from([(", ", ": "), (",", ":"), (" , ", " : ")]),
)
def test_squeeze_json_is_the_plain_reading(value, indent, ascii_only, separators):
    """Cut at its strings with one pattern, the white space between tokens deleted: the same text as
    reading it a character at a time (escaped quotes and backslashes, white space inside strings)."""
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only, separators=separators)
    got = squeeze_json(text)
    assert got == naive.compact_json(text) and json.loads(got) == json.loads(text)


_LEVEL_PIECES = ["error", "ERR", "Error", "fatal", "FAILED", "failed", "unable to", "Permission denied"]
_LEVEL_PIECES += ["x", " ", "\n", ".", "-", "+", "_", "0", "c", "@"]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(_LEVEL_PIECES)).map("".join),
        max_size=12,
    )
)
def test_text_levels_read_each_text_as_text_level_does(texts):
    """One pass a pattern over the texts joined by line feeds: each text's level as read alone."""
    assert text_levels(texts) == naive.text_levels(texts)


def test_a_word_before_a_dot_or_at_sign_and_a_letter_is_part_of_a_name():
    """Debian's gzip changelog signed by andreas@fatal.se was a critical record."""
    assert text_levels(["andreas@fatal.se", "Error.java", "a FAILED.txt", "fatal@home.org", "fatal.", "ERROR: x"]) == [
        "", "", "", "", "critical", "error"
    ]  # fmt: skip
