import pytest

from scwo_np.hsca import HSCAEngine, Tuner

MESH = (
    "The fox hunts the rabbit at dawn near the river. The rabbit hides from the fox by the river. "
    "At dawn the fox returns to the river and the rabbit runs into the forest."
)
SPARSE = "Cheap deals today. Best offers now. Prices low everywhere. Sale ends soon. Discount codes here."


def _history(engine):
    tuner = Tuner()
    for k in range(6):
        tuner.record(engine.score_layers(MESH + f" Day {k}."), True)
        tuner.record(engine.score_layers(SPARSE + f" Item {k}."), False)
    return tuner


def test_tuning_is_bounded_deterministic_and_reversible():
    eng = HSCAEngine()
    before = (eng.cooccurrence_window, eng.snapshot_coherence_threshold, dict(eng.nuance_weights))
    tuner = _history(eng)
    after = tuner.tune(eng)
    assert abs(after["cooccurrence_window"] - before[0]) <= 1
    assert abs(after["snapshot_coherence_threshold"] - before[1]) <= 0.05 + 1e-12
    assert all(0.5 <= w <= 1.5 for w in after["nuance_weights"].values())
    eng2 = HSCAEngine()
    assert _history(eng2).tune(eng2) == after  # same history, same parameters
    assert tuner.revert(eng) == {
        "cooccurrence_window": before[0],
        "snapshot_coherence_threshold": before[1],
        "nuance_weights": before[2],
        "domain_weights": {},
        "domain_words": {},
    }
    with pytest.raises(ValueError, match="nothing to revert"):
        tuner.revert(eng)


def test_no_contrast_changes_nothing():
    eng = HSCAEngine()
    tuner = Tuner()
    tuner.record(eng.score_layers(MESH), True)
    assert tuner.tune(eng)["cooccurrence_window"] == 5 and len(tuner) == 1


def test_labelled_hits_teach_bounded_domain_weights_that_fix_a_confusion():
    from scwo_np.hsca._layer2 import domain_scores
    from scwo_np.hsca._tuning import DOMAIN_RANGE, DOMAIN_STEP

    # Logic definitions the lexicons score as mathematics at least as much as philosophy.
    logic = [
        "An axiom is a proposition that is not susceptible of proof or disproof.",
        "A premise is a proposition from which a conclusion is drawn by deduction.",
        "A syllogism is a deductive argument from a major and a minor premise.",
    ]
    maths = [
        "The integral of a polynomial function is computed term by term.",
        "A matrix with a nonzero determinant has an inverse matrix.",
    ]
    eng = HSCAEngine()
    tuner = Tuner()
    for _ in range(3):
        for t in logic:
            tuner.record(eng.score_layers(t), True, domain="philosophical")
        for t in maths:
            tuner.record(eng.score_layers(t), True, domain="mathematics")
    before = {}
    for _ in range(12):
        after = tuner.tune(eng)["domain_weights"]
        for d, w in after.items():  # every tune: one bounded step, inside the range
            assert DOMAIN_RANGE[0] <= w <= DOMAIN_RANGE[1]
            assert 1 / DOMAIN_STEP - 1e-9 <= w / before.get(d, 1.0) <= DOMAIN_STEP + 1e-9
        assert set(after) <= {"philosophical", "mathematics"}  # domains never seen as labels stay put
        before = after
    assert before["philosophical"] > 1.0 > before["mathematics"]
    for t in logic:
        s = domain_scores(t, eng.domain_weights)
        assert max(s, key=s.get) == "philosophical"
    for t in maths:
        s = domain_scores(t, eng.domain_weights)
        assert max(s, key=s.get) == "mathematics"
    tuner.revert(eng)
    assert eng.domain_weights != {} and len(tuner._undo) == 11
    with pytest.raises(ValueError, match="domain must be one of"):
        tuner.record(eng.score_layers(logic[0]), True, domain="astrology")


def test_labelled_hits_teach_domain_words_bounded_deterministic_and_reversible(monkeypatch):
    import scwo_np.hsca._tuning as tuning
    from scwo_np.hsca._layer2 import content_stems, domain_tags

    assert {"zorblat", "quenfix", "plimsek"} <= content_stems("zorblats quenfix plimsek")  # unknown words
    medical = [f"The {w} zorblat and the plimsek." for w in ("first", "second", "third", "fourth")]
    eng = HSCAEngine()
    tuner = Tuner()
    for t in medical[:3]:
        tuner.record(eng.score_layers(t), True, domain="medical")
        tuner.record(eng.score_layers(t), True, domain="medical")  # the same text again: no new evidence
    tuner.record(eng.score_layers(medical[3].replace("plimsek", "wall")), True, domain="medical")
    tuner.record(eng.score_layers("The zorblat quenfix appeal was heard."), True, domain="legal")
    tuner.record(eng.score_layers("An unlabelled quenfix."), True)  # no domain: teaches no words
    monkeypatch.setattr(tuning, "WORDS_PER_TUNE", 1)
    # zorblat: 4 medical texts of 5 (purity 0.8); plimsek: 3 of 3; quenfix: 1 text.
    assert tuner.tune(eng)["domain_words"] == {"zorblat": "medical"}  # one per tune, most frequent first
    assert tuner.tune(eng)["domain_words"] == {"plimsek": "medical", "zorblat": "medical"}
    assert "medical" in domain_tags("A plimsek.", words=eng.domain_words)
    assert "medical" in eng.score_layers("A plimsek and a zorblat.").domain_tags
    eng2, tuner2 = HSCAEngine(), Tuner()
    tuner2.texts, tuner2.hits, tuner2.coherence = list(tuner.texts), list(tuner.hits), list(tuner.coherence)
    tuner2.flags, tuner2.domains, tuner2._stems = list(tuner.flags), list(tuner.domains), list(tuner._stems)
    tuner2.tune(eng2)
    assert tuner2.tune(eng2) == tuner._current(eng)  # same history, same result
    assert tuner.revert(eng)["domain_words"] == {"zorblat": "medical"}
    assert tuner.revert(eng)["domain_words"] == {}
