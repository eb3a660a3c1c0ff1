"""Shared pieces of the scwo_np benchmarks: base class, profile, timing and memory helpers.

Set ``SCWO_BENCH_PROFILE=fast`` to drop the largest sizes (n = 1,000,000 needs
1.5 GB for the embeddings and a few seconds to generate them), and
``SCWO_BENCH_PROFILE=smoke`` to keep only the smallest size of every benchmark and skip
the compile-time ones (each starts fresh interpreters): the whole suite then runs in
about a minute with ``--quick``, which is how the test suite proves the harness works.
"""

import os
import sys
import time

PROFILE = os.environ.get("SCWO_BENCH_PROFILE", "regular")


def sizes(*values):
    """A benchmark's sizes: all of them, or only the smallest in the smoke profile."""
    return list(values[:1]) if PROFILE == "smoke" else list(values)


#: Geometric sizes so asv draws scaling curves.
SIZES = sizes(1_000, 10_000, 100_000) if PROFILE in ("fast", "smoke") else [1_000, 10_000, 100_000, 1_000_000]
#: The spec's table (d = 32).
SPEC_SIZES = sizes(50, 100, 300, 500)


def need(module):
    """A benchmark's own setup, for a peer library (``bench.setup = lambda *_: need("x")``:
    asv calls it unbound, with the parameters, after the class's setup).  asv's skip is a
    NotImplementedError from a setup; raised inside the benchmark it is a failure."""
    try:
        __import__(module)
    except ImportError:
        raise NotImplementedError(f"{module} is not installed (pip install '.[bench]')") from None


def skip_in_smoke(what):
    """Raise asv's skip (NotImplementedError from ``setup``) in the smoke profile."""
    if PROFILE == "smoke":
        raise NotImplementedError(f"{what}: skipped in the smoke profile")


class Benchmark:
    """Base class: generous timeout (the 1M setup generates 1.5 GB)."""

    timeout = 600
    # asv's defaults re-run setup for every repeat; keep repeats modest.
    repeat = (1, 5, 10.0)


def best_time(func, repeat=7):
    """Best wall time of ``func()`` over ``repeat`` calls after one warm-up."""
    func()
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - t)
    return best


def best_times(*funcs, repeat=7):
    """Best wall time of each of ``funcs``, measured in ``repeat`` interleaved rounds (one warm-up each).

    For ratios between peers: a slow spell of the machine (a busy neighbour on the
    host, a garbage collection) then falls on every function alike instead of on
    whichever was being timed during it; timed one after the other, the same two
    functions gave ratios from 4.5 to 6.7 in six runs here.
    """
    for f in funcs:
        f()
    best = [float("inf")] * len(funcs)
    for _ in range(repeat):
        for k, f in enumerate(funcs):
            t = time.perf_counter()
            f()
            best[k] = min(best[k], time.perf_counter() - t)
    return best


def _status_kb(field):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def first_run_extra_peak_bytes(func):
    """Peak resident memory added by the first call of ``func()`` in this process (Linux only).

    No warm-up on the same input: a warm-up would leave freed memory in the
    allocators' pools and hide the peak.  Warm the JIT up on a small input
    in ``setup`` instead.
    """
    if not sys.platform.startswith("linux"):
        raise NotImplementedError("peak-memory tracking needs Linux /proc")
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    before = _status_kb("VmRSS")
    func()
    return 1024 * max(_status_kb("VmHWM") - before, 0)


def extra_peak_bytes(func):
    """Peak resident memory added by ``func()`` beyond what was resident before.

    Resets the kernel's high-water mark (``/proc/self/clear_refs``), so it is
    Linux-only (x86-64 and aarch64 alike); elsewhere the benchmark is skipped.
    """
    if not sys.platform.startswith("linux"):
        raise NotImplementedError("peak-memory tracking needs Linux /proc")
    func()  # warm-up: JIT and caches
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    before = _status_kb("VmRSS")
    func()
    return 1024 * max(_status_kb("VmHWM") - before, 0)
