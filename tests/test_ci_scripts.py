"""The CI scripts and workflows that cannot run here are at least sound.

``.ci/aarch64`` (the emulated arm64 run) takes tens of minutes and root, so the suite
checks that it parses, that every test file it runs exists, and that its golden file is
current (``tests/test_golden.py``).  The arm64 workflow for real hardware is validated
against GitHub's workflow schema (check-jsonschema's vendored copy) and linted with zizmor,
both offline.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
AARCH64 = ROOT / ".ci" / "aarch64"
WORKFLOW = ROOT / ".github" / "workflows" / "arm64.yml"


SCRIPTS = [AARCH64, ROOT / ".ci" / "run", ROOT / ".ci" / "history", ROOT / ".ci" / "chromium"]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_scripts_parse(script):
    r = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("script", [s for s in SCRIPTS if s.name != "run"], ids=lambda p: p.name)
def test_scripts_have_help_and_refuse_unknown_options(script):
    r = subprocess.run(["bash", str(script), "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("# ") and "set -e" not in r.stdout, r.stdout
    r = subprocess.run(["bash", str(script), "--frobnicate"], capture_output=True, text=True)
    assert r.returncode == 2 and "unknown option" in r.stderr, r.stderr


def test_history_checks_its_arguments():
    for args, message in ((["--commits", "x"], "positive number"), (["--profile", "huge"], "smoke, fast")):
        r = subprocess.run(["bash", str(ROOT / ".ci" / "history"), *args], capture_output=True, text=True)
        assert r.returncode == 2 and message in r.stderr, r.stderr


def test_aarch64_help_and_its_test_files_exist():
    r = subprocess.run(["bash", str(AARCH64), "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "qemu-user-static" in r.stdout and "mean nothing" in r.stdout
    default = re.search(r'SCWO_AARCH64_TESTS:-"([^"]+)"', AARCH64.read_text()).group(1).split()
    assert "tests/test_golden.py" in default
    missing = [t for t in default if not (ROOT / t).is_file()]
    assert not missing, f".ci/aarch64 runs test files that do not exist: {missing}"
    r = subprocess.run(["bash", str(AARCH64), "--frobnicate"], capture_output=True, text=True)
    assert r.returncode == 2 and "unknown option" in r.stderr


def test_the_arm64_workflow_is_valid():
    r = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", str(WORKFLOW)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    text = WORKFLOW.read_text()
    assert "ubuntu-24.04-arm" in text and "bash .ci/run" in text and "asv publish" in text


def test_the_arm64_workflow_passes_zizmor():
    zizmor = Path(sys.executable).with_name("zizmor")
    r = subprocess.run(
        [str(zizmor), "--offline", "--config", str(ROOT / ".github" / "zizmor.yml"), str(WORKFLOW)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
