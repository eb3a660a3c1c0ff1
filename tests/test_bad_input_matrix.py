"""The bad-input matrix: every public function and class, every argument, many bad values.

Each public export is registered below with a valid call and the category
of each argument it takes.  Every bad value of a category must raise the
error its kind of badness calls for, with a message that names the argument
(as a word: ``n`` is not found inside ``"an integer"``): a ``TypeError`` for a
value of the wrong type (None, a str for a number, a float for a count, a
scalar for an array: ``TYPE_LABELS``), a ``ValueError`` for a value of the right
type that is wrong (NaN, negative, out of range, the wrong shape, empty, a
missing field); ``VALUE_NOT_TYPE`` lists the few values of an accepted type
that the rule would call the wrong type, and why each is a ValueError there.
Values that some functions may legitimately accept (a lone surrogate in a
text, a size too large to mean anything) must either work or raise one of
those two, never anything else.  Inputs are never modified.

``test_every_export_is_registered`` fails when a new public name is exported
without an entry here, so the matrix grows with the API.
"""

from __future__ import annotations

import atexit
import copy
import importlib
import json
import math
import os
import re
import shutil
import tempfile

import numpy as np
import pytest
from legs import NOJIT, VOLUME_CALLS

import scwo_np
from scwo_np import anchor, bench, dedup, embed, hsca, optimize, text, tokens
from scwo_np.datasets import sample_query

MODULES = [
    "scwo_np",
    "scwo_np.anchor",
    "scwo_np.bench",
    "scwo_np.datasets",
    "scwo_np.dedup",
    "scwo_np.embed",
    "scwo_np.hsca",
    "scwo_np.optimize",
    "scwo_np.select",
    "scwo_np.text",
    "scwo_np.tokens",
]

rng = np.random.default_rng(0)
E = rng.standard_normal((6, 4))
Q = E[0] + 0.5
COSTS = np.array([3, 1, 4, 1, 5, 9])
TEXTS = [
    "The court ruled that the contract was void.",
    "The patient was given a dose of insulin.",
    "The court ruled that the contract was void!",
    "Seven wizards quietly judge the boxing match.",
    "The doctor checked her blood sugar again.",
    "Counsel appealed the ruling to the higher court.",
]
ITEMS = [{"id": i, "status": "error" if i % 7 == 0 else "ok", "ms": float(i % 5)} for i in range(40)]
CHUNKS = [
    {"id": str(i), "content": t, "relevance_score": 0.5 + i / 20, "entities": ["court"] if i % 2 else []}
    for i, t in enumerate(TEXTS)
]
MATCHES = [{"id": i, "text": t, "score": 1 - i / 10, "path": f"f{i % 2}.py"} for i, t in enumerate(TEXTS)]


# --------------------------------------------------------------------------
# Bad values by category (functions of the valid value, so shapes match)
# --------------------------------------------------------------------------


def _with(v, where, x):
    out = np.array(v, dtype=float)
    out[where] = x
    return out


def embeddings_bad(v):
    v = np.asarray(v, dtype=float)
    zero = v.copy()
    zero[0] = 0.0
    return {
        "None": None,
        "str": "abc",
        "ragged": [[1.0, 2.0], [3.0]],
        "1-D": v[0],
        "3-D": v[None],
        "dim 0": np.zeros((len(v), 0)),
        "bool": v > 0,
        "complex": v.astype(complex),
        "NaN": _with(v, (0, 0), np.nan),
        "inf": _with(v, (-1, -1), np.inf),
        "zero row": zero,
        "strings": [["a"] * v.shape[1]] * len(v),
    }


def query_bad(v):
    v = np.asarray(v, dtype=float)
    return {
        "None": None,
        "str": "abc",
        "zeros": np.zeros_like(v),
        "NaN": _with(v, 0, np.nan),
        "inf": _with(v, 0, -np.inf),
        "short": v[:-1],
        "2-D": np.stack([v, v]),
        "bool": v > 0,
    }


def queries_bad(v):
    v = np.asarray(v, dtype=float)
    return {
        "None": None,
        "str": "abc",
        "zero row": _with(v, 0, 0.0),
        "NaN": _with(v, (0, 0), np.nan),
        "short": v[:, :-1],
        "3-D": v[None],
        "empty": v[:0],
    }


def costs_bad(v):
    v = list(v)
    return {
        "None": None,
        "str": "abc",
        "negative": [-1] + v[1:],
        "1e30": [1e30] + v[1:],
        "2^63": [2**63] + v[1:],
        "fraction": [3.7] + v[1:],
        "NaN": [math.nan] + v[1:],
        "short": v[:-1],
        "bool": [True] * len(v),
        "2-D": [v],
    }


def budget_bad(v):
    return {
        "-1": -1,
        "3.5": 3.5,
        "str": "10",
        "None": None,
        "True": True,
        "NaN": math.nan,
        "inf": math.inf,
        "list": [10],
    }


def unit_bad(v):
    return {
        "-0.1": -0.1,
        "1.5": 1.5,
        "NaN": math.nan,
        "str": "0.5",
        "None": None,
        "True": True,
        "inf": math.inf,
    }


def posint_bad(v):
    return {"0": 0, "-1": -1, "2.5": 2.5, "str": "3", "None": None, "True": True, "NaN": math.nan}


def count_bad(v):
    return {"-1": -1, "2.5": 2.5, "str": "3", "True": True, "NaN": math.nan}


def posfloat_bad(v):
    return {"0": 0.0, "-1": -1.0, "NaN": math.nan, "str": "1", "None": None, "True": True}


def texts_bad(v):
    return {
        "one str": "a single text",
        "None": None,
        "[None]": [None] + list(v[1:]),
        "[bytes]": [b"bytes"] + list(v[1:]),
        "[int]": [1] + list(v[1:]),
        "int": 5,
    }


def text_bad(v):
    return {"None": None, "bytes": b"some text", "int": 3, "list": ["a list"]}


def opt_text_bad(v):  # a text or None
    return {k: x for k, x in text_bad(v).items() if x is not None}


def str_lists_bad(v):
    return {
        "one str": "AI",
        "str rows": ["AI"] * len(v),
        "int in row": [[1]] + [[]] * (len(v) - 1),
        "short": [[]] * (len(v) - 1),
        "None": [None] * len(v),
    }


def scores_bad(v):
    v = list(v)
    return {"str": "abc", "NaN": [math.nan] + v[1:], "short": v[:-1], "strings": ["a"] * len(v), "2-D": [v]}


def json_bad(v):
    return {
        "deep": "[" * 100_000 + "]" * 100_000,
        "invalid": "[{'a': 1}]",
        "truncated": '[{"a": 1}',
        "bad utf-8": b'[{"a": "\xff"}]',
        "empty": "  ",  # (one JSON value with no array in it is kept whole, not an error: issue 18)
        "trailing garbage": '[{"a": 1}] x',
        "None": None,
        "int": 3,
    }


def items_bad(v):
    return {
        "None": None,
        "str": "abc",
        "dict": {"a": 1},
        "int": 3,
        "int keys": [*({"a": i} for i in range(19)), {1: "a"}],
    }


def chunks_bad(v):
    return {
        "None": None,
        "str": "abc",
        "dict": v[0],
        "[int]": [1],
        "no content": [{"id": "x", "relevance_score": 0.5}],
        "NaN score": [{"id": "x", "content": "t", "relevance_score": math.nan}],
        "entities str": [{"id": "x", "content": "t", "relevance_score": 0.5, "entities": "AI"}],
        "bad score": [{"id": "x", "content": "t", "relevance_score": "high"}],
    }


def matches_bad(v):
    return {
        "None": None,
        "str": "abc",
        "[int]": [1],
        "no text": [{"score": 1.0}],
        "bad score": [{"text": "a", "score": "high"}],
        "NaN score": [{"text": "a", "score": math.nan}],
    }


def nonneg_bad(v):
    return {"-1": -1.0, "NaN": math.nan, "inf": math.inf, "str": "1", "None": None, "True": True}


def _without(category, *labels):
    def bad(v):
        out = category(v)
        for label in labels:
            del out[label]
        return out

    return bad


def arrow_table_bad(v):
    return {"None": None, "str": "abc", "dict": {"query_id": ["q"]}, "list": [1, 2]}


def where_bad(v):
    return {
        "int": 3,
        "str": "status=ok",
        "pairs": [("status", "ok")],
        "unknown operator": {"ms": {"gte": 1, "between": [1, 2]}},
        "contains int": {"status": {"contains": 3}},
        "exists str": {"status": {"exists": "yes"}},
        "NaN bound": {"ms": {"gt": math.nan}},
        "list bound": {"ms": {"lt": [1]}},
        "bool bound": {"ms": {"lte": True}},
        "int field name": {3: "ok"},
    }


def fields_bad(v):
    return {"str": "id", "empty": [], "int in list": ["id", 3], "int": 3, "dict": {"id": 1}, "bytes": [b"id"]}


def kept_bad(v):
    return {
        "str": "0,1",
        "bool": [True, False],
        "float": [0.5],
        "negative": [-1],
        "past the end": [10**6],
        "nested": [[0]],
        "[None]": [None],
        "dict": {0: 1},
    }


def flag_bad(v):
    return {"int": 1, "str": "yes", "None": None}


def path_bad(v):  # the path of a file to read
    return {"None": None, "int": 3, "bytes": b"questions.jsonl", "list": ["questions.jsonl"], "empty": ""}


def index_bad(v):
    return {"2.5": 2.5, "str": "3", "True": True, "NaN": math.nan}


CATEGORIES = {
    "embeddings": embeddings_bad,
    "query": query_bad,
    "queries": queries_bad,
    "costs": costs_bad,
    "budget": budget_bad,
    "unit": unit_bad,
    "posint": posint_bad,
    "count": count_bad,
    "posfloat": posfloat_bad,
    "texts": texts_bad,
    "text": text_bad,
    "opt_text": opt_text_bad,
    "str_lists": str_lists_bad,
    "scores": scores_bad,
    "json": json_bad,
    "items": items_bad,
    "chunks": chunks_bad,
    "matches": matches_bad,
    "nonneg": nonneg_bad,
    "arrow_table": arrow_table_bad,
    "where": where_bad,
    "fields": fields_bad,
    "kept": kept_bad,
    "flag": flag_bad,
    "index": index_bad,
    "path": path_bad,
    # Piece vectors: a zero row is a piece that says nothing, not an error
    "pieces": _without(embeddings_bad, "zero row"),
    # Arguments where None means "the default" / "no limit":
    "unit_or_none": _without(unit_bad, "None"),
    "posint_or_none": _without(posint_bad, "None"),
    "budget_or_none": _without(budget_bad, "None"),
    "costs_or_none": _without(costs_bad, "None"),
    "text_or_none": _without(text_bad, "None"),
    # One query or several (select: a (m, d) query is several queries):
    "query_or_queries": _without(query_bad, "2-D"),
    # Arrays with nothing to match their length against:
    "costs_alone": _without(costs_bad, "short"),
    "scores_alone": _without(scores_bad, "short"),
}

#: Values some functions may accept: they must work or raise ValueError/TypeError.
TOLERATED = {
    "texts": {"lone surrogate": ["ok \ud800 ok"] + TEXTS[1:], "empty": [], "empty str": [""] * 6},
    "text": {"lone surrogate": "ok \ud800 ok", "empty": ""},
    "json": {"1e400 as int": "[" + "1" + "0" * 400 + "]", "lone surrogate": '["\\ud800"]'},
    "posint": {"huge": 10**30, "2^63": 2**63},
    "posint_or_none": {"huge": 10**30, "2^63": 2**63},
    "count": {"huge": 10**30},
    "budget": {"huge": 10**30},
}


# --------------------------------------------------------------------------
# The registry: name -> (callable taking keyword arguments, valid kwargs, {arg: category})
# --------------------------------------------------------------------------


def _engine(**kw):
    text_ = kw.pop("text", TEXTS[0])
    return hsca.HSCAEngine(**kw).ingest_turn(text_)


def _morag(budget=1000, response_reserve=None, chunks=CHUNKS, query="court"):
    opt = optimize.MoragContextOptimizer(budget, response_reserve=response_reserve)
    return opt.optimize(chunks, query)


def _kb(matches=MATCHES, budget=200):
    return optimize.KBContextOptimizer().optimize(matches, {"budget": budget, "adaptive_selection": True})


def _learner(min_samples=10, timeout=30.0):
    return anchor.PositionLearner(":memory:", min_samples=min_samples, timeout=timeout)


def _toy_embedder(texts):
    return [[len(t) + 1.0, 1.0] for t in texts]


class _ToyPieces:
    """An embedder with word pieces: a text's vector and, per word, a piece."""

    name = "toy-pieces"

    def __call__(self, texts):
        return [[len(t) + 1.0, 1.0] for t in texts]

    def embed_pieces(self, texts):
        return self(texts), [[[len(w) + 1.0, 1.0] for w in t.split()] for t in texts]


_toy_pieces = _ToyPieces()


def _store(timeout=30.0):
    return hsca.SnapshotStore(":memory:", timeout=timeout)


def _session():
    """An engine that took TEXTS as turns, and a store holding it as session 'alice' (the open beat too)."""
    eng = hsca.HSCAEngine()
    for t in TEXTS:
        eng.ingest_turn(t)
    store = hsca.SnapshotStore(":memory:")
    store.save("alice", eng.get_macro_context(), buffer=eng.buffer)
    return eng, store


def _batch(embeddings=E, queries=E[:2], costs=COSTS, budgets=6):
    return scwo_np.select_batch(embeddings, queries, costs, budgets, offsets=[0, 3, 6])


def _crushed(method, **k):
    """A CrushStore holding one crush of ITEMS (3 kept), and ``method`` called on its key."""
    store = anchor.CrushStore(":memory:")
    key = store.put([json.dumps(x) for x in ITEMS], kept=[0, 7, 14])
    return getattr(store, method)(key, **k)


_FILTERS = dict(where={"status": "ok", "ms": {"gte": 1}}, fields=["id", "ms"], start=0, stop=30, offset=1, limit=5,
                dropped_only=True, query="error 3")  # fmt: skip
_FILTER_CATS = dict(where="where", fields="fields", start="index", stop="index", offset="count", limit="count",
                    dropped_only="flag", query="text_or_none")  # fmt: skip


def _question_file() -> str:
    """A user's question set (read_questions): two questions over TEXTS, in a folder removed at exit."""
    folder = tempfile.mkdtemp(prefix="scwo_matrix_")
    atexit.register(shutil.rmtree, folder, True)
    path = os.path.join(folder, "questions.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps({"question": "What did the court rule?", "texts": TEXTS, "gold": [0, 5]}) + "\n")
        f.write(
            json.dumps({"question": "Blood sugar?", "texts": TEXTS[1:5], "gold": [], "answers": ["x y z"]})
            + "\n"
        )
    return path


_QUESTIONS = _question_file()

REGISTRY = {
    "mmr_select": (
        lambda **k: scwo_np.mmr_select(**k),
        dict(embeddings=E, query=Q, costs=COSTS, budget=8, lam=0.7, shift=1.0),
        dict(
            embeddings="embeddings", query="query", costs="costs", budget="budget", lam="unit", shift="nonneg"
        ),
    ),
    "mmr_select_multi": (
        lambda **k: scwo_np.mmr_select_multi(**k),
        dict(embeddings=E, queries=E[:2], costs=COSTS, budget=8, lam=0.7),
        dict(embeddings="embeddings", queries="queries", costs="costs", budget="budget", lam="unit"),
    ),
    "select_batch": (
        _batch,
        dict(embeddings=E, queries=E[:2], costs=COSTS, budgets=6),
        dict(embeddings="embeddings", queries="queries", costs="costs", budgets="budget"),
    ),
    "crush_bench": (bench.crush_bench, dict(n=60, rounds=1), dict(n="posint", rounds="posint")),
    "run_bench": (bench.run_bench, dict(quick=True, seed=0), dict(seed="count")),
    "select_by_strategy": (
        scwo_np.select_by_strategy,
        dict(embeddings=E, query=Q, costs=COSTS, budget=8, strategy="knapsack"),
        dict(embeddings="embeddings", query="query_or_queries", costs="costs", budget="budget"),
    ),
    "auto_lam": (
        scwo_np.select.auto_lam,
        dict(relevance=np.linspace(0.6, 0.4, 20)),
        dict(relevance="scores_alone"),
    ),
    "compare_strategies": (
        lambda **k: bench.compare_strategies(**k),
        dict(
            embeddings=E,
            costs=COSTS,
            queries=E[:2],
            gold=[[0], [1]],
            budgets=[8],
            candidates=4,
            strategies={"top-k": {"lam": 1.0}},
        ),
        dict(embeddings="embeddings", costs="costs", queries="queries", candidates="posint"),
    ),
    "msd_select": (
        lambda **k: scwo_np.select.msd_select(**k),
        dict(embeddings=E, query=Q, costs=COSTS, budget=8, lam=0.5, cost_exponent=0.5),
        dict(
            embeddings="embeddings",
            query="query_or_queries",
            costs="costs",
            budget="budget",
            lam="unit",
            cost_exponent="unit",
        ),
    ),
    "ssd_select": (
        lambda **k: scwo_np.select.ssd_select(**k),
        dict(embeddings=E, query=Q, costs=COSTS, budget=8, lam=0.5, gamma=1.0, cost_exponent=0.5),
        dict(
            embeddings="embeddings",
            query="query_or_queries",
            costs="costs",
            budget="budget",
            lam="unit",
            gamma="posfloat",
            cost_exponent="unit",
        ),
    ),
    "cover_select": (
        lambda **k: scwo_np.select.cover_select(**k),
        dict(embeddings=E, query=Q, costs=COSTS, budget=8, lam=0.5, gamma=0.5, cost_exponent=0.5),
        dict(
            embeddings="embeddings",
            query="query_or_queries",
            costs="costs",
            budget="budget",
            lam="unit",
            cost_exponent="unit",
        ),
    ),
    "facility_location_select": (
        lambda **k: scwo_np.select.facility_location_select(**k),
        dict(embeddings=E, query=Q, costs=COSTS, budget=8, lam=0.5, cost_exponent=1.0, ground=None),
        dict(
            embeddings="embeddings",
            query="query_or_queries",
            costs="costs",
            budget="budget",
            lam="unit",
            cost_exponent="unit",
            ground="posint_or_none",
        ),
    ),
    "xquad_select": (
        lambda **k: scwo_np.select.xquad_select(**k),
        dict(embeddings=E, query=Q, costs=COSTS, budget=8, lam=0.5, aspects=2, cost_exponent=0.5),
        dict(
            embeddings="embeddings",
            query="query_or_queries",
            costs="costs",
            budget="budget",
            lam="unit",
            aspects="posint_or_none",
            cost_exponent="unit",
        ),
    ),
    "rxquad_select": (
        lambda **k: scwo_np.select.rxquad_select(**k),
        dict(embeddings=E, query=Q, costs=COSTS, budget=8, lam=0.5, aspects=2, cost_exponent=0.5),
        dict(
            embeddings="embeddings",
            query="query_or_queries",
            costs="costs",
            budget="budget",
            lam="unit",
            aspects="posint_or_none",
            cost_exponent="unit",
        ),
    ),
    "gist_select": (
        lambda **k: scwo_np.select.gist_select(**k),
        dict(embeddings=E, query=Q, costs=COSTS, budget=8, lam=0.5, eps=0.5, cost_exponent=0.5),
        dict(
            embeddings="embeddings",
            query="query_or_queries",
            costs="costs",
            budget="budget",
            lam="unit",
            eps="unit",
            cost_exponent="unit",
        ),
    ),
    "cluster_ground": (
        lambda **k: scwo_np.select.cluster_ground(**k),
        dict(embeddings=E, k=3, iters=2),
        dict(embeddings="embeddings", k="posint", iters="count"),
    ),
    "dpp_select": (
        lambda **k: scwo_np.select.dpp_select(**k),
        dict(embeddings=E, query=Q, costs=COSTS, budget=8, lam=0.5, scale=1.0, cost_exponent=0.5),
        dict(
            embeddings="embeddings",
            query="query_or_queries",
            costs="costs",
            budget="budget",
            lam="unit",
            scale="posfloat",
            cost_exponent="unit",
        ),
    ),
    "knapsack_select": (
        lambda **k: scwo_np.select.knapsack_select(**k),
        dict(embeddings=E, query=Q, costs=COSTS, budget=8, max_cells=10_000),
        dict(
            embeddings="embeddings",
            query="query_or_queries",
            costs="costs",
            budget="budget",
            max_cells="posint",
        ),
    ),
    "topk_relevance": (
        lambda **k: scwo_np.topk_relevance(**k),
        dict(embeddings=E, query=Q, costs=COSTS, budget=8),
        dict(embeddings="embeddings", query="query", costs="costs", budget="budget"),
    ),
    "truncate": (
        lambda **k: scwo_np.truncate(**k),
        dict(costs=COSTS, budget=8),
        dict(costs="costs_alone", budget="budget"),
    ),
    "coverage": (
        lambda **k: scwo_np.coverage(**k),
        dict(embeddings_selected=E, query=Q),
        dict(embeddings_selected="embeddings", query="query"),
    ),
    "deduplicate text": (
        lambda **k: dedup.deduplicate(**k),
        dict(texts=TEXTS, threshold=0.5, scores=[1.0] * 6),
        dict(texts="texts", threshold="unit_or_none", scores="scores"),
    ),
    "deduplicate sequence": (
        lambda **k: dedup.deduplicate(method="sequence", **k),
        dict(texts=TEXTS, entities=[["a"]] * 6, entity_weight=0.3),
        dict(texts="texts", entities="str_lists", entity_weight="unit"),
    ),
    "deduplicate minhash": (
        lambda **k: dedup.deduplicate(method="minhash", **k),
        dict(texts=TEXTS, num_perm=64),
        dict(texts="texts", num_perm="posint"),
    ),
    "deduplicate cosine": (
        lambda **k: dedup.deduplicate(method="cosine", **k),
        dict(embeddings=E, threshold=0.9),
        dict(embeddings="embeddings", threshold="unit_or_none"),
    ),
    "cosine_pairs": (
        lambda **k: dedup.cosine_pairs(**k),
        dict(embeddings=E, threshold=0.9, block=16),
        dict(embeddings="embeddings", threshold="unit", block="posint"),
    ),
    "sequence_pairs": (
        lambda **k: dedup.sequence_pairs(**k),
        dict(texts=TEXTS, threshold=0.7, entities=[["a"]] * 6),
        dict(texts="texts", threshold="unit", entities="str_lists"),
    ),
    "jaccard_pairs": (
        lambda **k: dedup.jaccard_pairs(text.word_sets(TEXTS)[0], **k),
        dict(threshold=0.5),
        dict(threshold="unit"),
    ),
    "minhash_pairs": (
        lambda **k: dedup.minhash_pairs(text.word_sets(TEXTS)[0], **k),
        dict(threshold=0.5, num_perm=64),
        dict(threshold="unit", num_perm="posint"),
    ),
    "lsh_params": (
        lambda **k: dedup.lsh_params(**k),
        dict(threshold=0.5, num_perm=64, miss_weight=0.5),
        dict(threshold="unit", num_perm="posint", miss_weight="unit"),
    ),
    "diversify": (
        lambda **k: optimize.diversify(**k),
        dict(
            texts=TEXTS, sources=["a", "b"] * 3, scores=[1.0] * 6, max_per_source=2, diversity_threshold=0.3
        ),
        dict(texts="texts", scores="scores", max_per_source="posint_or_none", diversity_threshold="unit"),
    ),
    "estimate_tokens": (lambda **k: optimize.estimate_tokens(**k), dict(texts=TEXTS), dict(texts="texts")),
    "fit_budget": (
        lambda **k: optimize.fit_budget(**k),
        dict(costs=COSTS, budget=8, scores=[1.0] * 6),
        dict(costs="costs", budget="budget", scores="scores"),
    ),
    "top_k": (
        lambda **k: optimize.top_k(**k),
        dict(scores=[1.0] * 6, k=2),
        dict(scores="scores_alone", k="count"),
    ),
    "best_first": (
        lambda **k: optimize.best_first(**k),
        dict(scores=[1.0] * 6, n=6),
        dict(scores="scores", n="count"),
    ),
    "word_sets": (
        lambda **k: text.word_sets(**k),
        dict(texts=TEXTS, min_chars=3),
        dict(texts="texts", min_chars="posint"),
    ),
    "code_points": (lambda **k: text.code_points(**k), dict(texts=TEXTS), dict(texts="texts")),
    "split_sentences": (lambda **k: text.split_sentences(**k), dict(text="One. Two."), dict(text="text")),
    "sentence_units": (lambda **k: text.sentence_units(**k), dict(text="One. It two."), dict(text="text")),
    "stem": (lambda **k: text.stem(**k), dict(word="courts"), dict(word="text")),
    "find_words": (lambda **k: text.find_words(**k), dict(text="One. Two."), dict(text="text")),
    "words": (
        lambda **k: text.words(**k),
        dict(text="One. Two.", min_chars=1, stopwords=True),
        dict(text="text", min_chars="posint", stopwords="flag"),
    ),
    "anchor_budget": (
        lambda **k: anchor.anchor_budget(**k),
        dict(n=100, max_items=10),
        dict(n="count", max_items="posint"),
    ),
    "columns": (lambda **k: anchor.columns(**k), dict(items=ITEMS), dict(items="items")),
    "auto_size": (
        lambda items, **k: anchor.auto_size(anchor.columns(items), **k),
        dict(items=ITEMS, upper=20, lower=3),
        dict(items="items", upper="posint", lower="posint"),
    ),
    "information_curve": (
        lambda items, **k: anchor.information_curve(anchor.columns(items), **k),
        dict(items=ITEMS, limit=5),
        dict(items="items", limit="count"),
    ),
    "crush": (
        lambda **k: anchor.crush(**k),
        dict(items=ITEMS, max_items=10, query="errors"),
        dict(items="items", max_items="posint", query="opt_text"),
    ),
    "crush_json": (
        lambda **k: anchor.crush_json(**k),
        dict(text='[{"a": 1}, {"a": 2}, {"a": 3}]', max_items=2),
        dict(text="json", max_items="posint"),
    ),
    "crush_json budget": (
        lambda **k: anchor.crush_json(**k),
        dict(text=json.dumps(ITEMS), budget=200),
        dict(text="json", budget="posint"),
    ),
    "query_intents": (lambda **k: anchor.query_intents(**k), dict(query="latest errors"), dict(query="text")),
    "detect_pattern": (
        lambda **k: anchor.detect_pattern(anchor.columns(**k)),
        dict(items=ITEMS),
        dict(items="items"),
    ),
    "AnchorConfig": (
        lambda **k: anchor.crush(ITEMS, 10, config=anchor.AnchorConfig(**k)),
        dict(anchor_budget_pct=0.2, min_anchor_slots=3, max_anchor_slots=10, anomaly_z=3.5),
        dict(
            anchor_budget_pct="unit",
            min_anchor_slots="count",
            max_anchor_slots="posint",
            anomaly_z="posfloat",
        ),
    ),
    "PositionLearner": (_learner, {}, dict(min_samples="posint", timeout="nonneg")),
    "CrushStore": (
        lambda **k: anchor.CrushStore(":memory:", **k),
        dict(max_bytes=1000, max_entries=5),
        dict(max_bytes="posint", max_entries="posint", timeout="nonneg"),
    ),
    "array_key": (
        lambda **k: anchor.array_key(**k),
        dict(pieces=[json.dumps(t) for t in TEXTS], kept=[1, 3]),
        dict(pieces="texts", kept="kept"),
    ),
    "CrushStore.put": (
        lambda **k: anchor.CrushStore(":memory:").put(**k),
        dict(pieces=[json.dumps(t) for t in TEXTS], kept=[0, 2]),
        dict(pieces="texts", kept="kept"),
    ),
    "CrushStore.retrieve": (
        lambda **k: _crushed("retrieve", **k),
        dict(_FILTERS, with_positions=True),
        dict(_FILTER_CATS, with_positions="flag"),
    ),
    "CrushStore.retrieve_json": (lambda **k: _crushed("retrieve_json", **k), _FILTERS, _FILTER_CATS),
    "CrushStore.page": (
        lambda **k: _crushed("page", **k),
        dict(_FILTERS, budget=200, token_counter="estimate"),
        dict(_FILTER_CATS, budget="budget"),
    ),
    "lossless_encode": (
        lambda **k: anchor.lossless_encode(**k),
        dict(text='[{"a": 1}, {"a": 2}]'),
        dict(text="json"),
    ),
    "lossless_decode": (
        lambda **k: anchor.lossless_decode(**k),
        dict(text='{"_columnar": {"fields": ["a"], "rows": [[1], [2]]}}'),
        dict(text="json"),
    ),
    "read_document": (
        lambda **k: anchor.read_document(**k),
        dict(text='{"a": [{"b": 1}, {"b": 2}]}'),
        dict(text="json"),
    ),
    "classify_position": (
        lambda **k: anchor.classify_position(**k),
        dict(idx=3, size=10),
        dict(idx="count", size="posint"),
    ),
    "coherence": (
        lambda **k: hsca.coherence(**k),
        dict(text=TEXTS[0], layer1=0.5),
        dict(text="text", layer1="unit_or_none"),
    ),
    "domain_tags": (lambda **k: hsca.domain_tags(**k), dict(text=TEXTS[0]), dict(text="text")),
    "verse_form": (lambda **k: hsca.verse_form(**k), dict(text=TEXTS[0]), dict(text="text")),
    "nuance_flags": (lambda **k: hsca.nuance_flags(**k), dict(text=TEXTS[0]), dict(text="text")),
    "relational_weights": (
        lambda **k: hsca.relational_weights(**k),
        dict(texts=TEXTS, window=5),
        dict(texts="texts", window="posint"),
    ),
    "tokenize": (lambda **k: hsca.tokenize(**k), dict(texts=TEXTS), dict(texts="texts")),
    "beat_weights": (
        lambda **k: hsca.beat_weights(**k),
        dict(texts=TEXTS, window=5),
        dict(texts="texts", window="posint"),
    ),
    "domain_scores": (lambda **k: hsca.domain_scores(**k), dict(text=TEXTS[0]), dict(text="text")),
    "HSCAEngine": (
        _engine,
        dict(snapshot_coherence_threshold=0.72, max_buffer_chunks=20, cooccurrence_window=5, text=TEXTS[0]),
        dict(
            snapshot_coherence_threshold="unit",
            max_buffer_chunks="posint",
            cooccurrence_window="posint",
            text="text",
        ),
    ),
    "SnapshotStore": (_store, {}, dict(timeout="nonneg")),
    "mmr_with_relevance": (
        lambda **k: scwo_np.select.mmr_with_relevance(**k),
        dict(embeddings=E, relevance=[0.9, 0.1, 0.5, 0.3, 0.2, 0.8], costs=COSTS, budget=6, lam=0.7),
        dict(embeddings="embeddings", relevance="scores", costs="costs", budget="budget", lam="unit"),
    ),
    "HSCAEngine.context": (
        lambda **k: _session()[0].context(**k),
        dict(query="What did the court rule?", budget=40, recent=0.25, lam=0.7),
        dict(query="text_or_none", budget="budget", recent="unit", lam="unit"),
    ),
    "HSCAEngine.from_store": (
        lambda **k: hsca.HSCAEngine.from_store(_session()[1], **k),
        dict(session="alice"),
        dict(session="text"),
    ),
    "SnapshotStore.load_buffer": (
        lambda **k: _session()[1].load_buffer(**k),
        dict(session="alice"),
        dict(session="text"),
    ),
    "EmbeddingCache": (
        lambda **k: embed.EmbeddingCache(":memory:", **k),
        dict(max_bytes=2**20),
        dict(timeout="nonneg", max_bytes="posint_or_none"),
    ),
    "LSAEmbedder": (
        lambda **k: embed.LSAEmbedder(**k),
        dict(corpus=TEXTS, dim=4, seed=0),
        dict(corpus="texts", dim="posint", seed="count"),
    ),
    "embed_texts": (
        lambda **k: embed.embed_texts(_toy_embedder, **k),
        dict(texts=TEXTS),
        dict(texts="texts"),
    ),
    "embed_query": (
        lambda **k: embed.embed_query(_toy_embedder, **k),
        dict(query="court ruling"),
        dict(query="text"),
    ),
    "embed_pieces": (
        lambda **k: embed.embed_pieces(_toy_pieces, **k),
        dict(texts=TEXTS),
        dict(texts="texts"),
    ),
    "quantize_pieces": (
        lambda **k: embed.quantize_pieces(**k),
        dict(pieces=E, d=4),
        dict(pieces="pieces", d="posint"),
    ),
    "select_texts": (
        lambda **k: scwo_np.select_texts(**k),
        dict(texts=TEXTS, query="court ruling", budget=20, lam=0.7, separator="\n\n"),
        dict(texts="texts", query="text", budget="budget", lam="unit", separator="text"),
    ),
    "select_texts (sentences)": (
        lambda **k: scwo_np.select_texts(TEXTS, "court ruling", 20, granularity="sentence", **k),
        dict(sentence_weight=0.5, lam=0.7),
        dict(sentence_weight="unit", lam="unit"),
    ),
    "select_texts (vectors)": (
        lambda **k: scwo_np.select_texts(TEXTS, **k),
        dict(query=Q, budget=20, embeddings=E, costs=COSTS),
        dict(query="query", embeddings="embeddings", costs="costs_or_none"),
    ),
    "arrange": (
        lambda **k: scwo_np.select.arrange([2, 0, 1], [0.5, 0.9, 0.1], **k),
        dict(order="edges"),
        dict(order="text"),
    ),
    "as_embedder": (
        lambda **k: embed.as_embedder(**k, corpus=TEXTS),
        dict(embedder="lsa"),
        dict(embedder="text"),
    ),
    "count_tokens": (lambda **k: tokens.count_tokens(**k), dict(texts=TEXTS), dict(texts="texts")),
    "as_token_counter": (
        lambda **k: tokens.as_token_counter(**k),
        dict(token_counter="estimate"),
        dict(token_counter="text_or_none"),
    ),
    "MoragContextOptimizer": (
        _morag,
        dict(budget=1000, chunks=CHUNKS, query="court"),
        dict(budget="posint", chunks="chunks", query="text"),
    ),
    "relationship_edges": (
        lambda **k: optimize.relationship_edges(**k),
        dict(chunks=CHUNKS),
        dict(chunks="chunks"),
    ),
    "KBContextOptimizer": (
        _kb,
        dict(matches=MATCHES, budget=200),
        dict(matches="matches", budget="budget_or_none"),
    ),
    "sample_query": (lambda **k: sample_query(**k), dict(text="how do I read a file"), dict(text="text")),
    "read_questions": (
        bench.read_questions,
        dict(path=_QUESTIONS, name="mine"),
        dict(path="path", name="opt_text"),
    ),
}

#: Exported names that are plain data holders or need no bad-input entry, with why.
NOT_FUNCTIONS = {
    "AUTO_BROAD": "a constant: the lam lam='auto' takes for a broad question",
    "AUTO_LOOKUP": "a constant: the lam lam='auto' takes otherwise",
    "format_table": "formats the rows run_bench returned",
    "BatchSelection": "a result type",
    "HSCAContext": "a result type (HSCAEngine.context, registered)",
    "ContextPiece": "a result type (a piece of HSCAContext)",
    "Dedup": "a result type",
    "Diversified": "a result type",
    "Ragged": "a CSR container built by word_sets/code_points",
    "AnchorWeights": "a result type (weights learned or derived)",
    "Columns": "a result type of columns()",
    "CrushReport": "a result type",
    "Document": "a result type of read_document()",
    "Page": "a result type of CrushStore.page",
    "omission_marker": "takes the Columns crush built; covered through crush_json(marker=True)",
    "is_marker": "a predicate that accepts any value",
    "PositionRetrievalPattern": "a result type of PositionLearner.pattern()",
    "ContextSnapshot": "a dataclass with to_dict/from_dict (checked in test_hsca_engine)",
    "DomainTag": "a str Enum",
    "NuanceFlag": "a str Enum",
    "SessionState": "a dataclass",
    "Tuner": "a stateful tuning helper (test_hsca_tuning)",
    "WeightedChunk": "a dataclass",
    "support_strength": "takes WeightedChunk objects made by the engine",
    "ChunkRelationship": "a result type",
    "ContextChunk": "covered through MoragContextOptimizer (dicts are turned into ContextChunks)",
    "KBResult": "a result type",
    "OptimizedContext": "a result type",
    "Removal": "a result type",
    "KB_DEFAULTS": "a dict of defaults",
    "load_sample": "takes no arguments",
    "Sample": "a result type",
    "load_faq": "takes no arguments",
    "FAQ": "a result type",
    "QuestionSet": "a result type",
    "Limits": "a dataclass: scwo mcp's per-call limits",
    "Tools": "the MCP tools; each bad argument is tested through the SDK's client (tests/mcp_server)",
    "build_server": "takes a folder and Limits (tests/mcp_server)",
    "default_data_dir": "takes no arguments",
    "mcp_latency": "a benchmark (scwo bench --mcp); calls and budget are checked like every count",
    "load_questions": "takes a name from QUESTION_SETS; another is a ValueError (tests/bench/test_at_budget.py)",
    "quality_at_budget": "its bad arguments are tested in tests/bench/test_at_budget.py and test_sets.py (each "
    "call runs a benchmark)",
    "format_quality": "formats the rows quality_at_budget returns",
    "plot_quality": "draws the rows quality_at_budget returns (matplotlib); its bad rows, measure and path are "
    "tested in tests/bench/test_sets.py",
    "hsca_bench": "a benchmark (scwo bench --hsca); its bad arguments are tested in tests/bench/test_hsca_bench.py",
    "format_hsca": "formats the dict hsca_bench returns",
    "query_kind": "takes any str; a non-str is a TypeError (tests/select/test_auto_lam.py)",
    "RerankSummary": "a result type of rerank_parquet",
    "Embedder": "a protocol class (what an embedder must provide)",
    "embedder_name": "takes any callable; a non-callable is a TypeError (tests/embed)",
    "TextSelection": "a result type of select_texts",
    "TokenCounter": "the base class of the counters (a subclass's counts are checked: tests/test_tokens.py)",
    "EstimateCounter": "takes no arguments; count() is estimate_tokens, registered above",
    "CachedEmbedder": "wraps an embedder as as_embedder does; a cache that is not an EmbeddingCache is a "
    "TypeError (tests/embed/test_user_cache.py)",
    "embedding_cache_path": "takes no arguments (reads SCWO_NP_EMBEDDING_CACHE)",
    "user_embedding_cache": "takes no arguments (bad SCWO_NP_EMBEDDING_CACHE_MB: tests/embed/test_user_cache.py)",
}
# Names exported under a registry key that differs from the export name.
ALIASES = {"deduplicate": "deduplicate text"}


def _exports(modules=None):
    """Every exported callable (constants such as ``METHODS`` take no input)."""
    for m in MODULES if modules is None else modules:
        mod = importlib.import_module(m)
        for name in getattr(mod, "__all__", []):
            if callable(getattr(mod, name)):
                yield m, name


#: Exported by a core module but needing an extra to run: their entries are in
#: ``tests/test_bad_input_extras.py`` (the integration leg), beside those of the
#: modules that import an extra (``scwo_np.rerank``, ``scwo_np.integrations.*``).
EXTRA_NAMES = {"MiniLMEmbedder", "WordPieceCounter", "TiktokenCounter"}


def check_registered(module, name, registry):
    key = ALIASES.get(name, name)
    assert key is None or key in registry or name in NOT_FUNCTIONS, (
        f"{module}.{name} is exported but not in the bad-input matrix; add it to REGISTRY "
        "(or to NOT_FUNCTIONS with the reason)."
    )


def _cases(strict: bool, registry: dict | None = None):
    for fname, (_, valid, cats) in (REGISTRY if registry is None else registry).items():
        for arg, cat in cats.items():
            values = CATEGORIES[cat](valid.get(arg, 0)) if strict else TOLERATED.get(cat, {})
            for label in values:
                marks = [pytest.mark.volume] if fname in VOLUME_CALLS else []
                yield pytest.param(fname, arg, cat, label, id=f"{fname}-{arg}-{label}", marks=marks)


def _value(cat, valid, arg, label, strict):
    return (CATEGORIES[cat](valid.get(arg, 0)) if strict else TOLERATED[cat])[label]


@pytest.mark.parametrize("module, name", sorted(set(_exports())))
def test_every_export_is_registered(module, name):
    check_registered(module, name, REGISTRY.keys() | EXTRA_NAMES)


def test_every_registered_call_works_with_its_valid_arguments():
    for name, (f, valid, _) in REGISTRY.items():
        if not (NOJIT and name in VOLUME_CALLS):  # a whole benchmark run (tests/legs.py)
            f(**valid)


#: Names an error message may use for an argument instead of its parameter name.
SAYS = {
    "embeddings_selected": ("embeddings",),
    "text": ("text", "query", "json", "input"),
    "items": ("items",),
    "chunks": ("chunk", "chunks"),
    "matches": ("match", "matches"),
    "token_budget": ("tokenbudget",),
    "budgets": ("budget",),
    "queries": ("queries", "query"),
    "counter": ("token_counter",),
}

#: Bad values of the wrong type: a TypeError.  Every other label is a value of the right type
#: that is wrong (NaN, negative, out of range, the wrong shape, empty, a missing field): a ValueError.
TYPE_LABELS = {
    "None", "str", "bool", "True", "int", "float", "bytes", "list", "dict", "complex", "strings",
    "ragged", "nested", "one str", "str rows", "int in row", "int in list", "int keys", "[None]",
    "[bytes]", "[int]", "entities str", "bad score", "bool bound", "list bound", "contains int",
    "exists str", "int field name", "pairs",
}  # fmt: skip
#: Whole-number categories: every bad value but a negative or zero whole number is of the wrong
#: type (2.5 items, NaN tokens, True, "3"); number categories: None, True and a str are.
WHOLE_NUMBERS = {"budget", "budget_or_none", "count", "posint", "posint_or_none", "index"}
NUMBERS = {"unit", "unit_or_none", "posfloat", "nonneg"}
#: (entry, argument, label) of a value of an accepted type that the rule above would call the
#: wrong type, and why it is a ValueError there.
_OPTIONAL = "None is allowed (another argument can stand in for it); this call needs it: a ValueError"
_AUTO = "max_items takes 'auto', so '3' is a str with the wrong value: a ValueError"
VALUE_NOT_TYPE = {
    ("select_batch", "budgets", "list"): "budgets takes one int or an array: [10] is an array of the wrong length",
    ("crush", "max_items", "str"): _AUTO,
    ("crush_json", "max_items", "str"): _AUTO,
    ("deduplicate text", "texts", "None"): _OPTIONAL,
    ("deduplicate sequence", "texts", "None"): _OPTIONAL,
    ("deduplicate minhash", "texts", "None"): _OPTIONAL,
    ("deduplicate cosine", "embeddings", "None"): _OPTIONAL,
    ("diversify", "texts", "None"): _OPTIONAL,
    ("select_texts (vectors)", "embeddings", "None"): _OPTIONAL,
    ("select_texts (vectors)", "query", "str"): "a text query is allowed; with vectors it needs embedder=",
}  # fmt: skip


def expected_error(fname: str, arg: str, cat: str, label: str) -> tuple[type[Exception], ...]:
    """The error a bad value must raise: TypeError for the wrong type, ValueError for a wrong value."""
    if (fname, arg, label) in VALUE_NOT_TYPE:
        return (ValueError,)
    if cat in WHOLE_NUMBERS:
        wrong_type = label not in ("-1", "0")
    elif cat in NUMBERS:
        wrong_type = label in ("None", "True", "str")
    else:
        wrong_type = label in TYPE_LABELS
    return (TypeError,) if wrong_type else (ValueError,)


def names_the_argument(msg: str, arg: str) -> bool:
    """Whether ``msg`` names ``arg`` (or a name ``SAYS`` allows for it) as a word of its own."""
    msg = msg.lower()
    return any(
        re.search(rf"(?<![a-z0-9_]){re.escape(n)}(?![a-z0-9_])", msg)
        for n in SAYS.get(arg, ()) + (arg.lower(),)
    )


@pytest.mark.parametrize("fname, arg, cat, label", list(_cases(strict=True)))
def test_bad_value_is_a_clear_error(fname, arg, cat, label):
    check_bad_value(REGISTRY, fname, arg, cat, label)


def check_bad_value(registry, fname, arg, cat, label):
    f, valid, _ = registry[fname]
    bad = _value(cat, valid, arg, label, True)
    kw = {**valid, arg: bad}
    before = copy.deepcopy(kw)
    want = expected_error(fname, arg, cat, label)
    with pytest.raises((ValueError, TypeError)) as info:
        f(**kw)
    assert isinstance(info.value, want), (
        f"{fname}({arg}={label}) raised {type(info.value).__name__}, not {' or '.join(w.__name__ for w in want)}: "
        f"{info.value}"
    )
    assert names_the_argument(str(info.value), arg), f"the message does not name {arg!r}: {info.value}"
    assert "\n" not in str(info.value).strip() or len(str(info.value)) < 400
    for k, v in before.items():  # nothing was modified
        if isinstance(v, np.ndarray):
            np.testing.assert_array_equal(kw[k], v)
        elif hasattr(v, "equals"):  # Arrow and pandas objects
            assert kw[k] is v or kw[k].equals(v)
        elif hasattr(v, "__dask_graph__"):
            assert kw[k] is v or kw[k].npartitions == v.npartitions
        elif not isinstance(v, float) or not math.isnan(v):
            assert kw[k] is v or kw[k] == v


@pytest.mark.parametrize("fname, arg, cat, label", list(_cases(strict=False)))
def test_tolerated_value_works_or_is_a_clear_error(fname, arg, cat, label):
    check_tolerated_value(REGISTRY, fname, arg, cat, label)


def check_tolerated_value(registry, fname, arg, cat, label):
    f, valid, _ = registry[fname]
    kw = {**valid, arg: _value(cat, valid, arg, label, False)}
    try:
        first = f(**kw)
    except (ValueError, TypeError):
        return
    # Accepted: the same answer on a second call (clamps are not call-order dependent).
    second = f(**kw)
    if isinstance(first, np.ndarray):
        np.testing.assert_array_equal(first, second)


# ---------------------------------------------------------------------------
# Issue 32's causes, one representative each: a wrong type met deep inside (an
# AttributeError or TypeError from the implementation), a message that names no
# argument, a NaN or negative number passed through, a huge number overflowing.
# Each must be a ValueError/TypeError naming the argument, in one line.


def _hsca_engine_with_a_snapshot():
    eng = hsca.HSCAEngine()
    eng.ingest_turn("The court ruled that the contract was void.")
    eng.take_snapshot()
    return eng


def _learner(tmp):
    return anchor.PositionLearner(os.path.join(tmp, "p.sqlite"))


CAUSES = {
    "crush config of the wrong type": (
        lambda tmp: anchor.crush(ITEMS, 10, config="static"), TypeError, "config must be an AnchorConfig"),
    "detect_pattern(None)": (lambda tmp: anchor.detect_pattern(None), TypeError, "c must be the Columns"),
    "learned weights with NaN": (
        lambda tmp: anchor.crush(ITEMS, 10, learned=anchor.AnchorWeights(math.nan, 1, 0)), ValueError, "learned.front"),
    "support_strength of a str": (lambda tmp: hsca.support_strength("abc"), TypeError, "grounding"),
    "Tuner.record(None)": (lambda tmp: hsca.Tuner().record(None, True), TypeError, "chunk must be a WeightedChunk"),
    "Tuner.tune(None)": (lambda tmp: hsca.Tuner().tune(None), TypeError, "engine must be an HSCAEngine"),
    "state_before(None)": (lambda tmp: hsca.HSCAEngine().state_before(None), TypeError, "concept must be a str"),
    "relevant_snapshots(last=1.5)": (
        lambda tmp: _hsca_engine_with_a_snapshot().relevant_snapshots("court", last=1.5), TypeError, "last"),
    "format_context(None)": (
        lambda tmp: optimize.MoragContextOptimizer().format_context(None, "q"), TypeError, "optimized_context"),
    "MoRAG list ids": (
        lambda tmp: optimize.MoragContextOptimizer().optimize([dict(CHUNKS[0], id=["x"])], "q"), TypeError, "id must be"),
    "MoRAG dict timestamps": (
        lambda tmp: optimize.MoragContextOptimizer().optimize([dict(CHUNKS[0], timestamp={"a": 1})], "q"),
        TypeError, "timestamp must be"),
    "MoRAG ragged embeddings": (
        lambda tmp: optimize.MoragContextOptimizer().optimize(
            [dict(CHUNKS[0], embedding=[1.0, 2.0]), dict(CHUNKS[1], embedding=[1.0, 2.0, 3.0])], "q"),
        ValueError, "embedding has 3 numbers"),
    "KB options not a dict": (
        lambda tmp: optimize.KBContextOptimizer().optimize(
            [{"chunkId": "1", "text": "a"}], [("budget", 5)]), TypeError, "options must be a dict"),
    "KB fractional token counts": (
        lambda tmp: optimize.KBContextOptimizer().optimize(
            [{"chunkId": "1", "text": "a b", "score": 1.0, "tokens": 3.7}], {"budget": 10, "adaptive_selection": True}),
        ValueError, "whole token count"),
    "record_retrieval(None)": (
        lambda tmp: _learner(tmp).record_retrieval("t", 10, None), TypeError, "retrieved_indices"),
    "record_retrieval(5)": (lambda tmp: _learner(tmp).record_retrieval("t", 10, 5), TypeError, "retrieved_indices"),
    "dedup seed=-1": (lambda tmp: dedup.deduplicate(TEXTS, method="minhash", seed=-1), ValueError, "seed must be"),
    "dedup grouping='chain'": (
        lambda tmp: dedup.deduplicate(TEXTS, grouping="chain"), ValueError, "grouping must be one of 'greedy'"),
    "dedup grouping=None": (lambda tmp: dedup.deduplicate(TEXTS, grouping=None), (ValueError, TypeError), "grouping"),
    "mmr_select_multi weights of str": (
        lambda tmp: scwo_np.mmr_select_multi(E, E[:2], COSTS, 8, weights=["a", "b"]), TypeError, "weights must be"),
    "a counter returning 10**30": (
        lambda tmp: scwo_np.select_texts(TEXTS, "court", 20, token_counter=lambda s: 10**30), ValueError, "token_counter"),
    "domain weight NaN": (lambda tmp: hsca.domain_tags(TEXTS[0], weights={"legal": math.nan}), ValueError, "weights"),
    "snapshot created_at NaN": (
        lambda tmp: hsca.ContextSnapshot.from_dict(
            {"snapshot_id": "s", "macro_weight": 0.5, "created_at": math.nan}), ValueError, "created_at"),
    "WeightedChunk score 10**400": (
        lambda tmp: hsca.WeightedChunk.from_dict(
            {"chunk_id": "a", "text": "", "layer1_score": 10**400, "coherence_score": 0.5}), ValueError, "layer1_score"),
    "aggregate_domains(now=NaN)": (
        lambda tmp: hsca.SnapshotStore(os.path.join(tmp, "s.sqlite")).aggregate_domains(["s"], now=math.nan),
        ValueError, "now must be"),
    "save([None])": (
        lambda tmp: hsca.SnapshotStore(os.path.join(tmp, "s.sqlite")).save("s", [None]), TypeError, "snapshots"),
    "EmbeddingCache.put of NaN": (
        lambda tmp: embed.EmbeddingCache(os.path.join(tmp, "c.sqlite")).put("m", ["a"], [[math.nan, 1.0]]),
        ValueError, "NaN or inf"),
    "CrushStore.put of non-JSON pieces": (
        lambda tmp: anchor.CrushStore(os.path.join(tmp, "c.sqlite")).put(["not json"]), ValueError, "pieces"),
    "lossless_decode of rows longer than fields": (
        lambda tmp: anchor.lossless_decode('{"_columnar":{"fields":["a"],"rows":[[1,2]]}}'), ValueError, "row 0"),
}  # fmt: skip


@pytest.mark.parametrize("cause", sorted(CAUSES))
def test_each_cause_of_issue_32_is_a_clear_one_line_error(cause, tmp_path):
    call, error, match = CAUSES[cause]
    with pytest.raises(error, match=match) as info:
        call(str(tmp_path))
    assert "\n" not in str(info.value)
