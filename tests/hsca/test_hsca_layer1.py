import itertools
import math

import naive
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scwo_np.hsca import ContextSnapshot, WeightedChunk, relational_weights
from scwo_np.hsca.layer1 import STOPWORDS

VOCAB = ["fox", "rabbit", "dawn", "forest", "hunts", "the", "runs", "river", "Fox", "東京", "😀"]


@st.composite
def texts(draw):
    sentences = [
        " ".join(draw(st.lists(st.sampled_from(VOCAB), min_size=0, max_size=9)))
        for _ in range(draw(st.integers(0, 8)))
    ]
    seps = [draw(st.sampled_from([". ", "! ", "\n", "\n\n", "; "])) for _ in sentences]
    return "".join(s + p for s, p in zip(sentences, seps, strict=True))


@given(st.lists(texts(), min_size=1, max_size=5), st.integers(2, 6))
def test_layer1_equals_reference(batch, window):
    r = relational_weights(batch, window=window)
    for text, score in zip(batch, r.scores.tolist(), strict=True):
        assert math.isclose(score, naive.hsca_layer1_score(text, window), abs_tol=1e-12)
        assert 0.0 <= score <= 1.0


@pytest.mark.parametrize(
    "text",
    ["", "   \n\t ", "word", "no punctuation at all in this long run of words " * 3, "spam " * 200_000,
     bytes(range(256)).decode("latin-1"), "Mixed 東京 scripts, emoji 😀😀 and العربية text. Another one! Third?"],
)  # fmt: skip
def test_bad_input_gives_a_valid_score(text):
    r = relational_weights([text])
    assert np.isfinite(r.scores).all() and 0.0 <= r.scores[0] <= 1.0


def test_keyword_stuffing_scores_low_and_mesh_high():
    mesh = (
        "The fox hunts the rabbit at dawn near the river. The rabbit hides from the fox by the river. "
        "At dawn the fox returns to the river and the rabbit runs into the forest."
    )
    stuffed = (
        "Fox cheap deals. Rabbit best offers now. River prices low. Fox sale today. Rabbit discount codes."
    )
    r = relational_weights([mesh, stuffed])
    assert r.scores[0] > 0.35 and r.scores[1] < 0.2  # 0.35: the eval-4 line between mesh and stuffing
    assert "the" in STOPWORDS


def test_the_window_stops_at_sentence_ends():
    # A keyword closing every sentence and a word opening every next one are neighbours
    # only by layout: with windows crossing sentences the pair (keyword, opener) would recur.
    words = iter("".join(w) for w in itertools.product("bcdfgk", "aeiou", "lmnprst"))
    text = " ".join(
        f"{next(words)} {next(words)} keyword. Opener {next(words)} {next(words)}." for _ in range(6)
    )
    assert relational_weights([text]).scores[0] == 0.0
    assert relational_weights([text.replace(". Opener", " opener")]).scores[0] > 0.0


def test_window_must_be_at_least_two():
    with pytest.raises(ValueError, match="window"):
        relational_weights(["a b c"], window=1)


def test_round_trips_and_malformed_from_dict():
    c = WeightedChunk("c1", "text", 0.5, ["physics"], 0.7, ["hedged"], None, created_at=1.0)
    assert WeightedChunk.from_dict(c.to_dict()) == c
    s = ContextSnapshot("s1", [c], 0.5, {"physics": 1.0}, 0, False, created_at=2.0)
    assert ContextSnapshot.from_dict(s.to_dict()) == s
    for bad, match in [
        (
            {"chunk_id": "x", "text": "t", "layer1_score": float("nan"), "coherence_score": 0.5},
            "layer1_score",
        ),
        ({"chunk_id": "x", "text": "t", "layer1_score": 1.5, "coherence_score": 0.5}, r"\[0, 1\]"),
        ({"text": "t", "layer1_score": 0.5, "coherence_score": 0.5}, "missing field 'chunk_id'"),
        ({"chunk_id": 3, "text": "t", "layer1_score": 0.5, "coherence_score": 0.5}, "chunk_id"),
        ([1, 2], "must be a dict"),
    ]:
        with pytest.raises(ValueError, match=match):
            WeightedChunk.from_dict(bad)
    with pytest.raises(ValueError, match="domain_summary"):
        ContextSnapshot.from_dict(
            {"snapshot_id": "s", "macro_weight": 0.5, "domain_summary": {"a": float("inf")}}
        )


@given(
    st.text(
        alphabet=st.sampled_from(list("ab Z'’_9.-,\n\t!?;é")) | st.characters(max_codepoint=127), max_size=60
    )
)
def test_ascii_word_fast_path_equals_the_regex(text):
    from scwo_np.hsca.layer1 import _WORD, _words

    assert _words(text) == _WORD.findall(text)
