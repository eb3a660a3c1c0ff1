"""Losing nothing: a JSON array of objects in columnar form, and back.

:func:`lossless_encode` writes field names once, each object as a row of its
values, and factors out the fields every object has with the same value::

    {"_columnar": {
        "fields": ["id", "service", "level", "ms"],   # every field name, first-seen order
        "constant": {"service": "api"},               # same value in every object
        "shapes": [[0, 1, 2, 3], [0, 1, 3]],          # only when objects differ in keys or key order
        "rows": [[0, "req-1", "INFO", 1.50],          # [shape, values...]; just [values...] with one shape
                 [1, "req-2", 3]]
    }}

Elements that are not objects (in a mixed array) are rows ``[-1, value]``.
:func:`lossless_decode` gives back the array exactly: the same elements in the
same order, each object with its keys in their order (duplicates included), and
every value with its JSON spelling (``1.50`` stays ``1.50``, ``"\\u00e9"`` stays
escaped); only the whitespace between tokens is not kept.  The array may sit
inside an object, in JSON Lines or concatenated values (see :func:`read_document`):
the object around it is kept as it is; JSON Lines come back as a JSON array.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from ._inputs import _DEC, _WS, Document, _array_pieces, _as_text, _span, read_document, squeeze_json

__all__ = ["COLUMNAR_KEY", "lossless_decode", "lossless_encode"]

COLUMNAR_KEY = "_columnar"


def _squeeze(text: str) -> str:
    """``text`` without whitespace between JSON tokens (strings untouched), when it is an array or object."""
    if text[:1] in "{[" and any(c in text for c in " \t\n\r"):
        return squeeze_json(text)
    return text


_STR = r'"(?:[^"\\]|\\.)*"'
_SCALAR = _STR + r"|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null"
_W = r"[ \t\n\r]*"
# One member whose value is a scalar: its key text, its value text, and what follows.
_MEMBER = re.compile(_W + f"({_STR})" + _W + ":" + _W + f"({_SCALAR})" + _W + "([,}])")


def _members(text: str) -> list[tuple[str, str, str]] | None:
    """``(key, key text, value text)`` of each member of the object ``text``, in order; None if not an object.

    Scalar members are read by one regular expression each; a nested value (or
    anything the expression does not take) by the JSON parser.
    """
    pos = _WS.match(text, 0).end()
    if text[pos : pos + 1] != "{":
        return None
    out = []
    pos += 1
    if text[_WS.match(text, pos).end()] == "}":
        return out
    while True:
        m = _MEMBER.match(text, pos)
        if m is not None:
            ktext, value, after = m.group(1, 2, 3)
            key = ktext[1:-1] if "\\" not in ktext else json.loads(ktext)
            out.append((key, ktext, value))
            pos = m.end()
        else:  # a nested value: the parser takes it
            pos = _WS.match(text, pos).end()
            key, end = _DEC.raw_decode(text, pos)
            ktext = text[pos:end]
            pos = _WS.match(text, _WS.match(text, end).end() + 1).end()  # past ':'
            _, end = _DEC.raw_decode(text, pos)
            out.append((key, ktext, _squeeze(text[pos:end])))
            pos = _WS.match(text, end).end()
            after = text[pos]
            pos += 1
        if after == "}":
            return out


def _encode_pieces(pieces: Sequence[str]) -> str:
    rows = [_members(p) for p in pieces]
    names: dict[str, int] = {}
    key_text: list[str] = []
    for r in rows:
        for key, ktext, _ in r or ():
            if key not in names:
                names[key] = len(names)
                key_text.append(ktext)
    objects = [r for r in rows if r is not None]
    if not objects:  # no object in the array: nothing to factor out
        return "[" + ",".join(_squeeze(p) for p in pieces) + "]"
    constant: dict[str, str] = {}
    if len(objects) == len(rows):
        once: dict[str, str] = {}
        for key, _, v in objects[0]:
            once[key] = v if key not in once else None  # a key twice in one object is never constant
        for r in objects[1:]:
            seen: dict[str, str] = {}
            for key, _, v in r:
                seen[key] = v if key not in seen else None
            for gone in [k for k, v in once.items() if v is None or seen.get(k) != v]:
                del once[gone]
            if not once:
                break
        constant = {k: v for k, v in once.items() if v is not None}
    shapes: dict[tuple[int, ...], int] = {}
    for r in objects:
        shapes.setdefault(tuple(names[k] for k, _, _ in r), len(shapes))
    # One shape that lists every field once, in order: rows need no shape number.
    one = len(objects) == len(rows) and list(shapes) == [tuple(range(len(names)))]
    out_rows = []
    for r, p in zip(rows, pieces, strict=True):
        if r is None:
            out_rows.append("[-1," + _squeeze(p) + "]")
            continue
        vals = [v for k, _, v in r if k not in constant]
        if not one:
            vals.insert(0, str(shapes[tuple(names[k] for k, _, _ in r)]))
        out_rows.append("[" + ",".join(vals) + "]")
    parts = ['"fields":[' + ",".join(key_text) + "]"]
    if constant:
        parts.append(
            '"constant":{' + ",".join(f"{key_text[names[k]]}:{v}" for k, v in constant.items()) + "}"
        )
    if not one:
        parts.append('"shapes":[' + ",".join("[" + ",".join(map(str, s)) + "]" for s in shapes) + "]")
    parts.append('"rows":[' + ",".join(out_rows) + "]")
    return '{"' + COLUMNAR_KEY + '":{' + ",".join(parts) + "}}"


def lossless_encode(text: str | bytes, *, path: str | Sequence[str | int] | None = None) -> str:
    """The array in ``text`` in columnar form (see the module); nothing dropped.

    Parameters
    ----------
    text : str or bytes
        A JSON document holding an array (see :func:`read_document`).
    path : str or sequence, optional
        Where the array is inside an object.

    Returns
    -------
    str
        The document with its array in columnar form.

    Examples
    --------
    >>> lossless_encode('[{"id": 1, "svc": "api", "ms": 1.50}, {"id": 2, "svc": "api", "ms": 2}]')
    '{"_columnar":{"fields":["id","svc","ms"],"constant":{"svc":"api"},"rows":[[1,1.50],[2,2]]}}'
    >>> lossless_decode(_)
    '[{"id":1,"svc":"api","ms":1.50},{"id":2,"svc":"api","ms":2}]'
    """
    doc = read_document(text, path=path)
    if doc.form == "mapping":  # the columnar form is of arrays: the text as it came
        return _as_text(text).strip(" \t\n\r")
    return _encode_document(doc)


def _encode_document(doc: Document) -> str:
    """:func:`lossless_encode` of a document already read."""
    if doc.form in ("jsonl", "concatenated"):
        if len(doc.items) == 1 and not isinstance(doc.items[0], list):
            return doc.pieces[0]  # one value with no array in it: nothing to encode
        return _encode_pieces(doc.pieces)
    if doc.form == "mapping":  # the columnar form is of arrays: an object's entries stay as they are
        return doc.render(doc.pieces)
    encoded = _encode_pieces(doc.pieces)
    return doc.head + encoded + doc.tail if doc.form == "object" else encoded


def lossless_decode(text: str | bytes) -> str:
    """The JSON text with its columnar object (see the module) expanded back into the array.

    The columnar object may be the whole text or sit anywhere inside it (the
    text around it is returned as it is); text without one is returned unchanged.

    Parameters
    ----------
    text : str or bytes
        A JSON text holding a columnar object.

    Returns
    -------
    str
        The text with the columnar object expanded back into the array.

    Examples
    --------
    >>> lossless_decode('{"took": 1, "hits": {"_columnar": {"fields": ["id", "ok"], "constant": {"ok": true}, "rows": [[1], [2]]}}}')
    '{"took": 1, "hits": [{"id":1,"ok":true},{"id":2,"ok":true}]}'
    """
    text = _as_text(text).strip()
    try:
        return _decode_value(text)
    except (json.JSONDecodeError, RecursionError):  # JSON Lines, concatenated values, or a clear error
        return "\n".join(_decode_value(p) for p in read_document(text).pieces)


def _decode_value(text: str) -> str:
    parsed = json.loads(text)
    path = _find_columnar(parsed)
    if path is None:
        return text
    a, b = _span(text, _WS.match(text, 0).end(), path)
    return text[:a] + _decode_one(text[a:b]) + text[b:]


def _find_columnar(node: Any, path: tuple = ()) -> tuple | None:
    """Path of the first object whose only key is the columnar key (depth first, document order)."""
    if isinstance(node, dict):
        if len(node) == 1 and COLUMNAR_KEY in node:
            return path
        items = node.items()
    elif isinstance(node, list):
        items = enumerate(node)
    else:
        return None
    for k, v in items:
        found = _find_columnar(v, (*path, k))
        if found is not None:
            return found
    return None


def _decode_one(text: str) -> str:
    """One columnar object back into its array; a malformed one is a ValueError saying what is wrong."""
    try:
        return _decode_checked(text)
    except _Malformed as exc:
        raise ValueError(f"not a valid {COLUMNAR_KEY!r} object: {exc}") from None
    except (KeyError, IndexError, TypeError, ValueError, StopIteration, RecursionError) as exc:
        what = f"missing member {exc}" if isinstance(exc, KeyError) else f"{type(exc).__name__}: {exc}"
        raise ValueError(
            f"not a valid {COLUMNAR_KEY!r} object ({what}); it was not written by lossless_encode."
        ) from None


class _Malformed(Exception):
    pass


def _decode_checked(text: str) -> str:
    body = dict((k, v) for k, _, v in _members(_members(text)[0][2]))
    names = [t for t in _array_pieces(body["fields"], json.loads(body["fields"]))[1]]
    constant = {k: (kt, v) for k, kt, v in _members(body.get("constant", "{}"))}
    shapes = json.loads(body["shapes"]) if "shapes" in body else [list(range(len(names)))]
    keys = [json.loads(n) for n in names]
    rows_parsed = json.loads(body["rows"])
    _, row_texts = _array_pieces(body["rows"], rows_parsed)
    items = []
    for parsed, rtext in zip(rows_parsed, row_texts, strict=True):
        _, vals = _array_pieces(rtext, parsed)
        if "shapes" in body:
            shape_id, vals = int(parsed[0]), vals[1:]
            if shape_id >= len(shapes):
                raise _Malformed(f"row {len(items)} names shape {shape_id} of {len(shapes)}")
            if shape_id < 0:
                items.append(vals[0])
                continue
            shape = shapes[shape_id]
        else:
            shape = shapes[0]
        want = sum(keys[f] not in constant for f in shape)
        if len(vals) != want:
            raise _Malformed(f"row {len(items)} holds {len(vals)} values for its {want} fields")
        it = iter(vals)
        members = []
        for f in shape:
            key = keys[f]
            value = constant[key][1] if key in constant else next(it)
            members.append(names[f] + ":" + value)
        items.append("{" + ",".join(members) + "}")
    return "[" + ",".join(items) + "]"


def _spelling(text: str) -> Any:
    """``text`` parsed with numbers as their spelling and objects as member lists (for exact comparison)."""
    return json.loads(text, parse_float=lambda s: ("num", s), parse_int=lambda s: ("num", s),
                      parse_constant=lambda s: ("num", s), object_pairs_hook=list)  # fmt: skip
