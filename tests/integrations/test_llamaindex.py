"""ScwoNodePostprocessor against the real llama-index-core, offline, on real text."""

import asyncio
import warnings

import numpy as np
import pytest
from llama_index.core.postprocessor import LongContextReorder
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, TextNode

from scwo_np import load_sample, select_texts
from scwo_np.integrations.llamaindex import ScwoNodePostprocessor
from scwo_np.select._units import LEXICAL
from scwo_np.tokens import count_tokens
from tests import naive

QUESTION = "How do I read a CSV file?"


@pytest.fixture(scope="module")
def sample():
    return load_sample()


@pytest.fixture(scope="module")
def cand(sample):
    return np.argsort(-(sample.embeddings @ sample.query_embeddings[0]), kind="stable")[:50]


def _nodes(sample, cand, vectors=False, meta=False):
    return [
        NodeWithScore(
            node=TextNode(
                text=sample.texts[i],
                id_=str(i),
                metadata={"source": sample.sources[i]} if meta else {},
                embedding=sample.embeddings[i].tolist() if vectors else None,
            ),
            score=float(50 - k),
        )  # fmt: skip
        for k, i in enumerate(cand)
    ]


def test_default_is_select_texts_on_the_node_text(sample, cand):
    nodes = _nodes(sample, cand)
    before = [n.model_copy(deep=True) for n in nodes]
    out = ScwoNodePostprocessor(budget=800).postprocess_nodes(nodes, query_str=QUESTION)
    want = select_texts([n.node.get_content() for n in nodes], QUESTION, 800)
    assert [n.node.node_id for n in out] == [nodes[i].node.node_id for i in want.indices]
    assert [n.score for n in out] == [nodes[i].score for i in want.indices]  # scores as they were
    assert sum(n.node.metadata["scwo_tokens"] for n in out) <= 800
    assert nodes == before  # nothing written into the caller's nodes
    assert "scwo_" not in out[0].node.get_content(metadata_mode=MetadataMode.LLM)  # our keys stay out


@pytest.mark.parametrize("granularity", ["chunk", "sentence"])
@pytest.mark.parametrize("budget", [150, 300, 800])
def test_the_budget_holds_for_what_the_llm_reads_metadata_included(sample, cand, granularity, budget):
    """A reader's metadata (file_path ...) is in the prompt (MetadataMode.LLM): the kept nodes, each
    with its metadata lines, joined by blank lines, are within the budget (they were 1.05-1.19 times
    it), and whole nodes cost what the LLM reads of them."""
    nodes = _nodes(sample, cand, meta=True)
    out = ScwoNodePostprocessor(budget=budget, granularity=granularity).postprocess_nodes(
        nodes, query_str=QUESTION
    )
    read = "\n\n".join(n.node.get_content(metadata_mode=MetadataMode.LLM) for n in out)
    assert out and "source" in read and "scwo_" not in read
    assert (0.8 * budget if granularity == "sentence" else 0) < int(count_tokens([read])[0]) <= budget
    if granularity == "chunk":
        costs = count_tokens([n.node.get_content(metadata_mode=MetadataMode.LLM) for n in nodes])
        want = select_texts([n.node.get_content() for n in nodes], QUESTION, budget, costs=costs,
                            token_counter="estimate")  # fmt: skip
        assert [n.node.node_id for n in out] == [nodes[i].node.node_id for i in want.indices]


def test_node_embeddings_and_the_query_bundle_embedding(sample, cand):
    nodes = _nodes(sample, cand, vectors=True)
    qb = QueryBundle(query_str=sample.queries[0], embedding=sample.query_embeddings[0].tolist())
    out = ScwoNodePostprocessor(budget=900, token_counter="wordpiece").postprocess_nodes(nodes, qb)
    texts = [n.node.get_content(metadata_mode=MetadataMode.NONE) for n in nodes]
    # The question as text (its words count beside the cosine), its vector the bundle's.
    want = naive.fused_chunks(sample.embeddings[cand], sample.query_embeddings[0], texts, sample.queries[0],
                              sample.costs[cand], 900, LEXICAL["chunk"])  # fmt: skip
    assert [int(n.node.node_id) for n in out] == cand[want].tolist()
    assert [n.node.metadata["scwo_rank"] for n in out] == list(range(len(out)))
    with pytest.raises(ValueError, match="query has none"):
        ScwoNodePostprocessor(budget=900).postprocess_nodes(nodes, query_str=QUESTION)


def test_edges_is_llamaindex_long_context_reorder_by_relevance(sample, cand):
    nodes = _nodes(sample, cand, vectors=True)
    qb = QueryBundle(query_str=sample.queries[0], embedding=sample.query_embeddings[0].tolist())
    picks = ScwoNodePostprocessor(budget=1500).postprocess_nodes(nodes, qb)
    edges = ScwoNodePostprocessor(budget=1500, order="edges").postprocess_nodes(nodes, qb)
    by_rel = [NodeWithScore(node=n.node, score=n.node.metadata["scwo_relevance"]) for n in picks]
    theirs = LongContextReorder().postprocess_nodes(by_rel, qb)
    assert [n.node.node_id for n in edges] == [n.node.node_id for n in theirs]


def test_async_equals_sync(sample, cand):
    nodes = _nodes(sample, cand)
    pp = ScwoNodePostprocessor(budget=600, order="original")
    sync = pp.postprocess_nodes(nodes, query_str=QUESTION)
    got = asyncio.run(pp.apostprocess_nodes(nodes, query_str=QUESTION))
    assert [n.node.node_id for n in got] == [n.node.node_id for n in sync]
    where = {n.node.node_id: k for k, n in enumerate(nodes)}
    pos = [where[n.node.node_id] for n in sync]
    assert len(pos) > 1 and pos == sorted(pos)  # order="original": input order


def test_the_config_is_serialisable():
    pp = ScwoNodePostprocessor(budget=500, lam=0.5, order="edges")
    cfg = pp.to_dict()
    assert cfg["budget"] == 500 and cfg["order"] == "edges" and cfg["class_name"] == "ScwoNodePostprocessor"
    again = ScwoNodePostprocessor.from_dict(cfg)
    assert (again.budget, again.lam, again.order) == (500, 0.5, "edges")


@pytest.mark.parametrize(
    "make, err, match",
    [
        (lambda: ScwoNodePostprocessor(budget=-5), ValueError, "budget"),
        (lambda: ScwoNodePostprocessor(budget=5, lam=-1), ValueError, "lam"),
        (lambda: ScwoNodePostprocessor(budget=5).postprocess_nodes([]), ValueError, "needs the query"),
        (lambda: ScwoNodePostprocessor(budget=5).postprocess_nodes(["x"], query_str="q"), TypeError, "nodes"),
    ],
)
def test_bad_input_is_named(make, err, match):
    with pytest.raises(err, match=match):
        make()


def test_sentences_keep_only_what_fits_and_leave_the_caller_s_nodes_alone(sample, cand):
    nodes = _nodes(sample, cand)
    before = [n.model_copy(deep=True) for n in nodes]
    out = ScwoNodePostprocessor(budget=300, granularity="sentence").postprocess_nodes(
        nodes, query_str=QUESTION
    )
    want = select_texts([n.node.get_content() for n in nodes], QUESTION, 300, granularity="sentence")
    assert [n.node.get_content() for n in out] == want.texts
    assert [n.node.metadata["scwo_spans"] for n in out] == [[list(x) for x in s] for s in want.spans]
    assert nodes == before
    assert "scwo_" not in out[0].node.get_content(metadata_mode=MetadataMode.LLM)


def test_lam_auto_is_what_select_texts_chooses(sample, cand):
    nodes = _nodes(sample, cand)
    out = ScwoNodePostprocessor(budget=300, lam="auto").postprocess_nodes(nodes, query_str=QUESTION)
    want = select_texts([n.node.get_content() for n in nodes], QUESTION, 300, lam="auto")
    assert [n.node.get_content() for n in out] == want.texts


def _with_paths(sample, qi):
    """The 20 nodes nearest question ``qi``, each with a reader's ``file_path`` (in the LLM's text)."""
    near = np.argsort(-(sample.embeddings @ sample.query_embeddings[qi]), kind="stable")[:20]
    return [
        NodeWithScore(node=TextNode(text=sample.texts[i], metadata={
            "file_path": "/usr/share/doc/python3-doc/html/_sources/" + sample.sources[i]}), score=1.0)
        for i in near
    ]  # fmt: skip


@pytest.mark.parametrize("qi", [0, 1, 2])
def test_metadata_no_false_warning_and_the_kept_nodes_filled(sample, qi):
    """The budget left after the metadata was searched for with inner selections whose own 'no sentence
    fits in a budget of 1 tokens' warnings reached the user though nodes came back; and the nodes kept
    held a few tokens of text beside their metadata (one node's whole text was 'dpkg'). Now: no warning
    when nodes come back, and the kept nodes are filled on what their metadata leaves."""
    nodes = _with_paths(sample, qi)
    pp = ScwoNodePostprocessor(budget=100, granularity="sentence", token_counter="wordpiece")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = pp.postprocess_nodes(nodes, query_str=sample.queries[qi])
    assert out and [str(w.message) for w in caught] == []
    read = "\n\n".join(n.node.get_content(metadata_mode=MetadataMode.LLM) for n in out)
    text = "\n\n".join(n.node.get_content() for n in out)
    used, body = (int(x) for x in count_tokens([read, text], "wordpiece"))
    assert used <= 100
    # What the metadata (and the blank lines) took, the rest is text, up to the budget's last sentence.
    longest = max(count_tokens([s for n in nodes for s in n.node.get_content().split(". ")], "wordpiece"))
    assert body >= 100 - (used - body) - longest


def test_metadata_alone_over_the_budget_is_one_warning_naming_its_cost(sample):
    nodes = _with_paths(sample, 0)
    cost = int(min(count_tokens([n.node.get_content(metadata_mode=MetadataMode.LLM) for n in nodes], "wordpiece")
                   - count_tokens([n.node.get_content() for n in nodes], "wordpiece")))  # fmt: skip
    for granularity in ("chunk", "sentence"):
        pp = ScwoNodePostprocessor(budget=cost - 2, granularity=granularity, token_counter="wordpiece")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = pp.postprocess_nodes(nodes, query_str=sample.queries[0])
        assert out == []
        assert len(caught) == 1, [str(w.message) for w in caught]
        msg = str(caught[0].message)
        assert "metadata" in msg and f"{cost} tokens" in msg and "leaves no room" in msg


def test_copies_merged_into_the_kept_node_are_named_and_lam_is_reported(sample):
    near = np.argsort(-(sample.embeddings @ sample.query_embeddings[0]), kind="stable")[:11].tolist()
    nodes = [
        NodeWithScore(node=TextNode(text=sample.texts[i], id_=f"n{k}", metadata={"source": f"s{k}"}), score=1.0)
        for k, i in enumerate(near + near[:9])
    ]  # fmt: skip
    for granularity in ("chunk", "sentence"):
        pp = ScwoNodePostprocessor(budget=100000, granularity=granularity, lam="auto")
        out = pp.postprocess_nodes(nodes, query_str=sample.queries[0])
        assert len(out) == 11
        named = [e["id"] for n in out for e in n.node.metadata.get("scwo_duplicates", [])]
        assert sorted([n.node.node_id for n in out] + named) == sorted(n.node.node_id for n in nodes)
        assert all(e["metadata"] == {"source": "s" + e["id"][1:]}
                   for n in out for e in n.node.metadata.get("scwo_duplicates", []))  # fmt: skip
        read = out[0].node.get_content(metadata_mode=MetadataMode.LLM)
        assert "scwo_duplicates" not in read and "scwo_lam" not in read  # kept out of the prompt
        lam = select_texts([n.node.get_content() for n in nodes], sample.queries[0], 100000, lam="auto",
                           granularity=granularity).lam  # fmt: skip
        assert 0 < lam < 1 and {n.node.metadata["scwo_lam"] for n in out} == {lam}


@pytest.mark.parametrize("meta", [False, True])
def test_each_node_is_embedded_once(sample, cand, meta):
    """With metadata the selection runs more than once (the budget holds what the LLM reads): an
    embedder was called for every text on every run (1,407 texts embedded for 201 nodes)."""
    from scwo_np.embed import LSAEmbedder

    lsa = LSAEmbedder([sample.texts[i] for i in cand] + [QUESTION])
    seen = []

    def embedder(texts):
        seen.extend(texts)
        return lsa(texts)

    nodes = _nodes(sample, cand, meta=meta)
    out = ScwoNodePostprocessor(budget=400, embedder=embedder).postprocess_nodes(nodes, query_str=QUESTION)
    assert out and len(seen) <= len(nodes) + 1  # the texts and the question, once each
