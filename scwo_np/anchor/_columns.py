"""A JSON array as columns: each field factorised once, numbers and lengths per distinct value."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from operator import itemgetter
from typing import Any

import numpy as np
from numpy.typing import NDArray

# ----------------------------------------------------------------------------------------
# Columns: the items, once
# ----------------------------------------------------------------------------------------

_MISSING = object()


@dataclass
class Columns:
    """Per field: factorised codes (-1 = missing), a numeric array (NaN = not a number).

    Made by :func:`columns`; its fields are:

    Parameters
    ----------
    n : int
        The number of items.
    names : list of str
        The fields, in order of first appearance.
    codes : ndarray of int64, shape (n_fields, n)
        Each item's value of each field as a code into ``values`` (-1: missing).
    values : list of list
        Per field, its distinct values, indexed by code.
    counts : list of ndarray of int64
        Per field, how many items hold each code.
    numeric : ndarray of float64, shape (n_fields, n)
        Each value as a number (NaN where it is not one).
    length : ndarray of int64
        The rough JSON length of each item.
    item_code : ndarray of int64
        Equal for identical items.
    kinds : list of set
        Per field, the Python types seen.
    distinct_numbers : list of ndarray of float64
        Per field and code, the value as a number (NaN where it is not one).

    Examples
    --------
    >>> c = columns([{"id": 1, "ok": True}, {"id": 2}])
    >>> c.names, c.codes.tolist(), c.values
    (['id', 'ok'], [[0, 1], [0, -1]], [[1, 2], [True]])
    """

    n: int
    names: list[str]
    codes: NDArray[np.int64]  # (n_fields, n)
    values: list[list[Any]]  # distinct values per field, indexed by code
    counts: list[NDArray[np.int64]]  # occurrences per code
    numeric: NDArray[np.float64]  # (n_fields, n)
    length: NDArray[np.int64]  # rough JSON length of each item
    item_code: NDArray[np.int64]  # equal for identical items
    kinds: list[set] = field(default_factory=list)  # Python types seen in each field
    distinct_numbers: list[NDArray[np.float64]] = field(default_factory=list)  # per code, NaN if not a number

    def field_index(self, name: str) -> int:
        """The row of field ``name`` in ``codes`` and ``numeric``.

        Parameters
        ----------
        name : str
            A field.

        Returns
        -------
        int
            Its index in ``names`` (a ValueError when it is not one).

        Examples
        --------
        >>> columns([{"a": 1, "b": 2}]).field_index("b")
        1
        """
        return self.names.index(name)


class _Codes(dict):
    """value -> code, assigning the next code to a new value (lookups of known values stay in C)."""

    def __missing__(self, key):
        code = self[key] = len(self)
        return code


def _check_columns(c: object) -> Columns:
    """``c`` if it is a :class:`Columns`; a TypeError naming what to pass otherwise."""
    if not isinstance(c, Columns):
        raise TypeError(
            f"c must be the Columns of the items (scwo_np.anchor.columns(items)); got {type(c).__name__}."
        )
    return c


def columns(items: Sequence[Mapping]) -> Columns:
    """The items as columns: each field factorised once, numbers and lengths per distinct value.

    Values that are equal in Python but differ in JSON type (``true``/``1``)
    get separate codes; nested objects and lists are compared by their JSON text.

    Parameters
    ----------
    items : sequence of mapping
        The array's elements (non-objects are treated as one field each).

    Returns
    -------
    Columns
        The items as columns.

    Examples
    --------
    >>> c = columns([{"a": 1, "b": "x"}, {"a": 2}, {"a": 1, "b": "x"}])
    >>> c.names, c.codes.tolist(), c.item_code.tolist()
    (['a', 'b'], [[0, 1, 0], [0, -1, 0]], [0, 1, 0])
    """
    return _columns(_check_items(items))


def _to_float(v: int | float) -> float:
    """``float(v)``; integers beyond float range become NaN (not a usable number)."""
    try:
        return float(v)
    except OverflowError:
        return math.nan


_PLAIN = {str, int, float, bool, type(None)}


def _check_names(items: list[Mapping], names: list) -> None:
    """A TypeError naming the first item with a key that is not a string (JSON keys are strings)."""
    if all(type(name) is str for name in names):
        return
    for k, it in enumerate(items):
        for name in it:
            if not isinstance(name, str):
                raise TypeError(
                    f"items[{k}] has the key {name!r} ({type(name).__name__}); crush reads JSON objects, whose "
                    "keys are strings: convert them, e.g. [{str(k): v for k, v in item.items()} for item in items]."
                )


def _columns(items: list[Mapping]) -> Columns:
    n = len(items)
    names, cols = _fields(items)
    _check_names(items, names)
    F = len(names)
    codes = np.full((F, n), -1, dtype=np.int64)
    numeric = np.full((F, n), np.nan)
    values: list[list[Any]] = []
    counts: list[NDArray[np.int64]] = []
    length = np.full(n, 2, dtype=np.int64)
    kinds_of: list[set] = []
    dnums: list[NDArray[np.float64]] = []
    for f, name in enumerate(names):
        col = cols[f] if cols is not None else _column(items, name)
        kinds = set(map(type, col))
        if object in kinds:  # the missing marker is an object(); a value may be one too
            kinds.discard(object)
            if any(type(v) is object and v is not _MISSING for v in col):
                kinds.add(object)
        # hashable, type-aware keys for nested values, sets, unhashable objects, and true vs 1
        slow = (
            bool(kinds - _PLAIN)
            or (bool in kinds and bool(kinds & {int, float}))
            or ({int, float} <= kinds and _int_equals_float(col))  # 0 and 0.0 are two values
        )
        if slow:
            col = [_key(v) for v in col]  # hashable, type-aware keys (true vs 1, nested values)
        # Distinct values in first-seen order (missing first, as code -1), then one lookup per
        # item: all in C (a dict with __missing__ called Python once per distinct value).
        order = dict.fromkeys(chain((_MISSING,), col))
        if len(order) == n + 1:  # every item has its own value (ids, timestamps): codes in item order
            code_row = np.arange(n, dtype=np.int64)
        else:
            index = dict(zip(order, range(len(order)), strict=True))
            code_row = np.fromiter(map(index.__getitem__, col), dtype=np.int64, count=n) - 1
        distinct = list(order)[1:]
        if slow:
            distinct = [_unkey(k) for k in distinct]
        codes[f] = code_row
        present = code_row >= 0
        counts.append(np.bincount(code_row[present], minlength=len(distinct)))
        if kinds <= {int, float}:  # fast paths by the field's types
            try:
                num = np.fromiter(distinct, dtype=np.float64, count=len(distinct))
            except OverflowError:  # an integer beyond float range (JSON allows 1 followed by 400 zeros)
                num = np.array([_to_float(v) for v in distinct])
        elif kinds & {int, float}:
            num = np.array([_to_float(v) if type(v) in (int, float) else np.nan for v in distinct])
        else:
            num = np.full(len(distinct), np.nan)
        numeric[f] = np.append(num, np.nan)[code_row]  # code -1 reads the trailing NaN
        if kinds <= {str}:
            vlen = np.fromiter(map(len, distinct), dtype=np.int64, count=len(distinct))
        elif kinds and kinds <= {int, float}:
            vlen = _number_lengths(num, kinds, distinct)
        else:
            vlen = np.fromiter(map(len, map(str, distinct)), dtype=np.int64, count=len(distinct))
        vlen += len(name) + 4
        length += np.append(vlen, 0)[code_row]
        values.append(distinct)
        kinds_of.append(kinds)
        dnums.append(num)
    if F and n:
        item_code = _row_ids(codes, [len(v) + 1 for v in values])
    else:
        item_code = np.zeros(n, dtype=np.int64)
    numeric[~np.isfinite(numeric)] = np.nan
    return Columns(n, names, codes, values, counts, numeric, length, item_code, kinds_of, dnums)


def _fields(items: list[Mapping]) -> tuple[list[str], list[list[Any]] | None]:
    """Every key in first-seen order, and each field's values when every item has every key.

    The usual array has the same keys in every item: when each item has as many
    keys as the first and each of the first's keys (one C-level ``itemgetter`` map
    per field, which raises otherwise), the first item's keys are all of them and
    the columns are read at once; collecting the keys of every item costs more.
    """
    if items:
        first = list(items[0])
        if sum(map(len, items)) == len(first) * len(items):
            try:
                return first, [list(map(itemgetter(name), items)) for name in first]
            except (KeyError, TypeError):
                pass
    return list(dict.fromkeys(chain.from_iterable(items))), None


def _column(items: list[Mapping], name: str) -> list[Any]:
    try:  # a field every item has: one C-level map
        return list(map(itemgetter(name), items))
    except (KeyError, TypeError):
        return [it.get(name, _MISSING) for it in items]


_POW10 = 10.0 ** np.arange(1, 17)


def _number_lengths(num: NDArray[np.float64], kinds: set, distinct: list) -> NDArray[np.int64]:
    """Length of each distinct number's JSON text: exact for integers, close for floats.

    Integers' digits come from comparisons with powers of ten (exact below 2**53);
    a float's length is its integer digits, the point and the fewest decimals (1
    to 15) that give it back, else 16 significant digits (Python's shortest
    spelling has 15 to 17); the few floats Python spells with an exponent are
    spelled.  Items' lengths only decide which are longer than average, and
    ``repr`` of every float costs more than the rest of :func:`columns`.
    """
    a = np.abs(num)
    if not np.isfinite(a).all() or (a >= 2.0**53).any():  # huge or non-finite: spell them all
        return np.fromiter(map(len, map(str, distinct)), dtype=np.int64, count=len(distinct))
    digits = np.searchsorted(_POW10, np.floor(a), side="right") + 1 + (num < 0)
    if float not in kinds:
        return digits.astype(np.int64)
    decimals = np.zeros(num.size, dtype=np.int64)
    for d in range(15, 0, -1):  # ends with the fewest that round-trip (0.00390625 has 8)
        decimals[np.round(num, d) == num] = d
    full = decimals == 0
    decimals[full] = np.maximum(16 - digits[full] + (num[full] < 0), 1)
    out = digits + 1 + decimals
    if int in kinds:
        isint = np.fromiter(map(int.__instancecheck__, distinct), dtype=bool, count=len(distinct))
        out[isint] = digits[isint]
    for i in np.flatnonzero((a > 0) & (a < 1e-4)).tolist():  # 1e-05: Python's exponent form
        out[i] = len(repr(distinct[i]))
    return out.astype(np.int64)


def _sorted_quantile(s: NDArray[np.float64], q: float) -> float:
    """numpy's default (linear) quantile of the sorted ``s``, without numpy's per-call set-up."""
    pos = (s.size - 1) * q
    lo = int(pos)
    hi = min(lo + 1, s.size - 1)
    t = pos - lo
    a, b = float(s[lo]), float(s[hi])
    return a + (b - a) * t if t < 0.5 else b - (b - a) * (1 - t)


def _row_ids(codes: NDArray[np.int64], sizes: list[int]) -> NDArray[np.int64]:
    """Equal ids for equal columns of ``codes`` (items with the same values), in first-sorted order.

    One mixed-radix integer per item when the product of the fields' sizes fits in
    int64 (then a 1-D unique), else the row-wise unique.
    """
    if math.prod(sizes) < 2**62:
        key = np.zeros(codes.shape[1], dtype=np.int64)
        for row, size in zip(codes, sizes, strict=True):
            key = key * size + (row + 1)
        _, ids = np.unique(key, return_inverse=True)
    else:
        _, ids = np.unique(codes.T, axis=0, return_inverse=True)
    return ids.reshape(-1).astype(np.int64)


def _int_equals_float(col: list) -> bool:
    """Whether an int of ``col`` equals a float of it (``0`` and ``0.0``: one key to a dict, where the
    items hold two values; hypothesis found ``[{"x": 0}, {"x": 0.0}]`` read as 0 twice)."""
    ints = {v for v in col if type(v) is int}
    return any(type(v) is float and v in ints for v in col)


def _key(v: Any) -> Any:
    if v is _MISSING:
        return v
    if isinstance(v, dict | list | tuple):
        try:
            return ("json", json.dumps(v, sort_keys=True, default=_plain))
        except (TypeError, ValueError):  # keys of mixed types, circular references
            return ("repr", repr(v))
    if isinstance(v, set | frozenset):  # a set: its members' JSON, sorted (the order of a set is not data)
        return ("set", json.dumps(sorted(json.dumps(x, sort_keys=True, default=_plain) for x in v)))
    if isinstance(v, float) and math.isnan(v):
        return ("nan",)
    try:
        hash(v)
    except TypeError:  # an unhashable object: compared by its repr
        return ("repr", repr(v))
    return (type(v).__name__, v)


def _plain(v: Any) -> Any:
    """JSON for what JSON has no spelling of: sets as sorted lists, anything else as its text."""
    if isinstance(v, set | frozenset):
        return sorted(v, key=repr)
    return str(v)


def _unkey(k: Any) -> Any:
    if k[0] == "json":
        return json.loads(k[1])
    if k[0] == "set":
        return [json.loads(x) for x in json.loads(k[1])]
    if k[0] == "nan":
        return math.nan
    return k[1]


def _check_items(items: object) -> list[Mapping]:
    if isinstance(items, str | bytes) or not isinstance(items, Sequence):
        raise TypeError(
            f"items must be a list of JSON objects; got {type(items).__name__}. Use crush_json for text."
        )
    items = list(items)
    kinds = set(map(type, items))
    if kinds == {dict}:  # the usual case, parsed JSON: no per-item isinstance (abc checks are slow)
        return items
    if any(isinstance(it, list | tuple) for it in items):
        k = next(i for i, it in enumerate(items) if isinstance(it, list | tuple))
        raise TypeError(f"items[{k}] is a nested list; crush works on an array of objects (or of scalars).")
    dicts = [isinstance(it, Mapping) for it in items]
    if all(dicts):
        return items
    if not any(dicts):  # an array of scalars: each becomes {"value": x} (documented)
        return [{"value": it} for it in items]
    k = dicts.index(not dicts[0])
    raise TypeError(
        f"items mixes objects and scalars (items[0] is {type(items[0]).__name__}, items[{k}] is "
        f"{type(items[k]).__name__}); pass an array of objects or an array of scalars. Got {sorted(map(str, kinds))}."
    )
