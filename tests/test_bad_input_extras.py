"""The bad-input matrix for what needs an extra (the integration leg).

The entries of the functions that import pyarrow, Dask, LangChain, LlamaIndex,
sentence-transformers, tokenizers or tiktoken, checked exactly as the core
matrix (``tests/test_bad_input_matrix.py``) checks the rest, with its bad
values, its tolerated values and its checks.
"""

from __future__ import annotations

import os
import re
import tempfile

import numpy as np
import pyarrow.parquet as pq
import pytest
from haystack import Document as HaystackDocument
from langchain_core.documents import Document
from langchain_core.messages import HumanMessage
from llama_index.core.schema import NodeWithScore, TextNode
from test_bad_input_matrix import (
    COSTS,
    EXTRA_NAMES,
    TEXTS,
    E,
    _cases,
    _exports,
    _toy_embedder,
    check_bad_value,
    check_registered,
    check_tolerated_value,
)

from scwo_np import embed, rerank, tokens
from scwo_np.integrations import haystack as hs
from scwo_np.integrations import langchain as lc
from scwo_np.integrations import llamaindex as li

#: The modules that import an extra (the core matrix checks every other module).
MODULES = [
    "scwo_np.rerank",
    "scwo_np.integrations.langchain",
    "scwo_np.integrations.llamaindex",
    "scwo_np.integrations.haystack",
    "scwo_np.mcp_server",
]


def _rerank_tables():
    import pyarrow as pa

    emb = pa.FixedSizeListArray.from_arrays(pa.array(E.ravel().astype(np.float32)), 4)
    t = pa.table({"query_id": ["a", "a", "a", "b", "b", "b"], "embedding": emb, "tokens": pa.array(COSTS)})
    q = pa.table(
        {"query_id": ["a", "b"], "embedding": pa.FixedSizeListArray.from_arrays(pa.array(E[:2].ravel()), 4)}
    )
    return t, q


RERANK_T, RERANK_Q = _rerank_tables()
import dask  # noqa: E402
import dask.dataframe as dd  # noqa: E402

with dask.config.set({"dataframe.convert-string": False}):
    RERANK_DDF = dd.from_pandas(RERANK_T.to_pandas(), npartitions=1)
_RERANK_DIR = tempfile.mkdtemp(prefix="scwo-matrix-")
pq.write_table(RERANK_T, os.path.join(_RERANK_DIR, "c.parquet"))


def _rerank_parquet(budget=8, batch_rows=4):
    return rerank.rerank_parquet(
        os.path.join(_RERANK_DIR, "c.parquet"), os.path.join(_RERANK_DIR, "o.parquet"), budget,
        queries=RERANK_Q, batch_rows=batch_rows,
    )  # fmt: skip


EXTRA_REGISTRY = {
    "MiniLMEmbedder": (lambda **k: embed.MiniLMEmbedder(**k), dict(batch_size=4), dict(batch_size="posint")),
    "ScwoCompressor": (
        lambda **k: lc.ScwoCompressor(**k).compress_documents(
            [Document(page_content=t) for t in TEXTS], "court"
        ),
        dict(budget=20, lam=0.7),
        dict(budget="budget", lam="unit"),
    ),
    "ScwoDedupTransformer": (
        lambda **k: lc.ScwoDedupTransformer(**k).transform_documents(
            [Document(page_content=t) for t in TEXTS]
        ),
        dict(threshold=0.9),
        dict(threshold="unit_or_none"),
    ),
    "ScwoEmbeddings": (
        lambda **k: lc.ScwoEmbeddings(**k),
        dict(embedder=_toy_embedder),
        dict(embedder="text"),
    ),
    "ScwoToolOutputMiddleware": (
        lambda **k: lc.ScwoToolOutputMiddleware(**k, store=":memory:"),
        dict(budget=100),
        dict(budget="posint"),
    ),
    "ScwoHSCAMiddleware": (
        lambda **k: lc.ScwoHSCAMiddleware(**k).replace([HumanMessage(t) for t in TEXTS]),
        dict(budget=20, trigger=40, keep=1, recent=0.25),
        dict(budget="budget", trigger="posint_or_none", keep="count", recent="unit"),
    ),
    "ScwoNodePostprocessor": (
        lambda **k: li.ScwoNodePostprocessor(**k).postprocess_nodes(
            [NodeWithScore(node=TextNode(text=t)) for t in TEXTS], query_str="court"
        ),
        dict(budget=20, lam=0.7),
        dict(budget="budget", lam="unit"),
    ),
    "ScwoRanker": (
        lambda **k: hs.ScwoRanker(**k).run(
            documents=[HaystackDocument(content=t) for t in TEXTS], query="court"
        ),
        dict(budget=20, lam=0.7),
        dict(budget="budget", lam="unit"),
    ),
    "WordPieceCounter": (
        lambda **k: tokens.WordPieceCounter().count(**k),
        dict(texts=TEXTS),
        dict(texts="texts"),
    ),
    "TiktokenCounter": (
        lambda **k: tokens.TiktokenCounter(**k),
        dict(encoding="cl100k_base"),
        dict(encoding="text"),
    ),
    "rerank_table": (
        lambda **k: rerank.rerank_table(**k),
        dict(table=RERANK_T, queries=RERANK_Q, budget=8, lam=0.7),
        dict(table="arrow_table", budget="budget", lam="unit"),
    ),
    "sample_sets": (lambda **k: rerank.sample_sets(**k), dict(top_k=3), dict(top_k="posint")),
    "rerank_dask": (
        lambda **k: rerank.rerank_dask(**k).compute(scheduler="sync"),
        dict(ddf=RERANK_DDF, queries=RERANK_Q, budget=8),
        dict(ddf="arrow_table", budget="budget"),
    ),
    "rerank_parquet": (
        _rerank_parquet,
        dict(budget=8, batch_rows=4),
        dict(budget="budget", batch_rows="posint_or_none"),
    ),
}


def test_the_core_matrix_s_extra_names_are_registered_here():
    assert EXTRA_NAMES <= EXTRA_REGISTRY.keys()


@pytest.mark.parametrize("module, name", sorted(set(_exports(MODULES))))
def test_every_export_is_registered(module, name):
    check_registered(module, name, EXTRA_REGISTRY)


def test_every_registered_call_works_with_its_valid_arguments():
    for f, valid, _ in EXTRA_REGISTRY.values():
        f(**valid)


@pytest.mark.parametrize("fname, arg, cat, label", list(_cases(True, EXTRA_REGISTRY)))
def test_bad_value_is_a_clear_error(fname, arg, cat, label):
    check_bad_value(EXTRA_REGISTRY, fname, arg, cat, label)


@pytest.mark.parametrize("fname, arg, cat, label", list(_cases(False, EXTRA_REGISTRY)))
def test_tolerated_value_works_or_is_a_clear_error(fname, arg, cat, label):
    check_tolerated_value(EXTRA_REGISTRY, fname, arg, cat, label)


@pytest.mark.parametrize(
    "make", [lc.ScwoCompressor, li.ScwoNodePostprocessor], ids=["langchain", "llamaindex"]
)
@pytest.mark.parametrize(
    "kwargs, named",
    [({"counter": "tiktoken"}, "'counter' (use 'token_counter')"), ({"lamda": 0.2}, "'lamda' (use 'lam')"),
     ({"max_tokens": 50}, "'max_tokens' (use 'budget')"), ({"colour": 1}, "'colour'; its arguments are ")],
)  # fmt: skip
def test_a_keyword_that_is_not_an_argument_is_named(make, kwargs, named):
    """pydantic ignores an unknown keyword: the budget was counted by the default counter, silently."""
    with pytest.raises(TypeError, match=re.escape(named)):
        make(budget=100, **kwargs)
