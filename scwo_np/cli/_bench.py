"""``scwo bench``: the spec's benchmark table and the other benchmarks (--quality, --crush, --mcp, --hsca, ...)."""

from __future__ import annotations

import argparse
import json
import os
import sys

from ..datasets import QUESTION_SETS
from ..embed import EMBEDDERS
from ._io import _out, _output
from ._quality import _bench_quality, _budgets


class _InOrder(argparse.Action):
    """``--sets`` (the last one given) and ``--set`` (each one), also noted in ``set_order`` as given:
    the tables follow the command line."""

    def __call__(self, parser, namespace, values, option_string=None):
        order = [(d, v) for d, v in getattr(namespace, "set_order", []) if d == "set" or self.dest == "set"]
        namespace.set_order = [*order, (self.dest, values)]
        setattr(namespace, self.dest, [*(namespace.set or []), values] if self.dest == "set" else values)


def _cmd_bench(args: argparse.Namespace) -> int:
    from ..bench import format_table, run_bench
    from ..bench._table import cost_aware_rows, format_cost_aware

    if args.cost_aware:
        _out(format_cost_aware(cost_aware_rows()))
        return 0
    if args.quality:
        return _bench_quality(args)
    if args.mcp_proxy:
        from ._mcp import bench_proxy

        return bench_proxy()
    if args.mcp:
        return _bench_mcp()
    if args.crush:
        return _bench_crush()
    if args.hsca:
        return _bench_hsca(args)
    quality = (
        "embedder",
        "sets",
        "set",
        "plot",
        "split",
        "budgets",
        "methods",
        "json",
        "cache",
        "no_cache",
        "peers",
        "token_counter",
    )
    for opt in quality:
        if getattr(args, opt) not in (None, False):
            raise SystemExit(f"scwo bench: --{opt.replace('_', '-')} goes with --quality")
    if args.notes is not None and args.write_figures is None:
        raise SystemExit("scwo bench: --notes goes with --write-figures")
    if args.write_figures is not None:  # the one run the docs' headline figures are generated from
        from ..bench._figures import figures

        if not os.path.isdir(os.path.dirname(os.path.abspath(args.write_figures))):
            raise SystemExit(f"scwo bench: cannot write --write-figures {args.write_figures}: no such folder")
        doc = figures(quick=args.quick, notes=args.notes or "", progress=sys.stderr.isatty())
        try:  # as write_figures writes it, through the one writer of the command line
            with _output(args.write_figures) as fh:
                fh.write(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        except OSError as exc:
            raise SystemExit(
                f"scwo bench: cannot write --write-figures {args.write_figures}: {exc.strerror or exc}"
            ) from None
        rows = [{k: float("nan") if v is None else v for k, v in r.items()} for r in doc["rows"]]
    else:
        rows = run_bench(quick=args.quick, progress=sys.stderr.isatty())
    _out(format_table(rows))
    return 0


def _bench_crush() -> int:
    """``scwo bench --crush``: crush_json(budget=...) on 10,000 log records, beside headroom."""
    from ..bench import crush_bench

    r = crush_bench()
    _out(f"crush_json(budget={r['budget']:,}) on {r['n']:,} log records ({r['input_tokens']:,} tokens)\n")
    _out("| tool | best time | tokens kept | items kept |")
    _out("|---|---|---|---|")
    _out(f"| scwo_np | {r['ours_ms']:.1f} ms | {r['ours_tokens']:,} | {r['ours_items']:,} |")
    if "headroom_ms" in r:  # pragma: no cover - needs the bench extra
        _out(f"| headroom SmartCrusher (lossy) | {r['headroom_ms']:.1f} ms | {r['headroom_tokens']:,} | "
             f"{r['headroom_items']:,} |")  # fmt: skip
        _out(f"\nscwo_np is {r['speedup']:.1f}x faster at the token count headroom's output takes.")
    else:
        _out(
            "\nheadroom-ai is not installed (pip install 'scwo_np[bench]'): no ratio; the ceiling is a tenth."
        )
    return 0


def _bench_mcp() -> int:
    """``scwo bench --mcp``: select_context's round trip over stdio, against the selection alone."""
    from ..bench import mcp_latency

    try:
        r = mcp_latency()
    except ImportError:
        raise SystemExit("scwo: bench --mcp needs the official MCP SDK: pip install 'scwo_np[mcp]'") from None
    _out(f"select_context over stdio: {r['calls']} calls, {r['texts']} texts of about {r['tokens_per_text']} "
         "tokens, the LSA embedder\n")  # fmt: skip
    _out("| round trip, median | round trip, p99 | selection alone, median | protocol share |")
    _out("|---|---|---|---|")
    _out(f"| {r['median_ms']:.1f} ms | {r['p99_ms']:.1f} ms | {r['selection_median_ms']:.1f} ms | "
         f"{100 * r['protocol_share']:.0f}% |")  # fmt: skip
    return 0


def _bench_hsca(args: argparse.Namespace) -> int:
    """``scwo bench --hsca``: HSCA's context against recency and top-k on the bundled FAQ session."""
    from ..bench import format_hsca, hsca_bench

    for opt in ("sets", "set", "plot", "split", "methods", "cache", "no_cache", "peers", "token_counter"):
        if getattr(args, opt) not in (None, False):
            raise SystemExit(f"scwo bench: --{opt.replace('_', '-')} goes with --quality, not --hsca")
    r = hsca_bench(budgets=_budgets(args.budgets), embedder=args.embedder or "lsa")
    _out(json.dumps(r, indent=1) if args.json else format_hsca(r))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    b = sub.add_parser(
        "bench", help="speed against the references (the spec's table) and answers per token (--quality)"
    )
    b.add_argument("--quick", action="store_true", help="small sizes only")
    b.add_argument(
        "--cost-aware",
        action="store_true",
        help="compare plain MMR and the cost-aware modes on the bundled queries",
    )
    b.add_argument(
        "--quality",
        action="store_true",
        help="quality at budget: how much of the known answer each method puts into the context, on the "
        "bundled question sets or your own (--set) (hit, share, parts, fill at each budget)",
    )
    b.add_argument(
        "--mcp", action="store_true", help="time a select_context round trip over stdio (the mcp extra)"
    )
    b.add_argument(
        "--mcp-proxy", action="store_true", help="time scwo mcp proxy's added latency and shrink (mcp extra)"
    )
    b.add_argument(
        "--crush",
        action="store_true",
        help="crush_json to a token ceiling on 10,000 log records, beside headroom's SmartCrusher if installed",
    )
    b.add_argument(
        "--hsca",
        action="store_true",
        help="HSCA's budgeted context against a recency buffer and top-k on the bundled Python FAQ "
        "session (hit at each budget), its latency over 600 turns and ingest_turn's turns per second",
    )
    b.add_argument(
        "--write-figures",
        metavar="FILE",
        help="also write the run as JSON (rows, headline ratios, machine, date): the file the README's "
        "and the docs' headline figures are generated from (docs/_generated/figures.json; python tools/figures.py)",
    )
    b.add_argument(
        "--notes", help="with --write-figures: a note kept in the JSON (e.g. what else loaded the machine)"
    )
    b.add_argument(
        "--embedder", choices=list(EMBEDDERS), help="with --quality or --hsca: lsa (default) or minilm"
    )
    b.add_argument(
        "--sets",
        action=_InOrder,
        help=f"with --quality: comma-separated sets ({', '.join(QUESTION_SETS)}; all)",
    )
    b.add_argument(
        "--set", action=_InOrder, metavar="FILE",
        help="with --quality: your own question set, a JSONL file with one question per line: question, "
        "texts (its candidates), gold (indices into texts); repeatable, and with --sets beside those",
    )  # fmt: skip
    b.add_argument(
        "--plot", metavar="FILE", help="with --quality: also draw hit against budget, one panel per set "
        "(.png or .svg; needs matplotlib, the notebooks extra)",
    )  # fmt: skip
    b.add_argument("--methods", help="with --quality: comma-separated methods, ours or peers' (all of ours)")
    b.add_argument("--peers", action="store_true", help="with --quality: the installed peers too (headroom, "
                   "pyversity, LangChain, LlamaIndex); a line for each one not installed")  # fmt: skip
    b.add_argument(
        "--split", choices=["held_out", "tune", "both"], help="with --quality: which questions (held_out)"
    )
    b.add_argument("--budgets", help="with --quality or --hsca: comma-separated token budgets (200,400,800)")
    b.add_argument(
        "--token-counter", metavar="NAME", help="with --quality: what counts the budgets' tokens "
        "(estimate, the default; tiktoken for OpenAI's cl100k_base, wordpiece, ...)",
    )  # fmt: skip
    b.add_argument("--json", action="store_true", help="with --quality or --hsca: the results as JSON")
    b.add_argument(
        "--cache", help="with --quality: the embedding cache file (default: in the user cache folder)"
    )
    b.add_argument("--no-cache", action="store_true", help="with --quality: embed without a cache")
    b.set_defaults(func=_cmd_bench)
