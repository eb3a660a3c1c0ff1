"""Issue 40, part 3 from the command line: ``scwo crush --retrieve`` filters first, then pages.

On a real package-manager log (``scwo_evals/data/tool_outputs/dpkg_log.jsonl``, 3,000 records of
this machine's ``/var/log/dpkg.log``); every answer is checked against a plain filter over the
items the crush dropped.
"""

import contextlib
import io
import json
import pathlib
import re

import pytest

from scwo_np.anchor import CrushStore
from scwo_np.cli import main
from scwo_np.cli._crush import _parse_where
from scwo_np.tokens import count_tokens

LOG = pathlib.Path(__file__).parents[2] / "scwo_evals" / "data" / "tool_outputs" / "dpkg_log.jsonl"


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def crushed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("retrieve")
    items = [json.loads(line) for line in LOG.read_text().splitlines() if line.strip()]
    doc = tmp / "log.json"
    doc.write_text(json.dumps(items))
    store = tmp / "crush.sqlite"
    status, out, err = _run(["crush", str(doc), "--budget", "800", "--store", str(store)])
    assert status == 0
    key = json.loads(out)[-1]["_omitted"]["key"]
    with CrushStore(str(store)) as s:
        dropped = s.positions(key)
    assert 0 < len(dropped) < len(items)
    return items, str(store), key, dropped


def _naive(items, positions, test):
    return [items[p] for p in positions if test(items[p])]


CASES = [
    (["action=install"], lambda r: r.get("action") == "install"),
    (["package~libc"], lambda r: "libc" in str(r.get("package", ""))),
    (["ts>=2026-05-01"], lambda r: "ts" in r and r["ts"] >= "2026-05-01"),
    (["ts>=2026-05-01", "ts<2026-06-01"], lambda r: "ts" in r and "2026-05-01" <= r["ts"] < "2026-06-01"),
    (["pending?"], lambda r: "pending" in r),
    (["!pending?", "action=status"], lambda r: "pending" not in r and r.get("action") == "status"),
    (["action=install", "package~python3"], lambda r: r.get("action") == "install" and "python3" in r.get("package", "")),
]  # fmt: skip


@pytest.mark.parametrize("conds, test", CASES, ids=[" ".join(c) for c, _ in CASES])
def test_filters_then_pages_as_a_plain_filter_over_the_dropped_items(crushed, conds, test):
    items, store, key, dropped = crushed
    base = ["crush", "--retrieve", key, "--store", store, *(x for c in conds for x in ("--where", c))]
    want = _naive(items, dropped, test)
    assert want, conds  # each case matches something on this log
    status, out, err = _run(base)
    assert status == 0 and json.loads(out) == want
    for page in (["--range", "0:3"], ["--range", "2:5"], ["--offset", "1", "--limit", "2"], ["--range", "4"]):
        status, out, _ = _run([*base, *page])
        a = int(page[1].split(":")[0])
        b = (
            a + int(page[3])
            if page[0] == "--offset"
            else (int(page[1].split(":")[1]) if ":" in page[1] else a + 1)
        )
        assert status == 0 and json.loads(out) == want[a:b], page
    status, out, _ = _run([*base, "--all"])
    assert json.loads(out) == _naive(items, range(len(items)), test)


def test_the_issue_example_where_then_range_gives_the_first_three_installs(crushed):
    items, store, key, dropped = crushed
    status, out, _ = _run(
        ["crush", "--retrieve", key, "--store", store, "--where", "action=install", "--range", "0:3"]
    )
    got = json.loads(out)
    assert status == 0 and len(got) == 3 and all(r["action"] == "install" for r in got)
    assert got == _naive(items, dropped, lambda r: r.get("action") == "install")[:3]


def test_fields_project_each_item(crushed):
    items, store, key, dropped = crushed
    argv = [
        "crush",
        "--retrieve",
        key,
        "--store",
        store,
        "--where",
        "action=install",
        "--fields",
        "ts,package",
    ]
    status, out, _ = _run(argv)
    want = [
        {k: r[k] for k in ("ts", "package") if k in r}
        for r in _naive(items, dropped, lambda r: r.get("action") == "install")
    ]
    assert status == 0 and json.loads(out) == want


def test_token_pages_walk_every_match_once_within_the_ceiling(crushed):
    items, store, key, dropped = crushed
    want = _naive(items, dropped, lambda r: r.get("action") == "status")
    base = ["crush", "--retrieve", key, "--store", store, "--where", "action=status", "--budget", "300"]
    got, offset, pages = [], 0, 0
    while True:
        status, out, err = _run([*base, "--offset", str(offset)])
        assert status == 0
        assert count_tokens([out.rstrip("\n")], "estimate")[0] <= 300
        got += json.loads(out)
        pages += 1
        m = re.search(r"(\d+) more match \(next page: --offset (\d+)\)", err)
        if m is None:
            assert err == ""
            break
        assert int(m.group(1)) == len(want) - len(got)
        offset = int(m.group(2))
    assert got == want and pages > 1


def test_where_syntax_maps_to_the_store_structure():
    assert _parse_where(["action=install", "package~libc", "size>=100", "size<200", "error?", "!x?", "n=5", 's="5"',
                         "a=b=c", "when>2026-01-01T00:00", "ok=true"]) == {
        "action": "install", "package": {"contains": "libc"}, "size": {"gte": 100, "lt": 200},
        "error": {"exists": True}, "x": {"exists": False}, "n": 5, "s": "5", "a": "b=c",
        "when": {"gt": "2026-01-01T00:00"}, "ok": True,
    }  # fmt: skip


@pytest.mark.parametrize(
    "argv, match",
    [(["--where", "oops"], r"--where takes FIELD=VALUE, FIELD~TEXT, FIELD>=N"),
     (["--where", "size>="], r"--where 'size>=': >= takes a number or an ISO date/time"),
     (["--where", "package>>z"], r"--where 'package>>z': one operator per condition"),
     (["--where", "a=1", "--where", "a=2"], r"--where gives a two different 'eq' conditions"),
     (["--range", "5:2"], r"--range 5:2: STOP must be above START"),
     (["--range", "1:3", "--limit", "2"], r"--range START:STOP is --offset START --limit STOP-START"),
     (["--fields", ","], r"--fields takes comma-separated field names"),
     (["--max-items", "3"], r"--max-items does not go with --retrieve")],
)  # fmt: skip
def test_bad_retrieval_options_are_one_line(crushed, argv, match):
    _, store, key, _ = crushed
    status, out, err = _run(["crush", "--retrieve", key, "--store", store, *argv])
    assert status == 2 and out == "" and err.count("\n") == 1 and re.search(match, err), err


def test_retrieval_options_without_retrieve_are_refused(tmp_path):
    doc = tmp_path / "a.json"
    doc.write_text('[{"a": 1}, {"a": 2}]')
    for opt in (["--where", "a=1"], ["--fields", "a"], ["--all"], ["--offset", "2"], ["--positions", "1:2"]):
        for mode in (["--max-items", "1"], ["--budget", "50"]):
            status, _, err = _run(["crush", str(doc), *mode, *opt])
            assert status == 2 and "goes with --retrieve" in err, (opt, mode, err)


def test_a_store_that_is_not_there_is_named_and_not_made(tmp_path):
    """A misspelt --store used to create an empty store and blame the key."""
    typo = tmp_path / "crush_stor.sqlite"
    status, out, err = _run(["crush", "--retrieve", "0123456789abcdef", "--store", str(typo)])
    assert status == 2 and out == "" and f"--store {typo}: no such file" in err and not typo.exists()
    doc = tmp_path / "a.json"
    doc.write_text('[{"a": 1}, {"a": 2}]')
    status, _, err = _run(["crush", str(doc), "--max-items", "1", "--no-store", "--store", str(typo)])
    assert status == 2 and "--no-store and --store" in err and not typo.exists()
