"""Unified diffs (``git diff``, ``git show``, ``git log -p``, ``diff -u``) within a token budget.

A diff crushed line by line loses what makes it readable: which file a line is in, and where.
:func:`split_diff` cuts a diff into its parts: the text before the first file (``git show``'s
commit, author and message), each file's header (``diff --git``, ``index``, ``---``, ``+++``,
with any text between two files, such as the next commit of ``git log -p``), and each hunk (its
``@@`` line and body, read by the line counts the ``@@`` line gives, so a removed line that
starts with ``--`` is not a header).  :func:`fit_diff` keeps whole hunks under their file's
header: every file's first hunk before any file's second (files whose paths or lines hold the
query's words first), as many as fit; the files left without a hunk are named on one line, and a
marker line says how many hunks were left out and the key under which ``retrieve_dropped`` gives
them back, each stored with its file's header so it reads on its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .._lexical import lexical_relevance
from ..tokens import as_token_counter, count_tokens
from ..validation import check_int
from ._records import RecordsFit, records_marker
from ._store import CrushStore, _crush_key, array_key, json_strings

__all__ = ["Diff", "fit_diff", "split_diff"]

_HUNK = re.compile(r"@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
#: The least share of a text's lines that headers and hunks must make for it to be read as a diff.
DIFF_SHARE = 0.5
#: Room left after the whole hunks, in tokens and as a share of the budget, from which the next
#: hunk's first lines are shown (cut at a line; the hunk is stored whole).
PART_MIN, PART_SHARE = 48, 0.15
#: The most tokens of one stored part of a hunk: a longer hunk is stored in parts, so that
#: ``retrieve_dropped`` (1,000 tokens a page by default) can give it back.
PART_TOKENS = 400
#: The most of the budget kept for naming the files no hunk is shown of.
LIST_SHARE = 0.2
#: The most of the budget the text before the first file may take; a longer one is cut at a line
#: break (and stored whole).
HEAD_SHARE = 0.3


@dataclass(frozen=True)
class Diff:
    """A diff cut into parts: ``head + "".join(headers[f] + its hunks) + tail`` is the text.

    ``hunks[h]`` is in file ``file_of[h]``; ``headers[f]`` is file ``f``'s header (with the text
    before it, after the previous file's last hunk)."""

    head: str
    headers: list[str]
    hunks: list[str]
    file_of: NDArray[np.int64]
    tail: str

    def __len__(self) -> int:
        return len(self.hunks)

    def path(self, f: int) -> str:
        """File ``f``'s path, from its ``+++``/``---`` line or its ``diff`` line."""
        lines = self.headers[f].splitlines()
        for mark in ("+++ ", "--- "):
            for line in lines:
                if line.startswith(mark):
                    p = line[4:].split("\t")[0].strip()
                    if p != "/dev/null":
                        return p[2:] if p.startswith(("a/", "b/")) else p
        for line in lines:
            if line.startswith("diff "):
                return line.split()[-1].removeprefix("b/")
        return f"file {f + 1}"


def split_diff(text: str) -> Diff | None:
    """``text`` cut into a :class:`Diff`, or None when it is not mostly a unified diff.

    Examples
    --------
    >>> d = split_diff("diff --git a/x.py b/x.py\\n--- a/x.py\\n+++ b/x.py\\n@@ -1 +1 @@\\n-a\\n+b\\n")
    >>> len(d), d.path(0), d.hunks[0]
    (1, 'x.py', '@@ -1 +1 @@\\n-a\\n+b\\n')
    >>> split_diff("just some text\\n") is None
    True
    """
    lines = text.splitlines(keepends=True)
    head: list[str] = []
    headers: list[list[str]] = []
    hunks: list[list[str]] = []
    file_of: list[int] = []
    pending: list[str] = []  # text after a file's last hunk: the next file's preamble
    state, old, new = "head", 0, 0
    for k, line in enumerate(lines):
        if state == "hunk" and (old > 0 or new > 0):
            c = line[:1]
            if c in (" ", "\n", "\r"):  # context (a blank line: context with its space stripped)
                old, new = old - 1, new - 1
            elif c == "-":
                old -= 1
            elif c == "+":
                new -= 1
            if c in (" ", "\n", "\r", "-", "+", "\\"):
                hunks[-1].append(line)
                continue
        if state == "hunk" and line.startswith("\\"):  # "\ No newline at end of file"
            hunks[-1].append(line)
            continue
        m = _HUNK.match(line)
        if m and state in ("header", "hunk") and headers:
            hunks.append([line])
            file_of.append(len(headers) - 1)
            old = int(m.group(1)) if m.group(1) is not None else 1
            new = int(m.group(2)) if m.group(2) is not None else 1
            state = "hunk"
            continue
        unified = line.startswith("--- ") and k + 1 < len(lines) and lines[k + 1].startswith("+++ ")
        if state == "header" and unified and not any(h.startswith("--- ") for h in headers[-1]):
            headers[-1].append(line)  # the ---/+++ lines of a "diff --git" header
            continue
        if line.startswith("diff ") or unified:
            headers.append([*pending, line])
            pending = []
            state = "header"
            continue
        if state == "header":
            headers[-1].append(line)  # index, mode, rename, "Binary files ... differ", +++
        elif state == "head":
            head.append(line)
        else:
            pending.append(line)
    if not hunks:
        return None
    inside = (
        sum(map(len, headers)) + sum(map(len, hunks)) - sum(1 for h in headers for x in h if not x.strip())
    )
    if inside < DIFF_SHARE * len(lines):
        return None
    return Diff(
        "".join(head),
        ["".join(h) for h in headers],
        ["".join(h) for h in hunks],
        np.asarray(file_of, dtype=np.int64),
        "".join(pending),
    )


def _parts(diff: Diff, counter) -> tuple[list[str], list[int]]:
    """What the store keeps of each hunk, and the hunk of each: the hunk under its file's header,
    or, for a hunk over :data:`PART_TOKENS`, its lines in parts of at most that many tokens (a
    line that long alone cut by characters), each under the header, so that ``retrieve_dropped``
    pages through any hunk."""
    out: list[str] = []
    of: list[int] = []
    costs = count_tokens(diff.hunks, counter)
    for h, (f, hunk) in enumerate(zip(diff.file_of.tolist(), diff.hunks, strict=True)):
        header = diff.headers[f].lstrip("\n")
        if costs[h] <= PART_TOKENS:
            out.append(header + hunk)
            of.append(h)
            continue
        lines = hunk.splitlines(keepends=True)
        cap = PART_TOKENS * 3  # characters: a token is at least about three characters by every counter here
        pieces = [x[i : i + cap] for x in lines for i in range(0, max(len(x), 1), cap)]
        line_costs = count_tokens(pieces, counter)
        groups: list[list[str]] = [[]]
        room = PART_TOKENS
        for piece, c in zip(pieces, line_costs.tolist(), strict=True):
            if groups[-1] and c > room:
                groups.append([])
                room = PART_TOKENS
            groups[-1].append(piece)
            room -= c
        at = lines[0].rstrip("\n")
        for k, g in enumerate(groups):
            note = "" if k == 0 else f"[scwo: part {k + 1} of {len(groups)} of the hunk {at}]\n"
            out.append(header + note + "".join(g))
            of.append(h)
    return out, of


def _order(diff: Diff, query: str) -> NDArray[np.int64]:
    """Hunks in the order they are offered: each file's first before any file's second; among
    hunks of one rank, those of a file the query names first, then those whose lines hold the
    query's words (BM25), then the diff's order."""
    n = len(diff)
    rank = np.zeros(n, dtype=np.int64)
    for h in range(1, n):
        rank[h] = rank[h - 1] + 1 if diff.file_of[h] == diff.file_of[h - 1] else 0
    rel = np.zeros(n)
    if query:  # a file the query names (its path or its file name) first, then BM25 of the hunks
        q = query.lower()
        paths = [diff.path(f).lower() for f in range(len(diff.headers))]
        named = np.asarray([p in q or p.rsplit("/", 1)[-1] in q for p in paths], dtype=float)
        docs = [diff.path(int(f)) + "\n" + h for f, h in zip(diff.file_of, diff.hunks, strict=True)]
        rel = named[diff.file_of] + np.round(lexical_relevance(docs, query), 6)
    return np.lexsort((np.arange(n), -rel, rank))


def fit_diff(
    diff: Diff,
    budget: int,
    *,
    token_counter: object = None,
    store: CrushStore | None = None,
    query: str = "",
) -> RecordsFit:
    """``diff`` within ``budget`` tokens: the text before the first file, whole hunks under their
    file's header, the files left without a hunk named, and the marker line.

    Parameters
    ----------
    diff : Diff
        From :func:`split_diff`.
    budget : int
        The most tokens of the returned text, marker included.
    token_counter : name, TokenCounter or callable, optional
        Counts ``budget`` (default ``"estimate"``).
    store : CrushStore, optional
        Where the hunks go (each as its file's header and the hunk, a JSON string), for retrieval
        of those left out; a head cut to fit is stored after them.
    query : str
        Hunks whose file path or lines hold its words are kept first.

    Returns
    -------
    RecordsFit
        The text, its tokens, the kept hunks' positions, the number of hunks and the key.

    Raises
    ------
    ValueError
        When not even the marker fits ``budget``.

    Examples
    --------
    >>> parts = [f"diff --git a/f{i}.py b/f{i}.py\\n--- a/f{i}.py\\n+++ b/f{i}.py\\n"
    ...          + "".join(f"@@ -{j * 20 + 1},2 +{j * 20 + 1},2 @@\\n-old {i} {j}\\n+new {i} {j}\\n ctx\\n"
    ...                    for j in range(8)) for i in range(6)]
    >>> fit = fit_diff(split_diff("".join(parts)), 200)
    >>> fit.tokens <= 200, "f5.py" in fit.text, fit.dropped > 0
    (True, True, True)
    """
    budget = check_int(budget, name="budget", low=1)
    counter = as_token_counter(token_counter)

    def count(text: str) -> int:
        return int(count_tokens([text], counter)[0]) if text else 0

    n = len(diff)
    head = diff.head
    cut_head = count(head) > HEAD_SHARE * budget
    if cut_head:  # the lines that fit in HEAD_SHARE of the budget; the whole head is stored
        lines = head.splitlines(keepends=True)
        costs = np.cumsum(count_tokens(lines, counter)) if lines else np.zeros(0)
        head = "".join(lines[: int(np.searchsorted(costs, HEAD_SHARE * budget, side="right"))])
        head += (
            f"[scwo: the text before the diff cut after {head.count(chr(10))} lines; retrieve_dropped "
            "gives it whole, as the last part]\n"
        )
    stored, part_of = _parts(diff, counter)
    if cut_head:
        stored.append(diff.head)
        part_of.append(n)
    part_of_arr = np.asarray(part_of, dtype=np.int64)
    pieces = json_strings(stored)
    akey = array_key(pieces) if store is not None else None
    order = _order(diff, query)
    hunk_costs = count_tokens(diff.hunks, counter)
    header_costs = count_tokens(diff.headers, counter)

    what = "parts" if cut_head else "hunks"
    plus = np.zeros(len(diff.headers), dtype=np.int64)
    minus = np.zeros(len(diff.headers), dtype=np.int64)
    for f, h in zip(diff.file_of.tolist(), diff.hunks, strict=True):
        body = h.splitlines()[1:]
        plus[f] += sum(1 for x in body if x.startswith("+"))
        minus[f] += sum(1 for x in body if x.startswith("-"))
    stat = [f"+{a} -{b}" for a, b in zip(plus.tolist(), minus.tolist(), strict=True)]

    def render(kept: list[int], part: tuple[int, int] | None = None) -> tuple[str, int]:
        """The head, the kept hunks under their headers (and ``part``: hunk ``h``'s first ``k``
        lines), the files with no hunk shown, the marker."""
        idx = np.asarray(sorted(kept), dtype=np.int64)
        parts = [head]
        shown: set[int] = set()
        for h in sorted([*idx.tolist(), *([part[0]] if part else [])]):
            f = int(diff.file_of[h])
            if f not in shown:
                parts.append(diff.headers[f])
                shown.add(f)
            if part is not None and h == part[0]:
                lines = diff.hunks[h].splitlines(keepends=True)
                parts.append("".join(lines[: part[1]]))
                parts.append(f"[scwo: this hunk cut after {part[1] - 1} of {len(lines) - 1} lines]\n")
            else:
                parts.append(diff.hunks[h])
        if idx.size == n and not cut_head:
            body = "".join(parts) + diff.tail
            return body, count(body)
        body = "".join(parts)
        if body and not body.endswith("\n"):
            body += "\n"
        hidden = [f"{diff.path(f)} ({stat[f]})" for f in range(len(diff.headers)) if f not in shown]
        key = _crush_key(akey, np.flatnonzero(np.isin(part_of_arr, idx))) if akey is not None else None
        text = ""
        for names in dict.fromkeys(min(len(hidden), k) for k in (len(hidden), 40, 20, 10, 5, 0)):
            line = ""
            if hidden:
                more = len(hidden) - names
                listed = ", ".join(hidden[:names]) + (f" and {more} more" if more and names else "")
                line = (
                    f"[scwo: {len(hidden)} files with no hunk shown"
                    + (f": {listed}" if names else "")
                    + "]\n"
                )
            # Counts only: the store holds long hunks in parts, so its positions are not the hunks'.
            text = body + line + records_marker(n + cut_head, idx, key, what=what, ranges=False)
            t = count(text)
            if t <= budget:
                return text, t
        return text, count(text)

    kept: list[int] = []
    text, t = render(kept)
    if t > budget:
        raise ValueError(
            f"budget={budget} is too small for this diff: the text before it and a marker saying what was "
            f"left out take {t} tokens; give budget >= {t}."
        )
    files: set[int] = set()
    least = int(hunk_costs.min()) if n else 0
    # Room kept for naming the files no hunk is shown of (with their +/- counts): the list of
    # them all, at most LIST_SHARE of the budget.
    reserve = min(
        count(", ".join(f"{diff.path(f)} ({stat[f]})" for f in range(len(diff.headers)))), LIST_SHARE * budget
    )
    for h in order.tolist():  # greedily, by the estimate of each part; the rendering decides
        if budget - reserve - t < least:
            break
        f = int(diff.file_of[h])
        extra = hunk_costs[h] + (0 if f in files else header_costs[f])
        if t + extra > budget - reserve:
            continue
        text2, t2 = render([*kept, h])
        if t2 <= budget - reserve:
            kept.append(h)
            files.add(f)
            text, t = text2, t2
    left = [h for h in order.tolist() if h not in set(kept)]
    if left and budget - t >= max(PART_MIN, PART_SHARE * budget):  # room for the first lines of one more
        h = left[0]
        lines = diff.hunks[h].splitlines(keepends=True)
        room = budget - t - (0 if int(diff.file_of[h]) in files else header_costs[int(diff.file_of[h])]) - 16
        k = int(np.searchsorted(np.cumsum(count_tokens(lines, counter)), room, side="right"))
        while k >= 2:  # the @@ line and at least one line of the hunk
            text2, t2 = render(kept, (h, k))
            if t2 <= budget:
                text, t = text2, t2
                break
            k = k - 1 if t2 - budget < 8 else int(k * budget / t2)
    idx = np.asarray(sorted(kept), dtype=np.int64)
    key = None
    if store is not None and (idx.size < n or cut_head):
        key = store.put(pieces, kept=np.flatnonzero(np.isin(part_of_arr, idx)))
    return RecordsFit(text, t, idx, n, key)
