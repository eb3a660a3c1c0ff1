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


# --- The A/B gate (``--against``): a base tree and a head tree, interleaved in one run ---


def _tree(root: Path, name: str, body: str) -> Path:
    """A source tree whose ``scwo_np`` is a stand-in holding one kernel (the gate times trees)."""
    pkg = root / name / "scwo_np"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("import time\n\n" + body)
    return root / name


def _sleeper(seconds: float) -> str:
    return f"def kernel():\n    time.sleep({seconds})\n"


SLEEP = {"kernel": ("a kernel of known duration", "from scwo_np import kernel", "kernel()", 3)}


@pytest.mark.slow
def test_the_ab_gate_flags_an_injected_slow_kernel_and_passes_an_identical_one(tmp_path):
    """Kernels that sleep: their durations hold on a loaded machine, unlike a CPU-bound one's,
    so these decisions do not depend on the machine (a CPU kernel 2x slower is measured by
    ``gate_rates.py``, not asserted here)."""
    base = _tree(tmp_path, "base", _sleeper(0.02))
    same = _tree(tmp_path, "same", _sleeper(0.02))
    slow = _tree(tmp_path, "slow", _sleeper(0.05))
    fast = _tree(tmp_path, "fast", _sleeper(0.005))
    (row,) = gate.compare(base, same, workloads=SLEEP, rounds=3)
    assert row["ok"] and row["verdict"] == "ok" and row["band"] >= 1 + gate.MIN_BAND
    (row,) = gate.compare(base, slow, workloads=SLEEP, rounds=3)
    assert not row["ok"] and row["verdict"] == "slower" and row["change"] > row["band"]
    (row,) = gate.compare(base, fast, workloads=SLEEP, rounds=3)
    assert row["ok"] and row["verdict"] == "faster"


def test_the_ab_gate_names_a_workload_the_base_or_the_head_cannot_run(tmp_path):
    base = _tree(tmp_path, "base", "")
    head = _tree(tmp_path, "head", _sleeper(0))
    (row,) = gate.compare(base, head, workloads=SLEEP, rounds=3)
    assert row["verdict"] == "new" and row["ok"] and "ImportError" in row["note"]
    (row,) = gate.compare(head, base, workloads=SLEEP, rounds=3)
    assert row["verdict"] == "error" and not row["ok"] and "kernel" in row["note"]


def test_the_ab_gate_refuses_a_tree_it_does_not_import_from(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    head = _tree(tmp_path, "head", _sleeper(0))
    with pytest.raises(RuntimeError, match="imported scwo_np from"):
        gate.compare(empty, head, workloads=SLEEP)
    broken = _tree(tmp_path, "broken", "raise SystemExit('cannot start')\n")
    with pytest.raises(RuntimeError, match="stopped: cannot start"):
        gate.compare(broken, head, workloads=SLEEP)


def test_the_ab_gate_needs_a_commit_and_three_rounds(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, _, err = _bench(["--against", "no-such-commit-xyz"])
    assert status == 2 and "'no-such-commit-xyz' is not a commit" in err
    status, _, err = _bench(["--against", "HEAD", "--rounds", "2"])
    assert status == 2 and "--rounds must be at least 3" in err


@pytest.mark.slow
def test_the_ab_gate_times_every_workload_of_head_against_head(tmp_path):
    """The real workloads, the base unpacked from this clone's HEAD (no verdict is asserted)."""
    base = gate.source_tree("HEAD", tmp_path / "base")
    assert (base / "scwo_np" / "select" / "__init__.py").is_file() and (base / ".complete").is_file()
    rows = gate.compare(base, ASV.parent, rounds=3)
    assert [r["name"] for r in rows] == list(gate.WORKLOADS)
    assert all(r["base_ms"] > 0 and r["head_ms"] > 0 and r["band"] >= 1 + gate.MIN_BAND for r in rows)
    table = gate.format_compare(rows)
    assert all(name in table for name in gate.WORKLOADS)
