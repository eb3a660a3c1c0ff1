"""Changelogs and NEWS files as records: a release a record, from each heading to the next.

:func:`_sections` finds the releases' headings, by a day (``Changes for v2.0.0 (2022-01-03)``) or,
when few headings hold one, by a version under a heading's common words (``Overview of changes in
GLib 2.74.6``, ``Version 10.42 11-December-2022``), and says whether the newest comes first.
:func:`scwo_np.anchor._records.split_records` tries them after ``git log`` entries and before
tables; their text is not read for error words (it says what changed).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import NamedTuple

import numpy as np

from ._shapes import _CHANGE_HEAD, MIN_RECORDS

__all__ = ["DAYDATE", "FIRST_HEADING", "HEADING_CHARS", "Sections", "daydate"]

#: A day without a time: ``2020-06-01``, ``18 January 2023``, ``May 02 2022``, ``March 5, 2021``
#: (the headings of upstream changelogs and NEWS files).
_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]{0,6}\.?"
DAYDATE = re.compile(
    rf"\b(?:\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}} {_MONTH} \d{{4}}|{_MONTH} \d{{1,2}},? \d{{4}})\b"
)


def daydate(stamp: str) -> float:
    """A :data:`DAYDATE` day's timestamp (its midnight, local time); NaN when it is no day."""
    text = stamp.replace(",", "").replace(".", "")
    for fmt in ("%Y-%m-%d", "%d %B %Y", "%d %b %Y", "%B %d %Y", "%b %d %Y"):
        try:
            return datetime.strptime(text, fmt).timestamp()
        except ValueError:
            continue
    return float("nan")


#: A time of day: a line that has one is an event's (a log's), not a release's heading.
_CLOCK = re.compile(r"\b\d{1,2}:\d{2}\b")
#: A line that underlines or overlines a heading (reST, Markdown's setext): ``=====``, ``-----``.
_RULE_LINE = re.compile(r"^[ \t]*([=\-~^*+#_])\1{2,}[ \t]*\r?$")
#: The longest line that may be a release's heading.
HEADING_CHARS = 100
#: A changelog's first heading is within its first characters (a title, a few notes).
FIRST_HEADING = 3000


def _day_heads(text: str, lines: list[str], limit: int) -> tuple[list[int], int] | None:
    """The headings found by their days (see :func:`_sections`), and their order (1 oldest first,
    -1 newest first); None when fewer than three days in one order head the text's sections."""
    # (only the first characters: the pattern costs 3 ms over 100 KB, which logs and prose would pay)
    found = DAYDATE.search(text, 0, FIRST_HEADING)
    if found is None:
        return None
    starts = np.cumsum([0, *map(len, lines)])
    heads: list[int] = []
    clocks = 0
    for m in DAYDATE.finditer(text, found.start()):
        i = int(np.searchsorted(starts, m.start(), side="right")) - 1
        if heads and heads[-1] == i:
            continue
        if _CLOCK.search(lines[i]):  # an event's stamp (a release's build time, once each, is not)
            clocks += 1
            if clocks > len(heads) + 2:  # a log
                return None
        elif len(lines[i].strip()) <= HEADING_CHARS:
            heads.append(i)
            if len(heads) > limit:
                return None
    days = [DAYDATE.search(lines[i]).group(0) for i in heads]
    order = _one_order([daydate(d) for d in days]) if len(heads) >= 3 else 0
    if not order:
        return None
    if days[0] == days[1] and sum(bool(ln.strip()) for ln in lines[heads[0] : heads[1]]) <= 3:
        heads = heads[1:]  # a title dated as the newest release ("GNU tar NEWS ... 2021-02-13")
    marks = {_MARKS.match(lines[i]).group(0) for i in heads}
    if len(marks) == 1 and (mark := marks.pop()).strip():  # the undated headings marked as the dated ones
        dated = set(heads)
        heads = [
            i
            for i, ln in enumerate(lines)
            if i in dated
            or (
                ln.startswith(mark)
                and _VERSION.search(ln)
                and _MARKS.match(ln).end() == len(mark)
                and len(ln.strip()) <= HEADING_CHARS
                and not _CLOCK.search(ln)
            )
        ]
    return heads, order


#: A release's version in its heading, and the words before it that every heading of a file shares
#: (``Overview of changes in GLib ``, ``Version ``, ``CHANGES FROM ``).
_RELEASE = re.compile(r"^(\D{0,40}?)\bv?(\d+(?:\.\d+)+)[a-z]?\b", re.I)


def _version_heads(text: str, lines: list[str], limit: int) -> tuple[list[int], int] | None:
    """The headings found by their versions, when few have a day (GLib's NEWS: ``Overview of changes
    in GLib 2.74.6`` over a rule): short lines, not indented nor bullets, that stand apart (a blank
    line or a rule above or below), start with the same two words before their version, the first
    within the text's first :data:`FIRST_HEADING` characters and their versions going down (newest
    first: a document's numbered sections go up); None when none."""
    found: dict[str, list[tuple[int, tuple[int, ...]]]] = {}
    for i, ln in enumerate(lines):
        if len(ln) > HEADING_CHARS + 1 or ln[:1] in " \t\r\n" or ln[:2] in ("- ", "* ", "+ "):
            continue  # long, indented, a bullet ("- GCC 4.9 is the default compiler for Ada.") or blank
        m = _RELEASE.match(ln)
        if m is None or _CLOCK.search(ln):
            continue
        apart = (i == 0 or not lines[i - 1].strip() or _RULE_LINE.match(lines[i - 1])) or (
            i + 1 < len(lines) and (not lines[i + 1].strip() or _RULE_LINE.match(lines[i + 1]))
        )
        if apart:
            version = tuple(int(x) for x in m.group(2).split("."))
            key = " ".join(m.group(1).lower().split()[:2])  # ("Overview of changes in/from GLib")
            found.setdefault(key, []).append((i, version))
    best = max(found.values(), key=len, default=[])
    if not MIN_RECORDS <= len(best) <= limit or sum(map(len, lines[: best[0][0]])) > FIRST_HEADING:
        return None
    # newest first, as release notes are written: numbered sections (``4.1. How do I ...``) ascend
    return ([i for i, _ in best], -1) if _one_order([float(_rank(v)) for _, v in best]) < 0 else None


def _rank(version: tuple[int, ...]) -> int:
    """A version as one number that orders versions (four parts of up to 999)."""
    parts = (*version[:4], 0, 0, 0, 0)[:4]
    return sum(min(p, 999) * 1000 ** (3 - k) for k, p in enumerate(parts))


class Sections(NamedTuple):
    """A changelog's releases (:func:`_sections`): the head, the records, whether the newest comes
    first, and whether the first record is the text before the first release (a preamble)."""

    head: str
    records: list[str]
    newest_first: bool
    preamble: bool


def _sections(text: str, lines: list[str]) -> Sections | None:
    """A changelog or NEWS file cut at its releases' headings: short lines holding a day and no time
    of day (``Changes for v2.0.0 (2022-01-03)``, ``## [1.4.1] - 2022-12-12``, ``11 September
    2022``), their days in one order, the first within the text's first :data:`FIRST_HEADING`
    characters, and the lines that start with the same marks as those (``* ``, ``## [``) and hold a
    version (``* Changes in Wget 1.20.3``: older releases are often undated); else, by their
    versions (:func:`_version_heads`: GLib's ``Overview of changes in GLib 2.74.6``); at least
    :data:`MIN_RECORDS` headings, at most one line in three, most of them with text under them.  A
    first heading dated as the next, with three lines or fewer, is a title (``GNU tar NEWS - User
    visible changes. 2021-02-13``).  A heading's title and underline above its day's line
    (``What's New in Python 3.11.2?``, ``=====``, then ``*Release date: ...*``) start its section;
    the text before the first is the head when it is three lines or fewer, else a record.  Debian's
    and GNU's changelogs are left to the line records, an entry a record.

    Read a line at a time, each bullet of a release was a record of its own, the undated bullets
    ranked by their place: the oldest release's were taken for the newest (argcomplete's
    changelog kept 1.x and 0.x entries at 400 tokens, not 2.0.0's)."""
    limit = len(lines) // 3
    for find in (_day_heads, _version_heads):
        got = find(text, lines, limit)
        if got is not None and got[1] and MIN_RECORDS <= len(got[0]) <= limit:
            heads, order = got
            break
    else:
        return None
    if _CHANGE_HEAD.match(lines[heads[0]]):  # Debian's and GNU's changelogs: an entry a line record
        return None
    sizes = [
        sum(bool(ln.strip()) for ln in lines[a:b])
        for a, b in zip(heads, [*heads[1:], len(lines)], strict=True)
    ]
    if sorted(sizes)[len(sizes) // 2] < 2:  # headings without text: a table of versions (xz's file format)
        return None
    cuts = [
        _title_above(lines, i, lo) for i, lo in zip(heads, [0, *[h + 1 for h in heads[:-1]]], strict=True)
    ]
    bounds = [*cuts, len(lines)]
    recs = ["".join(lines[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]
    head = "".join(lines[: cuts[0]])
    if sum(bool(x.strip()) for x in lines[: cuts[0]]) > 3:
        return Sections("", [head, *recs], order < 0, True)
    return Sections(head, recs, order < 0, False)


#: The marks a line starts with (``* ``, ``## [``, ``- ``), and a version (``1.20.3``, ``v2.0``).
_MARKS = re.compile(r"[ \t]*[^\w\s]*[ \t]*")
_VERSION = re.compile(r"\b[vV]?\d+\.\d+\b")


def _one_order(values: list[float]) -> int:
    """1 when nine in ten of the steps between successive values (days, versions; NaN skipped) go
    forward, -1 when they go back (newest first), else 0."""
    stamps = np.array(values, dtype=np.float64)
    stamps = stamps[np.isfinite(stamps)]
    steps = np.diff(stamps)
    if steps.size < 2 or stamps[0] == stamps[-1]:
        return 0
    if (steps <= 0).sum() >= 0.9 * steps.size:
        return -1
    return 1 if (steps >= 0).sum() >= 0.9 * steps.size else 0


def _title_above(lines: list[str], i: int, lo: int) -> int:
    """Where the section whose day is on line ``i`` starts: at its title when a rule under it, and
    blank lines, stand between them (not above line ``lo``)."""
    k = i - 1
    while k >= lo and not lines[k].strip():
        k -= 1
    if (
        k - 1 >= lo
        and _RULE_LINE.match(lines[k])
        and lines[k - 1].strip()
        and not _RULE_LINE.match(lines[k - 1])
    ):
        return k - 1
    return i
