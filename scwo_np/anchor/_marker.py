"""The omission marker: one small object saying what :func:`crush` dropped, where, and what it held.

Format (one object, appended as the array's last element, or as the last line of
JSON Lines)::

    {"_omitted": {
        "count": 9990, "of": 10000,                 # items dropped / items in the input
        "ranges": [[3, 119], [121, 9996]],          # every dropped position, as inclusive runs, 0-based
        "must_keep_dropped": 12,                    # must-keep items left out (when some were) ...
        "must_keep_by_kind": {"errors": 2, "rare": 10},  # ... and of which kind
        "fields": {                                 # per field, over the dropped items only
            "latency_ms": {"count": 9990, "min": 0.4, "max": 912.5},
            "level": {"count": 9990, "distinct": 2, "top": [["INFO", 9001], ["WARN", 989]]},
            "id": {"count": 9990, "distinct": 9990}
        },
        "key": "3f2a9c0d5e6b7a81"                   # present when the array was stored
    }}

Kept items are never altered; the marker is the only object added.  ``ranges``
lists every run of dropped positions, however many (there are at most one more
than the kept items), so the positions not listed are exactly the kept ones; the
short form (``fields=False``, what :func:`fit_tokens` falls back to when the full
one does not fit) drops only the field summary.  The must-keep kinds are
``query_matches``, ``errors``, ``anomalies`` and ``rare`` (a rare category value).  ``fields``
is computed on the columns :func:`crush` already built: numbers get ``min`` and
``max`` (as they are spelled in the data's type), categories (some value repeats)
their three most frequent values (a string of over :data:`VALUE_CHARS` characters by its
start and "…"), and every field its number of ``distinct`` values; at most ``max_fields``
fields, the most often present first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._columns import Columns

__all__ = ["MARKER_KEY", "is_marker", "omission_marker"]

#: The marker object's only key.
MARKER_KEY = "_omitted"
#: Characters of a string value the field summary quotes (its start and "…"): a category's top
#: value can be a whole licence text, and a marker of 4,000 tokens left room for two items.
VALUE_CHARS = 60


def is_marker(item: Any) -> bool:
    """True for the omission marker object (to skip it when iterating a crushed array).

    Parameters
    ----------
    item : object
        An element of a crushed array.

    Returns
    -------
    bool
        True for the omission marker.

    Examples
    --------
    >>> is_marker({"_omitted": {"count": 3, "of": 5}}), is_marker({"id": 1})
    (True, False)
    """
    return isinstance(item, dict) and len(item) == 1 and MARKER_KEY in item


def omission_marker(
    c: Columns | None,
    n: int,
    kept: Sequence[int] | NDArray[np.int64],
    *,
    key: str | None = None,
    max_fields: int = 12,
    must_keep: dict[str, int] | None = None,
) -> dict[str, Any] | None:
    """The marker for the items of an ``n``-item array not in ``kept`` (None when nothing was dropped).

    ``c`` is the array's :class:`Columns` (``None`` skips the field summary).

    Parameters
    ----------
    c : Columns or None
        The array's columns (None: no field summary).
    n : int
        Items in the array.
    kept : sequence of int
        The kept indices.
    key : str, optional
        The :class:`CrushStore` key of the whole array, to retrieve the dropped items.
    max_fields : int
        The most fields summarised (0: none, the short form).
    must_keep : dict, optional
        Must-keep items left out, per kind (``CrushReport.must_keep_by_kind``); given and not
        empty, the marker says ``must_keep_dropped`` (their sum) and ``must_keep_by_kind``.

    Returns
    -------
    dict or None
        ``{"_omitted": {"count", "of", "ranges", ["must_keep_dropped", "must_keep_by_kind"], "fields",
        "key"}}``, or None when nothing was dropped.

    Examples
    --------
    >>> from scwo_np.anchor import columns
    >>> items = [{"level": "INFO", "ms": i} for i in range(10)]
    >>> m = omission_marker(columns(items), 10, [0, 9])
    >>> m["_omitted"]["ranges"], m["_omitted"]["fields"]["ms"]
    ([[1, 8]], {'count': 8, 'distinct': 8, 'min': 1, 'max': 8})
    >>> omission_marker(None, 10, [0, 5, 9], must_keep={"errors": 1})
    {'_omitted': {'count': 7, 'of': 10, 'ranges': [[1, 4], [6, 8]], 'must_keep_dropped': 1, 'must_keep_by_kind': {'errors': 1}}}
    """
    mask = np.ones(n, dtype=bool)
    mask[np.asarray(kept, dtype=np.int64)] = False
    dropped = np.flatnonzero(mask)
    if dropped.size == 0:
        return None
    breaks = np.flatnonzero(np.diff(dropped) > 1)
    starts = np.concatenate([dropped[:1], dropped[breaks + 1]])
    ends = np.concatenate([dropped[breaks], dropped[-1:]])
    body: dict[str, Any] = {"count": int(dropped.size), "of": int(n)}
    body["ranges"] = np.stack([starts, ends], axis=1).tolist()
    if must_keep:
        body["must_keep_dropped"] = int(sum(must_keep.values()))
        body["must_keep_by_kind"] = {k: int(v) for k, v in must_keep.items()}
    if c is not None and max_fields > 0:
        body["fields"] = _field_summary(c, dropped, max_fields)
    if key is not None:
        body["key"] = key
    return {MARKER_KEY: body}


def _short(value: Any) -> Any:
    """A string value cut to :data:`VALUE_CHARS` characters (marked "…"); any other value as it is."""
    if isinstance(value, str) and len(value) > VALUE_CHARS:
        return value[: VALUE_CHARS - 1] + "…"
    return value


def _field_summary(c: Columns, dropped: NDArray[np.int64], max_fields: int) -> dict[str, Any]:
    codes = c.codes[:, dropped]
    present = np.count_nonzero(codes >= 0, axis=1)
    order = np.lexsort((np.arange(len(c.names)), -present))  # most often present first, then field order
    out: dict[str, Any] = {}
    order = order[np.asarray([c.names[f] != MARKER_KEY for f in order.tolist()], dtype=bool)]  # (an inner
    for f in order[:max_fields].tolist():  # marker of a dropped record is not one of its fields)
        if present[f] == 0:
            continue
        col = codes[f][codes[f] >= 0]
        counts = np.bincount(col, minlength=len(c.values[f]))
        seen = np.flatnonzero(counts)
        entry: dict[str, Any] = {"count": int(present[f]), "distinct": int(seen.size)}
        nums = c.distinct_numbers[f]
        kinds = c.kinds[f]
        if kinds and kinds <= {int, float} and np.isfinite(nums[seen]).all():
            lo, hi = seen[np.argmin(nums[seen])], seen[np.argmax(nums[seen])]
            entry["min"], entry["max"] = c.values[f][lo], c.values[f][hi]
        elif seen.size < col.size and kinds <= {str, bool, type(None), int, float}:
            top = seen[np.lexsort((seen, -counts[seen]))][:3]  # most frequent; ties: first seen
            entry["top"] = [[_short(c.values[f][k]), int(counts[k])] for k in top.tolist()]
        out[c.names[f]] = entry
    return out
