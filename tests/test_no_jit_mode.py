"""The second test mode: the kernels run as plain Python (``NUMBA_DISABLE_JIT=1``).

That mode is how line coverage of the kernels is measured, and it only works
while every intrinsic keeps its Python fallback.  This runs the kernel tests
in it, in a child process (the flag is read when numba is imported).
"""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_kernel_tests_pass_without_the_jit():
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1", "HYPOTHESIS_PROFILE": "dev"}
    res = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-W", "ignore::RuntimeWarning",
         "tests/test_dot.py", "tests/select/test_mmr.py", "tests/select/test_batch.py", "tests/select/test_baselines.py",
         "tests/dedup/test_dedup.py", "tests/optimize/test_diversify_budget.py", "tests/hsca/test_hsca_layer1.py"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert " passed" in res.stdout
