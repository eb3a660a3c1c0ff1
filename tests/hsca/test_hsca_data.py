"""HSCA's data source: the bundled permissive files, or the optional ``scwo-np-gpl-data`` package.

The package is the real one from ``data-gpl/`` of the source tree, put on the path of a fresh
interpreter (tests never install anything); the choice is made at import, so every check runs
in its own process.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GPL = ROOT / "data-gpl"

PROBE = (
    "import json; from scwo_np import hsca; from scwo_np.hsca import _layer2, _background; "
    "print(json.dumps({'source': hsca.DATA_SOURCE, 'physics': len(_layer2.DOMAIN_LEXICONS['physics']), "
    "'words': len(_background.background().vocab)}))"
)


def _probe(*, gpl_on_path: bool, choice: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "SCWO_NP_HSCA_DATA"}
    path = [str(ROOT)] + ([str(GPL)] if gpl_on_path else [])
    env["PYTHONPATH"] = os.pathsep.join(path + [env.get("PYTHONPATH", "")])
    if choice is not None:
        env["SCWO_NP_HSCA_DATA"] = choice
    return subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=300)


def _ok(r: subprocess.CompletedProcess) -> dict:
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def bundled() -> dict:
    return _ok(_probe(gpl_on_path=False, choice="bundled"))


def test_the_package_is_used_when_installed_and_says_so(bundled):
    got = _ok(_probe(gpl_on_path=True, choice=None))
    assert got["source"].startswith("scwo-np-gpl-data 0.1.0 (GCIDE")
    assert bundled["source"].startswith("bundled (")
    assert got["physics"] > bundled["physics"] and got["words"] > bundled["words"]


def test_bundled_wins_when_asked_even_with_the_package(bundled):
    assert _ok(_probe(gpl_on_path=True, choice="bundled")) == bundled


def test_asking_for_the_package_without_it_is_a_clear_error():
    r = _probe(gpl_on_path=False, choice="gpl")
    assert r.returncode != 0
    assert "SCWO_NP_HSCA_DATA=gpl but the scwo-np-gpl-data package is not installed" in r.stderr


def test_a_bad_choice_names_the_setting():
    r = _probe(gpl_on_path=False, choice="GPL!")
    assert "SCWO_NP_HSCA_DATA must be one of auto, bundled, gpl; got 'GPL!'" in r.stderr


EXPECTED_SHA256 = {"background.npz": "5b8153e3bf034469", "domain_lexicons.json": "cdd42be6bfcedcb2"}


def test_the_package_files_are_the_ones_measured_before_issue_31():
    """The copyleft-derived files as they were at 302d8cd, byte for byte (their figures are in data/README.md)."""
    sums = {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()[:16]
        for p in sorted((GPL / "scwo_np_gpl_data").iterdir())
        if p.suffix in (".json", ".npz")
    }
    assert sums == EXPECTED_SHA256
