"""The ``scwo`` parser and :func:`main`: one sub-command per module of this package."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings

from ..select import METHODS, ORDERS
from ..tokens import COUNTERS
from .crush import _cmd_crush
from .dedup import _cmd_dedup
from .hsca import add_hsca
from .optimize import _cmd_optimize
from .rerank import add_parser as _add_rerank
from .select import _cmd_bench, _cmd_demo, _cmd_sample, _cmd_select


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="scwo", description="Decide what goes into an LLM's context window.")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("select", help="budgeted MMR selection over JSONL or .npz chunks")
    s.add_argument("file", help="JSONL with one chunk per line (- for stdin), or .npz with embeddings, costs")
    g = s.add_mutually_exclusive_group(required=True)
    g.add_argument("--query", help="the question as text (embedded with --embedder)")
    g.add_argument("--query-embedding", help="query embedding as a JSON list")
    g.add_argument("--query-index", type=int, help="use chunk N's embedding as the query")
    s.add_argument(
        "--budget", type=int, required=True, help="token budget (in the --tokens counter's tokens)"
    )
    s.add_argument("--lam", type=float, default=0.7, help="relevance/diversity trade-off in [0, 1] (0.7)")
    s.add_argument("--method", choices=METHODS, default="auto")
    s.add_argument(
        "--cost-aware", action="store_true", help="prefer shorter chunks (never fills less than plain MMR)"
    )
    s.add_argument(
        "--cost-exponent",
        type=float,
        default=0.25,
        help="cost weight in (0, 1] for --cost-aware (0.25; 1 = per token)",
    )
    s.add_argument("--embedding-field", default="embedding")
    s.add_argument("--tokens-field", default="tokens")
    s.add_argument("--text-field", default="text", help="with --query: the chunks' text (text)")
    s.add_argument(
        "--embedder",
        choices=["lsa", "minilm"],
        help="with --query: lsa (TF-IDF + SVD over the file, the default for chunks without embeddings) "
        "or minilm (all-MiniLM-L6-v2, the embed extra; needed when the chunks carry MiniLM embeddings)",
    )
    s.add_argument(
        "--tokens",
        choices=list(COUNTERS),
        help="with --query: count tokens with this counter (default: the --tokens-field when every "
        "chunk has it, else estimate)",
    )
    s.add_argument("--order", choices=list(ORDERS), default="pick", help="layout of the output (pick)")
    s.add_argument(
        "--cache", help="with --query: the embedding cache file (default: in the user cache folder)"
    )
    s.add_argument("--no-cache", action="store_true", help="with --query: embed without a cache")
    s.add_argument("--annotate", action="store_true", help="add a _scwo field: rank, gain, relevance, tokens")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress bar or summary on stderr")
    s.add_argument("-o", "--output", default="-", help="output JSONL (default stdout)")
    s.set_defaults(func=_cmd_select)

    dd = sub.add_parser("dedup", help="remove near-duplicates from JSONL records (kept records to stdout)")
    dd.add_argument("file", help="JSONL, one record per line (- for stdin)")
    dd.add_argument("--method", choices=["jaccard", "sequence", "cosine", "minhash"], default="jaccard")
    dd.add_argument("--threshold", type=float, default=None, help="similarity threshold (method's default)")
    dd.add_argument("--text-field", default="text")
    dd.add_argument("--score-field", default="score", help="keep the best-scoring of each group")
    dd.add_argument("--entities-field", default="entities", help="for --method sequence")
    dd.add_argument("--embedding-field", default="embedding", help="for --method cosine")
    dd.add_argument("-o", "--output", default="-", help="output JSONL (default stdout)")
    dd.add_argument("--report", help="write dropped records (index, duplicate_of, similarity) as JSONL")
    dd.set_defaults(func=_cmd_dedup)

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
    o.add_argument(
        "--strategy", choices=["auto", "relevance", "temporal", "topical", "hierarchical"], default="auto"
    )
    o.add_argument(
        "--format", choices=["jsonl", "text"], default="jsonl", help="morag: text = format_context"
    )
    o.add_argument("-o", "--output", default="-", help="output JSONL (default stdout)")
    o.add_argument("--report", help="write what was removed, and why, as JSONL")
    o.set_defaults(func=_cmd_optimize)

    c = sub.add_parser(
        "crush",
        help="shrink a JSON array to the items an LLM will need (SmartCrusher); get dropped items back",
        description="Keep at most N items of a JSON array (or of the largest array inside an object, JSON "
        "Lines, concatenated JSON): errors, anomalies, query matches and protected items first, then "
        "position anchors. --marker says what was dropped and stores the whole array; --retrieve KEY "
        "gives items back.",
    )
    c.add_argument("file", nargs="?", help="the tool output (- for stdin)")
    c.add_argument("--max-items", help="keep at most N items, or 'auto' (the data decides)")
    c.add_argument(
        "--bias",
        default="balanced",
        help="with --max-items auto: conservative, balanced, aggressive, or a share",
    )
    c.add_argument("--upper", type=int, default=100, help="with --max-items auto: at most this many (100)")
    c.add_argument("--query", default="", help="the user's request (position intents, terms to keep)")
    c.add_argument("--path", help="where the array is inside an object, e.g. data.items")
    c.add_argument(
        "--pattern", choices=["search_results", "logs", "time_series", "generic"], help="override detection"
    )
    c.add_argument(
        "--strategy", choices=["dynamic", "static"], default="dynamic", help="static = first 3 + last 2"
    )
    c.add_argument(
        "--protect",
        action="append",
        metavar="REGEX",
        help="always keep items with a value matching REGEX (repeatable)",
    )
    c.add_argument(
        "--keep-protected", action="store_true", help="keep every protected item even beyond --max-items"
    )
    c.add_argument(
        "--marker", action="store_true", help="append an object saying what was dropped; stores the array"
    )
    c.add_argument("--store", help="the store file (default: crush_store.sqlite in the user cache folder)")
    c.add_argument("--no-store", action="store_true", help="with --marker: do not store the array")
    c.add_argument("--lossless", action="store_true", help="drop nothing: write the array in columnar form")
    c.add_argument("--expand", action="store_true", help="turn --lossless output back into the array")
    c.add_argument(
        "--tokens",
        default="estimate",
        help="with --report: the token counter (estimate, wordpiece, tiktoken)",
    )
    c.add_argument(
        "--retrieve", metavar="KEY", help="print items of the array stored under KEY (a marker's key)"
    )
    c.add_argument("--range", help="with --retrieve: positions START:STOP (0-based, STOP excluded)")
    c.add_argument(
        "--where",
        action="append",
        metavar="FIELD=VALUE",
        help="with --retrieve: items whose FIELD equals VALUE (repeatable)",
    )
    c.add_argument("--report", action="store_true", help="print what was decided to stderr")
    c.add_argument("-o", "--output", default="-", help="output JSON (default stdout)")
    c.set_defaults(func=_cmd_crush)

    d = sub.add_parser("demo", help="select from the bundled Python-docs sample")
    d.add_argument(
        "--query",
        default="0",
        help="a bundled query's number (0-31) or a question as text (default 0); "
        "text is embedded with all-MiniLM-L6-v2 when the `embed` extra is installed, "
        "otherwise the nearest bundled query stands in",
    )
    d.add_argument("--budget", type=int, default=1000)
    d.add_argument("--lam", type=float, default=0.7)
    d.set_defaults(func=_cmd_demo)

    sm = sub.add_parser(
        "sample", help="write the bundled Python-docs chunks as JSONL (id, source, text, tokens, embedding)"
    )
    sm.add_argument("--query", type=int, help="add `score`: each chunk's cosine to bundled query N (0-31)")
    sm.add_argument("-n", type=int, help="only the first N chunks")
    sm.add_argument("-o", "--output", default="-", help="output JSONL (default stdout)")
    sm.add_argument(
        "--retrieved-sets", action="store_true",
        help="write Parquet instead: each bundled query's --top-k chunks, one row per candidate (for scwo rerank)",
    )  # fmt: skip
    sm.add_argument("--top-k", type=int, default=50, help="candidates per query with --retrieved-sets (50)")
    sm.set_defaults(func=_cmd_sample)

    add_hsca(sub)

    _add_rerank(sub)

    b = sub.add_parser("bench", help="reproduce the spec's benchmark table")
    b.add_argument("--quick", action="store_true", help="small sizes only")
    b.add_argument(
        "--cost-aware",
        action="store_true",
        help="compare plain MMR and the cost-aware modes on the bundled queries",
    )
    b.set_defaults(func=_cmd_bench)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns its exit status.

    Like a Unix tool: bad input (a malformed file or argument) is one line on
    stderr and status 2, any other failure (a file that cannot be written, a
    full disk) one line and status 1, never a traceback; a closed output pipe
    (``scwo select ... | head -1``) ends the command quietly.
    """
    args = build_parser().parse_args(argv)

    def warn(message, category, filename, lineno, file=None, line=None):
        sys.stderr.write(f"scwo {args.command}: warning: {message}\n")

    try:
        with warnings.catch_warnings():
            warnings.showwarning = warn
            return args.func(args)
    except SystemExit as exc:  # our own "scwo: ..." messages are about the input
        if isinstance(exc.code, str):
            msg = exc.code.rstrip()
            if msg.startswith("scwo: "):  # one prefix for every message: "scwo CMD: ..."
                msg = f"scwo {args.command}: " + msg[len("scwo: ") :]
            sys.stderr.write(msg + "\n")
            return 2
        raise
    except (ValueError, TypeError, RecursionError, UnicodeError) as exc:
        msg = "input nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        sys.stderr.write(f"scwo {args.command}: {msg}\n")
        return 2
    except BrokenPipeError:
        # Whoever read our output has gone: stop writing, quietly.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as exc:
        where = f" {exc.filename}" if exc.filename else ""
        sys.stderr.write(f"scwo {args.command}: cannot use{where}: {exc.strerror or exc}\n")
        return 1
    except KeyboardInterrupt:
        return 130
