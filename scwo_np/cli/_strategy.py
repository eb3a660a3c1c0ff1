"""``scwo select --strategy``: a strategy of the registry other than MMR, with the options it takes."""

from __future__ import annotations

import argparse
import inspect

from ..select import STRATEGIES, select_by_strategy


def _by_strategy(args: argparse.Namespace, E, q, costs, lam):
    """``--strategy`` other than mmr: :func:`select_by_strategy` with the options it takes."""
    params = inspect.signature(STRATEGIES[args.strategy]).parameters
    opts = {}
    if "lam" in params:
        opts["lam"] = 0.7 if lam == "auto" else lam
    elif args.lam != 0.7:
        raise ValueError(f"--strategy {args.strategy} takes no --lam; leave it out.")
    if args.cost_aware:
        if "cost_exponent" not in params:
            raise ValueError(f"--strategy {args.strategy} has no --cost-aware mode.")
        opts["cost_exponent"] = args.cost_exponent
    return select_by_strategy(E, q, costs, args.budget, strategy=args.strategy, return_gains=True, **opts)
