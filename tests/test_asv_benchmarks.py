"""The asv suite must stay importable and well-formed (``asv check``)."""

import re
import subprocess
import sys
from pathlib import Path

ASV_DIR = Path(__file__).resolve().parent.parent / "asv_benchmarks"


def test_asv_check_finds_no_problems():
    res = subprocess.run(
        [sys.executable, "-m", "asv", "check", "--python=same"],
        cwd=ASV_DIR,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert "No problems found" in res.stdout


def test_the_documented_quick_run_passes_in_the_smoke_profile(tmp_path):
    """``asv run --python=same --quick``, as CONTRIBUTING.md says to run it, at the smallest
    sizes (``SCWO_BENCH_PROFILE=smoke``), over the selection benchmarks: nothing fails.

    All 76 benchmarks pass this way too, but take ~7 minutes here (each starts a process
    that imports the package and loads its kernels), too long beside the rest of the
    suite; the selection ones take about one.  HOME is a scratch folder, so asv's machine
    file does not touch the user's.
    """
    import os

    env = {**os.environ, "HOME": str(tmp_path), "SCWO_BENCH_PROFILE": "smoke"}
    run = [sys.executable, "-m", "asv"]
    res = subprocess.run([*run, "machine", "--yes"], cwd=ASV_DIR, env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    res = subprocess.run(
        [*run, "run", "--python=same", "--quick", "--show-stderr", "--bench", r"^select\."],
        cwd=ASV_DIR, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-4000:]
    failed = [line for line in out.splitlines() if line.rstrip().endswith("failed")]
    assert not failed, "\n".join(failed)
    ran = re.search(r"Running (\d+) total benchmarks", out)
    assert ran and int(ran.group(1)) >= 20, out[:2000]
