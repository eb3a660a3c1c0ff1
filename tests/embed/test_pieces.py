"""Word-piece vectors: the embedder protocol's checks, and the cache keeping them beside the vectors."""

import sqlite3

import naive
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from scwo_np.embed import (
    CachedEmbedder,
    EmbeddingCache,
    embed_pieces,
    embed_texts,
    quantize_pieces,
)
from scwo_np.embed._base import _dequantize as dequantize_pieces


class Pieces:
    """An embedder with word pieces: a text's vector and, per word, a piece (records its calls)."""

    name = "pieces-v1"

    def __init__(self):
        self.calls = []

    def __call__(self, texts):
        return [[1.0, float(len(t)), float(t.count("a"))] for t in texts]

    def embed_pieces(self, texts):
        self.calls.append(list(texts))
        return self(texts), [[[1.0, float(len(w)), 0.5] for w in t.split()] for t in texts]


def test_an_embedder_without_pieces_gives_none():
    assert embed_pieces(lambda ts: [[1.0, 2.0] for _ in ts], ["a"]) is None
    model = lambda ts: [[1.0, 2.0] for _ in ts]  # noqa: E731
    model.name = "plain-v1"
    assert CachedEmbedder(model, EmbeddingCache(":memory:")).embed_pieces(["a"]) is None


def test_pieces_are_checked_and_kept_to_8_bits():
    V, P = embed_pieces(Pieces(), ["a bb", "ccc"])
    np.testing.assert_array_equal(V, embed_texts(Pieces(), ["a bb", "ccc"]))
    assert [p.shape for p in P] == [(2, 3), (1, 3)] and {p.dtype.name for p in P} == {"float32"}
    for p, words in zip(P, ["a bb", "ccc"], strict=True):  # unit rows, to 8 bits
        want = [
            naive.quantize_piece([x / naive.norm(r) for x in r])
            for r in [[1.0, len(w), 0.5] for w in words.split()]
        ]
        assert p.tolist() == want


@given(hnp.arrays(np.float32, st.tuples(st.integers(0, 5), st.integers(1, 6)),
                  elements=st.floats(-1e4, 1e4, width=32) | st.sampled_from([0.0, 1.0, -0.5, 127.0, 3e-30, 1e-40, 3e38, -3.4e38])))  # fmt: skip
def test_8_bit_pieces_equal_the_reference_and_round_to_themselves(rows):
    exps, codes = quantize_pieces(rows, rows.shape[1])
    back = dequantize_pieces(exps, codes)
    assert back.shape == rows.shape and back.dtype == np.float32
    np.testing.assert_array_equal(
        back, np.array([naive.quantize_piece(r) for r in rows.tolist()]).reshape(rows.shape)
    )
    e2, c2 = quantize_pieces(back, rows.shape[1])  # idempotent: what a cache stores and reads back
    np.testing.assert_array_equal(dequantize_pieces(e2, c2), back)
    if rows.size:  # half a code at most, in float32's normal range
        top = np.abs(rows).max(axis=1, keepdims=True)
        normal = ((top >= 2.0**-121) & (top <= 127 * 2.0**121)).ravel()
        assert (np.abs(back - rows)[normal] <= top[normal] / 127).all()


class Bad(Pieces):
    def __init__(self, pieces):
        super().__init__()
        self.pieces = pieces

    def embed_pieces(self, texts):
        return self(texts), self.pieces


@pytest.mark.parametrize(
    "pieces, match",
    [
        ([[[1.0, 2.0, 3.0]]], "pieces of 1 text"),
        ([[[1.0, 2.0]], [[1.0, 2.0]]], r"for 'a' of shape \(1, 2\): a text's pieces must be finite \(m, 3\)"),
        ([[[1.0, np.nan, 3.0]], []], r"for 'a' of shape \(1, 3\), with NaN or inf"),
        ([[[1.0, 1e39, 3.0]], []], r"for 'a' of shape \(1, 3\), with NaN or inf"),  # beyond float32
        ((p for p in [[], []]), "pieces as generator"),
        (3, "pieces as int"),
        ([[[1.0, 2.0, 3.0], [1.0]], []], r"for 'a' not an array of numbers"),  # ragged
    ],
)
def test_bad_pieces_are_named(pieces, match):
    with pytest.raises(ValueError, match=match):
        embed_pieces(Bad(pieces), ["a", "b"])


def test_a_text_may_have_no_piece():
    V, P = embed_pieces(Bad([[], [[1.0, 2.0, 3.0]]]), ["a", "b"])
    assert [p.shape for p in P] == [(0, 3), (1, 3)]


def test_the_cache_keeps_pieces_beside_the_vectors(tmp_path):
    path = tmp_path / "emb.sqlite"
    model = Pieces()
    with EmbeddingCache(path) as cache:
        V, P = cache.embed_pieces(model, ["a bb", "ccc", "a bb"])
        assert model.calls == [["a bb", "ccc"]]
        assert len(cache) == 2
    with EmbeddingCache(path) as cache:  # another process: nothing embedded again
        V2, P2 = cache.embed_pieces(model, ["ccc", "a bb"])
        assert model.calls == [["a bb", "ccc"]]
        np.testing.assert_array_equal(V2, V[[1, 0]])
        assert [p.tolist() for p in P2] == [P[1].tolist(), P[0].tolist()]
        # a vector cached without its pieces (by a plain call) is embedded again, with them
        cache.embed(model, ["dd e"])
        cache.embed_pieces(model, ["dd e", "a bb"])
        assert model.calls[-1] == ["dd e"]
        assert cache.get_pieces("pieces-v1", ["dd e", "zz"], 3)[1] is None


def test_a_file_written_before_pieces_reads_as_none_and_gains_them(tmp_path):
    path = tmp_path / "old.sqlite"
    with EmbeddingCache(path) as cache:
        cache.put("pieces-v1", ["a"], np.ones((1, 3)))
    with sqlite3.connect(path) as db:
        assert "pieces" not in {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
    with EmbeddingCache(path) as cache:
        assert cache.get_pieces("pieces-v1", ["a"], 3) == [None]
        cache.embed_pieces(Pieces(), ["a"])
        assert cache.get_pieces("pieces-v1", ["a"], 3)[0].shape == (1, 3)


def test_eviction_takes_a_texts_pieces_with_its_vector(tmp_path):
    model = Pieces()
    with EmbeddingCache(tmp_path / "emb.sqlite", max_bytes=200_000) as cache:
        for i in range(300):
            cache.embed_pieces(model, [f"t{i} " * 200])
        kept = cache._db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
        assert 0 < kept < 300 and cache.size_bytes <= 200_000
        orphans = cache._db.execute(
            "SELECT COUNT(*) FROM pieces WHERE NOT EXISTS (SELECT 1 FROM embeddings AS e "
            "WHERE e.name = pieces.name AND e.key = pieces.key)"
        ).fetchone()[0]
        assert orphans == 0
        assert cache._db.execute("SELECT COUNT(*) FROM pieces").fetchone()[0] == kept


def test_a_cached_embedder_reads_pieces_from_its_cache():
    model = Pieces()
    emb = CachedEmbedder(model, EmbeddingCache(":memory:"))
    first = emb.embed_pieces(["a bb"])
    second = emb.embed_pieces(["a bb"])
    assert len(model.calls) == 1 and first[1][0].tolist() == second[1][0].tolist()


@pytest.mark.parametrize("got", [{"vectors": 1, "pieces": 2}, ([[1.0, 1.0, 1.0]],), "ab"])
def test_what_is_not_a_pair_is_named(got):
    class Odd(Pieces):
        def embed_pieces(self, texts):
            return got

    with pytest.raises(
        ValueError, match=r"pieces-v1.embed_pieces must return a pair \(vectors, pieces\) or None"
    ):
        embed_pieces(Odd(), ["a"])


def test_pieces_come_back_at_unit_length():
    V, P = embed_pieces(Bad([[[3.0, 4.0, 0.0], [0.0, 0.0, 0.0]], []]), ["a", "b"])
    assert P[0].tolist() == [[0.6015625, 0.796875, 0.0], [0.0, 0.0, 0.0]]  # 3/5, 4/5 to 8 bits; zero stays
