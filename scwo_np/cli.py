"""The ``scwo`` command line: ``select``, ``demo`` and ``bench``."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from importlib import resources

import numpy as np

from . import coverage, mmr_select, topk_relevance, truncate
from .selection import METHODS


def _out(line: str = "") -> None:
    sys.stdout.write(line + "\n")


def _read_chunks(path: str, emb_field: str, tok_field: str):
    """Records, embeddings and costs from JSONL (``-`` = stdin) or ``.npz``."""
    if path.endswith(".npz"):
        with np.load(path) as z:
            E, c = z["embeddings"], z["costs"]
        return [{"index": i, "tokens": int(t)} for i, t in enumerate(c)], E, c
    records = []
    with contextlib.nullcontext(sys.stdin) if path == "-" else open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise SystemExit(f"scwo: {path}:{lineno}: not valid JSON ({exc.msg})") from None
            for f in (emb_field, tok_field):
                if f not in rec:
                    raise SystemExit(f"scwo: {path}:{lineno}: missing field {f!r}")
            records.append(rec)
    if not records:
        return [], np.empty((0, 1)), np.empty(0, dtype=np.int64)
    return (
        records,
        np.array([r[emb_field] for r in records], dtype=np.float64),
        [r[tok_field] for r in records],
    )


def _cmd_select(args: argparse.Namespace) -> int:
    records, E, costs = _read_chunks(args.file, args.embedding_field, args.tokens_field)
    if args.query_index is not None:
        if not 0 <= args.query_index < len(records):
            raise SystemExit(f"scwo: --query-index must be in [0, {len(records)}); got {args.query_index}")
        q = E[args.query_index]
    else:
        q = np.array(json.loads(args.query_embedding), dtype=np.float64)
    try:
        idx = mmr_select(
            E, q, costs, args.budget, lam=args.lam, method=args.method, cost_aware=args.cost_aware
        )
    except (ValueError, TypeError) as exc:
        raise SystemExit(f"scwo: {exc}") from None
    lines = (json.dumps(records[int(i)], ensure_ascii=False) + "\n" for i in idx)
    if args.output == "-":
        sys.stdout.writelines(lines)
    else:
        with open(args.output, "w", encoding="utf-8") as out:
            out.writelines(lines)
    return 0


def _load_sample():
    base = resources.files("scwo_np.bundled")
    with resources.as_file(base / "pydoc_sample.npz") as p, np.load(p) as z:
        E, costs, QE = z["embeddings"], z["costs"], z["query_embeddings"]
    texts = [json.loads(x) for x in (base / "pydoc_sample.jsonl").read_text(encoding="utf-8").splitlines()]
    queries = [json.loads(x) for x in (base / "pydoc_queries.jsonl").read_text(encoding="utf-8").splitlines()]
    return E, costs, QE, texts, queries


def _cmd_demo(args: argparse.Namespace) -> int:
    E, costs, QE, texts, queries = _load_sample()
    qi = args.query % len(queries)
    q = QE[qi]
    t0 = time.perf_counter()
    idx = mmr_select(E, q, costs, args.budget, lam=args.lam)
    t1 = time.perf_counter()
    mmr_select(E, q, costs, args.budget, lam=args.lam)
    t2 = time.perf_counter()
    _out(f"Query: {queries[qi]['text']!r}  (from {queries[qi]['source']})")
    _out(
        f"Corpus: {len(E)} chunks of the Python docs, {int(costs.sum())} tokens; budget {args.budget} tokens"
    )
    _out(f"\nSelected {len(idx)} chunks, {int(costs[idx].sum())} tokens (lam={args.lam}):")
    for i in idx:
        t = texts[int(i)]
        _out(f"  [{int(i):4d}] {t['source']:<28} {costs[i]:4d} tok  {t['text'][:70]}...")
    tr = truncate(costs, args.budget)
    tk = topk_relevance(E, q, costs, args.budget)
    _out("\nCoverage (0.6 relevance + 0.4 diversity):")
    _out(f"  MMR        {coverage(E[idx], q):.4f}")
    _out(f"  top-k      {coverage(E[tk], q):.4f}")
    _out(f"  truncation {coverage(E[tr], q):.4f}")
    _out(f"\nTime: first call {1e3 * (t1 - t0):.1f} ms (includes JIT load), then {1e3 * (t2 - t1):.3f} ms")
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from .bench import format_table, run_bench

    rows = run_bench(quick=args.quick, progress=sys.stderr.isatty())
    _out(format_table(rows))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="scwo", description="Decide what goes into an LLM's context window.")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("select", help="budgeted MMR selection over JSONL or .npz chunks")
    s.add_argument("file", help="JSONL with one chunk per line (- for stdin), or .npz with embeddings, costs")
    g = s.add_mutually_exclusive_group(required=True)
    g.add_argument("--query-embedding", help="query embedding as a JSON list")
    g.add_argument("--query-index", type=int, help="use chunk N's embedding as the query")
    s.add_argument("--budget", type=int, required=True, help="token budget")
    s.add_argument("--lam", type=float, default=0.7, help="relevance/diversity trade-off in [0, 1] (0.7)")
    s.add_argument("--method", choices=METHODS, default="auto")
    s.add_argument("--cost-aware", action="store_true", help="rank by value per token")
    s.add_argument("--embedding-field", default="embedding")
    s.add_argument("--tokens-field", default="tokens")
    s.add_argument("-o", "--output", default="-", help="output JSONL (default stdout)")
    s.set_defaults(func=_cmd_select)

    d = sub.add_parser("demo", help="select from the bundled Python-docs sample")
    d.add_argument("--query", type=int, default=0, help="which bundled query (0)")
    d.add_argument("--budget", type=int, default=1000)
    d.add_argument("--lam", type=float, default=0.7)
    d.set_defaults(func=_cmd_demo)

    b = sub.add_parser("bench", help="reproduce the spec's benchmark table")
    b.add_argument("--quick", action="store_true", help="small sizes only")
    b.set_defaults(func=_cmd_bench)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
