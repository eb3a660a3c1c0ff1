"""hsca_context with a budget (issue 42) through the SDK's real client, over stdio against ``scwo mcp``:
the text block is the context itself, within the budget by the requested counter; each piece it
lists is in it; a restarted server (a new process on the same data folder) gives the same context,
the open beat included, and the session goes on; the earlier form (no budget) and the old argument
names still work.  The turns are paragraphs of the Python FAQ (the bundled ``faq_eval.jsonl``, from
Debian's python3-doc, PSF-2.0), in order, as one conversation; the queries are the FAQ's questions."""

from __future__ import annotations

import os
import sys

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from scwo_np.datasets import load_faq
from scwo_np.tokens import count_tokens

FAQ = load_faq()
# the answers of the FAQ's first questions, in order: a conversation about Python
TURNS = FAQ.texts[100:136]
QUERIES = [None, *[q for q, g in zip(FAQ.questions, FAQ.gold, strict=True) if 100 <= g[0] < 136][:3],
           "How do I read a file?"]  # fmt: skip
BUDGETS = [0, 25, 60, 150, 400, 1500]


def _stdio(store) -> Client:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    args = ["-m", "scwo_np.cli", "mcp", "--store", str(store)]
    return Client(StdioServerParameters(command=sys.executable, args=args, env=env))


def _text(result) -> str:
    (block,) = result.content  # one text block: what the model reads
    return block.text


async def _ingest(c, session: str, turns: list[str]) -> list[dict]:
    out = []
    for t in turns:
        r = await c.call_tool("hsca_ingest", {"session": session, "text": t})
        assert not r.is_error, _text(r)
        out.append(r.structured_content)
    return out


def _check(r, budget: int, counter: str, turns: list[str]) -> None:
    """The text block within budget by ``counter``, equal to the reported tokens; each piece in it."""
    assert not r.is_error, _text(r)
    text, s = _text(r), r.structured_content
    tokens = int(count_tokens([text], counter)[0]) if text else 0
    assert tokens == s["tokens"] <= budget == s["budget"], (tokens, s["tokens"], budget)
    assert s["token_counter"] == counter and s["turns"] == len(turns)
    blocks = text.split("\n\n") if text else []
    assert len(blocks) == len(s["pieces"])
    for block, p in zip(blocks, s["pieces"], strict=True):
        cite = f"[turn {p['turn']}" + (f", snapshot {p['snapshot']}]" if p["snapshot"] else "]")
        assert block.startswith(cite), (block[:60], cite)
        assert p["reason"] in ("recent", "query", "central") and p["chunk_id"].startswith("faq/")
        assert (p["snapshot_id"] is None) == (p["snapshot"] is None)
        for a, b in p["spans"]:  # every kept span of the turn is in its block
            assert turns[p["turn"] - 1][a:b] in block
    if not text:  # (it spoke of "this query" when none was given)
        assert s["note"] and ("query" in s["note"]) == (s["query"] is not None)


@pytest.mark.parametrize("counter", ["estimate", "wordpiece"])
def test_the_text_block_is_within_the_budget_by_the_counter(tmp_path, counter):
    if counter == "wordpiece":
        pytest.importorskip("tokenizers")  # the embed extra

    async def go():
        async with _stdio(tmp_path) as c:
            tool = {t.name: t for t in (await c.list_tools()).tools}["hsca_context"]
            assert "budget" in tool.description and "query" in tool.description
            assert {"session", "query", "budget", "last", "token_counter", "recent", "exchange"} == set(
                tool.input_schema["properties"]
            )
            ingested = await _ingest(c, "faq", TURNS)
            assert [x["chunk_id"].startswith("faq/") for x in ingested] == [True] * len(TURNS)
            filled = 0
            for budget in BUDGETS:
                for query in QUERIES:
                    args = {"session": "faq", "budget": budget, "token_counter": counter}
                    if query is not None:
                        args["query"] = query
                    r = await c.call_tool("hsca_context", args)
                    _check(r, budget, counter, TURNS)
                    filled += r.structured_content["tokens"] > budget // 2
            assert filled >= len(QUERIES) * 3  # the larger budgets are used, not left empty
            # an unknown session: a tool error the model reads, naming the sessions the server has
            r = await c.call_tool("hsca_context", {"session": "nobody", "query": "x", "budget": 100,
                                                   "token_counter": counter})  # fmt: skip
            assert r.is_error and "'nobody' is unknown" in _text(r) and "'faq'" in _text(r)
            # the earlier names: max_tokens is budget, question is query, counter is token_counter
            r = await c.call_tool("hsca_context", {"session": "faq", "question": QUERIES[1], "max_tokens": 150,
                                                   "counter": counter})  # fmt: skip
            same = await c.call_tool("hsca_context", {"session": "faq", "query": QUERIES[1], "budget": 150,
                                                      "token_counter": counter})  # fmt: skip
            assert _text(r) == _text(same) and r.structured_content == same.structured_content
            assert len(r.meta["scwo_np/deprecated"]) == 3
            # a turn after a context with another counter: the next context sees it
            await _ingest(c, "faq", [FAQ.texts[136]])
            r = await c.call_tool("hsca_context", {"session": "faq", "budget": 400, "token_counter": counter})
            _check(r, 400, counter, [*TURNS, FAQ.texts[136]])
            assert r.structured_content["pieces"][-1]["turn"] == len(TURNS) + 1

    anyio.run(go)


def test_a_restarted_server_keeps_the_session_and_goes_on(tmp_path):
    calls = [
        {"session": "faq", "budget": b, **({"query": q} if q else {})} for b in (60, 400) for q in QUERIES
    ]

    async def first():
        async with _stdio(tmp_path) as c:
            ingested = await _ingest(c, "faq", TURNS)
            assert ingested[-1]["buffered_turns"] >= 1  # an open beat the restart must not lose
            got = [await c.call_tool("hsca_context", a) for a in calls]
            old = await c.call_tool("hsca_context", {"session": "faq", "last": 10**6})
            return ingested, [(_text(r), r.structured_content) for r in got], old.structured_content

    async def second():
        async with _stdio(tmp_path) as c:  # a new server process on the same data folder
            got = [await c.call_tool("hsca_context", a) for a in calls]
            old = await c.call_tool("hsca_context", {"session": "faq", "last": 10**6})
            last = await c.call_tool("hsca_context", {"session": "faq", "last": 2})
            more = await _ingest(c, "faq", FAQ.texts[136:140])
            after = await c.call_tool("hsca_context", {"session": "faq", "budget": 1500})
            listing = await c.call_tool("hsca_context", {"session": "faq", "last": 10**6})
            return [(_text(r), r.structured_content) for r in got], old, last, more, after, listing

    ingested, before, old_before = anyio.run(first)
    restarted, old, last, more, after, listing = anyio.run(second)
    assert restarted == before  # the same text and pieces: nothing was lost, the open beat included
    buffered = old.structured_content["buffered_turns"]
    assert buffered == TURNS[-len(buffered) :] and len(buffered) == ingested[-1]["buffered_turns"]
    assert old.structured_content == old_before and not old.is_error
    assert len(last.structured_content["snapshots"]) == 2
    assert any(p["snapshot"] is None for _, s in before for p in s["pieces"])  # a turn of the open beat
    # the session goes on: the turns are numbered on, snapshot positions continue, no turn twice
    _check(after, 1500, "estimate", [*TURNS, *FAQ.texts[136:140]])
    assert after.structured_content["pieces"][-1]["turn"] == len(TURNS) + 4
    snaps = listing.structured_content["snapshots"]
    assert [s["conversation_position"] for s in snaps] == list(range(len(snaps)))
    texts = [ch["text"] for s in snaps for ch in s["chunks"]] + listing.structured_content["buffered_turns"]
    assert texts == [*TURNS, *FAQ.texts[136:140]]
    committed = {i for x in ingested + more for i in x["committed_snapshots"]}
    assert committed <= {s["snapshot_id"] for s in snaps}


def test_bad_hsca_context_arguments_are_tool_errors(tmp_path):
    async def go():
        async with _stdio(tmp_path) as c:
            await _ingest(c, "faq", TURNS[:3])
            for args, match in [
                ({"session": "faq", "budget": 100, "last": 2}, "last goes with the snapshot listing"),
                ({"session": "faq", "query": "x", "last": 2}, "last goes with the snapshot listing"),
                ({"session": "faq", "recent": 0.5, "last": 2}, "last goes with the snapshot listing"),
                ({"session": "faq", "budget": 100, "recent": 2}, "recent"),
                ({"session": "faq", "budget": 100, "query": "  "}, "query must be a non-empty string"),
                ({"session": "faq", "budget": -1}, "budget"),
                ({"session": "faq", "budget": 100, "token_counter": "bpe"}, "token_counter must be one of"),
                ({"session": "a/b", "budget": 100}, "session must be"),
                ({"session": "faq", "budget": 100, "max_tokens": 100}, "got both 'budget' and its old name"),
            ]:
                r = await c.call_tool("hsca_context", args)
                assert r.is_error and match in _text(r), (args, _text(r))
            r = await c.call_tool("hsca_context", {"session": "faq", "budget": 100})
            assert not r.is_error  # and it answers on

    anyio.run(go)


def test_without_a_budget_the_model_gets_context_not_more_than_the_conversation(tmp_path):
    """A call naming no budget gets the context within HSCA_BUDGET, never more text than the talk:
    it got the stored snapshots as JSON, three times the conversation's text on a 79-turn chat.
    ``recent`` is the Python argument's: a larger share gives the newest turns more of the room."""
    from scwo_np.mcp_server._tools import HSCA_BUDGET

    async def go():
        async with _stdio(tmp_path) as c:
            await _ingest(c, "faq", TURNS)
            plain = await c.call_tool("hsca_context", {"session": "faq"})
            asked = await c.call_tool("hsca_context", {"session": "faq", "query": QUERIES[1]})
            small = await c.call_tool("hsca_context", {"session": "faq", "query": QUERIES[1], "budget": 600})
            more = await c.call_tool(
                "hsca_context", {"session": "faq", "query": QUERIES[1], "budget": 600, "recent": 0.8}
            )
            ex = await c.call_tool(
                "hsca_context", {"session": "faq", "query": QUERIES[1], "budget": 600, "exchange": 3}
            )
            return plain, asked, small, more, ex

    plain, asked, small, more, ex = anyio.run(go)
    _check(ex, 600, "estimate", TURNS)
    assert {34, 35, 36} <= {p["turn"] for p in ex.structured_content["pieces"]}  # the newest exchange
    talk = "\n\n".join(TURNS)
    for r in (plain, asked):
        _check(r, HSCA_BUDGET, "estimate", TURNS)
        assert len(_text(r)) <= len(talk) + 40  # the conversation and one citation at most
        assert "snapshots" not in r.structured_content
    _check(small, 600, "estimate", TURNS)
    _check(more, 600, "estimate", TURNS)

    def newest(r):
        return sum(len(p["spans"]) for p in r.structured_content["pieces"] if p["reason"] == "recent")

    assert newest(more) > newest(small)
