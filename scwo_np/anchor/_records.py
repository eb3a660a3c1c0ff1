"""Repeated records as text: a tool output cut into records, and crushed by them to a token ceiling.

Many tool outputs are not JSON but a run of records written as text: log lines, ``git log``
entries, CSV or table rows, ``key: value`` blocks.  :func:`split_records` finds them (and
the text before them, such as a CSV header or a title line, which is always kept);
:func:`fit_records` keeps, within ``budget`` tokens, what :func:`~scwo_np.anchor.crush`
keeps of records in time order (see :mod:`scwo_np.anchor._timeline`): the errors, the
newest record and a spread over the timeline, never the earliest first.  Kept records are
verbatim and in their order; one marker line at the end says how many were left out,
which positions, and the store key that gives them back
(:meth:`~scwo_np.anchor.CrushStore.page`: each record is stored as a JSON string).

Shapes, tried in this order:

* **headed** — a line such as ``commit <sha>`` or ``Commit: <sha>`` starts each record
  (``git log``); records written newest first, as git does, unless their dates say otherwise;
* **sections** — a changelog's or NEWS file's releases, each from its heading (a short line with
  a day and no time of day) to the next (:func:`~scwo_np.anchor._changelog._sections`); newest first
  when their days say so, and not read for error words (they say what changed);
* **table** — a header line and rows with as many fields (CSV, TSV, ``|`` tables, or columns of
  spaces under capitalised names: ``ps aux``, ``df``, ``lsof``);
* **blocks** — blank-line-separated blocks of ``key: value`` lines;
* **lines** — one record a line (lines indented under one, such as a traceback, belong to
  it), when most lines start with a time or a level word, or the lines read as a listing; in
  the first case a line that starts with neither continues the record before it (a
  traceback's ``Traceback ...`` and ``ValueError: ...`` lines stay with the error they follow).

Each record's time is the first date it holds (ISO, or ``git log``'s ``Date:`` line), else
its place; its level is the worst of the error words it holds (``ERROR``, ``FATAL``,
``Traceback``, ``failed`` ...).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime

import numpy as np
from numpy.typing import NDArray

from ..tokens import as_token_counter, count_tokens
from ..validation import check_int
from ._changelog import DAYDATE, _sections, daydate
from ._columns import _check_items, _columns
from ._config import AnchorConfig
from ._crush import crush, largest_count
from ._keep import known_severity, query_matches, text_levels
from ._patterns import query_intents
from ._shapes import (  # noqa: F401 - MIN_RECORDS and wrapped_prose are read from here too
    _CHANGE_HEAD,
    MIN_RECORDS,
    ONELINE,
    _blocks,
    _headed,
    _line_records,
    _lines,
    _table,
    _undescribed,
    as_shown,
    oneline_commits,
    wrapped_prose,
)
from ._store import CrushStore, _crush_key, array_key, json_strings

__all__ = [
    "Records",
    "RecordsFit",
    "as_shown",
    "fit_records",
    "record_kind",
    "records_marker",
    "split_records",
    "wrapped_prose",
]

_ISO = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?")
_GITDATE = re.compile(r"^Date:\s+(\w{3} \w{3} \d{1,2} \d{2}:\d{2}:\d{2} \d{4}(?: [+-]\d{4})?)", re.M)
#: RFC 2822's dates: a Debian changelog entry's trailer (" -- Name <mail>  Thu, 01 Jun 2023 10:22:51
#: +0200"), a mail's Date: header.
_RFCDATE = re.compile(
    r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} "
    r"\d{2}:\d{2}(?::\d{2})?(?: [+-]\d{4}| [A-Z]{2,4})?"
)
#: The fewest tokens a budget for a tool's output may have (the MCP proxy, LangChain's tool-output
#: middleware): a marker and a little of the text must fit.
MIN_BUDGET = 64
#: Characters of a record its query matching reads (its start: the time, the level, the message).
_MATCH_CHARS = 300
_CONFIG = AnchorConfig()
#: At most this many crushes while searching for the record count.
_MAX_TRIES = 14
#: Room left after the whole records (or hunks), in tokens and as a share of the budget, from which
#: the first lines of one more are shown, cut at a line and marked so; it stays stored whole.
PART_MIN, PART_SHARE = 48, 0.15
#: The most tokens of one stored part of a record or a hunk: a longer one is stored in parts, so that
#: ``retrieve_dropped`` (1,000 tokens a page by default) can give it back.
PART_TOKENS = 400


@dataclass(frozen=True)
class Records:
    """A text cut into records: ``head`` (kept whole), the ``records`` (verbatim, each with its line
    ends, so ``head + "".join(records)`` is the text), their ``shape``, and per record its time
    rank (0 = oldest) and level (``"error"``, ``"critical"`` or ``""``)."""

    head: str
    records: list[str]
    shape: str
    rank: NDArray[np.int64]
    level: list[str]

    def __len__(self) -> int:
        return len(self.records)


@dataclass(frozen=True)
class RecordsFit:
    """What :func:`fit_records` returned: the text, its tokens, the kept positions, the store key."""

    text: str
    tokens: int
    kept: NDArray[np.int64]
    n: int
    key: str | None

    @property
    def dropped(self) -> int:
        """Records left out."""
        return self.n - len(self.kept)


def _iso(stamp: str) -> float:
    try:
        d = datetime.fromisoformat(stamp.replace(" ", "T", 1).replace("Z", "+00:00"))
    except ValueError:
        return float("nan")
    return d.timestamp() if d.tzinfo else d.replace(tzinfo=None).timestamp()


def _gitdate(stamp: str) -> float:
    for fmt in ("%a %b %d %H:%M:%S %Y %z", "%a %b %d %H:%M:%S %Y"):
        try:
            return datetime.strptime(stamp, fmt).timestamp()
        except ValueError:
            continue
    return float("nan")


def _rfcdate(stamp: str) -> float:
    try:
        d = parsedate_to_datetime(stamp)
    except (TypeError, ValueError, IndexError):
        return float("nan")
    return d.timestamp() if d.tzinfo else d.replace(tzinfo=None).timestamp()


def _owners(records: list[str]) -> tuple[str, NDArray[np.int64]]:
    """The records joined, and where each starts in that text (to give each match its record)."""
    lengths = np.fromiter(map(len, records), np.int64, len(records))
    return "".join(records), np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)


def _times(records: list[str]) -> NDArray[np.float64]:
    """Each record's first date (ISO, else ``git log``'s ``Date:`` line, else an RFC 2822 date: a
    Debian changelog's entries, else a day: an upstream changelog's headings) as a timestamp; NaN
    if none.  One pass of each pattern over the
    joined text, not one per record."""
    body, starts = _owners(records)
    t = np.full(len(records), np.nan)
    for pattern, parse in ((_ISO, _iso), (_GITDATE, _gitdate), (_RFCDATE, _rfcdate), (DAYDATE, daydate)):
        if pattern is _GITDATE and "Date:" not in body or pattern is _RFCDATE and ", " not in body:
            continue
        if not np.isnan(t).any():
            break
        found = list(pattern.finditer(body))
        if not found:
            continue
        owner = np.searchsorted(starts, [m.start() for m in found], side="right") - 1
        _, first = np.unique(owner, return_index=True)  # each record's first match
        first = first[np.isnan(t[owner[first]])]
        stamps = [found[j].group(found[j].lastindex or 0) for j in first.tolist()]
        t[owner[first]] = _parse_all(stamps, parse)
    return t


_OFFSET = re.compile(r"(?:Z|[+-]\d{2}:?\d{2})$")


def _parse_all(stamps: list[str], parse) -> NDArray[np.float64]:
    """Timestamps of ``stamps``: ISO ones at once with NumPy when they share one offset, else one by one."""
    if parse is _iso and stamps:
        if all(x.endswith("Z") for x in stamps):  # UTC throughout (most logs): no pattern per stamp
            offsets, bare = {"Z"}, [x[:-1].replace(" ", "T", 1) for x in stamps]
        else:
            offsets = {m.group(0) if m else "" for m in map(_OFFSET.search, stamps)}
            bare = [_OFFSET.sub("", x).replace(" ", "T", 1) for x in stamps]
        if len(offsets) == 1:  # one time zone: the order is the local times' order
            try:
                return np.array(bare, dtype="datetime64[us]").astype(np.int64).astype(np.float64) / 1e6
            except ValueError:
                pass
    return np.array([parse(x) for x in stamps], dtype=np.float64)


def _ranks(records: list[str], newest_first: bool) -> NDArray[np.int64]:
    """Each record's place in time, 0 the oldest: by its date when most have one, else by position
    (``newest_first``: the first record is the newest, as ``git log`` writes them)."""
    n = len(records)
    pos = np.arange(n, dtype=np.int64)
    t = _times(records)
    known = np.isfinite(t)
    if known.sum() >= max(2, 0.5 * n):
        idx = np.where(known, pos, 0)  # a record without a date takes its predecessor's
        np.maximum.accumulate(idx, out=idx)
        first = int(np.argmax(known))
        t = t[idx]
        t[:first] = t[first]
        if t[0] != t[-1]:
            newest_first = bool(t[0] > t[-1])
        order = np.lexsort((-pos if newest_first else pos, t))  # oldest first; ties by the writing order
        rank = np.empty(n, np.int64)
        rank[order] = pos
        return rank
    return pos[::-1].copy() if newest_first else pos


def _section_ranks(found) -> NDArray[np.int64]:
    """A changelog's releases (:func:`_sections`) by their place, newest first when their days say
    so (releases are written in order; older ones often have no day); a long preamble is the
    oldest: it is not news."""
    pos = np.arange(len(found.records), dtype=np.int64)
    rank = pos[::-1].copy() if found.newest_first else pos
    if found.preamble:
        rank = np.where(rank < rank[0], rank + 1, rank)
        rank[0] = 0
    return rank


#: A table's column that describes a thing (``dpkg -l``'s Description: "a fast memory error detector").
_DESCRIBING_COLUMN = re.compile(r"\b(?:Description|DESCRIPTION|Summary|SUMMARY|Comment|COMMENT)\b")


#: The lines of a commit that are about the commit, not what it changed (``git log``, its
#: ``--format=fuller``, and mcp-server-git's ``Commit:`` form).
_COMMIT_FIELD = re.compile(
    r"^(?:commit |(?:Commit|Merge|Author|Committer|AuthorDate|CommitDate|Date):)", re.M
)


_URGENCY = re.compile(r"\burgency=\S*")
#: Its trailer (Debian's `` -- Name <mail>  date`` line).
_CHANGE_TRAILER = re.compile(r"^ -- [^\n]*", re.M)


def _read(records: list[str], shape: str, head: str = "") -> list[str]:
    """What of each record is read for error words: ``key: value`` blocks without their describing
    fields (:func:`_undescribed`), a table's rows up to a describing column (where its name starts in
    the header's last line of names), of a commit its header lines and of a changelog's entry its
    first line and trailer (their messages say what changed: "Fix a crash in the parser" is not a
    crash; ``git log --oneline`` is read for none), the other shapes whole."""
    if shape == "headed":
        return ["".join(m.group(0) + line for m, line in _fields(r)) for r in records]
    if shape == "sections":  # a changelog's releases: what changed, not events
        return [""] * len(records)
    heads = [bool(_CHANGE_HEAD.match(r)) for r in records] if shape in ("lines", "table") else []
    if sum(heads) >= 2:  # a changelog: of each entry its first line and trailer; the rest are changes
        return [_change_entry(r) if h else "" for r, h in zip(records, heads, strict=True)]
    if shape == "lines":
        if oneline_commits(records):
            return ["" if ONELINE.match(r) else r for r in records]
        # a commit cut at its Date: line (a changelog written by git log without its commit lines)
        return [
            "".join(m.group(0) + line for m, line in _fields(r)) if _COMMIT_FIELD.match(r) else r
            for r in records
        ]
    if shape == "blocks":
        return [_undescribed(r) for r in records]
    if shape == "table" and (m := _DESCRIBING_COLUMN.search(head)):
        at = m.start() - (head.rfind("\n", 0, m.start()) + 1)  # its column in its line
        if at > 0:
            return [r[:at] for r in records]
    return records


def record_kind(records: Records) -> str:
    """What the records are, finer than their shape: ``"changelog"`` (two entries or more that open as a
    changelog's do), ``"commits"`` (``git log --oneline``), else the shape.  Two texts of one shape
    and two kinds (dpkg's log and a Debian changelog, both ``"lines"``) are not one text."""
    recs = records.records
    if records.shape in ("lines", "table") and sum(bool(_CHANGE_HEAD.match(r)) for r in recs) >= 2:
        return "changelog"
    if records.shape == "lines" and oneline_commits(recs):
        return "commits"
    return records.shape


def _change_entry(record: str) -> str:
    """Of a changelog's entry, its first line (without Debian's ``urgency=critical``: how soon to
    upload, not an error) and its trailer."""
    first = _URGENCY.sub("", record.split("\n", 1)[0])
    trailer = _CHANGE_TRAILER.search(record)
    return first + ("\n" + trailer.group(0) if trailer else "")


def _fields(record: str):
    """A commit's header lines: ``(match, rest of the line)`` for each line :data:`_COMMIT_FIELD` starts."""
    for m in _COMMIT_FIELD.finditer(record):
        end = record.find("\n", m.end())
        yield m, record[m.end() : len(record) if end < 0 else end + 1]


def _levels(records: list[str]) -> list[str]:
    """Each record's worst error word's level (``"critical"``, ``"error"`` or ``""``), one pass a pattern."""
    return text_levels(records)


def split_records(text: str, *, shape: str | None = None) -> Records | None:
    """``text`` as repeated records (see the module docs), or None when it does not read as records.

    Parameters
    ----------
    text : str
        A tool output.
    shape : {"headed", "sections", "table", "blocks", "lines"}, optional
        Take this shape only (default: the first that fits, in that order).

    Returns
    -------
    Records or None
        The head, the records (``head + "".join(records) == text``), the shape, each record's
        time rank (0 = oldest) and level.

    Examples
    --------
    >>> log = "".join(f"2026-01-0{1 + i % 9} 10:00 {'ERROR disk' if i == 3 else 'INFO ok'} {i}\\n" for i in range(8))
    >>> r = split_records(log)
    >>> r.shape, len(r), r.level[3], int(r.rank[-1])
    ('lines', 8, 'error', 7)
    >>> split_records("Just one sentence of prose.") is None
    True
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str (a tool output); got {type(text).__name__}.")
    lines = _lines(text)
    finders: dict[str, Callable[[], tuple | None]] = {
        "headed": lambda: _headed(lines),
        "sections": lambda: _sections(text, lines),
        "table": lambda: _table(lines),
        "blocks": lambda: _blocks(text),
        "lines": lambda: _line_records(lines),
    }
    if shape is not None and shape not in finders:
        raise ValueError(f"shape must be one of {sorted(finders)} or None; got {shape!r}.")
    for name, find in finders.items():
        if shape is not None and name != shape:
            continue
        got = find()
        if got is None:
            continue
        head, recs = got[:2]
        if head + "".join(recs) != text:  # never lose a character
            continue
        newest_first = name == "headed" or (name == "lines" and oneline_commits(recs))  # as git writes them
        rank = _section_ranks(got) if name == "sections" else _ranks(recs, newest_first=newest_first)
        return Records(head, recs, name, rank, _levels(_read(recs, name, head)))
    return None


#: What stands between two pieces of a line that were not side by side (the marker counts them).
GAP = " […] "


def _joined(shown: list[tuple[int, str]], shape: str) -> str:
    """The shown records in order; pieces of one line cut apart (``"chunks"``) with :data:`GAP`
    where others were left out between them, so no two read as one."""
    if shape != "chunks":
        return "".join(r for _, r in shown)
    out: list[str] = []
    for k, (i, r) in enumerate(shown):
        if k and i != shown[k - 1][0] + 1 and not out[-1].endswith("\n"):
            out.append(GAP)
        out.append(r)
    return "".join(out)


def chunk_records(text: str, chars: int = 400) -> Records:
    """The last resort for a text that reads as neither records nor prose: its lines, or pieces of
    about ``chars`` characters cut at a space, as records in place order.

    Examples
    --------
    >>> r = chunk_records("x" * 1000, chars=400)
    >>> [len(p) for p in r.records], r.shape
    ([400, 400, 200], 'chunks')
    """
    lines = _lines(text)
    if len(lines) >= MIN_RECORDS:
        recs = lines
    else:
        recs = []
        for ln in lines:
            while len(ln) > chars:
                cut = ln.rfind(" ", chars // 2, chars) + 1 or chars
                recs.append(ln[:cut])
                ln = ln[cut:]
            if ln:
                recs.append(ln)
    return Records("", recs, "chunks", np.arange(len(recs), dtype=np.int64), _levels(recs))


def _ranges(positions: NDArray[np.int64]) -> list[tuple[int, int]]:
    if positions.size == 0:
        return []
    cut = np.flatnonzero(np.diff(positions) != 1) + 1
    return [(int(r[0]), int(r[-1])) for r in np.split(positions, cut)]


def records_marker(
    n: int,
    kept: Sequence[int],
    key: str | None,
    *,
    what: str = "records",
    ranges: bool = True,
    part_of: NDArray[np.int64] | None = None,
    errors: int = 0,
    tool: str | None = "retrieve_dropped",
) -> str:
    """The one line that says what was left out of ``n`` records and how to get it back: with the
    ``tool`` that gives it back (an MCP server's), or (``tool=None``) the store key alone.

    With ``part_of`` (the record each stored part is of, when some record is stored in parts) the
    positions are the stored parts' (those ``retrieve_dropped``'s ``start`` and ``stop`` take);
    ``errors`` says how many of the records left out hold an error word, so the reader knows one
    is worth getting back.

    Examples
    --------
    >>> records_marker(10, [0, 9], "0123456789abcdef")
    '[scwo: 8 of 10 records left out (positions 1-8); retrieve_dropped with key "0123456789abcdef" gives them back]'
    >>> records_marker(10, [0, 9], None, ranges=False)
    '[scwo: 8 of 10 records left out]'
    >>> records_marker(3, [0], "0123456789abcdef", part_of=np.array([0, 1, 1, 1, 2]))
    '[scwo: 2 of 3 records left out, stored as 4 parts (positions 1-4); retrieve_dropped with key "0123456789abcdef" gives them back]'
    >>> records_marker(10, [9], None, errors=1)
    '[scwo: 9 of 10 records left out, 1 of them an error (positions 0-8)]'
    >>> records_marker(10, [0, 9], "0123456789abcdef", tool=None)
    '[scwo: 8 of 10 records left out (positions 1-8); stored under key "0123456789abcdef"]'
    """
    mask = np.ones(n, dtype=bool)
    mask[np.asarray(kept, dtype=np.int64)] = False
    dropped = np.flatnonzero(mask)
    text = f"[scwo: {dropped.size} of {n} {what} left out"
    if errors:
        text += f", {errors} of them {'an error' if errors == 1 else 'errors'}"
    if part_of is not None and part_of.size > n:
        stored = np.flatnonzero(mask[part_of])
        if stored.size > dropped.size:
            text += f", stored as {stored.size} parts"
        dropped = stored
    if ranges and dropped.size:
        runs = ", ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in _ranges(dropped))
        text += f" (positions {runs})"
    if key is not None:
        text += gives_back(key, tool)
    return text + "]"


def gives_back(key: str, tool: str | None) -> str:
    """A marker's last clause: the ``tool`` that gives back what is stored under ``key``, or the key."""
    return f'; {tool} with key "{key}" gives them back' if tool else f'; stored under key "{key}"'


def _split_lines(text: str, counter) -> list[str]:
    """``text`` in pieces of at most :data:`PART_TOKENS` tokens, cut at line ends (a line that
    long alone cut by characters); one piece when it is that short."""
    if int(count_tokens([text], counter)[0]) <= PART_TOKENS:
        return [text]
    cap = PART_TOKENS * 3  # characters: a token is at least about three characters by every counter here
    pieces = [p for x in _lines(text) for p in _at_spaces(x, cap)]
    groups: list[list[str]] = [[]]
    room = PART_TOKENS
    for piece, c in zip(pieces, count_tokens(pieces, counter).tolist(), strict=True):
        if groups[-1] and c > room:
            groups.append([])
            room = PART_TOKENS
        groups[-1].append(piece)
        room -= c
    return ["".join(g) for g in groups]


def _at_spaces(line: str, cap: int) -> list[str]:
    """``line`` in pieces of at most ``cap`` characters, each cut after a space where one is in its
    second half (a word is not split across two stored parts), else at ``cap``."""
    out: list[str] = []
    while len(line) > cap:
        cut = line.rfind(" ", cap // 2, cap) + 1 or cap
        out.append(line[:cut])
        line = line[cut:]
    return [*out, line] if line or not out else out


def _record_parts(records: Sequence[str], costs, counter) -> tuple[list[str], NDArray[np.int64]]:
    """What the store keeps, and the record each stored part is of: a record of more than
    :data:`PART_TOKENS` tokens in parts cut at line ends, each after the first headed by a note."""
    out: list[str] = []
    of: list[int] = []
    for i, (record, c) in enumerate(zip(records, costs.tolist(), strict=True)):
        pieces = [record] if c <= PART_TOKENS else _split_lines(record, counter)
        for k, piece in enumerate(pieces):
            out.append((f"[scwo: part {k + 1} of {len(pieces)} of record {i}]\n" if k else "") + piece)
            of.append(i)
    return out, np.asarray(of, dtype=np.int64)


def _part(
    idx, text, t, budget, recs, shown, costs, render, *, stored: bool, tool: str | None
) -> tuple[str, int]:
    """The room the whole records left, when it is at least :data:`PART_MIN` tokens and
    :data:`PART_SHARE` of the budget: the first lines of the newest record left out that could not
    fit whole, cut at a line (and, with room left, the next line cut at a character), with a note
    (which sends the reader to ``retrieve_dropped`` when the records are ``stored``); the record is
    still left out (and stored) whole.  Else the text as it was."""
    if budget - t < max(PART_MIN, PART_SHARE * budget):
        return text, t
    kept = set(idx.tolist())
    left = [
        i for i in np.argsort(-recs.rank, kind="stable").tolist() if i not in kept and costs[i] > budget - t
    ]
    if not left:
        return text, t
    i = left[0]
    lines = _lines(shown[i].rstrip())  # (its blank lines at the end not counted)
    back = (f"; {tool} gives it back in full" if tool else "; stored in full") if stored else ""

    def shown(k: int, chars: int = 0) -> tuple[str, int]:
        """Record ``i``'s first ``k`` lines and ``chars`` characters of the next, with the note."""
        first = "".join(lines[:k]) + (lines[k][:chars] if chars else "")
        if not first.endswith("\n"):
            first += "\n"
        cut = f"{k} of {len(lines)} lines" + (f" and {chars} characters of the next" if chars else "")
        return render(idx, (i, first + f"[scwo: record {i} cut after {cut}{back}]\n"))

    lo, hi, best = 0, len(lines), (text, t)  # the most whole lines that fit (never all of them)
    while hi - lo > 1:
        k = (lo + hi) // 2
        got = shown(k)
        if got[1] <= budget:
            lo, best = k, got
        else:
            hi = k
    if lo < len(lines) and budget - best[1] >= PART_MIN // 2:  # room for the start of the next line
        c_lo, c_hi = 0, len(lines[lo])
        while c_hi - c_lo > 1:
            c = (c_lo + c_hi) // 2
            got = shown(lo, c)
            if got[1] <= budget:
                c_lo, best = c, got
            else:
                c_hi = c
    return best


def _fill(idx, text, t, budget, rank, costs, render, same, tries: int = 24):
    """The room the crush left (its sizes are searched, not its tokens): the newest dropped records that
    still fit and are no copy of a kept one (``same``: equal for copies), added one by one, newest
    first, while they do (at most ``tries`` renders)."""
    kept = set(idx.tolist())
    copies = set(same[idx].tolist())
    for i in np.argsort(-rank, kind="stable").tolist():
        if tries <= 0 or budget - t < 2:
            break
        if i in kept or costs[i] > budget - t or int(same[i]) in copies:
            continue
        tries -= 1
        cand = np.sort(np.asarray([*kept, i], dtype=np.int64))
        text2, t2 = render(cand)
        if t2 <= budget:
            kept.add(i)
            copies.add(int(same[i]))
            idx, text, t = cand, text2, t2
    return text, t, idx


def fit_records(
    recs: Records,
    budget: int,
    *,
    token_counter: object = None,
    store: CrushStore | None = None,
    query: str = "",
    what: str = "records",
    tool: str | None = "retrieve_dropped",
) -> RecordsFit:
    """``recs`` within ``budget`` tokens: the head, the records a crush of records in time order
    keeps (errors, the newest, a spread), verbatim and in order, and the marker line; in the room
    left, the first lines of the newest record too long to keep whole, marked as cut.

    The largest number of records whose text fits is searched from the records' own token
    counts (a few crushes); the marker lists the dropped positions when it fits with them, else
    only their count.  With ``store`` the records are stored (each as a JSON string) under the
    marker's key, with the positions kept, so that retrieval gives back exactly the dropped ones.

    Parameters
    ----------
    recs : Records
        From :func:`split_records` (or :func:`chunk_records`).
    budget : int
        The most tokens of the returned text, marker included.
    token_counter : name, TokenCounter or callable, optional
        Counts ``budget`` (default ``"estimate"``).
    store : CrushStore, optional
        Where the records go, for retrieval.
    query : str
        Records matching its terms are kept first.
    what : str
        What the marker calls the records.
    tool : str or None
        The tool the marker says gives back what was left out (an MCP server's); None: the
        marker gives the store key alone.

    Returns
    -------
    RecordsFit
        The text, its tokens, the kept positions, the number of records and the key.

    Raises
    ------
    ValueError
        When not even the head and the shortest marker fit ``budget``.

    Examples
    --------
    >>> log = "".join(f"2026-01-01 10:{i // 60:02d}:{i % 60:02d} {'ERROR disk full' if i == 40 else 'INFO ok'} {i}\\n"
    ...               for i in range(300))
    >>> fit = fit_records(split_records(log), 120)
    >>> fit.tokens <= 120, "ERROR disk full" in fit.text, "10:04:59 INFO ok 299" in fit.text, fit.dropped > 250
    (True, True, True, True)
    """
    budget = check_int(budget, name="budget", low=1)
    counter = as_token_counter(token_counter)

    def count(text: str) -> int:
        return int(count_tokens([text], counter)[0])

    n = len(recs.records)
    # Shown as a terminal shows them (a progress line's last state), stored verbatim.
    shown = [as_shown(r) for r in recs.records]
    costs = count_tokens(shown, counter)
    whole = costs if shown == recs.records else count_tokens(recs.records, counter)
    parts, part_of = _record_parts(recs.records, whole, counter)
    pieces = json_strings(parts)
    akey = array_key(pieces) if store is not None else None
    # (a block's describing fields, such as a package's Description, are matched against the query but
    # not read for error words: the crush reads a field named "description" so, :data:`_DESCRIBES`)
    read = _read(shown, recs.shape, recs.head)
    items = [
        {"seq": int(r), "level": lv, "text": t.strip()[:_MATCH_CHARS]}
        | ({"description": full.strip()[:_MATCH_CHARS]} if t is not full else {})
        for r, lv, t, full in zip(recs.rank, recs.level, read, shown, strict=True)
    ]
    # Records that read the same are copies (dpkg's "debconf: unable to initialize frontend: Dialog",
    # once per package): the crush keeps one of them, as it keeps one of identical JSON items.
    # (codes by first appearance through a dict: np.unique made one array as wide as the longest
    # record, 8 GiB for pip inspect's 15,000 lines of which one is 143,144 characters)
    codes: dict[str, int] = {}
    same = np.fromiter(
        (codes.setdefault(x.strip(), len(codes)) for x in shown), dtype=np.int64, count=len(shown)
    )
    frame = count(recs.head)
    # A record longer than the room the budget leaves can never be kept whole: the crushes choose
    # among the others (else a huge newest record, which every crush keeps, left the text empty
    # but for the few records the fill adds).
    fits = np.flatnonzero(costs <= budget - frame)
    cols = _columns(_check_items([items[i] for i in fits.tolist()])) if fits.size else None
    if (
        query
        and cols is not None
        and not query_intents(query)
        and not query_matches(cols, query, _CONFIG).any()
    ):
        query = ""  # nothing matches it: the crushes need not look for it again
    erring = np.fromiter((lv != "" for lv in recs.level), dtype=bool, count=n)  # records with an error word

    def render(
        idx: NDArray[np.int64], part: tuple[int, str] | None = None, forms: tuple[bool, ...] = (True, False)
    ) -> tuple[str, int]:
        """The head, the records ``idx`` and ``part`` (record ``i``'s first lines, with their
        note) in order, and the marker (listing the positions left out, or with ``False`` among
        ``forms`` only their count when the list does not fit)."""
        picked = [(i, shown[i]) for i in idx.tolist()]
        if part is not None:
            picked = sorted([*picked, part])
        body = recs.head + _joined(picked, recs.shape)
        if idx.size == n:
            return body, count(body)
        key = _crush_key(akey, np.flatnonzero(np.isin(part_of, idx))) if akey is not None else None
        sep = "" if not body or body.endswith("\n") else "\n"
        text = ""
        for ranges in forms:
            text = (
                body
                + sep
                + records_marker(
                    n,
                    idx,
                    key,
                    what=what,
                    ranges=ranges,
                    part_of=part_of if akey is not None else None,
                    # (a copy of a kept record is not an error left out: its words are in the text)
                    errors=int(np.count_nonzero(erring & ~np.isin(same, same[idx]))),
                    tool=tool,
                )  # fmt: skip
            )
            t = count(text)
            if t <= budget:
                break
        return text, t

    def planner(fits: NDArray[np.int64], cols) -> Callable[[int], tuple[str, int, NDArray[np.int64]]]:
        """The search over the crushes of the records ``fits`` (their columns ``cols``)."""
        m = int(fits.size)
        if cols is not None:  # the records' levels are their severity (read once, whole, by split_records)
            cols = known_severity(
                dataclasses.replace(cols, item_code=same[fits]), [recs.level[i] for i in fits]
            )
        tried: dict[int, tuple[str, int, NDArray[np.int64]]] = {}

        def attempt(k: int) -> tuple[str, int, NDArray[np.int64]]:
            if k not in tried:
                if k <= 0:
                    idx = np.empty(0, np.int64)
                elif k >= m:
                    idx = fits.astype(np.int64)
                else:
                    idx = fits[np.asarray(crush(cols, k, query=query or "", pattern="logs"), dtype=np.int64)]
                text, t = render(idx)
                tried[k] = (text, t, idx)
            return tried[k]

        def search(limit: int) -> tuple[str, int, NDArray[np.int64]]:
            """The most records the crush keeps within ``limit`` tokens (a few crushes), then the fill."""
            mean = float(costs[fits].mean()) if m else 1.0
            k = int(np.clip((limit - frame - 40) // max(mean, 1.0), 0, m))
            lo = largest_count(attempt, k, m, limit, costs, mean, tried, _MAX_TRIES)
            for extra in (1, 2, 3):  # the crush keeps other records at other sizes: a few more may fit
                if 0 <= lo < m and lo + extra <= m and attempt(lo + extra)[1] <= limit:
                    lo += extra
            text, t, idx = attempt(max(lo, 0))
            if t > limit:
                return text, t, idx
            best = _fill(idx, text, t, limit, recs.rank, costs, render, same)
            if lo >= 1:  # one pick fewer, the room filled, may show more (its picks being cheaper)
                f_text, f_t, f_idx = attempt(lo - 1)
                fewer = _fill(f_idx, f_text, f_t, limit, recs.rank, costs, render, same)
                must = best[2][erring[best[2]] | (best[2] == newest)]
                if fewer[1] <= limit and fewer[2].size > best[2].size and np.isin(must, fewer[2]).all():
                    best = fewer
            return best

        return search

    def fit(search) -> tuple[str, int, NDArray[np.int64]]:
        got = search(budget - reserve) if reserve else None
        return got if got is not None and got[1] <= budget - reserve else search(budget)

    # The newest record too long to keep whole still opens the text's end: room for its first lines
    # is kept before the others are chosen (else older records filled the budget: apt's history.log,
    # its newest transaction of 326 tokens, showed the one of six weeks before at 200 to 300 tokens).
    newest = int(np.argmax(recs.rank)) if n else -1
    # (too long whole: beside the head and the marker, which names the store's key)
    alone = render(np.empty(0, np.int64))[1] if n else 0
    reserve = int(max(PART_MIN, PART_SHARE * budget)) if n and costs[newest] > budget - alone else 0
    text, t, idx = fit(planner(fits, cols))
    # A record that takes most of the room makes the crushes that keep it overrun, and the search
    # settle on fewer records: apt's history.log showed 6 at 1,200 tokens and 5 at 1,500, where a
    # record of 1,484 tokens became one to choose from.  Without the records over half the room (but
    # the newest and the errors), the fit is kept when it shows more records, and every error record
    # and the newest one kept before.
    small = fits[(costs[fits] <= (budget - frame) / 2) | (fits == newest) | erring[fits]]
    if t <= budget and 0 < small.size < fits.size:
        alt = fit(planner(small, _columns(_check_items([items[i] for i in small.tolist()]))))
        must = idx[erring[idx] | (idx == newest)]
        if alt[1] <= budget and alt[2].size > idx.size and np.isin(must, alt[2]).all():
            text, t, idx = alt
    if t > budget:
        raise ValueError(
            f"budget={budget} is too small for these {n} {what}: the text before them and a marker saying that "
            f"they were left out take {t} tokens; give budget >= {t}."
        )
    # (the first lines of a record never take the room of the positions the marker lists)
    forms = (True,) if "(positions " in text.rstrip("\n").rsplit("\n", 1)[-1] else (True, False)
    text, t = _part(
        idx, text, t, budget, recs, shown, costs, lambda i, p: render(i, p, forms), stored=store is not None,
        tool=tool,
    )  # fmt: skip
    key = None
    if store is not None and idx.size < n:
        key = store.put(pieces, kept=np.flatnonzero(np.isin(part_of, idx)))
    return RecordsFit(text, t, idx, n, key)
