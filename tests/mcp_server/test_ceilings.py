"""scwo mcp (issue 40): the text block a client hands the model is within the tool's ceiling, by the
server's counter, over hypothesis-generated inputs drawn from real data (this machine's dpkg.log,
Debian changelogs); the schemas describe every parameter, enumerate registry names, refuse
unknown arguments; the server reports its version.  One stdio server (the SDK's real client,
the server a subprocess) answers every example."""

from __future__ import annotations

import json
import os
import sys

import anyio.from_thread
import pytest
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from realdata import changelog_entries, dpkg_records

import scwo_np
from scwo_np.dedup import DEDUP_METHODS
from scwo_np.embed import EMBEDDERS
from scwo_np.select import GRANULARITIES, ORDERS, STRATEGIES
from scwo_np.tokens import COUNTERS, count_tokens

RECORDS = dpkg_records()
ENTRIES = changelog_entries(60)
COUNTED = ["estimate", "wordpiece", "tiktoken"]
# each example is real round trips: few of them, and no shrinking (a failure prints its inputs)
FEW = settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
               phases=[Phase.explicit, Phase.generate])  # fmt: skip


@pytest.fixture(scope="module")
def call(tmp_path_factory):
    """``call(tool, args) -> CallToolResult`` on one ``scwo mcp`` over stdio, for the whole module."""
    store = tmp_path_factory.mktemp("mcp")
    params = StdioServerParameters(command=sys.executable, args=["-m", "scwo_np.cli", "mcp", "--store", str(store)],
                                   env={**os.environ, "PYTHONUNBUFFERED": "1"})  # fmt: skip
    with anyio.from_thread.start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(Client(params)) as client:
            yield lambda tool, args: portal.call(client.call_tool, tool, args), client, portal


def _text(r) -> str:
    (block,) = r.content  # one text block: what the model reads
    return block.text


def _tokens(text: str, counter: str) -> int:
    return int(count_tokens([text], counter)[0])


@FEW
@given(
    start=st.integers(0, len(RECORDS) - 50),
    n=st.integers(1, 3000),
    budget=st.integers(40, 900),
    counter=st.sampled_from(COUNTED),
    query=st.sampled_from([None, "errors", "what was installed most recently", "libc"]),
    where=st.sampled_from(
        [None, {"action": "install"}, {"date": {"gte": "2026-01-01"}}, {"state": {"exists": True}}]
    ),
    fields=st.sampled_from([None, ["date", "time", "package"]]),
)
def test_crush_json_and_retrieve_dropped_stay_within_their_budget(
    call, start, n, budget, counter, query, where, fields
):
    run = call[0]
    rows = RECORDS[start : start + n]
    args = {"json": json.dumps(rows), "budget": budget, "token_counter": counter}
    if query:
        args["query"] = query
    r = run("crush_json", args)
    if r.is_error:  # only when not even the marker fits
        assert "give budget >=" in _text(r)
        event("crush: budget below the marker")
        return
    text, s = _text(r), r.structured_content
    assert _tokens(text, counter) == s["tokens"] <= budget
    assert "\n" not in text and s["kept"] + s["dropped"] == s["items"] == len(rows)
    event(f"crush: {s['form']}")
    if not s["dropped"]:
        return
    assert s["key"] in text  # the key is in the document the model reads
    page_budget = max(40, budget // 2)
    args = {
        "key": s["key"],
        "budget": page_budget,
        "token_counter": counter,
        "where": where,
        "fields": fields,
    }
    if query:
        args["query"] = query
    r = run("retrieve_dropped", args)
    if r.is_error:  # a single record above the page ceiling: said so, never cut
        assert "raise budget" in _text(r), _text(r)
        event("page: an item above budget")
        return
    page = r.structured_content
    event(f"page: {'empty' if not page['positions'] else 'items'}")
    assert _tokens(_text(r), counter) == page["tokens"] <= page_budget
    kept = {i for a, b in s["kept_ranges"] for i in range(a, b + 1)}
    assert not kept & set(page["positions"])  # only what the model has not seen
    want = [
        rows[p] if fields is None else {f: rows[p][f] for f in fields if f in rows[p]}
        for p in page["positions"]
    ]
    assert json.loads(_text(r)) == want


@FEW
@given(
    picks=st.lists(st.integers(0, len(ENTRIES) - 1), min_size=1, max_size=40, unique=True),
    budget=st.integers(0, 500),
    counter=st.sampled_from(COUNTED),
    strategy=st.sampled_from(["mmr", "mmr", "dpp", "knapsack"]),
    granularity=st.sampled_from(["chunk", "sentence"]),
    separator=st.sampled_from(["\n\n", "\n---\n", " "]),
    lam=st.sampled_from([0.7, "auto", 0.3]),
)
def test_select_context_stays_within_its_budget(
    call, picks, budget, counter, strategy, granularity, separator, lam
):
    run = call[0]
    texts = [ENTRIES[i] for i in picks]
    if granularity == "sentence":
        strategy = "mmr"
    args = {"texts": texts, "query": "security fix for a buffer overflow (CVE)", "budget": budget,
            "token_counter": counter, "strategy": strategy, "granularity": granularity, "separator": separator}  # fmt: skip
    if strategy != "knapsack" and (lam != "auto" or strategy == "mmr"):  # 'auto' is MMR's rule
        args["lam"] = lam
    r = run("select_context", args)
    assert not r.is_error, _text(r)
    text, s = _text(r), r.structured_content
    assert _tokens(text, counter) == s["context_tokens"] <= budget
    assert len(s["indices"]) == len(s["spans"]) == len(s["relevance"]) == len(s["tokens"])
    if granularity == "chunk":
        assert text == separator.join(texts[i] for i in s["indices"])
    for i, spans in zip(s["indices"], s["spans"], strict=True):
        assert all(texts[i][a:b].strip() in text for a, b in spans)
    assert (s["lam"] is None) == (strategy == "knapsack")
    if lam != "auto" and strategy != "knapsack":
        assert s["lam"] == lam


REGISTRIES = {"strategy": STRATEGIES, "granularity": GRANULARITIES, "order": ORDERS, "embedder": EMBEDDERS,
              "token_counter": COUNTERS, "method": DEDUP_METHODS}  # fmt: skip


def test_schemas_describe_every_parameter_and_enumerate_registry_names(call):
    _, client, portal = call
    tools = portal.call(client.list_tools).tools
    assert len(tools) == 7
    for t in tools:
        schema = t.input_schema
        assert schema["additionalProperties"] is False
        for name, prop in schema["properties"].items():
            assert len(prop.get("description", "")) > 20, (t.name, name)
            assert "title" not in prop
            if name in REGISTRIES:
                assert prop["enum"] == list(REGISTRIES[name]), (t.name, name)
            if name in schema.get("required", []):
                continue
            d = prop["description"].lower()
            assert "default" in d, (t.name, name, d)  # an optional parameter says its default
        for name in ("budget", "max_items", "limit", "offset", "last"):
            if name in schema["properties"]:
                d = schema["properties"][name]["description"]
                assert any(u in d for u in ("tokens", "items", "snapshots")), (t.name, name)  # its unit
        assert not {"question", "counter", "max_tokens"} & set(schema["properties"]), (
            t.name
        )  # one name per idea


def test_the_server_reports_its_version(call):
    _, client, _ = call
    info = client.server_info
    assert info.name == "scwo_np" and info.version == scwo_np.__version__ != ""
