"""ScwoCompressor, ScwoDedupTransformer, ScwoEmbeddings against the real langchain-core, offline, on real text."""

import asyncio
import os

import numpy as np
import pytest
from langchain_classic.retrievers import ContextualCompressionRetriever
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_core.vectorstores.utils import maximal_marginal_relevance

from scwo_np import load_sample, mmr_select, select_texts
from scwo_np.dedup import deduplicate
from scwo_np.embed import LSAEmbedder
from scwo_np.integrations.langchain import ScwoCompressor, ScwoDedupTransformer, ScwoEmbeddings
from scwo_np.select._units import LEXICAL
from scwo_np.tokens import WordPieceCounter, count_tokens
from tests import naive

QUESTION = "How do I read a CSV file?"


@pytest.fixture(scope="module")
def sample():
    return load_sample()


@pytest.fixture(scope="module")
def docs(sample):
    """The 50 chunks nearest the first bundled question, with their source and MiniLM vector."""
    cand = np.argsort(-(sample.embeddings @ sample.query_embeddings[0]), kind="stable")[:50]
    return [
        Document(page_content=sample.texts[i], metadata={"source": sample.sources[i], "i": int(i)}, id=str(i))
        for i in cand
    ]


def test_compressor_is_select_texts_and_annotates(docs):
    before = [d.model_copy(deep=True) for d in docs]
    out = ScwoCompressor(budget=800).compress_documents(docs, QUESTION)
    want = select_texts([d.page_content for d in docs], QUESTION, 800)
    assert [d.page_content for d in out] == want.texts
    assert [d.metadata["i"] for d in out] == [docs[i].metadata["i"] for i in want.indices]
    assert [d.id for d in out] == [docs[i].id for i in want.indices]
    assert [d.metadata["scwo_rank"] for d in out] == list(range(len(out)))
    assert sum(d.metadata["scwo_tokens"] for d in out) == want.total_tokens <= 800
    assert {d.metadata["scwo_token_counter"] for d in out} == {"estimate"}
    assert docs == before  # nothing written into the caller's documents


def test_vectors_in_metadata_and_a_langchain_embeddings_for_the_question(sample, docs):
    """Documents carrying MiniLM vectors; the question embedded by MiniLM through ScwoEmbeddings."""
    from scwo_np.embed import MiniLMEmbedder

    with_vecs = [Document(page_content=d.page_content, metadata={**d.metadata, "embedding":
                 sample.embeddings[d.metadata["i"]].tolist()}) for d in docs]  # fmt: skip
    comp = ScwoCompressor(
        budget=900, embeddings=ScwoEmbeddings(MiniLMEmbedder()), token_counter=WordPieceCounter()
    )
    out = comp.compress_documents(with_vecs, sample.queries[0])
    cand = np.array([d.metadata["i"] for d in docs])
    # The question goes in as text (its words count beside the cosine), embedded by the
    # framework's query model: the sample's MiniLM question vector.
    want = naive.fused_chunks(sample.embeddings[cand], sample.query_embeddings[0], [d.page_content for d in docs],
                              sample.queries[0], sample.costs[cand], 900, LEXICAL["chunk"])  # fmt: skip
    assert [d.metadata["i"] for d in out] == cand[want].tolist()
    with pytest.raises(ValueError, match="query has none"):
        ScwoCompressor(budget=900).compress_documents(with_vecs, QUESTION)


def test_inside_a_contextual_compression_retriever(sample, docs):
    corpus = list(sample.texts[:400])
    emb = ScwoEmbeddings(LSAEmbedder(corpus + [QUESTION], dim=128))
    store = InMemoryVectorStore(embedding=emb)
    store.add_documents([Document(page_content=t, metadata={"i": i}) for i, t in enumerate(corpus)])
    base = store.as_retriever(search_kwargs={"k": 30})
    comp = ScwoCompressor(budget=700, embeddings=emb, order="edges")
    retriever = ContextualCompressionRetriever(base_compressor=comp, base_retriever=base)
    got = retriever.invoke(QUESTION)
    want = comp.compress_documents(base.invoke(QUESTION), QUESTION)
    assert [d.metadata["i"] for d in got] == [d.metadata["i"] for d in want]
    assert 0 < sum(d.metadata["scwo_tokens"] for d in got) <= 700
    rel = [d.metadata["scwo_relevance"] for d in got]
    assert max(rel) in (rel[0], rel[-1])  # the edges layout: the most relevant at an end
    assert asyncio.run(retriever.ainvoke(QUESTION)) == got


def test_the_budget_is_respected_where_langchain_mmr_counts_documents(sample, docs):
    E = np.array([sample.embeddings[d.metadata["i"]] for d in docs], dtype=np.float64)
    q = sample.query_embeddings[0].astype(np.float64)
    costs = WordPieceCounter().count([d.page_content for d in docs])
    theirs = maximal_marginal_relevance(q, E.tolist(), lambda_mult=0.7, k=6)
    ours = mmr_select(E, q, costs, 600, lam=0.7)
    assert costs[theirs].sum() > 600 >= costs[ours].sum()  # six documents do not fit 600 tokens
    # The same objective: with no budget that binds, our first k picks are theirs.
    free = mmr_select(E, q, costs, int(costs.sum()), lam=0.7)
    assert free[:6].tolist() == theirs


def test_async_equals_sync(docs):
    corpus = [d.page_content for d in docs]
    emb = ScwoEmbeddings(LSAEmbedder(corpus + [QUESTION], dim=64))
    comp = ScwoCompressor(budget=600, embeddings=emb)
    assert asyncio.run(comp.acompress_documents(docs, QUESTION)) == comp.compress_documents(docs, QUESTION)


class Asymmetric(Embeddings):
    """A LangChain model that embeds questions its own way (as E5's "query:" prefix does): LSA
    for the documents, the question with a prefix and words of its own."""

    def __init__(self, corpus):
        self.lsa = LSAEmbedder(corpus, dim=64)

    def embed_documents(self, texts):
        return self.lsa(texts).tolist()

    def embed_query(self, text):
        return self.lsa([f"query: {text} example usage"])[0].tolist()


@pytest.mark.parametrize("granularity", ["chunk", "sentence"])
def test_the_question_is_embedded_by_the_framework_s_query_model(docs, granularity):
    """The question reaches select_texts as text (its words count) with the model's embed_query vector."""
    model = Asymmetric([d.page_content for d in docs] + [QUESTION])
    comp = ScwoCompressor(budget=300, embeddings=model, granularity=granularity)
    out = comp.compress_documents(docs, QUESTION)
    texts = [d.page_content for d in docs]
    assert not np.allclose(model.embed_query(QUESTION), model.embed_documents([QUESTION])[0])
    if granularity == "chunk":
        E = np.asarray(model.embed_documents(texts))
        q = np.asarray(model.embed_query(QUESTION))
        costs = count_tokens(texts, "estimate")
        want = naive.fused_chunks(E, q, texts, QUESTION, costs, 300, LEXICAL["chunk"])
        assert [d.page_content for d in out] == [texts[i] for i in want]
    if (
        granularity == "sentence"
    ):  # the question as text (its words count), its vector the model's embed_query

        class Model:
            name = "asymmetric"

            def __call__(self, batch):
                return np.asarray(model.embed_documents(list(batch)))

            def embed_query(self, text):
                return np.asarray(model.embed_query(text))

        own = select_texts(texts, QUESTION, 300, embedder=Model(), granularity="sentence")
        assert [d.page_content for d in out] == own.texts


def test_the_config_is_serialisable(docs):
    comp = ScwoCompressor(budget=500, lam=0.5, order="original", token_counter="wordpiece")
    cfg = comp.model_dump()
    assert cfg == {"budget": 500, "lam": 0.5, "token_counter": "wordpiece", "order": "original", "method": "auto",
                   "embedding_key": "embedding", "granularity": "chunk", "elision": None}  # fmt: skip
    again = ScwoCompressor.model_validate(cfg)
    assert again.compress_documents(docs, QUESTION) == comp.compress_documents(docs, QUESTION)


def test_dedup_transformer_on_real_duplicates(docs):
    doubled = docs[:20] + [Document(page_content=d.page_content.upper()) for d in docs[:5]]
    out = ScwoDedupTransformer().transform_documents(doubled)
    want = deduplicate([d.page_content for d in doubled])
    assert out == [doubled[i] for i in want.keep] and len(out) == 20
    emb = ScwoEmbeddings(LSAEmbedder([d.page_content for d in docs], dim=32))
    cos = ScwoDedupTransformer("cosine", 0.99, embeddings=emb).transform_documents(docs[:20] + docs[:3])
    assert len(cos) == 20
    scored = [
        Document(page_content=d.page_content, metadata={"score": float(k)}) for k, d in enumerate(doubled)
    ]
    best = ScwoDedupTransformer(score_key="score").transform_documents(scored)
    assert [d.metadata["score"] for d in best] == [float(k) for k in range(5, 25)]  # the copies scored higher
    assert asyncio.run(ScwoDedupTransformer().atransform_documents(doubled)) == out


@pytest.mark.parametrize(
    "make, err, match",
    [
        (lambda: ScwoCompressor(budget=-1), ValueError, "budget"),
        (lambda: ScwoCompressor(budget=10, lam=2), ValueError, "lam"),
        (lambda: ScwoCompressor(budget=10, order="middle"), ValueError, "order"),
        (lambda: ScwoCompressor(budget=10).compress_documents(["text"], "q"), TypeError, "documents"),
        (
            lambda: ScwoCompressor(budget=10).compress_documents(None, "q"),
            TypeError,
            "documents must be a list",
        ),
        (
            lambda: ScwoCompressor(budget=10).compress_documents([Document(page_content="a b")], ""),
            ValueError,
            "query is empty",
        ),
        (
            lambda: ScwoCompressor(budget=10, token_counter=lambda s: -1).compress_documents(
                [Document(page_content="a b"), Document(page_content="c d")], "a"
            ),
            ValueError,
            "negative",
        ),
        (
            lambda: ScwoDedupTransformer("cosine").transform_documents([Document(page_content="a")]),
            ValueError,
            "needs vectors",
        ),
        (lambda: ScwoDedupTransformer("fuzzy"), ValueError, "method"),
        (lambda: ScwoEmbeddings("bert"), ValueError, "embedder must be one of"),
    ],
)
def test_bad_input_is_named(make, err, match):
    with pytest.raises(err, match=match):
        make()


def test_no_documents_gives_none():
    assert ScwoCompressor(budget=10).compress_documents([], "anything") == []
    assert ScwoDedupTransformer().transform_documents([]) == []


@pytest.mark.parametrize("kw", [dict(budget=-1), dict(budget=10, lam=2), dict(budget=10, order="middle")])
def test_a_bad_argument_is_one_line_naming_it(kw):
    """Issue 32: pydantic's message named the field only on its second line, then a link."""
    with pytest.raises(ValueError) as info:
        ScwoCompressor(**kw)
    msg = str(info.value)
    assert (
        "\n" not in msg
        and msg.startswith("ScwoCompressor: ")
        and next(iter(kw.keys() - {"budget"} or kw)) in msg
    )


def test_sentences_keep_only_what_fits_and_say_where_it_was(docs):
    out = ScwoCompressor(budget=300, granularity="sentence").compress_documents(docs, QUESTION)
    want = select_texts([d.page_content for d in docs], QUESTION, 300, granularity="sentence")
    assert [d.page_content for d in out] == want.texts
    assert sum(d.metadata["scwo_tokens"] for d in out) <= 300
    by_id = {d.id: d for d in docs}
    for d in out:
        original = by_id[d.id].page_content
        assert all(original[a:b] in d.page_content for a, b in d.metadata["scwo_spans"])
    same = asyncio.run(ScwoCompressor(budget=300, granularity="sentence").acompress_documents(docs, QUESTION))
    assert [d.page_content for d in same] == want.texts


def test_lam_auto_is_what_select_texts_chooses(docs):
    broad = "What is the difference between json.dumps and json.dump?"
    for question in (QUESTION, broad):
        out = ScwoCompressor(budget=300, lam="auto").compress_documents(docs, question)
        want = select_texts([d.page_content for d in docs], question, 300, lam="auto")
        assert [d.page_content for d in out] == want.texts
    assert select_texts([d.page_content for d in docs], broad, 300, lam="auto").lam == 0.9
    with pytest.raises((TypeError, ValueError), match="lam must be a number in \\[0, 1\\] or 'auto'"):
        ScwoCompressor(budget=300, lam="sometimes")


def _agent_run(budget, rows, store, asynchronous=False, token_counter=None, raw=None):
    """A real LangChain v1 agent loop: a fake chat model calls a tool that returns ``rows`` as JSON,
    then answers; returns the messages."""
    import json

    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool

    from scwo_np.integrations.langchain import ScwoToolOutputMiddleware

    @tool
    def fetch_logs(service: str):
        """The service's recent log records, as JSON."""
        return raw if raw is not None else json.dumps(rows)

    class ToolCallingFake(GenericFakeChatModel):
        def bind_tools(self, tools, **kw):  # the agent binds its tools; the script already names them
            return self

    model = ToolCallingFake(messages=iter([
        AIMessage(content="", tool_calls=[{"name": "fetch_logs", "args": {"service": "api"}, "id": "c1"}]),
        AIMessage(content="The error is on request 333."),
    ]))  # fmt: skip
    agent = create_agent(
        model, tools=[fetch_logs],
        middleware=[ScwoToolOutputMiddleware(budget, store=store, token_counter=token_counter)],
    )  # fmt: skip
    inputs = {"messages": [{"role": "user", "content": "Why did the api fail? Show the errors."}]}
    if asynchronous:
        return asyncio.run(agent.ainvoke(inputs))["messages"]
    return agent.invoke(inputs)["messages"]


@pytest.mark.parametrize("asynchronous", [False, True])
def test_the_agent_middleware_crushes_a_large_json_tool_result(tmp_path, asynchronous):
    import json

    from langchain_core.messages import ToolMessage

    from scwo_np.anchor import CrushStore
    from scwo_np.tokens import count_tokens

    rows = [{"i": i, "level": "ERROR" if i == 333 else "INFO", "msg": f"GET /o/{i * 37 % 1009} 200"}
            for i in range(2000)]  # fmt: skip
    store = CrushStore(tmp_path / "s.sqlite")
    messages = _agent_run(400, rows, store, asynchronous)
    (tm,) = [m for m in messages if isinstance(m, ToolMessage)]
    assert count_tokens([tm.content])[0] <= 400
    out = json.loads(tm.content)
    assert rows[333] in out and all(x in rows for x in out[:-1])  # the error kept, every item whole
    key = out[-1]["_omitted"]["key"]  # the retrieval key is in the message
    assert tm.response_metadata["scwo"]["key"] == key and tm.response_metadata["scwo"]["of"] == 2000
    assert store.retrieve(key, dropped_only=False) == rows
    assert store.retrieve(key) == [x for x in rows if x not in out]  # by default what the model did not see
    assert messages[-1].content == "The error is on request 333."


def test_the_agent_middleware_leaves_small_results_alone_and_never_raises_on_json(tmp_path):
    import json

    from langchain_core.messages import ToolMessage

    from scwo_np.integrations.langchain import ScwoToolOutputMiddleware

    rows = [{"i": i} for i in range(5)]
    (tm,) = [m for m in _agent_run(400, rows, tmp_path / "s.sqlite") if isinstance(m, ToolMessage)]
    assert json.loads(tm.content) == rows and "scwo" not in tm.response_metadata
    mw = ScwoToolOutputMiddleware(64, store=tmp_path / "s.sqlite")
    small = ToolMessage(content="not json at all, and shorter than sixty-four tokens", tool_call_id="x")
    assert mw.shrink(small) is small
    image = ToolMessage(content=[{"type": "image", "url": "x" * 1000}], tool_call_id="x")
    assert mw.shrink(image) is image  # not text: not the middleware's to cut
    # JSON whose text around the array is over the budget alone: never an exception that ends the
    # agent's run (a budget of 40 raised inside the tools node), and never JSON cut as text (lines of
    # different records spliced together): its collections crushed in turn, as a last resort the
    # object itself (the long note dropped, announced, stored)
    framed = json.dumps({"note": "word " * 200, "rows": [{"i": i} for i in range(50)]})
    cut = mw.shrink(ToolMessage(content=framed, tool_call_id="y"))
    got = json.loads(cut.content)
    assert count_tokens([cut.content])[0] <= 64 and "note" not in got and got["_omitted"]["count"] >= 1
    # and where even that is over (not with this counter): the marker alone, the whole result stored
    from scwo_np.anchor import read_document
    from scwo_np.anchor._json import JSONTooLarge

    res = mw._marker_alone([read_document(framed).render(read_document(framed).pieces)], "the whole result",
                           JSONTooLarge("over", 500))  # fmt: skip
    mark = json.loads(res.text)["_omitted"]
    assert res.form == "marker" and res.tokens <= 64 and mark["count"] == mark["of"] == 1
    assert mw.store.retrieve(mark["key"]) == [json.loads(framed)] and "it needs 500" in mark["note"]
    # a collection's text around it over the budget: the collections crushed in turn, still JSON
    big = {
        "note": {f"k{i}": "word " * 5 for i in range(40)},
        "rows": [{"i": i, "v": "x" * 20} for i in range(80)],
    }
    cut = ScwoToolOutputMiddleware(200, store=tmp_path / "s.sqlite").shrink(
        ToolMessage(content=json.dumps(big), tool_call_id="z")
    )
    got = json.loads(cut.content)
    assert count_tokens([cut.content])[0] <= 200 and "_omitted" in got["note"] and got["rows"][-1]["_omitted"]
    with pytest.raises(ValueError, match="budget must be at least 64 tokens"):
        ScwoToolOutputMiddleware(40)
    with pytest.raises(ValueError, match="budget must be"):
        ScwoToolOutputMiddleware(0)
    with pytest.raises(TypeError, match="budget is required"):
        ScwoToolOutputMiddleware()
    with pytest.raises(TypeError, match="got both 'budget' and its old name 'max_tokens'"):
        ScwoToolOutputMiddleware(100, max_tokens=100)
    with pytest.warns(DeprecationWarning, match="'max_tokens' was renamed to 'budget'"):
        old = ScwoToolOutputMiddleware(max_tokens=70, store=tmp_path / "s.sqlite")  # the former name
    assert old.budget == 70 and old.token_counter.name == "estimate"
    with pytest.warns(DeprecationWarning, match="'counter' was renamed to 'token_counter'"):
        assert old.counter is old.token_counter
    with pytest.warns(DeprecationWarning, match="'max_tokens' was renamed to 'budget'"):
        assert old.max_tokens == 70


_RECORDS = None


DPKG_LOG = "/var/log/dpkg.log"


@pytest.mark.skipif(not os.path.exists(DPKG_LOG), reason="no /var/log/dpkg.log on this machine")
@pytest.mark.parametrize("budget", [64, 300, 1000])
def test_the_agent_middleware_holds_a_log_to_the_budget_by_time_not_its_first_lines(tmp_path, budget):
    """A tool returning a log as text (dpkg's, 17 months, ~90,000 tokens) passed through whole before:
    the model read every line.  Now within the budget, the newest lines and a spread over the
    timeline kept, what was left out stored under the key the text names."""
    from langchain_core.messages import ToolMessage

    from scwo_np.anchor import CrushStore
    from scwo_np.tokens import count_tokens

    log = open(DPKG_LOG, encoding="utf-8", errors="replace").read()
    lines = log.splitlines()
    store = CrushStore(tmp_path / "s.sqlite")
    messages = _agent_run(budget, None, store, raw=log)
    (tm,) = [m for m in messages if isinstance(m, ToolMessage)]
    scwo = tm.response_metadata["scwo"]
    assert count_tokens([tm.content])[0] <= budget and scwo["tokens"] <= budget
    assert scwo["form"] == "records" and scwo["of"] >= len(lines) // 2 and 0 < scwo["kept"] < scwo["of"]
    kept = [line for line in tm.content.splitlines() if line in set(lines)]
    assert kept and kept[-1] == lines[-1]  # the newest record, not the first minute
    if budget >= 300:
        assert lines.index(kept[0]) < len(lines) // 2  # and the older half is not dropped wholesale
    assert scwo["key"] in tm.content
    back = store.retrieve(scwo["key"])
    assert back and not set(map(str, back)) & set(kept)  # what the model did not see, none of what it did
    assert messages[-1].content == "The error is on request 333."


@pytest.mark.skipif(not os.path.exists(DPKG_LOG), reason="no /var/log/dpkg.log on this machine")
def test_the_agent_middleware_keeps_a_log_s_lines_about_the_question(tmp_path):
    """The user's question is the records' hint: a new user asked when openssh-client was configured,
    and dpkg's log came back as 16 records spread over time, none of its 12 lines about it."""
    import collections
    import re

    from langchain_core.messages import ToolMessage

    from scwo_np.integrations.langchain import ScwoToolOutputMiddleware
    from scwo_np.tokens import count_tokens

    lines = open(DPKG_LOG, encoding="utf-8", errors="replace").read().splitlines()
    configured = [
        m.group(1) for line in lines[: len(lines) // 2] if (m := re.search(r" configure ([\w.+-]+):", line))
    ]
    said = collections.Counter(w for line in lines for w in re.findall(r" ([\w.+-]+):\w+ ", line))
    pkg = next(p for p in configured if 3 <= said[p] <= 12 and "-" in p)  # an early, rarely named package
    mw = ScwoToolOutputMiddleware(300, store=tmp_path / "s.sqlite")
    out = mw.shrink(
        ToolMessage(content="\n".join(lines), tool_call_id="1"), query=f"When was {pkg} configured?"
    )
    assert count_tokens([out.content])[0] <= 300
    assert [line for line in out.content.splitlines() if f" {pkg}:" in line], pkg


@pytest.mark.skipif(not os.path.exists("/usr/share/common-licenses/GPL-3"), reason="no common-licenses here")
def test_the_agent_middleware_selects_the_sentences_of_prose_the_question_asks_about(tmp_path):
    from langchain_core.messages import HumanMessage, ToolMessage

    from scwo_np.integrations.langchain import ScwoToolOutputMiddleware
    from scwo_np.tokens import count_tokens

    text = open("/usr/share/common-licenses/GPL-3", encoding="utf-8").read()  # ~8,900 tokens of prose
    mw = ScwoToolOutputMiddleware(200, store=tmp_path / "s.sqlite")
    before = ToolMessage(content=text, tool_call_id="1", name="read_licence")
    out = mw.shrink(before, query="May I charge a fee for conveying copies?")
    assert before.content == text and "scwo" not in before.response_metadata  # the input is not modified
    assert count_tokens([out.content])[0] <= 200 and out.response_metadata["scwo"]["form"] == "prose"
    assert "charge any price or no price for each copy" in out.content
    assert out.response_metadata["scwo"]["key"] in out.content
    # the same call through an agent: the last human message is the query
    req = type(
        "Req", (), {"state": {"messages": [HumanMessage("May I charge a fee for conveying copies?")]}}
    )()
    assert mw.wrap_tool_call(req, lambda r: before).content == out.content


def _records():
    global _RECORDS
    if _RECORDS is None:
        import os
        import sys

        sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "mcp_server"))
        from realdata import dpkg_records

        _RECORDS = dpkg_records()
    return _RECORDS


from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
          phases=[Phase.explicit, Phase.generate])  # fmt: skip
@given(
    start=st.integers(0, 4800),
    n=st.integers(1, 2500),
    budget=st.integers(64, 800),
    counter=st.sampled_from(["estimate", "wordpiece", "tiktoken"]),
    blocks=st.booleans(),
)
def test_what_the_model_reads_is_within_budget_in_the_agent_loop(
    tmp_path_factory, start, n, budget, counter, blocks
):
    """Real dpkg.log records through the real create_agent loop: the ToolMessage content is within budget by
    the middleware's counter, marker inside; the metadata is only in response_metadata."""
    import json

    from langchain_core.messages import ToolMessage

    from scwo_np.tokens import count_tokens

    rows = _records()[start : start + n]
    store = tmp_path_factory.mktemp("mw") / "s.sqlite"
    raw = (
        [{"type": "text", "text": json.dumps(rows)}] if blocks else None
    )  # a tool that returns content blocks
    messages = _agent_run(budget, rows, store, token_counter=counter, raw=raw)
    (tm,) = [m for m in messages if isinstance(m, ToolMessage)]
    scwo = tm.response_metadata.get("scwo")
    if scwo is None:  # it fitted: unchanged
        text = tm.content if isinstance(tm.content, str) else tm.content[0]["text"]
        assert count_tokens([text], counter)[0] <= budget and json.loads(text) == rows
        return
    assert isinstance(tm.content, str) and count_tokens([tm.content], counter)[0] <= budget
    assert scwo["tokens"] == count_tokens([tm.content], counter)[0] and scwo["of"] == len(rows)
    if scwo["form"] == "crushed":
        assert scwo["key"] in tm.content and "\n" not in tm.content  # the marker is in what the model reads
        kept = [x for x in json.loads(tm.content) if "_omitted" not in x]
        assert kept == [rows[i] for a, b in scwo["kept_ranges"] for i in range(a, b + 1)]


def test_an_empty_document_is_left_out_with_a_warning_not_a_failed_call():
    """Text splitters make empty chunks: one of them ended the whole call with 'texts[5] is empty'."""
    from langchain_core.documents import Document
    from llama_index.core.schema import NodeWithScore, TextNode

    from scwo_np.integrations.langchain import ScwoCompressor
    from scwo_np.integrations.llamaindex import ScwoNodePostprocessor

    texts = [
        "csv.reader reads rows of a CSV file",
        "json.load parses JSON",
        "\n",
        "sqlite3 is a DB-API module",
    ]
    with pytest.warns(UserWarning, match=r"1 document with no text left out \(positions 2\)"):
        out = ScwoCompressor(budget=30).compress_documents([Document(page_content=t) for t in texts], "csv")
    assert [d.page_content for d in out] == [t for t in texts if t.strip()]
    nodes = [NodeWithScore(node=TextNode(text=t), score=1.0) for t in texts]
    with pytest.warns(UserWarning, match="no text left out"):
        kept = ScwoNodePostprocessor(budget=30).postprocess_nodes(nodes, query_str="csv")
    assert "\n" not in [n.node.get_content() for n in kept] and len(kept) == 3


def test_lsa_by_name_fits_on_the_first_documents_a_vector_store_embeds(docs):
    """ScwoEmbeddings("lsa") failed at construction (an LSA space needs a corpus); it is fitted on the
    first documents embedded, the space of LSAEmbedder(those texts), kept for later ones and queries."""
    emb = ScwoEmbeddings("lsa")
    with pytest.raises(ValueError, match=r"no LSA space yet.*embed_documents.*LSAEmbedder\(corpus\)"):
        emb.embed_query(QUESTION)
    store = InMemoryVectorStore.from_documents(docs[:30], emb)
    texts = [d.page_content for d in docs[:30]]
    want = LSAEmbedder(texts)
    assert emb.embedder.name == want.name
    np.testing.assert_allclose(emb.embed_query(QUESTION), want([QUESTION])[0], rtol=1e-6, atol=1e-7)
    store.add_documents(docs[30:])  # the same space: the first documents' vectors are comparable with these
    assert emb.embedder.name == want.name
    hits = store.similarity_search(QUESTION, k=3)
    assert len(hits) == 3 and all(isinstance(d, Document) for d in hits)
    with pytest.raises(ValueError, match=r"at least 2 .*LSAEmbedder\(corpus\)"):
        ScwoEmbeddings("lsa").embed_documents([docs[0].page_content])


def _with_copies(sample):
    """20 retrieved texts, 9 of them exact copies of others from other sources (a package's changelog
    shipped twice); each its own source."""
    near = np.argsort(-(sample.embeddings @ sample.query_embeddings[0]), kind="stable")[:11].tolist()
    picks = near + near[:9]
    return [(sample.texts[i], f"{sample.sources[i]}#{k}") for k, i in enumerate(picks)]


def test_copies_merged_into_the_kept_document_are_named_and_lam_is_reported(sample):
    """Exact copies from other sources were dropped without notice (20 retrieved, 11 back, nothing
    said); the kept copy names them in scwo_duplicates. And the lam used (lam="auto") is reported."""
    docs = [Document(page_content=t, metadata={"source": src}, id=src) for t, src in _with_copies(sample)]
    for granularity in ("chunk", "sentence"):
        out = ScwoCompressor(budget=100000, granularity=granularity, lam="auto").compress_documents(
            docs, sample.queries[0]
        )
        assert len(out) == 11
        named = [e["id"] for d in out for e in d.metadata.get("scwo_duplicates", [])]
        assert sorted([d.id for d in out] + named) == sorted(d.id for d in docs)  # every source, once
        for d in out:
            for e in d.metadata.get("scwo_duplicates", []):
                assert e["metadata"] == {"source": e["id"]}
                assert (
                    next(x for x in docs if x.id == e["id"]).page_content == d.page_content
                    or granularity != "chunk"
                )
        lam = select_texts(
            [d.page_content for d in docs], sample.queries[0], 100000, lam="auto", granularity=granularity
        ).lam
        assert 0 < lam < 1 and {d.metadata["scwo_lam"] for d in out} == {lam}
    assert {
        d.metadata["scwo_lam"]
        for d in ScwoCompressor(budget=500, lam=0.4).compress_documents(docs, sample.queries[0])
    } == {0.4}
