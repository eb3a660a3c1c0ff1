"""``scwo hsca-eval``: the HSCA evals on the bundled test sets."""

from __future__ import annotations

import argparse
import json
import sys
import time

from ._io import (
    _out,
)


def _cmd_hsca_eval(args: argparse.Namespace) -> int:
    from ..hsca import evals

    try:
        which = sorted({int(x) for x in args.evals.split(",")}) if args.evals else None
    except ValueError:
        raise SystemExit(f"scwo: --evals takes numbers like 1,2,5; got {args.evals!r}") from None
    results = []
    numbers = which or sorted(evals.EVALS)
    from tqdm.auto import tqdm

    bar = tqdm(total=len(numbers), desc="scwo hsca-eval", unit="eval", disable=not sys.stderr.isatty())
    try:
        for k in numbers:
            t0 = time.perf_counter()
            (r,) = evals.run([k], seed=args.seed, cases=args.cases)
            results.append((r, time.perf_counter() - t0))
            bar.update(1)
    except ValueError as exc:
        raise SystemExit(f"scwo: {exc}") from None
    finally:
        bar.close()
    if args.json:
        for r, secs in results:
            rec = {"eval": r.name, "pass_rate": r.pass_rate, "criterion": r.criterion, "met": r.passed,
                   "cases": r.cases, "seconds": round(secs, 3), **r.detail}  # fmt: skip
            _out(json.dumps(rec))
    else:
        _out(f"{'eval':<38} {'pass rate':>9} {'criterion':>9}  {'':7} {'cases':>5} {'time':>6}  details")
        for r, secs in results:
            detail = ", ".join(
                f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in r.detail.items()
            )
            mark = "met" if r.passed else "NOT met"
            _out(
                f"{r.name:<38} {r.pass_rate:>9.1%} {r.criterion:>9.0%}  {mark:<7} {r.cases:>5} {secs:>5.1f}s  {detail}"
            )
    return 1 if args.strict and not all(r.passed for r, _ in results) else 0
