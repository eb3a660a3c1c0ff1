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
        if args.lam == "auto":  # MMR's rule: the strategy's lam means something else
            raise ValueError(
                f"--lam auto chooses MMR's trade-off; --strategy {args.strategy} takes a number in [0, 1] "
                "(or leave --lam out)."
            )
        opts["lam"] = lam
    elif args.lam != 0.7:
        raise ValueError(f"--strategy {args.strategy} takes no --lam; leave it out.")
    if args.cost_aware:
        if "cost_exponent" not in params:
            raise ValueError(f"--strategy {args.strategy} has no --cost-aware mode.")
        opts["cost_exponent"] = args.cost_exponent
    return select_by_strategy(E, q, costs, args.budget, strategy=args.strategy, return_gains=True, **opts)
