"""Run a ``nogil`` Numba kernel over chunks of independent work, on threads; read ahead on one.

``numba.prange`` would do the same, but a parallel function is compiled
again with its whole call tree inlined, which for the batch kernel cost
three extra seconds on a cold start.  The kernels are compiled ``nogil``
(see ``_config``), so plain Python threads run them side by side.  The
number of threads follows ``numba.get_num_threads()`` (``NUMBA_NUM_THREADS``).
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable, Iterable, Iterator
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


def map_chunks(
    kernel: Callable, n_items: int, *args, chunk: int = 64, done: Callable[[int], None] | None = None
) -> list[Any]:
    """As :func:`run_chunks`, returning ``kernel``'s results in chunk order.

    ``done(hi)``, if given, is called in the calling thread as the chunks complete, in order:
    the items ``[0, hi)`` are done (a progress bar's count).
    """
    nt = numba.get_num_threads()
    bounds = [(lo, min(lo + chunk, n_items)) for lo in range(0, n_items, chunk)]
    if nt <= 1 or len(bounds) <= 1:
        futures = None
    else:
        futures = [_executor(nt).submit(kernel, *args, lo, hi) for lo, hi in bounds]
    out = []
    for k, (lo, hi) in enumerate(bounds):
        out.append(kernel(*args, lo, hi) if futures is None else futures[k].result())
        if done is not None:
            done(hi)
    return out


def read_ahead(items: Iterable[Any], depth: int = 1) -> Iterator[Any]:
    """Yield ``items`` while a background thread produces the next ``depth`` ahead.

    For a reader whose work releases the GIL (Parquet decoding): the next
    batch is read while the caller works on this one, so reading and
    computing overlap and memory holds at most ``depth + 1`` items more than
    the caller keeps.  An exception in the reader is raised here, at the
    item where it happened; closing the generator early stops the thread.
    """
    q: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()
    done = object()

    def produce() -> None:
        try:
            for item in items:
                while not stop.is_set():
                    try:
                        q.put((item, None), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            q.put((done, None))
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            q.put((done, exc))

    thread = threading.Thread(target=produce, name="scwo-read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            item, exc = q.get()
            if item is done:
                if exc is not None:
                    raise exc
                return
            yield item
    finally:
        stop.set()
        with contextlib.suppress(queue.Empty):
            while True:
                q.get_nowait()
        thread.join()
