"""``scwo bench --crush``: crush_json to a token ceiling on log records, beside headroom's SmartCrusher.

The records are the asv anchoring benchmark's: ``n`` log-like objects of six fields, 2%
errors and a few latency spikes, seeded.  When headroom-ai is installed (the ``bench``
extra) its SmartCrusher runs lossy (it drops rows, as ours does) on the same text first, and
ours gets the token count its output takes as ``budget``; the ratio of the best times
of interleaved calls is the speedup.  Without headroom, ours runs at a ceiling of a tenth
of the input.
"""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np

from ..anchor import CrushStore, crush_json
from ..tokens import estimate_tokens
from ..validation import check_int

__all__ = ["crush_bench"]

QUERY = "latest errors in svc3"


def log_records(n: int, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` log-like records: id, timestamp, level (2% ERROR), latency (a few spikes), service, message."""
    rng = np.random.default_rng(seed)
    level = rng.choice(["INFO", "WARN", "ERROR"], n, p=[0.9, 0.08, 0.02])
    latency = rng.gamma(2.0, 20.0, n)
    latency[rng.choice(n, max(1, n // 200), replace=False)] *= 40
    return [
        {
            "id": f"req-{i:06d}",
            "timestamp": f"2024-01-01T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}",
            "level": str(level[i]),
            "latency_ms": round(float(latency[i]), 2),
            "service": f"svc{int(rng.integers(0, 8))}",
            "message": f"handled request {i}",
        }
        for i in range(n)
    ]


def _tokens(text: str) -> int:
    return int(estimate_tokens([text], rounding="ceil")[0])


def _kept(text: str) -> int:
    items = json.loads(text)
    return sum(1 for x in items if isinstance(x, dict) and not set(x) & {"_omitted", "_ccr_dropped"})


def crush_bench(n: int = 10_000, rounds: int = 7) -> dict[str, Any]:
    """Times and sizes of ``crush_json(budget=...)`` on ``n`` log records, and headroom's if installed.

    Parameters
    ----------
    n : int
        Records, 1 to 10,000,000.
    rounds : int
        Interleaved timed calls of each (the best is kept), 1 to 1,000.

    Returns
    -------
    dict
        ``n``, ``input_tokens``, ``budget``, ``ours_ms``, ``ours_tokens``, ``ours_items``,
        and, with headroom, ``headroom_ms``, ``headroom_tokens``, ``headroom_items`` and ``speedup``.

    Examples
    --------
    >>> r = crush_bench(n=500, rounds=1)
    >>> r["ours_tokens"] <= r["budget"] < r["input_tokens"]
    True
    """
    n = check_int(n, name="n", low=1, high=10_000_000)
    rounds = check_int(rounds, name="rounds", low=1, high=1_000)
    text = json.dumps(log_records(n))
    out: dict[str, Any] = {"n": n, "input_tokens": _tokens(text)}
    try:
        from headroom.transforms.smart_crusher import SmartCrusher, SmartCrusherConfig
    except ImportError:
        theirs = None
        out["budget"] = out["input_tokens"] // 10
    else:  # pragma: no cover - needs the bench extra
        crusher = SmartCrusher(SmartCrusherConfig(max_items_after_crush=30, lossless_min_savings_ratio=1.0))

        def theirs():
            return crusher.crush(text, QUERY).compressed

        h = theirs()
        out.update(budget=_tokens(h), headroom_tokens=_tokens(h), headroom_items=_kept(h))
    store = CrushStore(":memory:")

    def ours():
        return crush_json(text, budget=out["budget"], store=store, query=QUERY)

    o = ours()
    out.update(ours_tokens=_tokens(o), ours_items=_kept(o))
    best_o = best_t = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        ours()
        best_o = min(best_o, time.perf_counter() - t)
        if theirs is not None:  # pragma: no cover - needs the bench extra
            t = time.perf_counter()
            theirs()
            best_t = min(best_t, time.perf_counter() - t)
    out["ours_ms"] = 1e3 * best_o
    if theirs is not None:  # pragma: no cover - needs the bench extra
        out.update(headroom_ms=1e3 * best_t, speedup=best_t / best_o)
    store.close()
    return out
