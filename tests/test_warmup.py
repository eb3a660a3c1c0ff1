"""The warm-up that compiles the common kernels into the wheel's JIT seed (``setup.py``).

A failing step is skipped on purpose (the seed only saves time), so a broken step would
silently ship a wheel without its kernels: every step must run here.
"""

import subprocess
import sys
from pathlib import Path

import pytest

from scwo_np import _warmup


def test_every_warm_up_step_runs():
    times = _warmup.run()
    assert set(times) == set(_warmup.STEPS)


def test_the_warm_up_needs_only_what_the_build_environment_installs():
    """pip builds the wheel in an environment holding ``[build-system].requires`` only: a package
    the import of ``scwo_np`` needs beyond those failed the warm-up there (``threadpoolctl``, which
    ``scwo_np.embed`` imports), and every wheel built so shipped without its kernels (a first call
    of 20 s and more).  Here the project's other dependencies cannot be imported at all."""
    tomllib = pytest.importorskip("tomllib")  # (Python 3.11+)
    root = Path(__file__).resolve().parents[1]
    meta = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    name = lambda req: req.split(";")[0].split("[")[0].split("=")[0].split(">")[0].split("<")[0].strip()  # noqa: E731
    build = {name(r).lower() for r in meta["build-system"]["requires"]}
    imports = {"scikit-learn": "sklearn", "pystemmer": "Stemmer"}  # distribution -> module, where they differ
    blocked = sorted(
        imports.get(d, d)
        for d in (name(r).lower() for r in meta["project"]["dependencies"])
        if d not in build
    )
    assert "threadpoolctl" in blocked or "threadpoolctl" in build
    code = (
        "import sys\n"
        f"for m in {blocked!r}: sys.modules[m] = None  # ImportError on import\n"
        "from scwo_np import _warmup\n"
        "print('imported')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=300)
    assert out.returncode == 0 and "imported" in out.stdout, out.stderr[-2000:]
