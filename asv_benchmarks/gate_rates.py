"""How often the regression gate cries wolf, and how often it catches a real slowdown.

``python asv_benchmarks/gate_rates.py --runs 20 [--load] [--floors]`` runs the gate
``--runs`` times on unchanged code, then ``--runs`` times with the lazy-heap MMR kernel made
exactly 2x slower (each call runs twice), and prints the false-alarm rate (any workload
failing on unchanged code) and the detection rate (any failing on the slowed code).

- By default it runs the A/B gate (``gate.compare``): the base is this clone's ``HEAD``;
  the head is a second copy of it (unchanged), or a copy whose ``scwo_np/select/_mmr.py``
  ends with the 2x slowdown: a real code change in a real tree, as a regression would be.
- ``--floors`` runs the floors gate (``gate.check`` against ``floors.json``) instead, the
  slowdown patched into this process.

``--load`` keeps a second, CPU-bound process running throughout (the other core of a
2-core machine busy).
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gate  # noqa: E402

from scwo_np.select import _mmr  # noqa: E402


@contextlib.contextmanager
def slowed(factor: int = 2):
    """The MMR driver (every ``mmr_select`` the gate times) runs ``factor`` times per call."""
    originals = {name: getattr(_mmr, name) for name in ("_select",)}

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


#: Appended to a copy of ``scwo_np/select/_mmr.py``: the MMR driver runs twice per call.
SLOWDOWN = """

def _twice(fn):
    def run(*args):
        fn(*args)
        return fn(*args)

    return run


_select = _twice(_select)
"""


def trees(base: Path) -> tuple[Path, Path]:
    """Two copies of ``base`` beside it: unchanged, and with ``SLOWDOWN`` appended to ``_mmr.py``."""
    same, slow = base.with_name(base.name + "-same"), base.with_name(base.name + "-slow")
    for dest in (same, slow):
        if not dest.exists():
            shutil.copytree(base, dest)
    mmr = slow / "scwo_np" / "select" / "_mmr.py"
    if not mmr.read_text(encoding="utf-8").endswith(SLOWDOWN):
        with mmr.open("a", encoding="utf-8") as fh:
            fh.write(SLOWDOWN)
    return same, slow


def ab_alarms(base: Path, head: Path, runs: int) -> tuple[int, list[str]]:
    count, names = 0, []
    for i in range(runs):
        failed = [r["name"] for r in gate.compare(base, head, seed=i) if not r["ok"]]
        count += bool(failed)
        names += failed
    return count, names


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
    p.add_argument("--floors", action="store_true", help="the floors gate instead of the A/B gate")
    args = p.parse_args(argv)
    if args.floors:
        floors = gate.load_floors(gate.FLOORS)
        gate.measure()  # compile and warm up outside the counted runs
    else:
        base = gate.source_tree("HEAD")
        same, slow = trees(base)
        gate.compare(base, slow, rounds=3)  # compile every tree's kernels outside the counted runs
        gate.compare(base, same, rounds=3)
    with busy(args.load):
        t0 = time.perf_counter()
        if args.floors:
            false_alarms, fa_names = alarms(floors, args.runs)
            with slowed(2):
                detected, det_names = alarms(floors, args.runs)
        else:
            false_alarms, fa_names = ab_alarms(base, same, args.runs)
            detected, det_names = ab_alarms(base, slow, args.runs)
        secs = time.perf_counter() - t0
    where = ("floors gate" if args.floors else "A/B gate") + (
        ", with a second CPU-bound process" if args.load else ", idle"
    )
    print(f"{where}: false alarms {false_alarms}/{args.runs} {sorted(set(fa_names))}; "
          f"2x slower kernel detected {detected}/{args.runs} {sorted(set(det_names))}; {secs:.0f} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
