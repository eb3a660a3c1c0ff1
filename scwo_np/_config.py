"""Numba compilation flags, in one place.

Every kernel in the package is decorated with ``@njit(**JIT)`` or
``@njit(**PJIT)`` so that the flags can be audited and changed here.

``fastmath`` is deliberately off: selection results must be identical, to the
bit, across methods, machines and thread counts, and fast-math lets LLVM
reassociate floating-point sums differently on every target.
"""

from __future__ import annotations

#: Flags for serial kernels. ``cache=True`` writes the machine code next to the
#: package (or to ``NUMBA_CACHE_DIR``) so a fresh process does not recompile.
JIT: dict = {
    "cache": True,
    "fastmath": False,
    "boundscheck": False,
    "nogil": True,
    # IEEE semantics for x / 0 (inf/nan) instead of Python exceptions; inputs
    # are validated so it does not happen, and the kernels skip the checks.
    "error_model": "numpy",
}

#: Flags for kernels that use ``numba.prange`` across independent problems.
PJIT: dict = {**JIT, "parallel": True}

#: Number of interleaved partial sums in every dot product, per precision
#: (see ``_dot``): one 64-byte vector of either type.  Part of the numerical
#: definition of a similarity: changing it changes the last bits of every
#: similarity, so it is a constant, not a setting.
LANES: dict = {"float32": 16, "float64": 8}
