import itertools

import naive
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scwo_np.dedup import (
    DEDUP_METHODS,
    cosine_pairs,
    dedup,
    jaccard_pairs,
    lsh_params,
    minhash_pairs,
    sequence_pairs,
)
from scwo_np.text import word_sets

#: A tiny vocabulary so that random texts share words, repeat and nearly repeat;
#: short words (dropped by the ADR's filter), case, accents, CJK and emoji included.
VOCAB = [
    "the",
    "cat",
    "Cat",
    "sat",
    "mat",
    "on",
    "a",
    "dog",
    "dogs",
    "café",
    "CAFÉ",
    "東京",
    "😀😀😀",
    "naïve",
]


@st.composite
def corpora(draw, max_n=12):
    base = draw(st.lists(st.lists(st.sampled_from(VOCAB), max_size=7), min_size=0, max_size=max_n))
    texts = [" ".join(ws) for ws in base]
    # Exact repeats and whitespace variants.
    if texts and draw(st.booleans()):
        texts.append(texts[draw(st.integers(0, len(texts) - 1))])
    if texts and draw(st.booleans()):
        texts.append("  " + texts[0].replace(" ", "\n") + " ")
    scores = draw(
        st.none() | st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=len(texts), max_size=len(texts))
    )
    return texts, scores


def _check(texts, scores, threshold, method="jaccard"):
    got = dedup(texts, method=method, threshold=threshold, scores=scores)
    want = naive.dedup(texts, lambda i, j: naive.jaccard(texts[i], texts[j]), threshold, scores)
    assert got.keep.tolist() == want[0]
    assert got.dropped.tolist() == want[1]
    assert got.duplicate_of.tolist() == want[2]
    np.testing.assert_array_equal(got.similarity, np.array(want[3], dtype=np.float64))
    assert got.keep.dtype == np.int64 and got.similarity.dtype == np.float64


@given(corpora(), st.sampled_from([0.0, 0.3, 0.5, 0.9, 1.0]) | st.floats(0, 1))
def test_jaccard_dedup_equals_reference(corpus, threshold):
    _check(*corpus, threshold)


@given(st.lists(st.lists(st.integers(0, 30), max_size=12, unique=True), max_size=15), st.floats(0, 1))
def test_jaccard_pairs_equals_all_pairs(sets, t):
    texts = [" ".join(f"w{x:03d}" for x in s) for s in sets]
    ws, _ = word_sets(texts)
    a, b, s = jaccard_pairs(ws, t)
    want = [
        (i, j, naive.jaccard(texts[i], texts[j]))
        for i, j in itertools.combinations(range(len(texts)), 2)
        if naive.jaccard(texts[i], texts[j]) >= t
    ]
    assert list(zip(a.tolist(), b.tolist(), s.tolist(), strict=True)) == want


def test_kept_set_does_not_depend_on_input_order():
    rng = np.random.default_rng(3)
    texts = [" ".join(rng.choice(["alpha", "beta", "gamma", "delta", "omega"], 6)) for _ in range(60)]
    scores = rng.permutation(60).astype(float)
    r = dedup(texts, threshold=0.5, scores=scores)
    perm = rng.permutation(60)
    r2 = dedup([texts[i] for i in perm], threshold=0.5, scores=scores[perm])
    assert sorted(perm[r2.keep].tolist()) == r.keep.tolist()


def test_unicode_texts():
    texts = [
        "Café au lait à Paris",
        "CAFÉ AU LAIT À PARIS",
        "東京 タワー は 高い です",
        "東京 タワー は 高い です 😀😀😀",
    ]
    r = dedup(texts, threshold=0.9)
    assert r.keep.tolist() == [0, 2, 3]  # case-folded accents match; CJK tokens are words
    assert r.dropped.tolist() == [1]


def test_empty_and_defaults():
    r = dedup([])
    assert r.keep.size == 0 and r.dropped.size == 0
    assert DEDUP_METHODS["jaccard"] == 0.9
    # No words longer than two characters: never near-duplicates, only identical texts are.
    r = dedup(["a b", "c d", "a b"], threshold=0.5)
    assert r.keep.tolist() == [0, 1] and r.dropped.tolist() == [2]


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"threshold": 1.5}, ValueError, r"threshold must be in \[0, 1\]"),
        ({"threshold": float("nan")}, ValueError, r"threshold must be in \[0, 1\]"),
        ({"scores": [1.0, float("nan")]}, ValueError, r"scores\[1\] is NaN"),
        ({"scores": [1.0]}, ValueError, r"shape \(2,\)"),
        ({"method": "fuzzy"}, ValueError, "method must be one of"),
        ({"texts": ["ok", 3]}, TypeError, r"texts\[1\] is int"),
        ({"texts": "one string"}, TypeError, "not one string"),
    ],
)
def test_bad_input(kwargs, exc, match):
    args = {"texts": ["some words here", "other words there"], **kwargs}
    with pytest.raises(exc, match=match):
        dedup(**args)


@st.composite
def embedding_sets(draw):
    """Rows with exact copies, near-copies and sign-flipped zeros; d small or >= 32 (bound path)."""
    n = draw(st.integers(0, 14))
    d = draw(st.sampled_from([2, 5, 40]))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    E = rng.standard_normal((n, d)).astype(dtype)
    for i in range(1, n):
        kind = draw(st.sampled_from(["fresh", "copy", "near", "negzero"]))
        j = draw(st.integers(0, i - 1))
        if kind == "copy":
            E[i] = E[j]
        elif kind == "near":
            E[i] = E[j] + dtype(draw(st.sampled_from([0.01, 0.1, 0.3]))) * rng.standard_normal(d).astype(
                dtype
            )
        elif kind == "negzero":
            E[i] = E[j]
            E[i, 0] = -0.0 if E[j, 0] == 0 else E[i, 0]
    return E


@given(
    embedding_sets(),
    st.sampled_from([0.0, 0.5, 0.9, 0.99, 1.0]) | st.floats(0, 1),
    st.sampled_from([2, 3, 2048]),
)
def test_cosine_pairs_equals_all_pairs(E, t, block):
    a, b, s = cosine_pairs(E, t, block=block)
    dt = E.dtype
    want = [
        (i, j, naive.cosine(E[i], E[j], dt))
        for i, j in itertools.combinations(range(E.shape[0]), 2)
        if naive.cosine(E[i], E[j], dt) >= t
    ]
    assert list(zip(a.tolist(), b.tolist(), s.tolist(), strict=True)) == want


@given(embedding_sets(), st.sampled_from([0.5, 0.9, 1.0]), st.none() | st.integers(0, 2**31 - 1))
def test_cosine_dedup_equals_reference(E, t, seed):
    n = E.shape[0]
    scores = None if seed is None else np.random.default_rng(seed).integers(0, 3, n).astype(float)
    got = dedup(embeddings=E, method="cosine", threshold=t, scores=scores)
    keys = [tuple((E[i] + 0.0).tolist()) for i in range(n)]
    dt = E.dtype
    want = naive.dedup(keys, lambda i, j: naive.cosine(E[i], E[j], dt), t, scores)
    assert got.keep.tolist() == want[0]
    assert got.dropped.tolist() == want[1]
    assert got.duplicate_of.tolist() == want[2]
    np.testing.assert_array_equal(got.similarity, np.array(want[3], dtype=np.float64))


def test_cosine_needs_embeddings_and_matching_texts():
    with pytest.raises(ValueError, match="needs embeddings"):
        dedup(["a"], method="cosine")
    with pytest.raises(ValueError, match="texts has 1 items but embeddings has 2 rows"):
        dedup(["a"], embeddings=np.eye(2), method="cosine")
    with pytest.raises(ValueError, match="zero vector"):
        dedup(embeddings=np.array([[1.0, 0.0], [0.0, 0.0]]), method="cosine")
    with pytest.raises(ValueError, match="needs texts"):
        dedup(embeddings=np.eye(2))


LETTERS = st.sampled_from(list("aab bccdE é東😀 ") + ["the ", "cat ", "sat "])


@st.composite
def sequence_corpora(draw, max_n=8):
    n = draw(st.integers(0, max_n))
    texts = []
    for _ in range(n):
        if texts and draw(st.booleans()):  # an edit of an earlier text
            base = texts[draw(st.integers(0, len(texts) - 1))]
            k = draw(st.integers(0, len(base)))
            texts.append(base[:k] + "".join(draw(st.lists(LETTERS, max_size=2))) + base[k + 1 :])
        else:
            texts.append("".join(draw(st.lists(LETTERS, max_size=40))))
    if texts and draw(st.booleans()):  # long enough for difflib's autojunk (>= 200 characters)
        texts.append(texts[0] * (1 + 200 // max(len(texts[0]), 1)))
        texts.append(texts[-1][:-3] + "xyz")
    ents = draw(
        st.none() | st.just([draw(st.lists(st.sampled_from(["AI", "ML", "x"]), max_size=2)) for _ in texts])
    )
    return texts, ents


@given(sequence_corpora(), st.sampled_from([0.0, 0.5, 0.7, 0.9, 1.0]) | st.floats(0, 1), st.booleans())
def test_sequence_pairs_equal_difflib(corpus, t, lowercase):
    texts, ents = corpus
    a, b, s = sequence_pairs(texts, t, entities=ents, lowercase=lowercase)
    want = []
    for i, j in itertools.combinations(range(len(texts)), 2):
        e = (None, None) if ents is None else (ents[j], ents[i])
        sim = naive.sequence_similarity(texts[j], texts[i], *e, lowercase=lowercase)
        if sim >= t:
            want.append((i, j, sim))
    assert list(zip(a.tolist(), b.tolist(), s.tolist(), strict=True)) == want


@given(sequence_corpora(), st.sampled_from([0.5, 0.7, 0.9]), st.none() | st.integers(0, 2**31 - 1))
def test_sequence_dedup_equals_reference(corpus, t, seed):
    texts, ents = corpus
    scores = None if seed is None else np.random.default_rng(seed).integers(0, 3, len(texts)).astype(float)
    got = dedup(texts, method="sequence", threshold=t, scores=scores, entities=ents)

    def sim(i, j):
        e = (None, None) if ents is None else (ents[j], ents[i])
        return naive.sequence_similarity(texts[j], texts[i], *e)

    want = naive.dedup(texts, sim, t, scores)
    assert got.keep.tolist() == want[0]
    assert got.dropped.tolist() == want[1]
    assert got.duplicate_of.tolist() == want[2]
    np.testing.assert_array_equal(got.similarity, np.array(want[3], dtype=np.float64))


def test_morag_spec_example_merges_the_two_healthcare_chunks():
    texts = [
        "AI is transforming healthcare",
        "Artificial intelligence is changing healthcare",
        "Machine learning in finance",
    ]
    ents = [["AI", "healthcare"], ["AI", "healthcare"], ["ML", "finance"]]
    r = dedup(texts, method="sequence", scores=[0.9, 0.8, 0.7], entities=ents)
    assert r.keep.tolist() == [0, 2] and r.dropped.tolist() == [1] and r.duplicate_of.tolist() == [0]
    # The spec's formula on the raw text stays below its own threshold (0.692 < 0.7).
    raw = dedup(texts, method="sequence", scores=[0.9, 0.8, 0.7], entities=ents, lowercase=False)
    assert raw.dropped.size == 0


def _pydoc_texts(k):
    import json
    from importlib import resources

    with resources.files("scwo_np.bundled").joinpath("pydoc_sample.jsonl").open() as fh:
        return [json.loads(line)["text"] for _, line in zip(range(k), fh, strict=False)]


def test_sequence_ratio_equals_difflib_on_real_paragraphs():
    """Real prose of 200+ characters: difflib's autojunk purges the common letters."""
    texts = _pydoc_texts(40)
    texts += [t[: len(t) // 2] + t[len(t) // 2 + 5 :] for t in texts[:10]]  # near-copies
    assert sum(len(t) >= 200 for t in texts) > 20
    a, b, s = sequence_pairs(texts, 0.0, lowercase=False)
    want = [naive.sequence_similarity(texts[j], texts[i], lowercase=False) for i, j in zip(a, b, strict=True)]
    assert a.size == len(texts) * (len(texts) - 1) // 2
    np.testing.assert_array_equal(s, want)


@given(corpora(max_n=20), st.sampled_from([0.5, 0.8, 0.9, 1.0]), st.integers(0, 3))
def test_minhash_finds_only_true_pairs_and_always_identical_sets(corpus, t, seed):
    texts, _ = corpus
    ws, _ = word_sets(texts)
    a, b, s = minhash_pairs(ws, t, num_perm=32, seed=seed)
    for i, j, x in zip(a.tolist(), b.tolist(), s.tolist(), strict=True):
        assert i < j and x == naive.jaccard(texts[i], texts[j]) >= t
    found = set(zip(a.tolist(), b.tolist(), strict=True))
    for i, j in itertools.combinations(range(len(texts)), 2):
        if naive.words(texts[i]) and naive.words(texts[i]) == naive.words(texts[j]):
            assert (i, j) in found  # equal sets have equal signatures: never missed


def test_minhash_recall_on_near_duplicates():
    rng = np.random.default_rng(0)
    vocab = [f"word{k}" for k in range(5000)]
    base = [" ".join(rng.choice(vocab, 40, replace=False)) for _ in range(300)]
    near = [" ".join(t.split()[:-2] + ["extra1", "extra2"]) for t in base[:100]]  # Jaccard 38/42
    texts = base + near
    exact = dedup(texts, method="jaccard", threshold=0.85)
    mh = dedup(texts, method="minhash", threshold=0.85)
    assert set(mh.dropped.tolist()) <= set(exact.dropped.tolist())
    # Each near-copy is found with probability 1 - (1 - s^r)^b (s = 38/42): within 3 sigma of it.
    b, r = lsh_params(0.85, 128, 0.9)
    p = 1 - (1 - (38 / 42) ** r) ** b
    assert len(exact.dropped) == 100
    assert abs(len(mh.dropped) / 100 - p) <= 3 * np.sqrt(p * (1 - p) / 100) + 0.01
    again = dedup(texts, method="minhash", threshold=0.85, seed=0)  # deterministic for a seed
    assert all(np.array_equal(x, y) for x, y in zip(again, mh, strict=True))


def test_same_text_with_other_entities_still_links_third_items():
    # c1 has c0's text but c2's entities: c0-c1 identical, c1-c2 similar, c0-c2 not: one group.
    texts = ["AI", "AI", "AI!"]
    ents = [[], ["AI"], ["AI"]]
    r = dedup(texts, method="sequence", entities=ents)
    assert r.keep.tolist() == [0] and r.dropped.tolist() == [1, 2]


@pytest.mark.parametrize("method", sorted(DEDUP_METHODS))
def test_every_registered_method_merges_copies_and_keeps_the_best(method):
    """The generic contract every method in the registry must meet (a new method is covered here)."""
    texts = ["alpha beta gamma delta epsilon", "zeta eta theta iota kappa", "alpha beta gamma delta epsilon"]
    E = np.array([[1.0, 0.0, 0.2], [0.0, 1.0, 0.0], [1.0, 0.0, 0.2]])
    kw = {"embeddings": E} if method == "cosine" else {"texts": texts}
    r = dedup(method=method, scores=[0.2, 0.5, 0.9], **kw)
    assert r.keep.tolist() == [1, 2] and r.dropped.tolist() == [0]
    assert r.duplicate_of.tolist() == [2] and r.similarity.tolist() == [1.0]


def test_cosine_pairs_survive_a_blas_that_writes_garbage(monkeypatch):
    """Found on aarch64 under QEMU (.ci/aarch64): OpenBLAS's armv9sme sgemm returned NaN and inf
    in a few entries of this very product, and a pair with cosine 0.0099 >= 0 was dropped.
    Here the real matmul runs, then some entries are spoiled and the flag a BLAS raises is set."""
    E = np.array(
        [[0.12573022, -0.13210486], [0.64042264, 0.10490011], [-0.5356694, 0.36159506], [1.304, 0.94708097],
         [-0.70373523, -1.2654215], [-0.62327445, 0.04132598], [-2.3250308, -0.21879166],
         [-1.245911, -0.7322674], [-0.544259, -0.31630015], [0.41163054, 1.0425134], [-0.12853466, 1.3664634],
         [-0.6651947, 0.35151008], [0.90347016, 0.0940123]], dtype=np.float32,
    )  # fmt: skip
    want = cosine_pairs(E, 0.0)
    real = np.matmul

    def spoiled(a, b, out=None):
        S = real(a, b, out=out)
        S[10, 12], S[3, 9], S[0, 1] = np.nan, -np.inf, np.inf
        np.divide(np.zeros(1, np.float32), np.zeros(1, np.float32))  # raises "invalid", as the BLAS did
        return S

    monkeypatch.setattr(np, "matmul", spoiled)
    got = cosine_pairs(E, 0.0)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    assert (10, 12) in set(zip(got[0].tolist(), got[1].tolist(), strict=True))
