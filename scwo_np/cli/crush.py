"""``scwo crush``: shrink a JSON array to the items an LLM will need."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys

from ._io import (
    _output,
    _stdin,
)


def _cmd_crush(args: argparse.Namespace) -> int:
    from ..anchor import AnchorConfig, crush, crush_json

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
