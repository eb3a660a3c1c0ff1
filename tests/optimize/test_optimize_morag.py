import asyncio

import naive
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scwo_np.optimize import ContextChunk, MoragContextOptimizer, relationship_edges
from scwo_np.optimize._morag import RELATIONSHIP_TYPES


class TestContextOptimization:
    """The spec's unit tests: its redundancy test as written (run with asyncio), its stubs made real."""

    def setup_method(self):
        self.optimizer = MoragContextOptimizer(budget=1000)

    def test_redundancy_removal(self):
        chunks = [
            ContextChunk("1", "AI is transforming healthcare", 0.9, "doc1", ["AI", "healthcare"], []),
            ContextChunk(
                "2", "Artificial intelligence is changing healthcare", 0.8, "doc2", ["AI", "healthcare"], []
            ),
            ContextChunk("3", "Machine learning in finance", 0.7, "doc3", ["ML", "finance"], []),
        ]
        unique_chunks, stats = asyncio.run(self.optimizer._remove_redundancy(chunks))
        assert len(unique_chunks) == 2  # First two should be merged
        assert stats["removed_count"] == 1

    def test_token_budget_fitting(self):
        # 500 tokens available (1000 minus the 500-token reserve); len // 4 tokens each.
        chunks = [
            ContextChunk(str(k), "x" * (4 * t), 1.0 - k / 10, "d", [], [])
            for k, t in enumerate([300, 250, 150, 60])
        ]
        final, removed = asyncio.run(self.optimizer._fit_token_budget(chunks))
        assert [c.id for c in final] == ["0", "2"] and removed == ["1", "3"]
        assert sum(len(c.content) // 4 for c in final) <= 500
        assert self.optimizer.fit_token_budget([]) == ([], [])

    def test_relationship_identification(self):
        chunks = [
            ContextChunk("a", "t", 0.9, "doc1", ["AI", "health", "data"], [], timestamp="2024-01-01"),
            ContextChunk("b", "t", 0.9, "doc2", ["AI", "health"], [], timestamp="2024-02-01"),
            ContextChunk("c", "t", 0.9, "doc1", ["data"], []),
            ContextChunk("d", "t", 0.9, "doc3", ["finance"], []),
        ]
        rels = asyncio.run(self.optimizer._identify_relationships(chunks))
        got = [(r.chunk1_id, r.chunk2_id, r.relationship_type, round(r.strength, 4)) for r in rels]
        assert got == [
            ("a", "b", "temporal_sequence", 0.6667),  # 2/3 overlap, earlier -> temporal, max(0.667, 0.6)
            ("a", "c", "same_document", 0.4),  # 1/3 overlap, same doc -> max(0.333, 0.4)
        ]
        assert rels[0].description == "Shared entities: AI, health"


WORDS = ["AI", "health", "care", "finance", "model", "data", "the", "is", "in"]
ENTS = ["AI", "health", "ML", "finance", "data"]


@st.composite
def chunk_lists(draw, max_n=9):
    n = draw(st.integers(0, max_n))
    stamped = draw(st.booleans())
    chunks = []
    for k in range(n):
        if chunks and draw(st.integers(0, 3)) == 0:
            content = chunks[draw(st.integers(0, len(chunks) - 1))].content + draw(
                st.sampled_from(["", " too", "!"])
            )
        else:
            content = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=30)))
        chunks.append(
            ContextChunk(
                id=f"c{k}",
                content=content,
                relevance_score=draw(st.sampled_from([0.1, 0.3, 0.5, 0.8, 0.9])),
                source_document=draw(st.sampled_from(["d1", "d2", "d3"])),
                entities=draw(st.lists(st.sampled_from(ENTS), max_size=3)),
                relationships=[],
                timestamp=(
                    f"2024-0{draw(st.integers(1, 9))}-01" if stamped and draw(st.booleans()) else None
                ),
            )
        )
    return chunks


@given(chunk_lists())
def test_relationship_edges_equal_spec_loops(chunks):
    e = relationship_edges(chunks)
    got = [
        (chunks[a].id, chunks[b].id, RELATIONSHIP_TYPES[k], s)
        for a, b, k, s in zip(e.i.tolist(), e.j.tolist(), e.kind.tolist(), e.strength.tolist(), strict=True)
    ]
    want = [(a, b, t, s) for a, b, t, s, _ in naive.morag_relationships(chunks)]
    assert got == want


@given(
    chunk_lists(),
    st.sampled_from(["auto", "relevance", "temporal", "topical"]),
    st.sampled_from([600, 700, 4000]),
)
def test_full_optimization_pipeline(chunks, strategy, max_tokens):
    opt = MoragContextOptimizer(budget=max_tokens)
    ctx = asyncio.run(opt.optimize_context(chunks, "AI in health care", strategy))
    ids, removed, used, n_dup = naive.morag_optimize(chunks, "AI in health care", strategy, max_tokens)
    assert [c.id for c in ctx.chunks] == ids
    assert ctx.removed_chunks == removed
    assert ctx.organization_strategy == used
    assert ctx.deduplication_stats["removed_count"] == n_dup
    assert ctx.total_tokens == sum(len(c.content) // 4 for c in ctx.chunks) <= max(max_tokens - 500, 0)
    text = opt.format_context(ctx, "AI in health care")
    assert text.startswith("# Context for Query: AI in health care\n")
    assert len(text) // 4 <= opt.budget - opt.response_reserve  # what the prompt holds, layout included
    shown = text.count("## Source ")
    if shown < len(ctx.chunks):  # the layout's lines left the least relevant out, and says so
        assert f"[scwo: {len(ctx.chunks) - shown} of {len(ctx.chunks)} chunks left out" in text
    else:
        assert "chunks left out" not in text
    assert opt.context_metrics["chunks_processed"] == len(chunks)
    # Every chunk is either kept or removed exactly once, with a step and a reason.
    gone = [r.id for r in ctx.removals]
    assert sorted(gone + [c.id for c in ctx.chunks]) == sorted(c.id for c in chunks)
    assert [r.id for r in ctx.removals if r.step == "token_budget"] == removed
    assert sum(r.step == "redundancy" for r in ctx.removals) == n_dup
    for r in ctx.removals:
        assert chunks[r.index].id == r.id and r.reason
        assert r.step in ("relevance_filter", "redundancy", "token_budget")


def test_inputs_are_not_mutated_and_metrics_accumulate():
    chunks = [ContextChunk(str(k), f"text about AI number {k}", 0.5, "d", ["AI"], []) for k in range(4)]
    before = [c.relevance_score for c in chunks]
    opt = MoragContextOptimizer()
    ctx = opt.optimize(chunks, "AI")
    opt.optimize(chunks, "AI")
    assert [c.relevance_score for c in chunks] == before
    assert all(c.relevance_score > 0.5 for c in ctx.chunks)  # boosted copies
    assert opt.context_metrics["chunks_processed"] == 8
    assert sum(opt.context_metrics["organization_strategies_used"].values()) == 2


def test_hierarchical_puts_overviews_first():
    chunks = [
        ContextChunk("detail", "detail " * 150, 0.9, "d", ["A"], []),
        ContextChunk("overview", "Intro: a b c", 0.5, "d", ["A", "B", "C", "D"], []),
        ContextChunk("early", "first words " * 75, 0.4, "d", [], [], position=0.1),
    ]
    ctx = MoragContextOptimizer(budget=100000).optimize(chunks, "q", "hierarchical")
    assert [c.id for c in ctx.chunks] == ["overview", "early", "detail"]


def test_mmr_budget_step_with_embeddings():
    rng = np.random.default_rng(0)
    E = rng.standard_normal((6, 4))
    chunks = [
        ContextChunk(str(k), chr(65 + k) * 400, 0.9, f"d{k}", [], [], embedding=E[k].tolist())
        for k in range(6)
    ]
    # 380 tokens: three 100-token chunks with the text's header and lines, not four
    opt = MoragContextOptimizer(budget=880, response_reserve=500)
    ctx = opt.optimize(chunks, "q", "relevance", query_embedding=E[0].tolist())
    assert len(ctx.chunks) == 3 and len(ctx.removed_chunks) == 3
    assert ctx.chunks[0].id == "0"  # the query's own chunk is the most relevant


@pytest.mark.parametrize(
    "chunks, kwargs, exc, match",
    [
        ([ContextChunk("1", "a", float("nan"), "d", [], [])], {}, ValueError, "finite"),
        ([ContextChunk("1", 3, 0.5, "d", [], [])], {}, TypeError, "content"),
        (
            [ContextChunk("1", "a", 0.5, "d", [], []), ContextChunk("1", "b", 0.5, "d", [], [])],
            {},
            ValueError,
            "twice",
        ),
        (
            [
                ContextChunk("1", "a", 0.5, "d", [], [], timestamp="2024"),
                ContextChunk("2", "b", 0.5, "d", [], [], timestamp=3),
            ],
            {},
            TypeError,
            "one type",
        ),
        (["chunk"], {}, TypeError, "ContextChunk"),
        ([], {"strategy": "random"}, ValueError, "strategy"),
    ],
)
def test_bad_input(chunks, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        MoragContextOptimizer().optimize(chunks, "q", **kwargs)


@pytest.mark.parametrize("query", ["", "  \n"])
def test_an_empty_query_or_blank_chunk_is_refused(query):
    """Both ran: the ranking without the query's words, a blank chunk kept and laid out."""
    chunks = [ContextChunk("1", "The cache keeps entries.", 0.5, "d", [], [])]
    with pytest.raises(ValueError, match="query is empty"):
        MoragContextOptimizer().optimize(chunks, query)
    with pytest.raises(ValueError, match=r"chunks\[1\].content is empty or only white space"):
        MoragContextOptimizer().optimize([*chunks, ContextChunk("2", query, 0.9, "d", [], [])], "cache")


def test_missing_entities_count_as_empty_and_empty_input():
    c = [
        ContextChunk("1", "alpha beta", 0.9, "d", None, []),
        ContextChunk("2", "alpha beta", 0.8, "e", None, []),
    ]
    ctx = MoragContextOptimizer().optimize(c, "alpha")
    assert [x.id for x in ctx.chunks] == ["1"]
    empty = MoragContextOptimizer().optimize([], "q")
    assert empty.chunks == [] and empty.total_tokens == 0


def test_default_reserve_never_takes_the_whole_window_and_nothing_fitting_warns():
    chunks = [{"id": str(k), "text": "word " * 120, "score": 0.5} for k in range(5)]  # 150 tokens each
    ctx = MoragContextOptimizer(budget=400).optimize(chunks, "q")  # reserve 200: one chunk and its lines fit
    assert len(ctx.chunks) == 1
    with pytest.warns(UserWarning, match="no chunk fits the 10 tokens"):
        ctx = MoragContextOptimizer(budget=400, response_reserve=390).optimize(chunks, "q")
    assert ctx.chunks == []
    with pytest.raises(ValueError, match="leaves no room"):
        MoragContextOptimizer(budget=400, response_reserve=400)


def test_near_duplicates_without_entities_merge_and_are_reported():
    a = "The committee approved the budget for the new library on Monday."
    b = "The committee approved the budget for the new library on Tuesday."
    chunks = [
        {"id": "a", "content": a, "relevance_score": 0.9},
        {"id": "b", "content": b, "relevance_score": 0.8},
    ]
    ctx = MoragContextOptimizer(budget=2000).optimize(chunks, "library budget")
    assert [c.id for c in ctx.chunks] == ["a"]
    (r,) = ctx.removals
    assert (r.index, r.id, r.step, r.detail["duplicate_of"]) == (1, "b", "redundancy", "a")
    assert r.reason.startswith("duplicate of a (similarity 0.9")
    # With entities on both sides the spec's 0.7/0.3 weighting applies (disjoint entities: 0.7 * ratio).
    chunks[0]["entities"], chunks[1]["entities"] = ["Monday"], ["Tuesday"]
    assert len(MoragContextOptimizer(budget=2000).optimize(chunks, "library").chunks) == 2


def test_cli_report_lists_every_removal(tmp_path):
    import json
    import subprocess
    import sys

    rows = [
        {"id": "a", "content": "The committee approved the library budget.", "relevance_score": 0.9},
        {"id": "b", "content": "The committee approved the library budget.", "relevance_score": 0.8},
        {"id": "c", "content": "Unrelated low-relevance note.", "relevance_score": 0.1},
    ]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    rep = tmp_path / "report.jsonl"
    cmd = [sys.executable, "-m", "scwo_np.cli", "optimize", str(src), "--pipeline", "morag", "--query", "budget",
           "--report", str(rep), "-o", str(tmp_path / "out.jsonl")]  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True)
    got = [json.loads(line) for line in rep.read_text().splitlines()]
    assert [(r["id"], r["step"]) for r in got] == [("c", "relevance_filter"), ("b", "redundancy")]


@pytest.mark.volume
def test_redundancy_on_real_changelogs_drops_only_against_kept_chunks():
    """Real Debian changelog entries (tests/dedup/data): every chunk removed as redundant
    reaches 0.7 (difflib, recomputed here) against a chunk that is in the context."""
    import json
    from difflib import SequenceMatcher
    from pathlib import Path

    path = Path(__file__).parents[1] / "dedup" / "data" / "debian_changelog_entries.jsonl"
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if r["split"] == "held_out"][:150]
    chunks = [
        ContextChunk(f"{r['package']}#{r['entry']}", r["text"], 1.0 - k / 1000, r["package"], [], [])
        for k, r in enumerate(rows)
    ]
    text = {c.id: c.content.lower() for c in chunks}
    order = {c.id: k for k, c in enumerate(chunks)}
    opt = MoragContextOptimizer(budget=10**6)
    unique, stats = opt.remove_redundancy(chunks)
    kept = {c.id for c in unique}
    _, _, d = opt._dedup(chunks)
    assert stats["removed_count"] == len(d.dropped) > 0
    for x, k in zip(d.dropped.tolist(), d.duplicate_of.tolist(), strict=True):
        a, b = chunks[max(x, k)].id, chunks[min(x, k)].id
        assert chunks[k].id in kept and order[chunks[k].id] < order[chunks[x].id]
        assert SequenceMatcher(None, text[a], text[b]).ratio() >= 0.7
    opt.dedup_grouping = "components"  # chains: some removals fall below 0.7 against their kept chunk
    _, _, c = opt._dedup(chunks)
    assert (c.similarity < 0.7).any()


def test_the_formatted_context_holds_its_share_of_the_budget():
    """The layout (header, titles, rules) counts: the text was 520 tokens for a share of 500, and a
    1,200-character query made it 836; it is within the share, the least relevant chunk goes first,
    and a header too big for the share says what budget it needs."""
    words = "cache result function input memo table entry lookup hit miss evict size limit key value".split()
    chunks = [
        ContextChunk(str(i), " ".join(f"{words[(i * 7 + k) % len(words)]}{k}" for k in range(80)), 0.9 - 0.1 * i,
                     f"doc{i}", [], [])
        for i in range(5)
    ]  # fmt: skip
    opt = MoragContextOptimizer(budget=1000)
    long_query = "How do I cache the results of a function? " * 30
    for query in ("cache results", long_query):
        ctx = opt.optimize(chunks, query)
        text = opt.format_context(ctx, query)
        assert len(text) // 4 <= 500 and text.count("## Source ") >= 2
        if "left out" in text:
            assert text.rstrip().endswith(f"{ctx.chunks[-1].id}]")
    assert "…" in opt.format_context(opt.optimize(chunks, long_query), long_query)
    with pytest.raises(ValueError, match=r"give budget >= \d+"):
        small = MoragContextOptimizer(budget=20)
        small.format_context(small.optimize(chunks, "cache"), "cache")


def test_a_relevance_score_outside_0_1_is_a_warning():
    """The filter's 0.3 and the boosts are on [0, 1]: a retriever's raw score (BM25's 5.0) passed
    every filter silently, and the layout showed 'Relevance: 5.30'."""
    chunks = [{"id": "a", "content": "the quick brown fox jumps", "relevance_score": 5.0, "source": "x"},
              {"id": "b", "content": "a lazy dog sleeps all day", "relevance_score": 0.5, "source": "y"}]  # fmt: skip
    with pytest.warns(
        UserWarning, match=r"1 of 2 chunks have a relevance_score outside \[0, 1\] \(chunks\[0\]: 5\)"
    ):
        MoragContextOptimizer(budget=600).optimize(chunks, query="fox")
