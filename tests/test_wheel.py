"""The wheels carry only what users run, and every bundled file is accounted for.

Builds the real wheels with pip (the JIT seed is left out, ``SCWO_NP_NO_JIT_SEED=1``: it is
compiled code of the same modules, checked by ``test_install``), then reads their file lists.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _wheel(src: Path, out: Path) -> zipfile.ZipFile:
    env = {**os.environ, "SCWO_NP_NO_JIT_SEED": "1"}
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(src)]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    (whl,) = out.glob("*.whl")
    return zipfile.ZipFile(whl)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    return _wheel(ROOT, tmp_path_factory.mktemp("wheel"))


def test_the_wheel_holds_the_package_its_data_and_the_licence_only(wheel):
    names = wheel.namelist()
    tops = {n.split("/")[0] for n in names}
    assert tops == {"scwo_np", "scwo_np-0.2.0.dist-info"}
    assert not [n for n in names if re.search(r"build_|scwo_evals|scwo_np_gpl_data|/tests?/", n)]
    meta = wheel.read("scwo_np-0.2.0.dist-info/METADATA").decode()
    assert "License" in meta and "MIT" in meta
    assert any(n.endswith("dist-info/licenses/LICENSE") or n.endswith("dist-info/LICENSE") for n in names)


def test_every_bundled_file_is_listed_with_its_source_and_licence(wheel):
    text = (ROOT / "data" / "README.md").read_text(encoding="utf-8")
    rows = [r for r in text.splitlines() if r.startswith("| `")]
    listed = {name for r in rows for name in re.findall(r"`([^`]+)`", r.split("|")[1])}
    shipped = {n[len("scwo_np/bundled/") :] for n in wheel.namelist() if n.startswith("scwo_np/bundled/")}
    assert shipped <= listed, f"bundled but not in data/README.md: {sorted(shipped - listed)}"
    assert not any(n.endswith(".jsonl") for n in shipped if n.startswith("hsca/"))


def test_the_copyleft_data_is_its_own_wheel_under_its_own_licence(tmp_path):
    whl = _wheel(ROOT / "data-gpl", tmp_path)
    names = whl.namelist()
    assert {n.split("/")[0] for n in names} == {"scwo_np_gpl_data", "scwo_np_gpl_data-0.1.0.dist-info"}
    assert {"scwo_np_gpl_data/domain_lexicons.json", "scwo_np_gpl_data/background.npz"} <= set(names)
    meta = whl.read("scwo_np_gpl_data-0.1.0.dist-info/METADATA").decode()
    assert "License-Expression: GPL-3.0-or-later AND GFDL-1.3-or-later" in meta
