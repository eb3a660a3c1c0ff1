"""Repeated records as text (issue 44): the splitter finds each shape and loses no character; the
crush of records keeps the budget, the newest record and the errors, and the store gives back
exactly what was left out."""

from __future__ import annotations

import json
import os
import re
from email.utils import parsedate_to_datetime
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scwo_np.anchor import CrushStore
from scwo_np.anchor._records import (
    GAP,
    PART_TOKENS,
    chunk_records,
    fit_records,
    records_marker,
    split_records,
)
from scwo_np.tokens import count_tokens

ROOT_DATA = Path(__file__).resolve().parents[1] / "dedup" / "data"

GIT = "Commit history:\n" + "".join(
    f"Commit: {i:040x}\nAuthor: A <a@b>\nDate: 2026-01-{1 + (299 - i) // 12:02d} 10:{(299 - i) % 60:02d}:00+00:00\n"
    f"Message: change number {i}\n\n\n"
    for i in range(300)
)  # newest first, as git writes
RAW_GIT = "".join(
    f"commit {i:040x}\nAuthor: A <a@b>\nDate:   Mon Jan 5 10:{i % 60:02d}:00 2026 +0000\n\n    fix {i}\n\n"
    for i in range(30)
)
CSV = "id,name,level\n" + "".join(f"{i},n{i},{'ERROR' if i == 5 else 'INFO'}\n" for i in range(50))
BLOCKS = "".join(f"Name: pkg{i}\nVersion: 1.{i}\nStatus: ok\n\n" for i in range(20))
LOG = "".join(
    f"2026-02-01 12:{i // 60:02d}:{i % 60:02d} {'ERROR boom' if i % 97 == 50 else 'INFO fine'} {i}\n"
    for i in range(400)
)


@pytest.mark.parametrize(
    "text, shape, n",
    [
        (GIT, "headed", 300),
        (RAW_GIT, "headed", 30),
        (CSV, "table", 50),
        (BLOCKS, "blocks", 20),
        (LOG, "lines", 400),
    ],
)
def test_each_shape_is_found_and_loses_no_character(text, shape, n):
    r = split_records(text)
    assert r is not None and r.shape == shape and len(r) == n
    assert r.head + "".join(r.records) == text
    assert sorted(r.rank.tolist()) == list(range(n))


def test_the_time_order_is_read_from_the_records():
    r = split_records(GIT)
    assert int(np.argmax(r.rank)) == 0  # git's first entry is the newest
    r = split_records(LOG)
    assert int(np.argmax(r.rank)) == 399  # a log's last line is
    assert split_records(CSV).head == "id,name,level\n"


def test_prose_is_not_records():
    prose = (
        "The json module parses text. It returns Python objects. Use loads for strings and load for files. "
        "Errors raise JSONDecodeError, a subclass of ValueError.\n"
    ) * 3
    assert split_records(prose) is None


def test_git_log_within_1000_tokens_holds_the_newest_and_gives_back_every_commit():
    store = CrushStore(":memory:")
    fit = fit_records(split_records(GIT), 1000, store=store)
    assert fit.tokens == count_tokens([fit.text])[0] <= 1000
    assert f"Commit: {0:040x}" in fit.text and fit.key in fit.text
    got, offset = [], 0
    while offset is not None:
        page = store.page(fit.key, budget=400, offset=offset)
        got += page.positions
        offset = page.next_offset
    assert sorted(got + fit.kept.tolist()) == list(range(300))  # every commit, once


def test_a_commit_that_mentions_an_error_is_not_an_error():
    """A commit's message says what it changed: "Fix a crash on empty input" is not a crash. Read for
    error words, 46 of this repository's 300 commits were "errors": kept before the others and
    announced in the marker ("298 of 300 records left out, 46 of them errors")."""
    words = [
        "Fix a crash on empty input",
        "Handle the error when a file is missing",
        "Tests: no failure on CI",
    ]
    raw = "".join(
        f"commit {i:040x}\nAuthor: A <a@b>\nDate:   Mon Jan 5 10:{59 - i:02d}:00 2026 +0000\n\n"
        f"    {words[i % 3]} ({i})\n\n"
        for i in range(60)
    )
    mcp_form = "".join(
        f"Commit: {i:040x}\nAuthor: A <a@b>\nDate: 2026-01-05 10:{59 - i:02d}:00+00:00\nMessage: {words[i % 3]}\n\n"
        for i in range(60)
    )
    for text in (raw, mcp_form):
        r = split_records(text)
        assert r.shape == "headed" and not any(r.level)
        fit = fit_records(r, 150)
        assert fit.tokens <= 150 and "error" not in fit.text.splitlines()[-1]
        assert fit.kept[0] == 0  # the newest
    # the header is still read: a commit whose author field holds an error word is one
    assert split_records(raw.replace("Author: A", "Author: ERROR", 1)).level[0] == "error"


def test_a_changelog_entry_that_mentions_an_error_is_not_an_error():
    """A changelog says what changed, as a commit does: of 400 changelogs in /usr/share/doc, 5,436
    entries read as errors ("Fix error when ...", a maintainer at fatal.se), kept first and counted
    in the marker. Of an entry, its first line and trailer are read; of ``git log --oneline``,
    nothing; a log whose lines end in an address is still a log."""
    text = _changelog()
    entries = split_records(text)
    assert entries.shape == "lines" and entries.records[0].startswith(text.split("\n", 1)[0])
    fixed = text.replace("  * ", "  * Fix a crash and an error in ", 3).replace(
        " -- ", " -- Ann <ann@fatal.se> x ", 1
    )
    assert not any(split_records(fixed).level)
    assert (
        split_records(fixed.replace("; urgency=", " ERROR; urgency=", 1)).level[0] == "error"
    )  # its first line
    assert not any(
        split_records(fixed.replace("urgency=medium", "urgency=critical")).level
    )  # how soon to upload
    gnu = "".join(
        f"2022-04-{d:02d}  Jim Meyering  <meyering@fb.com>\n\n\t* gzip.c: fix a crash when input is empty.\n"
        f"\tzgrep: fail on error.\n\n"
        for d in range(28, 0, -1)
    )
    assert not any(split_records(gnu).level)
    oneline = "".join(f"{i:07x} Fix error {i} in the parser\n" for i in range(30))
    assert not any(split_records(oneline).level)
    # git log --oneline with long subjects (read as prose before): a commit a line, newest first
    said = [
        "records: the newest record of a log is shown whole at every budget when it fits, and its first lines when not",
        "docs: changelogs and names are not read as errors",
        "squeeze_json: each distinct part between strings squeezed once (112 KB: 3.4 -> 2.2 ms)",
        "MCP proxy: blocks that would not split into each one's records when joined stay apart",
        "ruff: imports",
        "scwo select --query: texts counted by a counter are counted by select_texts, which counts the context",
        "changelog: the speed-ups with their figures",
    ]
    subjects = "".join(f"{i * 7919 + 4096:07x} {said[i % 7]} ({i})\n" for i in range(60))
    recs = split_records(subjects)
    assert recs.shape == "lines" and len(recs) == 60 and int(np.argmax(recs.rank)) == 0
    assert fit_records(recs, 200).text.startswith(subjects.split("\n", 1)[0])
    mail = "".join(
        f"2024-05-01 12:00:{i:02d} {'ERROR Failed to deliver' if i % 7 == 0 else 'INFO delivered'} to <u{i}@example.com>\n"
        for i in range(30)
    )
    assert [lv for lv in split_records(mail).level] == ["error" if i % 7 == 0 else "" for i in range(30)]


@pytest.mark.parametrize("day", ["{d} January {y}", "January {d} {y}", "{y}-01-{d:02d}"])
def test_an_upstream_changelog_dated_by_day_is_read_newest_first(day):
    """unbound's changelog heads its entries "18 January 2023: Wouter", libxml2's NEWS "v2.9.14:
    May 02 2022:": with no time of day, they were taken as a log, oldest last, and the newest entry
    was absent at every budget."""
    text = "".join(
        f"{day.format(d=d, y=2000 + y)}: Wouter\n\t- Fix the resolver for case {y}-{d}; it now answers\n"
        f"\t  queries from the cache when the upstream is slow.\n\n"
        for y in range(23, 3, -1)
        for d in (28, 14, 1)
    )
    recs = split_records(text)
    assert int(np.argmax(recs.rank)) == 0  # the first entry is the newest
    for budget in (100, 300):
        fit = fit_records(recs, budget)
        assert fit.tokens <= budget and text.split("\n", 1)[0] in fit.text


def test_copies_of_a_kept_error_are_not_counted_as_errors_left_out():
    """apt's term.log: "debconf: unable to initialize frontend: Dialog" once per package; one is kept
    (copies are said once) and the marker said "6 of them errors" of the copies left out."""
    log = "".join(
        f"Setting up pkg{i} (1.{i}) ...\n"
        + ("debconf: unable to initialize frontend: Dialog\n" if i % 5 == 0 else "")
        for i in range(120)
    )
    fit = fit_records(split_records(log), 150)
    assert fit.tokens <= 150 and fit.text.count("debconf: unable to initialize frontend") == 1
    assert "error" not in fit.text.splitlines()[-1]
    other = log.replace("Setting up pkg7 (1.7) ...", "dpkg: error processing package pkg7 (--configure)")
    fit = fit_records(split_records(other), 40)  # room for one of the two errors: the other is counted
    assert "error processing" not in fit.text and "1 of them an error" in fit.text.splitlines()[-1]
    fit = fit_records(split_records(other), 60)  # both shown: none left out
    assert "error processing" in fit.text and "error" not in fit.text.splitlines()[-1]


def test_errors_survive_and_nothing_is_taken_earliest_first():
    fit = fit_records(split_records(LOG), 200)
    kept = fit.kept.tolist()
    assert fit.tokens <= 200
    assert all(i in kept for i in range(400) if i % 97 == 50)  # the errors
    assert 399 in kept and len([i for i in kept if i < 40]) < len(kept) / 2  # the newest, a spread


def test_a_traceback_stays_with_its_error_and_an_error_is_kept_in_the_smallest_room():
    """Lines with no time after a stamped one continue it; with room for two records, they are the
    newest and an error (a new user's log kept a mid-timeline INFO line and none of its 5 errors)."""
    lines = LOG.splitlines(keepends=True)
    tb = 'Traceback (most recent call last):\n  File "app.py", line 3, in <module>\nValueError: bad state\n'
    text = "".join(lines[:200]) + "2026-02-01 12:03:20 ERROR worker crashed\n" + tb + "".join(lines[200:])
    r = split_records(text)
    assert r.head + "".join(r.records) == text and len(r) == 401
    crashed = [x for x in r.records if "worker crashed" in x]
    assert crashed == ["2026-02-01 12:03:20 ERROR worker crashed\n" + tb]
    smallest = min(b for b in range(20, 200) if fit_records(r, b).kept.size >= 2)
    fit = fit_records(r, smallest)
    assert fit.kept.size == 2 and len(r) - 1 in fit.kept.tolist()
    assert r.level[fit.kept[0]] == "error"
    assert ", 4 of them errors" in fit.text.splitlines()[-1]  # the marker says errors were left out


def test_the_marker_names_every_dropped_position_or_only_the_count():
    assert records_marker(5, [0, 4], "k" * 16).startswith("[scwo: 3 of 5 records left out (positions 1-3)")
    assert records_marker(5, [2], None, ranges=False) == "[scwo: 4 of 5 records left out]"


def test_a_budget_too_small_says_how_much_is_needed():
    with pytest.raises(ValueError, match="give budget >="):
        fit_records(split_records(LOG), 5)


def test_chunks_cut_a_text_with_no_lines():
    r = chunk_records("word " * 500, chars=100)
    assert "".join(r.records) == "word " * 500 and all(len(p) <= 100 for p in r.records)


def test_pieces_of_one_line_cut_apart_are_never_joined_as_one():
    """A compact JSON object kept as pieces read as one valid-looking JSON text with entries missing."""
    line = json.dumps([{"index": i, "duplicate_of": i // 2, "similarity": 1.0} for i in range(400)])
    r = chunk_records(line, chars=400)
    fit = fit_records(r, 200)
    segments = [x for x in re.split(re.escape(GAP) + r"|\n?\[scwo: [^\]]*\]\n?", fit.text) if x]
    assert GAP in fit.text and len(segments) >= 2
    assert all(seg in line for seg in segments)  # each one a stretch of the line, none two joined


@st.composite
def logs(draw):
    n = draw(st.integers(5, 120))
    errors = draw(st.sets(st.integers(0, n - 1), max_size=3))
    lines = [
        f"2026-01-01T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d} {'ERROR failed' if i in errors else 'INFO ok'} "
        + "x" * draw(st.integers(0, 60))
        + "\n"
        for i in range(n)
    ]
    return "".join(lines), errors, n


@given(logs(), st.integers(100, 1500))
def test_budget_newest_errors_and_retrieval_hold_on_any_log(case, budget):
    text, errors, n = case
    recs = split_records(text)
    assert recs is not None and len(recs) == n
    store = CrushStore(":memory:")
    fit = fit_records(recs, budget, store=store)
    assert fit.tokens == count_tokens([fit.text])[0] <= budget  # the budget, marker included
    kept = set(fit.kept.tolist())
    assert all(recs.records[i] in fit.text for i in kept)
    if fit.dropped == 0:
        assert fit.text == text and fit.key is None
        return
    assert n - 1 in kept  # the newest record
    if len(kept) >= 2 * len(errors) + 2:
        assert errors <= kept  # the errors, when there is room
    back = json.loads(store.retrieve_json(fit.key))
    assert back == [recs.records[i] for i in range(n) if i not in kept]  # exactly what was dropped


def _long_newest(n):
    """A ``git log`` of ``n`` commits, the newest with a 3,000-token message."""
    msg = "".join(f"    line {i} of a very long commit message with many words in it.\n" for i in range(300))
    return "".join(
        f"commit {i:040x}\nAuthor: A <a@b>\nDate:   Mon Jan 5 10:{59 - i:02d}:00 2026 +0000\n\n"
        + (msg if i == 0 else f"    fix {i}\n")
        + "\n"
        for i in range(n)
    )


def _rejoined(parts):
    """Stored parts of records, their notes dropped and each record's parts joined again."""
    out = []
    for x in parts:
        m = re.match(r"\[scwo: part (\d+) of \d+ of record \d+\]\n", x)
        if m and int(m.group(1)) > 1:
            out[-1] += x[m.end() :]
        else:
            out.append(x)
    return out


def test_a_record_longer_than_the_budget_does_not_empty_the_text():
    """The newest commit's message is 3,000 tokens: it cannot be kept whole, and the crush fills the
    budget with the others (it used to keep the newest in every size tried, and left 3/4 of the
    budget empty)."""
    recs = split_records(_long_newest(50))
    store = CrushStore(":memory:")
    fit = fit_records(recs, 1000, store=store)
    assert 900 < fit.tokens <= 1000 and 0 not in fit.kept.tolist() and 1 in fit.kept.tolist()
    back = store.retrieve(fit.key)
    assert recs.records[0] in _rejoined(back)  # the long one is stored, in parts a page can hold
    assert all(count_tokens([x])[0] <= PART_TOKENS + 20 for x in back)


def test_the_marker_names_the_positions_retrieval_takes_when_a_record_is_stored_in_parts():
    """A record stored in parts shifts the stored positions: the marker names those (a new user's
    ``start=9, stop=10`` from "positions ... 9" fetched a part of record 2, not record 9)."""
    recs = split_records(_long_newest(50))
    store = CrushStore(":memory:")
    fit = fit_records(recs, 1000, store=store)
    marker = fit.text.splitlines()[-1]
    assert ", stored as " in marker and " parts (positions " in marker
    named = []
    for run in re.search(r"\(positions ([^)]*)\)", marker).group(1).split(", "):
        a, _, b = run.partition("-")
        named += range(int(a), int(b or a) + 1)
    _, at = store.retrieve(fit.key, with_positions=True)
    assert named == at
    one = store.retrieve(fit.key, start=named[-1], stop=named[-1] + 1)
    assert one == [back for back in store.retrieve(fit.key)][-1:]
    assert _rejoined(store.retrieve(fit.key)) == [r for i, r in enumerate(recs.records) if i not in fit.kept]


def test_the_room_left_shows_the_first_lines_of_a_record_too_long_to_keep():
    """Seven commits, the newest with a 3,000-token message: the six others are kept whole, and the
    room they leave shows the newest's first lines, marked as cut; it is still left out whole."""
    recs = split_records(_long_newest(7))
    store = CrushStore(":memory:")
    fit = fit_records(recs, 1000, store=store)
    assert fit.kept.tolist() == [1, 2, 3, 4, 5, 6] and 900 < fit.tokens == count_tokens([fit.text])[0] <= 1000
    shown, note = fit.text.split("[scwo: record 0 cut after ")
    assert recs.records[0].startswith(shown.removesuffix("\n")) and shown.startswith("commit " + "0" * 40)
    lines = len(recs.records[0].rstrip().splitlines())  # its blank lines at the end not counted
    assert note.split(" ", 1)[0].isdigit() and f"of {lines} lines" in note
    assert "; retrieve_dropped gives it back in full]" in note.split("\n", 1)[0]
    assert _rejoined(store.retrieve(fit.key)) == [recs.records[0]]  # still left out, whole
    small = fit_records(recs, 130)  # little room: the newest's first lines still come first
    assert small.text.startswith("commit " + "0" * 40) and small.text.count("[scwo: record 0 cut after") == 1
    assert small.tokens == count_tokens([small.text])[0] <= 130 and small.kept.size >= 1
    alone = fit_records(recs, 1000)  # no store: the note does not send anyone to retrieve_dropped
    assert "[scwo: record 0 cut after " in alone.text and "retrieve_dropped" not in alone.text


def _history():
    """apt's history.log as this machine's: twelve transactions of 40 to 2,200 tokens (packages
    upgraded), the newest of ~330 (a browser upgrade)."""
    sizes = [5, 195, 276, 67, 3, 294, 35, 52, 3, 114, 20, 43]
    return "".join(
        f"Start-Date: 2026-{1 + i:02d}-0{1 + i % 9}  10:00:00\nCommandline: apt-get install pkg{i}\n"
        + "Upgrade: " + ", ".join(f"lib{i}-{k}:amd64 (1.{k}, 1.{k + 1})" for k in range(n)) + "\n"
        + f"End-Date: 2026-{1 + i:02d}-0{1 + i % 9}  10:01:00\n\n"
        for i, n in enumerate(sizes)
    )  # fmt: skip


def test_the_newest_record_too_long_to_keep_whole_is_shown_at_every_budget():
    """apt's history.log at 200 to 300 tokens showed a transaction of six weeks before and not the newest
    (326 tokens): room for the newest's first lines is now kept before the others are chosen."""
    recs = split_records(_history())
    newest = int(np.argmax(recs.rank))
    assert count_tokens([recs.records[newest]])[0] > 300
    for budget in range(100, 340, 20):
        fit = fit_records(recs, budget)
        assert fit.tokens == count_tokens([fit.text])[0] <= budget
        assert f"[scwo: record {newest} cut after " in fit.text, budget
        assert recs.records[newest].splitlines()[0] in fit.text


def test_a_record_that_takes_most_of_the_room_does_not_cut_the_count():
    """A record of ~1,500 tokens became one to choose from at 1,500 tokens, and the crushes that kept it
    overran: apt's history.log showed 6 transactions at 1,200 tokens and 5 at 1,500."""
    recs = split_records(_history())
    counts = [fit_records(recs, b).kept.size for b in range(1000, 3100, 100)]
    assert counts == sorted(counts), counts


def test_lower_case_error_lines_are_errors():
    """dpkg writes its failures in lower case ("dpkg: error processing package ...", "Errors were
    encountered while processing:"); a new user's inserted one was neither kept nor counted."""
    pkgs = ("libfoo", "liberror-perl", "libgpg-error-dev", "liberror-prone-java")  # names, not errors
    ok = [
        f"2026-11-27 10:{i // 60:02d}:{i % 60:02d} status installed {pkgs[i % 4]}{i}:amd64 1.{i}\n"
        for i in range(600)
    ]
    bad = [
        "2026-11-27 10:05:00 dpkg: error processing package postgresql-15 (--configure):\n",
        "2026-11-27 10:06:00 Errors were encountered while processing:\n",
        "2026-11-27 10:07:00 installed postgresql-15 package post-installation script subprocess returned error "
        "exit status 1\n",
    ]
    text = "".join(ok[:300] + bad + ok[300:])
    r = split_records(text)
    assert [r.level[k] for k, x in enumerate(r.records) if x in bad] == ["error"] * 3
    assert sum(lv == "error" for lv in r.level) == 3  # and "status installed liberror-perl" lines are not
    for budget in (200, 300):
        fit = fit_records(r, budget)
        assert sum(r.level[k] == "error" for k in fit.kept.tolist()) == 3
        assert fit.text.splitlines()[-1].endswith("records left out]")  # no error among those left out


PS = "USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\n" + "".join(
    f"{'root' if i % 3 else 'www-data':<8} {100 + 7 * i:>7} {i % 5:>4}.{i % 10} {i % 3:>3}.{i % 7} {1000 * i:>6} "
    f"{40 * i:>5} {'?' if i % 4 else 'pts/0':<8} {'Ssl' if i % 2 else 'S':<4} 01:32   0:{i % 60:02d} "
    f"{'/usr/sbin/nginx -g daemon on; master_process on;' if i % 5 == 0 else f'[kworker/u8:{i}-events]'}\n"
    for i in range(120)
)


@pytest.mark.parametrize(
    "text, n",
    [
        (PS, 120),
        (
            "  PID TTY          TIME CMD\n"
            + "".join(f"{p:>5} ?        00:00:0{p % 10} kworker/{p}\n" for p in range(1, 90)),
            89,
        ),
        (
            "Filesystem      Size  Used Avail Use% Mounted on\n"
            + "".join(
                f"/dev/vd{c}1        {10 + i}G  {i}.1G  {9}G  {10 + i}% /mnt/d{i}\n"
                for i, c in enumerate("abcdefg")
            ),
            7,
        ),
    ],
)
def test_a_table_in_columns_of_spaces_keeps_its_header_and_whole_rows(text, n):
    """``ps aux`` read as prose had pieces of different rows joined into one (a row that was not)."""
    r = split_records(text)
    assert r.shape == "table" and len(r) == n and r.head == text.splitlines(keepends=True)[0]
    fit = fit_records(r, 150)
    rows = set(text.splitlines())
    shown = fit.text.splitlines()
    assert shown[0] == text.splitlines()[0] and fit.tokens <= 150
    assert all(ln in rows for ln in shown if not ln.startswith("[scwo:"))


def test_prose_and_man_pages_are_not_tables():
    page = "LS(1)                User Commands                LS(1)\n\nNAME\n       ls - list directory contents\n\n"
    page += (
        "       List information about the FILEs (the current directory by default), sorted by name.\n" * 12
    )
    assert split_records(page) is None or split_records(page).shape != "table"


DPKG_STATUS = "/var/lib/dpkg/status"


@pytest.mark.skipif(not os.path.exists(DPKG_STATUS), reason="no /var/lib/dpkg/status on this machine")
def test_package_paragraphs_are_whole_records_and_a_description_is_not_an_error():
    """/var/lib/dpkg/status (hundreds of blank-line-separated ``key: value`` paragraphs): a paragraph
    whose Description is folded over indented lines was "not a block" (209 of 735 here), so the file
    was cut into 10,072 lines, a kept line rarely a ``Package:`` one, and valgrind's "a memory error
    detector" made 9 of them "errors". Each paragraph is one record; an error word in a field that
    describes a thing (the JSON crush's rule) is not an error, one in another field is."""
    with open(DPKG_STATUS, encoding="utf-8", errors="replace") as f:
        text = f.read()
    paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    r = split_records(text)
    assert r is not None and r.shape == "blocks" and len(r) == len(paragraphs)
    assert all(x.startswith("Package: ") for x in r.records)
    assert not any(r.level)
    for budget in (500, 2000):
        fit = fit_records(r, budget)
        assert fit.tokens <= budget and fit.text.count("Package: ") == len(fit.kept) >= 1
        assert "error" not in fit.text.splitlines()[-1]
    # a real error in a field that is not a description still counts
    broken = r.records[: len(r) // 2] + [r.records[0].replace("Status: ", "Status: error ", 1)]
    assert split_records("".join(broken)).level[-1] == "error"


TERM_LOG = "/var/log/apt/term.log"


@pytest.mark.skipif(not os.path.exists(TERM_LOG), reason="no /var/log/apt/term.log on this machine")
def test_a_progress_line_is_one_record_shown_in_its_last_state_and_copies_are_kept_once():
    """apt's terminal log: "(Reading database ... \\r(Reading database ... 5%\\r ..." was cut at every
    carriage return into records ("(Reading database ... 90%"), and at 500 tokens "debconf: unable to
    initialize frontend: Dialog" and "...: Readline" were kept 4 times each (8 of 33 lines), where the
    JSON crush keeps one copy of identical items."""
    with open(TERM_LOG, "rb") as f:
        text = f.read().decode("utf-8", errors="replace")
    if not re.search(r"\r(?!\n)", text):
        pytest.skip("this term.log has no progress line")
    r = split_records(text, shape="lines")
    starts = np.cumsum([0, *map(len, r.records)])[:-1]
    assert all(text[s - 1] == "\n" for s in starts[1:])  # every record starts a line
    for budget, query in ((500, ""), (300, "Reading database")):
        fit = fit_records(r, budget, query=query)
        lines = [ln for ln in fit.text.splitlines() if ln.strip()]
        kept = [r.records[k].strip() for k in fit.kept.tolist()]
        assert fit.tokens <= budget and len(lines) == len(set(lines)) and len(kept) == len(set(kept)) > 10
        assert not re.search(r"\r(?!\n)", fit.text)  # a progress line in its last state
        assert not any(re.match(r"\(Reading database \.\.\. \d+%", ln) for ln in lines)
    assert any("files and directories currently installed" in ln for ln in lines)  # the query's, last states
    # read with Python's newline translation (as the user's server did), each state is a line; still one copy each
    plain = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = [ln for ln in fit_records(split_records(plain), 500).text.splitlines() if ln.strip()]
    assert len(lines) == len(set(lines)) > 10


def _changelog(n=40):
    """A Debian changelog of ``n`` entries, newest first as Debian writes it: entries of real
    changelogs (``tests/dedup/data/debian_changelog_entries.jsonl``), ordered by their trailers' dates."""
    rows = [json.loads(line) for line in open(ROOT_DATA / "debian_changelog_entries.jsonl", encoding="utf-8")]
    dated = [(parsedate_to_datetime(r["text"].rsplit(">", 1)[1].strip()), r["text"]) for r in rows[:n]]
    return "\n\n".join(t for _, t in sorted(dated, key=lambda x: x[0], reverse=True)) + "\n"


def test_a_debian_changelog_is_read_newest_first_by_its_dates():
    """apt's and git's changelogs (newest entry first, dated in each entry's trailer, RFC 2822) were
    taken oldest first: their newest entry was never shown, their oldest at every budget."""
    text = _changelog()
    recs = split_records(text)
    first = text.split("\n", 1)[0]
    assert recs.records[0].startswith(first) and int(np.argmax(recs.rank)) == 0  # the first is the newest
    for budget in (150, 300, 600, 1000):
        fit = fit_records(recs, budget, store=CrushStore(":memory:"))
        assert fit.tokens <= budget and first in fit.text, budget


def test_a_table_under_a_legend_keeps_its_header_and_does_not_read_descriptions_as_errors():
    """``dpkg -l``: three lines of legend, the column names, a rule; its rows were shown without the
    names, and "a fast memory error detector" (libasan8's description) made a row an error."""
    legend = (
        "Desired=Unknown/Install/Remove/Purge/Hold\n"
        "| Status=Not/Inst/Conf-files/Unpacked/halF-conf/Half-inst/trig-aWait/Trig-pend\n"
        "|/ Err?=(none)/Reinst-required (Status,Err: uppercase=bad)\n"
        "||/ Name            Version        Architecture Description\n"
        "+++-===============-==============-============-===================================\n"
    )
    rows = [f"ii  pkg{i:<12} 1.{i:<12} amd64        a library for thing number {i}\n" for i in range(60)]
    rows[20] = (
        "ii  libasan8        12.2.0-14      amd64        AddressSanitizer -- a fast memory error detector\n"
    )
    recs = split_records(legend + "".join(rows))
    assert recs.shape == "table" and recs.head == legend and recs.level[20] == ""
    fit = fit_records(recs, 200)
    assert fit.text.startswith(legend) and fit.tokens <= 200


def _release_notes(dated: int, undated: int) -> str:
    """A changelog as argcomplete's and wget's are written: a title, then releases newest first,
    each a heading and its bullets; the oldest releases have no day."""
    out = ["Changelog for a tool\n\n"]
    for k in range(dated + undated, 0, -1):
        if not undated:
            out.append(f"Changes for v2.{k}.0 ({2000 + k}-0{1 + k % 9}-1{k % 10})\n{'=' * 32}\n\n")
        elif k > undated:
            out.append(f"* Noteworthy changes in release 2.{k} ({2000 + k}-0{1 + k % 9}-1{k % 10})\n\n")
        else:
            out.append(f"* Changes in tool 1.{k}\n\n")
        out += [
            f"-  Don't crash when the cache of v{k} is empty (#{k}1)\n\n",
            f"-  Support path completion in shell {k}\n\n",
        ]
    return "".join(out)


@pytest.mark.parametrize("undated", [0, 6])
def test_a_changelog_of_bulleted_releases_is_read_a_release_a_record_newest_first(undated):
    """argcomplete's changelog (``Changes for v2.0.0 (2022-01-03)``, ``=====``, then bullets) was
    read a line a record with few dates: the bullets ranked by place, the oldest release's taken for
    the newest; at 400 tokens the newest release was absent, and "Don't crash" bullets were errors.
    wget's NEWS dates only its newest releases (``* Changes in Wget 1.20.3`` before them)."""
    text = _release_notes(8, undated)
    recs = split_records(text)
    assert recs.shape == "sections" and len(recs) == 8 + undated
    assert recs.head == "Changelog for a tool\n\n" and all(lv == "" for lv in recs.level)
    assert int(np.argmax(recs.rank)) == 0 and int(np.argmin(recs.rank)) == len(recs) - 1
    newest = recs.records[0]
    for budget in (60, 120, 400):
        fit = fit_records(recs, budget)
        assert fit.tokens <= budget and newest.split("\n", 1)[0] in fit.text
        assert "error" not in fit.text.splitlines()[-1]


def test_a_release_heading_with_its_title_above_and_a_long_preamble():
    """Python's NEWS: ``What's New in Python 3.11.2 final?``, its rule, a blank line, then
    ``*Release date: 2023-02-07*``: the title starts the section; a preamble of more than three
    lines is a record, the oldest (not news), and not the head that every fit shows."""
    notes = "".join(
        f"What's New in Python 3.11.{k} final?\n{'=' * 34}\n\n*Release date: 2023-0{k}-07*\n\n"
        f"- gh-issue-{k}00: Fix a crash in the parser of release {k}.\n\n"
        for k in range(9, 1, -1)
    )
    preamble = "".join(f"Line {i} of notes on how to read this file, before any release.\n" for i in range(6))
    recs = split_records(preamble + "\n" + notes)
    assert recs.shape == "sections" and recs.head == ""
    assert recs.records[1].startswith("What's New in Python 3.11.9 final?")
    assert int(recs.rank[0]) == 0 and int(np.argmax(recs.rank)) == 1
    assert split_records(notes).records[0].startswith("What's New in Python 3.11.9")


def test_logs_and_prose_with_days_are_not_changelogs():
    """Lines stamped with a day and a time are a log's; a text with a few days is not a changelog."""
    log = "".join(f"2026-01-0{1 + i // 40} 10:{i % 60:02d}:00 INFO job {i} done\n" for i in range(120))
    assert split_records(log).shape == "lines"
    prose = (
        "".join(
            f"On 2026-01-0{1 + i} the team met again and agreed on the plan for part {i} of the manual.\n\n"
            for i in range(3)
        )
        + "A paragraph of the manual that says what it is for and how to read it.\n\n" * 20
    )
    got = split_records(prose)
    assert got is None or got.shape != "sections"


def test_log_lines_that_start_with_the_programs_name_are_log_lines():
    """update-alternatives writes ``update-alternatives 2025-06-24 14:36:53: run with ...``: its log
    was cut into pieces, and beside a man page in one MCP result the proxy merged both as prose, the
    log's newest line lost."""
    log = "".join(
        f"update-alternatives 2025-06-{1 + i // 10:02d} 14:{i % 60:02d}:53: "
        + (
            "run with --quiet --install /usr/bin/pager pager /usr/bin/less 77 --slave "
            "/usr/share/man/man1/pager.1.gz pager.1.gz /usr/share/man/man1/less.1.gz"
            if i % 2
            else f"link group pager{i} updated to point to /usr/bin/less"
        )
        + "\n"
        for i in range(120)
    )
    recs = split_records(log)
    assert recs.shape == "lines" and len(recs) == 120 and int(np.argmax(recs.rank)) == 119
    fit = fit_records(recs, 150)
    assert fit.tokens <= 150 and log.splitlines()[-1] in fit.text


@pytest.mark.parametrize(
    "line",
    [
        '203.0.113.{i} - - [30/Nov/2026:10:{m:02d}:{s:02d} +0000] "GET /api/items/{i} HTTP/1.1" {status} 612 "-" "curl/7.88.1"',
        "2026-11-30 10:{m:02d}:{s:02d},{i:03d} - app.worker - {level} - job {i} done",
        "[Mon Nov 30 10:{m:02d}:{s:02d}.{i:06d} 2026] [core:{level}] [pid {i}] AH00{i:03d}: request {i}",
    ],
)
def test_access_logs_python_logging_and_apache_error_logs_are_log_lines(line):
    """A web server's access log (its 5xx status, not an error word, says the request failed) was
    pieces, its 500 left out; Python's logging format (``... ,123 - name - INFO - ...``) and Apache's
    error log were tables, their first line taken for a header and shown at every budget."""
    log = "".join(
        line.format(
            i=i, m=i // 60, s=i % 60, status=500 if i == 150 else 200, level="ERROR" if i == 150 else "info"
        )
        + "\n"
        for i in range(400)
    )
    recs = split_records(log)
    assert recs.shape == "lines" and recs.head == "" and len(recs) == 400
    assert recs.level[150] == "error" and recs.level.count("error") == 1
    fit = fit_records(recs, 300)
    lines = log.splitlines()
    assert fit.tokens <= 300 and lines[150] in fit.text and lines[-1] in fit.text


def test_a_news_file_headed_by_versions_is_read_a_release_a_record_newest_first():
    """GLib's NEWS heads its releases ``Overview of changes in GLib 2.74.6`` over a rule, with no
    day: read a line a record, the end of the file (GLib 1.x) was taken for the newest, and its
    bullets ("Fix a crash ...") were 164 errors in the marker."""
    text = "".join(
        f"Overview of changes {'in' if k > 3 else 'from'} GLib 2.{k}.0\n{'=' * 34}\n\n* Bugs fixed:\n"
        f"  - #{k}01 Fix a crash in g_file_copy when the target {k} is missing\n"
        f"  - #{k}02 gdbus: error on an empty reply {k}\n\n"
        for k in range(40, 0, -1)
    )
    recs = split_records(text)
    assert recs.shape == "sections" and len(recs) == 40 and int(np.argmax(recs.rank)) == 0
    fit = fit_records(recs, 200)
    assert fit.tokens <= 200 and "Overview of changes in GLib 2.40.0" in fit.text
    assert "error" not in fit.text.splitlines()[-1]


def test_a_title_dated_as_the_newest_release_is_the_head():
    """tar's NEWS opens ``GNU tar NEWS - User visible changes. 2021-02-13``, the day of its newest
    release: taken for a release, it was the newest, and the real newest release was left out."""
    title = (
        "GNU tar NEWS - User visible changes. 2021-02-13\nPlease send bug reports to <bug-tar@gnu.org>\n\n"
    )
    body = "".join(
        f"version 1.{k} - Sergey Poznyakoff, {2000 + k - 13}-02-13\n\n* Fix extraction over pipe, case {k}\n\n"
        f"* Fix a memory leak in read_header ({k})\n\n"
        for k in range(34, 14, -1)
    )
    recs = split_records(title + body)
    assert recs.shape == "sections" and recs.head == title and recs.records[0].startswith("version 1.34")
    assert "version 1.34 - Sergey Poznyakoff" in fit_records(recs, 120).text


def test_a_debian_changelog_of_a_few_entries_or_wrapped_prose_is_records():
    """keyutils' changelog (five entries and apt's two-line trailer) and coreutils' (hard-wrapped
    text) were read as prose: sentences spliced with " … ", the newest entry's text replaced by old."""
    entry = (
        "keyutils (1.6.{k}-1) unstable; urgency=medium\n\n  * Bump Standards-Version to 4.6.{k} (no changes\n"
        "    needed), and refresh the patches that the new upstream release made obsolete.\n\n"
        " -- Christian Kastner <ckk@debian.org>  Sun, {d:02d} Dec 2022 22:15:58 +0100\n\n"
    )
    text = "".join(entry.format(k=k, d=10 + k) for k in range(5, 0, -1))
    text += "# Older entries have been removed from this changelog.\n# To read the complete changelog use `apt changelog keyutils`.\n"
    recs = split_records(text)
    assert recs.shape == "lines" and recs.records[0].startswith("keyutils (1.6.5-1)")
    assert int(np.argmax(recs.rank)) == 0


def test_key_value_blocks_after_a_request_stanza_are_blocks():
    """apt's EIPP log opens with a ``Request: EIPP 0.1`` stanza, whose first line read as the header
    of a table in columns of spaces: 5,304 line records, packages' fields mixed together."""
    text = "Request: EIPP 0.1\nArchitecture: amd64\nArchitectures: amd64\nInstall: chromium:amd64\nPlanner: internal\n\n"
    text += "".join(
        f"Package: pkg{i}\nArchitecture: amd64\nVersion: 1.{i}-1\nAPT-ID: {100 + i}\nStatus: installed\n\n"
        for i in range(60)
    )
    recs = split_records(text)
    assert recs.shape == "blocks" and len(recs) == 61
    fit = fit_records(recs, 150)
    assert fit.tokens <= 150 and "Package: pkg59\nArchitecture: amd64\nVersion: 1.59-1" in fit.text
