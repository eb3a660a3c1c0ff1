"""The ``scwo`` command line: ``select``, ``dedup``, ``optimize``, ``crush``, ``hsca-eval``, ``demo``, ``bench``."""

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


def _read_jsonl(path: str, required: tuple[str, ...] = ()) -> list[dict]:
    """One JSON object per line (``-`` = stdin); blank lines skipped; errors name the line."""
    records = []
    try:
        fh_ctx = contextlib.nullcontext(sys.stdin) if path == "-" else open(path, encoding="utf-8")
    except OSError as exc:
        raise SystemExit(f"scwo: cannot read {path}: {exc.strerror}") from None
    with fh_ctx as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise SystemExit(f"scwo: {path}:{lineno}: not valid JSON ({exc.msg})") from None
            if not isinstance(rec, dict):
                raise SystemExit(f"scwo: {path}:{lineno}: expected a JSON object, got {type(rec).__name__}")
            for f in required:
                if f not in rec:
                    raise SystemExit(f"scwo: {path}:{lineno}: missing field {f!r}")
            records.append(rec)
    return records


def _write_jsonl(records, path: str) -> None:
    lines = (json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    if path == "-":
        sys.stdout.writelines(lines)
    else:
        with open(path, "w", encoding="utf-8") as out:
            out.writelines(lines)


def _read_chunks(path: str, emb_field: str, tok_field: str):
    """Records, embeddings and costs from JSONL (``-`` = stdin) or ``.npz``."""
    if path.endswith(".npz"):
        with np.load(path) as z:
            E, c = z["embeddings"], z["costs"]
        return [{"index": i, "tokens": int(t)} for i, t in enumerate(c)], E, c
    records = _read_jsonl(path, (emb_field, tok_field))
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
    _write_jsonl((records[int(i)] for i in idx), args.output)
    return 0


def _field(rec: dict, names: list[str], lineno: int, path: str, default=...):
    for n in names:
        if n in rec:
            return rec[n]
    if default is not ...:
        return default
    raise SystemExit(f"scwo: {path}: record {lineno}: missing field {names[0]!r}")


def _cmd_dedup(args: argparse.Namespace) -> int:
    from .dedup import dedup

    records = _read_jsonl(args.file)
    kw: dict = {"method": args.method, "threshold": args.threshold}
    if args.method == "cosine":
        kw["embeddings"] = np.array(
            [_field(r, [args.embedding_field], k, args.file) for k, r in enumerate(records)]
        )
    else:
        kw["texts"] = [_field(r, [args.text_field, "content"], k, args.file) for k, r in enumerate(records)]
    if any(args.score_field in r for r in records):
        kw["scores"] = [_field(r, [args.score_field], k, args.file, 0.0) for k, r in enumerate(records)]
    if args.method == "sequence" and any(args.entities_field in r for r in records):
        kw["entities"] = [_field(r, [args.entities_field], k, args.file, []) for k, r in enumerate(records)]
    try:
        res = dedup(**kw) if records else None
    except (ValueError, TypeError) as exc:
        raise SystemExit(f"scwo: {exc}") from None
    keep = [] if res is None else res.keep.tolist()
    _write_jsonl((records[i] for i in keep), args.output)
    if res is not None and args.report:
        _write_jsonl(
            (
                {"index": d, "duplicate_of": k, "similarity": s}
                for d, k, s in zip(
                    res.dropped.tolist(), res.duplicate_of.tolist(), res.similarity.tolist(), strict=True
                )
            ),
            args.report,
        )
    sys.stderr.write(f"scwo dedup: kept {len(keep)} of {len(records)} ({args.method})\n")
    return 0


def _cmd_optimize(args: argparse.Namespace) -> int:
    from .optimize import ContextChunk, KBContextOptimizer, MoragContextOptimizer

    records = _read_jsonl(args.file)
    try:
        if args.pipeline == "kb":
            opts = json.loads(args.options) if args.options else {}
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
            chunks = [
                ContextChunk(
                    id=str(_field(r, ["id"], k, args.file, k)),
                    content=_field(r, ["content", "text"], k, args.file),
                    relevance_score=float(_field(r, ["relevance_score", "score"], k, args.file)),
                    source_document=str(
                        _field(r, ["source_document", "source", "path"], k, args.file, "unknown")
                    ),
                    entities=list(_field(r, ["entities"], k, args.file, [])),
                    relationships=list(_field(r, ["relationships"], k, args.file, [])),
                    timestamp=_field(r, ["timestamp"], k, args.file, None),
                )
                for k, r in enumerate(records)
            ]
            opt = MoragContextOptimizer(max_tokens=args.max_tokens)
            ctx = opt.optimize(chunks, args.query, args.strategy)
            if args.format == "text":
                sys.stdout.write(opt.format_context(ctx, args.query) + "\n")
            else:
                _write_jsonl(
                    ({"id": c.id, "content": c.content, "priority": c.relevance_score, "source": c.source_document}
                     for c in ctx.chunks),
                    args.output,
                )  # fmt: skip
            report = ({"id": i, "step": "token_budget"} for i in ctx.removed_chunks)
            kept = len(ctx.chunks)
    except (ValueError, TypeError) as exc:
        raise SystemExit(f"scwo: {exc}") from None
    if args.report:
        _write_jsonl(report, args.report)
    sys.stderr.write(f"scwo optimize: kept {kept} of {len(records)} ({args.pipeline})\n")
    return 0


def _cmd_crush(args: argparse.Namespace) -> int:
    from .anchor import AnchorConfig, crush, crush_json

    try:
        with (
            contextlib.nullcontext(sys.stdin) if args.file == "-" else open(args.file, encoding="utf-8") as fh
        ):
            text = fh.read()
    except OSError as exc:
        raise SystemExit(f"scwo: cannot read {args.file}: {exc.strerror}") from None
    cfg = AnchorConfig(strategy=args.strategy)
    try:
        out = crush_json(text, args.max_items, query=args.query, pattern=args.pattern, config=cfg)
        if args.report:
            _, rep = crush(json.loads(text), args.max_items, query=args.query, pattern=args.pattern,
                           config=cfg, report=True)  # fmt: skip
            sys.stderr.write(
                f"scwo crush: kept {len(rep.kept)} of {rep.n}; pattern {rep.pattern}; anchors front/back/middle "
                f"{rep.anchor_slots}; errors {rep.errors}, anomalies {rep.anomalies}, query matches "
                f"{rep.query_matches}, must-keep dropped {rep.must_keep_dropped}\n"
            )
    except (ValueError, TypeError) as exc:
        raise SystemExit(f"scwo: {exc}") from None
    if args.output == "-":
        sys.stdout.write(out + "\n")
    else:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(out + "\n")
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


def _cmd_hsca_eval(args: argparse.Namespace) -> int:
    from .hsca import evals

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
        "--strategy", choices=["auto", "relevance", "temporal", "topical", "hierarchical"], default="auto"
    )
    o.add_argument(
        "--format", choices=["jsonl", "text"], default="jsonl", help="morag: text = format_context"
    )
    o.add_argument("-o", "--output", default="-", help="output JSONL (default stdout)")
    o.add_argument("--report", help="write what was removed, and why, as JSONL")
    o.set_defaults(func=_cmd_optimize)

    c = sub.add_parser("crush", help="shrink a JSON array to the items an LLM will need (SmartCrusher)")
    c.add_argument("file", help="a JSON array (- for stdin)")
    c.add_argument("--max-items", type=int, required=True, help="keep at most N items")
    c.add_argument("--query", default="", help="the user's request (position intents, terms to keep)")
    c.add_argument(
        "--pattern", choices=["search_results", "logs", "time_series", "generic"], help="override detection"
    )
    c.add_argument(
        "--strategy", choices=["dynamic", "static"], default="dynamic", help="static = first 3 + last 2"
    )
    c.add_argument("--report", action="store_true", help="print what was decided to stderr")
    c.add_argument("-o", "--output", default="-", help="output JSON (default stdout)")
    c.set_defaults(func=_cmd_crush)

    d = sub.add_parser("demo", help="select from the bundled Python-docs sample")
    d.add_argument("--query", type=int, default=0, help="which bundled query (0)")
    d.add_argument("--budget", type=int, default=1000)
    d.add_argument("--lam", type=float, default=0.7)
    d.set_defaults(func=_cmd_demo)

    h = sub.add_parser(
        "hsca-eval",
        help="run the HSCA evals 1-5 on the bundled test sets and print each pass rate beside its criterion",
    )
    h.add_argument("--evals", default="", help="comma-separated eval numbers (default: all)")
    h.add_argument("--cases", type=int, default=None, help="cases per eval (default: each eval's own)")
    h.add_argument("--seed", type=int, default=0, help="seed of the constructed test cases (0)")
    h.add_argument("--json", action="store_true", help="one JSON object per eval instead of a table")
    h.add_argument("--strict", action="store_true", help="exit with status 1 when a criterion is not met")
    h.set_defaults(func=_cmd_hsca_eval)

    b = sub.add_parser("bench", help="reproduce the spec's benchmark table")
    b.add_argument("--quick", action="store_true", help="small sizes only")
    b.set_defaults(func=_cmd_bench)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
