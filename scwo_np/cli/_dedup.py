"""``scwo dedup``: near-duplicate removal over JSONL records."""

from __future__ import annotations

import argparse
import math
import sys

from ..dedup import DEDUP_GROUPINGS, DEDUP_METHODS
from ..embed import EMBEDDERS
from ._io import (
    _embeddings,
    _field,
    _input_file,
    _is_number,
    _read_jsonl,
    _text_field,
    _texts,
    _where,
    _write_jsonl,
    _write_records,
)


def _cmd_dedup(args: argparse.Namespace) -> int:
    from tqdm.auto import tqdm

    from ..dedup import deduplicate

    if args.no_cache and args.embedder is None:
        raise SystemExit("scwo: --no-cache goes with --embedder")
    if args.entities_field is not None and args.method != "sequence":
        raise SystemExit(
            f"scwo: --entities-field goes with --method sequence (the {args.method} method does not weigh entities)"
        )
    if args.embedder is not None and args.method != "cosine":
        raise SystemExit(
            f"scwo: --embedder goes with --method cosine (the {args.method} method compares texts)"
        )
    records = _read_jsonl(_input_file(args.file))
    lines, path = records.lines, args.file
    kw: dict = {"method": args.method, "threshold": args.threshold, "grouping": args.grouping}
    if args.method == "cosine" and args.embedder is None:
        missing = next(
            (ln for ln, r in zip(lines, records, strict=True) if args.embedding_field not in r), None
        )
        if missing is not None:
            raise SystemExit(
                f"scwo: {_where(path)}:{missing}: no {args.embedding_field!r} field for --method cosine; "
                f"give --embedder ({', '.join(EMBEDDERS)}) to embed the texts, or --embedding-field NAME"
            )
        kw["embeddings"] = _embeddings(records, args.embedding_field)
    else:
        field = _text_field(records, args.text_field, "dedup", quiet=args.quiet)
        kw["texts"] = _texts(records, field)
        if (
            args.embedder is not None
        ):  # minilm's vectors cached per user (the library's default) unless --no-cache
            from ..embed import as_embedder

            try:
                kw["embedder"] = as_embedder(
                    args.embedder, kw["texts"], cache=False if args.no_cache else None
                )
            except ImportError as exc:
                raise SystemExit(f"scwo: {exc}") from None
    named, args.score_field = args.score_field is not None, args.score_field or "score"
    if named and records and not any(args.score_field in r for r in records):
        raise SystemExit(  # a misspelt field kept the first of each group, silently
            f"scwo: {_where(path)}: no record has a {args.score_field!r} field; name the field that holds "
            "the scores, or leave --score-field out"
        )
    if any(args.score_field in r for r in records):
        # every record scored or none: a record without one was scored 0 silently
        missing = next((ln for ln, r in zip(lines, records, strict=True) if args.score_field not in r), None)
        if missing is not None:
            raise SystemExit(
                f"scwo: {_where(path)}:{missing}: no {args.score_field!r} field, where other records have one; "
                "score every record, or none"
            )
        kw["scores"] = [r[args.score_field] for r in records]
        bad = next(
            (
                ln
                for ln, x in zip(lines, kw["scores"], strict=True)
                if not (_is_number(x) and math.isfinite(x))
            ),
            None,
        )
        if bad is not None:
            raise SystemExit(f"scwo: {_where(path)}:{bad}: {args.score_field!r} must be a finite number")
    entities = "entities" if args.entities_field is None else args.entities_field
    if args.method == "sequence" and any(entities in r for r in records):
        kw["entities"] = [_field(r, [entities], ln, path, []) for ln, r in zip(lines, records, strict=True)]
    # A progress bar on stderr as rerank's: tqdm's, when stderr is a terminal and not --quiet.
    bar = tqdm(
        total=len(records), unit="text", desc="scwo dedup", file=sys.stderr,
        disable=args.quiet or not sys.stderr.isatty() or not records,
    )  # fmt: skip

    def progress(done: int, total: int) -> None:
        bar.update(done - bar.n)

    try:
        res = deduplicate(**kw, progress=progress) if records else None
    except ImportError as exc:  # --embedder minilm without the embed extra
        raise SystemExit(f"scwo: {exc}") from None
    except (ValueError, TypeError) as exc:
        raise SystemExit(f"scwo: {exc}") from None
    finally:
        bar.close()
    keep = [] if res is None else res.keep.tolist()
    _write_records(records, keep, args.output)  # as given, byte for byte
    if res is not None and args.report:
        _write_jsonl(
            (
                {"line": lines[d], "duplicate_of_line": lines[k], "similarity": s}
                for d, k, s in zip(
                    res.dropped.tolist(), res.duplicate_of.tolist(), res.similarity.tolist(), strict=True
                )
            ),
            args.report,
        )
    how = args.method + (f", {args.embedder}" if args.embedder else "")
    if not args.quiet:
        sys.stderr.write(f"scwo dedup: kept {len(keep)} of {len(records)} ({how})\n")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``scwo dedup`` to the ``scwo`` parser."""
    dd = sub.add_parser("dedup", help="remove near-duplicates from JSONL records (kept records to stdout)")
    dd.add_argument("file", nargs="?", help="JSONL, one record per line (- or none, piped: stdin)")
    dd.add_argument("--method", choices=list(DEDUP_METHODS), default="jaccard")
    dd.add_argument(
        "--grouping",
        choices=list(DEDUP_GROUPINGS),
        default="greedy",
        help="greedy (default): a record is dropped only against a kept one; components: chains",
    )
    dd.add_argument("--threshold", type=float, default=None, help="similarity threshold (method's default)")
    dd.add_argument(
        "--text-field",
        help="the records' text (default text; records with only content are read from content)",
    )
    dd.add_argument(
        "--score-field",
        default=None,
        help="keep the best-scoring of each group (default score, when present)",
    )
    dd.add_argument("--entities-field", default=None, help="for --method sequence (default entities)")
    dd.add_argument(
        "--embedder",
        choices=list(EMBEDDERS),
        help="for --method cosine: embed the texts with this model (lsa, or minilm with the embed extra) "
        "instead of reading --embedding-field",
    )
    dd.add_argument(
        "--no-cache", action="store_true", help="with --embedder: do not use the user's embedding cache"
    )
    dd.add_argument("--embedding-field", default="embedding", help="for --method cosine without --embedder")
    dd.add_argument("-o", "--output", default="-", help="output JSONL (default stdout)")
    dd.add_argument(
        "--report",
        help="write what was dropped as JSONL: line, duplicate_of_line (input line numbers), similarity",
    )
    dd.add_argument(
        "-q", "--quiet", action="store_true", help="no progress bar and no summary line on stderr"
    )
    dd.set_defaults(func=_cmd_dedup)
