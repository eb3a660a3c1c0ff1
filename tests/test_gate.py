"""The regression gate (``asv_benchmarks/gate.py``): passes on this code, fails on a slow kernel.

Runs the real measurements (a few seconds, one thread) against the committed
``asv_benchmarks/floors.json``.  The deliberate slowdown swaps the lazy heap for the exact
greedy (same answers, ~100x the work at n = 10,000): the gate must fail and name the ratio.
"""

import contextlib
import io
import json
import sys
from pathlib import Path

import pytest

from scwo_np.select import _mmr as mmr_module

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


def test_the_gate_passes_on_this_code():
    status, out, err = _bench(["--floors", str(FLOORS)])
    assert status == 0, out + err
    assert out.count(" ok") == len(gate.RATIOS)


def test_a_slow_kernel_fails_the_gate_and_is_named(monkeypatch):
    monkeypatch.setitem(mmr_module._IMPLS, "lazy", mmr_module._select_exact)  # the exact greedy, slowly
    monkeypatch.setattr(mmr_module, "_fast", lambda *a: None)  # and no fused fast path around it
    status, out, err = _bench(["--floors", str(FLOORS)])
    assert status == 1
    assert "mmr_lazy_vs_exact_10k regressed" in err and "FAIL" in out


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
