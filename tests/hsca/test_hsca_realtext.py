import random
import re

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from scwo_evals.realtext import (
    auc,
    eval6_real_text,
    fragments,
    keyword_stuffed,
    real_texts,
    word_salad,
)
from scwo_np.hsca._background import background, is_association
from scwo_np.hsca._layer1 import relational_weights
from scwo_np.hsca._layer2 import coherence

WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")


def test_background_rows_are_sorted_and_in_range():
    bg = background()
    assert bg.indptr[0] == 0 and bg.indptr[-1] == bg.indices.shape[0] == len(bg.indices)
    assert len(bg.vocab) == bg.indptr.shape[0] - 1
    for a in np.random.default_rng(0).integers(0, len(bg.vocab), 500):
        row = bg.indices[bg.indptr[a] : bg.indptr[a + 1]]
        assert (np.diff(row) > 0).all() and (row < len(bg.vocab)).all()  # binary search needs this


def test_associations_are_ordered_english_collocations():
    assert is_association("supreme", "court") and not is_association("court", "supreme")
    assert is_association("of", "the") and not is_association("the", "of")
    assert not is_association("zorblat", "the")


def test_splits_are_disjoint_and_fixed():
    held = real_texts("held_out")
    tune = real_texts("tune")
    assert len(held) + len(tune) == len(real_texts("all"))
    assert not {r["text"] for r in held} & {r["text"] for r in tune}
    assert all(50 <= len(r["text"].split()) <= 300 for r in held)
    with pytest.raises(ValueError, match="split"):
        real_texts("train")


def test_constructions_keep_the_texts_words():
    text = real_texts("held_out")[0]["text"]
    rng = random.Random(0)
    words = WORD.findall(text)
    assert sorted(w.lower() for w in WORD.findall(word_salad(text, rng))) == sorted(w.lower() for w in words)
    stuffed = WORD.findall(keyword_stuffed(text, rng))
    assert len(stuffed) == len(words)
    assert len({w.lower() for w in stuffed[2::3]}) <= 4
    assert all(len(p.split()) <= 4 for p in fragments(text, rng).split(".") if p.strip())


def test_auc_matches_scikit_learn():
    rng = np.random.default_rng(0)
    pos, neg = rng.integers(0, 5, 30).astype(float), rng.integers(0, 5, 40).astype(float)
    y = np.r_[np.ones(30), np.zeros(40)]
    assert auc(pos, neg) == pytest.approx(roc_auc_score(y, np.r_[pos, neg]))


def test_real_prose_outranks_its_stuffed_and_shuffled_versions():
    # A held-out sample: texts whose split no constant of layer 1 or coherence was tuned on.
    r = eval6_real_text(cases=150, seed=3)
    assert r.passed, r.detail
    assert r.detail["layer1_median_genuine"] >= 0.3
    assert r.detail["coherence_median_genuine"] >= 0.8 >= 0.3 >= r.detail["coherence_median_salad"]
    assert r.detail["coherence_median_fragments"] <= 0.3
    assert r.detail["coherence_median_gibberish"] <= 0.05


def test_layer1_scores_are_one_absolute_scale():
    texts = [r["text"] for r in real_texts("held_out")[:40]]
    alone = [relational_weights([t]).scores[0] for t in texts]
    np.testing.assert_array_equal(relational_weights(texts).scores, alone)  # no batch normalisation


def test_coherence_takes_a_precomputed_layer1_score():
    text = real_texts("held_out")[1]["text"]
    l1 = float(relational_weights([text]).scores[0])
    assert coherence(text) == coherence(text, layer1=l1)
    assert coherence(text, layer1=0.0) == 0.0
