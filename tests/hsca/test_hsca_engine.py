import naive
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scwo_np.hsca import ContextSnapshot, HSCAEngine, coherence, domain_tags, nuance_flags

LEGAL = (
    "The court ruled that the contract clause was unlawful. The judge cited the statute on liability. "
    "The parties may appeal the ruling of the court within thirty days."
)
PHYSICS = (
    "Energy and momentum are conserved when the particle decays. The photon carries energy away from the "
    "nucleus. Every decay conserves charge, and the electron leaves with the remaining momentum."
)


def test_snapshots_at_threshold_and_forced():
    eng = HSCAEngine(snapshot_coherence_threshold=0.0, snapshot_on_topic_shift=False)  # the spec's rule
    eng.ingest_turn(LEGAL)
    assert len(eng.get_macro_context()) == 1 and not eng.get_macro_context()[0].forced
    eng = HSCAEngine(snapshot_coherence_threshold=1.0, max_buffer_chunks=3)
    fragment = "energy momentum photon electron nucleus charge energy photon"  # no punctuation: coherence < 1
    assert coherence(fragment) < 1.0
    for _ in range(3):
        eng.ingest_turn(fragment)
    (snap,) = eng.get_macro_context()
    assert snap.forced and len(snap.chunks) == 3 and all(c.parent_id == snap.snapshot_id for c in snap.chunks)
    assert (
        abs(sum(v for k, v in snap.domain_summary.items()) - sum(len(c.domain_tags) for c in snap.chunks) / 3)
        < 1e-9
    )
    assert ContextSnapshot.from_dict(snap.to_dict()).snapshot_id == snap.snapshot_id


def test_structural_queries():
    eng = HSCAEngine(snapshot_coherence_threshold=0.0, snapshot_on_topic_shift=False)  # the spec's rule
    for text in [LEGAL, PHYSICS, LEGAL + " The photon was exhibit A."]:
        eng.ingest_turn(text)
    assert [s.conversation_position for s in eng.state_before("photon")] == [0]
    evo = eng.domain_evolution()
    assert "legal" in evo[0] and "physics" in evo[1]
    ranked = eng.relevant_snapshots("photon energy momentum")
    assert ranked[0][0].conversation_position == 1
    assert [s.conversation_position for s, _ in eng.relevant_snapshots("court", last=2)] == [2, 1]
    assert {s.conversation_position for s, _ in eng.relevant_snapshots("court", context_position=0)} == {0, 1}


def test_layers_on_bad_input_and_failing_models():
    eng = HSCAEngine(domain_model=lambda t: 1 / 0, nuance_model=lambda t: 1 / 0)
    for text in ["", "   ", "word", "spam " * 50_000, "\x00\x01\x02 binary", "東京 😀 mixed. scripts!"]:
        c = eng.score_layers(text)
        assert 0.0 <= c.layer1_score <= 1.0 and 0.0 <= c.coherence_score <= 1.0
        assert c.domain_tags == ["unclassified"]
        assert not any(f.endswith("_model") for f in c.nuance_flags)
    with pytest.raises(TypeError):
        eng.score_layers(b"bytes")
    with pytest.raises(ValueError, match="at least one chunk"):
        HSCAEngine().take_snapshot()
    with pytest.raises(ValueError, match="snapshot_coherence_threshold"):
        HSCAEngine(snapshot_coherence_threshold=1.5)


def test_layer2_and_layer3_behaviour():
    assert domain_tags(LEGAL) == ["legal"]
    assert "cross_domain" in domain_tags(LEGAL + " " + PHYSICS)
    assert coherence("qwx zrt plk vbn mmq") < 0.05 < coherence("a fragment of the") < 0.3 < coherence(LEGAL)
    flags = nuance_flags(LEGAL)
    assert "hedged" in flags and "absolute" not in flags
    assert "absolute" in nuance_flags(PHYSICS)


@pytest.mark.integration
def test_emotional_tone_with_the_text_extra():
    pytest.importorskip("vaderSentiment")
    assert "emotional_tone_negative" in nuance_flags("This is terrible and I hate how awful it is.")
    assert "emotional_tone_urgent" in nuance_flags("Fix it immediately, the server is down!")


def test_ingest_turn_is_deterministic_apart_from_ids():
    # Speed lives in asv (benchmarks/hsca.py, Engine.time_ingest_turn_100_words), not here.
    turn = " ".join([PHYSICS] * 3)[:600]
    a, b = HSCAEngine().ingest_turn(turn), HSCAEngine().ingest_turn(turn)
    assert a.chunk_id != b.chunk_id
    da, db = a.to_dict(), b.to_dict()
    for d in (da, db):
        d.pop("chunk_id"), d.pop("parent_id"), d.pop("created_at")
    assert da == db


def test_micro_meso_macro_levels():
    eng = HSCAEngine()
    chunks = [eng.ingest_turn(t) for t in (LEGAL, PHYSICS, LEGAL, "qwx zrt plk vbn mmq")]
    assert [c.chunk_id for c in eng.get_micro_context()] == [c.chunk_id for c in chunks]
    snaps = eng.get_macro_context()
    assert snaps and [s.conversation_position for s in snaps] == list(range(len(snaps)))
    for c in chunks[:3]:
        snap = eng.snapshot_of(c.chunk_id)
        assert snap is not None and c in snap.chunks and c.parent_id == snap.snapshot_id
    assert eng.snapshot_of(chunks[3].chunk_id) is None  # gibberish: still in the buffer
    with pytest.raises(KeyError):
        eng.snapshot_of("nope")


def test_buffer_is_the_current_beat_read_only():
    from scwo_np.hsca import HSCAEngine

    eng = HSCAEngine(snapshot_coherence_threshold=1.0, max_buffer_chunks=5)
    a = eng.ingest_turn("The court heard the appeal on Monday and reserved its judgment.")
    assert eng.buffer == (a,)
    eng.take_snapshot()
    assert eng.buffer == () and eng.get_micro_context() == [a]


def test_a_coherent_beat_closes_where_the_topic_changes():
    from scwo_np.hsca._context import stem_counts as _stem_counts
    from scwo_np.hsca._engine import COHESION_SHIFT, cohesion

    legal = [
        "The court ruled that the contract was void because the seller concealed a defect.",
        "On appeal the court upheld the ruling that the contract was void.",
        "The seller asked the court to reconsider, but the judge refused.",
    ]
    stars = [
        "The telescope recorded the spectrum of the distant galaxy overnight.",
        "The spectrum showed the galaxy moving away, as the telescope data confirmed.",
    ]
    assert cohesion(_stem_counts(legal[1]), _stem_counts(legal[0])) >= COHESION_SHIFT
    assert cohesion(_stem_counts(stars[0]), _stem_counts(" ".join(legal))) < COHESION_SHIFT
    eng = HSCAEngine()
    for t in legal + stars:
        eng.ingest_turn(t)
    assert [len(s.chunks) for s in eng.get_macro_context()] == [3] and len(eng.buffer) == 2
    # The spec's rule (threshold alone) makes every coherent turn its own beat.
    spec = HSCAEngine(snapshot_on_topic_shift=False)
    for t in legal + stars:
        spec.ingest_turn(t)
    assert len(spec.get_macro_context()) == 5


def test_with_topic_shifts_the_threshold_does_not_close_beats():
    turns = [
        "energy momentum photon electron nucleus charge energy photon",  # a fragment: low coherence
        "The photon carries energy and momentum, as the electron does when it is charged.",
    ]
    for threshold in (0.0, 0.99):
        eng = HSCAEngine(snapshot_coherence_threshold=threshold)
        for t in turns:
            eng.ingest_turn(t)
        assert eng.get_macro_context() == [] and len(eng.buffer) == 2


# Words of the patterns in every case, the non-ASCII letters re.I folds to ASCII ones, and filler.
_NUANCE_PIECES = [
    "May", "MIGHT", "could", "ſeems", "İt is possible", "İT", "ıt", "\u212aind", "perhaps", "all",
    "ALL", "call", "Every", "no one", "No One", "isn't it", "ISN’T IT", "who would", "?", "!", " ",
    ". ", "\n", "you ", "YOU should", "step 3", "STEP 12", "urgent", "ASAP", "right now", "At once",
    "the", "court", "’", "Use", "run", "— ", "ß", "Σ", "in some cases", "to some ", "extent",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_NUANCE_PIECES), max_size=10).map("".join))
def test_pattern_flags_equal_the_patterns_alone(text):
    from scwo_np.hsca._layer3 import _vader

    got, want = nuance_flags(text), naive.nuance_pattern_flags(text)
    for flag in ("hedged", "absolute", "rhetorical_question", "instructional"):
        assert (flag in got) == (flag in want), flag
    if _vader() is not None and text.strip():
        assert ("emotional_tone_urgent" in got) == ("urgent" in want or text.count("!") >= 3)
