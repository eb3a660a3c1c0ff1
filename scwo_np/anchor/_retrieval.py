"""What :class:`~scwo_np.anchor.CrushStore` does with a stored array: filter, rank, page, project.

The order is fixed (``tests/naive.py`` restates it plainly and the property tests
compare the two):

1. **filter** -- the positions ``start:stop`` (a slice), then the dropped items only
   (``dropped_only``: positions the crush did not keep), then ``where``;
2. **rank** -- with ``query``, by BM25 relevance to it (ties keep array order);
3. **page** -- ``offset`` and ``limit`` over that sequence (or, in
   :meth:`CrushStore.page`, as many items as fit in ``budget`` tokens);
4. **project** -- ``fields`` keeps only those fields of each item.

``where`` maps a field to a condition: a plain value (equality; ``True`` never
equals ``1``), a predicate ``value -> bool``, or a dict of operators, all of which
must hold: ``eq`` (equality), ``contains`` (a substring of the value's text: a string
itself, anything else its compact JSON), ``exists`` (``True``: the field is present,
even if null; ``False``: absent), ``gt``, ``gte``, ``lt``, ``lte`` (a number against
numbers, a string against strings, so ISO dates and times compare as dates; a value
of another type does not match).  A dict with no operator names is a plain value
(compare with an object literally through ``{"eq": {...}}``).  ``where`` may also be
a predicate on the whole item.  An item that is not an object matches no field
condition (a predicate on the whole item sees it).  A ``where`` that matches nothing
because it cannot match the array (a field no item has, an object where the field holds
none, a bound of a type the field never holds) is a ``ValueError`` saying so
(:func:`check_no_match`), not an empty answer.

BM25 (Robertson's, with Lucene's positive idf; ``k1 = 1.2``, ``b = 0.75``) runs over
the candidates' words: each item's keys and values (numbers as their JSON text),
lowercased, split into :data:`scwo_np.text.TERM` words (``\\w+``) and stemmed (Snowball English, so "installed"
finds "install" and "errors" finds "error"), against the query's words taken as the
crush's query matching takes them (:func:`~scwo_np.anchor._keep.query_matches`: common
words and position intents such as "latest" left out), stemmed the same way.
Document frequencies are over the candidates themselves.
"""

from __future__ import annotations

import difflib
import json
import math
import numbers
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..text import TERM
from ..text import stem as _stem
from ..validation import check_int, check_text
from ._config import AnchorConfig
from ._keep import _STOP

__all__ = [
    "check_fields",
    "OPERATORS",
    "check_filters",
    "check_no_match",
    "filter_positions",
    "project",
    "rank",
    "query_terms",
]

#: The operators of a ``where`` condition.
OPERATORS = ("eq", "contains", "exists", "gt", "gte", "lt", "lte")
_K1, _B = 1.2, 0.75
_cfg = AnchorConfig()
_INTENT = {k.lower() for k in (*_cfg.recency_keywords, *_cfg.historical_keywords, *_cfg.range_keywords)}


# ----------------------------------------------------------------------------------------
# checking the arguments
# ----------------------------------------------------------------------------------------


def unknown_field(arg: str, field: object, close: list[str], names: list[str]) -> ValueError:
    """The error for ``arg`` (``where`` or ``fields``) naming a field no item has."""
    return ValueError(
        f"{arg} names {'the field ' if arg == 'where' else ''}{field!r}, which no item has"
        + (f" (did you mean {close[0]!r}?)" if close else "")
        + f"; the items' fields are {', '.join(map(repr, names[:20]))}"
        + (" ..." if len(names) > 20 else "")
        + "."
    )


def check_fields(fields: Sequence[str], items: list[Any]) -> None:
    """A field of ``fields`` that no item has is a typo, not a request for empty objects."""
    names = list(dict.fromkeys(k for it in items if isinstance(it, Mapping) for k in it))
    for field in fields:
        if names and field not in names:
            raise unknown_field(
                "fields", field, difflib.get_close_matches(field, names, n=1, cutoff=0.6), names
            )


def check_filters(
    *,
    where: object = None,
    fields: object = None,
    start: object = None,
    stop: object = None,
    offset: object = 0,
    limit: object = None,
    dropped_only: object = True,
    query: object = None,
) -> dict[str, Any]:
    """The filter arguments checked (errors name the argument), as keyword arguments."""
    for name, v in (("start", start), ("stop", stop)):
        if v is not None:
            check_int(v, name=name, low=-(2**62))
    offset = check_int(offset, name="offset", low=0)
    if limit is not None:
        limit = check_int(limit, name="limit", low=0)
    if not isinstance(dropped_only, bool):
        raise TypeError(
            f"dropped_only must be True (only the items the crush dropped) or False (every item); "
            f"got {type(dropped_only).__name__} {dropped_only!r}."
        )
    if query is not None:
        query = check_text(query, name="query")
        if not query.strip():
            query = None
    return dict(
        where=_matcher(where) if where is not None else None,
        fields=_check_fields(fields),
        start=start,
        stop=stop,
        offset=offset,
        limit=limit,
        dropped_only=dropped_only,
        query=query,
    )


def _check_fields(fields: object) -> tuple[str, ...] | None:
    if fields is None:
        return None
    if isinstance(fields, str | bytes) or not isinstance(fields, Sequence):
        raise TypeError(
            f'fields must be a list of field names, like ["date", "action"]; got {type(fields).__name__} '
            f"{fields!r}."
        )
    if not fields:
        raise ValueError("fields must name at least one field (pass None for whole items); got [].")
    for f in fields:
        if not isinstance(f, str):
            raise TypeError(f"fields must hold field names (str); got {type(f).__name__} {f!r}.")
    return tuple(dict.fromkeys(fields))


def _check_bound(op: str, field: str, v: object) -> object:
    if isinstance(v, str):
        return v
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(
            f"where[{field!r}][{op!r}] must be a number or a string (an ISO date or time); "
            f"got {type(v).__name__} {v!r}."
        )
    if math.isnan(float(v)):
        raise ValueError(f"where[{field!r}][{op!r}] is NaN; give a number or a string to compare with.")
    return v


def _condition(field: str, cond: object) -> Callable[[Mapping], bool]:
    """One field's test on an item (a mapping)."""
    if callable(cond):
        return lambda item: field in item and bool(cond(item[field]))
    ops = [k for k in cond if isinstance(k, str) and k in OPERATORS] if isinstance(cond, Mapping) else []
    if not ops:  # a plain value
        return _equals(field, cond)
    other = [k for k in cond if k not in OPERATORS]
    if other:
        raise ValueError(
            f"where[{field!r}] has unknown operator(s) {other}; the operators are {', '.join(OPERATORS)} "
            f'(to compare with an object literally, write {{"eq": {{...}}}}).'
        )
    tests: list[Callable[[Mapping], bool]] = []
    for op, v in cond.items():
        if op == "eq":
            tests.append(_equals(field, v))
        elif op == "exists":
            if not isinstance(v, bool):
                raise TypeError(
                    f"where[{field!r}]['exists'] must be True or False; got {type(v).__name__} {v!r}."
                )
            tests.append(lambda item, v=v: (field in item) is v)
        elif op == "contains":
            if not isinstance(v, str):
                raise TypeError(
                    f"where[{field!r}]['contains'] must be a str (a substring to find); got {type(v).__name__} {v!r}."
                )
            tests.append(lambda item, v=v: field in item and v in value_text(item[field]))
        else:
            b = _check_bound(op, field, v)
            tests.append(lambda item, op=op, b=b: field in item and compare(item[field], op, b))
    return tests[0] if len(tests) == 1 else lambda item: all(t(item) for t in tests)


_MISSING = object()


def _equals(field: str, want: object) -> Callable[[Mapping], bool]:
    """``item[field]`` equals ``want`` (JSON equality); the common scalar cases without :func:`same`."""
    kind = type(want)
    if kind is str or kind is bool or want is None:  # JSON gives exactly these types
        return lambda item: type(got := item.get(field, _MISSING)) is kind and got == want
    if kind is int or kind is float:
        return lambda item: type(got := item.get(field, _MISSING)) in (int, float) and got == want
    return lambda item: field in item and same(item[field], want)


def _matcher(where: object) -> Callable[[Any], bool]:
    """``where`` as a predicate on an item (checked once, before any item is read)."""
    if callable(where) and not isinstance(where, Mapping):
        return lambda item: bool(where(item))
    if not isinstance(where, Mapping):
        raise TypeError(
            f'where must be a mapping field -> condition (like {{"level": "ERROR"}}) or a predicate on an item; '
            f"got {type(where).__name__}."
        )
    tests = []
    for field, cond in where.items():
        if not isinstance(field, str):
            raise TypeError(f"where's field names must be str; got {type(field).__name__} {field!r}.")
        tests.append(_condition(field, cond))
    if len(tests) == 1:
        (test,) = tests
        return lambda item: (type(item) is dict or isinstance(item, Mapping)) and test(item)
    return lambda item: (type(item) is dict or isinstance(item, Mapping)) and all(t(item) for t in tests)


def check_no_match(where: object, items: Sequence[Any]) -> None:
    """When a ``where`` mapping matched nothing: a ``ValueError`` if it cannot match this array.

    Called only on an empty result, so a filter that matches costs nothing more.  It
    names a field no item has, a plain object value where the field never holds one
    (a misspelt operator, like ``{"between": [1, 2]}``), and a bound whose type the
    field never holds (``{"gt": "abc"}`` on numbers).  Anything else is a real "no match".
    """
    if not isinstance(where, Mapping):
        return
    objects = [it for it in items if isinstance(it, Mapping)]
    if not objects:
        if items and all(isinstance(it, str) for it in items):
            raise ValueError(
                "where filters JSON objects by their fields; the items under this key are text (records, "
                "sentences, hunks or pieces): rank them by their words with query, or take a span with "
                "start and stop."
            )
        return
    for field, cond in where.items():
        if callable(cond):
            continue
        values = [it[field] for it in objects if field in it]
        ops = [k for k in cond if k in OPERATORS] if isinstance(cond, Mapping) else []
        if not values:
            if ops and all(k == "exists" for k in ops):
                continue
            names = list(dict.fromkeys(k for it in objects[:1000] for k in it))
            close = [n for n in names if n.lower() == str(field).lower()]
            raise unknown_field("where", field, close, names)
        if isinstance(cond, Mapping) and not ops and not any(isinstance(v, Mapping) for v in values):
            raise ValueError(
                f"where[{field!r}] is an object, compared as a value, but no item's {field!r} is an object; "
                f"its keys {list(cond)} are not operators (the operators are {', '.join(OPERATORS)})."
            )
        for op in ops:
            b = cond[op]
            if op not in ("gt", "gte", "lt", "lte"):
                continue
            if isinstance(b, str) and not any(isinstance(v, str) for v in values):
                raise ValueError(
                    f"where[{field!r}][{op!r}] is the string {b!r}, but {field!r} holds no strings "
                    f"(a string compares only with strings); give a number."
                )
            if _is_number(b) and not any(_is_number(v) for v in values):
                raise ValueError(
                    f"where[{field!r}][{op!r}] is the number {b!r}, but {field!r} holds no numbers "
                    f"(a number compares only with numbers); give a string, e.g. an ISO date."
                )


# ----------------------------------------------------------------------------------------
# values
# ----------------------------------------------------------------------------------------


def same(a: object, b: object) -> bool:
    """JSON equality: numbers by value, ``True``/``False`` only equal to themselves, containers deeply."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping | list | tuple) or isinstance(b, Mapping | list | tuple):
        return False
    return bool(a == b)


def value_text(v: object) -> str:
    """A value's text for ``contains``: a string itself, anything else its compact JSON."""
    if isinstance(v, str):
        return v
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def _is_number(v: object) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def compare(v: object, op: str, b: object) -> bool:
    """``v op b`` for numbers against a number, strings against a string; anything else is no match."""
    if isinstance(b, str):
        if not isinstance(v, str):
            return False
    elif not _is_number(v):
        return False
    if op == "gt":
        return v > b
    if op == "gte":
        return v >= b
    if op == "lt":
        return v < b
    return v <= b


def project(item: object, fields: tuple[str, ...] | None) -> object:
    """``item`` with only ``fields`` (in that order; absent ones left out); a non-object unchanged."""
    if fields is None or not isinstance(item, Mapping):
        return item
    return {f: item[f] for f in fields if f in item}


# ----------------------------------------------------------------------------------------
# filter, rank
# ----------------------------------------------------------------------------------------


def filter_positions(
    items: Sequence[Any],
    kept: Sequence[int] | None,
    *,
    where: Callable[[Any], bool] | None,
    start: int | None,
    stop: int | None,
    dropped_only: bool,
) -> list[int]:
    """Positions ``start:stop``, not kept (with ``dropped_only``), matching ``where``, ascending."""
    positions = range(len(items))[slice(start, stop)]
    if dropped_only and kept is not None and len(kept):
        skip = set(kept)
        positions = [i for i in positions if i not in skip]
    if where is None:
        return list(positions)
    return [i for i in positions if where(items[i])]


def query_terms(query: str) -> list[str]:
    """The query's distinct terms, stemmed: its words but the common ones and the position intents."""
    words = [t for t in TERM.findall(query.lower()) if len(t) > 1 and t not in _STOP and t not in _INTENT]
    return list(dict.fromkeys(_stem(t) for t in words))


def _words(v: object, out: list[str]) -> None:
    if isinstance(v, str):
        out.extend(map(_stem, TERM.findall(v.lower())))
    elif isinstance(v, Mapping):
        for k, x in v.items():
            out.extend(map(_stem, TERM.findall(str(k).lower())))
            _words(x, out)
    elif isinstance(v, list | tuple):
        for x in v:
            _words(x, out)
    elif v is not None and not isinstance(v, bool):
        out.extend(map(_stem, TERM.findall(value_text(v).lower())))


def item_words(item: object) -> list[str]:
    """An item's words for ranking: its keys and values, lowercased, ``\\w+`` split, stemmed."""
    out: list[str] = []
    _words(item, out)
    return out


def bm25_scores(docs: Sequence[Sequence[str]], terms: Sequence[str]) -> list[float]:
    """BM25 of each (stemmed) word list against the (stemmed) terms (df over ``docs``; k1 1.2, b 0.75)."""
    n = len(docs)
    if not n or not terms:
        return [0.0] * n
    counts = [Counter(d) for d in docs]
    lens = [len(d) for d in docs]
    avg = sum(lens) / n or 1.0
    scores = [0.0] * n
    for t in terms:
        tf = [c[t] for c in counts]
        df = sum(1 for x in tf if x)
        if not df:
            continue
        idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
        for i, x in enumerate(tf):
            if x:
                scores[i] += idf * (x * (_K1 + 1.0)) / (x + _K1 * (1.0 - _B + _B * lens[i] / avg))
    return scores


def rank(items: Sequence[Any], positions: list[int], query: str | None) -> list[int]:
    """``positions`` by BM25 relevance of their items to ``query``, best first; ties keep array order."""
    if query is None or len(positions) < 2:
        return positions
    terms = query_terms(query)
    if not terms:
        return positions
    scores = bm25_scores([item_words(items[i]) for i in positions], terms)
    order = sorted(range(len(positions)), key=lambda k: -scores[k])  # stable: ties in array order
    return [positions[k] for k in order]
