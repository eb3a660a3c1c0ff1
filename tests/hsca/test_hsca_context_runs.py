"""HSCAEngine.context when the budget holds the whole conversation: consecutive turns under one
citation (scwo_np/hsca/_blocks.py), so all of it fits within the conversation and one citation.

A new user's repro: a six-turn question-and-answer talk about dpkg and apt-file asked at a budget of
2,000 came back without a turn (the answer to the first question, or the question of the last): a
citation per turn cost more than the one citation the context may add to the conversation, and whole
turns went to pay for them.  The turns are the Debian FAQ's own questions and answers (Debian's
``debian-faq`` 11.0, ``scwo_evals/data/hsca_context/debian-faq.json.gz``; evaluation data, its
licence in ``scwo_evals/README.md``)."""

import gzip
import json
from collections import Counter
from pathlib import Path

import pytest

from scwo_np.hsca import HSCAEngine, _context
from scwo_np.hsca._blocks import join_blocks
from scwo_np.tokens import as_token_counter

ROOT = Path(__file__).resolve().parents[2]
_DEBIAN = json.loads(gzip.open(ROOT / "scwo_evals" / "data" / "hsca_context" / "debian-faq.json.gz").read())
_T = _DEBIAN["turns"]
#: Three of the FAQ's questions (section titles) and the paragraph answering each: the repro's talk.
TALK = [
    "How can I tell what packages are already installed on a Debian system?",
    _T[320],  # "To learn the status of all the packages installed ... dpkg --list ..."
    "How do I display the files of an installed package?",
    _T[323],  # "To list all the files provided by the installed package foo ... dpkg --listfiles foo ..."
    "How can I find out what package produced a particular file?",
    _T[326],  # "* apt-file search foo ..."
]
QUERIES = [None, "Which command lists the files a package installed?", "How do I put a package on hold?"]


def _engine(counter="estimate"):
    eng = HSCAEngine(token_counter=counter)
    for text in TALK:
        eng.ingest_turn(text)
    return eng


def _said_twice(eng, ctx):
    index = eng._index
    seen = Counter()
    for p in ctx.pieces:
        units = index.turn_units[p.turn - 1]
        spans = [index.unit_span[u] for u in units]
        for span in p.spans:
            seen[index.unit_keys[units.start + spans.index(tuple(span))]] += 1
    return {k: n for k, n in seen.items() if n > 1}


def _check_whole(eng, ctx, counter):
    """All six turns, whole, each sentence once, one citation: the conversation and at most one
    citation by the counter (the cap), the text counted exactly."""
    one = int(as_token_counter(counter).count([_context.ONE_CITATION])[0])
    whole = eng._index.whole_tokens()
    assert [p.turn for p in ctx.pieces] == [1, 2, 3, 4, 5, 6], [p.turn for p in ctx.pieces]
    assert [p.text for p in ctx.pieces] == TALK and _said_twice(eng, ctx) == {}
    assert ctx.text == "[turns 1-6] " + "\n\n".join(TALK)
    assert ctx.tokens == int(as_token_counter(counter).count([ctx.text])[0]) <= whole + one
    for p in ctx.pieces:  # each piece still maps to its own turn: spans and citation exact
        turn = TALK[p.turn - 1]
        assert p.citation == f"turn {p.turn}" and _context.kept_text(turn, p.spans) == turn
        assert p.spans[0][0] == 0 and p.spans[-1][1] == len(turn) and p.text in ctx.text


def test_join_blocks_makes_runs_of_consecutive_turns_only_when_asked():
    blocks = [(1, "turn 1, snapshot 1", "Q."), (2, "turn 2, snapshot 1", "A."), (3, "turn 3", "Q2."),
              (5, "turn 5", "Bye.")]  # fmt: skip
    assert (
        join_blocks(blocks)
        == "[turn 1, snapshot 1] Q.\n\n[turn 2, snapshot 1] A.\n\n[turn 3] Q2.\n\n[turn 5] Bye."
    )
    assert join_blocks(blocks, runs=True) == "[turns 1-3] Q.\n\nA.\n\nQ2.\n\n[turn 5] Bye."
    assert join_blocks([]) == "" and join_blocks(blocks[3:], runs=True) == "[turn 5] Bye."


@pytest.mark.parametrize("query", QUERIES)
def test_an_ample_budget_gives_the_whole_talk(query):
    """Before: turns [1, 2, 4, 5, 6] without a query, [2, 3, 4, 5, 6] with one (estimate counter)."""
    eng = _engine()
    whole = eng._index.whole_tokens()
    one = int(as_token_counter("estimate").count([_context.ONE_CITATION])[0])
    for budget in (2000, whole + one, 10 * whole):
        _check_whole(eng, eng.context(query, budget), "estimate")
    # a budget just under the conversation: within it, every turn it cannot hold left out whole
    ctx = eng.context(query, whole - 1)
    assert ctx.tokens <= whole - 1 and len(ctx.pieces) >= 4 and _said_twice(eng, ctx) == {}


@pytest.mark.integration
@pytest.mark.parametrize("counter", ["cl100k_base", "wordpiece"])
def test_an_ample_budget_gives_the_whole_talk_by_other_counters(counter):
    """Before, by cl100k without a query: turns [1, 2, 4, 6]."""
    pytest.importorskip("tiktoken" if counter == "cl100k_base" else "tokenizers")
    eng = _engine(counter)
    for query in QUERIES:
        _check_whole(eng, eng.context(query, 2000), counter)


def test_the_cli_prints_the_whole_talk(tmp_path, capsys):
    """``scwo hsca context --budget 2000`` (what a model reads from the command line): before, turns
    1, 2, 4 and 6 (132 of 2,000 tokens)."""
    from scwo_np.cli import main

    conv = tmp_path / "talk.jsonl"
    conv.write_text("".join(json.dumps({"text": t}) + "\n" for t in TALK), encoding="utf-8")
    store = str(tmp_path / "s.sqlite")
    assert main(["hsca", "ingest", str(conv), "--store", store, "--session", "dpkg", "--open"]) == 0
    capsys.readouterr()
    for query in QUERIES:
        argv = ["hsca", "context", "--store", store, "--session", "dpkg", "--budget", "2000"]
        assert main(argv + (["--query", query] if query else [])) == 0
        out, err = capsys.readouterr()
        assert out == "[turns 1-6] " + "\n\n".join(TALK) + "\n"
        assert main([*argv, "--json", *(["--query", query] if query else [])]) == 0
        d = json.loads(capsys.readouterr().out)
        assert [p["turn"] for p in d["pieces"]] == [1, 2, 3, 4, 5, 6] and d["text"] == out[:-1]
        assert f"{d['tokens']} tokens of 2000 (estimate)" in err


@pytest.mark.integration
def test_the_mcp_tool_gives_the_whole_talk(tmp_path):
    """``hsca_context`` over the SDK's client, in process: the text block the model reads is the
    whole talk under one citation, within the conversation and one citation by each counter."""
    anyio = pytest.importorskip("anyio")
    pytest.importorskip("mcp")
    from mcp import Client

    from scwo_np.mcp_server import build_server

    async def go():
        async with Client(build_server(tmp_path)) as c:
            for text in TALK:
                assert not (await c.call_tool("hsca_ingest", {"session": "dpkg", "text": text})).is_error
            for counter in ("estimate", "wordpiece"):
                if counter == "wordpiece":
                    pytest.importorskip("tokenizers")
                for query in QUERIES:
                    args = {"session": "dpkg", "budget": 2000, "token_counter": counter}
                    r = await c.call_tool("hsca_context", {**args, **({"query": query} if query else {})})
                    (block,) = r.content
                    s = r.structured_content
                    assert not r.is_error and block.text == "[turns 1-6] " + "\n\n".join(TALK)
                    assert [p["turn"] for p in s["pieces"]] == [1, 2, 3, 4, 5, 6]
                    eng = _engine(counter)
                    one = int(as_token_counter(counter).count([_context.ONE_CITATION])[0])
                    assert s["tokens"] == eng.context(query, 2000).tokens <= eng._index.whole_tokens() + one

    anyio.run(go)
