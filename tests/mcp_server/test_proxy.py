"""scwo mcp proxy (issue 44): the SDK's real client in front, real servers behind, no mock of the protocol.

Behind it: ``scwo mcp`` itself, a small misbehaving server of these tests (``upstream_server.py``:
crash, hang, progress, resources, prompts), and the reference servers ``mcp-server-git`` (on a
clone of this repository, hundreds of commits) and ``mcp-server-sqlite`` from PyPI, each in its own
virtual environment that ``.ci/run`` makes (``.venv-upstreams/git`` and ``.venv-upstreams/sqlite``,
or the folder ``SCWO_NP_MCP_UPSTREAMS`` names); without them those tests skip, saying so (and fail
under ``SCWO_NP_REQUIRE_EXTRAS=1``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from realdata import DPKG_LOG, dpkg_records

from scwo_np.anchor._diff import _parts, split_diff
from scwo_np.tokens import as_token_counter, count_tokens

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
UPSTREAM = [sys.executable, str(HERE / "upstream_server.py")]
VENVS = Path(os.environ.get("SCWO_NP_MCP_UPSTREAMS", ROOT / ".venv-upstreams"))
LOGS = [
    {"i": i, "level": "ERROR" if i in (17, 230) else "INFO", "msg": f"GET /o/{i * 37 % 1009}"}
    for i in range(400)
]


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}


def _proxy(store, *options: str, upstream: list[str] | None = None) -> Client:
    args = ["-m", "scwo_np.cli", "mcp", "proxy", "--store", str(store), *options]
    if upstream is not None:
        args += ["--", *upstream]
    return Client(StdioServerParameters(command=sys.executable, args=args, env=_env()))


def _direct(command: list[str]) -> Client:
    return Client(StdioServerParameters(command=command[0], args=command[1:], env=_env()), mode="legacy")


def _text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def _tokens(text: str) -> int:
    return int(count_tokens([text])[0])


def _server(venv: str, name: str) -> str:
    path = VENVS / venv / "bin" / name
    if not path.exists():
        msg = f"{name} is not installed in {path.parent.parent} (bash .ci/run installs it; or set SCWO_NP_MCP_UPSTREAMS)"
        if os.environ.get("SCWO_NP_REQUIRE_EXTRAS") == "1":
            pytest.fail(msg)
        pytest.skip(msg)
    return str(path)


def _page_all(c, key: str, budget: int = 800):
    """Every item retrieve_dropped gives back under ``key``, page by page, and their positions."""

    async def go():
        items, positions, offset = [], [], 0
        while offset is not None:
            r = await c.call_tool("retrieve_dropped", {"key": key, "budget": budget, "offset": offset})
            assert not r.is_error, _text(r)
            assert _tokens(_text(r)) <= budget
            items += json.loads(_text(r))
            positions += r.structured_content["positions"]
            offset = r.structured_content["next_offset"]
        return items, positions

    return go()


# -- scwo mcp behind the proxy ------------------------------------------------------------------


def test_scwo_mcp_behind_the_proxy_mirrored_passed_through_and_shrunk(tmp_path):
    upstream = [sys.executable, "-m", "scwo_np.cli", "mcp", "--store", str(tmp_path / "up")]

    async def go():
        async with _direct(upstream) as d:
            direct_tools = {t.name: t for t in (await d.list_tools()).tools}
            small = await d.call_tool("count_tokens", {"texts": ["abcdefgh", "x"]})
            bad = await d.call_tool("select_context", {"texts": ["a"], "query": "", "budget": 10})
        async with _proxy(tmp_path / "proxy", "--budget", "300", upstream=upstream) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert set(tools) == set(
                direct_tools
            )  # retrieve_dropped: the proxy's own replaces the upstream's
            for name, t in direct_tools.items():
                if name == "retrieve_dropped":
                    continue
                mine = tools[name]
                assert (mine.description, mine.input_schema, mine.annotations) == (
                    t.description, t.input_schema, t.annotations)  # fmt: skip
            assert "left out" in tools["retrieve_dropped"].description
            r = await c.call_tool("count_tokens", {"texts": ["abcdefgh", "x"]})  # within budget: as it came
            assert r.content == small.content and r.structured_content == small.structured_content
            assert "scwo_np/proxy" not in (r.meta or {})
            r = await c.call_tool(
                "select_context", {"texts": ["a"], "query": "", "budget": 10}
            )  # an error: as it came
            assert r.is_error and r.content == bad.content
            # crush_json's own budget of 4,000 is over the proxy's 300: crushed again, within 300
            r = await c.call_tool("crush_json", {"json": json.dumps(LOGS), "budget": 4000})
            text, meta = _text(r), r.meta["scwo_np/proxy"]
            assert not r.is_error and _tokens(text) == meta["tokens"] <= 300 < meta["tokens_before"]
            kept = [x for x in json.loads(text) if "_omitted" not in x]
            assert LOGS[17] in kept and LOGS[230] in kept and LOGS[399] in kept  # errors, the newest
            assert r.structured_content is None and "dropped" in meta["structured_content"]
            # what the upstream's text held, back through the proxy's retrieve_dropped (positions in that text)
            items, _ = await _page_all(c, meta["key"])
            assert len(items) + len(kept) == meta["of"]
            # a crush of scwo mcp's own within the proxy's budget passes through; its key is scwo mcp's,
            # and the proxy's retrieve_dropped, not knowing it, asks the upstream's
            r = await c.call_tool("crush_json", {"json": json.dumps(LOGS), "budget": 200})
            assert "scwo_np/proxy" not in (r.meta or {})
            theirs = r.structured_content["key"]
            r = await c.call_tool("retrieve_dropped", {"key": theirs, "budget": 100})
            assert not r.is_error and r.structured_content["key"] == theirs and json.loads(_text(r))
            # the proxy's retrieve_dropped checks its arguments as scwo mcp's does
            r = await c.call_tool("retrieve_dropped", {"key": meta["key"], "budjet": 50})
            assert r.is_error and "has no argument 'budjet' (did you mean 'budget'?)" in _text(r)
            r = await c.call_tool("retrieve_dropped", {"key": meta["key"], "max_tokens": 50})
            assert not r.is_error and _tokens(_text(r)) <= 50 and "budget" in r.meta["scwo_np/deprecated"][0]

    anyio.run(go)


# -- a misbehaving server behind the proxy: shapes, progress, resources, prompts, faults ----------


def test_shapes_progress_resources_and_prompts(tmp_path):
    async def go():
        async with _proxy(tmp_path, "--budget", "300", upstream=UPSTREAM) as c:
            assert {t.name for t in (await c.list_tools()).tools} >= {
                "echo",
                "logs",
                "rows",
                "retrieve_dropped",
            }
            assert [r.uri for r in (await c.list_resources()).resources] == ["test://readme"]
            assert "readme" in (await c.read_resource("test://readme")).contents[0].text
            prompt = await c.get_prompt("ask", {"topic": "git"})
            assert prompt.messages[0].content.text == "Tell me about git."
            seen = []

            async def on_progress(progress, total, message):
                seen.append((progress, total, message))

            r = await c.call_tool("progress", {}, progress_callback=on_progress)
            assert _text(r) == "done" and [s[0] for s in seen] == [1, 2, 3] and seen[-1][2] == "step 3"

            r = await c.call_tool("logs", {"n": 500})  # log lines: records, errors and the newest kept
            text, meta = _text(r), r.meta["scwo_np/proxy"]
            assert meta["form"] == "records" and _tokens(text) <= 300 and meta["of"] == 500
            assert "write failed" in text and "seq=499" in text and meta["key"] in text.splitlines()[-1]
            items, positions = await _page_all(c, meta["key"])
            assert len(items) == 500 - meta["kept"] and all(f"seq={p} " in x or x.endswith(f"seq={p}\n")
                                                            for x, p in zip(items, positions, strict=True))  # fmt: skip
            r = await c.call_tool("failing_logs", {"n": 500})  # an error is read too: within the budget
            text, meta = _text(r), r.meta["scwo_np/proxy"]
            assert r.is_error and meta["form"] == "records" and _tokens(text) <= 300 < meta["tokens_before"]
            assert "write failed" in text and "seq=499" in text
            r = await c.call_tool("broken_json", {})  # not JSON after all: shrunk as text, no crash
            assert not r.is_error and _tokens(_text(r)) <= 300
            r = await c.call_tool("echo", {"text": "still here"})
            assert _text(r) == "still here"

    anyio.run(go)


def test_a_crash_or_a_hang_is_a_tool_error_and_the_next_call_works(tmp_path):
    async def go():
        async with _proxy(tmp_path, "--timeout", "2", upstream=UPSTREAM) as c:
            r = await c.call_tool("crash", {})
            assert r.is_error and "restarted for the next call" in _text(r)
            assert _text(await c.call_tool("echo", {"text": "after the crash"})) == "after the crash"
            r = await c.call_tool("hang", {})
            assert r.is_error and "did not answer within 2 s" in _text(r)
            assert _text(await c.call_tool("echo", {"text": "after the hang"})) == "after the hang"

    anyio.run(go)


def test_a_result_over_the_size_limit_is_a_tool_error(tmp_path):
    async def go():
        async with _proxy(tmp_path, "--max-result-mb", "0.01", "--budget", "100", upstream=UPSTREAM) as c:
            r = await c.call_tool("logs", {"n": 2000})
            assert (
                r.is_error
                and "above this proxy's limit of 10,485" in _text(r)
                and "--max-result-mb" in _text(r)
            )
            r = await c.call_tool("logs", {"n": 100})  # under the limit: shrunk as usual
            assert not r.is_error and _tokens(_text(r)) <= 100

    anyio.run(go)


def test_retrieve_dropped_counts_pages_by_the_proxy_s_counter(tmp_path):
    """A proxy started with --token-counter tiktoken pages retrieve_dropped by it too (its pages were
    counted by the estimate: a page of 300 was 525 cl100k tokens)."""
    pytest.importorskip("tiktoken")
    tik = as_token_counter("tiktoken")

    async def go():
        async with _proxy(tmp_path, "--budget", "300", "--token-counter", "tiktoken", upstream=UPSTREAM) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert (
                tools["retrieve_dropped"].input_schema["properties"]["token_counter"]["default"] == "tiktoken"
            )
            r = await c.call_tool("logs", {"n": 2000})
            key = r.meta["scwo_np/proxy"]["key"]
            for offset in (0, 5):
                page = await c.call_tool("retrieve_dropped", {"key": key, "budget": 300, "offset": offset})
                assert not page.is_error and 250 < int(count_tokens([_text(page)], tik)[0]) <= 300

    anyio.run(go)


def test_a_call_the_client_cancels_leaves_the_proxy_answering(tmp_path):
    async def go():
        async with _proxy(tmp_path, upstream=UPSTREAM) as c:
            with anyio.move_on_after(
                1.0
            ) as scope:  # the client gives up: the SDK sends notifications/cancelled
                await c.call_tool("hang", {})
            assert scope.cancelled_caught
            with anyio.fail_after(30):
                assert _text(await c.call_tool("echo", {"text": "after a cancel"})) == "after a cancel"

    anyio.run(go)


def test_a_cancel_reaches_the_upstream(tmp_path):
    """The client's notifications/cancelled goes through the proxy: the upstream's handler is cancelled."""
    mark = tmp_path / "cancelled.txt"

    async def go():
        async with _proxy(tmp_path, upstream=UPSTREAM) as c:
            with anyio.move_on_after(1.0) as scope:
                await c.call_tool("wait_for_cancel", {"path": str(mark)})
            assert scope.cancelled_caught
            with anyio.fail_after(30):
                while not mark.exists():
                    await anyio.sleep(0.05)
            assert mark.read_text() == "cancelled"

    anyio.run(go)


@pytest.mark.parametrize(
    "upstream",
    [["/nonexistent/mcp-server"], [sys.executable, "-c", "import sys; sys.exit(3)"]],
    ids=["missing", "exits"],
)
def test_an_upstream_that_does_not_start_is_a_clear_error_at_startup(tmp_path, upstream):
    proc = subprocess.run(
        [sys.executable, "-m", "scwo_np.cli", "mcp", "proxy", "--store", str(tmp_path), "--", *upstream],
        env=_env(), capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.returncode != 0
    assert "did not start" in proc.stderr and upstream[0] in proc.stderr


def test_an_upstream_that_prints_something_else_is_named_for_it(tmp_path):
    """A command that is not an MCP server (it prints its usage and waits): the error quotes the
    line, and each such line is one warning, not the SDK's traceback."""
    cfg = tmp_path / "proxy.toml"
    cfg.write_text("start_timeout = 3\n")
    upstream = [
        sys.executable,
        "-c",
        "import time; print('usage: tool [--serve]', flush=True); time.sleep(60)",
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "scwo_np.cli", "mcp", "proxy", "--store", str(tmp_path / "s"), "--config", str(cfg),
         "--", *upstream],
        env=_env(), capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.returncode != 0
    assert "did not start: no answer within 3 s; it wrote 'usage: tool [--serve]'" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr


def test_the_config_file_excludes_sets_budgets_and_modes(tmp_path):
    cfg = tmp_path / "proxy.toml"
    cfg.write_text(
        'budget = 400\nexclude = ["crash", "hang"]\n[tools.logs]\nbudget = 150\n[tools.rows]\nmode = "off"\n'
    )

    async def go():
        async with _proxy(tmp_path / "store", "--config", str(cfg), upstream=UPSTREAM) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert "crash" not in tools and "hang" not in tools
            assert tools["rows"].output_schema is not None  # mode off: the output schema mirrored too
            r = await c.call_tool("crash", {})
            assert r.is_error and "excludes it" in _text(r)
            r = await c.call_tool("logs", {"n": 300})
            assert _tokens(_text(r)) <= 150 and r.meta["scwo_np/proxy"]["budget"] == 150
            r = await c.call_tool("rows", {"n": 400})  # off: whole, structured content and all
            assert "scwo_np/proxy" not in (r.meta or {}) and len(r.structured_content["rows"]) == 400

    anyio.run(go)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"tools": {"logs": {"budjet": 10}}}))
    proc = subprocess.run([sys.executable, "-m", "scwo_np.cli", "mcp", "proxy", "--config", str(bad), "--", *UPSTREAM],
                          env=_env(), capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode != 0 and "unknown key 'budjet'" in proc.stderr


# -- this machine's files and command outputs through the proxy ----------------------------------

DPKG_STATUS = Path("/var/lib/dpkg/status")


@pytest.mark.skipif(not DPKG_STATUS.exists(), reason="no /var/lib/dpkg/status on this machine")
def test_the_package_database_is_kept_by_whole_paragraphs(tmp_path):
    """A new user read /var/lib/dpkg/status through the proxy at 500 tokens: "kept 10 of 10072
    records", no ``Package:`` line, and "9 of them errors" for descriptions holding the word ("a
    memory error detector"); at 2,000 with --mode records, 2 ``Package:`` lines among 171."""
    paragraphs = [
        p.strip() for p in re.split(r"\n\s*\n", DPKG_STATUS.read_text(errors="replace")) if p.strip()
    ]

    async def go():
        for budget, mode in ((500, "auto"), (2000, "records")):
            async with _proxy(tmp_path, "--budget", str(budget), "--mode", mode, upstream=UPSTREAM) as c:
                r = await c.call_tool("read_file", {"path": str(DPKG_STATUS)})
                text, meta = _text(r), r.meta["scwo_np/proxy"]
                assert meta["form"] == "records" and meta["of"] == len(paragraphs) and _tokens(text) <= budget
                body = text[: text.rindex("[scwo:")]  # the records, without the marker line
                cut = re.search(r"\n\[scwo: record \d+ cut after [^\n]*\n", body)  # a record's first lines
                if cut is not None:
                    first = body[: cut.start()].rsplit("\n\n", 1)[-1].strip()
                    assert any(p.startswith(first) for p in paragraphs)
                    body = body[: cut.start()].rsplit("\n\n", 1)[0] + "\n\n" + body[cut.end() :]
                shown = [p.strip() for p in re.split(r"\n\s*\n", body) if p.strip()]
                assert len(shown) == meta["kept"] >= 1 and all(p in paragraphs for p in shown)
                assert "error" not in text.splitlines()[-1]

    anyio.run(go)


@pytest.mark.skipif(not Path(DPKG_LOG).exists(), reason="no /var/log/dpkg.log on this machine")
def test_a_list_result_of_one_block_per_item_is_kept_compact(tmp_path):
    """The SDK returns a tool's list[dict] as one text block per item, each indented by 2: the kept
    items came as they were (12 items, 493 tokens of 500 at a new user's; compact, 432)."""
    records = dpkg_records()[:5000]
    path = tmp_path / "dpkg.json"
    path.write_text(json.dumps(records))

    async def go():
        async with _direct(UPSTREAM) as d:
            r = await d.call_tool("json_items", {"path": str(path)})
            assert len(r.content) == len(records) and "\n  " in r.content[0].text  # as the SDK sends it
        async with _proxy(tmp_path / "store", "--budget", "500", upstream=UPSTREAM) as c:
            r = await c.call_tool("json_items", {"path": str(path)})
            text, meta = _text(r), r.meta["scwo_np/proxy"]
            assert meta["form"] == "crushed" and _tokens(text) <= 500 and meta["of"] == len(records)
            lines = text.splitlines()
            assert len(lines) == meta["kept"] + 1 and '"_omitted"' in lines[-1]  # one item a line, the marker
            for line in lines[:-1]:
                item = json.loads(line)
                assert item in records and line == json.dumps(item, separators=(",", ":"))

    anyio.run(go)


TERM_LOG = Path("/var/log/apt/term.log")


@pytest.mark.skipif(not TERM_LOG.exists(), reason="no /var/log/apt/term.log on this machine")
def test_a_terminal_log_keeps_one_copy_of_a_line_and_progress_in_its_last_state(tmp_path):
    """apt's term.log at 500 tokens kept "debconf: unable to initialize frontend: Dialog" and
    "...: Readline" 4 times each (8 of 33 lines), and cut "(Reading database ... 5%\r..." at its
    carriage returns into records."""
    if b"%\r(" not in TERM_LOG.read_bytes():
        pytest.skip("this term.log has no progress line")

    async def go():
        async with _proxy(tmp_path, "--budget", "500", upstream=UPSTREAM) as c:
            r = await c.call_tool("read_file", {"path": str(TERM_LOG)})
            text, meta = _text(r), r.meta["scwo_np/proxy"]
            assert meta["form"] == "records" and _tokens(text) <= 500
            lines = [ln for ln in text.splitlines() if ln.strip()]
            assert len(lines) == len(set(lines)) > 10 and not re.search(r"\r(?!\n)", text)
            assert not any(re.match(r"\(Reading database \.\.\. \d+%", ln) for ln in lines)

    anyio.run(go)


@pytest.mark.skipif(shutil.which("findmnt") is None, reason="no findmnt on this machine")
def test_json_whose_largest_array_leaves_too_much_around_it_stays_json(tmp_path):
    """``findmnt -J`` at 300 tokens: its largest array (10 cgroup mounts) left 306 tokens around it,
    and the proxy fell back to prose, " … " spliced between fields of different mounts (with --mode
    json too); ``pip inspect`` at 100 likewise. Valid JSON, its arrays (and objects of records keyed
    by name: pip's ``environment``) crushed in turn, and as a last resort any object's entries (a long
    text beside the array was a tool error)."""
    findmnt = subprocess.run(["findmnt", "-J"], capture_output=True, text=True).stdout
    if _tokens(findmnt) <= 400:
        pytest.skip("findmnt -J is short on this machine")

    def mounts(value) -> list[dict]:  # every mount shown, at any depth (not the markers)
        out = []
        for m in value.get("filesystems", value.get("children", [])):
            if "target" in m:
                out += [m, *mounts(m)]
        return out

    async def go():
        whole = {m["target"] + m["options"] for m in mounts(json.loads(findmnt))}
        for mode in ("auto", "json"):
            async with _proxy(tmp_path / mode, "--budget", "300", "--mode", mode, upstream=UPSTREAM) as c:
                r = await c.call_tool("run", {"argv": ["findmnt", "-J"]})
                text, meta = _text(r), r.meta["scwo_np/proxy"]
                assert not r.is_error and meta["form"] == "crushed" and _tokens(text) <= 300
                shown = mounts(json.loads(text))
                assert shown and {m["target"] + m["options"] for m in shown} <= whole and " … " not in text
                assert meta["key"] in text
        pip = [sys.executable, "-m", "pip", "inspect"]
        async with _proxy(tmp_path / "pip", "--budget", "100", upstream=UPSTREAM) as c:
            r = await c.call_tool("run", {"argv": pip})
            text = _text(r)
            assert not r.is_error and _tokens(text) <= 100, text
            got, env = (
                json.loads(text),
                json.loads(subprocess.run(pip, capture_output=True, text=True).stdout),
            )
            assert got["installed"][-1]["_omitted"]["of"] == len(env["installed"])
            assert got["environment"].pop("_omitted")["of"] == len(env["environment"])
            assert got["environment"].items() <= env["environment"].items()
        note = [
            sys.executable,
            "-c",
            "import json; print(json.dumps({'note': 'word ' * 600, 'rows': list(range(500))}))",
        ]
        async with _proxy(tmp_path / "long", "--budget", "100", upstream=UPSTREAM) as c:
            r = await c.call_tool("run", {"argv": note})  # a long text beside the array: a tool error before
            text = _text(r)
            assert not r.is_error and _tokens(text) <= 100, text
            got = json.loads(text)  # as a last resort the object's own entries: the note left out, announced
            assert "note" not in got and got["_omitted"]["count"] >= 1 and got["_omitted"]["key"]

    anyio.run(go)


# -- the reference servers from PyPI ---------------------------------------------------------------


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    n = int(subprocess.run(["git", "-C", str(ROOT), "rev-list", "--count", "HEAD"], capture_output=True,
                           text=True).stdout.strip() or 0)  # fmt: skip
    if n < 300:
        pytest.skip(f"this clone has {n} commits; the git_log test needs 300 (a shallow clone?)")
    path = tmp_path_factory.mktemp("repo") / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(path)], check=True)
    return path


def test_git_log_of_300_commits_within_1000_tokens_with_the_newest_and_every_commit_back(repo, tmp_path):
    server = _server("git", "mcp-server-git")
    shas = subprocess.run(["git", "-C", str(repo), "log", "-300", "--format=%H"], capture_output=True, text=True,
                          check=True).stdout.split()  # fmt: skip
    upstream = [server, "--repository", str(repo)]

    async def go():
        async with _direct(upstream) as d:
            direct = {t.name: t for t in (await d.list_tools()).tools}
            status = await d.call_tool("git_status", {"repo_path": str(repo)})
            whole = _text(await d.call_tool("git_log", {"repo_path": str(repo), "max_count": 300}))
        async with _proxy(tmp_path, "--budget", "1000", upstream=upstream) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert set(tools) == set(direct) | {"retrieve_dropped"}
            for name, t in direct.items():
                assert (tools[name].description, tools[name].input_schema, tools[name].annotations) == (
                    t.description, t.input_schema, t.annotations)  # fmt: skip
            r = await c.call_tool("git_status", {"repo_path": str(repo)})
            assert r.content == status.content  # small: byte for byte
            r = await c.call_tool("git_log", {"repo_path": str(repo), "max_count": 300})
            text, meta = _text(r), r.meta["scwo_np/proxy"]
            assert _tokens(whole) > 20_000 and meta["tokens_before"] == _tokens(whole)
            assert _tokens(text) == meta["tokens"] <= 1000 and meta["form"] == "records" and meta["of"] == 300
            assert shas[0] in text  # the newest commit
            kept = [s for s in shas if s in text]
            items, _ = await _page_all(c, meta["key"])
            back = [m.group(1) for x in items for m in [re.search(r"Commit: ([0-9a-f]{40})", x)] if m]
            assert sorted(kept + back) == sorted(shas) and len(back) == len(items)  # every commit, once

    anyio.run(go)


def test_git_diff_is_whole_hunks_under_their_headers_and_every_hunk_comes_back(repo, tmp_path):
    """A diff is not crushed line by line: kept hunks sit under their file's header, the other
    files are named, and paging gives back every other hunk (with its header) once."""
    server = _server("git", "mcp-server-git")
    upstream = [server, "--repository", str(repo)]

    async def go():
        async with _direct(upstream) as d:
            whole = _text(await d.call_tool("git_diff", {"repo_path": str(repo), "target": "HEAD~20"}))
        async with _proxy(tmp_path, "--budget", "1000", upstream=upstream) as c:
            r = await c.call_tool("git_diff", {"repo_path": str(repo), "target": "HEAD~20"})
            text, meta = _text(r), r.meta["scwo_np/proxy"]
            items, _ = await _page_all(c, meta["key"])
        diff = split_diff(whole)
        assert diff is not None and _tokens(whole) > 5_000
        assert meta["form"] == "diff" and meta["what"] == "hunks" and meta["of"] == len(diff)
        assert _tokens(text) == meta["tokens"] <= 1000
        kept = [h for h in diff.hunks if h in text]
        assert len(kept) == meta["kept"] >= 1
        for h, f in zip(diff.hunks, diff.file_of, strict=True):
            if h in text:  # under its file's header
                assert diff.headers[int(f)] in text and text.index(diff.headers[int(f)]) < text.index(h)
        parts, part_of = _parts(diff, as_token_counter(None))  # a long hunk is stored in parts
        n, files = len(diff), len(diff.headers)
        shown = {int(f) for h, f in zip(diff.hunks, diff.file_of, strict=True) if h in text}
        whole = {h for h in range(n) if diff.hunks[h] in text} | {n + f for f in shown if diff.preambles[f]}
        if diff.head and text.startswith(diff.head):
            whole.add(n + 2 * files)
        dropped = [x for x, g in zip(parts, part_of, strict=True) if g not in whole]
        assert sorted(items) == sorted(dropped)  # every hunk and header left out, once

    anyio.run(go)


def test_sqlite_rows_lossless_when_they_fit_and_crushed_when_not(tmp_path):
    server = _server("sqlite", "mcp-server-sqlite")
    upstream = [server, "--db-path", str(tmp_path / "shop.db")]

    async def go():
        async with _proxy(tmp_path / "store", "--budget", "600", upstream=upstream) as c:
            await c.call_tool(
                "create_table", {"query": "CREATE TABLE orders (id INTEGER, status TEXT, total REAL)"}
            )
            values = ",".join(
                f"({i}, '{'failed' if i == 250 else ['shipped', 'packed', 'new'][i % 3]}', {i * 1.5})"
                for i in range(400)
            )
            r = await c.call_tool("write_query", {"query": f"INSERT INTO orders VALUES {values}"})
            assert not r.is_error, _text(r)
            r = await c.call_tool("read_query", {"query": "SELECT * FROM orders WHERE id < 100"})
            meta = r.meta["scwo_np/proxy"]  # a Python repr of the rows: read, and lossless CSV fits
            assert meta["form"] == "csv" and _tokens(_text(r)) <= 600 < meta["tokens_before"]
            assert meta["kept"] == meta["of"] == 100 and _text(r).startswith(
                "id,status,total\n0,shipped,0.0\n"
            )
            r = await c.call_tool("read_query", {"query": "SELECT * FROM orders"})
            meta = r.meta["scwo_np/proxy"]
            assert meta["form"] == "crushed" and _tokens(_text(r)) <= 600
            kept = [x for x in json.loads(_text(r)) if "_omitted" not in x]
            assert {"id": 250, "status": "failed", "total": 375.0} in kept  # the odd one out
            items, _ = await _page_all(c, meta["key"])
            assert sorted(x["id"] for x in items + kept) == list(range(400))

    anyio.run(go)


# -- streamable HTTP in front and behind --------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(proc, port: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            assert proc.poll() is None, proc.stderr.read()
            time.sleep(0.2)
    raise AssertionError(f"nothing listens on port {port}")


def test_over_http_in_front_and_an_http_upstream_behind(tmp_path):
    up_port, proxy_port = _free_port(), _free_port()
    up = subprocess.Popen([*UPSTREAM, "--http", str(up_port)], env=_env(), stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)  # fmt: skip
    proxy = None
    try:
        _wait_port(up, up_port)
        proxy = subprocess.Popen(
            [sys.executable, "-m", "scwo_np.cli", "mcp", "proxy", "--http", "--port", str(proxy_port), "--budget",
             "200", "--store", str(tmp_path), "--upstream-url", f"http://127.0.0.1:{up_port}/mcp"],
            env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        _wait_port(proxy, proxy_port)

        async def go():
            async with Client(f"http://127.0.0.1:{proxy_port}/mcp") as c:
                assert _text(await c.call_tool("echo", {"text": "over http"})) == "over http"
                r = await c.call_tool("logs", {"n": 300})
                assert _tokens(_text(r)) <= 200 and r.meta["scwo_np/proxy"]["form"] == "records"

        anyio.run(go)
    finally:
        for p in (proxy, up):
            if p is not None and p.poll() is None:
                p.terminate()
                p.wait(timeout=30)
