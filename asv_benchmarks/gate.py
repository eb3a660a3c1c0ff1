"""The regression gate: a base commit against the tree in one interleaved run, or speed
*ratios* against committed floors (developer tooling).

Run from a clone:

- ``python asv_benchmarks/gate.py --against REV`` times each workload in ``WORKLOADS`` with
  the code of ``REV`` and with the working tree, in separate processes, interleaved round by
  round, and fails (status 1) only on a slowdown outside the noise band measured in the
  same run (two processes of the base code timed against each other).  Nothing recorded on
  another machine is involved: this is the gate to trust on a new machine.
- ``python asv_benchmarks/gate.py`` checks the ratios against ``floors.json``;
  ``python asv_benchmarks/gate.py --update-floors --runs 5`` rebuilds those floors on this
  machine.

The floors mode, in detail:

Absolute times on a shared machine move by 2x from one minute to the next; a ratio of
two things measured in the same run, both on one thread, moves far less (``floors.json`` records how much,
from five runs).  Each ratio below is "higher is better" and compares our code with
something that did not change: one ``E @ q`` pass, the exact greedy, the spec's
lazy heap in plain Python, one batched ``matmul``.  A ratio fails the gate when it
falls below ``floor * (1 - max(noise, MIN_NOISE))``, where ``floor`` is the lowest of the
runs that set the floors and ``noise`` their relative spread; a failing ratio is measured again
(up to ``retries`` times, best kept) before it counts, so one unlucky slice of CPU
time does not fail a build, while a real slowdown fails every attempt.

``floors.json`` lives beside this file and is rebuilt with ``--update-floors`` (five
runs) after a change that is meant to move a ratio.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import platform
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from datetime import date
from functools import partial
from pathlib import Path

import numpy as np

from scwo_np.bench._table import _best, spec_lazy_heap_mmr
from scwo_np.select import mmr_select, select_batch

__all__ = [
    "FLOORS",
    "MIN_BAND",
    "MIN_NOISE",
    "RATIOS",
    "WORKLOADS",
    "check",
    "compare",
    "main",
    "measure",
    "measure_floors",
    "source_tree",
]

#: The committed floors, beside this file (whatever the working directory).
FLOORS = Path(__file__).resolve().parent / "floors.json"

#: The least noise a ratio is allowed: five runs on one machine cannot see the tails
#: of another machine's (the spec-heap ratio spread 1% over five runs here, and 18% in
#: five runs with another process on the second core).
MIN_NOISE = 0.25


def _gauss(n: int, d: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    E = rng.standard_normal((n, d), dtype=np.float32)
    return E, rng.standard_normal(d).astype(np.float32), rng.integers(100, 201, n)


def _lazy_vs_exact() -> float:
    E, q, c = _gauss(10_000, 384)
    call = partial(mmr_select, E, q, c, 3000)
    return _best(partial(call, method="exact"), 5) / _best(partial(call, method="lazy"), 9)


def _floor_ratio() -> float:
    """One ``E @ q`` pass over the lazy selection's time (1.0 would be the floor itself)."""
    E, q, c = _gauss(10_000, 384)
    return _best(partial(np.dot, E, q), 15) / _best(partial(mmr_select, E, q, c, 3000), 15)


def _vs_spec_heap() -> float:
    E, q, c = _gauss(300, 32)
    budget = int(0.3 * c.sum())
    El, ql, cl = E.astype(np.float64).tolist(), q.astype(np.float64).tolist(), c.tolist()
    return _best(partial(spec_lazy_heap_mmr, El, ql, cl, budget), 2) / _best(
        partial(mmr_select, E, q, c, budget), 15
    )


def _batch_vs_matmul() -> float:
    rng = np.random.default_rng(0)
    B, n, d = 200, 100, 384
    E = rng.standard_normal((B, n, d), dtype=np.float32)
    Q = rng.standard_normal((B, d)).astype(np.float32)
    c = rng.integers(100, 201, (B, n))
    return _best(partial(np.matmul, E, Q[:, :, None]), 9) / _best(partial(select_batch, E, Q, c, 1500), 9)


#: The gated ratios: name -> (what it is, how to measure it).
RATIOS: dict[str, tuple[str, Callable[[], float]]] = {
    "mmr_lazy_vs_exact_10k": ("exact greedy time / lazy heap time, n=10,000 d=384", _lazy_vs_exact),
    "mmr_floor_10k": ("one E @ q / mmr_select, n=10,000 d=384 (1.0 = the floor)", _floor_ratio),
    "mmr_vs_spec_heap_300": ("the spec's lazy heap in Python / mmr_select, n=300 d=32", _vs_spec_heap),
    "batch_vs_matmul": ("batched matmul / select_batch, 200 sets x 100 x 384", _batch_vs_matmul),
}


@contextlib.contextmanager
def _one_thread():
    """Numba and BLAS on one thread: a ratio of two multi-threaded timings swings with
    whatever else holds the other cores; of two single-threaded ones, far less."""
    import numba
    from threadpoolctl import threadpool_limits

    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        with threadpool_limits(1):
            yield
    finally:
        numba.set_num_threads(before)


def measure(names: list[str] | None = None) -> dict[str, float]:
    """Each ratio, measured once on one thread (the first timing's warm-up call loads the JIT)."""
    with _one_thread():
        return {k: float(RATIOS[k][1]()) for k in (names or RATIOS)}


def measure_floors(runs: int = 5) -> dict:
    """Floors from ``runs`` runs: per ratio the lowest value, the median and the relative spread."""
    values: dict[str, list[float]] = {k: [] for k in RATIOS}
    for _ in range(runs):
        for k, v in measure().items():
            values[k].append(v)
    out = {}
    for k, vs in values.items():
        med = statistics.median(vs)
        out[k] = {
            "floor": round(min(vs), 4),
            "noise": round((max(vs) - min(vs)) / med, 4),
            "median": round(med, 4),
            "runs": [round(v, 4) for v in vs],
            "what": RATIOS[k][0],
        }
    return {
        "machine": f"{platform.machine()} {os.cpu_count()} cpus, {platform.python_implementation()} "
        f"{platform.python_version()}",
        "measured": date.today().isoformat(),
        "ratios": out,
    }


def check(floors: dict, *, retries: int = 2, measure_fn: Callable | None = None) -> list[dict]:
    """One row per gated ratio: value, floor, threshold, ok (a failing one is measured again)."""
    measure_fn = measure_fn or measure
    rows = []
    for name, f in floors["ratios"].items():
        if name not in RATIOS:
            raise ValueError(
                f"floors name a ratio this version does not measure: {name!r}; rebuild the floors."
            )
        threshold = f["floor"] * (1.0 - max(f["noise"], MIN_NOISE))
        value = measure_fn([name])[name]
        for _ in range(retries):
            if value >= threshold:
                break
            value = max(value, measure_fn([name])[name])
        rows.append({"name": name, "value": value, "floor": f["floor"], "threshold": threshold,
                     "ok": value >= threshold})  # fmt: skip
    return rows


def load_floors(path: str | os.PathLike) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            floors = json.load(fh)
    except FileNotFoundError:
        raise FileNotFoundError(
            2, "no floors file (make one with --update-floors, or pass --floors)", str(path)
        ) from None
    if not isinstance(floors, dict) or not isinstance(floors.get("ratios"), dict):
        raise ValueError(f"{path}: not a floors file (a JSON object with 'ratios').")
    return floors


# --- The A/B gate: a base commit against the tree, interleaved in one run ---------------

#: The least band a change must leave before it counts: identical code timed in two
#: processes differs by a few percent even on a quiet machine.
MIN_BAND = 0.15

_GAUSS = """import numpy as np
rng = np.random.default_rng(0)
E = rng.standard_normal(({n}, {d}), dtype=np.float32)
q = rng.standard_normal({d}).astype(np.float32)
c = rng.integers(100, 201, {n})
"""

#: What the A/B gate times: name -> (what it is, setup, statement, calls per timing).  The
#: setup and statement use only the public API, so that any base commit with that API can be
#: timed; each timing is the fastest of its calls, after one warm-up call.
WORKLOADS: dict[str, tuple[str, str, str, int]] = {
    "mmr_select_10k": (
        "mmr_select (lazy heap), n=10,000 d=384, budget 3,000",
        _GAUSS.format(n=10_000, d=384) + "from scwo_np.select import mmr_select\n",
        "mmr_select(E, q, c, 3000)",
        7,
    ),
    "mmr_select_300": (
        "mmr_select (lazy heap), n=300 d=32, budget 30% of the costs",
        _GAUSS.format(n=300, d=32) + "from scwo_np.select import mmr_select\nb = int(0.3 * c.sum())\n",
        "mmr_select(E, q, c, b)",
        25,
    ),
    "mmr_exact_2k": (
        "mmr_select(method='exact'), n=2,000 d=384, budget 3,000",
        _GAUSS.format(n=2_000, d=384) + "from scwo_np.select import mmr_select\n",
        "mmr_select(E, q, c, 3000, method='exact')",
        5,
    ),
    "select_batch": (
        "select_batch, 200 sets x 100 x 384, budget 1,500",
        "import numpy as np\nrng = np.random.default_rng(0)\n"
        "E = rng.standard_normal((200, 100, 384), dtype=np.float32)\n"
        "Q = rng.standard_normal((200, 384)).astype(np.float32)\n"
        "c = rng.integers(100, 201, (200, 100))\nfrom scwo_np.select import select_batch\n",
        "select_batch(E, Q, c, 1500)",
        5,
    ),
}

#: One thread for Numba and BLAS in every timing process (see ``_one_thread``).
_ONE_THREAD = {
    k: "1" for k in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
}

_WORKER = Path(__file__).resolve().parent / "gate_worker.py"


class _Worker:
    """A timing process importing ``scwo_np`` from ``tree`` (``gate_worker.py``)."""

    def __init__(self, tree: Path):
        self.tree = Path(tree).resolve()
        env = {**os.environ, **_ONE_THREAD, "PYTHONPATH": str(self.tree)}
        self._err = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(
            [sys.executable, "-u", str(_WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._err, text=True, env=env, cwd=tempfile.gettempdir(),
        )  # fmt: skip
        ready = self._read()
        where = Path(ready.get("ready", "")).resolve()
        if self.tree not in where.parents:
            self.close()
            raise RuntimeError(f"the timing process for {self.tree} imported scwo_np from {where}")

    def _read(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            self._err.seek(0)
            tail = self._err.read().strip().splitlines()[-1:]
            raise RuntimeError(
                f"the timing process for {self.tree} stopped: {' '.join(tail) or 'no message'}"
            )
        return json.loads(line)

    def time(self, name: str, workload: tuple) -> float:
        _, setup, stmt, reps = workload
        self.proc.stdin.write(json.dumps({"name": name, "setup": setup, "stmt": stmt, "reps": reps}) + "\n")
        self.proc.stdin.flush()
        answer = self._read()
        if "error" in answer:
            raise RuntimeError(answer["error"])
        return answer["best"]

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        self.proc.wait()
        self._err.close()


def source_tree(
    rev: str, dest: str | os.PathLike | None = None, repo: str | os.PathLike | None = None
) -> Path:
    """The source of commit ``rev`` of ``repo`` (this clone), unpacked once into ``dest``.

    The default folder is named by the commit in the temporary directory and kept, so that a
    second run finds the base's JIT cache warm (``git archive`` keeps the commit's file times,
    which the cache checks).
    """
    repo = Path(repo or Path(__file__).resolve().parents[1])
    try:
        sha = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--verify", f"{rev}^{{commit}}"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.CalledProcessError) as exc:
        raise ValueError(f"--against: {rev!r} is not a commit of {repo}") from exc
    dest = Path(dest) if dest else Path(tempfile.gettempdir()) / f"scwo_np-gate-{sha[:12]}"
    if not (dest / ".complete").exists():
        tar = subprocess.run(
            ["git", "-C", str(repo), "archive", "--format=tar", sha], capture_output=True, check=True
        )
        with tarfile.open(fileobj=io.BytesIO(tar.stdout)) as tf:
            tf.extractall(dest, filter="data")
        (dest / ".complete").write_text(sha + "\n")
    return dest


def _median_log(xs: list[float]) -> float:
    return statistics.median(math.log(x) for x in xs)


def compare(
    base: str | os.PathLike,
    head: str | os.PathLike,
    *,
    rounds: int = 7,
    retries: int = 1,
    min_band: float = MIN_BAND,
    workloads: dict | None = None,
    seed: int = 0,
) -> list[dict]:
    """Time every workload with the code of ``base`` and of ``head``, interleaved; one row each.

    Three processes: ``head``, ``base`` and a second ``base``.  Each round times the workload
    once in each, in a random order.  ``change`` is the median over rounds of head time / base
    time; ``band`` is the largest ratio seen between the two base processes (identical code),
    at least ``1 + min_band``.  A change above the band is ``"slower"`` (measured again up to
    ``retries`` times, the lowest change kept), below its inverse ``"faster"``, else ``"ok"``.
    A workload the base cannot run is ``"new"``; one the head cannot run is ``"error"``.
    """
    workloads = WORKLOADS if workloads is None else workloads
    rng = random.Random(seed)
    procs = {}
    try:
        for key, tree in (("head", head), ("base", base), ("base2", base)):
            procs[key] = _Worker(Path(tree))
        rows = []
        for name, wl in workloads.items():
            row = {"name": name, "what": wl[0]}
            try:
                procs["base"].time(name, wl)
                procs["base2"].time(name, wl)
            except RuntimeError as exc:
                rows.append({**row, "verdict": "new", "ok": True, "note": f"base: {exc}"})
                continue
            try:
                procs["head"].time(name, wl)
            except RuntimeError as exc:
                rows.append({**row, "verdict": "error", "ok": False, "note": f"head: {exc}"})
                continue
            best = None
            for _ in range(1 + retries):
                times = {k: [] for k in procs}
                for _ in range(rounds):
                    order = list(procs)
                    rng.shuffle(order)
                    for k in order:
                        times[k].append(procs[k].time(name, wl))
                change = math.exp(
                    _median_log([h / b for h, b in zip(times["head"], times["base"], strict=True)])
                )
                noise = max(
                    abs(math.log(b2 / b)) for b2, b in zip(times["base2"], times["base"], strict=True)
                )
                band = max(math.exp(noise), 1.0 + min_band)
                attempt = {
                    "base_ms": 1e3 * statistics.median(times["base"]),
                    "head_ms": 1e3 * statistics.median(times["head"]),
                    "change": change,
                    "band": band,
                }
                if best is None or change < best["change"]:
                    best = attempt
                if change <= band:
                    break
            verdict = (
                "slower"
                if best["change"] > best["band"]
                else "faster"
                if best["change"] < 1 / best["band"]
                else "ok"
            )
            rows.append({**row, **best, "verdict": verdict, "ok": verdict != "slower"})
        return rows
    finally:
        for p in procs.values():
            p.close()


def format_compare(rows: list[dict]) -> str:
    lines = [f"{'workload':<16} {'base ms':>9} {'head ms':>9} {'change':>7} {'band':>6}  verdict"]
    for r in rows:
        if "change" in r:
            lines.append(f"{r['name']:<16} {r['base_ms']:9.3f} {r['head_ms']:9.3f} {r['change']:6.2f}x "
                         f"{r['band']:5.2f}x  {r['verdict']}")  # fmt: skip
        else:
            lines.append(f"{r['name']:<16} {'':>9} {'':>9} {'':>7} {'':>6}  {r['verdict']} ({r['note']})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Check the ratios against the floors (status 1 when one regressed), or rebuild the floors."""
    p = argparse.ArgumentParser(prog="python asv_benchmarks/gate.py", description=__doc__.split("\n")[0])
    p.add_argument(
        "--update-floors", action="store_true", help="measure the ratios --runs times, write the floors"
    )
    p.add_argument("--runs", type=int, default=5, help="runs for --update-floors (5)")
    p.add_argument(
        "--floors", default=str(FLOORS), help=f"the floors file ({FLOORS.name} beside this script)"
    )
    p.add_argument(
        "--against",
        metavar="REV",
        help="compare this commit with the tree, interleaved in one run (no floors)",
    )
    p.add_argument(
        "--base", metavar="DIR", help="with --against: unpack the base commit here (a kept temporary folder)"
    )
    p.add_argument(
        "--head",
        metavar="DIR",
        default=str(Path(__file__).resolve().parents[1]),
        help="the tree to check (this clone)",
    )
    p.add_argument(
        "--rounds", type=int, default=7, help="with --against: interleaved rounds per workload (7)"
    )
    args = p.parse_args(argv)
    if args.rounds < 3:
        p.error("--rounds must be at least 3 (the change is a median over rounds)")
    try:
        if args.against:
            rows = compare(source_tree(args.against, args.base), args.head, rounds=args.rounds)
            print(format_compare(rows))
            bad = [r for r in rows if not r["ok"]]
            for r in bad:
                what = (
                    f"{r['change']:.2f}x slower, outside the noise band {r['band']:.2f}x"
                    if "change" in r
                    else r["note"]
                )
                sys.stderr.write(f"gate: {r['name']} regressed against {args.against}: {what}\n")
            return 1 if bad else 0
        if args.update_floors:
            if args.runs < 2:
                p.error("--runs must be at least 2 (the noise is the spread between runs)")
            floors = measure_floors(args.runs)
            Path(args.floors).write_text(json.dumps(floors, indent=1) + "\n", encoding="utf-8")
            for k, f in floors["ratios"].items():
                print(
                    f"{k:<24} floor {f['floor']:9.3f}  median {f['median']:9.3f}  noise {100 * f['noise']:5.1f}%"
                )
            return 0
        rows = check(load_floors(args.floors))
    except (OSError, ValueError, RuntimeError) as exc:
        sys.stderr.write(f"gate: {exc}\n")
        return 2
    print(f"{'ratio':<24} {'value':>9} {'floor':>9} {'threshold':>9}")
    for r in rows:
        mark = "ok" if r["ok"] else "FAIL"
        print(f"{r['name']:<24} {r['value']:9.3f} {r['floor']:9.3f} {r['threshold']:9.3f}  {mark}")
    bad = [r for r in rows if not r["ok"]]
    for r in bad:
        sys.stderr.write(
            f"gate: {r['name']} regressed: {r['value']:.3f} < {r['threshold']:.3f} (floor {r['floor']:.3f} less its noise)\n"
        )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
