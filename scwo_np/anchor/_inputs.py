"""Tool outputs as tools emit them: a JSON array, an object holding one, JSON Lines, concatenated values.

:func:`read_document` finds the array to crush and keeps every element's text
verbatim (numbers keep their spelling, strings their escapes), so that
:meth:`Document.render` can put the kept elements back exactly as they came,
inside the object around them when there is one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

from .._config import JIT

__all__ = ["Document", "read_document", "squeeze_json"]

try:  # a parser in Rust, 2-3x faster than json's; json reads what it does not (see _parse)
    import orjson
except ImportError:  # pragma: no cover - a platform without its wheels
    orjson = None

_WS = re.compile(r"[ \t\n\r]*")
_DEC = json.JSONDecoder()
# Bytes to '0' (digits) or ' ' (the rest): a run of 19 digits is then one memmem away.
_DIGIT_RUNS = bytes.maketrans(bytes(range(256)), b" " * 48 + b"0" * 10 + b" " * 198)
FORMS = ("array", "object", "mapping", "jsonl", "concatenated")
#: An object with at least this many entries and no entry holding most of its text is a
#: collection itself (``"mapping"``: records keyed by name); a smaller one is the frame
#: around its largest array (``{"took": 3, "total": 2, "hits": [...]}``).
MIN_MAPPING = 8
#: A child holding more than this share of its parent's text is where the collection is.
_DOMINANT = 0.5


@dataclass
class Document:
    """A tool output read for crushing.

    Made by :func:`read_document`; its fields are:

    Parameters
    ----------
    items : list
        The array's elements, parsed.
    pieces : sequence of str
        Each element's text, verbatim (a list, or :class:`Pieces`, which cuts
        each from the array's text when asked).
    form : {"array", "object", "mapping", "jsonl", "concatenated"}
        ``array``: the text is the array; ``object``: the array sits inside an
        object (or array) at ``path``, and ``head``/``tail`` are the text around
        it; ``mapping``: the collection is an object's entries (records keyed by
        name: ``{"pkg-a": {...}, "pkg-b": {...}}``), at ``path`` (``()`` for the
        whole text), each item ``{"key": name, **record}`` (``{"key": name,
        "value": v}`` when the value is not an object; ``"_key"`` when a record
        has a ``"key"`` field) and each piece the entry's text, ``"name": value``;
        ``jsonl``: one JSON value per line; ``concatenated``: JSON values one
        after another (``{..} {..}``).
    path : tuple of str and int
        Where the array (or the mapping) is.
    head, tail : str
        The text before and after the array (or the mapping's braces).

    Examples
    --------
    >>> doc = read_document('{"took": 3, "hits": [{"id": 1}, {"id": 2}]}')
    >>> doc.form, doc.path, doc.items, doc.render(doc.pieces[:1])
    ('object', ('hits',), [{'id': 1}, {'id': 2}], '{"took": 3, "hits": [{"id": 1}]}')
    """

    items: list[Any]
    pieces: Sequence[str]
    form: str
    path: tuple[str | int, ...] = ()
    head: str = ""
    tail: str = ""

    def render(self, pieces: Sequence[str]) -> str:
        """The document with its array replaced by ``pieces`` (element texts), in the same form.

        Parameters
        ----------
        pieces : sequence of str
            Element texts, such as the kept ones.

        Returns
        -------
        str
            The document's text with those elements as its array.

        Examples
        --------
        >>> doc = read_document('{"n": 2, "rows": [{"a": 1}, {"a": 2}]}')
        >>> doc.render(doc.pieces[1:])
        '{"n": 2, "rows": [{"a": 2}]}'
        """
        if self.form in ("jsonl", "concatenated"):
            return "\n".join(pieces)
        if self.form == "mapping":
            return self.head + "{" + ",".join(pieces) + "}" + self.tail
        return self.head + "[" + ",".join(pieces) + "]" + self.tail

    def entry(self, value: Any) -> str:
        """``value`` (an omission marker, a dict of one key) as one more piece, compact.

        Parameters
        ----------
        value : dict
            A JSON object; in a mapping, its one entry becomes an entry of the mapping.

        Returns
        -------
        str
            Its text as an element of the array (or an entry of the mapping).

        Examples
        --------
        >>> doc = read_document('{"a": {"n": 1}, "b": {"n": 2}}', path="")
        >>> doc.render([doc.pieces[0], doc.entry({"_omitted": {"count": 1}})])
        '{"a": {"n": 1},"_omitted":{"count":1}}'
        """
        if self.form == "mapping":
            return ",".join(json.dumps(k, ensure_ascii=False) + ":" + _compact(v) for k, v in value.items())
        return _compact(value)

    def values(self) -> Sequence[str]:
        """Each item's text as a JSON value: the pieces, or in a mapping each entry as its item,
        ``{"key": name, ...record}`` (``{"key": name, "value": v}`` when the value is not an
        object), the record's text verbatim: what ``where``, ``fields`` and ``query`` of a
        :class:`CrushStore` filter by.

        Returns
        -------
        sequence of str
            What a :class:`CrushStore` keeps and gives back for the items.

        Examples
        --------
        >>> read_document('{"a": {"n": 1.50}, "b": 2}', path="").values()
        ['{"key":"a","n": 1.50}', '{"key":"b","value":2}']
        """
        if self.form != "mapping":
            return self.pieces
        out = []
        for item, piece in zip(self.items, self.pieces, strict=True):
            name = next(iter(item))  # "key" ("_key" when a record has a "key")
            _, end = _DEC.raw_decode(piece, 0)  # past the entry's name
            value = piece[_WS.match(piece, _WS.match(piece, end).end() + 1).end() :]  # past its ':'
            head = "{" + _compact(name) + ":" + _compact(item[name])
            if value.startswith("{"):
                rest = value[1:].lstrip(" \t\n\r")
                out.append(head + ("}" if rest.startswith("}") else "," + rest))
            else:
                out.append(head + ',"value":' + value + "}")
        return out


def read_document(text: str | bytes, *, path: str | Sequence[str | int] | None = None) -> Document:
    r"""Read a tool output and find the array in it.

    Parameters
    ----------
    text : str or bytes
        A JSON array; an object holding an array (``{"results": [...]}``: the
        largest array inside, by number of elements, the first of equals in
        document order, unless ``path`` names one) or records keyed by name
        (form ``"mapping"``; where the collection is found: see :class:`Document`
        and ``docs/user_guide/anchoring.md``); JSON Lines; or JSON values
        written one after another. Bytes are decoded as UTF-8 (a BOM is skipped).
    path : str or sequence of str/int, optional
        The array's (or the object's) place inside the document: ``"data.items"``,
        ``"results/0/hits"`` or ``("results", 0, "hits")``; ``""`` for the whole text.

    Returns
    -------
    Document
        The items, their texts verbatim, and where the array sits in the text.

    Raises
    ------
    ValueError
        Invalid UTF-8, malformed JSON, a path that leads nowhere or to something
        other than an array or an object.  (One JSON value with no collection in
        it is a one-element document: there is nothing to crush and it is kept whole.)

    Examples
    --------
    >>> d = read_document('{"took": 3, "results": [{"a": 1.50}, {"a": 2}]}')
    >>> d.form, d.path, d.pieces
    ('object', ('results',), ['{"a": 1.50}', '{"a": 2}'])
    >>> d.render(d.pieces[1:])
    '{"took": 3, "results": [{"a": 2}]}'
    >>> read_document(b'{"a": 1}\n{"a": 2}\n').form
    'jsonl'
    >>> d = read_document('{"name": "app", "dependencies": {"semver": {"version": "7.6"}, "tar": {"version": "7.4"}}}')
    >>> d.form, d.path, d.items[0], d.pieces[1]
    ('mapping', ('dependencies',), {'key': 'semver', 'version': '7.6'}, '"tar": {"version": "7.4"}')
    """
    text = _as_text(text)
    keys = _parse_path(path)
    start = _WS.match(text, 0).end()
    if start == len(text):
        raise ValueError("text is empty (or only whitespace); expected a JSON array, object or JSON Lines.")
    try:
        whole, end = _parse(text, start)
    except json.JSONDecodeError as exc:
        raise ValueError(f"malformed JSON at character {exc.pos}: {exc.msg}") from None
    except RecursionError:
        raise ValueError(
            "text is JSON nested too deeply to parse (thousands of levels); no tool output needs that."
        ) from None
    rest = _WS.match(text, end).end()
    if rest < len(text):  # more values follow: JSON Lines or concatenated JSON
        if keys:
            raise ValueError(
                "path applies to one JSON document; this text holds several values (JSON Lines?)."
            )
        return _sequence(text, start, whole, end)
    if keys is None and isinstance(whole, list):
        items, pieces = _array_pieces(text[start:end], whole)
        return Document(items, pieces, "array")
    if keys is None:
        keys = _collection(text[start:end], whole)
        if keys is None:  # one value with no collection in it: nothing to crush, kept as it is
            return Document([whole], [text[start:end]], "concatenated")
    target = _follow(whole, keys)
    a, b = _span(text, start, keys) if keys else (start, end)
    if isinstance(target, dict):
        items, pieces = _mapping_pieces(text[a:b], target)
        return Document(items, pieces, "mapping", tuple(keys), text[:a], text[b:])
    items, pieces = _array_pieces(text[a:b], target)
    if not keys:
        return Document(items, pieces, "array")
    return Document(items, pieces, "object", tuple(keys), text[:a], text[b:])


def _parse(text: str, start: int) -> tuple[Any, int]:
    """The JSON value starting at ``start`` and where it ends, as ``json.JSONDecoder.raw_decode``.

    A text that is one value goes to orjson first, and its answer is json's
    own: orjson agrees with json on every value both read (numbers included:
    both round decimal text to the nearest double) except integers beyond 64
    bits, which it reads as floats, so a text holding a run of 19 digits goes
    to json; so does whatever orjson refuses (NaN, lone surrogates, 1e400,
    nesting past 1,024 levels, several values one after another).
    """
    if _orjson_can_read(text):
        try:
            return orjson.loads(text), len(text.rstrip(" \t\n\r"))
        except orjson.JSONDecodeError:
            pass
    return _DEC.raw_decode(text, start)


def _orjson_can_read(text: str) -> bool:
    """orjson is there and reads ``text`` as json does (no 19-digit run, no lone surrogate)."""
    if orjson is None:
        return False
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return b"0" * 19 not in raw.translate(_DIGIT_RUNS)


def _as_text(text: object) -> str:
    if isinstance(text, bytes | bytearray | memoryview):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(
                f"text is not valid UTF-8 (byte {exc.start}: {exc.reason}); decode it with the right encoding first."
            ) from None
    if not isinstance(text, str):
        raise TypeError(f"text must be JSON as a str or UTF-8 bytes; got {type(text).__name__}.")
    return text[1:] if text.startswith("\ufeff") else text


def _parse_path(path: object) -> list[str | int] | None:
    if path is None:
        return None
    if isinstance(path, str):
        parts = [p for p in re.split(r"[./]", path) if p != ""]
        return [int(p) if p.isdigit() else p for p in parts]
    if isinstance(path, Sequence) and all(isinstance(p, str | int) and not isinstance(p, bool) for p in path):
        return list(path)
    raise TypeError(f"path must be a str like 'data.items' or a sequence of keys and indices; got {path!r}.")


def _follow(doc: Any, keys: Sequence[str | int]) -> list:
    node = doc
    for depth, k in enumerate(keys):
        where = "".join(f"[{p!r}]" for p in keys[:depth]) or "the document"
        if isinstance(node, dict) and isinstance(k, int) and str(k) in node:
            k = str(k)  # "results/0" on an object whose key is "0"
        if isinstance(node, dict) and isinstance(k, str):
            if k not in node:
                raise ValueError(f"path: {where} has no key {k!r} (keys: {sorted(node)[:10]}).")
        elif isinstance(node, list) and isinstance(k, int):
            if not 0 <= k < len(node):
                raise ValueError(f"path: {where} has {len(node)} elements; index {k} is out of range.")
        else:
            raise ValueError(f"path: {where} is a {type(node).__name__}; cannot take {k!r} of it.")
        node = node[k]
    if not isinstance(node, list | dict):
        raise ValueError(
            f"path {'/'.join(map(str, keys))} leads to a {type(node).__name__}, not an array or an object."
        )
    return node


def _collection(text: str, doc: Any) -> list[str | int] | None:
    """Path of what to crush in the JSON value ``doc`` (``text``, its text), or None for nothing.

    From the top, into the entry holding most of an object's text (over half of it) or the one
    element of an array, while that is a non-empty object or array: where the text is.  There,
    an array is the collection; so is an object of :data:`MIN_MAPPING` entries or more (records
    keyed by name, as ``npm ls --json``'s dependencies, a policy table, a schema's properties);
    in a smaller object, the largest array inside it (by number of elements, the first of equals
    in document order: the object is the frame around it, ``{"took": 3, "hits": [...]}``), and
    with no array there, the object's own entries if it has two or more.
    """
    path: list[str | int] = []
    raw = text.encode("utf-8", "surrogatepass")
    node = doc
    while isinstance(node, dict | list) and len(node):
        starts, colons, ends, ok = _spans(np.frombuffer(raw, dtype=np.uint8))
        if not ok or starts.shape[0] != len(node):  # duplicate keys: their texts and the parse differ
            break
        if isinstance(node, list):
            if len(node) > 1 or not isinstance(node[0], dict | list) or not node[0]:
                break
            i, key, value_start = 0, 0, starts[0]
        else:
            sizes = ends - colons
            i = int(np.argmax(sizes))
            key, value_start = list(node)[i], colons[i] + 1
            if sizes[i] <= _DOMINANT * len(raw) or not isinstance(node[key], dict | list) or not node[key]:
                break
        path.append(key)
        raw, node = raw[value_start : ends[i]].strip(b" \t\n\r"), node[key]
    if isinstance(node, list) or (isinstance(node, dict) and len(node) >= MIN_MAPPING):
        return path
    inner = _largest_array(node)
    if inner is not None:
        return path + inner
    return path if isinstance(node, dict) and len(node) >= 2 else None


def _largest_array(doc: Any) -> list[str | int] | None:
    """Path of the array with the most elements (first in document order among equals), or None."""
    best: tuple[int, list] = (-1, [])
    stack: list[tuple[Any, list]] = [(doc, [])]
    while stack:  # depth-first, children pushed in reverse so they pop in document order
        node, p = stack.pop()
        if isinstance(node, list):
            if len(node) > best[0]:
                best = (len(node), p)
            stack.extend((v, [*p, i]) for i, v in reversed(list(enumerate(node))))
        elif isinstance(node, dict):
            stack.extend((v, [*p, k]) for k, v in reversed(list(node.items())))
    return best[1] if best[0] >= 0 else None


def _span(text: str, pos: int, keys: Sequence[str | int]) -> tuple[int, int]:
    """Character span of the value at ``keys`` (the last of duplicate keys, as json.loads keeps)."""
    for k in keys:
        if text[pos] == "{":
            pos = _WS.match(text, pos + 1).end()
            found = -1
            while text[pos] != "}":
                key, pos = _DEC.raw_decode(text, pos)
                pos = _WS.match(text, _WS.match(text, pos).end() + 1).end()  # past ':'
                if key == str(k):
                    found = pos
                _, pos = _DEC.raw_decode(text, pos)
                pos = _WS.match(text, pos).end()
                if text[pos] == ",":
                    pos = _WS.match(text, pos + 1).end()
            pos = found
        else:  # an array and an index
            pos = _WS.match(text, pos + 1).end()
            for _ in range(int(k)):
                _, pos = _DEC.raw_decode(text, pos)
                pos = _WS.match(text, _WS.match(text, pos).end() + 1).end()  # past ','
    _, end = _DEC.raw_decode(text, pos)
    return pos, end


def _sequence(text: str, start: int, first: Any, end: int) -> Document:
    """JSON values one after another (the first already parsed); JSON Lines when a newline separates every two."""
    lines = _json_lines(text, start)
    if lines is not None:
        return lines
    items, pieces = [first], [text[start:end]]
    pos = _WS.match(text, end).end()
    lines = "\n" in text[end:pos]
    while pos < len(text):
        try:
            item, end = _DEC.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"malformed JSON at character {exc.pos} (value {len(items)} of a JSON Lines or concatenated "
                f"JSON text): {exc.msg}"
            ) from None
        except RecursionError:
            raise ValueError("text is JSON nested too deeply to parse (thousands of levels).") from None
        items.append(item)
        pieces.append(text[pos:end])
        pos = _WS.match(text, end).end()
        lines = lines and (pos == len(text) or "\n" in text[end:pos])
    return Document(items, pieces, "jsonl" if lines else "concatenated")


def _json_lines(text: str, start: int) -> Document | None:
    """JSON Lines read line by line with orjson (see :func:`_parse`); None unless every line is one value."""
    if not _orjson_can_read(text):
        return None
    pieces = [p for p in (line.strip(" \t\r") for line in text[start:].split("\n")) if p]
    try:
        items = list(map(orjson.loads, pieces))
    except orjson.JSONDecodeError:  # a value across lines, two on one line, or one orjson refuses
        return None
    return Document(items, pieces, "jsonl")


class Pieces(Sequence[str]):
    """The elements' texts of an array, each cut from the array's text when asked.

    Behaves as the list of them (indexing, slices, iteration, ``==`` with a
    list); a crush needs the texts of the kept items only, and the store the
    whole array as compact text, joined here from the byte spans in one pass.
    """

    __slots__ = ("_ascii", "_ends", "_raw", "_starts", "_text")

    def __init__(self, text: str, raw: bytes, starts: NDArray[np.int64], ends: NDArray[np.int64]):
        self._text, self._raw, self._starts, self._ends = text, raw, starts, ends
        self._ascii = text.isascii()  # then byte and character positions agree

    def __len__(self) -> int:
        return int(self._starts.shape[0])

    def __getitem__(self, i):  # an int or a slice, as a list
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        a, b = int(self._starts[i]), int(self._ends[i])
        return self._text[a:b] if self._ascii else self._raw[a:b].decode("utf-8", "surrogatepass")

    def __iter__(self):
        a, b = self._starts.tolist(), self._ends.tolist()
        if self._ascii:
            return iter([self._text[x:y] for x, y in zip(a, b, strict=True)])
        return iter([self._raw[x:y].decode("utf-8", "surrogatepass") for x, y in zip(a, b, strict=True)])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(list(self))

    def compact(self) -> bytes:
        """``[p1,p2,...]`` in UTF-8: the array without the space between its elements."""
        return _join_spans(np.frombuffer(self._raw, dtype=np.uint8), self._starts, self._ends).tobytes()


@njit(**JIT)
def _join_spans(b, starts, ends):
    n = starts.shape[0]
    size = 2 + max(n - 1, 0)
    for k in range(n):
        size += ends[k] - starts[k]
    out = np.empty(size, np.uint8)
    out[0] = 91  # '['
    p = 1
    for k in range(n):
        if k:
            out[p] = 44  # ','
            p += 1
        m = ends[k] - starts[k]
        out[p : p + m] = b[starts[k] : ends[k]]
        p += m
    out[p] = 93  # ']'
    return out


def _array_pieces(segment: str, parsed: list) -> tuple[list[Any], Sequence[str]]:
    """Elements of the array ``segment`` (already parsed as ``parsed``) and their texts, verbatim."""
    raw = segment.encode("utf-8", "surrogatepass")  # a lone surrogate has no UTF-8 form; carried as is
    starts, _, ends, ok = _spans(np.frombuffer(raw, dtype=np.uint8))
    if ok and starts.shape[0] == len(parsed):
        return parsed, Pieces(segment, raw, starts, ends)
    pos = _WS.match(segment, 1).end()
    pieces = []
    for _ in parsed:
        _, end = _DEC.raw_decode(segment, pos)
        pieces.append(segment[pos:end])
        pos = _WS.match(segment, _WS.match(segment, end).end() + 1).end()
    return parsed, pieces


def _mapping_pieces(segment: str, parsed: dict) -> tuple[list[dict], list[str]]:
    """Entries of the object ``segment`` (parsed as ``parsed``) as items, and their texts verbatim.

    Each item is the entry's value with its name as a field (see :class:`Document`); a name that
    appears twice is two items, as it is two entries of the text.
    """
    raw = segment.encode("utf-8", "surrogatepass")
    starts, colons, ends, ok = _spans(np.frombuffer(raw, dtype=np.uint8))
    if ok and starts.shape[0] == len(parsed):
        keys, values = list(parsed), list(parsed.values())
        if segment.isascii():
            pieces = [segment[a:b] for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]
        else:
            pieces = [
                raw[a:b].decode("utf-8", "surrogatepass")
                for a, b in zip(starts.tolist(), ends.tolist(), strict=True)
            ]
    else:  # duplicate names (json keeps the last): the entries one by one
        keys, values, pieces = [], [], []
        pos = _WS.match(segment, 1).end()
        while segment[pos] != "}":
            key, after = _DEC.raw_decode(segment, pos)
            value, end = _DEC.raw_decode(
                segment, _WS.match(segment, _WS.match(segment, after).end() + 1).end()
            )
            keys.append(key), values.append(value), pieces.append(segment[pos:end])
            pos = _WS.match(segment, end).end()
            if segment[pos] == ",":
                pos = _WS.match(segment, pos + 1).end()
    name = "key"
    while any(isinstance(v, dict) and name in v for v in values):
        name = "_" + name
    items = [
        {name: k, **v} if isinstance(v, dict) else {name: k, "value": v}
        for k, v in zip(keys, values, strict=True)
    ]
    return items, pieces


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@njit(**JIT)
def _spans(b):
    """Byte spans of the top-level elements of a JSON array, or entries of an object (strings and
    escapes respected), and where each entry's value starts (its ``:``; objects only).

    Returns ``(starts, colons, ends, ok)``; ``ok`` is False when the bytes are not a
    single well-nested array or object (the caller then walks it with the parser).
    """
    n = b.shape[0]
    starts = np.empty(n // 2 + 1, np.int64)
    colons = np.full(n // 2 + 1, -1, np.int64)
    ends = np.empty(n // 2 + 1, np.int64)
    m = 0
    depth = 0
    in_str = False
    esc = False
    start = -1
    last = -1  # last non-space byte inside the current element
    seen_open = False
    close = 93
    for i in range(n):
        ch = b[i]
        if in_str:
            last = i
            if esc:
                esc = False
            elif ch == 92:  # backslash
                esc = True
            elif ch == 34:  # quote
                in_str = False
            continue
        if ch == 32 or ch == 10 or ch == 13 or ch == 9:
            continue
        if not seen_open:
            if ch != 91 and ch != 123:
                return starts[:0], colons[:0], ends[:0], False
            close = 93 if ch == 91 else 125
            seen_open = True
            depth = 1
            continue
        if depth == 0:
            return starts[:0], colons[:0], ends[:0], False  # data after the array
        if ch == 34:
            in_str = True
        if depth == 1 and (ch == 44 or ch == close):  # ',' or the closing bracket
            if start >= 0:
                starts[m] = start
                ends[m] = last + 1
                m += 1
                start = -1
            if ch == close:
                depth = 0
            continue
        if depth == 1 and ch == 58 and colons[m] < 0:  # an entry's ':'
            colons[m] = i
        if ch == 91 or ch == 123:
            depth += 1
        elif ch == 93 or ch == 125:
            depth -= 1
        if start < 0:
            start = i
        last = i
    return starts[:m], colons[:m], ends[:m], seen_open and depth == 0 and not in_str


#: A JSON string (the loop unrolled: runs of plain characters between escapes, not one character a step).
_JSON_STRING = re.compile(r'("[^"\\]*(?:\\.[^"\\]*)*")')
_NO_SPACE = str.maketrans("", "", " \t\n\r")


def squeeze_json(text: str) -> str:
    """JSON ``text`` without the white space between its tokens (strings untouched): cut at its
    strings, white space deleted from every other part, each distinct part once (112 KB of
    ``json.dumps`` in 2.2 ms; one substitution a token took 7.5)."""
    parts = _JSON_STRING.split(text)
    between = parts[::2]  # mostly the same few: ", ", ": ", a line break and an indent
    squeezed = {p: p.translate(_NO_SPACE) for p in set(between)}
    parts[::2] = map(squeezed.__getitem__, between)
    return "".join(parts)
