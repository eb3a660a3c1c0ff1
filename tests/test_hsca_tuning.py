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
    }
    with pytest.raises(ValueError, match="nothing to revert"):
        tuner.revert(eng)


def test_no_contrast_changes_nothing():
    eng = HSCAEngine()
    tuner = Tuner()
    tuner.record(eng.score_layers(MESH), True)
    assert tuner.tune(eng)["cooccurrence_window"] == 5 and len(tuner) == 1
