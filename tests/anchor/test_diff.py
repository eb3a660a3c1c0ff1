"""Unified diffs within a token budget (``scwo mcp proxy``'s diff form): the splitter loses no
character and reads hunks by their line counts; the fit keeps the budget, shows whole hunks under
their file's header, names the other files, and the store gives back exactly what was left out.

Real diffs: this repository's own history (``git show``, ``git log -p``, when the tests run in a
clone) and ``difflib`` between two real licence texts shipped here.
"""

from __future__ import annotations

import difflib
import json
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scwo_np.anchor import CrushStore
from scwo_np.anchor._diff import HEAD_SHARE, _cut, _order, _parts, fit_diff, split_diff
from scwo_np.anchor._records import PART_TOKENS
from scwo_np.tokens import as_token_counter, count_tokens

ROOT = Path(__file__).resolve().parents[2]


def _joined(d) -> str:
    per_file = [
        "".join(h for h, f in zip(d.hunks, d.file_of, strict=True) if f == i) for i in range(len(d.headers))
    ]
    files = zip(d.preambles, d.headers, per_file, strict=True)
    return d.head + "".join(p + h + body for p, h, body in files) + d.tail


def _git(*args: str) -> str:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git clone")
    out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode or not out.stdout:
        pytest.skip(f"git {' '.join(args)} gave nothing")
    return out.stdout


def _licences() -> str:
    a = (ROOT / "data-gpl" / "LICENSE").read_text(encoding="utf-8").splitlines(keepends=True)
    b = (ROOT / "data-gpl" / "LICENSE-GFDL-1.3").read_text(encoding="utf-8").splitlines(keepends=True)
    return "".join(difflib.unified_diff(a, b, "a/LICENSE", "b/LICENSE-GFDL-1.3", n=3))


@pytest.mark.parametrize(
    "make",
    [lambda: _git("log", "-p", "-8"), lambda: _git("show", "HEAD~2"), _licences],
    ids=["log-p", "show", "difflib"],
)
def test_the_parts_are_the_text(make):
    text = make()
    d = split_diff(text)
    assert d is not None and len(d) >= 1
    assert _joined(d) == text
    for h in d.hunks:
        assert h.startswith("@@ -")


def test_hunks_are_read_by_their_line_counts():
    """A removed SQL comment ("-- x" becomes "--- x") and an added "++ y" stay in their hunk."""
    text = (
        "diff --git a/q.sql b/q.sql\n--- a/q.sql\n+++ b/q.sql\n"
        "@@ -1,3 +1,3 @@\n--- old comment\n+++ new thing\n select 1;\n \n"
        "diff --git a/r.sql b/r.sql\n--- a/r.sql\n+++ b/r.sql\n@@ -5 +5 @@\n-a\n+b\n\\ No newline at end of file\n"
    )
    d = split_diff(text)
    assert len(d.headers) == 2 and len(d) == 2
    assert d.hunks[0] == "@@ -1,3 +1,3 @@\n--- old comment\n+++ new thing\n select 1;\n \n"
    assert d.hunks[1].endswith("\\ No newline at end of file\n")
    assert [d.path(0), d.path(1)] == ["q.sql", "r.sql"]
    assert _joined(d) == text


@pytest.mark.parametrize(
    "text",
    [
        "Some prose that mentions a diff.\n" * 30 + "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
        "no diff here at all\n",
        "--- a list item\n+++ not a header either\n",
    ],
)
def test_text_that_is_not_mostly_a_diff_is_not_read_as_one(text):
    assert split_diff(text) is None


def test_a_commit_with_a_long_message_is_a_diff_with_its_message_first():
    message = "".join(f"    line {i} of a long commit message explaining the change.\n" for i in range(200))
    text = f"commit {'ab' * 20}\nAuthor: A <a@b>\nDate:   Mon Jan 5 10:00:00 2026 +0000\n\n{message}\n"
    text += "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-a\n+b\n c\n"
    d = split_diff(text)
    assert d is not None and d.head.startswith("commit ") and len(d) == 1
    store = CrushStore(":memory:")
    fit = fit_diff(d, 300, store=store)
    assert fit.text.startswith(f"commit {'ab' * 20}\nAuthor: A <a@b>") and d.hunks[0] in fit.text
    back = "".join(re.sub(r"^\[scwo: part \d+ of \d+ of [^\n]*\]\n", "", x) for x in store.retrieve(fit.key))
    assert fit.tokens <= 300 and back == d.head  # the message back whole
    assert fit.tokens > 250  # the room the hunk left goes to more of the message


def test_a_commits_hash_is_cut_not_dropped_when_its_line_does_not_fit():
    """``git log -p | scwo crush --budget 100 --token-counter tiktoken`` printed ``commit …`` (a
    hash is about 25 cl100k tokens, more than the head's share; the cut was at a space, so the hash
    went) and left 34 tokens unused.  A counter of a token per two characters stands in here."""
    message = "".join(f"    line {i} of a long commit message explaining the change.\n" for i in range(20))
    text = f"commit {'a9e1180a2f' * 4}\nAuthor: A <a@b>\nDate:   Mon Jan 5 10:00:00 2026 +0000\n\n{message}\n"
    text += "".join(
        f"diff --git a/x{k}.py b/x{k}.py\n--- a/x{k}.py\n+++ b/x{k}.py\n@@ -1,30 +1,30 @@\n"
        + "-a line\n" * 30
        + "+b line\n" * 30
        for k in range(4)
    )
    fit = fit_diff(split_diff(text), 100, token_counter=lambda t: (len(t) + 1) // 2)
    assert fit.tokens <= 100 and re.search(r"^commit a9e1180a2f\w{6}", fit.text), fit.text


def _check(text: str, budget: int, query: str = "") -> None:
    d = split_diff(text)
    counter = as_token_counter(None)
    store = CrushStore(":memory:")
    fit = fit_diff(d, budget, store=store, query=query)
    assert fit.tokens == count_tokens([fit.text])[0] <= budget
    for shown_lines, of in re.findall(r"this hunk cut after (\d+) of (\d+) lines", fit.text):
        assert int(shown_lines) < int(of)  # a hunk shown whole is kept, never called cut
    at, seen = 0, set()
    for h in fit.kept.tolist():  # kept hunks verbatim, in order, each file's header before its first
        f = int(d.file_of[h])
        if f not in seen:
            at = fit.text.index(d.headers[f], at) + len(d.headers[f])
            seen.add(f)
        at = fit.text.index(d.hunks[h], at) + len(d.hunks[h])
    if fit.key is None:
        assert fit.kept.size == len(d) and fit.text == text
        return
    n, files = len(d), len(d.headers)
    parts, part_of = _parts(d, counter)
    for f in range(files):  # what each stored part is of, joined again, is that text
        sources = {f: d.preambles[f], n + files + f: d.headers[f]}
        for what, source in sources.items():
            own = [x for x, g in zip(parts, part_of, strict=True) if g == what]
            if what == f:
                what, own = n + f, [x for x, g in zip(parts, part_of, strict=True) if g == n + f]
            assert "".join(re.sub(r"^\[scwo: part \d+ of \d+ of [^\n]*\]\n", "", x) for x in own) in (
                "",
                source,
            )
    for h in range(n):
        header = d.headers[int(d.file_of[h])]
        own = [x for x, g in zip(parts, part_of, strict=True) if g == h]
        assert all(x.startswith(header) for x in own)
        assert all(count_tokens([x])[0] <= PART_TOKENS + count_tokens([header])[0] + 40 for x in own)
        body = "".join(re.sub(r"^\[scwo: part \d+ of \d+ of [^\n]*\]\n", "", x[len(header) :]) for x in own)
        assert body == d.hunks[h]
    whole = set(fit.kept.tolist())
    shown = {int(d.file_of[h]) for h in whole}
    # a file is shown with its preamble and header when a hunk of it is, whole or its first lines
    with_part = shown | {f for f in range(files) if d.headers[f] in fit.text}
    whole |= {
        n + f
        for f in with_part
        if d.preambles[f] and not _cut(d.preambles[f], HEAD_SHARE * budget, counter)[1]
    }
    if d.head and fit.text.startswith(d.head):
        whole.add(n + 2 * files)
    if d.tail.strip() and d.tail in fit.text:  # the text after the diff, shown whole
        whole.add(n + 2 * files + 1)
    dropped = [x for x, g in zip(parts, part_of, strict=True) if g not in whole]
    assert Counter(store.retrieve(fit.key)) == Counter(dropped)  # everything not shown, once
    for f in range(files):  # a file with no hunk shown is named (when the whole list fits)
        if f not in shown and "with no hunk shown:" in fit.text and "more]" not in fit.text:
            assert d.path(f) in fit.text


@pytest.mark.parametrize("budget", [120, 300, 1000, 4000])
def test_real_diffs_fit_and_what_is_left_out_comes_back(budget):
    _check(_licences(), budget)
    _check(_git("log", "-p", "-8"), budget, query="select_texts")


def test_each_file_s_first_hunk_before_any_second_and_the_query_first():
    text = "".join(
        f"diff --git a/f{i}.py b/f{i}.py\n--- a/f{i}.py\n+++ b/f{i}.py\n"
        + "".join(
            f"@@ -{j * 20 + 1},2 +{j * 20 + 1},2 @@\n-old {i} {j}\n+new {i} {j}\n ctx\n" for j in range(6)
        )
        for i in range(8)
    )
    d = split_diff(text)
    order = _order(d, "")
    assert order[:8].tolist() == [6 * i for i in range(8)]  # every file's first hunk, in file order, first
    assert _order(d, "f7.py")[0] == 42  # then the query's file leads
    for budget in (120, 200, 260, 400):
        fit = fit_diff(d, budget)
        if len(set(d.file_of[fit.kept].tolist())) < 8:  # some file shows no hunk: its own did not fit
            assert fit.kept.size <= 8
    plain, wanted = fit_diff(d, 120), fit_diff(d, 120, query="f7.py")
    assert 7 not in d.file_of[plain.kept].tolist() and 7 in d.file_of[wanted.kept].tolist()


def test_a_hunk_too_long_for_the_budget_shows_its_first_lines():
    body = "".join(f"+line {i} of a new file\n" for i in range(3000))
    text = f"diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,3000 @@\n{body}"
    store = CrushStore(":memory:")
    fit = fit_diff(split_diff(text), 300, store=store)
    assert fit.tokens <= 300 and "+line 0 of a new file" in fit.text and "hunk cut after" in fit.text
    back = store.retrieve(fit.key)
    assert fit.kept.size == 0 and len(back) > 1 and back[-1].endswith("+line 2999 of a new file\n")


@st.composite
def diffs(draw):
    """A diff of 1-6 files, each 1-5 hunks; with ``parents`` 2 or 3 a merge's combined diff
    (``diff --cc``, ``@@@``, a column per parent: a line of the result has only spaces and
    ``+``, a removed line only spaces and ``-``)."""
    files = draw(st.integers(1, 6))
    parents = draw(st.sampled_from([1, 1, 2, 3]))
    words = st.text("abcdefgh xyz-+", min_size=0, max_size=30)
    kept = st.tuples(*[st.sampled_from(" +")] * parents).map("".join)
    gone = st.tuples(*[st.sampled_from(" -")] * parents).map("".join).filter(lambda m: "-" in m)
    parts = [draw(st.sampled_from(["", "commit 1234\nAuthor: A <a@b>\n\n    a message\n\n"]))]
    at = "@" * (parents + 1)
    for f in range(files):
        head = f"diff --git a/p{f}.txt b/p{f}.txt\n" if parents == 1 else f"diff --cc p{f}.txt\n"
        parts.append(head + f"index 1..2 100644\n--- a/p{f}.txt\n+++ b/p{f}.txt\n")
        start = 1
        for _ in range(draw(st.integers(1, 5))):
            lines = draw(st.lists(st.tuples(st.one_of(kept, gone), words), min_size=1, max_size=25))
            olds = [
                sum(m[i] == "-" or (m[i] == " " and "-" not in m) for m, _ in lines) for i in range(parents)
            ]
            new = sum("-" not in m for m, _ in lines)
            ranges = " ".join(f"-{start},{old}" for old in olds)
            parts.append(f"{at} {ranges} +{start},{new} {at}\n" + "".join(m + w + "\n" for m, w in lines))
            start += max(olds) + 10
    parts.append(draw(st.sampled_from(["", "* Unmerged path gone.txt\n"])))  # git diff in a conflict
    return "".join(parts)


@settings(max_examples=80, deadline=None)
@given(text=diffs(), budget=st.integers(90, 1500), query=st.sampled_from(["", "p2.txt", "xyz"]))
def test_any_diff_fits_any_budget_and_nothing_is_lost(text, budget, query):
    d = split_diff(text)
    assert _joined(d) == text
    assert len(d) == sum(line.startswith("@@") for line in text.splitlines())  # every hunk read as one
    _check(text, budget, query)


# A merge's ``git show``: git's combined diff (``diff --cc``), two conflicts resolved by hand.
MERGE = """commit 92ca22981c8767fbfb4b74e1bb8da4d2d28db96c
Merge: bf66781 bbb3d3d
Author: t <a@b>
Date:   Sun Nov 29 04:39:54 2026 +0000

    merge side

diff --cc f.txt
index caef545,fda159d..8ce395a
--- a/f.txt
+++ b/f.txt
@@@ -2,7 -2,7 +2,11 @@@ line 
  line 2
  line 3
  line 4
++
 +line 5 (main)
++
+ line five (side)
++
  line 6
  line 7
  line 8
@@@ -27,8 -27,8 +31,13 @@@ line 2
  line 27
  line 28
  line 29
++
 +line 30
 +line 31 main
++
+ line thirty side
+ line 31
++
  line 32
  line 33
  line 34
diff --cc g.txt
index 62ba972,09464f2..4da7e21
--- a/g.txt
+++ b/g.txt
@@@ -1,7 -1,7 +1,7 @@@
-                     GNU GENERAL PUBLIC LICENSE
+                     GNU-side GENERAL PUBLIC LICENSE
                         Version 3, 29 June 2007
  
 - Copyright (C) 2007 Free Software Foundation, Inc. <https://fsf.org/>
 + Copyright (C) 2007 FREE software Foundation, Inc. <https://fsf.org/>
   Everyone is permitted to copy and distribute verbatim copies
   of this license document, but changing it is not allowed.
  
"""  # noqa: W291, W293 (a diff's context lines end in spaces)


def test_a_merge_s_combined_diff_is_read_by_its_columns():
    """``@@@`` hunks, a column per parent: each hunk ends where its line counts say, the
    counts of the files left out are the lines the merge adds and removes."""
    d = split_diff(MERGE)
    assert [d.path(f) for f in range(len(d.headers))] == ["f.txt", "g.txt"]
    assert d.file_of.tolist() == [0, 0, 1] and all(h.startswith("@@@ -") for h in d.hunks)
    assert d.hunks[1].endswith("  line 34\n") and d.hunks[2].endswith("allowed.\n  \n")
    assert _joined(d) == MERGE
    fit = fit_diff(d, 120, store=CrushStore(":memory:"))
    assert count_tokens([fit.text])[0] <= 120
    assert "g.txt (+2 -2)" in fit.text or "g.txt" in fit.text.split("@@@")[0]
    _check(MERGE, 120)


def test_the_marker_is_json_safe_and_names_the_key():
    fit = fit_diff(split_diff(_licences()), 400, store=CrushStore(":memory:"))
    line = fit.text.splitlines()[-1]
    assert line.startswith("[scwo: ") and fit.key in line
    json.dumps(fit.text)
    assert np.all(np.diff(fit.kept) > 0)


def test_files_with_no_hunk_say_what_their_header_says_and_come_back():
    """A rename, a binary and an emptied file have no hunk: the list says what happened to
    them, and their headers are stored."""
    big = "".join(f"+{i} a line of a new file\n" for i in range(400))
    text = (
        "diff --git a/old.md b/new.md\nsimilarity index 100%\nrename from old.md\nrename to new.md\n"
        "diff --git a/logo.png b/logo.png\nindex 1..2 100644\nBinary files a/logo.png and b/logo.png differ\n"
        "diff --git a/big.txt b/big.txt\nnew file mode 100644\n--- /dev/null\n+++ b/big.txt\n"
        f"@@ -0,0 +1,400 @@\n{big}"
    )
    d = split_diff(text)
    assert [d.change(f) for f in range(3)] == ["renamed from old.md", "binary", "new"]
    store = CrushStore(":memory:")
    fit = fit_diff(d, 200, store=store)
    assert "new.md (renamed from old.md)" in fit.text and "logo.png (binary)" in fit.text
    back = store.retrieve(fit.key)
    assert d.headers[0] in back and d.headers[1] in back
    _check(text, 200)


def test_the_text_after_the_diff_is_shown_or_stored():
    """``git diff`` in a merge conflict ends with ``* Unmerged path x`` after the last hunk: it is
    shown when the room allows, and stored otherwise (it was neither)."""
    body = "".join(
        f"diff --cc f{i}.txt\nindex 1,2..0\n--- a/f{i}.txt\n+++ b/f{i}.txt\n@@@ -1,4 -1,4 +1,8 @@@\n"
        + "".join(f"  line {j}\n" for j in range(2))
        + "++<<<<<<< HEAD\n +main\n++=======\n+ side\n++>>>>>>> side\n  line 3\n"
        for i in range(30)
    )
    text = body + "* Unmerged path m_gone.txt\n"
    d = split_diff(text)
    assert d.tail == "* Unmerged path m_gone.txt\n" and len(d) == 30
    for budget in (60, 100, 400):
        store = CrushStore(":memory:")
        fit = fit_diff(d, budget, store=store)
        shown = "* Unmerged path m_gone.txt" in fit.text
        back = store.retrieve(fit.key)
        assert shown != any("* Unmerged path m_gone.txt" in x for x in back)  # shown, or given back: once
        _check(text, budget)
    assert "* Unmerged path m_gone.txt" in fit_diff(d, 400).text  # room for it: shown


def test_files_of_several_commits_are_named_with_their_commit():
    """``git log -p``: one path changed by three commits is named three times, each with its commit."""
    log = "".join(
        f"commit {c * 40}\nAuthor: A <a@b>\nDate:   today\n\n    change {c}\n\n"
        f"diff --git a/big.txt b/big.txt\n--- a/big.txt\n+++ b/big.txt\n@@ -1,2 +1,2 @@\n-old {c}\n+new {c}\n ctx\n"
        for c in "abc"
    )
    fit = fit_diff(split_diff(log), 100)
    listed = fit.text.split("with no hunk shown: ", 1)[1].split("]", 1)[0]
    assert listed == "big.txt (aaaaaaa, +1 -1), big.txt (bbbbbbb, +1 -1), big.txt (ccccccc, +1 -1)"
    one = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"  # no commit: no commit named
    assert (
        "x (+1 -1), y (+1 -1)"
        in fit_diff(split_diff(one + one.replace(" x", " y").replace("/x", "/y")), 30).text
    )


def test_the_names_of_files_with_no_hunk_shown_never_crowd_out_the_hunks():
    """59 file names took 1,462 of 1,969 tokens of a new user's git log -p and no hunk was shown:
    the list is at most a fifth of the budget, and the room goes to the hunks."""
    body = "".join(f"+line {k} of a long new file with words in it\n" for k in range(60))
    diff = "".join(
        f"diff --git a/src/module_{i:03d}/implementation_file.py b/src/module_{i:03d}/implementation_file.py\n"
        f"--- a/src/module_{i:03d}/implementation_file.py\n+++ b/src/module_{i:03d}/implementation_file.py\n"
        f"@@ -0,0 +1,60 @@\n{body}"
        for i in range(80)
    )
    fit = fit_diff(split_diff(diff), 2000)
    line = next(x for x in fit.text.splitlines() if "with no hunk shown" in x)
    assert count_tokens([line])[0] <= 0.2 * 2000 and fit.tokens <= 2000
    assert len(fit.kept) >= 2 or "this hunk cut after" in fit.text


def test_a_commit_s_one_long_message_line_is_shown_before_its_author_and_date():
    """A one-line message of 600 characters over the commit text's share: only whole lines were
    kept, so the hash, Author: and Date: were shown and the message, the one line that says what
    the commit does, was not."""
    subject = "Retrieval: one error for a field no item has " + "and the reasons why, in detail " * 18
    text = (f"commit {'cd' * 20}\nAuthor: A Person <a@example.org>\nDate:   Mon Jan 5 10:00:00 2026 +0000\n\n"
            f"    {subject}\n\ndiff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-a\n+b\n c\n")  # fmt: skip
    store = CrushStore(":memory:")
    for budget in (120, 200):
        fit = fit_diff(split_diff(text), budget, store=store)
        assert fit.tokens <= budget and fit.text.startswith(f"commit {'cd' * 20}\n    Retrieval: one error")
        assert "[scwo: cut here]" in fit.text
