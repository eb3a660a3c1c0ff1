"""The asv suite must stay importable and well-formed (``asv check``)."""

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
