"""The shapes of repeated records as text, found line by line: the cutters of :mod:`._records`.

:func:`scwo_np.anchor._records.split_records` tries them in this order: ``git log`` entries
(:func:`_headed`), table rows under their header (:func:`_table`, :func:`_aligned`),
blank-line-separated ``key: value`` blocks (:func:`_blocks`; a line indented under a field
continues it), and log lines (:func:`_line_records`).  Lines end at line feeds only
(:func:`_lines`); :func:`as_shown` gives a record as a terminal shows it, and
:func:`wrapped_prose` tells hard-wrapped prose from records.
"""

from __future__ import annotations

import csv
import io
import re

import numpy as np

from ..text import STOPWORDS
from ._keep import _DESCRIBES

__all__ = ["MIN_RECORDS", "ONELINE", "as_shown", "oneline_commits", "wrapped_prose"]

_HEAD = re.compile(r"^(?:commit [0-9a-f]{7,64}\b|Commit: ?[0-9a-f]{7,64}\b)")
_STAMP = re.compile(
    r"^\s*(?:\[?\d{4}-\d{2}-\d{2}|\[?\d{2}:\d{2}:\d{2}|\[?\w{3} +\d{1,2} \d{2}:\d{2}|\[?\d{10}|"
    r"\[?(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|CRITICAL|FATAL)\b|"
    # a program's name, then a date and a time (update-alternatives' log: "update-alternatives
    # 2025-06-24 14:36:53: run with ...", read as pieces before)
    r"[\w.-]{1,40}:? \[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|"
    # a web server's access log (the Common and Combined Log Formats): host ident user [30/Nov/2026:10:00:00
    r"\S+ \S+ \S+ \[\d{2}/\w{3}/\d{4}:\d{2}:\d{2}|"
    # Apache's error log and ctime stamps in brackets: [Mon Nov 30 10:00:00.123456 2026]
    r"\[\w{3} \w{3} +\d{1,2} \d{2}:\d{2})",
    re.I,
)
_BLANK_NEXT = re.compile(r"\n(?=[ \t]*\n)")
_KV = re.compile(r"^\s*[\w .\-/]{1,40}:(?:\s|$)")
#: Records needed for a text to count as records at all.
MIN_RECORDS = 5


def _lines(text: str) -> list[str]:
    """The lines of ``text``, each with its end, cut at line feeds only: a carriage return alone
    (a progress line a program rewrote, ``(Reading database ... 5%\r...``) stays inside its line
    (``str.splitlines`` cut there, and at form feeds and other separators, too)."""
    parts = text.split("\n")
    out = [x + "\n" for x in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def _line_texts(text: str) -> list[str]:
    """The lines of ``text`` without their ends (``\n``, ``\r\n``), cut at line feeds only: a
    form feed inside a diff's line (the GPL's page breaks) is that line's, as ``diff`` counts it."""
    return [x.removesuffix("\n").removesuffix("\r") for x in _lines(text)]


#: A line's text up to its last carriage return that does not end the line (``\r\n``, ``\r\r\n``
#: and a carriage return before the end of the text do not).
_OVERWRITTEN = re.compile(r"[^\n]*\r(?!\r*\n|\r*$)")


def as_shown(record: str) -> str:
    r"""``record`` as a terminal shows it: of a line a program rewrote after carriage returns
    (progress), its last state.

    Examples
    --------
    >>> as_shown("(Reading database ... \r(Reading database ... 5%\r(Reading database ... 10 files.)\n")
    '(Reading database ... 10 files.)\n'
    >>> as_shown("a Windows line\r\n"), as_shown("Created symlink x.timer.\r\r\n")
    ('a Windows line\r\n', 'Created symlink x.timer.\r\r\n')
    """
    return _OVERWRITTEN.sub("", record) if "\r" in record else record


def _headed(lines: list[str]) -> tuple[str, list[str]] | None:
    starts = [i for i, ln in enumerate(lines) if _HEAD.match(ln)]
    if len(starts) < MIN_RECORDS:
        return None
    bounds = [*starts, len(lines)]
    return "".join(lines[: starts[0]]), [
        "".join(lines[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)
    ]


def _table(lines: list[str]) -> tuple[str, list[str]] | None:
    body = [ln for ln in lines if ln.strip()]
    if len(body) < MIN_RECORDS + 1 or _STAMP.match(body[0]):  # a log's first line is no header
        return None
    first = body[0]
    for delim in ("\t", "|", ","):
        if delim not in first:
            continue
        width = _fields(first, delim)
        if width < 2:
            continue
        if (
            not _mostly(body[1:], lambda ln, d=delim, w=width: _fields(ln, d) == w, 0.9)
            and not (
                delim != "|"
                and width >= 3
                and _names(first, delim)  # rows whose last fields are empty and
                and _mostly(body[1:], lambda ln, d=delim, w=width: 2 <= _fields(ln, d) <= w, 0.9)  # left out
            )
        ):  # (distro-info's CSVs: 4 to 8 fields under 8 names)
            continue
        at = lines.index(first) + 1
        if delim == "|" and at < len(lines) and re.match(r"^\s*\|?[\s:|-]+\|?\s*$", lines[at]):
            at += 1  # a Markdown table's rule belongs to its header
        return "".join(lines[:at]), _glue_blank(lines[at:])
    return _aligned(lines, body)


def _aligned(lines: list[str], body: list[str]) -> tuple[str, list[str]] | None:
    """A table in columns of spaces under a header of column names (``ps aux``, ``df``, ``lsof``,
    ``docker ps``): its header is the head, and each row a record. The header: three names or more,
    six in ten of them capitalised (``USER PID %CPU``, ``Filesystem Size Used``); the rows: nine in
    ten have as many fields, less one (a header's "Mounted on"; less two with six names or more: an
    empty column), and their first columns are data:
    four in ten of those fields hold a digit or a symbol. Its last column may hold spaces (a
    command line), so its rows can be long: read as prose, a row's pieces were joined with others'."""
    if (ruled := _legend_table(lines)) is not None:
        return ruled
    names = body[0].split()
    if len(names) < 2 or _KV.match(body[0]):  # a "key: value" line is no header (apt's EIPP log's Request:)
        return None
    at = lines.index(body[0]) + 1
    if at < len(lines) and _RULE.match(lines[at]):  # names over a rule of dashes (pip list, docker): a table
        return "".join(lines[: at + 1]), _glue_blank(lines[at + 1 :], indented=False)
    if len(names) < 3 or sum(n[0].isupper() or n[0] == "%" for n in names) < 0.6 * len(names):
        return None
    least = len(names) - (2 if len(names) >= 6 else 1)
    rows = [ln.split() for ln in body[1:]]
    if not _mostly(rows, lambda r: len(r) >= least, 0.9):
        return None
    cells = [c for r in rows for c in r[:least]]
    if sum(not c.strip(_WORD_EDGE).isalpha() for c in cells) < 0.4 * len(cells) or wrapped_prose(lines):
        return None
    return "".join(lines[:at]), _glue_blank(lines[at:], indented=False)  # ps's PIDs are right-aligned


def _legend_table(lines: list[str]) -> tuple[str, list[str]] | None:
    """A table whose column names follow a few lines of legend and stand over a rule (``dpkg -l``:
    three lines on its status letters, ``||/ Name Version Architecture Description``, then
    ``+++-====-====``): the legend, the names and the rule are the head (a row read without them
    has no column names), and nine rows in ten have as many fields as there are names, less one."""
    for r in range(2, min(len(lines), 9)):
        rule = lines[r].strip()
        if len(rule) < 20 or not set(rule) <= set("+=-| \t") or rule.count("=") + rule.count("-") < 10:
            continue
        names = lines[r - 1].split()
        rows = [ln.split() for ln in lines[r + 1 :] if ln.strip()]
        least = len(names) - 1
        if (
            len(names) < 3
            or len(rows) < MIN_RECORDS
            or not _mostly(rows, lambda x, w=least: len(x) >= w, 0.9)
        ):
            return None
        return "".join(lines[: r + 1]), _glue_blank(lines[r + 1 :], indented=False)
    return None


#: A header's underline of dashes, a run per column (``pip list``: ``-------- -------``).
_RULE = re.compile(r"^[ \t]*-{2,}(?:[ \t]+-{2,})+[ \t]*\r?\n?$")


def _names(line: str, delim: str) -> bool:
    """Whether ``line``'s fields read as column names: short, of at most three words, no empty one."""
    fields = next(csv.reader(io.StringIO(line))) if delim == "," else line.rstrip("\r\n").split(delim)
    return all(0 < len(f.strip()) <= 40 and len(f.split()) <= 3 for f in fields)


def _fields(line: str, delim: str) -> int:
    if delim == ",":
        try:
            return len(next(csv.reader(io.StringIO(line))))
        except (csv.Error, StopIteration):
            return 0
    return line.count(delim) + (0 if delim == "|" else 1)


def _glue_blank(lines: list[str], indented: bool = True) -> list[str]:
    """One record a line; a blank line goes with the record before it (the first keeps leading ones),
    and so does an indented line (``indented=False``: not in a table of right-aligned columns)."""
    out: list[str] = []
    for ln in lines:
        if out and not ln.strip():
            out[-1] += ln
        elif indented and out and ln[:1] in " \t" and out[-1].strip():
            out[-1] += ln  # an indented continuation (a traceback's frames) belongs to its record
        else:
            out.append(ln)
    return out


def _blocks(text: str) -> tuple[str, list[str]] | None:
    if text.count("\n\n") < MIN_RECORDS - 1:  # too few blank lines to hold that many blocks
        return None
    # Cut after every line break that a blank line follows: the blank lines stay with the block before.
    cuts = [m.end() for m in _BLANK_NEXT.finditer(text)]
    parts = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    blocks: list[str] = []
    for p in parts:
        if blocks and not p.strip("\n \t").strip():
            blocks[-1] += p
        elif blocks and p.lstrip(" \t").startswith("\n") and not p.strip():
            blocks[-1] += p
        else:
            blocks.append(p)
    blocks = _merge_blank_heads(blocks)
    real = [b for b in blocks if b.strip()]
    if len(real) < MIN_RECORDS:
        return None
    if not _mostly(real, _kv_block, 0.8):
        return None
    return "", blocks


def _kv_block(block: str) -> bool:
    """Whether six in ten of a block's fields are ``key: value`` lines; a line indented deeper than
    the block's first, after a ``key: value`` line, continues that value (RFC 822 folding: dpkg's
    ``Description``, ``Conffiles``; 209 of this machine's 735 package paragraphs were "not blocks",
    their description lines counted as lines that are not ``key: value``)."""
    fields = [ln for ln, _ in _fields_of(block)]
    return bool(fields) and sum(bool(_KV.match(ln)) for ln in fields) >= 0.6 * len(fields)


def _fields_of(block: str) -> list[tuple[str, str]]:
    """A block's field lines, each with its value's continuation lines (those indented deeper than
    the block's first line, after a ``key: value`` line), joined."""
    out: list[tuple[str, str]] = []
    base = -1
    for ln in block.split("\n"):
        if not ln.strip():
            continue
        indent = len(ln) - len(ln.lstrip(" \t"))
        if base < 0:
            base = indent
        if out and indent > base and _KV.match(out[-1][0]):
            out[-1] = (out[-1][0], out[-1][1] + "\n" + ln)
        else:
            out.append((ln, ""))
    return out


def _undescribed(block: str) -> str:
    """A ``key: value`` block without its fields that describe a thing (``Description``, ``Homepage``,
    ``summary`` ...: the fields the JSON crush does not read for error words, :data:`_DESCRIBES`),
    for reading its error words: valgrind's "a memory error detector" is not an error."""
    kept = []
    for ln, more in _fields_of(block):
        m = _KV.match(ln)
        if m is None or not _DESCRIBES.search(ln[: m.end()].strip().rstrip(":").strip()):
            kept.append(ln + more)
    return "\n".join(kept)


def _mostly(items: list[str], test, share: float) -> bool:
    """Whether ``test`` holds for at least ``share`` of ``items``; stops once the misses decide it."""
    allowed = len(items) - share * len(items)  # misses that still leave enough hits
    misses = 0
    for x in items:
        if not test(x):
            misses += 1
            if misses > allowed:
                return False
    return True


def _merge_blank_heads(blocks: list[str]) -> list[str]:
    """Blocks whose text starts with its separating blank line: that line goes to the block before."""
    out: list[str] = []
    for b in blocks:
        lead = len(b) - len(b.lstrip("\n \t"))
        cut = b.rfind("\n", 0, lead) + 1 if lead else 0
        if out and cut:
            out[-1] += b[:cut]
            b = b[cut:]
        if b:
            out.append(b)
    return out


#: The first line of a changelog's entry: Debian's (``pkg (1.2-3) unstable; urgency=medium``) or
#: GNU's (``2022-04-07  Jim Meyering  <meyering@fb.com>``).
_CHANGE_HEAD = re.compile(
    r"(?:[a-z0-9][a-z0-9+.-]* \([^()\s]+\)[^;\n]*; *(?:urgency|priority)=|\d{4}-\d{2}-\d{2}  [^\W\d_][^\n<>]*?  <[^<>\s]+@[^<>\s]+>[ \t]*$)",
    re.M,
)

#: ``git log --oneline``: a commit's abbreviated name, then its subject.
ONELINE = re.compile(r"[0-9a-f]{7,40} \S")


def oneline_commits(records: list[str]) -> bool:
    """Whether records are ``git log --oneline``'s lines (eight in ten start with a commit's name)."""
    real = [r for r in records if r.strip()]
    return bool(real) and sum(bool(ONELINE.match(r)) for r in real) >= 0.8 * len(real)


def _line_records(lines: list[str]) -> tuple[str, list[str]] | None:
    recs = _glue_blank(lines)
    real = [r for r in recs if r.strip()]
    if len(real) < MIN_RECORDS:
        return None
    if oneline_commits(real):  # a commit a line (long subjects read as prose, not a listing)
        return "", recs
    # A Debian or GNU changelog, an entry a record (and its trailer's notes: "# Older entries have
    # been removed"): coreutils' read as wrapped prose, keyutils' five entries too few for a listing.
    if _mostly(real, _CHANGE_HEAD.match, 0.6):
        return "", recs
    is_stamped = [bool(_STAMP.match(r)) for r in recs]
    if sum(is_stamped) >= 0.5 * len(real):
        # A line with no time of its own after a stamped one continues it (a traceback's
        # "Traceback ..." and "ValueError: ..." lines, a message's second line): one record.
        out: list[str] = []
        for r, st in zip(recs, is_stamped, strict=True):
            if out and not st and r.strip():
                out[-1] += r
            else:
                out.append(r)
        return "", out
    firsts = [r.splitlines()[0].rstrip() for r in real]
    # (a line ending "...", a program's "Unpacking x ..." progress line, does not end a sentence)
    ends = sum(f.endswith((".", "!", "?", '."', ".)")) and not f.endswith("...") for f in firsts)
    words = np.mean([len(f.split()) for f in firsts])
    # A listing, not wrapped prose: few lines end a sentence, or the lines are short (a program's
    # output: "Unpacking x ...", "Setting up x ...", "Selecting previously unselected package x.").
    listing = (ends <= 0.15 * len(real) and words < 12) or (ends <= 0.5 * len(real) and words < 8)
    if len(real) >= 10 and listing and not wrapped_prose(lines):
        return "", recs
    return None


#: The longest line (nine in ten) of hard-wrapped text: terminals and man pages wrap at 80 columns.
WRAP_WIDTH = 100
#: Lines :func:`wrapped_prose` reads at most (evenly spaced).
WRAP_SAMPLE = 400
#: Punctuation a word of prose may carry at its ends ("(see", "files," "it.").
_WORD_EDGE = "\"'“”‘’()[].,;:!?*`‐-"


def _prose_line(line: str) -> bool:
    """A line of running text: at least five words, seven in ten of them letters only (once their
    punctuation is stripped); log lines, listings and tables have numbers, paths and ids."""
    toks = line.split()
    if len(toks) < 5:
        return False
    return sum(t.strip(_WORD_EDGE).isalpha() for t in toks) >= 0.7 * len(toks)


def wrapped_prose(lines: list[str]) -> bool:
    r"""Whether text lines are hard-wrapped prose (a man page, a plain-text manual): nine lines in
    ten are at most :data:`WRAP_WIDTH` characters long, lines of running text
    (:func:`_prose_line`) hold half of the non-blank lines' characters or more (commands, rulers
    and headings between the paragraphs are short), and three in ten of their words are stop
    words (sentences; a package list's summaries have one in ten).  Judged on at most
    :data:`WRAP_SAMPLE` lines spread evenly over the text.

    Examples
    --------
    >>> page = "NAME\n       tar - an archiving utility\n\nDESCRIPTION\n"
    >>> page += "       It saves many files together into a single archive, and it can restore them\n" * 3
    >>> wrapped_prose(page.splitlines())
    True
    >>> wrapped_prose([f"2026-01-01 10:00:{i:02d} INFO GET /items/{i} 200 {i} ms" for i in range(9)])
    False
    """
    body = [ln.strip() for ln in lines[:: max(1, len(lines) // WRAP_SAMPLE)] if ln.strip()]
    if not body or sorted(map(len, body))[int(0.9 * (len(body) - 1))] > WRAP_WIDTH:
        return False  # long lines: not hard-wrapped (a Markdown paragraph is one line)
    prose = [ln for ln in body if _prose_line(ln)]
    if sum(map(len, prose)) < 0.5 * sum(map(len, body)):
        return False
    words = [t.strip(_WORD_EDGE).lower() for ln in prose for t in ln.split()]
    return sum(w in STOPWORDS for w in words) >= 0.3 * len(words)  # sentences, not names and summaries
