"""How often the regression gate cries wolf, and how often it catches a real slowdown.

``python asv_benchmarks/gate_rates.py --runs 20 [--load]`` runs the gate (``gate.check``
against ``floors.json``, retries included) ``--runs`` times on the code as it is, then
``--runs`` times with the lazy-heap MMR kernel made exactly 2x slower (each call runs
twice), and prints the false-alarm rate (any ratio failing on unchanged code) and the
detection rate (any ratio failing on the slowed code). ``--load`` keeps a second,
CPU-bound process running throughout (the other core of a 2-core machine busy).
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gate  # noqa: E402

from scwo_np.select import _mmr  # noqa: E402


@contextlib.contextmanager
def slowed(factor: int = 2):
    """The fused lazy-heap kernels (every ``mmr_select`` the gate times) run ``factor`` times per call."""
    originals = {name: getattr(_mmr, name) for name in ("_select_fused", "_select_fused_threaded")}

    def twice(fn):
        def run(*args):
            for _ in range(factor - 1):
                fn(*args)
            return fn(*args)

        return run

    try:
        for name, fn in originals.items():
            setattr(_mmr, name, twice(fn))
        yield
    finally:
        for name, fn in originals.items():
            setattr(_mmr, name, fn)


@contextlib.contextmanager
def busy(on: bool):
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if on else None
    try:
        yield
    finally:
        if proc is not None:
            proc.kill()
            proc.wait()


def alarms(floors: dict, runs: int) -> tuple[int, list[str]]:
    count, names = 0, []
    for _ in range(runs):
        failed = [r["name"] for r in gate.check(floors) if not r["ok"]]
        count += bool(failed)
        names += failed
    return count, names


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python asv_benchmarks/gate_rates.py", description=__doc__.split("\n")[0]
    )
    p.add_argument("--runs", type=int, default=20, help="gate runs per case (20)")
    p.add_argument("--load", action="store_true", help="keep a second CPU-bound process running")
    args = p.parse_args(argv)
    floors = gate.load_floors(gate.FLOORS)
    gate.measure()  # compile and warm up outside the counted runs
    with busy(args.load):
        t0 = time.perf_counter()
        false_alarms, fa_names = alarms(floors, args.runs)
        with slowed(2):
            detected, det_names = alarms(floors, args.runs)
        secs = time.perf_counter() - t0
    where = "with a second CPU-bound process" if args.load else "idle"
    print(f"{where}: false alarms {false_alarms}/{args.runs} {sorted(set(fa_names))}; "
          f"2x slower kernel detected {detected}/{args.runs} {sorted(set(det_names))}; {secs:.0f} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
