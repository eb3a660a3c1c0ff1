"""LSAEmbedder on real text (the bundled Python-docs sample)."""

import numpy as np
import pytest

from scwo_np import load_sample, mmr_select
from scwo_np.embed import EmbeddingCache, LSAEmbedder


@pytest.fixture(scope="module")
def sample():
    s = load_sample()
    return s, list(s.texts[:400])


def test_same_corpus_same_bits_and_name(sample):
    _, texts = sample
    a, b = LSAEmbedder(texts, dim=32), LSAEmbedder(texts, dim=32)
    assert a.name == b.name
    np.testing.assert_array_equal(a(texts[:50]), b(texts[:50]))
    c = LSAEmbedder(texts[:-1], dim=32)
    assert c.name != a.name  # another fit, another cache key
    assert LSAEmbedder(texts, dim=32, seed=1).name != a.name


def test_vectors_are_unit_float32_and_unknown_words_get_a_direction(sample):
    _, texts = sample
    lsa = LSAEmbedder(texts, dim=16)
    V = lsa(texts[:20] + ["zzqx wwvv"])
    assert V.shape == (21, 16) and V.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(V, axis=1), 1.0, rtol=1e-5)
    assert lsa([]).shape == (0, 16)


def test_it_finds_the_queried_module_far_more_often_than_chance(sample):
    s, _ = sample
    lsa = LSAEmbedder(list(s.texts) + list(s.queries), dim=128)
    E, Q = lsa(s.texts), lsa(s.queries)
    src = np.array(s.sources)
    hits = 0
    for qi in range(0, 32, 4):
        cand = np.argsort(-(E @ Q[qi]), kind="stable")[:50]
        p = mmr_select(np.ascontiguousarray(E[cand]), Q[qi], s.costs[cand], 400)
        hits += (src[cand[p]] == s.query_sources[qi]).any()
    assert hits >= 6  # of 8; random vectors hit about 1 in 8


def test_cache_keys_follow_the_fit(sample, tmp_path):
    _, texts = sample
    with EmbeddingCache(tmp_path / "c.sqlite") as cache:
        a = cache.embed(LSAEmbedder(texts, dim=8), texts[:5])
        b = cache.embed(LSAEmbedder(texts[:200], dim=8), texts[:5])
        assert len(cache) == 10 and not np.array_equal(a, b)


def test_bad_corpus():
    with pytest.raises(ValueError, match="at least 2"):
        LSAEmbedder(["only one"])
    with pytest.raises(ValueError, match="no words"):
        LSAEmbedder(["!!", "??"])
    with pytest.raises(ValueError, match="distinct words"):
        LSAEmbedder(["the", "the"])
    with pytest.raises(TypeError, match="wrap it in a list"):
        LSAEmbedder("a corpus")
    with pytest.raises(ValueError, match="dim"):
        LSAEmbedder(["a b", "c d"], dim=0)
