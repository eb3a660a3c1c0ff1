"""Every similarity a result reports is the one selection ranked by: ``scwo_np._dot``'s bits.

``_dot.query_cosines`` is the cosine ``mmr_select`` computes (its gains at ``lam=1`` are the
relevance itself); sentence relevance in ``select_texts`` and the KB optimizer's ranking by
the query use it, so their numbers equal the selection's to the bit.
"""

import numpy as np
import pytest

from scwo_np import _dot, mmr_select, select_texts
from scwo_np.optimize import KBContextOptimizer
from scwo_np.select._units import Units

TEXTS = [
    "Use csv.reader to read a CSV file row by row. It returns lists of strings.",
    "csv.reader reads a CSV file one row at a time. The dialect sets the delimiter.",
    "json.load parses a JSON document from a file. It raises on bad input.",
    "The sqlite3 module is a DB-API interface for SQLite. Connections commit transactions.",
    "pathlib.Path.read_text reads a whole file. It decodes it with the given encoding.",
]


def _data(dtype, n=60, d=19, seed=0):
    rng = np.random.default_rng(seed)
    E = rng.standard_normal((n, d)).astype(dtype)
    E[-2:] = -E[:2]  # negative similarities
    E[10:13] = E[0]  # exact ties
    return E, rng.standard_normal(d).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_query_cosines_are_mmr_relevance(dtype):
    E, q = _data(dtype)
    costs = np.ones(len(E), dtype=np.int64)
    for method in ("exact", "lazy"):
        idx, gains = mmr_select(E, q, costs, len(E), lam=1.0, method=method, return_gains=True)
        cos, nrm = _dot.query_cosines(E, q)
        np.testing.assert_array_equal(gains, cos[idx])  # bit for bit, not allclose
        np.testing.assert_array_equal(nrm, _dot.dots_norms(E, E[0])[1])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_select_texts_relevance_is_the_selections(dtype):
    E, q = _data(dtype, n=len(TEXTS))
    sel = select_texts(TEXTS, q, budget=60, embeddings=E, lam=1.0)
    # lam=1: each gain is the relevance mmr_select ranked by; the reported relevance is it.
    np.testing.assert_array_equal(sel.relevance, sel.gains)
    np.testing.assert_array_equal(sel.relevance, _dot.query_cosines(E, q)[0][sel.indices])


def test_sentence_relevance_goes_through_dot():
    from scwo_np.embed import as_embedder, embed_texts

    emb = as_embedder("lsa", TEXTS)
    query = "how do I read a CSV file?"
    sel = select_texts(
        TEXTS,
        query,
        budget=400,
        embedder=emb,
        granularity="sentence",
        sentence_weight=1.0,
        lam=1.0,
        order="pick",
        lexical=0.0,  # the embedding's relevance alone
    )
    units = Units(TEXTS)
    cos = _dot.query_cosines(embed_texts(emb, units.sentences), embed_texts(emb, [query])[0])[0]
    best = np.maximum.reduceat(cos, units.start)
    # sentence_weight=1: a unit's relevance is its best sentence's cosine as _dot computes it, less
    # its length cost; lam=1 and room for everything: the first pick is the most relevant unit.
    from scwo_np.select._units import LENGTH_COST
    from scwo_np.tokens import count_tokens

    own = count_tokens(units.texts, "estimate")
    rel = best - LENGTH_COST * own / own.mean()
    assert sel.gains[0] == rel.max()
    assert int(units.text_of[int(np.argmax(rel))]) == int(sel.indices[0])


def test_kb_ranks_by_the_dot_cosine():
    E, q = _data("float32", n=8, d=11, seed=3)
    matches = [{"id": i, "text": f"match {i}", "embedding": E[i]} for i in range(len(E))]
    opt = KBContextOptimizer()
    opts = opt.options({})
    key = next(k for k in opts if k.replace("_", "").lower() == "queryembedding")
    scores = opt._scores(matches, {**opts, key: q}, [m["embedding"] for m in matches])
    np.testing.assert_array_equal(scores, _dot.query_cosines(E, q)[0])
