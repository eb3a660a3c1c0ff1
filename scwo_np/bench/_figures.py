"""The headline figures, measured once and kept: ``scwo bench --write-figures FILE``.

One full run of :func:`~scwo_np.bench.run_bench` (the specification's table and the larger rows),
with what it ran on (machine, versions, date) and the headline picked out of it: at
``n = 10,000``, ``d = 384`` and a 3,000-token budget, how much faster the lazy heap is than the
exact greedy and how many times one ``E @ q`` it takes; at a million chunks, the same ratio to
``E @ q``.  The repository keeps this JSON as ``docs/_generated/figures.json``;
``python tools/figures.py`` writes the README's, the index's and the benchmarks page's figures
from it, and a test fails when a page says something else, so the figures are generated, never
retyped.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import platform
from pathlib import Path
from typing import Any

import numpy as np

from ._table import run_bench

#: Where the headline is read: (n, d) of the headline row and of the large row.
HEADLINE = (10_000, 384)
LARGE = (1_000_000, 384)


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _blas() -> str:
    try:
        deps = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{deps.get('name', '?')} {deps.get('version', '')}".strip()
    except Exception:  # pragma: no cover - numpy's build info varies
        return "unknown"


def machine() -> dict[str, Any]:
    """What the figures were measured on: CPU, cores, architecture, Python, NumPy, BLAS, Numba."""
    import numba

    from .. import __version__

    return {
        "cpu": _cpu(),
        "cores": os.cpu_count(),
        "arch": platform.machine(),
        "os": platform.system(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "blas": _blas(),
        "numba": numba.__version__,
        "numba_threads": numba.get_num_threads(),
        "scwo_np": __version__,
    }


def _plain(x: Any) -> Any:
    """JSON-safe: NaN (not measured) becomes None, floats keep 6 significant digits."""
    if isinstance(x, float | np.floating):
        return None if math.isnan(x) else float(f"{float(x):.6g}")
    if isinstance(x, np.integer):
        return int(x)
    return x


def _row(rows: list[dict], n: int, d: int) -> dict | None:
    return next((r for r in rows if r["n"] == n and r["d"] == d), None)


def headline(rows: list[dict]) -> dict[str, Any] | None:
    """The headline ratios picked out of :func:`run_bench`'s rows, or None when they were not run."""
    top, large = _row(rows, *HEADLINE), _row(rows, *LARGE)
    if top is None or large is None:
        return None
    return {
        "n": top["n"],
        "d": top["d"],
        "budget": 3000,
        "lazy_vs_exact": top["speedup"],
        "lazy_over_gemv": top["vs_gemv"],
        "large_n": large["n"],
        "large_lazy_over_gemv": large["vs_gemv"],
    }


def figures(*, quick: bool = False, notes: str = "", progress: bool = False) -> dict[str, Any]:
    """One run of :func:`run_bench` as the figures document (rows, headline, machine, date, notes)."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    rows = [{k: _plain(v) for k, v in r.items()} for r in run_bench(quick=quick, progress=progress)]
    after = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {
        "command": "scwo bench --write-figures FILE" + (" --quick" if quick else ""),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        "machine": machine(),
        "notes": notes,
        # the machine's 1-minute load average before and after the run: how busy it was
        "load_average": None if load is None else [round(load[0], 2), round(after[0], 2)],
        "setup": {
            "embeddings": "Gaussian float32, seed 0",
            "tokens": "uniform 100..200 per chunk",
            "budget": "30% of all tokens at d = 32; 3,000 tokens at d = 384",
            "lam": 0.7,
            "times": "best of several calls after JIT warm-up; E @ q is one BLAS pass, same run",
        },
        "headline": headline(rows),
        "rows": rows,
    }


def write_figures(
    path: str | os.PathLike, *, quick: bool = False, notes: str = "", progress: bool = False
) -> dict:
    """Run :func:`figures` and write it to ``path`` as indented JSON (ending in a newline)."""
    doc = figures(quick=quick, notes=notes, progress=progress)
    Path(path).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return doc
