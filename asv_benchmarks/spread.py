"""Run the asv quick profile several times and report how much each number moves.

The claim behind the regression gate is that ratios measured in one run are
stable on a noisy shared machine while absolute times are not.  This script
checks it: it runs ``asv run --python=same --quick`` ``--runs`` times on the
current commit, reads every result from asv's own results file after each
run, and writes a table of median, min, max and spread ((max - min) / median)
per benchmark and parameter, with the ratios and the times summarised apart.

    cd asv_benchmarks && python spread.py --runs 5 -o spread.md
    python spread.py --runs 2 --bench '^anchor\\.Crush' -o -     # a quick look

``SCWO_BENCH_PROFILE`` (default ``smoke`` here: the smallest size of every
benchmark) selects the profile, as for asv itself.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run_once(bench: str | None, env: dict[str, str]) -> dict[str, float]:
    """One ``asv run --quick`` on HEAD; every finite result, keyed ``name(params)``."""
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=HERE, capture_output=True, text=True, check=True
    ).stdout.strip()
    cmd = [sys.executable, "-m", "asv", "run", "--python=same", "--quick", f"--set-commit-hash={commit}"]
    if bench:
        cmd += ["--bench", bench]
    res = subprocess.run(cmd, cwd=HERE, env=env, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"asv run failed ({res.returncode}):\n{(res.stdout + res.stderr)[-3000:]}")
    found = sorted(
        (HERE / "results").glob(f"*/{commit[:8]}-existing-*.json"), key=lambda p: p.stat().st_mtime
    )
    if not found:
        raise RuntimeError(f"no asv results file for {commit[:8]} under {HERE / 'results'}")
    return read_results(found[-1])


def read_results(path: Path) -> dict[str, float]:
    """The finite values of an asv results file, one per benchmark and parameter set."""
    data = json.loads(path.read_text())
    cols = data["result_columns"]
    out = {}
    for name, row in data["results"].items():
        rec = dict(zip(cols, row, strict=False))
        values, params = rec["result"], rec.get("params") or []
        combos = list(itertools.product(*params)) if params else [()]
        for combo, value in zip(combos, values or [], strict=False):
            if isinstance(value, int | float) and value == value and abs(value) != float("inf"):
                out[f"{name}({', '.join(combo)})" if combo else name] = float(value)
    return out


def kind(key: str, units: dict[str, str]) -> str:
    """``time`` (a time_ benchmark), ``ratio`` (a track_ whose unit is ``x...``) or ``other``."""
    name = key.split("(")[0]
    last = name.rsplit(".", 1)[-1]
    if last.startswith("time_") or last.startswith("timeraw_"):
        return "time"
    if last.startswith("track_") and units.get(name, "").startswith("x"):
        return "ratio"
    return "other"


def spread(runs: list[dict[str, float]], units: dict[str, str]) -> list[dict]:
    """Per key present in every run: kind, median, min, max, spread = (max - min) / |median|."""
    keys = sorted(set.intersection(*(set(r) for r in runs))) if runs else []
    rows = []
    for key in keys:
        vals = [r[key] for r in runs]
        med = statistics.median(vals)
        rows.append(
            {
                "benchmark": key,
                "kind": kind(key, units),
                "unit": units.get(key.split("(")[0], ""),
                "median": med,
                "min": min(vals),
                "max": max(vals),
                "spread": (max(vals) - min(vals)) / abs(med) if med else float("nan"),
            }
        )
    return rows


def render(rows: list[dict], runs: int, header: str) -> str:
    """Markdown: a summary per kind, then every row, ratios first."""
    lines = [header, ""]
    lines += ["| kind | benchmarks | median spread | 90th percentile | max |", "|---|---:|---:|---:|---:|"]
    for k in ("ratio", "time", "other"):
        s = sorted(r["spread"] for r in rows if r["kind"] == k and r["spread"] == r["spread"])
        if s:
            p90 = s[min(len(s) - 1, int(0.9 * len(s)))]
            lines.append(f"| {k} | {len(s)} | {statistics.median(s):.1%} | {p90:.1%} | {s[-1]:.1%} |")
    lines += ["", f"Every benchmark, {runs} runs (spread = (max - min) / median):", ""]
    lines += [
        "| benchmark | kind | unit | median | min | max | spread |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    order = {"ratio": 0, "time": 1, "other": 2}
    for r in sorted(rows, key=lambda r: (order[r["kind"]], r["benchmark"])):
        lines.append(
            f"| `{r['benchmark']}` | {r['kind']} | {r['unit']} | {r['median']:.4g} | {r['min']:.4g} "
            f"| {r['max']:.4g} | {r['spread']:.1%} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="how many asv runs (default 5)")
    ap.add_argument("--bench", help="asv --bench regular expression (default: every benchmark)")
    ap.add_argument("-o", "--out", default="-", help="markdown report path, '-' for stdout")
    args = ap.parse_args(argv)
    if args.runs < 2:
        ap.error("--runs must be at least 2 to measure a spread")
    env = {**os.environ}
    env.setdefault("SCWO_BENCH_PROFILE", "smoke")
    units = {}
    runs = []
    t0 = time.perf_counter()
    for k in range(args.runs):
        t = time.perf_counter()
        runs.append(run_once(args.bench, env))
        sys.stderr.write(
            f"run {k + 1}/{args.runs}: {len(runs[-1])} results, {time.perf_counter() - t:.0f} s\n"
        )
    for name, b in json.loads((HERE / "results" / "benchmarks.json").read_text()).items():
        if isinstance(b, dict):
            units[name] = b.get("unit", "")
    header = (
        f"# Spread of the asv quick run ({env['SCWO_BENCH_PROFILE']} profile), {args.runs} runs\n\n"
        f"Machine: {os.uname().machine}, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}; "
        f"bench: {args.bench or 'all'}; wall time {time.perf_counter() - t0:.0f} s."
    )
    text = render(spread(runs, units), args.runs, header)
    if args.out == "-":
        sys.stdout.write(text)
    else:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
