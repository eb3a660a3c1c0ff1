"""The ``scwo`` command line: ``select``, ``dedup``, ``optimize``, ``crush``, ``hsca-eval``, ``demo``, ``bench``."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
import warnings

import numpy as np

from .select import METHODS, coverage, mmr_select, topk_relevance, truncate


def _out(line: str = "") -> None:
    sys.stdout.write(line + "\n")


def _stdin():
    """Standard input as a binary stream, or a clear error when there is none (``cmd <&-``)."""
    try:
        if sys.stdin is None or sys.stdin.closed:
            raise OSError
        os.fstat(sys.stdin.fileno())
    except (OSError, ValueError):
        raise SystemExit(
            "scwo: no input: standard input is closed; pass a file name instead of '-'"
        ) from None
    return sys.stdin.buffer


def _read_jsonl(path: str, required: tuple[str, ...] = ()) -> list[dict]:
    """One JSON object per line (``-`` = stdin); blank lines skipped; errors name the line."""
    records = []
    if path == "-":
        fh_ctx = contextlib.nullcontext(_stdin())
    else:
        try:
            fh_ctx = open(path, "rb")
        except OSError as exc:
            raise SystemExit(f"scwo: cannot read {path}: {exc.strerror}") from None
    with fh_ctx as fh:
        for lineno, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise SystemExit(
                    f"scwo: {path}:{lineno}: not valid UTF-8 (byte {exc.start} of the line: {exc.reason}); "
                    "convert the file to UTF-8"
                ) from None
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise SystemExit(f"scwo: {path}:{lineno}: not valid JSON ({exc.msg})") from None
            except RecursionError:
                raise SystemExit(f"scwo: {path}:{lineno}: JSON nested too deeply to parse") from None
            if not isinstance(rec, dict):
                raise SystemExit(f"scwo: {path}:{lineno}: expected a JSON object, got {type(rec).__name__}")
            for f in required:
                if f not in rec:
                    raise SystemExit(f"scwo: {path}:{lineno}: missing field {f!r}")
            records.append(rec)
    return records


@contextlib.contextmanager
def _output(path: str):
    """A text stream for ``path`` (``-`` = stdout) that appears only when complete.

    A regular file is written under a temporary name in its own folder and
    renamed at the end, so a failure (bad input found late, a full disk)
    leaves no half-written output behind and an existing file untouched.
    Anything else that exists (``/dev/stdout``, a pipe, a device) is written
    directly.
    """
    if path == "-":
        yield sys.stdout
        return
    if os.path.isdir(path):
        raise IsADirectoryError(21, "is a directory", path)
    if os.path.exists(path) and not os.path.isfile(path):
        try:
            with open(path, "w", encoding="utf-8") as out:
                yield out
        except OSError as exc:
            raise type(exc)(exc.errno, exc.strerror, path) from None
        return
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    except OSError as exc:
        raise type(exc)(exc.errno, exc.strerror, path) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            yield out
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise type(exc)(exc.errno, exc.strerror, path) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def _write_jsonl(records, path: str) -> None:
    with _output(path) as out:
        for r in records:
            out.write(json.dumps(r, ensure_ascii=False) + "\n")


def _read_chunks(path: str, emb_field: str, tok_field: str):
    """Records, embeddings and costs from JSONL (``-`` = stdin) or ``.npz``."""
    if path.endswith(".npz"):
        try:
            with np.load(path) as z:
                E, c = z["embeddings"], z["costs"]
        except FileNotFoundError:
            raise SystemExit(f"scwo: cannot read {path}: no such file") from None
        except Exception as exc:  # noqa: BLE001 - a corrupt, truncated or foreign file: say which
            raise SystemExit(
                f"scwo: {path}: not a readable .npz with 'embeddings' and 'costs' arrays ({type(exc).__name__}: {exc})"
            ) from None
        return [{"index": i, "tokens": int(t)} for i, t in enumerate(c)], E, c
    records = _read_jsonl(path, (emb_field, tok_field))
    if not records:
        return [], np.empty((0, 1)), np.empty(0, dtype=np.int64)
    return (
        records,
        np.array([r[emb_field] for r in records], dtype=np.float64),
        [r[tok_field] for r in records],
    )


def _vector_option(text: str, option: str) -> np.ndarray:
    """A JSON list of numbers given on the command line, or a clear error naming the option."""
    try:
        v = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        msg = getattr(exc, "msg", "nested too deeply")
        raise SystemExit(
            f"scwo: {option} is not valid JSON ({msg}); give a list of numbers like [0.1, -0.2]"
        ) from None
    if not isinstance(v, list) or not all(isinstance(x, int | float) and not isinstance(x, bool) for x in v):
        raise SystemExit(f"scwo: {option} must be a JSON list of numbers like [0.1, -0.2]; got {text[:60]!r}")
    return np.array(v, dtype=np.float64)


def _json_object_option(text: str, option: str) -> dict:
    """A JSON object given on the command line, or a clear error naming the option."""
    try:
        v = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise SystemExit(
            f"scwo: {option} is not valid JSON ({getattr(exc, 'msg', 'nested too deeply')})"
        ) from None
    if not isinstance(v, dict):
        raise SystemExit(f'scwo: {option} must be a JSON object like {{"maxChunks": 5}}; got {text[:60]!r}')
    return v


def _cmd_select(args: argparse.Namespace) -> int:
    records, E, costs = _read_chunks(args.file, args.embedding_field, args.tokens_field)
    if args.query_index is not None:
        if not records:
            where = "standard input" if args.file == "-" else args.file
            raise SystemExit(f"scwo: {where} has no chunks to take --query-index {args.query_index} from")
        if not 0 <= args.query_index < len(records):
            raise SystemExit(f"scwo: --query-index must be in [0, {len(records)}); got {args.query_index}")
        q = E[args.query_index]
    else:
        q = _vector_option(args.query_embedding, "--query-embedding")
    try:
        idx = mmr_select(
            E, q, costs, args.budget, lam=args.lam, method=args.method, cost_aware=args.cost_aware,
            cost_exponent=args.cost_exponent,
        )  # fmt: skip
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


def _cmd_crush(args: argparse.Namespace) -> int:
    from .anchor import AnchorConfig, crush, crush_json

    try:
        with contextlib.nullcontext(_stdin()) if args.file == "-" else open(args.file, "rb") as fh:
            text = fh.read()  # bytes: crush_json decodes UTF-8 and says where it is not
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
    with _output(args.output) as fh:
        fh.write(out + "\n")
    return 0


def _demo_query(arg: str, n: int):
    """``--query``: a bundled query's number, or any text."""
    from .datasets import load_sample, sample_query

    s = load_sample()
    if arg.strip().lstrip("-").isdigit():
        k = int(arg)
        if not 0 <= k < n:
            raise SystemExit(f"scwo: --query must be a bundled query's number in [0, {n}) or a text; got {k}")
        return s.query_embeddings[k], repr(s.queries[k]), f"bundled query #{k}, from {s.query_sources[k]}"
    try:
        v, how = sample_query(arg)
    except ValueError as exc:
        raise SystemExit(f"scwo: --query: {exc}") from None
    return v, repr(arg), how


def _cmd_demo(args: argparse.Namespace) -> int:
    from .datasets import load_sample

    s = load_sample()
    E, costs, texts = s.embeddings, s.costs, s.texts
    q, shown, how = _demo_query(args.query, len(s.queries))
    try:
        t0 = time.perf_counter()
        idx, gains = mmr_select(E, q, costs, args.budget, lam=args.lam, return_gains=True)
        t1 = time.perf_counter()
        mmr_select(E, q, costs, args.budget, lam=args.lam)
        t2 = time.perf_counter()
    except (ValueError, TypeError) as exc:
        raise SystemExit(f"scwo: {exc}") from None
    _out(f"Query: {shown}  ({how})")
    _out(
        f"Corpus: {len(E)} chunks of the Python docs, {int(costs.sum())} tokens; budget {args.budget} tokens"
    )
    used = int(costs[idx].sum())
    _out(f"\nSelected {len(idx)} chunks, {used} tokens (lam={args.lam}):")
    for i in idx:
        i = int(i)
        _out(f"  [{i:4d}] {s.sources[i]:<28} {costs[i]:4d} tok  {texts[i][:70]}...")
    for line in _why(E, q, costs, args.budget, args.lam, idx):
        _out(line)
    tr = truncate(costs, args.budget)
    tk = topk_relevance(E, q, costs, args.budget)
    _out("\nCoverage (0.6 relevance + 0.4 diversity):")
    _out(f"  MMR        {coverage(E[idx], q):.4f}" if len(idx) else "  MMR        (nothing fits)")
    _out(f"  top-k      {coverage(E[tk], q):.4f}" if len(tk) else "  top-k      (nothing fits)")
    _out(f"  truncation {coverage(E[tr], q):.4f}" if len(tr) else "  truncation (nothing fits)")
    _out(f"\nTime: first call {1e3 * (t1 - t0):.1f} ms (includes JIT load), then {1e3 * (t2 - t1):.3f} ms")
    return 0


def _why(E, q, costs, budget, lam, idx) -> list[str]:
    """Two lines: what decided the picks (relevance, redundancy) and where the budget went."""
    if len(idx) == 0:
        return [f"\nWhy: no chunk fits the budget of {budget} tokens (the smallest has {int(costs.min())})."]
    En = E / np.linalg.norm(E, axis=1, keepdims=True)
    rel = En @ (q / np.linalg.norm(q))
    last = float(rel[idx].min())
    picked = np.zeros(len(E), dtype=bool)
    picked[idx] = True
    passed = np.flatnonzero(~picked & (rel > last))  # more relevant than a pick, not taken
    red = (En[passed] @ En[idx].T).max(axis=1) if len(passed) else np.empty(0)
    left = budget - int(costs[idx].sum())
    fits = np.flatnonzero(~picked & (costs <= left))
    before_last = left + int(costs[idx[-1]])
    too_long = int((costs[passed] > before_last).sum())
    rank = np.argsort(-rel, kind="stable")[: len(idx)]
    l1 = (
        f"\nWhy: each pick had the best {lam:g}·relevance − {1 - lam:g}·redundancy among the chunks that "
        f"still fit; the picks' relevance (cosine to the query) is {float(rel[idx].mean()):.2f} on average "
        f"(the {len(idx)} most relevant chunks: {float(rel[rank].mean()):.2f})."
    )
    close = red[costs[passed] <= before_last]
    l2 = (
        f"     Of the {len(passed)} chunks more relevant than its least relevant pick, {too_long} were longer"
    )
    l2 += f" than the {before_last} tokens left before that pick"
    if len(close):
        l2 += f", {len(close)} lost on redundancy (median cosine to the closest pick {float(np.median(close)):.2f})"
    l2 += f"; {budget - left} of {budget} tokens used, " + (
        f"and none of the other chunks fits the {left} left." if len(fits) == 0 else f"{left} left."
    )
    return [l1, l2]


def _cmd_sample(args: argparse.Namespace) -> int:
    from .datasets import load_sample

    s = load_sample()
    score = None
    if args.query is not None:
        if not 0 <= args.query < len(s.queries):
            raise SystemExit(f"scwo: --query must be in [0, {len(s.queries)}); got {args.query}")
        q = s.query_embeddings[args.query].astype(np.float64)
        E = s.embeddings.astype(np.float64)
        score = (E @ q) / (np.linalg.norm(E, axis=1) * np.linalg.norm(q))
    n = len(s.texts) if args.n is None else max(0, min(args.n, len(s.texts)))
    records = (
        {
            "id": i,
            "source": s.sources[i],
            "text": s.texts[i],
            "tokens": int(s.costs[i]),
            **({} if score is None else {"score": round(float(score[i]), 6)}),
            "embedding": [round(float(x), 7) for x in s.embeddings[i]],
        }
        for i in range(n)
    )
    _write_jsonl(records, args.output)
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from .select.bench import cost_aware_rows, format_cost_aware, format_table, run_bench

    if args.cost_aware:
        _out(format_cost_aware(cost_aware_rows()))
        return 0
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
    sm.set_defaults(func=_cmd_sample)

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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
