"""The user's embedding cache: on by default for named models, real SQLite files, opt-outs, size, safety.

Every test points ``SCWO_NP_EMBEDDING_CACHE`` at a file of its own (``user_cache`` fixture).  The
fast tests use a deterministic embedder that declares ``cache_by_default`` (as MiniLMEmbedder does)
and LSA; the real MiniLM runs in the integration leg.
"""

import multiprocessing as mp
import os
import sqlite3
import unicodedata
import warnings
import zlib

import numpy as np
import pytest

from scwo_np import load_sample, select_texts
from scwo_np.embed import (
    DEFAULT_MAX_MB,
    CachedEmbedder,
    EmbeddingCache,
    LSAEmbedder,
    as_embedder,
    embed_texts,
    embedding_cache_path,
    user_embedding_cache,
)


class Model:
    """Deterministic vectors from the text's CRC; records what it embeds; cached by default like MiniLM."""

    name = "crc-model-v1"
    cache_by_default = True

    def __init__(self, d=16):
        self.d = d
        self.seen = []

    def __call__(self, texts):
        self.seen += list(texts)
        return np.stack(
            [np.random.default_rng(zlib.crc32(t.encode())).standard_normal(self.d) for t in texts]
        )


@pytest.fixture
def user_cache(tmp_path, monkeypatch):
    path = tmp_path / "user" / "embeddings.sqlite"
    monkeypatch.setenv("SCWO_NP_EMBEDDING_CACHE", str(path))
    monkeypatch.delenv("SCWO_NP_EMBEDDING_CACHE_MB", raising=False)
    return path


@pytest.fixture(scope="module")
def paragraphs():
    """100 real paragraphs of the Python documentation (the bundled sample) and a question."""
    s = load_sample()
    return list(s.texts[200:300]), s.queries[3]


def _rows(path):
    with sqlite3.connect(path) as db:
        return db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]


def test_a_named_model_is_cached_on_disk_by_default(user_cache, paragraphs):
    texts, question = paragraphs
    model = Model()
    emb = as_embedder(model)
    assert isinstance(emb, CachedEmbedder) and emb.name == model.name
    first = embed_texts(emb, texts)
    assert len(model.seen) == len(set(texts)) and user_cache.exists() and _rows(user_cache) == len(set(texts))
    model.seen.clear()
    again = embed_texts(as_embedder(model), texts[::-1])
    assert model.seen == []  # every vector read back
    np.testing.assert_array_equal(again, first[::-1])
    np.testing.assert_array_equal(first, embed_texts(Model(), texts))  # the model's own bits


def test_select_texts_twice_embeds_once(user_cache, paragraphs):
    texts, question = paragraphs
    model = Model()
    a = select_texts(texts, question, 400, embedder=model)
    n = len(model.seen)
    assert n == len(set(texts)) + 1  # the texts and the question
    b = select_texts(texts, question, 400, embedder=model)
    assert len(model.seen) == n and a.context == b.context and a.embedder == b.embedder == "crc-model-v1"
    select_texts(texts, question, 400, embedder=model, granularity="sentence")  # sentences: new texts
    m = len(model.seen)
    select_texts(texts, question, 400, embedder=model, granularity="sentence")
    assert len(model.seen) == m > n


def test_opting_out_by_argument_and_by_environment(user_cache, paragraphs, monkeypatch):
    texts, question = paragraphs
    model = Model()
    assert as_embedder(model, cache=False) is model
    assert as_embedder(as_embedder(model), cache=False) is model  # unwrapped
    select_texts(texts, question, 400, embedder=model, cache=False)
    select_texts(texts, question, 400, embedder=model, cache=False)
    assert len(model.seen) == 2 * (len(set(texts)) + 1) and not user_cache.exists()
    monkeypatch.setenv("SCWO_NP_EMBEDDING_CACHE", "off")
    assert embedding_cache_path() is None and user_embedding_cache() is None
    model.seen.clear()
    embed_texts(as_embedder(model), texts)
    embed_texts(as_embedder(model), texts)
    assert len(model.seen) == 2 * len(set(texts)) and not user_cache.exists()


def test_lsa_and_plain_callables_are_not_cached_unless_asked(user_cache, paragraphs, tmp_path):
    texts, question = paragraphs
    lsa = as_embedder("lsa", texts + [question])
    assert isinstance(lsa, LSAEmbedder)
    select_texts(texts, question, 400)
    assert not user_cache.exists()

    def plain(ts):
        return Model()(ts)

    assert as_embedder(plain) is plain
    explicit = as_embedder("lsa", texts + [question], cache=tmp_path / "mine.sqlite")
    assert isinstance(explicit, CachedEmbedder) and explicit.name == lsa.name
    np.testing.assert_array_equal(embed_texts(explicit, texts), embed_texts(lsa, texts))
    assert _rows(tmp_path / "mine.sqlite") == len(set(texts)) and not user_cache.exists()


def test_an_explicit_cache_is_used_instead_of_the_user_cache(user_cache, paragraphs, tmp_path):
    texts, question = paragraphs
    model = Model()
    with EmbeddingCache(tmp_path / "given.sqlite") as given:
        select_texts(texts, question, 400, embedder=model, cache=given)
        assert len(given) == len(set(texts)) + 1
    select_texts(texts, question, 400, embedder=model, cache=tmp_path / "given.sqlite")
    assert len(model.seen) == len(set(texts)) + 1 and not user_cache.exists()


def test_keys_are_the_model_and_the_text_exactly(user_cache):
    other = Model(d=16)
    other.name = "crc-model-v2"  # another model: its own vectors even for the same texts
    nfc = unicodedata.normalize("NFC", "café")
    nfd = unicodedata.normalize("NFD", "café")
    texts = ["Read a file.", "Read a file. ", "read a file.", nfc, nfd, "Read\u00a0a file."]
    model = Model()
    a = embed_texts(as_embedder(model), texts)
    assert len(model.seen) == len(texts)  # no two of them share an entry
    b = embed_texts(as_embedder(other), texts)
    assert len(other.seen) == len(texts)
    assert _rows(user_cache) == 2 * len(texts)
    np.testing.assert_array_equal(a, b)  # same maths, but stored twice: the name is part of the key
    with pytest.raises(ValueError, match="share that name"):  # a model of another width under a used name
        embed_texts(as_embedder(Model(d=8)), ["Read a file.", "something new"])


def test_the_size_limit_evicts_the_least_recently_used(tmp_path):
    path = tmp_path / "small.sqlite"
    model = Model(d=384)  # MiniLM-sized vectors, 1.5 kB each
    old = [f"old paragraph {i}" for i in range(60)]
    keep = [f"kept paragraph {i}" for i in range(60)]
    with EmbeddingCache(path) as cache:  # no limit yet
        cache.embed(model, old)
        cache.embed(model, keep)
        per_entry = cache.size_bytes / 120
    with sqlite3.connect(path) as db:  # both batches were last used two hours ago
        db.execute("UPDATE embeddings SET used = used - 7200")
    limit = int(150 * per_entry)  # room for about 150 entries
    new = [f"new paragraph {i}" for i in range(60)]
    with EmbeddingCache(path, max_bytes=limit) as cache:
        cache.embed(model, keep)  # read now: their last use is written again
        model.seen.clear()
        for k in range(0, 60, 30):  # new vectors push the file past its limit
            cache.embed(model, new[k : k + 30])
            assert cache.size_bytes <= limit
        assert model.seen == new
        got = cache.get(model.name, keep + new + old)
        assert all(v is not None for v in got[:120])  # recently used: kept
        assert sum(v is None for v in got[120:]) >= 30  # least recently used: evicted first
        np.testing.assert_array_equal(got[0], embed_texts(Model(d=384), keep[:1])[0])
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_the_user_cache_size_comes_from_the_environment(user_cache, monkeypatch):
    assert user_embedding_cache().max_bytes == DEFAULT_MAX_MB * 2**20
    monkeypatch.setenv("SCWO_NP_EMBEDDING_CACHE_MB", "1.5")
    assert user_embedding_cache().max_bytes == int(1.5 * 2**20)
    monkeypatch.setenv("SCWO_NP_EMBEDDING_CACHE_MB", "lots")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert user_embedding_cache().max_bytes == DEFAULT_MAX_MB * 2**20
    assert any("SCWO_NP_EMBEDDING_CACHE_MB" in str(x.message) for x in w)


def test_one_open_cache_per_process(user_cache):
    assert user_embedding_cache() is user_embedding_cache()


def test_a_file_written_before_the_size_limit_is_migrated(tmp_path):
    """A cache file of the earlier format (no ``used`` column) is read, and gets the column."""
    path = tmp_path / "old.sqlite"
    with EmbeddingCache(path) as cache:
        cache.embed(Model(), ["a", "b"])
    with sqlite3.connect(path) as db:  # the earlier format: the same table without "used"
        db.executescript(
            "CREATE TABLE e2 (name TEXT NOT NULL, key BLOB NOT NULL, vec BLOB NOT NULL, PRIMARY KEY (name, key));"
            "INSERT INTO e2 SELECT name, key, vec FROM embeddings; DROP TABLE embeddings;"
            "ALTER TABLE e2 RENAME TO embeddings;"
        )
    model = Model()
    with EmbeddingCache(path, max_bytes=10**6) as cache:
        cache.embed(model, ["a", "b", "c"])
        assert model.seen == ["c"] and len(cache) == 3
    cols = [r[1] for r in sqlite3.connect(path).execute("PRAGMA table_info(embeddings)")]
    assert cols == ["name", "key", "vec", "used"]


def test_an_unusable_cache_folder_or_file_degrades_to_no_cache_with_a_warning(
    tmp_path, monkeypatch, paragraphs
):
    texts, question = paragraphs
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    not_sqlite = tmp_path / "notes.txt"
    not_sqlite.write_text("these are my notes, not a SQLite database\n")
    for where in (blocker / "sub" / "embeddings.sqlite", not_sqlite):
        monkeypatch.setenv("SCWO_NP_EMBEDDING_CACHE", str(where))
        model = Model()
        with pytest.warns(RuntimeWarning, match="embedding without it"):
            sel = select_texts(texts, question, 400, embedder=model)
        assert len(sel) and len(model.seen) == len(set(texts)) + 1
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # warned once per file, not at every call
            select_texts(texts, question, 400, embedder=model)
    assert not_sqlite.read_text() == "these are my notes, not a SQLite database\n"  # left alone


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes read-only files")
def test_a_read_only_cache_folder_degrades_to_no_cache_with_a_warning(tmp_path, monkeypatch, paragraphs):
    texts, question = paragraphs
    folder = tmp_path / "ro"
    folder.mkdir()
    monkeypatch.setenv("SCWO_NP_EMBEDDING_CACHE", str(folder / "embeddings.sqlite"))
    folder.chmod(0o500)
    try:
        with pytest.warns(RuntimeWarning, match="embedding without it"):
            assert len(select_texts(texts, question, 400, embedder=Model()))
    finally:
        folder.chmod(0o700)


def test_a_write_that_fails_warns_once_and_the_call_succeeds(tmp_path, paragraphs):
    """Another process holds the write lock past the timeout: vectors are computed, not cached, no crash."""
    texts, _ = paragraphs
    path = tmp_path / "busy.sqlite"
    EmbeddingCache(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # a writer that does not finish
    try:
        cache = EmbeddingCache(path, timeout=0.2, on_error="warn")
        model = Model()
        with pytest.warns(RuntimeWarning, match="could not be written"):
            V = CachedEmbedder(model, cache)(texts[:10])
        np.testing.assert_array_equal(V, embed_texts(Model(), texts[:10]))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            CachedEmbedder(model, cache)(texts[10:20])  # no more writes tried, no more warnings
        strict = EmbeddingCache(path, timeout=0.2)  # the default: an explicit cache's errors are raised
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            strict.embed(model, ["x"])
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def _client(path, start, n):
    """One process of several sharing the user cache (as two MCP servers would)."""
    os.environ["SCWO_NP_EMBEDDING_CACHE"] = path
    os.environ["SCWO_NP_EMBEDDING_CACHE_MB"] = "0.25"  # small: evictions run while others write
    for k in range(0, n, 25):
        embed_texts(as_embedder(Model(d=384)), [f"paragraph {start + k + i}" for i in range(25)] + ["shared"])


def test_concurrent_processes_never_corrupt_the_file(tmp_path):
    path = str(tmp_path / "shared" / "embeddings.sqlite")
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_client, args=(path, s, 300)) for s in (0, 150, 1000)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    with EmbeddingCache(path) as cache:
        texts = [f"paragraph {i}" for i in range(1300)] + ["shared"]
        got = cache.get(Model.name, texts)
        present = [(t, v) for t, v in zip(texts, got, strict=True) if v is not None]
        assert present and cache.size_bytes <= 0.25 * 2**20 + 64 * 1024
        want = embed_texts(Model(d=384), [t for t, _ in present])
        np.testing.assert_array_equal(np.stack([v for _, v in present]), want)  # each text its own vector


def test_bad_cache_arguments_are_named(paragraphs):
    texts, question = paragraphs
    with pytest.raises(TypeError, match="cache must be None"):
        as_embedder(Model(), cache=3)
    with pytest.raises(TypeError, match="cache must be None"):
        select_texts(texts, question, 100, cache=[1])
    with pytest.raises(TypeError, match="cache must be an EmbeddingCache"):
        CachedEmbedder(Model(), "file.sqlite")
    with pytest.raises(ValueError, match="on_error must be one of"):
        EmbeddingCache(":memory:", on_error="ignore")
    with pytest.raises(ValueError, match="max_bytes must be"):
        EmbeddingCache(":memory:", max_bytes=0)


# --- the real model ---------------------------------------------------------------------------


@pytest.mark.integration
def test_minilm_is_loaded_once_and_cached_by_name(user_cache, paragraphs):
    pytest.importorskip("sentence_transformers")
    from scwo_np.embed import MiniLMEmbedder
    from scwo_np.embed._minilm import _model

    texts, question = paragraphs
    a, b = as_embedder("minilm"), as_embedder("minilm")
    assert (
        isinstance(a, CachedEmbedder)
        and isinstance(a.embedder, MiniLMEmbedder)
        and a.name == "all-MiniLM-L6-v2"
    )
    first = select_texts(texts, question, 500, embedder="minilm")
    model = _model("cpu")
    assert _model("cpu") is model  # one SentenceTransformer per process, whatever as_embedder returns
    n = _rows(user_cache)
    assert n == len(set(texts)) + 1
    second = select_texts(texts, question, 500, embedder="minilm")
    assert _rows(user_cache) == n and second.context == first.context and _model("cpu") is model
    np.testing.assert_allclose(embed_texts(b, texts[:5]), MiniLMEmbedder()(texts[:5]), atol=1e-5)
    assert select_texts(texts, question, 500, embedder="minilm", cache=False).context == first.context
