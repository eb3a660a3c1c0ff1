"""EmbeddingCache on real SQLite files; the embedder protocol's checks."""

import multiprocessing as mp
import sqlite3
import zlib

import numpy as np
import pytest

from scwo_np.embed import EmbeddingCache, embed_texts, embedder_name


class Counting:
    """A deterministic embedder that records how many texts it was asked for."""

    name = "counting-v1"

    def __init__(self, d=8):
        self.d = d
        self.calls = []

    def __call__(self, texts):
        self.calls.append(list(texts))
        out = np.zeros((len(texts), self.d))
        for i, t in enumerate(texts):
            rng = np.random.default_rng(zlib.crc32(t.encode()))  # not hash(): salted per process
            out[i] = rng.standard_normal(self.d)
        return out


def test_second_run_embeds_nothing_and_returns_the_same_bits(tmp_path):
    path = tmp_path / "emb.sqlite"
    texts = [f"text {i}" for i in range(300)] + ["text 3", "text 7"]  # duplicates embedded once
    model = Counting()
    with EmbeddingCache(path) as cache:
        first = cache.embed(model, texts, batch_size=64)
    assert sum(len(c) for c in model.calls) == 300 and max(len(c) for c in model.calls) == 64
    np.testing.assert_array_equal(first, embed_texts(Counting(), texts))
    model.calls.clear()
    with EmbeddingCache(path) as cache:  # a new process would see the same file
        again = cache.embed(model, texts[::-1])
        assert len(cache) == 300
    assert model.calls == []
    np.testing.assert_array_equal(again, first[::-1])
    assert first.dtype == np.float32 and first.flags.writeable


def test_entries_are_per_embedder_name(tmp_path):
    with EmbeddingCache(tmp_path / "c.sqlite") as cache:
        a, b = Counting(4), Counting(6)
        b.name = "counting-v2"
        assert cache.embed(a, ["x"]).shape == (1, 4) and cache.embed(b, ["x"]).shape == (1, 6)
        assert cache.get("counting-v1", ["x", "y"])[1] is None
        c = Counting(6)  # same name as a, other width: two models under one name
        cache.put("counting-v1", ["y"], c(["y"]))
        with pytest.raises(ValueError, match="share that name"):
            cache.embed(a, ["x", "y"])


def _writer(path, start):
    cache = EmbeddingCache(path)
    cache.embed(Counting(), [f"t{start + i}" for i in range(200)], batch_size=20)
    cache.close()


def test_two_processes_fill_one_file(tmp_path):
    path = str(tmp_path / "shared.sqlite")
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, s)) for s in (0, 100)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    with EmbeddingCache(path) as cache:
        assert len(cache) == 300
        assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_failing_embedder_leaves_the_finished_batches(tmp_path):
    class Flaky(Counting):
        def __call__(self, texts):
            if any(t == "boom" for t in texts):
                raise RuntimeError("model server down")
            return super().__call__(texts)

    with EmbeddingCache(tmp_path / "f.sqlite") as cache:
        with pytest.raises(RuntimeError, match="down"):
            cache.embed(Flaky(), ["a", "b", "boom", "c"], batch_size=2)
        assert len(cache) == 2  # the first batch was committed, nothing of the second


@pytest.mark.parametrize(
    "out, msg",
    [
        ([[1.0, 2.0]], "1 row"),
        ([[1.0, np.nan], [1.0, 2.0]], "NaN or inf for texts\\[0\\]"),
        ([[1e39, 1.0], [1.0, 2.0]], "NaN or inf"),
        ([[0.0, 0.0], [1.0, 2.0]], "zero vector for texts\\[0\\]"),
        ([1.0, 2.0], "shape"),
        ([[1.0], [1.0, 2.0]], "not a numeric"),
        ([["a", "b"], ["c", "d"]], "not a numeric"),
        (np.empty((2, 0)), "length 0"),
    ],
)
def test_what_an_embedder_returns_is_checked(out, msg):
    with pytest.raises(ValueError, match=msg):
        embed_texts(lambda texts: out, ["a", "b"])


def test_inputs_are_checked():
    with pytest.raises(TypeError, match="callable"):
        embedder_name("minilm")
    with pytest.raises(TypeError, match="wrap it in a list"):
        embed_texts(Counting(), "one string")
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        embed_texts(Counting(), ["a", None])
    cache = EmbeddingCache(":memory:")
    with pytest.raises(ValueError, match="lone surrogate"):
        cache.embed(Counting(), ["ok \ud800"])
    with pytest.raises(TypeError, match="name"):
        cache.get("", ["a"])
    with pytest.raises(ValueError, match="shape"):
        cache.put("m", ["a", "b"], np.ones((1, 3)))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        EmbeddingCache("/nonexistent/dir/c.sqlite")
    assert cache.embed(Counting(), []).shape == (0, 0)


def test_bound_methods_are_named_by_their_class():
    class Client:
        def embed_documents(self, texts):
            return [[1.0] for _ in texts]

    assert embedder_name(Client().embed_documents).endswith("Client.embed_documents")


@pytest.mark.parametrize("bad", [np.nan, np.inf, 1e300])
def test_a_cache_keeps_only_finite_vectors(tmp_path, bad):
    """Issue 32: a NaN vector was stored, and get returned it."""
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    vecs = np.ones((2, 3))
    vecs[1, 2] = bad
    with pytest.raises(ValueError, match=r"vectors\[1\] holds NaN or inf"):
        cache.put("m", ["a", "b"], vecs)
    assert cache.get("m", ["a", "b"]) == [None, None]  # nothing of the refused call was stored
