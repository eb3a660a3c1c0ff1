import itertools
import json
from difflib import SequenceMatcher
from pathlib import Path

import naive
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scwo_np.dedup import (
    DEDUP_GROUPINGS,
    DEDUP_METHODS,
    cosine_pairs,
    deduplicate,
    jaccard_pairs,
    lsh_params,
    minhash_pairs,
    sequence_pairs,
)
from scwo_np.text import word_sets

#: The plain reference of each grouping.
REFERENCE = {"greedy": naive.dedup, "components": naive.dedup_components}

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


def _check(texts, scores, threshold, grouping):
    got = deduplicate(texts, threshold=threshold, scores=scores, grouping=grouping)
    want = REFERENCE[grouping](texts, lambda i, j: naive.jaccard(texts[i], texts[j]), threshold, scores)
    assert got.keep.tolist() == want[0]
    assert got.dropped.tolist() == want[1]
    assert got.duplicate_of.tolist() == want[2]
    np.testing.assert_array_equal(got.similarity, np.array(want[3], dtype=np.float64))
    assert got.keep.dtype == np.int64 and got.similarity.dtype == np.float64


@pytest.mark.parametrize("grouping", list(DEDUP_GROUPINGS))
@given(corpus=corpora(), threshold=st.sampled_from([0.0, 0.3, 0.5, 0.9, 1.0]) | st.floats(0, 1))
def test_jaccard_dedup_equals_reference(corpus, threshold, grouping):
    _check(*corpus, threshold, grouping)


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
    r = deduplicate(texts, threshold=0.5, scores=scores)
    perm = rng.permutation(60)
    r2 = deduplicate([texts[i] for i in perm], threshold=0.5, scores=scores[perm])
    assert sorted(perm[r2.keep].tolist()) == r.keep.tolist()


def test_unicode_texts():
    texts = [
        "Café au lait à Paris",
        "CAFÉ AU LAIT À PARIS",
        "東京 タワー は 高い です",
        "東京 タワー は 高い です 😀😀😀",
    ]
    r = deduplicate(texts, threshold=0.9)
    assert r.keep.tolist() == [0, 2, 3]  # case-folded accents match; CJK tokens are words
    assert r.dropped.tolist() == [1]


def test_empty_and_defaults():
    r = deduplicate([])
    assert r.keep.size == 0 and r.dropped.size == 0
    assert DEDUP_METHODS["jaccard"] == 0.9
    # No words longer than two characters: never near-duplicates, only identical texts are.
    r = deduplicate(["a b", "c d", "a b"], threshold=0.5)
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
        deduplicate(**args)


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


@pytest.mark.parametrize("grouping", list(DEDUP_GROUPINGS))
@given(
    E=embedding_sets(),
    t=st.sampled_from([0.0, 0.5, 0.9, 1.0]),
    seed=st.none() | st.integers(0, 2**31 - 1),
)
def test_cosine_dedup_equals_reference(E, t, seed, grouping):
    if grouping == "components" and t == 0.0:
        t = 0.5  # components join everything at 0 (a star), negative cosines included
    n = E.shape[0]
    scores = None if seed is None else np.random.default_rng(seed).integers(0, 3, n).astype(float)
    got = deduplicate(embeddings=E, method="cosine", threshold=t, scores=scores, grouping=grouping)
    keys = [tuple((E[i] + 0.0).tolist()) for i in range(n)]
    dt = E.dtype
    want = REFERENCE[grouping](keys, lambda i, j: naive.cosine(E[i], E[j], dt), t, scores)
    assert got.keep.tolist() == want[0]
    assert got.dropped.tolist() == want[1]
    assert got.duplicate_of.tolist() == want[2]
    np.testing.assert_array_equal(got.similarity, np.array(want[3], dtype=np.float64))


def test_cosine_needs_embeddings_and_matching_texts():
    with pytest.raises(ValueError, match="needs embeddings"):
        deduplicate(["a"], method="cosine")
    with pytest.raises(ValueError, match="texts has 1 items but embeddings has 2 rows"):
        deduplicate(["a"], embeddings=np.eye(2), method="cosine")
    with pytest.raises(ValueError, match="zero vector"):
        deduplicate(embeddings=np.array([[1.0, 0.0], [0.0, 0.0]]), method="cosine")
    with pytest.raises(ValueError, match="needs texts"):
        deduplicate(embeddings=np.eye(2))


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
    for _ in range(
        draw(st.integers(0, 2)) if texts else 0
    ):  # exact copies, anywhere: classes that interleave
        copy = texts[draw(st.integers(0, len(texts) - 1))]
        texts.insert(draw(st.integers(0, len(texts))), copy)
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


@pytest.mark.parametrize("grouping", list(DEDUP_GROUPINGS))
@given(
    corpus=sequence_corpora(),
    t=st.sampled_from([0.0, 0.5, 0.7, 0.9]),
    seed=st.none() | st.integers(0, 2**31 - 1),
)
def test_sequence_dedup_equals_reference(corpus, t, seed, grouping):
    texts, ents = corpus
    scores = None if seed is None else np.random.default_rng(seed).integers(0, 3, len(texts)).astype(float)
    got = deduplicate(texts, method="sequence", threshold=t, scores=scores, entities=ents, grouping=grouping)

    def sim(i, j):
        e = (None, None) if ents is None else (ents[j], ents[i])
        return naive.sequence_similarity(texts[j], texts[i], *e)

    # Greedy: identical means the same text and the same entities (the similarity is then 1.0).
    keys = (
        texts
        if ents is None or grouping == "components"
        else [(x, frozenset(e)) for x, e in zip(texts, ents, strict=True)]
    )
    want = REFERENCE[grouping](keys, sim, t, scores)
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
    r = deduplicate(texts, method="sequence", scores=[0.9, 0.8, 0.7], entities=ents)
    assert r.keep.tolist() == [0, 2] and r.dropped.tolist() == [1] and r.duplicate_of.tolist() == [0]
    # The spec's formula on the raw text stays below its own threshold (0.692 < 0.7).
    raw = deduplicate(texts, method="sequence", scores=[0.9, 0.8, 0.7], entities=ents, lowercase=False)
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
    exact = deduplicate(texts, method="jaccard", threshold=0.85)
    mh = deduplicate(texts, method="minhash", threshold=0.85)
    assert set(mh.dropped.tolist()) <= set(exact.dropped.tolist())
    # Each near-copy is found with probability 1 - (1 - s^r)^b (s = 38/42): within 3 sigma of it.
    b, r = lsh_params(0.85, 128, 0.9)
    p = 1 - (1 - (38 / 42) ** r) ** b
    assert len(exact.dropped) == 100
    assert abs(len(mh.dropped) / 100 - p) <= 3 * np.sqrt(p * (1 - p) / 100) + 0.01
    again = deduplicate(texts, method="minhash", threshold=0.85, seed=0)  # deterministic for a seed
    assert all(np.array_equal(x, y) for x, y in zip(again, mh, strict=True))


@pytest.mark.parametrize("grouping", list(DEDUP_GROUPINGS))
@pytest.mark.parametrize(
    "texts, scores, t",
    [
        # Found by hypothesis: 0 and 7 are identical, and 6 lies between them.  difflib's ratio is
        # asymmetric (the later text is ``a``): (6, 7) is 0.381, (0, 6) is 0.667.
        (["on the the", "", "", "", "", "", "the cat the", "on the the"], [0, 0, 0, 0, 0, 0, 0, 0.5], 0.0),
        (["on the the", "", "", "", "", "", "the cat the", "on the the"], [0, 0, 0, 0, 0, 0, 0, 0.5], 0.5),
        # (0, 1) is 0.381 < 0.5 but (1, 2) is 0.667: 2, a copy of 0 after 1, must drop 1.
        (["the cat the", "on the the", "the cat the"], [0, 0, 1], 0.5),
        (["the cat the", "on the the", "the cat the"], None, 0.5),
    ],
)
def test_sequence_class_members_are_compared_in_their_own_order(texts, scores, t, grouping):
    """Identical texts share one class, but a member on the other side of a third item than the
    class's first is compared in its own order: the similarity reported is the pair's own."""

    def sim(i, j):
        return SequenceMatcher(None, texts[j].lower(), texts[i].lower()).ratio()

    got = deduplicate(texts, method="sequence", threshold=t, scores=scores, grouping=grouping)
    want = REFERENCE[grouping](texts, sim, t, scores)
    assert got.keep.tolist() == want[0] and got.dropped.tolist() == want[1]
    assert got.duplicate_of.tolist() == want[2]
    np.testing.assert_array_equal(got.similarity, np.array(want[3], dtype=np.float64))


def test_sequence_reported_similarity_is_the_pairs_own():
    texts = ["on the the", "", "", "", "", "", "the cat the", "on the the"]
    r = deduplicate(texts, method="sequence", threshold=0.0, scores=[0, 0, 0, 0, 0, 0, 0, 0.5])
    assert r.keep.tolist() == [7] and r.duplicate_of[-1] == 7
    assert r.similarity[-1] == SequenceMatcher(None, "on the the", "the cat the").ratio() == 8 / 21
    # At 0.5, 6 is not a duplicate of the kept 7 (0.381), though it is one of 7's copy 0 (0.667).
    r = deduplicate(texts, method="sequence", threshold=0.5, scores=[0, 0, 0, 0, 0, 0, 0, 0.5])
    assert r.keep.tolist() == [1, 6, 7]
    # Two kept items never reach the threshold: 1 is dropped against 2 (a later copy of 0).
    r = deduplicate(
        ["the cat the", "on the the", "the cat the"], method="sequence", threshold=0.5, scores=[0, 0, 1]
    )
    assert r.keep.tolist() == [2] and r.duplicate_of.tolist() == [2, 2]
    assert r.similarity.tolist() == [1.0, SequenceMatcher(None, "the cat the", "on the the").ratio()]


def test_same_text_with_other_entities_still_links_third_items():
    # c1 has c0's text but c2's entities: c0-c1 identical, c1-c2 similar, c0-c2 not: one group.
    texts = ["AI", "AI", "AI!"]
    ents = [[], ["AI"], ["AI"]]
    r = deduplicate(texts, method="sequence", entities=ents)
    assert r.keep.tolist() == [0] and r.dropped.tolist() == [1, 2]


@pytest.mark.parametrize("method", sorted(DEDUP_METHODS))
def test_every_registered_method_merges_copies_and_keeps_the_best(method):
    """The generic contract every method in the registry must meet (a new method is covered here)."""
    texts = ["alpha beta gamma delta epsilon", "zeta eta theta iota kappa", "alpha beta gamma delta epsilon"]
    E = np.array([[1.0, 0.0, 0.2], [0.0, 1.0, 0.0], [1.0, 0.0, 0.2]])
    kw = {"embeddings": E} if method == "cosine" else {"texts": texts}
    r = deduplicate(method=method, scores=[0.2, 0.5, 0.9], **kw)
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


# --------------------------------------------------------------------------
# Greedy grouping: the promises, for every registered method
# --------------------------------------------------------------------------


def _true_sim(method, texts, E):
    """The method's exact similarity of items i < j (identical items: 1.0)."""
    if method == "cosine":
        keys = [tuple((E[i] + 0.0).tolist()) for i in range(E.shape[0])]
        return keys, lambda i, j: naive.cosine(E[i], E[j], E.dtype)
    if method == "sequence":
        return texts, lambda i, j: naive.sequence_similarity(texts[j], texts[i])
    return texts, lambda i, j: naive.jaccard(texts[i], texts[j])


@st.composite
def method_inputs(draw):
    texts, scores = draw(corpora(max_n=14))
    n = len(texts)
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    E = rng.standard_normal((n, 3))
    for i in range(1, n):  # copies and near-copies of earlier rows
        kind = draw(st.sampled_from(["fresh", "copy", "near"]))
        if kind != "fresh":
            j = draw(st.integers(0, i - 1))
            E[i] = E[j] + (0.0 if kind == "copy" else 0.2) * rng.standard_normal(3)
    return texts, E, scores


@pytest.mark.parametrize("method", list(DEDUP_METHODS))
@given(data=method_inputs(), t=st.sampled_from([0.0, 0.3, 0.5, 0.7, 0.9, 1.0]) | st.floats(0, 1))
def test_greedy_never_drops_below_the_threshold_against_a_kept_item(method, data, t):
    texts, E, scores = data
    kw = {"embeddings": E} if method == "cosine" else {"texts": texts}
    r = deduplicate(method=method, threshold=t, scores=scores, **kw)
    n = E.shape[0]
    keys, sim = _true_sim(method, texts, E)
    assert sorted(r.keep.tolist() + r.dropped.tolist()) == list(range(n))
    kept = set(r.keep.tolist())
    sc = np.zeros(n) if scores is None else np.asarray(scores)
    for d, k, s in zip(r.dropped.tolist(), r.duplicate_of.tolist(), r.similarity.tolist(), strict=True):
        assert k in kept  # dropped only against a kept item ...
        true = 1.0 if keys[d] == keys[k] else sim(min(d, k), max(d, k))
        assert s == true and s >= t  # ... at or above the threshold, the similarity reported
        assert (sc[k], -k) > (sc[d], -d)  # ... that came before it, best first
    if method != "minhash":  # exact pairs: no two kept items reach the threshold
        for i, j in itertools.combinations(sorted(kept), 2):
            assert keys[i] != keys[j] and sim(i, j) < t


@given(corpus=corpora(max_n=20), t=st.sampled_from([0.3, 0.5, 0.8, 0.9]), seed=st.integers(0, 3))
def test_minhash_greedy_is_exact_on_the_pairs_it_reports(corpus, t, seed):
    """LSH may miss pairs; on the pairs it reports (plus identical texts) greedy is exact."""
    texts, scores = corpus
    ws, _ = word_sets(texts)
    reported = {}
    # dedup runs LSH on the first copy of each distinct text: the same pairs, mapped back.
    first = {}
    u = [first.setdefault(x, i) for i, x in enumerate(texts)]
    u_idx = sorted(set(u))
    a, b, s = minhash_pairs(ws.take(np.asarray(u_idx, np.int64)), t, num_perm=32, seed=seed)
    for i, j, x in zip(a.tolist(), b.tolist(), s.tolist(), strict=True):
        reported[(u_idx[i], u_idx[j])] = x

    def sim(i, j):
        return reported.get((u[i], u[j]), reported.get((u[j], u[i]), -1.0))

    got = deduplicate(texts, method="minhash", threshold=t, scores=scores, num_perm=32, seed=seed)
    want = naive.dedup(texts, sim, t, scores)
    assert got.keep.tolist() == want[0] and got.dropped.tolist() == want[1]
    assert got.duplicate_of.tolist() == want[2] and got.similarity.tolist() == want[3]


@pytest.mark.parametrize("method", list(DEDUP_METHODS))
@pytest.mark.parametrize(
    "texts, scores, keep, dropped, duplicate_of",
    [
        ([], None, [], [], []),
        (["alpha beta gamma"], None, [0], [], []),
        (["alpha beta gamma"] * 4, None, [0], [1, 2, 3], [0, 0, 0]),  # all identical
        (["alpha beta gamma"] * 4, [0.1, 0.9, 0.9, 0.5], [1], [0, 2, 3], [1, 1, 1]),  # ties: lowest index
        (["alpha beta gamma", "delta epsilon zeta", "alpha beta gamma"], [1.0, 1.0, 2.0], [1, 2], [0], [2]),
        (["alpha beta gamma", "delta epsilon zeta"], [1.0, 1.0], [0, 1], [], []),
    ],
)
def test_greedy_edge_cases(method, texts, scores, keep, dropped, duplicate_of):
    vec = {"alpha beta gamma": [1.0, 0.0], "delta epsilon zeta": [0.0, 1.0]}
    E = np.array([vec[x] for x in texts]).reshape(len(texts), 2)
    kw = {"embeddings": E} if method == "cosine" else {"texts": texts}
    r = deduplicate(method=method, scores=scores, **kw)
    assert r.keep.tolist() == keep and r.dropped.tolist() == dropped
    assert r.duplicate_of.tolist() == duplicate_of and r.similarity.tolist() == [1.0] * len(dropped)


def test_a_chain_is_not_a_group():
    """b is close to a and to c, which are far apart: greedy keeps a and c, components drop c."""
    texts = [
        "one two three four five six seven eight nine ten",
        "one two three four five six seven eight nine eleven",
        "one two three four five six seven eight twelve eleven",
    ]
    # Jaccard(a, b) = 9/11, (b, c) = 9/11, (a, c) = 8/12.
    r = deduplicate(texts, threshold=0.8)
    assert r.keep.tolist() == [0, 2] and r.dropped.tolist() == [1] and r.duplicate_of.tolist() == [0]
    c = deduplicate(texts, threshold=0.8, grouping="components")
    assert c.keep.tolist() == [0] and c.dropped.tolist() == [1, 2]
    assert c.similarity[1] < 0.8  # the chain's casualty, below the threshold
    # The best item is kept first, whatever its position: b first keeps only b.
    r = deduplicate(texts, threshold=0.8, scores=[0.0, 1.0, 0.0])
    assert r.keep.tolist() == [1] and r.duplicate_of.tolist() == [1, 1]


def test_bad_grouping():
    with pytest.raises(ValueError, match="grouping must be one of 'greedy', 'components'"):
        deduplicate(["a"], grouping="chain")


# --------------------------------------------------------------------------
# Real data: Debian changelog entries (tests/dedup/data/build_changelogs.py)
# --------------------------------------------------------------------------

CHANGELOGS = Path(__file__).parent / "data" / "debian_changelog_entries.jsonl"


def _changelogs(split):
    rows = [json.loads(x) for x in CHANGELOGS.read_text(encoding="utf-8").splitlines()]
    return [r for r in rows if r["split"] == split]


def _words(t):
    return {w for w in t.lower().split() if len(w) > 2}


@pytest.mark.volume
@pytest.mark.parametrize("split", ["tune", "held_out"])
@pytest.mark.parametrize("method", list(DEDUP_METHODS))
def test_no_drop_below_the_threshold_on_real_changelogs(method, split):
    """300 entries from ~100 packages; similarities recomputed here, independently of the fast path."""
    rows = _changelogs(split)
    texts = [r["text"] for r in rows]
    t = 0.5 if method in ("jaccard", "minhash") else DEDUP_METHODS[method]  # 0.9: no pairs at all
    kw = {"embeddings": _lsa(texts)} if method == "cosine" else {"texts": texts}
    r = deduplicate(method=method, threshold=t, **kw)
    assert len(r.dropped) > 0
    keep = set(r.keep.tolist())
    for d, k in zip(r.dropped.tolist(), r.duplicate_of.tolist(), strict=True):
        lo, hi = min(d, k), max(d, k)
        assert k in keep
        if texts[d] == texts[k]:
            continue
        if method == "sequence":
            s = SequenceMatcher(None, texts[hi].lower(), texts[lo].lower()).ratio()
        elif method == "cosine":
            E = kw["embeddings"]
            s = float(E[lo] @ E[hi] / np.linalg.norm(E[lo]) / np.linalg.norm(E[hi]))
        else:
            a, b = _words(texts[lo]), _words(texts[hi])
            s = len(a & b) / len(a | b)
        assert s >= t - 1e-6
    if method == "sequence":  # what the user saw: components drop entries far below 0.7
        c = deduplicate(texts, method="sequence", grouping="components")
        assert (c.similarity < 0.7).sum() >= 5
        assert len(c.dropped) > len(r.dropped)


def _lsa(texts):
    from scwo_np.embed import as_embedder, embed_texts

    return embed_texts(as_embedder("lsa", texts), texts)


@pytest.mark.parametrize("method", list(DEDUP_METHODS))
def test_progress_counts_up_to_the_items(method):
    """``progress(done, total)``: as the sequence method's pairwise pass goes (chunks past 256
    texts), and once at the end for every method; what is found is the same as without it."""
    from scwo_np.datasets import load_sample

    s = load_sample()
    texts = s.texts[:300]
    kw = {"embeddings": s.embeddings[:300]} if method == "cosine" else {}
    calls = []
    got = deduplicate(texts, method=method, progress=lambda d, t: calls.append((d, t)), **kw)
    want = deduplicate(texts, method=method, **kw)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(a, b)
    assert calls[-1] == (300, 300) and all(t == 300 for _, t in calls)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    if method == "sequence":
        assert len(calls) > 10 and calls[0][0] < 300
    with pytest.raises(TypeError, match="progress must be a callable"):
        deduplicate(texts, method=method, progress=1, **kw)
