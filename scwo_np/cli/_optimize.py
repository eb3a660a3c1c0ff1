"""``scwo optimize``: the KB Labs and MoRAG context optimizers over JSONL chunks."""

from __future__ import annotations

import argparse
import sys

from ..optimize import STRATEGIES
from ._io import (
    _json_object_option,
    _read_jsonl,
    _write_jsonl,
)


def _cmd_optimize(args: argparse.Namespace) -> int:
    from ..optimize import ContextChunk, KBContextOptimizer, MoragContextOptimizer

    records = _read_jsonl(args.file)
    try:
        if args.pipeline == "kb":
            opts = _json_object_option(args.options, "--options") if args.options else {}
            if args.token_budget is not None:
                opts["tokenBudget"] = args.token_budget
                opts.setdefault("adaptiveSelection", True)
            if args.max_chunks is not None:
                opts["maxChunks"] = args.max_chunks
            res = KBContextOptimizer().optimize(records, opts)
            _write_jsonl(res.chunks, args.output)
            report = ({"index": r.index, "id": r.id, "step": r.step, "reason": r.reason} for r in res.removed)
            kept = len(res.chunks)
        else:
            chunks = [ContextChunk.from_dict(r, index=k) for k, r in enumerate(records)]
            opt = MoragContextOptimizer(max_tokens=args.max_tokens, response_reserve=args.reserve)
            ctx = opt.optimize(chunks, args.query, args.strategy)
            if args.format == "text":
                sys.stdout.write(opt.format_context(ctx, args.query) + "\n")
            else:
                _write_jsonl(
                    ({"id": c.id, "content": c.content, "priority": c.relevance_score, "source": c.source_document}
                     for c in ctx.chunks),
                    args.output,
                )  # fmt: skip
            report = (
                {"index": r.index, "id": r.id, "step": r.step, "reason": r.reason} for r in ctx.removals
            )
            kept = len(ctx.chunks)
    except (ValueError, TypeError) as exc:
        raise SystemExit(f"scwo: {exc}") from None
    if args.report:
        _write_jsonl(report, args.report)
    sys.stderr.write(f"scwo optimize: kept {kept} of {len(records)} ({args.pipeline})\n")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``scwo optimize`` to the ``scwo`` parser."""
    o = sub.add_parser("optimize", help="run the KB Labs or MoRAG context optimizer on JSONL chunks")
    o.add_argument("file", help="JSONL, one chunk per line (- for stdin)")
    o.add_argument("--pipeline", choices=["kb", "morag"], required=True)
    o.add_argument("--options", help="kb: the ADR's options as JSON")
    o.add_argument("--token-budget", type=int, help="kb: tokenBudget (turns on adaptive selection)")
    o.add_argument("--max-chunks", type=int, help="kb: maxChunks")
    o.add_argument("--query", default="", help="morag: the query")
    o.add_argument("--max-tokens", type=int, default=4000, help="morag: context size (4000)")
    o.add_argument(
        "--reserve",
        type=int,
        default=None,
        help="morag: tokens kept free for the answer (default: 500, at most half of --max-tokens)",
    )
    o.add_argument("--strategy", choices=list(STRATEGIES), default="auto")
    o.add_argument(
        "--format", choices=["jsonl", "text"], default="jsonl", help="morag: text = format_context"
    )
    o.add_argument("-o", "--output", default="-", help="output JSONL (default stdout)")
    o.add_argument("--report", help="write what was removed, and why, as JSONL")
    o.set_defaults(func=_cmd_optimize)
