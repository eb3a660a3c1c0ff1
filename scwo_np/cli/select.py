"""``scwo select``, ``scwo demo``, ``scwo sample`` and ``scwo bench``: budgeted MMR from the command line."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time

import numpy as np

from ..select import coverage, mmr_select, topk_relevance, truncate
from ._io import (
    _out,
    _read_chunks,
    _vector_option,
    _write_jsonl,
)


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


def _demo_query(arg: str, n: int):
    """``--query``: a bundled query's number, or any text."""
    from ..datasets import load_sample, sample_query

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
    from ..datasets import load_sample

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
    from ..datasets import load_sample

    if args.retrieved_sets:
        return _write_sets(args)
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


def _write_sets(args: argparse.Namespace) -> int:
    """``scwo sample --retrieved-sets``: the bundled queries' top-k chunks as a Parquet candidates file."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise SystemExit("scwo: Parquet output needs pyarrow: pip install 'scwo_np[batch]'") from None
    from ..rerank import sample_sets

    if args.output == "-":
        raise SystemExit("scwo: --retrieved-sets writes Parquet: give a file with -o")
    cands, _ = sample_sets(args.top_k, query_embedding_column=True)
    folder = os.path.dirname(os.path.abspath(args.output))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(args.output)}.", suffix=".tmp")
    os.close(fd)
    try:  # written under a temporary name, renamed when complete
        pq.write_table(cands, tmp)
        os.replace(tmp, args.output)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from ..select.bench import cost_aware_rows, format_cost_aware, format_table, run_bench

    if args.cost_aware:
        _out(format_cost_aware(cost_aware_rows()))
        return 0
    rows = run_bench(quick=args.quick, progress=sys.stderr.isatty())
    _out(format_table(rows))
    return 0
