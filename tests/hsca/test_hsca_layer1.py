import itertools
import math

import naive
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scwo_np.hsca import ContextSnapshot, WeightedChunk, relational_weights
from scwo_np.hsca._layer1 import STOPWORDS

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
def test_ascii_token_fast_path_equals_the_regex(text):
    from scwo_np.hsca._layer1 import _MARK, _TOKEN, _tokens

    assert _tokens(text) == [_MARK.get(t, t) for t in _TOKEN.findall(text.replace("’", "'"))]


@given(st.lists(texts(), min_size=1, max_size=5), st.integers(2, 6))
def test_beat_weights_equal_reference(batch, window):
    from scwo_np.hsca._layer1 import beat_weights

    got = beat_weights(batch, window=window)
    np.testing.assert_allclose(got, naive.hsca_beat_weights(batch, window), rtol=0, atol=1e-12)


@given(st.lists(st.integers(0, 6), max_size=80), st.integers(1, 60))
def test_mattr_kernel_equals_reference(words, w):
    from scwo_np.hsca._layer1 import _mattr

    got = _mattr(np.asarray(words, dtype=np.int64), w)
    assert math.isclose(got, naive.mattr(words, w), rel_tol=1e-12)


def test_runs_cut_at_commas_colons_and_sentence_ends_not_at_line_wraps():
    from scwo_np.hsca._layer1 import runs

    text = "The court, in the end:\nheld the\ncontract void. Next one!\n\nNew para"
    assert list(runs(text)) == [
        (0, 0, ["the", "court"]),
        (0, 0, ["in", "the", "end"]),
        (0, 0, ["held", "the", "contract", "void"]),
        (0, 1, ["next", "one"]),
        (1, 2, ["new", "para"]),
    ]


def test_neighbour_links_reward_real_word_order():
    prose = (
        "The patient was admitted to the hospital with severe chest pain. After a series of tests, "
        "the doctors found a blocked artery and performed surgery the same night."
    )
    words = prose.replace(",", "").replace(".", "").split()
    salad = " ".join(sorted(words, key=lambda w: (len(w), w[::-1]))) + "."
    r = relational_weights([prose, salad])
    assert r.scores[0] > 0.5 > 0.25 > r.scores[1]


def test_a_chunks_own_recurring_terms_are_links():
    # Invented terms the background has never seen: linked only because the chunk pairs them again.
    text = "Zorblat quixle failed. Then zorblat quixle recovered. Later zorblat quixle slept."
    assert (
        relational_weights([text]).scores[0] > relational_weights([text.replace("quixle", "q", 1)]).scores[0]
    )


def test_stuffing_lowers_diversity_and_score():
    real = (
        "Cheap flights to Paris are easy to find in winter, when airlines cut prices to fill seats. "
        "Book early, travel midweek and compare several sites before you pay."
    )
    stuffed = " ".join(["Cheap flights Paris deals cheap flights Paris offers cheap flights Paris."] * 3)
    r = relational_weights([real, stuffed])
    assert r.diversity[1] < 0.5 < r.diversity[0] and r.scores[1] < r.scores[0]


def test_short_chunks_are_flagged_not_capped():
    r = relational_weights(["The supreme court of the united states ruled on the case last week."])
    assert r.short[0] and r.scores[0] > 0.5
