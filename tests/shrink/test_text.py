"""shrink_text: a text within the budget by its shape (JSON, diffs, records, prose); what was
left out comes back from the store.  (The proxy's use of it on a CallToolResult: tests/mcp_server/test_shrink.py.)"""

from __future__ import annotations

import difflib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shrink_samples import LOG, PROSE, ROWS
from shrink_samples import tokens as _tokens

from scwo_np.anchor import CrushStore
from scwo_np.shrink import MODES, call_query, shrink_text
from scwo_np.tokens import count_tokens


@pytest.mark.parametrize(
    "text, form",
    [(json.dumps(ROWS), "crushed"), (LOG, "records"), (PROSE, "prose"), ("x" * 20_000, "pieces")],
    ids=["json", "records", "prose", "pieces"],
)
def test_each_shape_fits_and_what_was_left_out_comes_back(text, form):
    store = CrushStore(":memory:")
    s = shrink_text(text, 300, query="git merges errors", store=store)
    assert s.form == form and _tokens(s.text) == s.tokens <= 300 < s.tokens_before
    assert s.key is not None and s.key in s.text and s.kept < s.of
    back = store.retrieve(s.key)
    assert len(back) == s.of - s.kept


def test_lossless_first():
    small = [{"id": i, "name": f"item number {i}", "kind": "book"} for i in range(60)]
    pretty = json.dumps(small, indent=4)
    s = shrink_text(pretty, _tokens(json.dumps(small, separators=(",", ":"))) + 5)
    assert s.form in ("compact", "lossless", "csv") and s.kept == s.of == 60 and s.key is None
    csvable = [{"name": f"n{i}", "city": ["Oslo", "Rome", "Lima"][i % 3], "n": i} for i in range(200)]
    s = shrink_text(str(csvable), 800)  # a Python repr, as some SQL servers print rows
    assert s.form == "csv" and s.text.startswith("name,city,n\nn0,Oslo,0\n")


def test_rows_an_sql_statement_returned_are_not_ranked_by_its_words():
    """mcp-server-sqlite's ``read_query`` with ``select * from packages``: the statement's word
    "packages" made 51 rows whose e-mail address held it "query matches", and the marker told the
    model that 51 of them were left out."""
    rows = [
        {
            "Package": f"p{i}",
            "Maintainer": f"M <m{i}@{'packages.debian.org' if i % 7 == 0 else 'example.org'}>",
        }
        for i in range(400)
    ]
    asked = shrink_text(str(rows), 300, query=call_query("read_query", {"query": "select * from packages"}))
    plain = shrink_text(str(rows), 300)
    assert asked.text == plain.text and "query_matches" not in asked.text


def test_errors_and_the_newest_survive_the_json_crush():
    s = shrink_text(json.dumps(ROWS), 250)
    kept = [x for x in json.loads(s.text) if "_omitted" not in x]
    assert ROWS[77] in kept and ROWS[-1] in kept


def test_call_query_and_modes():
    assert call_query("read_query", {"query": "SELECT *", "limit": 5}) == "read_query SELECT * 5"
    # a whole statement is what the rows answer, not a question about them
    for sql in ("select * from packages", "SELECT name, count(*) AS n FROM t GROUP BY name", "PRAGMA table_info(t)",
                "WITH x AS (SELECT 1) SELECT * FROM x", "delete from t where id = 1"):  # fmt: skip
        assert call_query("read_query", {"query": sql, "limit": 5}) == "read_query 5"
    for words in ("select the latest fixes from the log", "Select rows with errors", "update the docs set"):
        assert call_query("search", {"q": words}) == f"search {words}"
    assert list(MODES) == ["auto", "json", "diff", "records", "prose", "off"]
    with pytest.raises(ValueError, match="mode must be one of"):
        shrink_text(LOG, 200, mode="lines")
    with pytest.raises(ValueError, match="at least 64"):
        shrink_text(LOG, 10)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.text(alphabet='abc de.\n{}[]":,0123', min_size=1, max_size=300), min_size=1, max_size=40),
    st.integers(64, 600),
    st.sampled_from(list(MODES)),
)
def test_any_text_fits_the_budget_in_every_mode(parts, budget, mode):
    text = "".join(parts) * 3
    s = shrink_text(text, budget, mode=mode)
    if mode == "off" or s.tokens_before <= budget:
        assert s.text == text
    else:
        assert _tokens(s.text) == s.tokens <= budget


GPL = "/usr/share/common-licenses/GPL-3"  # hard-wrapped prose every Debian system has (base-files)


@pytest.mark.skipif(not os.path.exists(GPL), reason="no /usr/share/common-licenses/GPL-3 on this machine")
def test_hard_wrapped_prose_is_prose_by_sentences_and_every_piece_comes_back():
    """A plain-text manual (wrapped lines, indented paragraphs) is prose, not a list of records;
    its sentences are whole (not line fragments), none is over a quarter of the budget, and
    paging retrieve_dropped at a small budget gives every left-out piece back."""
    text = open(GPL, encoding="utf-8").read()
    store = CrushStore(":memory:")
    s = shrink_text(text, 600, query="read_doc GPL-3 conveying verbatim copies", store=store)
    assert s.form == "prose" and s.tokens <= 600 and "verbatim" in s.text.lower()
    assert "Conveying Verbatim Copies" in text and s.of > 100
    back, offset = [], 0
    while offset is not None:
        page = store.page(s.key, budget=300, offset=offset)
        back += page.items
        offset = page.next_offset
    assert len(back) == s.of - s.kept and all(_tokens(x) <= 150 + 5 for x in back)


LICENCES = [f"/usr/share/common-licenses/{n}" for n in ("GPL-3", "GPL-2", "LGPL-2.1", "Apache-2.0")]


@pytest.mark.skipif(not all(map(os.path.exists, LICENCES)), reason="no Debian base-files licences here")
@pytest.mark.volume  # thousands of sentences: 5 minutes in the no-JIT leg (tests/legs.py)
@pytest.mark.parametrize("share", [0.3, 0.6, 0.9])
def test_a_large_budget_is_filled_with_prose(share):
    """The sentences weighed grow with the budget: a budget of most of a long text is mostly used
    (a fixed pool of 240 sentences kept 8,660 tokens of bash(1) at any budget from 10,000)."""
    text = "\n\n".join(open(p, encoding="utf-8").read() for p in LICENCES)
    budget = int(share * _tokens(text))
    s = shrink_text(text, budget, query="read_doc licences")
    assert s.form == "prose" and s.of > 500 and 0.9 * budget <= s.tokens <= budget


def _git_show() -> str:
    root = Path(__file__).resolve().parents[2]
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("not a git clone")
    out = subprocess.run(["git", "show", "HEAD~1"], cwd=root, capture_output=True, text=True, check=False)
    if out.returncode or not out.stdout:
        pytest.skip("git show gave nothing")
    return out.stdout


def _licences() -> str:
    root = Path(__file__).resolve().parents[2]
    a = (root / "data-gpl" / "LICENSE").read_text(encoding="utf-8").splitlines(keepends=True)
    b = (root / "data-gpl" / "LICENSE-GFDL-1.3").read_text(encoding="utf-8").splitlines(keepends=True)
    return "".join(difflib.unified_diff(a, b, "a/LICENSE", "b/LICENSE-GFDL-1.3", n=3))


@pytest.mark.parametrize("budget", [64, 65, 70, 100])
@pytest.mark.parametrize("mode", ["auto", "diff"])
def test_the_smallest_budgets_hold_for_a_commit_and_its_diff(budget, mode):
    text = _git_show()
    got = shrink_text(text, budget, mode=mode, store=CrushStore(":memory:"))
    assert got.tokens == count_tokens([got.text])[0] <= budget


def test_the_proxy_reads_a_diff_as_a_diff():
    text = _licences()
    got = shrink_text(text, 500, query="git_diff")
    assert got.form == "diff" and got.what == "hunks" and got.tokens <= 500
    assert "--- a/LICENSE" in got.text and "+++ b/LICENSE-GFDL-1.3" in got.text
    assert "diff" in MODES
    assert shrink_text(text, 500, mode="records").form != "diff"


def test_a_pretty_printed_array_is_crushed_compact():
    """An SDK server's list result comes indented by 2: its kept items were shown as they came, half
    of their tokens spaces."""
    items = [{"id": i, "name": f"package-{i}", "version": f"1.{i}.0", "status": "ERROR" if i == 77 else "ok",
              "summary": "a library for handling things"} for i in range(735)]  # fmt: skip
    pretty, compact = shrink_text(json.dumps(items, indent=2), 300), shrink_text(json.dumps(items), 300)
    assert pretty.form == "crushed" and pretty.tokens <= 300
    assert pretty.text == compact.text and '", "' not in compact.text  # the same items, compact
    kept = [x for x in json.loads(pretty.text) if "id" in x]
    assert all(x == items[x["id"]] for x in kept) and any(x["status"] == "ERROR" for x in kept)


def _npm_ls() -> str:
    """``npm ls --all --json`` of the npm that Debian installs (real output no one here wrote: its
    dependencies are an object keyed by package name, each holding its own), or a skip."""
    root = Path("/usr/lib/node_modules/npm")
    if shutil.which("npm") is None or not root.is_dir():
        pytest.skip("npm (Debian's package) is not installed")
    out = subprocess.run(
        ["npm", "ls", "--all", "--json"], cwd=root, capture_output=True, text=True, timeout=120
    )
    if not out.stdout.strip().startswith("{"):
        pytest.skip(f"npm ls gave no JSON: {out.stderr[:200]}")
    return out.stdout


@pytest.mark.parametrize("budget", [400, 1000, 3000])
def test_records_keyed_by_name_are_crushed_as_records(budget):
    """``npm ls --all --json`` (8,900 tokens): its only array is 17 strings, and its crush left the
    dependencies whole, over any budget below 4,888 (a tool error); the dependencies are the items."""
    text = _npm_ls()
    whole = json.loads(text)
    store = CrushStore(":memory:")
    s = shrink_text(text, budget, query="semver", store=store)
    assert s.form == "crushed" and _tokens(s.text) == s.tokens <= budget
    got = json.loads(s.text)
    deps = dict(got["dependencies"])
    marker = deps.pop("_omitted")
    assert deps and all(whole["dependencies"][name] == value for name, value in deps.items())
    assert marker["count"] + len(deps) == marker["of"] == len(whole["dependencies"])
    if budget >= 1000:
        assert "semver" in deps and got["problems"] == whole["problems"]
        back = store.retrieve(marker["key"])
        assert {b["key"] for b in back} == set(whole["dependencies"]) - set(deps)


LGPL = ("/usr/share/common-licenses/LGPL-2.1", "/usr/share/common-licenses/LGPL-2")


@pytest.mark.skipif(
    not all(map(os.path.exists, LGPL)) or shutil.which("diff") is None,
    reason="no Debian licences or diff here",
)
def test_a_diff_with_form_feeds_keeps_each_hunk_whole_and_its_own():
    """The LGPL's page breaks (form feeds) inside a diff's lines: str.splitlines cut lines there, the
    hunks' line counts went astray, and the last hunk shown ended with 4 lines of another."""
    text = subprocess.run(["diff", "-u", *LGPL], capture_output=True, text=True).stdout
    assert "\f" in text
    for budget in (300, 1200):
        s = shrink_text(text, budget, token_counter="estimate")
        assert s.form == "diff" and _tokens(s.text) <= budget
        body = s.text[: s.text.rindex("[scwo:")]
        for hunk in body.split("\n@@ ")[1:]:
            hunk = hunk.split("[scwo:")[0]
            assert "\n@@ " + hunk in text  # the hunk shown is one of the diff's, whole


def test_json_cut_by_its_tool_is_shrunk_by_whole_lines_never_spliced():
    """A JSON document cut short (a tool that truncates its output) was read as prose: fragments of
    different items spliced with ' … '.  Its whole lines now, in order."""
    text = json.dumps([{"id": i, "name": f"item {i}", "flags": ["a", "b"]} for i in range(400)], indent=2)
    cut = text[: len(text) // 2]
    s = shrink_text(cut, 150)
    assert s.form in ("records", "pieces") and _tokens(s.text) <= 150 and " … " not in s.text
    lines = cut.splitlines()
    shown = [x for x in s.text.splitlines() if not x.startswith("[scwo:")]
    assert shown and all(x in lines for x in shown)
    once = [lines.index(x) for x in shown if lines.count(x) == 1]  # (lines such as "{" repeat)
    assert len(once) > 5 and once == sorted(once)


def test_a_line_ending_in_carriage_returns_keeps_its_text():
    log = "".join(f"2026-11-29 03:05:{i % 60:02d} Setting up pkg{i}\n" for i in range(300))
    log += "2026-11-29 03:06:00 ERROR Created symlink /etc/x.timer.\r\r\n"  # apt's term.log writes these
    s = shrink_text(log, 100)
    assert "ERROR Created symlink /etc/x.timer." in s.text


def test_the_marker_names_the_tool_that_gives_it_back_only_when_there_is_one(tmp_path):
    """Outside MCP (the LangChain middleware, the CLI, Python) no retrieve_dropped tool exists: the
    marker gives the key; the proxy's results name its tool."""
    path = tmp_path / "s.sqlite"
    s = shrink_text(LOG, 120, store=path)  # a store given by its path, as the middleware's and the CLI's are
    assert f'stored under key "{s.key}"' in s.text and "retrieve_dropped" not in s.text
    assert len(CrushStore(path).retrieve(s.key)) == s.of - s.kept
    named = shrink_text(LOG, 120, store=CrushStore(":memory:"), tool="retrieve_dropped")
    assert f'retrieve_dropped with key "{named.key}" gives them back' in named.text
    assert "stored under key" in shrink_text(PROSE, 120, store=CrushStore(":memory:"), query="git").text


DISTRO = "/usr/share/distro-info/debian.csv"


def _table_cases():
    import sys

    pip_list = subprocess.run([sys.executable, "-m", "pip", "list"], capture_output=True, text=True).stdout
    cases = [("pip list", pip_list, 2)]  # its names over a rule of dashes, a column mostly empty
    if os.path.exists(DISTRO):  # rows of 4 to 8 fields under 8 names: the last ones left out when empty
        cases.append(("distro-info", open(DISTRO, encoding="utf-8").read(), 1))
    return cases


@pytest.mark.parametrize("budget", [100, 300])
def test_a_table_keeps_its_header_when_rows_leave_columns_empty(budget):
    """The header was read as one more record and crushed away at every budget."""
    for name, text, head_lines in _table_cases():
        s = shrink_text(text, budget)
        head = "".join(text.splitlines(keepends=True)[:head_lines])
        if _tokens(text) <= budget:  # (a fresh environment's pip list is short)
            assert s.form == "whole", name
            continue
        assert s.form == "records" and _tokens(s.text) <= budget, name
        assert s.text.startswith(head), name


@pytest.mark.parametrize("budget", [100, 300, 1000])
def test_every_collection_crushed_is_reported_with_its_key(budget):
    """A knowledge graph (the memory server's ``read_graph``: entities and relations): both arrays
    are crushed, the larger to its marker first, but the meta named the entities alone (at 100
    tokens "kept 3 of 3", a kept relation's fields): 653 relations left out went unreported."""
    import sys

    names = sorted(sys.stdlib_module_names)[:300]
    graph = {
        "entities": [{"name": n, "entityType": "module", "observations": [f"the {n} module"]} for n in names],
        "relations": [
            {"from": names[i % 300], "to": names[i * 7 % 300], "relationType": "imports"} for i in range(654)
        ],
    }
    store = CrushStore(":memory:")
    s = shrink_text(json.dumps(graph, indent=2), budget, store=store)
    meta = s.meta(budget)
    assert s.form == "crushed" and s.tokens <= budget
    colls = {c["path"]: c for c in meta["collections"]}
    assert set(colls) == {"entities", "relations"} and colls["relations"]["of"] == 654
    kept = json.loads(s.text)
    for path, c in colls.items():
        assert c["kept"] == sum("_omitted" not in x for x in kept[path]) and c["of"] == len(graph[path])
        assert len(store.retrieve(c["key"])) == c["of"] - c["kept"]  # its key gives back its items
    assert (meta["kept"], meta["of"]) == (sum(c["kept"] for c in colls.values()), 954)


@pytest.mark.parametrize("lines, budget", [(200, 100), (300, 200), (300, 100), (200, 300)])
def test_a_line_without_a_word_is_never_kept_alone_in_prose(lines, budget):
    """dpkg's triggers.txt through the proxy opened with "-------- …": a heading's underline, a
    sentence of its own in hard-wrapped text without a word, cost no redundancy and was taken
    before sentences that say things."""
    doc = (Path(__file__).with_name("data") / "triggers_head.txt").read_text(encoding="utf-8")
    text = "".join(doc.splitlines(keepends=True)[:lines])
    s = shrink_text(
        text, budget, query=call_query("read_text_file", {"path": "/usr/share/doc/dpkg/spec/triggers.txt"})
    )
    body = s.text.rsplit("\n[", 1)[0]
    assert s.form == "prose" and s.tokens <= budget
    assert all(any(c.isalpha() for c in piece) for piece in body.split(" … ")), body


def test_a_collection_left_out_whole_is_the_one_reported():
    """``pip inspect`` at 200 tokens: its 248 packages all left out and its ``environment`` kept whole
    was reported as "kept 11 of 11 items" with no key (the last collection crushed, not the one that
    lost items), so a client reading the result's meta saw nothing dropped (a new user's trial)."""
    import importlib.metadata
    import platform
    import sys

    installed = [  # as pip inspect writes them: each package with its whole metadata, none fits 200 tokens
        {"metadata": {"name": d.metadata["Name"], "version": d.version, "description": d.read_text("METADATA")},
         "installer": "pip", "requested": False}
        for d in importlib.metadata.distributions() if len(d.read_text("METADATA") or "") > 2000
    ]  # fmt: skip
    environment = {
        "implementation_name": sys.implementation.name, "os_name": os.name, "sys_platform": sys.platform,
        **{f"platform_{k}": getattr(platform, k)() for k in ("machine", "release", "system", "version",
                                                              "python_implementation")},
        "python_full_version": platform.python_version(), "python_version": "3", "implementation_version": "3",
    }  # fmt: skip
    text = json.dumps({"version": "1", "installed": installed, "environment": environment})
    store = CrushStore()
    s = shrink_text(text, 200, store=store)
    meta = s.meta(200)
    assert s.form == "crushed" and s.tokens <= 200 and (meta["kept"], meta["of"]) == (0, len(installed))
    assert meta["key"] == s.key and len(store.retrieve(s.key)) == len(installed)
