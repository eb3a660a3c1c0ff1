"""The pipelines and cosine dedup with an embedder instead of embeddings, on real text."""

import dataclasses

import numpy as np
import pytest

from scwo_np import load_sample
from scwo_np.dedup import deduplicate
from scwo_np.embed import LSAEmbedder
from scwo_np.optimize import ContextChunk, KBContextOptimizer, MoragContextOptimizer
from scwo_np.tokens import WordPieceCounter

QUESTION = "How do I read a CSV file?"


@pytest.fixture(scope="module")
def pool():
    s = load_sample()
    cand = np.argsort(-(s.embeddings @ s.query_embeddings[0]), kind="stable")[:40]
    texts = [s.texts[i] for i in cand]
    return texts, [s.sources[i] for i in cand], LSAEmbedder(texts + [QUESTION], dim=64)


def test_kb_with_an_embedder_equals_kb_given_the_same_vectors(pool):
    texts, sources, lsa = pool
    matches = [
        {"id": k, "text": t, "path": p, "score": 1 - k / 100}
        for k, (t, p) in enumerate(zip(texts, sources, strict=True))
    ]
    opts = {"budget": 900, "max_per_source": 4}
    got = KBContextOptimizer(embedder=lsa).optimize(matches, opts, query=QUESTION)
    V, q = lsa(texts), lsa([QUESTION])[0]
    given = [{**m, "embedding": V[k]} for k, m in enumerate(matches)]
    want = KBContextOptimizer().optimize(given, {**opts, "query_embedding": q})
    assert [m["id"] for m in got.chunks] == [m["id"] for m in want.chunks]
    assert got.chunks[0] is matches[got.indices[0]]  # the user's own dicts come back, unmodified
    assert "embedding" not in matches[0]
    assert any(r.step == "mmr_selection" for r in got.removed)
    # the async call takes the question too (it took matches and options only)
    import asyncio

    awaited = asyncio.run(KBContextOptimizer(embedder=lsa).optimize_async(matches, opts, query=QUESTION))
    assert awaited.indices.tolist() == got.indices.tolist()


@pytest.mark.integration
def test_kb_counts_tokens_with_the_counter(pool):
    texts, _, _ = pool
    matches = [{"id": k, "text": t, "score": 1 - k / 100} for k, t in enumerate(texts)]
    wp = WordPieceCounter()
    res = KBContextOptimizer(token_counter=wp).optimize(matches, {"budget": 700, "adaptive_selection": True, "deduplication": False,
                                                                  "diversification": False})  # fmt: skip
    assert sum(wp.count([m["text"] for m in res.chunks])) <= 700
    dropped = {r.id: r.detail["tokens"] for r in res.removed if r.step == "adaptive_selection"}
    assert dropped and all(v == wp(texts[i]) for i, v in dropped.items())


def test_kb_query_needs_an_embedder():
    with pytest.raises(ValueError, match="needs an embedder"):
        KBContextOptimizer().optimize([{"text": "a", "score": 1}], query="csv")
    with pytest.raises(ValueError, match="embedder must be one of 'lsa', 'minilm'"):
        KBContextOptimizer(embedder="bert")


def test_morag_with_an_embedder_equals_morag_given_the_same_vectors(pool):
    texts, sources, lsa = pool
    chunks = [
        ContextChunk(str(k), t, 0.9 - k / 100, p, [], [])
        for k, (t, p) in enumerate(zip(texts, sources, strict=True))
    ]
    got = MoragContextOptimizer(1500, embedder=lsa).optimize(chunks, QUESTION)
    V, q = lsa(texts), lsa([QUESTION])[0]
    given = [dataclasses.replace(c, embedding=V[k]) for k, c in enumerate(chunks)]
    want = MoragContextOptimizer(1500).optimize(given, QUESTION, query_embedding=q)
    assert [c.id for c in got.chunks] == [c.id for c in want.chunks]
    assert all(c.embedding is None for c in chunks)  # nothing written into the caller's chunks
    plain = MoragContextOptimizer(1500).optimize(chunks, QUESTION)
    assert [c.id for c in plain.chunks] != [c.id for c in got.chunks]  # MMR, not the spec's order


@pytest.mark.integration
def test_morag_counts_with_the_counter(pool):
    texts, sources, _ = pool
    chunks = [
        ContextChunk(str(k), t, 0.9, p, [], []) for k, (t, p) in enumerate(zip(texts, sources, strict=True))
    ]
    wp = WordPieceCounter()
    ctx = MoragContextOptimizer(1200, token_counter=wp).optimize(chunks, QUESTION)
    assert ctx.total_tokens == sum(wp.count([c.content for c in ctx.chunks])) <= 1200 - 500


def test_cosine_dedup_with_an_embedder_equals_dedup_of_its_vectors(pool):
    texts, _, lsa = pool
    docs = texts[:20] + texts[:5]  # five exact repeats
    got = deduplicate(docs, method="cosine", embedder=lsa, threshold=0.9)
    want = deduplicate(docs, embeddings=lsa(docs), method="cosine", threshold=0.9)
    np.testing.assert_array_equal(got.dropped, want.dropped)
    assert {20, 21, 22, 23, 24} <= set(got.dropped.tolist())
    with pytest.raises(ValueError, match="texts"):
        deduplicate(method="cosine", embedder=lsa)


@pytest.mark.parametrize("budget", [300, 400, 600, 2000])
def test_morag_text_holds_every_chunk_it_kept(pool, budget):
    """``optimize`` fitted the chunks' own tokens and ``format_context`` then left them out for its
    header and lines: at 300 tokens the CLI said "kept 3" and the text held none ("Total Chunks: 0",
    "3 of 3 chunks left out"). The layout is budgeted with the chunks now: what was kept is shown."""
    texts, sources, _ = pool
    chunks = [
        ContextChunk(str(k), t, 0.9 - k / 100, src, [], [])
        for k, (t, src) in enumerate(zip(texts, sources, strict=True))
    ]
    opt = MoragContextOptimizer(budget=budget)
    ctx = opt.optimize(chunks, QUESTION)
    text = opt.format_context(ctx, QUESTION)
    assert ctx.chunks and "left out" not in text
    assert text.count("## Source ") == len(ctx.chunks) and f"Total Chunks: {len(ctx.chunks)}" in text
    assert len(text) // 4 <= budget - opt.response_reserve
    assert {r.id for r in ctx.removals if r.step == "token_budget"} == set(ctx.removed_chunks) - {
        r.id for r in ctx.removals if r.step != "token_budget"
    }
