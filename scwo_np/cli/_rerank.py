"""``scwo rerank``: cut every retrieved set in a Parquet file to a token budget, streamed."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import time
from collections.abc import Iterator
from typing import Any

from ..select import AUTO_BROAD, AUTO_LOOKUP
from ._io import _lam, _output_file, _positive


def _cmd_rerank(args: argparse.Namespace) -> int:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise SystemExit("scwo: rerank needs pyarrow: pip install 'scwo_np[batch]'") from None
    from tqdm.auto import tqdm

    from ..rerank import rerank_parquet

    try:
        total = pq.ParquetFile(args.file).metadata.num_rows
    except FileNotFoundError:
        raise SystemExit(f"scwo: cannot read {args.file}: no such file") from None
    except Exception as exc:  # noqa: BLE001 - not Parquet: say so in one line
        raise SystemExit(f"scwo: {args.file}: not a readable Parquet file ({exc})") from None
    if args.output != "-" and os.path.isfile(args.output) and os.path.samefile(args.output, args.file):
        raise SystemExit(  # (it was replaced by its own selection, 211,203 rows by 31,383)
            f"scwo: -o {args.output} is the input file; write the selection to another file"
        )
    if args.output != "-" and os.path.isdir(args.output) and os.listdir(args.output):
        raise SystemExit(f"scwo: -o {args.output}: the folder is not empty; give a new or an empty folder")
    if args.output == "-" and sys.stdout.isatty():
        raise SystemExit(
            "scwo: -o - writes Parquet (binary) to standard output, which is a terminal; "
            "redirect it (> out.parquet, or | a reader) or give a file name"
        )
    quiet = args.quiet
    bar = tqdm(
        total=total, unit="row", unit_scale=True, desc="scwo rerank", file=sys.stderr,
        disable=quiet or not sys.stderr.isatty(),
    )  # fmt: skip
    t0 = time.perf_counter()
    done = [0]

    def progress(sets: int, rows: int) -> None:
        bar.update(rows - done[0])
        done[0] = rows
        dt = time.perf_counter() - t0
        bar.set_postfix_str(f"{sets} sets, {sets / dt:,.0f} sets/s" if dt > 0 else f"{sets} sets")

    try:
        with _client(args) as client, _destination(args.output) as dst:
            s = rerank_parquet(
                args.file, dst, args.budget, queries=args.queries, batch_rows=args.batch_rows,
                lam=args.lam, cost_aware=args.cost_aware, cost_exponent=args.cost_exponent, keep_all=args.keep_all,
                query_col=args.query_column, embedding_col=args.embedding_column, tokens_col=args.tokens_column,
                query_embedding_col=args.query_embedding_column, progress=progress, client=client,
            )  # fmt: skip
    except ValueError as exc:  # the library names its keyword arguments; the command line has flags
        raise ValueError(str(exc).replace(_PYTHON_NAMES, _FLAG_NAMES)) from None
    finally:
        bar.close()
    dt = time.perf_counter() - t0
    if not quiet:
        share = s["tokens_kept"] / max(s["tokens_offered"], 1)
        sys.stderr.write(
            f"scwo rerank: {s['sets']:,} sets, {s['candidates']:,} candidates, kept {s['kept']:,}; tokens kept "
            f"{s['tokens_kept']:,} of {s['tokens_offered']:,} offered ({share:.1%}); {dt:.2f} s "
            f"({s['sets'] / max(dt, 1e-9):,.0f} sets/s)"
            + (
                _auto_summary(s["broad_sets"], s["sets"] - s["broad_sets"])
                if args.lam == "auto"
                else f"; lam {args.lam:g}"
            )
            + "\n"
        )
    return 0


_PYTHON_NAMES = "(query_col=, embedding_col=, tokens_col=)"
_FLAG_NAMES = "(--query-column, --embedding-column, --tokens-column)"


@contextlib.contextmanager
def _destination(output: str) -> Iterator[str]:
    """Where ``rerank_parquet`` writes ``-o``: a directory of parts as given; a file through the
    command line's one writer (a symlink's target, the existing file's mode, a device or ``-`` for
    standard output through a temporary file: the library writes Parquet under a name)."""
    from ..rerank._parquet import is_dataset_target

    target = os.path.realpath(output) if os.path.islink(output) else output
    if output != "-" and is_dataset_target(target):
        yield target
        return
    with _output_file(output, suffix=".parquet", direct=False) as name:
        yield name


@contextlib.contextmanager
def _client(args: argparse.Namespace) -> Iterator[Any]:
    """None (in process), a Client of a new LocalCluster (``--workers``) or of ``--scheduler``."""
    if args.workers is None and args.scheduler is None:
        yield None
        return
    try:
        import distributed
    except ImportError:
        raise SystemExit(
            "scwo: rerank --workers/--scheduler needs dask: pip install 'scwo_np[batch]'"
        ) from None
    with contextlib.ExitStack() as stack:
        if args.scheduler is not None:
            try:
                client = distributed.Client(args.scheduler, timeout=args.connect_timeout)
            except (OSError, TimeoutError) as exc:
                raise SystemExit(
                    f"scwo: cannot reach the Dask scheduler at {args.scheduler} ({exc})"
                ) from None
        else:
            # ":0": the scheduler's HTTP server takes a free port (8787 may be another cluster's)
            cluster = stack.enter_context(
                distributed.LocalCluster(  # (its workers' logs: a failed task's traceback was 10 lines)
                    n_workers=args.workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=":0",
                    silence_logs=logging.CRITICAL,
                )
            )
            client = distributed.Client(cluster)
        stack.enter_context(client)
        yield client


def register(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser(
        "rerank",
        help="cut every retrieved set in a Parquet file to a token budget (budgeted MMR, streamed)",
        description=(
            "Candidates in long format, one row per candidate: query_id, embedding (fixed-size list of "
            "float32), tokens, and any other columns (passed through); other names for those columns "
            "with --query-column, --embedding-column, --tokens-column. The file must be clustered by "
            "query_id. Output: the selected rows plus rank and gain, as Parquet: a file, a directory "
            "of part files (-o DIR/), or standard output (-o -, when it is not a terminal)."
        ),
    )
    r.add_argument("file", help="candidates Parquet file")
    r.add_argument(
        "--queries", help="queries Parquet file (query_id, embedding); else a query_embedding column"
    )
    r.add_argument("--budget", type=int, required=True, help="token budget of every set")
    r.add_argument("--lam", type=_lam, default=0.7, help="relevance weight in [0, 1] (0.7), or auto per set")
    r.add_argument("--cost-aware", action="store_true", help="prefer shorter chunks (see scwo select)")
    r.add_argument("--cost-exponent", type=float, default=0.25, help="cost weight for --cost-aware (0.25)")
    r.add_argument("--keep-all", action="store_true", help="keep every row, with a boolean 'selected' column")
    r.add_argument(
        "--batch-rows", type=int, default=None, help="rows read at a time (default: 16 MB of rows)"
    )
    where = r.add_mutually_exclusive_group()
    where.add_argument(
        "--workers", type=_positive, metavar="N", help="run on a local Dask cluster of N worker processes"
    )
    where.add_argument(
        "--scheduler", metavar="ADDR",
        help="run on the Dask cluster at ADDR (tcp://host:8786); its workers must be able to read FILE",
    )  # fmt: skip
    r.add_argument("--connect-timeout", type=float, default=30.0, help=argparse.SUPPRESS)
    cols = r.add_argument_group("column names (the defaults in brackets)")
    cols.add_argument("--query-column", default="query_id", metavar="NAME", help="the set's id [query_id]")
    cols.add_argument(
        "--embedding-column", default="embedding", metavar="NAME",
        help="each candidate's embedding, and the queries file's [embedding]",
    )  # fmt: skip
    cols.add_argument(
        "--tokens-column", default="tokens", metavar="NAME", help="each candidate's token count [tokens]"
    )
    cols.add_argument(
        "--query-embedding-column", default="query_embedding", metavar="NAME",
        help="the query's embedding on each candidate row, without --queries [query_embedding]",
    )  # fmt: skip
    r.add_argument(
        "-o", "--output", required=True,
        help="output Parquet file (written whole or not at all; a symlink's target is written), a "
        "directory DIR/ of part files, or - for standard output (binary: not to a terminal)",
    )  # fmt: skip
    r.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no summary line")
    r.set_defaults(func=_cmd_rerank)


def _auto_summary(broad: int, lookup: int) -> str:
    """``; lam auto: 0.9 for 12 sets, 0.7 for 4,988``: the values ``--lam auto`` chose, a value no set got left out."""
    parts = [f"{lam:g} for {n:,}" for lam, n in ((AUTO_BROAD, broad), (AUTO_LOOKUP, lookup)) if n]
    return f"; lam auto: {parts[0]} sets" + "".join(f", {p}" for p in parts[1:]) if parts else ""
