"""ScwoRanker inside real Haystack pipelines (haystack-ai), offline, on real text: an in-memory
document store, its BM25 and embedding retrievers, serialisation, sync and async."""

import asyncio

import numpy as np
import pytest
from haystack import Document, Pipeline, component
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever, InMemoryEmbeddingRetriever
from haystack.document_stores.in_memory import InMemoryDocumentStore

from scwo_np import load_sample, select_texts
from scwo_np.integrations.haystack import ScwoRanker
from scwo_np.select import STRATEGIES
from scwo_np.select._units import LEXICAL
from scwo_np.tokens import count_tokens
from tests import naive

QUESTION = "How do I read a CSV file?"


@pytest.fixture(scope="module")
def sample():
    return load_sample()


@pytest.fixture(scope="module")
def store(sample):
    """The sample's Python documentation paragraphs with their MiniLM vectors."""
    s = InMemoryDocumentStore()
    s.write_documents([
        Document(id=str(i), content=t, meta={"source": src, "i": i}, embedding=e.tolist())
        for i, (t, src, e) in enumerate(zip(sample.texts, sample.sources, sample.embeddings, strict=True))
    ])  # fmt: skip
    return s


def _bm25_pipeline(store, ranker):
    pipe = Pipeline()
    pipe.add_component("retriever", InMemoryBM25Retriever(store, top_k=40))
    pipe.add_component("ranker", ranker)
    pipe.connect("retriever.documents", "ranker.documents")
    return pipe


def _retrieved(store, question=QUESTION):
    return InMemoryBM25Retriever(store, top_k=40).run(query=question)["documents"]


def _plain(docs):
    """The retrieved documents without their vectors: scwo_np's embedder embeds them."""
    return [Document(id=d.id, content=d.content, meta=d.meta, score=d.score) for d in docs]


def test_in_a_pipeline_it_is_select_texts_on_the_retrieved_documents(store):
    ranker = ScwoRanker(budget=600)
    pipe = Pipeline()
    pipe.add_component("retriever", InMemoryBM25Retriever(store, top_k=40))
    pipe.add_component("strip", _Strip())
    pipe.add_component("ranker", ranker)
    pipe.connect("retriever.documents", "strip.documents")
    pipe.connect("strip.documents", "ranker.documents")
    out = pipe.run({"retriever": {"query": QUESTION}, "ranker": {"query": QUESTION}})["ranker"]["documents"]
    docs = _plain(_retrieved(store))
    want = select_texts([d.content for d in docs], QUESTION, 600)
    assert [d.id for d in out] == [docs[i].id for i in want.indices]
    assert [d.meta["scwo_rank"] for d in out] == list(range(len(out)))
    assert [d.score for d in out] == pytest.approx(want.relevance.tolist())
    assert int(count_tokens(["\n\n".join(d.content for d in out)], "estimate")[0]) <= 600
    assert all(d.meta["source"] for d in out)  # the documents' own meta kept


def test_the_documents_vectors_and_the_query_embedding(sample, store):
    """Embedding retrieval, the question's MiniLM vector given: the fused relevance on those vectors."""
    q = sample.query_embeddings[0]
    pipe = Pipeline()
    pipe.add_component("retriever", InMemoryEmbeddingRetriever(store, top_k=40, return_embedding=True))
    pipe.add_component("ranker", ScwoRanker(budget=900, token_counter="wordpiece"))
    pipe.connect("retriever.documents", "ranker.documents")
    res = pipe.run({"retriever": {"query_embedding": q.tolist()},
                    "ranker": {"query": sample.queries[0], "query_embedding": q.tolist()}})  # fmt: skip
    docs = InMemoryEmbeddingRetriever(store, top_k=40, return_embedding=True).run(query_embedding=q.tolist())[
        "documents"
    ]
    cand = [d.meta["i"] for d in docs]
    want = naive.fused_chunks(sample.embeddings[cand], q, [d.content for d in docs], sample.queries[0],
                              sample.costs[cand], 900, LEXICAL["chunk"])  # fmt: skip
    assert [d.meta["i"] for d in res["ranker"]["documents"]] == [cand[i] for i in want]
    with pytest.raises(ValueError, match="query_embedding"):
        ScwoRanker(budget=900).run(documents=docs, query=sample.queries[0])


def test_sentences_keep_only_what_fits_and_say_where_it_was(store):
    docs = _plain(_retrieved(store))
    before = [Document(id=d.id, content=d.content, meta=dict(d.meta), score=d.score) for d in docs]
    out = ScwoRanker(budget=200, granularity="sentence").run(documents=docs, query=QUESTION)["documents"]
    assert out and int(count_tokens(["\n\n".join(d.content for d in out)], "estimate")[0]) <= 200
    by_id = {d.id: d.content for d in docs}
    for d in out:
        spans = d.meta["scwo_spans"]
        assert " ".join(by_id[d.id][a:b] for a, b in spans) == d.content
    assert docs == before  # the inputs are not modified


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_every_strategy_is_select_texts_with_it(store, strategy):
    docs = _plain(_retrieved(store))
    out = ScwoRanker(budget=500, strategy=strategy).run(documents=docs, query=QUESTION)["documents"]
    want = select_texts([d.content for d in docs], QUESTION, 500, strategy=strategy)
    assert [d.id for d in out] == [docs[i].id for i in want.indices]


def test_lam_auto_and_the_run_s_own_budget(store):
    docs = _plain(_retrieved(store))
    out = ScwoRanker(budget=900, lam="auto").run(documents=docs, query=QUESTION, budget=300)["documents"]
    want = select_texts([d.content for d in docs], QUESTION, 300, lam="auto")
    assert [d.id for d in out] == [docs[i].id for i in want.indices]


def test_the_pipeline_serialises_and_comes_back(store):
    ranker = ScwoRanker(budget=400, strategy="dpp", order="edges", strategy_options={"cost_exponent": 0.5})
    assert ScwoRanker.from_dict(ranker.to_dict()).to_dict() == ranker.to_dict()
    pipe = _bm25_pipeline(store, ranker)
    again = Pipeline.loads(pipe.dumps(), allowed_modules=["scwo_np.integrations.haystack"])
    assert again.get_component("ranker").to_dict() == ranker.to_dict()


def test_async_pipeline_equals_sync(store):
    docs = _plain(_retrieved(store))
    sync = ScwoRanker(budget=500).run(documents=docs, query=QUESTION)["documents"]
    pipe = Pipeline()  # Haystack 3: one Pipeline, run or run_async
    pipe.add_component("ranker", ScwoRanker(budget=500))
    res = asyncio.run(pipe.run_async({"ranker": {"documents": docs, "query": QUESTION}}))
    assert [d.id for d in res["ranker"]["documents"]] == [d.id for d in sync]


def test_empty_and_bad_input():
    assert ScwoRanker(budget=50).run(documents=[], query=QUESTION) == {"documents": []}
    with pytest.raises(ValueError, match="strategy must be one of"):
        ScwoRanker(budget=50, strategy="nope")
    with pytest.raises(TypeError, match="serialises"):
        ScwoRanker(budget=50, embedder=lambda ts: np.ones((len(ts), 2)))
    with pytest.raises(ValueError, match="budget"):
        ScwoRanker(budget=-1)
    with pytest.warns(UserWarning, match=r"1 document with no text left out \(positions 0\)"):
        assert ScwoRanker(budget=50).run(documents=[Document(content=None)], query=QUESTION) == {
            "documents": []
        }
    with pytest.raises(TypeError, match=r"documents\[1\] is str, not a haystack Document"):
        ScwoRanker(budget=50).run(documents=[Document(content="a b c"), "a b c"], query=QUESTION)


@component
class _Strip:
    """A pipeline step that drops the retrieved documents' vectors (scwo_np's embedder then embeds them)."""

    @component.output_types(documents=list[Document])
    def run(self, documents: list[Document]) -> dict:
        return {"documents": _plain(documents)}


def test_the_question_s_vector_is_checked_and_named(sample, store):
    docs = InMemoryEmbeddingRetriever(store, top_k=10, return_embedding=True).run(
        query_embedding=sample.query_embeddings[0].tolist()
    )["documents"]
    ranker = ScwoRanker(budget=300)
    for bad, match in (
        ([0.1] * 10, "dimension 10 but the documents' have 384"),
        ([0.0] * 384, "zero vector"),
    ):
        with pytest.raises(ValueError, match=match):
            ranker.run(documents=docs, query=QUESTION, query_embedding=bad)


def test_sentences_are_embedded_by_scwo_np_s_embedder_whatever_the_documents_carry(sample, store):
    """The documents' MiniLM vectors and a query vector of the pipeline are not mixed with LSA's sentences."""
    docs = InMemoryEmbeddingRetriever(store, top_k=20, return_embedding=True).run(
        query_embedding=sample.query_embeddings[0].tolist()
    )["documents"]
    out = ScwoRanker(budget=200, granularity="sentence").run(
        documents=docs, query=QUESTION, query_embedding=sample.query_embeddings[0].tolist()
    )["documents"]
    want = select_texts([d.content for d in docs], QUESTION, 200, granularity="sentence")
    assert [d.id for d in out] == [docs[i].id for i in want.indices]


def test_names_and_options_are_checked_when_the_ranker_is_built():
    with pytest.raises(
        ValueError, match="strategy 'cover' takes 'lam', 'gamma', 'cost_exponent'; got 'gama'"
    ):
        ScwoRanker(budget=50, strategy="cover", strategy_options={"gama": 0.5})
    with pytest.raises(ValueError, match="token_counter must be one of"):
        ScwoRanker(budget=50, token_counter="gpt4")
    with pytest.raises(ValueError, match="embedder must be one of"):
        ScwoRanker(budget=50, embedder="e5")


def test_a_document_id_seen_twice_is_ranked_once(store):
    docs = _plain(_retrieved(store))[:10]
    once = ScwoRanker(budget=400).run(documents=docs, query=QUESTION)["documents"]
    twice = ScwoRanker(budget=400).run(documents=docs + docs, query=QUESTION)["documents"]
    assert [d.id for d in twice] == [d.id for d in once]


def test_a_document_with_no_text_is_left_out_with_a_warning_as_in_langchain(store):
    """It was a ValueError ending the run (documents[1] has no text content); the LangChain and
    LlamaIndex components leave such a document out with a warning naming its position."""
    docs = _plain(_retrieved(store))[:12]
    holed = [*docs[:3], Document(content=None), *docs[3:7], Document(content="  \n"), *docs[7:]]
    with pytest.warns(UserWarning, match=r"2 documents with no text left out \(positions 3, 8\)"):
        got = ScwoRanker(budget=400).run(documents=holed, query=QUESTION)["documents"]
    want = ScwoRanker(budget=400).run(documents=docs, query=QUESTION)["documents"]
    assert got and [d.id for d in got] == [d.id for d in want]


def test_documents_with_vectors_and_embedder_minilm_embed_the_question_with_it(sample, store):
    """With embedder="minilm" the documents' vectors are taken as MiniLM's and the question is embedded
    by it (as LangChain's embedder="minilm" does); it was refused without query_embedding."""
    from scwo_np.embed import MiniLMEmbedder

    docs = InMemoryEmbeddingRetriever(store, top_k=30, return_embedding=True).run(
        query_embedding=sample.query_embeddings[0].tolist()
    )["documents"]
    ranker = ScwoRanker(budget=500, embedder="minilm")
    got = ranker.run(documents=docs, query=QUESTION)["documents"]
    qv = np.asarray(MiniLMEmbedder()([QUESTION])[0], dtype=np.float64).tolist()
    want = ranker.run(documents=docs, query=QUESTION, query_embedding=qv)["documents"]
    assert got and [d.id for d in got] == [d.id for d in want]
    assert [d.score for d in got] == pytest.approx([d.score for d in want], abs=1e-6)
    with pytest.raises(ValueError, match="query_embedding.*embedder="):  # LSA cannot have made them
        ScwoRanker(budget=500).run(documents=docs, query=QUESTION)


def test_copies_merged_into_the_kept_document_are_named_and_lam_is_reported(sample):
    near = np.argsort(-(sample.embeddings @ sample.query_embeddings[0]), kind="stable")[:11].tolist()
    docs = [Document(id=f"d{k}", content=sample.texts[i], meta={"source": f"s{k}"})
            for k, i in enumerate(near + near[:9])]  # fmt: skip
    for granularity in ("chunk", "sentence"):
        out = ScwoRanker(budget=100000, granularity=granularity, lam="auto").run(
            documents=docs, query=sample.queries[0]
        )
        out = out["documents"]
        assert len(out) == 11
        named = [e["id"] for d in out for e in d.meta.get("scwo_duplicates", [])]
        assert sorted([d.id for d in out] + named) == sorted(d.id for d in docs)
        assert all(
            e["metadata"] == {"source": "s" + e["id"][1:]}
            for d in out
            for e in d.meta.get("scwo_duplicates", [])
        )
        lam = select_texts(
            [d.content for d in docs], sample.queries[0], 100000, lam="auto", granularity=granularity
        ).lam
        assert 0 < lam < 1 and {d.meta["scwo_lam"] for d in out} == {lam}
    dpp = ScwoRanker(budget=500, strategy="dpp").run(documents=docs, query=sample.queries[0])["documents"]
    assert dpp and all(
        ("scwo_lam" in d.meta) == ("lam" in __import__("inspect").signature(STRATEGIES["dpp"]).parameters)
        for d in dpp
    )
