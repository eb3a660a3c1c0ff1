"""Which test leg is running, for the tests that size their work by it.

The no-JIT leg (``.ci/run``) runs every kernel as plain Python, 100-1,000x slower than compiled: it
is there for the plain-Python paths of the kernels (their lines and their fallbacks), not for
volume.  A test marked ``volume`` runs code that smaller tests cover, at the size of a real data
set or a whole benchmark run; the JIT legs run it, the no-JIT leg skips it.  A test that loops over
a real data set's cases takes every ``NOJIT_STEP``-th case there instead.
"""

import os

NOJIT = os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0")
NOJIT_STEP = 8 if NOJIT else 1
#: Calls of the bad-input matrix that run a whole benchmark (volume in the no-JIT leg).
VOLUME_CALLS = frozenset({"run_bench", "compare_strategies"})
