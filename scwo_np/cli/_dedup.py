"""``scwo dedup``: near-duplicate removal over JSONL records."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from ..dedup import DEDUP_METHODS
from ._io import (
    _field,
    _read_jsonl,
    _write_jsonl,
)


def _cmd_dedup(args: argparse.Namespace) -> int:
    from ..dedup import dedup

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


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``scwo dedup`` to the ``scwo`` parser."""
    dd = sub.add_parser("dedup", help="remove near-duplicates from JSONL records (kept records to stdout)")
    dd.add_argument("file", help="JSONL, one record per line (- for stdin)")
    dd.add_argument("--method", choices=list(DEDUP_METHODS), default="jaccard")
    dd.add_argument("--threshold", type=float, default=None, help="similarity threshold (method's default)")
    dd.add_argument("--text-field", default="text")
    dd.add_argument("--score-field", default="score", help="keep the best-scoring of each group")
    dd.add_argument("--entities-field", default="entities", help="for --method sequence")
    dd.add_argument("--embedding-field", default="embedding", help="for --method cosine")
    dd.add_argument("-o", "--output", default="-", help="output JSONL (default stdout)")
    dd.add_argument("--report", help="write dropped records (index, duplicate_of, similarity) as JSONL")
    dd.set_defaults(func=_cmd_dedup)
