import json
import re

import pytest

from scwo_evals.hsca import eval2_macro_coherence, eval4_adversarial, pk, texttiling_labels, window_diff


def test_segmentation_metrics():
    ref = [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert pk(ref, ref) == 0.0 and window_diff(ref, ref) == 0.0
    assert pk(ref, [0] * 9) > 0.3 and window_diff(ref, [0] * 9) > 0.3
    assert window_diff(ref, list(range(9))) > window_diff(ref, [0, 0, 0, 1, 1, 1, 1, 2, 2])


def test_texttiling_finds_a_clear_topic_change():
    a = "The court ruled on the contract and the judge cited the statute on liability."
    b = "The photon carries energy and momentum away from the nucleus after the decay."
    labels = texttiling_labels([a, a, a, b, b, b])
    assert labels[:3] == [0, 0, 0] and labels[3] == labels[5] == 1


def test_evals_run_and_report():
    r4 = eval4_adversarial(cases=8, seed=1)
    assert r4.cases == 8 and r4.pass_rate >= 0.75  # stuffed documents stay low and rank low on layer 1
    assert r4.detail["stuffed_layer1_median"] < r4.detail["genuine_layer1_median"]
    r2 = eval2_macro_coherence(cases=5, seed=1)
    assert 0.0 <= r2.pass_rate <= 1.0 and {"pk", "window_diff", "texttiling_pk"} <= set(r2.detail)
    assert "criterion" in r2.line()


def test_eval1_beat_weighting_at_least_matches_per_chunk_weighting(monkeypatch):
    import scwo_np.hsca._engine as engine
    from scwo_evals.hsca import eval1_snapshot_fidelity
    from scwo_np.hsca._layer1 import relational_weights

    ours = eval1_snapshot_fidelity(cases=40, seed=2)
    # The spec's weighting: each chunk by its own layer-1 score, no floor.
    monkeypatch.setattr(
        engine, "beat_weights", lambda texts, window=5: relational_weights(texts, window=window).scores
    )
    monkeypatch.setattr(engine, "BEAT_WEIGHT_FLOOR", 0.0)
    spec = eval1_snapshot_fidelity(cases=40, seed=2)
    # With the recurrence-only layer 1 the spec's weighting let the long turn decide (< 0.6); with
    # neighbour links short turns have real scores and the two weightings are within a few points.
    assert ours.pass_rate >= 0.8 and ours.pass_rate >= spec.pass_rate - 0.05


def test_graded_tag_strengths_break_multi_tag_ties(monkeypatch):
    from scwo_evals.hsca import eval1_snapshot_fidelity
    from scwo_np.hsca._engine import HSCAEngine

    graded = eval1_snapshot_fidelity(cases=20, seed=3)
    monkeypatch.setattr(HSCAEngine, "_tag_strengths", lambda self, c: dict.fromkeys(c.domain_tags, 1.0))
    flat = eval1_snapshot_fidelity(cases=20, seed=3)
    assert graded.pass_rate >= flat.pass_rate and graded.pass_rate >= 0.8


def test_tag_strengths_are_in_unit_interval_and_full_for_the_strongest():
    from scwo_np.hsca._engine import HSCAEngine

    eng = HSCAEngine()
    chunk = eng.score_layers(
        "The patient's symptoms followed the gravitational wave frequency of the photon."
    )
    s = eng._tag_strengths(chunk)
    assert set(s) == set(chunk.domain_tags) and max(s.values()) == 1.0
    assert all(0.0 < v <= 1.0 for v in s.values()) and s["cross_domain"] == 1.0


def test_eval5_reports_the_shared_bridge_weight():
    from scwo_evals.hsca import bridges, eval5_cross_domain_bridging

    r = eval5_cross_domain_bridging(cases=20, seed=1)
    assert (
        r.cases == 20 and 0.0 <= r.pass_rate <= 1.0 and 0.0 <= r.detail["median_shared_bridge_weight"] <= 1.0
    )
    pairs = [p for ps in bridges().values() for p in ps]
    assert len(pairs) >= 100 and all(len(p) == 2 and p[0] != p[1] for p in pairs)


def test_stemmed_lexicon_matches_inflections():
    from scwo_np.hsca._layer2 import domain_scores

    assert domain_scores("The courts ruled.")["legal"] == domain_scores("The court ruled.")["legal"] > 0


def test_eval3_tunes_on_history_and_scores_the_held_out_half():
    import pytest

    from scwo_evals.hsca import eval3_self_improvement

    r = eval3_self_improvement(cases=20, repeats=1, checkpoints=(0, 20), tune_every=10)
    assert r.cases == 1 and r.pass_rate in (0.0, 1.0) and r.criterion == 1.0
    assert set(r.detail) == {"eval1_at_N=0", "eval1_at_N=20", "repeats_rising"}
    assert r.passed == (r.detail["eval1_at_N=20"] > r.detail["eval1_at_N=0"])
    with pytest.raises(ValueError, match="checkpoints"):
        eval3_self_improvement(checkpoints=(100, 0))


def _fails(argv, match, capsys):
    from scwo_evals.hsca import main

    with pytest.raises(SystemExit) as info:
        main(argv)
    text = str(info.value) if info.value.code not in (0, 2) else capsys.readouterr().err
    assert re.search(match, text), text
    assert "Traceback" not in text


def test_the_eval_command_prints_each_pass_rate_beside_its_criterion(capsys, monkeypatch):
    import functools

    from scwo_evals import hsca

    quick3 = functools.partial(hsca.eval3_self_improvement, checkpoints=(0, 10), repeats=1, tune_every=5)
    monkeypatch.setitem(hsca.EVALS, 3, quick3)  # the real one replays 1,000 interactions three times
    assert hsca.main(["--cases", "4"]) == 0
    captured = capsys.readouterr()
    out = captured.out.splitlines()
    assert out[0].split()[:3] == ["eval", "pass", "rate"]
    assert captured.err.startswith(f"HSCA data: {hsca.DATA_SOURCE}")
    rows = out[1:]
    assert [r.split()[1] for r in rows] == ["1", "2", "3", "4", "5", "6", "7"] and all("%" in r for r in rows)


def test_the_eval_command_json_strict_and_errors(capsys):
    from scwo_evals.hsca import main

    rc = main(["--evals", "2", "--cases", "2", "--json", "--strict"])
    rec = json.loads(capsys.readouterr().out)
    assert rec["cases"] == 2 and rec["criterion"] == 0.85 and rc == (0 if rec["met"] else 1)
    _fails(["--evals", "9"], "unknown eval", capsys)
    _fails(["--evals", "one"], "numbers like", capsys)
    _fails(["--cases", "0"], "positive integer", capsys)


@pytest.mark.parametrize("k", [0, -1, 1.5, "2", True])
def test_segmentation_scores_refuse_a_bad_window(k):
    with pytest.raises((ValueError, TypeError), match="k"):
        pk([0, 0, 1, 1, 2, 2], [0, 0, 0, 1, 1, 1], k=k)
    with pytest.raises((ValueError, TypeError), match="k"):
        window_diff([0, 0, 1, 1, 2, 2], [0, 0, 0, 1, 1, 1], k=k)
