"""Run a ``nogil`` Numba kernel over chunks of independent work, on threads.

``numba.prange`` would do the same, but a parallel function is compiled
again with its whole call tree inlined, which for the batch kernel cost
three extra seconds on a cold start.  The kernels are compiled ``nogil``
(see ``_config``), so plain Python threads run them side by side.  The
number of threads follows ``numba.get_num_threads()`` (``NUMBA_NUM_THREADS``).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numba

_pool: ThreadPoolExecutor | None = None
_pool_size = 0


def _executor(n: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    if _pool is None or _pool_size != n:
        if _pool is not None:
            _pool.shutdown(wait=False)
        _pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="scwo")
        _pool_size = n
    return _pool


def run_chunks(kernel: Callable, n_items: int, *args, chunk: int = 64) -> None:
    """Call ``kernel(*args, lo, hi)`` for consecutive ``[lo, hi)`` covering ``range(n_items)``.

    Chunks of ``chunk`` items are handed to the threads as they free up, so
    uneven items balance out; with one thread (or one chunk) everything runs
    in the calling thread.  Exceptions propagate.
    """
    nt = numba.get_num_threads()
    if nt <= 1 or n_items <= chunk:
        kernel(*args, 0, n_items)
        return
    bounds = [(lo, min(lo + chunk, n_items)) for lo in range(0, n_items, chunk)]
    futures = [_executor(nt).submit(kernel, *args, lo, hi) for lo, hi in bounds]
    for f in futures:
        f.result()


def map_chunks(kernel: Callable, n_items: int, *args, chunk: int = 64) -> list[Any]:
    """As :func:`run_chunks`, returning ``kernel``'s results in chunk order."""
    nt = numba.get_num_threads()
    bounds = [(lo, min(lo + chunk, n_items)) for lo in range(0, n_items, chunk)]
    if nt <= 1 or len(bounds) <= 1:
        return [kernel(*args, lo, hi) for lo, hi in bounds]
    futures = [_executor(nt).submit(kernel, *args, lo, hi) for lo, hi in bounds]
    return [f.result() for f in futures]
