"""Lossless columnar form (issue 18): decode(encode(x)) == x, spelling and key order included."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scwo_np.anchor import crush_json
from scwo_np.anchor._lossless import _spelling, lossless_decode, lossless_encode
from scwo_np.tokens import estimate_tokens

numbers = st.sampled_from(["1.50", "1e5", "-0.0", "0", "12345678901234567890123", "2E-3", "7", "-3.250"])
strings = st.text(st.sampled_from(list('ab "\\\n\té東😀/')), max_size=5).flatmap(
    lambda s: st.sampled_from([json.dumps(s), json.dumps(s, ensure_ascii=False)])
)
scalars = numbers | strings | st.sampled_from(["true", "false", "null"])
nested = st.recursive(
    st.none() | st.integers() | st.text("xyé", max_size=3),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text("kl", max_size=2), c, max_size=2),
    max_leaves=6,
).flatmap(lambda v: st.sampled_from([json.dumps(v), json.dumps(v, indent=2, ensure_ascii=False)]))
values = scalars | nested
keys = st.sampled_from(["id", "level", "ms", "é", 'q"uote', "a b"])
member = st.tuples(keys, values)
obj = st.lists(member, max_size=5).map(
    lambda ms: "{" + ", ".join(f"{json.dumps(k)}: {v}" for k, v in ms) + "}"
)
element = obj | obj | obj | values


@given(st.lists(element, max_size=12), st.sampled_from([", ", ",\n  "]))
@settings(max_examples=300, deadline=None)
def test_decode_of_encode_is_the_input(elements, sep):
    text = "[" + sep.join(elements) + "]"
    back = lossless_decode(lossless_encode(text))
    assert _spelling(back) == _spelling(text)


@given(st.lists(st.tuples(values, values), min_size=1, max_size=8))
@settings(max_examples=100, deadline=None)
def test_constant_fields_are_factored_and_come_back_in_place(rows):
    text = "[" + ",".join(f'{{"a": {a}, "svc": "api", "b": {b}}}' for a, b in rows) + "]"
    enc = lossless_encode(text)
    assert '"constant":{' in enc and '"svc":"api"' in enc and enc.count('"api"') == 1
    assert _spelling(lossless_decode(enc)) == _spelling(text)


def test_a_wrapper_keeps_its_object_and_json_lines_come_back_as_an_array():
    items = [{"id": i, "svc": "api", "ms": 1.5 * i} for i in range(30)]
    text = '{"took": 1.50, "data": ' + json.dumps(items) + "}"
    enc = lossless_encode(text)
    assert enc.startswith('{"took": 1.50, "data": {"_columnar":')
    assert _spelling(lossless_decode(enc)) == _spelling(text)
    lines = "\n".join(json.dumps(x) for x in items)
    assert json.loads(lossless_decode(lossless_encode(lines))) == items
    assert crush_json(text, 5, lossless=True) == enc


def test_text_that_only_looks_columnar_is_left_alone():
    text = '[{"msg": "{\\"_columnar\\": 1}"}, {"_columnar": 5, "x": 1}]'
    assert _spelling(lossless_decode(text)) == _spelling(text)
    assert lossless_decode('{"a": 1}') == '{"a": 1}'


def test_duplicate_keys_and_mixed_arrays_round_trip():
    text = '[{"a": 1, "a": 2}, 3, [4, 5], {"b": null}]'
    assert _spelling(lossless_decode(lossless_encode(text))) == _spelling(text)
    assert lossless_encode("[1, 2, 3]") == "[1,2,3]"


def test_it_saves_characters_and_tokens_on_a_log():
    items = [{"timestamp": f"2024-01-01T00:00:{i % 60:02d}", "service": "api", "level": "INFO", "latency_ms": i}
             for i in range(200)]  # fmt: skip
    text = json.dumps(items)
    enc = lossless_encode(text)
    assert len(enc) < 0.6 * len(text) and estimate_tokens([enc])[0] < 0.6 * estimate_tokens([text])[0]


def test_bad_input_is_a_clear_error():
    with pytest.raises(ValueError, match="malformed JSON"):
        lossless_encode("[1, 2")
    with pytest.raises(TypeError, match="str or UTF-8 bytes"):
        lossless_encode(3)


@pytest.mark.parametrize(
    "doc, match",
    [
        (
            '{"_columnar":{"fields":["a","b"],"constant":{"b":"x"},"rows":[[0,9],[1]]}}',
            "row 0 holds 2 values for its 1 fields",
        ),
        ('{"_columnar":{"fields":["a","b"],"rows":[[0],[1]]}}', "row 0 holds 1 values for its 2 fields"),
        ('{"_columnar":{"fields":"a","rows":[[0],[1]]}}', "not a valid '_columnar' object"),
        ('{"_columnar":{"fields":["a"],"rows":[0,1]}}', "not a valid '_columnar' object"),
        ('{"_columnar":{"rows":[[0]]}}', "missing member"),
    ],
)
def test_a_malformed_columnar_object_is_a_clear_error_never_a_silent_loss(doc, match):
    """Issue 32: rows longer than their fields lost values; a wrong shape gave a JSON parse error."""
    with pytest.raises(ValueError, match=match):
        lossless_decode(doc)
