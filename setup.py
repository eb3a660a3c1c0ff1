"""Build hook: compile the common Numba kernels into the wheel (``scwo_np/_jit_seed``).

Everything else about the package is in ``pyproject.toml``.  After the usual
``build_py`` copies the sources, ``scwo_np._warmup`` runs in a subprocess on
those copies with the JIT cache pointed at a scratch folder, and the cache
files it wrote are shipped inside the wheel.  A fresh install then loads the
kernels instead of spending tens of seconds compiling them on first use
(see ``scwo_np/_config.py``).  They are listed in the wheel's RECORD, so an
uninstall removes them.

Skipped for editable installs (the source tree is the package; kernels are
compiled on first use) and when ``SCWO_NP_NO_JIT_SEED=1``.  A warm-up that
fails only costs the seed: the build goes on, and says so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

from setuptools import setup
from setuptools.command.build_py import build_py


class build_py_with_jit_seed(build_py):  # noqa: N801 - setuptools command naming
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False) or os.environ.get("SCWO_NP_NO_JIT_SEED") == "1":
            return
        seed = os.path.join(self.build_lib, "scwo_np", "_jit_seed")
        shutil.rmtree(seed, ignore_errors=True)
        scratch = tempfile.mkdtemp(prefix="scwo_np_seed_")
        env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
        env["SCWO_NP_CACHE_DIR"] = scratch
        # build_lib first, then the build's own path (pip's isolated build environment is on it).
        env["PYTHONPATH"] = os.pathsep.join(
            filter(None, [os.path.abspath(self.build_lib), env.get("PYTHONPATH")])
        )
        self.announce("scwo_np: compiling the Numba kernels for the wheel (about a minute)", level=2)
        try:
            subprocess.run(
                [sys.executable, "-m", "scwo_np._warmup"],
                env=env,
                cwd=scratch,
                check=True,
                timeout=1200,
            )
            (versioned,) = [os.path.join(scratch, d) for d in os.listdir(scratch)]
            shutil.copytree(versioned, seed, ignore=shutil.ignore_patterns(".*", "*.tmp"))
        except Exception as exc:  # noqa: BLE001 - the seed is an optimisation, never a requirement
            sys.stderr.write(
                f"scwo_np: no precompiled kernels in this build ({exc}); they compile on first use\n"
            )
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


setup(cmdclass={"build_py": build_py_with_jit_seed})
