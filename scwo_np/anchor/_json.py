""":func:`crush_json`, the JSON-text front of :func:`crush`: to a number of items, or of tokens.

To a token budget (``budget``): :func:`crush` keeps a number of *items*; an agent's window is counted in *tokens*.
:func:`fit_tokens` finds the item count whose output fits: the document unchanged when it
fits; else its lossless columnar form when that fits (nothing dropped); else the largest
item count, searched from the items' own token counts (two to four :func:`crush` calls in
practice), whose output with its omission marker fits.

:func:`fit_json` goes further where one crush cannot fit: when the text around the collection is
over the budget (``findmnt -J``: a tree of mounts, each with its ``children``; a JSON schema's
``definitions`` beside its ``properties``; ``pip inspect``'s packages beside its ``environment``),
or when every item is over the budget alone (botocore's ``endpoints.json``: 8 partitions of
10,000 tokens and more, the marker alone), the document's collections are crushed in turn
(:func:`fit_nested`), the one of most elements first, each to its marker (and at most one item,
when one fits in a few dozen tokens; the rest stored under the marker's key) while the text
around the next is over the budget, and the first whose text around it fits within the budget:
still JSON, a marker in each collection crushed, or :class:`JSONTooLarge` naming the budget that
holds it.  The collections are the arrays and the objects of ``MIN_MAPPING`` entries or more; when
those as their markers are still over the budget, any object of two entries or more is, as a last
resort (a skeleton of markers, counts and keys reads better than a refusal: ``npm ls --all --json``
at 100 tokens, botocore's Lambda API at 100 to 1,000).  Kept items are verbatim, every field
of them; the marker counts every dropped item, lists every dropped position (as runs), and
says how many errors, anomalies, query matches or rare kinds did not fit
(``must_keep_dropped``, and per kind ``must_keep_by_kind``) when even those are too many.  Nothing is
returned that the counter puts above ``budget``.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..tokens import as_token_counter, count_tokens, tokens_over
from ..validation import check_int, renamed_keywords
from ._columns import Columns, _check_items, _columns
from ._config import CrushReport
from ._crush import crush, largest_count
from ._inputs import MIN_MAPPING, Document, read_document
from ._lossless import _encode_document, _encode_pieces, _squeeze, lossless_encode
from ._marker import MARKER_KEY, is_marker, omission_marker
from ._store import CrushStore, _crush_key, array_key
from ._timeline import dropped_by_kind

__all__ = ["FitResult", "JSONTooLarge", "crush_json", "fit_json", "fit_nested", "fit_tokens"]

#: A first guess of the marker's size, in tokens, before it is built.
_MARKER_GUESS = 80
#: Items sampled to tell whether the columnar form could fit.
_SAMPLE = 256
#: The marker's JSON spelling: compact (no spaces after separators).
_COMPACT = (",", ":")
#: At most this many crushes while searching for the item count.
_MAX_TRIES = 12
#: The most renders spent filling the room a crush left with items that still fit (:func:`_fill`).
_FILL_TRIES = 24
#: Room a crush left that is worth crushing a dropped array or object into (:func:`_deepen`): this
#: many tokens and this share of the budget; at most this many dropped items tried.
_DEEPEN_ROOM = 48
_DEEPEN_SHARE = 0.1
_DEEPEN_TRIES = 4


@dataclass(frozen=True)
class FitResult:
    """What :func:`fit_tokens` returned: the text, what was kept, the store key, the form."""

    text: str
    tokens: int
    kept: NDArray[np.int64]
    n: int
    key: str | None
    form: str  # "whole", "compact" (without the spaces between tokens), "lossless" or "crushed"
    #: Collections crushed to their markers before this one (:func:`fit_nested`): each one's
    #: ``path`` (its keys and indices, ``/``-joined), ``kept``, ``of`` and ``key``.
    earlier: tuple[dict, ...] = ()
    #: Where the collection crushed is (:func:`fit_nested`: its keys and indices, ``/``-joined).
    path: str = ""

    @property
    def dropped(self) -> int:
        """Items left out (0 for ``"whole"``, ``"compact"`` and ``"lossless"``)."""
        return self.n - len(self.kept)


@renamed_keywords(max_tokens="budget")
def fit_tokens(
    doc: Document,
    budget: int,
    *,
    token_counter: object = None,
    max_items: int | str | None = None,
    store: CrushStore | str | os.PathLike | None = None,
    lossless: bool = True,
    **kw: Any,
) -> FitResult:
    """``doc`` within ``budget`` tokens of ``token_counter`` (see the module docs).

    ``max_items`` (a number, or ``"auto"``: the size :func:`crush` would choose) also caps the
    items kept; ``lossless=False`` skips the columnar form;
    ``**kw`` go to :func:`crush` (``query``, ``protect``, ``pattern``, ``config`` ...).
    Raises ``ValueError`` when not even the document around the array and a minimal marker fit.
    """
    counter = as_token_counter(token_counter)

    def count(text: str) -> int:
        return int(count_tokens([text], counter)[0])

    def fits(text: str) -> int:  # its tokens, or, when it is surely over the budget, a bound above it
        return tokens_over(text, counter, budget)

    n = len(doc.items)
    everything = np.arange(n, dtype=np.int64)
    cols = _columns(_check_items(doc.items))  # once, for "auto" and every size tried
    if max_items == "auto":
        max_items = crush(cols, "auto", report=True, **kw)[1].max_items if n else None
    elif max_items is not None:
        max_items = check_int(max_items, name="max_items", low=1)
    fits_all = max_items is None or n <= max_items
    t = 0
    if fits_all:
        whole = doc.render(doc.pieces)
        t = fits(whole)
        if t <= budget:
            return FitResult(whole, t, everything, n, None, "whole")
    squeezed = _compacted(doc)
    if squeezed is not None:  # indented or spaced JSON: the same values, without the spaces, then crushed
        doc = squeezed
        if fits_all:
            whole = doc.render(doc.pieces)
            t = fits(whole)
            if t <= budget:
                return FitResult(whole, t, everything, n, None, "compact")
    if fits_all and doc.form != "mapping":  # the columnar form is of arrays
        if lossless and _lossless_may_fit(doc, t, budget, count):
            enc = _encode_document(doc)
            t = fits(enc)
            if t <= budget:
                return FitResult(enc, t, everything, n, None, "lossless")
    key = array_key(doc.values()) if store is not None else None  # stored with the kept positions at the end
    cap = n if max_items is None else min(n, max_items)
    costs = count_tokens(list(doc.pieces), counter) + 1  # each item and its separator
    frame = count(doc.render([]))
    tried: dict[int, tuple[str, int, NDArray[np.int64]]] = {}

    def attempt(k: int) -> tuple[str, int, NDArray[np.int64]]:
        if k not in tried:
            tried[k] = _render(doc, cols, k, key, count, budget, kw)
        return tried[k]

    # First guess: the cheapest-on-average items that fit beside the frame and a marker.
    room = budget - frame - _MARKER_GUESS
    k = int(np.clip(room // max(float(costs.mean()), 1.0), 0, cap))
    lo = largest_count(attempt, k, cap, budget, costs, float(costs.mean()), tried, _MAX_TRIES)

    def complete(text: str, t: int, idx: NDArray[np.int64]) -> tuple[str, int, NDArray[np.int64]]:
        """A crush that fits, with the room it leaves filled: dropped items, then crushed ones."""
        if idx.size < cap:
            text, t, idx = _fill(doc, cols, idx, text, t, costs, cap, key, count, budget, kw)
        if 0 < idx.size < cap and budget - t >= max(
            _DEEPEN_ROOM, _DEEPEN_SHARE * budget
        ):  # (none kept: fit_nested)
            text, t, idx = _deepen(doc, cols, idx, text, t, key, counter, budget, store, kw)
        return text, t, idx

    text, t, idx = attempt(max(lo, 0))
    if t <= budget:
        text, t, idx = complete(text, t, idx)
        if lo >= 1 and idx.size < cap:
            # The crush's picks for k items are not those for k - 1 and one more: dearer ones may
            # fill the budget where k - 1 of them and the room's fill show more items (dpkg's
            # status at 600 tokens: 2 records, where 550 showed 3).  Show the more items, as long
            # as every error, anomaly or match the crush kept stays.
            alt = attempt(lo - 1)
            alt = complete(*alt) if alt[1] <= budget else alt
            must = crush(cols, max(idx.size, 1), report=True, **kw)[1].must_keep.values()
            needed = set(idx.tolist()) & set().union(*(set(np.asarray(m).tolist()) for m in must))
            if alt[1] <= budget and alt[2].size > idx.size and needed <= set(alt[2].tolist()):
                text, t, idx = alt
        key = _store(store, doc, idx)  # the crush's key (the one in the marker), its kept positions recorded
        return FitResult(text, t, idx, n, key, "crushed")
    raise ValueError(  # not even an empty array and the short marker fit
        f"budget={budget} is too small for this document: the text around the array and "
        f"a marker saying that its {n} items were dropped take {t} tokens; give budget >= {t}."
    )


def _compacted(doc: Document) -> Document | None:
    """``doc`` without the white space between its JSON tokens (strings untouched), when that is
    over 2% of its text (``findmnt -J``'s and ``lsblk -J``'s indentation, ``json.dumps``' ", "):
    the frame and the items kept cost that much less (``findmnt -J`` at 600 tokens was refused:
    its indented frame alone took 633). ``None`` when it is compact already, or JSON Lines."""
    if doc.form not in ("array", "object", "mapping"):
        return None
    text = doc.render(doc.pieces)
    squeezed = _squeeze(text.strip())
    if len(squeezed) >= 0.98 * len(text):
        return None
    return read_document(squeezed, path=doc.path or None)


def _lossless_may_fit(doc: Document, whole: int, budget: int, count) -> bool:
    """Whether the columnar form might fit: for long arrays, from 256 evenly spaced items'
    own columnar form (encoding 10,000 items costs ten times a crush), with a 25% margin."""
    n = len(doc.items)
    if n <= _SAMPLE:
        return True
    pick = np.linspace(0, n - 1, _SAMPLE).astype(np.int64)
    sample = [doc.pieces[i] for i in pick.tolist()]
    ratio = count(_encode_pieces(sample)) / max(count("[" + ",".join(sample) + "]"), 1)
    return ratio * whole <= 1.25 * budget


def _store(store: CrushStore | str | os.PathLike | None, doc: Document, kept=None) -> str | None:
    """Store the whole array (and the positions kept) when a store is given; its key."""
    if store is None:
        return None
    if isinstance(store, CrushStore):
        return store.put(doc.values(), kept=kept)
    with CrushStore(store) as s:
        return s.put(doc.values(), kept=kept)


def _fill(doc, cols, idx, text, t, costs, cap, key, count, budget, kw, tries: int = _FILL_TRIES):
    """The room the crush left: the dropped items that still fit, the first ones first in ranked
    results and the newest first otherwise: the longest run of them that fits (bisected, at most
    ``tries`` renders), then one by one those that still fit.  The crush's own picks may not fit at
    all (an error item of 900 tokens in a budget of 700): the search then kept nothing, and smaller
    items fill the budget instead of a marker alone."""
    rep = crush(cols, max(idx.size, 1), report=True, **kw)[1]
    kinds = {name: (pos, None) for name, pos in rep.must_keep.items()}
    n = len(doc.items)
    order = np.arange(n) if rep.pattern == "search_results" else np.arange(n - 1, -1, -1)
    # The room is counted beside the short marker: the field summary goes before any item does (a
    # 440-token summary left no room, and 500 tokens kept no item where 350 kept two).
    if idx.size < n:
        t_short = _layout(doc, cols, idx, key, count, -1, dropped_by_kind(kinds, idx, cols))[1]
    else:
        t_short = t
    left = order[~np.isin(order, idx) & (costs[order] <= budget - t_short)][: max(cap - idx.size, 0)]

    def lay(extra: NDArray[np.int64]) -> tuple[str, int, NDArray[np.int64]]:
        cand = np.sort(np.concatenate([idx, extra]).astype(np.int64))
        got = _layout(doc, cols, cand, key, count, budget, dropped_by_kind(kinds, cand, cols))
        return got[0], got[1], cand

    best = (text, t, idx)
    lo, hi = (
        0,
        int(np.searchsorted(np.cumsum(costs[left]), budget - t_short, side="right")),
    )  # more never fits
    while lo < hi and tries > 0:  # the longest run of ``left`` that fits
        m = (lo + hi + 1) // 2
        tries -= 1
        got = lay(left[:m])
        if got[1] <= budget:
            lo, best = m, got
        else:
            hi = m - 1
    text, t, idx = best
    for i in left[lo:].tolist():  # then the ones after the run that still fit
        if tries <= 0 or idx.size >= cap or budget - t < 2:
            break
        if costs[i] > budget - t:
            continue
        tries -= 1
        got = lay(np.asarray([i], np.int64))
        if got[1] <= budget:
            text, t, idx = got
    return text, t, idx


def _deepen(doc, cols, idx, text, t, key, counter, budget, store, kw):
    """The room the crush left, when it is large: a dropped item that is itself an array or an
    object, crushed into it (:func:`fit_json`: its own marker and key inside it) and kept in its
    place, each in an equal share of the room; the query's matches first, then the largest.  A JSON
    schema at 1,000 tokens came back as its 9 small entries in 268 tokens, ``definitions`` and
    ``properties`` each over the budget and dropped whole.  Not when the crush kept nothing:
    :func:`fit_nested` then crushes inside every item."""
    n = len(doc.items)
    rep = crush(cols, max(idx.size, 1), report=True, **kw)[1]
    kinds = {name: (pos, None) for name, pos in rep.must_keep.items()}
    wanted = set(rep.must_keep.get("query_matches", np.empty(0, np.int64)).tolist())
    pieces = list(doc.pieces)
    kept = set(idx.tolist())
    order = sorted((j for j in range(n) if j not in kept), key=lambda j: (j not in wanted, -len(pieces[j])))
    todo: list[tuple[int, tuple[str, str]]] = []
    for j in order:  # read lazily: litellm's table has 4,878 entries
        if (split := _value_text(doc, pieces[j])) is not None:
            todo.append((j, split))
            if len(todo) == _DEEPEN_TRIES:
                break
    count = _counter(counter)
    for k, (j, (head, value)) in enumerate(todo):  # each an equal share of the room left
        left = budget - t
        room = max(left // (len(todo) - k), min(left, _DEEPEN_ROOM)) - count(head) - 2
        for _ in range(3):  # the outer marker changes with the item kept: the room, less what it missed
            if room < _DEEPEN_ROOM // 2:
                break
            try:  # a value crushed inside already (by fit_nested): its collections not crushed yet, in turn
                inner = (
                    fit_nested(value, room, token_counter=counter, store=store, **kw)
                    if MARKER_KEY in value
                    else fit_json(read_document(value), room, token_counter=counter, store=store, **kw)
                )
            except (TypeError, ValueError):
                break
            if not inner.kept.size:
                break
            cand = np.sort(np.append(idx, j)).astype(np.int64)
            deeper = dataclasses.replace(doc, pieces=[*pieces[:j], head + inner.text, *pieces[j + 1 :]])
            got = _layout(deeper, cols, cand, key, count, budget, dropped_by_kind(kinds, cand, cols))
            if got[1] <= budget:
                doc, pieces, (text, t), idx = deeper, deeper.pieces, got, cand
                break
            room -= got[1] - budget
        if budget - t < _DEEPEN_ROOM:
            break
    return text, t, idx


def _value_text(doc: Document, piece: str) -> tuple[str, str] | None:
    """An item's text as (what goes before its value, the value), when the value is an array or an
    object of two elements or more; None otherwise."""
    head = ""
    if doc.form == "mapping":
        name, end = json.JSONDecoder().raw_decode(piece)
        rest = piece[end:].lstrip()
        if not rest.startswith(":"):
            return None
        head, piece = piece[: len(piece) - len(rest) + 1], rest[1:].lstrip()
    if not piece.startswith(("[", "{")):
        return None
    try:
        value = json.loads(piece)
    except (ValueError, RecursionError):
        return None
    return (head, piece) if isinstance(value, list | dict) and len(value) >= 2 else None


def _counter(counter):
    return lambda text: int(count_tokens([text], counter)[0])


def _render(
    doc: Document, cols: Columns, k: int, key: str | None, count, limit: int, kw: dict
) -> tuple[str, int, NDArray[np.int64]]:
    """The document with ``k`` items crushed to and its marker; its tokens; the kept indices.

    The marker is the full one (the dropped ranges, the must-keep items left out per kind, a
    field summary) when the output fits ``limit`` with it, else the short one (the same
    without the field summary).
    """
    idx, rep = crush(cols, max(k, 1), report=True, **kw)
    if k < 1:  # nothing kept: the crush to one item only tells the must-keep items, all left out
        idx = np.empty(0, np.int64)
        must = rep.must_keep_counts
    else:
        must = rep.must_keep_by_kind
    text, t = _layout(doc, cols, idx, key, count, limit, must)
    return text, t, idx


def _layout(
    doc: Document, cols: Columns, idx: NDArray[np.int64], key: str | None, count, limit: int, must: dict
) -> tuple[str, int]:
    """The document with the items ``idx`` and its marker (``must``: the must-keep items left out,
    per kind), and its tokens."""
    n = len(doc.items)
    pieces = [doc.pieces[i] for i in idx.tolist()]
    if idx.size == n:
        text = doc.render(pieces)
        return text, count(text)
    key = _crush_key(key, idx) if key else None  # the key of this crush (what put(kept=idx) returns)
    text, t = "", 0
    for fields in (12, 0):  # the full marker, else the short one (no field summary)
        m = omission_marker(cols, n, idx, key=key, max_fields=fields, must_keep=must)
        text = doc.render([*pieces, doc.entry(m)])
        t = count(text)
        if t <= limit:
            break
    return text, t


@renamed_keywords(max_tokens="budget")
def crush_json(
    text: str | bytes,
    max_items: int | str | None = None,
    *,
    budget: int | None = None,
    token_counter: object = None,
    path: str | Sequence[str | int] | None = None,
    marker: bool | None = None,
    store: CrushStore | str | os.PathLike | None = None,
    lossless: bool = False,
    **kw: Any,
) -> str:
    r""":func:`crush` on JSON text; the kept items, verbatim, in order, in the form they came in.

    Parameters
    ----------
    text : str or bytes
        A JSON array, an object holding one (``{"results": [...]}``: the largest
        array inside, or the one at ``path``; the object around it is returned
        unchanged), records keyed by name (``{"semver": {...}, "tar": {...}}``:
        the object's entries are the items), JSON Lines or concatenated JSON
        values (returned one per line), as ``str`` or UTF-8 ``bytes`` (see
        :func:`read_document`).
    max_items : int or "auto", optional
        The most items kept (``"auto"``: the fewest that cover the array's facts, see
        :func:`auto_size`).  Give it, ``budget``, or both.
    budget : int, optional
        A ceiling on the output's tokens, marker included, by ``token_counter``: the
        document unchanged if it fits, else (indented or spaced JSON) the same without the
        spaces between its tokens if that fits, else its lossless columnar form if that fits,
        else the most items whose output fits, shown compact (errors, anomalies and query
        matches first; the marker says how many of them did not fit). Kept items keep every
        field.
    token_counter : name, TokenCounter or callable ``str -> int``, optional
        Counts ``budget`` (default ``"estimate"``; see :func:`scwo_np.tokens.as_token_counter`).
    path : str or sequence, optional
        Where the array is inside an object (``"data.items"``).
    marker : bool, optional
        Append the omission marker (see :mod:`scwo_np.anchor._marker`) when items
        were dropped. Default: on when ``store`` or ``budget`` is given, off otherwise
        (with ``budget`` it is always on: every drop is announced).
    store : CrushStore or path, optional
        Store the whole array; the marker carries its key for
        :meth:`CrushStore.retrieve`.
    lossless : bool
        Drop nothing: return the array in columnar form instead (see
        :func:`lossless_encode`); ``max_items`` and ``**kw`` are then unused.
    **kw
        Passed to :func:`crush` (``query``, ``pattern``, ``config``, ``protect`` …).

    Returns
    -------
    str
        The document with its array cut to the kept items (each verbatim, in order), or in
        columnar form with ``lossless=True``.

    Raises
    ------
    ValueError
        On invalid UTF-8, malformed JSON and JSON nested deeper than Python's parser can
        follow.

    Examples
    --------
    >>> from scwo_np.anchor import AnchorConfig
    >>> crush_json('[{"a": 1.50}, {"a": 2}, {"a": 3}]', 2, config=AnchorConfig(min_anchor_slots=2))
    '[{"a": 1.50},{"a": 3}]'
    >>> crush_json(b'[1, 2, 3]', 5)
    '[1,2,3]'
    >>> crush_json('{"took": 7, "hits": [{"id": 1}, {"id": 2}, {"id": 3}]}', 2)
    '{"took": 7, "hits": [{"id": 1},{"id": 3}]}'
    >>> crush_json('[{"id": 1}, {"id": 2}, {"id": 3}]', 2, marker=True)
    '[{"id": 1},{"id": 3},{"_omitted":{"count":1,"of":3,"ranges":[[1,1]],"fields":{"id":{"count":1,"distinct":1,"min":2,"max":2}}}}]'
    >>> import json
    >>> logs = [{"id": i, "level": "ERROR" if i == 70 else "INFO", "msg": f"GET /item/{7 * i} took {i % 13} ms"}
    ...         for i in range(100)]
    >>> out = crush_json(json.dumps(logs), budget=300)  # the estimate: 4 characters a token
    >>> -(-len(out) // 4) <= 300, '"ERROR"' in out, json.loads(out)[-1]["_omitted"]["count"]
    (True, True, 82)
    """
    if lossless:
        return lossless_encode(text, path=path)
    kw.pop("report", None)
    if max_items is None and budget is None:
        raise TypeError("crush_json needs max_items, budget or both; got neither.")
    doc = read_document(text, path=path)
    if budget is not None:
        budget = check_int(budget, name="budget", low=1)
        if marker is False:
            raise ValueError("marker=False does not go with budget: every drop is announced.")
        whole = as_given(text)
        if (
            max_items is None
            and whole is not None
            and tokens_over(whole, as_token_counter(token_counter), budget) <= budget
        ):
            return whole  # within the budget: the document as it came, byte for byte
        return fit_json(doc, budget, token_counter=token_counter, max_items=max_items, store=store, **kw).text
    marker = store is not None if marker is None else bool(marker)
    return _crush_document(doc, max_items, marker=marker, store=store, **kw)[0]


def as_given(text: str | bytes) -> str | None:
    """``text`` as a str, as it came (bytes decoded as UTF-8), or None when it does not decode."""
    if isinstance(text, str):
        return text
    try:
        return bytes(text).decode("utf-8")
    except UnicodeDecodeError:
        return None


def _crush_document(
    doc: Document,
    max_items: int | str,
    *,
    marker: bool,
    store: CrushStore | str | os.PathLike | None,
    **kw: Any,
) -> tuple[str, CrushReport]:
    """The document with its array crushed (and the marker appended when asked), and the report."""
    idx, rep = crush(doc.items, max_items, report=True, **kw)
    pieces = [doc.pieces[i] for i in idx.tolist()]
    if marker and idx.size < len(doc.items):
        key = None
        key = _store(store, doc, idx)
        m = omission_marker(rep.columns, len(doc.items), idx, key=key, must_keep=rep.must_keep_by_kind)
        pieces.append(doc.entry(m))
    return doc.render(pieces), rep


# ----------------------------------------------------------------------------------------
# JSON that one crush cannot fit: its collections crushed one after another
# ----------------------------------------------------------------------------------------

#: Collections a document may have crushed one after another.
MAX_NESTED = 32
#: Rooms beside the text around a collection tried when crushing it to its marker (and one item).
_ROOMS = (48, 96, 192, 384, 768)


class JSONTooLarge(ValueError):
    """JSON that no crush puts within the budget as JSON; ``need`` is the budget that holds it."""

    def __init__(self, message: str, need: int):
        super().__init__(message)
        self.need = need


def open_collections(value: Any, minimum: int = MIN_MAPPING) -> list[tuple[int, list[str | int]]]:
    """``(elements, path)`` of every array in ``value`` not crushed yet (its last element is not a
    marker) with an element, and of every object of records keyed by name (``minimum`` entries
    or more, none of them a marker), in document order."""
    out: list[tuple[int, list[str | int]]] = []
    stack: list[tuple[Any, list[str | int]]] = [(value, [])]
    while stack:
        node, path = stack.pop()
        if isinstance(node, list):
            if node and not is_marker(node[-1]):
                out.append((len(node), path))
            stack.extend((v, [*path, i]) for i, v in reversed(list(enumerate(node))))
        elif isinstance(node, dict) and not is_marker(node):  # (a marker's ranges are not data)
            if len(node) >= minimum and MARKER_KEY not in node:  # records keyed by name, not crushed yet
                out.append((len(node), path))
            # (a mapping's marker is its entry MARKER_KEY: its count, ranges and key are not data)
            stack.extend((v, [*path, k]) for k, v in reversed(list(node.items())) if k != MARKER_KEY)
    return out


def rows_as_objects(doc: Document) -> Document:
    """``doc`` with its items that are arrays (rows: ``[[1, "a"], [2, "b"]]``) read by the crush as
    objects of their positions; the texts shown and stored stay the rows' own."""
    if not any(isinstance(x, list) for x in doc.items):
        return doc
    items = [{str(k): v for k, v in enumerate(x)} if isinstance(x, list) else x for x in doc.items]
    return dataclasses.replace(doc, items=items)


def fit_nested(
    text: str,
    budget: int,
    *,
    token_counter: object = None,
    store: CrushStore | str | os.PathLike | None = None,
    **kw: Any,
) -> FitResult:
    """``text`` (a JSON array or object) within ``budget``, its collections crushed in turn (see the
    module; ``**kw`` go to :func:`crush`). Raises :class:`JSONTooLarge` when every collection as its
    marker is still over."""
    counter = as_token_counter(token_counter)

    def count(t: str) -> int:
        return int(count_tokens([t], counter)[0])

    cur = _squeeze(text.strip())
    skip: set[tuple] = set()  # collections the crush cannot take (of arrays), or not smaller as a marker
    earlier: list[dict] = []  # the collections crushed to their markers, to report them
    need = count(cur)
    minimum = MIN_MAPPING
    for _ in range(2 * MAX_NESTED):
        found = [a for a in open_collections(json.loads(cur), minimum) if tuple(a[1]) not in skip]
        if not found and minimum > 2:  # still over: any object of two entries or more, as a last resort
            minimum = 2
            continue
        if not found:
            break
        path = max(found, key=lambda a: a[0])[1]  # the most elements, the first of equals
        doc = rows_as_objects(read_document(cur, path=path))
        try:
            res = fit_tokens(doc, budget, store=store, token_counter=counter, lossless=False, **kw)
            if res.kept.size or not doc.items:
                return dataclasses.replace(res, earlier=tuple(earlier), path="/".join(map(str, path)))
        except TypeError:  # items the crush cannot read: not crushed
            skip.add(tuple(path))
            continue
        except ValueError:  # too much around it: this one to its marker, then the next
            pass
        res = _to_marker(doc, count(doc.render([])), counter, store, kw)
        if res is None:
            skip.add(tuple(path))
        elif res.tokens < need:
            cur, need = res.text, res.tokens
            where = "/".join(map(str, path))
            earlier = [e for e in earlier if e["path"] != where]  # (crushed again: its latest)
            earlier.append({"path": where, "kept": len(res.kept), "of": res.n, "key": res.key})
        else:  # three numbers are shorter than the marker that stands for them
            skip.add(tuple(path))
    raise JSONTooLarge(
        f"budget={budget} is too small for this document: with its collections crushed to their markers "
        f"it still takes {need} tokens; give budget >= {need}",
        need,
    )


def _to_marker(doc: Document, frame: int, counter, store, kw: dict) -> FitResult | None:
    """``doc``'s collection crushed to its marker and at most one item, in the fewest tokens of
    :data:`_ROOMS` beside its frame: the item the query names when one does (pip's SBOM asked for
    "rich": its 29-token component went for the marker alone at 48), else the first that fits."""
    want: set[int] = set()
    if kw.get("query"):
        try:
            got = crush(doc.items, 1, report=True, **kw)[1].must_keep  # (none told when one item is all)
            want = set(got.get("query_matches", np.empty(0, np.int64)).tolist())
        except (TypeError, ValueError):
            want = set()
    first = None
    for room in _ROOMS:
        try:
            res = fit_tokens(doc, frame + room, store=store, token_counter=counter, lossless=False,
                             max_items=1, **kw)  # fmt: skip
        except ValueError:
            continue
        if not want or want & set(res.kept.tolist()):
            return res
        first = res if first is None else first
    return first


def fit_json(
    doc: Document,
    budget: int,
    *,
    token_counter: object = None,
    max_items: int | str | None = None,
    store: CrushStore | str | os.PathLike | None = None,
    **kw: Any,
) -> FitResult:
    """:func:`fit_tokens`, and where it is refused or keeps no item of a JSON array or object, its
    collections crushed in turn (:func:`fit_nested`; ``max_items`` caps the first crush only).

    Raises ``ValueError`` (:class:`JSONTooLarge` for an array or object) when neither fits.
    """
    nested = doc.form in ("array", "object", "mapping")
    try:
        res = fit_tokens(doc, budget, token_counter=token_counter, max_items=max_items, store=store, **kw)
    except ValueError:
        if not nested:
            raise
        res = None
    if res is not None and (res.kept.size or not res.n or not nested):
        return res
    try:
        return fit_nested(doc.render(doc.pieces), budget, token_counter=token_counter, store=store, **kw)
    except JSONTooLarge:
        if res is not None:  # the marker alone, which fits
            return res
        raise
