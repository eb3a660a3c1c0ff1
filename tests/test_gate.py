"""The regression gate (``asv_benchmarks/gate.py``): its measurements and its decisions.

The measurements run for real (a few seconds, one thread), but no test asserts a speed:
ratios depend on the machine (the committed floors were measured on one; a developer
rebuilds them with ``--update-floors`` on theirs) and a shared machine is noisy.  The
decisions (pass, fail and name the ratio, measure a failing ratio again) are tested on
given values.
"""

import contextlib
import io
import json
import math
import sys
from pathlib import Path

import pytest

ASV = Path(__file__).resolve().parents[1] / "asv_benchmarks"
sys.path.insert(0, str(ASV))
import gate  # noqa: E402

FLOORS = ASV / "floors.json"


def _bench(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = gate.main(argv)
        except SystemExit as exc:  # argparse's usage errors
            status = exc.code
    return status, out.getvalue(), err.getvalue()


def test_the_committed_floors_cover_every_ratio():
    floors = gate.load_floors(FLOORS)
    assert set(floors["ratios"]) == set(gate.RATIOS)
    for f in floors["ratios"].values():
        assert f["floor"] > 0 and 0 <= f["noise"] < 1 and len(f["runs"]) >= 5


def test_the_default_floors_are_found_from_any_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert Path(gate.FLOORS) == FLOORS and gate.load_floors(gate.FLOORS)["ratios"]


def test_every_ratio_is_measured_as_a_positive_number():
    values = gate.measure()
    assert set(values) == set(gate.RATIOS)
    assert all(math.isfinite(v) and v > 0 for v in values.values())


def _given(values_by_call):
    """A stand-in for the timing: the gate's decisions on given values (call k gets the k-th dict)."""
    calls = iter(values_by_call)

    def measure(names=None):
        values = next(calls)
        return {k: values[k] for k in (names or values)}

    return measure


def test_the_gate_passes_at_the_floors_and_fails_a_regressed_ratio_by_name(monkeypatch):
    floors = gate.load_floors(FLOORS)["ratios"]
    at_median = {k: f["median"] for k, f in floors.items()}
    monkeypatch.setattr(gate, "measure", _given([at_median] * len(floors)))
    status, out, _ = _bench(["--floors", str(FLOORS)])
    assert status == 0 and out.count(" ok") == len(gate.RATIOS)

    slow = {**at_median, "mmr_lazy_vs_exact_10k": 1.0}  # the exact greedy in place of the lazy heap
    monkeypatch.setattr(gate, "measure", _given([slow] * (len(floors) + 2)))
    status, out, err = _bench(["--floors", str(FLOORS)])
    assert status == 1
    assert "mmr_lazy_vs_exact_10k regressed" in err and "FAIL" in out


def test_a_failing_ratio_is_measured_again_before_it_fails():
    floors = {"ratios": {"batch_vs_matmul": {"floor": 1.0, "noise": 0.1}}}
    low, high = {"batch_vs_matmul": 0.5}, {"batch_vs_matmul": 0.95}
    (row,) = gate.check(floors, measure_fn=_given([low, high]))
    assert row["ok"] and row["value"] == 0.95
    (row,) = gate.check(floors, measure_fn=_given([low, low, low]), retries=2)
    assert not row["ok"]


def test_update_floors_writes_a_floors_file(tmp_path):
    path = tmp_path / "floors.json"
    status, out, _ = _bench(["--update-floors", "--runs", "2", "--floors", str(path)])
    assert status == 0 and "noise" in out
    floors = json.loads(path.read_text())
    assert set(floors["ratios"]) == set(gate.RATIOS) and all(
        len(f["runs"]) == 2 for f in floors["ratios"].values()
    )


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--floors", "/nonexistent/floors.json"], "no floors file"),
        (["--update-floors", "--runs", "1", "--floors", "x.json"], "--runs must be at least 2"),
    ],
)
def test_bad_gate_arguments(argv, match, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, _, err = _bench(argv)
    assert status in (1, 2) and match in err and "Traceback" not in err
