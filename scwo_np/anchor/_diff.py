"""Unified diffs (``git diff``, ``git show``, ``git log -p``, ``diff -u``) within a token budget.

A diff crushed line by line loses what makes it readable: which file a line is in, and where.
:func:`split_diff` cuts a diff into its parts: the text before the first file (``git show``'s
commit, author and message), each file's preamble (any text between two files, such as the next
commit of ``git log -p``) and header (``diff --git``, ``index``, ``rename``, ``---``, ``+++``), and
each hunk (its ``@@`` line and body, read by the line counts the ``@@`` line gives, so a removed
line that starts with ``--`` is not a header; a merge's combined diff, ``@@@`` and a column per
parent, the same way).  :func:`fit_diff` keeps whole hunks under their
file's preamble and header: every file's first hunk is offered before any file's second (files
the query names first, then hunks holding its words), and each is taken if it fits; the files
left without a hunk are named on one line with their added and removed lines (or what their
header says: renamed, binary, deleted, new, mode), and a marker line says how many hunks were
left out and the key under which ``retrieve_dropped`` gives back everything not shown, each hunk
under its file's header so it reads on its own (a long one, or a long commit message, in parts
of at most :data:`~scwo_np.anchor._records.PART_TOKENS`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .._lexical import lexical_relevance
from ..tokens import as_token_counter, count_tokens
from ..validation import check_int
from ._records import PART_MIN, PART_SHARE, RecordsFit, _split_lines, gives_back
from ._shapes import _line_texts, _lines
from ._store import CrushStore, _crush_key, array_key, json_strings

__all__ = ["Diff", "fit_diff", "split_diff"]

_COMMIT = re.compile(r"(commit|From) [0-9a-f]{7,64}\b")  # git show, git log -p, git format-patch
#: A hunk's first line: ``@@ -a,b +c,d @@`` (one parent), or a combined diff's ``@@@ -a,b -c,d +e,f
#: @@@`` (``git show`` of a merge: one ``@`` more and one ``-`` range per parent).
_HUNK = re.compile(r"(@{2,}) ((?:-\d+(?:,\d+)? )+)\+\d+(?:,(\d+))? \1")
_RANGE = re.compile(r"-\d+(?:,(\d+))?")
#: The least share of a text's lines after the text before its first file that file headers and
#: hunks must make for it to be read as a diff.  The text before may be longer than the diff only
#: when it is a commit (``commit <hash>`` or ``From <hash>``, as git writes them).
DIFF_SHARE = 0.5
#: The most of the budget kept for naming the files no hunk is shown of.
LIST_SHARE = 0.2
#: The most of the budget the text before the first file, or before a shown file (a commit of
#: ``git log -p``), may take; a longer one is cut at a line break (and stored whole).
HEAD_SHARE = 0.3


@dataclass(frozen=True)
class Diff:
    """A diff cut into parts: ``head + "".join(preambles[f] + headers[f] + its hunks) + tail`` is
    the text.

    ``hunks[h]`` is in file ``file_of[h]``; ``headers[f]`` is file ``f``'s header and
    ``preambles[f]`` the text before it, after the previous file's last hunk (``""`` for the
    first file: that is ``head``)."""

    head: str
    preambles: list[str]
    headers: list[str]
    hunks: list[str]
    file_of: NDArray[np.int64]
    tail: str

    def __len__(self) -> int:
        return len(self.hunks)

    def path(self, f: int) -> str:
        """File ``f``'s path, from its ``+++``/``---`` line or its ``diff`` line."""
        lines = _line_texts(self.headers[f])
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

    def change(self, f: int) -> str:
        """What file ``f``'s header says beyond its lines: renamed, binary, new, deleted, mode."""
        lines = _line_texts(self.headers[f])
        out = []
        for line in lines:
            if line.startswith("rename from "):
                out.append(f"renamed from {line[12:]}")
            elif line.startswith("copy from "):
                out.append(f"copied from {line[10:]}")
            elif line.startswith("new file mode"):
                out.append("new")
            elif line.startswith("deleted file mode"):
                out.append("deleted")
            elif line.startswith("old mode"):
                out.append("mode changed")
            elif line.startswith("Binary files") or line.startswith("GIT binary patch"):
                out.append("binary")
        return ", ".join(dict.fromkeys(out))


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
    lines = _lines(text)
    head: list[str] = []
    headers: list[list[str]] = []
    preambles: list[str] = []
    hunks: list[list[str]] = []
    file_of: list[int] = []
    pending: list[str] = []  # text after a file's last hunk: the next file's preamble
    state, left = "head", [0]  # in a hunk: its lines yet to come in each parent, then in the result
    for k, line in enumerate(lines):
        if state == "hunk" and any(x > 0 for x in left) and _count(line, left):
            hunks[-1].append(line)
            continue
        if state == "hunk" and line.startswith("\\"):  # "\ No newline at end of file"
            hunks[-1].append(line)
            continue
        m = _HUNK.match(line)
        ranges = _RANGE.findall(m.group(2)) if m else []
        if m and len(ranges) == len(m.group(1)) - 1 and state in ("header", "hunk") and headers:
            hunks.append([line])
            file_of.append(len(headers) - 1)
            left = [int(r) if r else 1 for r in ranges] + [int(m.group(3)) if m.group(3) is not None else 1]
            state = "hunk"
            continue
        unified = line.startswith("--- ") and k + 1 < len(lines) and lines[k + 1].startswith("+++ ")
        if state == "header" and unified and not any(h.startswith("--- ") for h in headers[-1]):
            headers[-1].append(line)  # the ---/+++ lines of a "diff --git" header
            continue
        if line.startswith("diff ") or unified:
            headers.append([line])
            preambles.append("".join(pending))
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
    inside = sum(map(len, headers)) + sum(map(len, hunks))
    if inside < DIFF_SHARE * (inside + len(pending)):  # the text after the diff is most of it
        return None
    if len(head) > inside and not _COMMIT.match(head[0]):  # a text that quotes a diff after more of its own
        return None
    return Diff(
        "".join(head),
        preambles,
        ["".join(h) for h in headers],
        ["".join(h) for h in hunks],
        np.asarray(file_of, dtype=np.int64),
        "".join(pending),
    )


def _count(line: str, left: list[int]) -> bool:
    """Whether ``line`` is a line of the hunk whose lines yet to come are ``left`` (per parent,
    then the result), counting it off.  A line's first column per parent says where it is: ``-``
    in that parent only, ``+`` in the result but not that parent, a space in both (a line with a
    ``-`` in some column is in the parents marked ``-``).  A blank line is context whose spaces
    were stripped; ``\\ No newline at end of file`` counts nowhere."""
    parents = len(left) - 1
    if not line.strip("\r\n"):
        marks = " " * parents
    elif line.startswith("\\"):
        return True
    else:
        marks = line[:parents]
        if len(marks) < parents or marks.strip(" +-"):
            return False
    removed = "-" in marks
    for i, c in enumerate(marks):
        if c == "-" or (c == " " and not removed):
            left[i] -= 1
    if not removed:
        left[-1] -= 1
    return True


def _changes(hunk: str) -> tuple[int, int]:
    """The lines a hunk adds to the result and removes from it (of any parent)."""
    lines = _line_texts(hunk)
    parents = len(lines[0]) - len(lines[0].lstrip("@")) - 1 if lines else 1
    plus = minus = 0
    for x in lines[1:]:
        marks = x[:parents]
        if "-" in marks:
            minus += 1
        elif "+" in marks:
            plus += 1
    return plus, minus


def _parts(diff: Diff, counter) -> tuple[list[str], list[int]]:
    """What the store keeps, and what each stored part is of: ``h`` for hunk ``h`` (under its
    file's header), ``n + f`` for file ``f``'s preamble, ``n + F + f`` for the header of a file
    with no hunk, ``n + 2F`` for the head, ``n + 2F + 1`` for the tail (``n`` hunks, ``F`` files).  A
    hunk or a text over
    :data:`~scwo_np.anchor._records.PART_TOKENS` is stored in parts of at most that many tokens, so that
    ``retrieve_dropped`` pages through any of them."""
    n, files = len(diff), len(diff.headers)
    out: list[str] = []
    of: list[int] = []

    def add(pieces: list[str], what: int, header: str = "", name: str = "") -> None:
        for k, piece in enumerate(pieces):
            note = f"[scwo: part {k + 1} of {len(pieces)} of {name}]\n" if k else ""
            out.append(header + note + piece)
            of.append(what)

    for h, (f, hunk) in enumerate(zip(diff.file_of.tolist(), diff.hunks, strict=True)):
        add(_split_lines(hunk, counter), h, diff.headers[f], "the hunk " + hunk.split("\n", 1)[0])
    for f in range(files):
        if diff.preambles[f].strip():  # (blank lines between files are not worth a part)
            add(_split_lines(diff.preambles[f], counter), n + f, "", f"the text before {diff.path(f)}")
    has_hunks = set(diff.file_of.tolist())
    for f in range(files):
        if f not in has_hunks:
            add(_split_lines(diff.headers[f], counter), n + files + f, "", f"the header of {diff.path(f)}")
    if diff.head.strip():
        add(_split_lines(diff.head, counter), n + 2 * files, "", "the text before the diff")
    if diff.tail.strip():
        add(_split_lines(diff.tail, counter), n + 2 * files + 1, "", "the text after the diff")
    return out, of


#: Tokens of room below which :func:`_cut` does not show the first words of a line that does not fit.
_CUT_MIN = 8


def _cut(text: str, limit: float, counter) -> tuple[str, bool]:
    """``text``, or its first lines within ``limit`` tokens and a note, and whether it was cut."""
    if int(count_tokens([text], counter)[0]) <= limit:
        return text, False
    lines = _lines(text)
    if lines[0].startswith("commit ") and any(x.startswith("    ") for x in lines):
        # a commit: its hash and its message's first line (indented) before its Author: and Date:
        first = [0, next(i for i, x in enumerate(lines) if x.startswith("    "))]
        order = first + [i for i in range(len(lines)) if i not in first]
    else:
        order = list(range(len(lines)))
    costs = np.cumsum(count_tokens([lines[i] for i in order], counter))
    k = int(np.searchsorted(costs, limit - 12, side="right"))
    keep = "".join(lines[i] for i in sorted(order[:k]))
    room = limit - 12 - (int(costs[k - 1]) if k else 0)
    if k < len(lines) and room >= _CUT_MIN and order[k] > max(order[:k], default=-1):
        line = lines[order[k]]  # the next line's first words (a commit's one long line)
        lo, hi = 0, len(line)
        while lo < hi:  # the most characters that fit, cut at a space
            mid = (lo + hi + 1) // 2
            if int(count_tokens([line[:mid]], counter)[0]) <= room:
                lo = mid
            else:
                hi = mid - 1
        head = line[:lo].rsplit(" ", 1)[0] if " " in line[:lo].strip() else line[:lo]
        if " " not in head.strip() and len(line[:lo].rstrip()) >= len(head) + 8:
            head = line[
                :lo
            ]  # a commit's hash cut (a prefix names it: "commit a9e1180a2f9ad47f …"), not dropped
        if head.strip():
            keep += head.rstrip() + " …\n"
    return keep + "[scwo: cut here]\n", True


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
    tool: str | None = "retrieve_dropped",
) -> RecordsFit:
    """``diff`` within ``budget`` tokens: the text before the first file, whole hunks under their
    file's preamble and header, the files left without a hunk named, and the marker line.

    Parameters
    ----------
    diff : Diff
        From :func:`split_diff`.
    budget : int
        The most tokens of the returned text, marker included.
    token_counter : name, TokenCounter or callable, optional
        Counts ``budget`` (default ``"estimate"``).
    store : CrushStore, optional
        Where everything not shown goes, for ``retrieve_dropped``: each hunk under its file's
        header, the preambles and headers of files not shown, a head cut to fit (see
        :func:`_parts`), each a JSON string.
    query : str
        Hunks of a file it names, then hunks holding its words, are offered first.
    tool : str or None
        The tool the marker says gives back what was left out (an MCP server's); None: the
        marker gives the store key alone.

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

    n, files = len(diff), len(diff.headers)
    stored, part_of = _parts(diff, counter)
    part_of_arr = np.asarray(part_of, dtype=np.int64)
    pieces = json_strings(stored)
    akey = array_key(pieces) if store is not None else None
    order = _order(diff, query)
    hunk_costs = count_tokens(diff.hunks, counter)
    header_costs = count_tokens(diff.headers, counter) + count_tokens(diff.preambles, counter)
    has_hunks = set(diff.file_of.tolist())
    plus = np.zeros(files, dtype=np.int64)
    minus = np.zeros(files, dtype=np.int64)
    for f, h in zip(diff.file_of.tolist(), diff.hunks, strict=True):
        added, removed = _changes(h)
        plus[f] += added
        minus[f] += removed
    label = [
        ", ".join(x for x in ((f"+{plus[f]} -{minus[f]}" if f in has_hunks else ""), diff.change(f)) if x)
        or "no lines"
        for f in range(files)
    ]
    # Several commits (git log -p): each file named with its commit, so one path changed by two
    # commits reads as two changes, not one name twice.
    commits, current = [], None  # file f's commit: the last one named before its header
    for text in (diff.head, *diff.preambles[1:]):
        for line in _line_texts(text):
            if _COMMIT.match(line.strip()):
                current = line.strip().split()[1][:7]
                break
        commits.append(current)
    if len({c for c in commits if c}) > 1:
        label = [f"{commits[f]}, {label[f]}" if commits[f] else label[f] for f in range(files)]
    preambles = [_cut(p, HEAD_SHARE * budget, counter) for p in diff.preambles]
    tail = _cut(diff.tail, HEAD_SHARE * budget, counter) if diff.tail.strip() else ("", False)

    def render(
        kept: list[int],
        part: tuple[int, int] | None,
        head: tuple[str, bool],
        names: bool,
        after: bool = False,
    ):
        """The head, the kept hunks under their preambles and headers (and ``part``: hunk ``h``'s
        first ``k`` lines), with ``after`` the text after the diff (``* Unmerged path x``), the
        files with no hunk shown, the marker; and what is kept whole."""
        idx = np.asarray(sorted(kept), dtype=np.int64)
        out = [head[0]]
        whole = set(idx.tolist())
        if diff.head.strip() and not head[1]:
            whole.add(n + 2 * files)
        shown: set[int] = set()
        for h in sorted([*whole & set(range(n)), *([part[0]] if part else [])]):
            f = int(diff.file_of[h])
            if f not in shown:
                out += [preambles[f][0], diff.headers[f]]
                shown.add(f)
                if diff.preambles[f].strip() and not preambles[f][1]:
                    whole.add(n + f)
            if part is not None and h == part[0]:
                lines = _lines(diff.hunks[h])
                out.append("".join(lines[: part[1]]))
                out.append(f"[scwo: this hunk cut after {part[1] - 1} of {len(lines) - 1} lines]\n")
            else:
                out.append(diff.hunks[h])
        others = sum(1 for x in diff.preambles if x.strip()) + bool(diff.head.strip())
        if len(whole) == n + others and files == len(has_hunks):
            if diff.tail.strip():
                whole.add(n + 2 * files + 1)
            body = "".join(out) + diff.tail
            return body, count(body), whole
        body = "".join(out)
        if body and not body.endswith("\n"):
            body += "\n"
        if after and tail[0]:
            body += tail[0] if tail[0].endswith("\n") else tail[0] + "\n"
            if not tail[1]:
                whole.add(n + 2 * files + 1)
        hidden = [f"{diff.path(f)} ({label[f]})" for f in range(files) if f not in shown]
        at = np.flatnonzero(np.isin(part_of_arr, sorted(whole)))
        key = _crush_key(akey, at) if akey is not None else None
        left = n - len(whole & set(range(n)))
        more = len(set(part_of) - whole) - (left if left else 0)
        text = ""
        for k in dict.fromkeys(
            min(len(hidden), k) for k in (len(hidden), 40, 20, 10, 5, 0) if names or not k
        ):
            line = ""
            if hidden:
                rest = len(hidden) - k
                listed = ", ".join(hidden[:k]) + (f" and {rest} more" if rest and k else "")
                noun = "file" if len(hidden) == 1 else "files"
                line = (
                    f"[scwo: {len(hidden)} {noun} with no hunk shown" + (f": {listed}" if k else "") + "]\n"
                )
                if k and count(line) > max(LIST_SHARE * budget, PART_MIN):  # names never crowd out the hunks
                    continue
            marker = f"[scwo: {left} of {n} hunks left out"
            if more > 0:
                marker += f" (and {more} other {'part' if more == 1 else 'parts'}: commit text, file headers, text after)"
            if key is not None:
                marker += gives_back(key, tool)
            text = body + line + marker + "]"
            t = count(text)
            if t <= budget:
                return text, t, whole
        return text, count(text), whole

    heads = [
        _cut(diff.head, HEAD_SHARE * budget, counter),
        (_cut(diff.head, 0, counter)[0] if diff.head else "", True),
    ]
    for head in heads:  # the head cut to a share of the budget, or to its note alone
        text, t, whole = render([], None, head, True)
        if t <= budget:
            break
        text, t, whole = render([], None, head, False)
        if t <= budget:
            break
    if t > budget:
        raise ValueError(
            f"budget={budget} is too small for this diff: a marker saying what was left out takes {t} tokens; "
            f"give budget >= {t}."
        )
    kept: list[int] = []
    shown_files: set[int] = set()
    least = int(hunk_costs.min()) if n else 0
    # Room kept for naming the files no hunk is shown of: the list of them all, at most
    # LIST_SHARE of the budget.
    reserve = min(count(", ".join(f"{diff.path(f)} ({label[f]})" for f in range(files))), LIST_SHARE * budget)
    for h in order.tolist():  # each offered in order, taken if it fits; the rendering decides
        if budget - reserve - t < least:
            break
        f = int(diff.file_of[h])
        if t + hunk_costs[h] + (0 if f in shown_files else header_costs[f]) > budget - reserve:
            continue
        text2, t2, whole2 = render([*kept, h], None, head, True)
        if t2 <= budget - reserve:
            kept.append(h)
            shown_files.add(f)
            text, t, whole = text2, t2, whole2
    if t < budget - reserve:  # the list may take less than its reserve
        text, t, whole = render(kept, None, head, True)
    part = None
    left = [h for h in order.tolist() if h not in set(kept)]
    if left and budget - t >= max(PART_MIN, PART_SHARE * budget):  # room for the first lines of one more
        h = left[0]
        lines = _lines(diff.hunks[h])
        f = int(diff.file_of[h])
        room = budget - t - (0 if f in shown_files else header_costs[f]) - 16
        k = min(
            int(np.searchsorted(np.cumsum(count_tokens(lines, counter)), room, side="right")), len(lines) - 1
        )
        while k >= 2:  # the @@ line and at least one line of the hunk, never all of them
            text2, t2, whole2 = render(kept, (h, k), head, True)
            if t2 <= budget:
                text, t, whole, part = text2, t2, whole2, (h, k)
                break
            k = k - 1 if t2 - budget < 8 else int(k * budget / t2)
    if (
        diff.head and not text.startswith(diff.head) and budget - t > 8
    ):  # more of a cut head, in the room left
        grown = _cut(diff.head, count(head[0]) + budget - t - 4, counter)
        text2, t2, whole2 = render(kept, part, grown, True)
        if t2 <= budget:
            text, t, whole, head = text2, t2, whole2, grown
    if tail[0] and n + 2 * files + 1 not in whole:  # the text after the diff, in the room left
        text2, t2, whole2 = render(kept, part, head, True, after=True)
        if t2 <= budget:
            text, t, whole = text2, t2, whole2
    idx = np.asarray(sorted(kept), dtype=np.int64)
    key = None
    at = np.flatnonzero(np.isin(part_of_arr, sorted(whole)))
    if store is not None and at.size < len(stored):
        key = store.put(pieces, kept=at)
    return RecordsFit(text, t, idx, n, key)
