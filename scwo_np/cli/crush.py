"""``scwo crush``: shrink a JSON array to the items an LLM will need, and get dropped items back."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys

from ._io import (
    _output,
    _stdin,
)


def _read(path: str) -> bytes:
    try:
        with contextlib.nullcontext(_stdin()) if path == "-" else open(path, "rb") as fh:
            return fh.read()  # bytes: read_document decodes UTF-8 and says where it is not
    except OSError as exc:
        raise SystemExit(f"scwo: cannot read {path}: {exc.strerror}") from None


def _store(args: argparse.Namespace):
    from ..anchor import CrushStore

    try:
        return CrushStore(args.store)  # None: the user cache folder
    except (OSError, ValueError) as exc:
        raise SystemExit(f"scwo: --store: {exc}") from None


def _cmd_crush(args: argparse.Namespace) -> int:
    if args.retrieve is not None:
        return _cmd_retrieve(args)
    if args.file is None:
        raise SystemExit("scwo: give the JSON file to crush (- for stdin), or --retrieve KEY")
    if args.lossless or args.expand:
        return _cmd_lossless(args)
    if args.max_items is None:
        raise SystemExit("scwo: --max-items is required (a number, or auto)")
    for flag in ("range", "where"):
        if getattr(args, flag):
            raise SystemExit(f"scwo: --{flag} goes with --retrieve")
    from ..anchor import AnchorConfig, read_document
    from ..anchor.crush import _crush_document

    text = _read(args.file)
    cfg = AnchorConfig(strategy=args.strategy)
    protect = args.protect or None
    try:
        bias = float(args.bias)
    except ValueError:
        bias = args.bias
    kw = dict(query=args.query, pattern=args.pattern, config=cfg, protect=protect, bias=bias, upper=args.upper,
              protect_overflow="keep" if args.keep_protected else "error")  # fmt: skip
    try:
        max_items = _max_items(args.max_items)
        store = None
        if args.marker and not args.no_store:
            store = _store(args)
        doc = read_document(text, path=args.path)
        out, rep = _crush_document(doc, max_items, marker=args.marker, store=store, **kw)
        if args.report:
            sys.stderr.write(
                f"scwo crush: kept {len(rep.kept)} of {rep.n} ({doc.form}"
                + (f" at {'/'.join(map(str, doc.path))}" if doc.path else "")
                + f"); pattern {rep.pattern}; anchors front/back/middle {rep.anchor_slots}; errors {rep.errors}, "
                f"anomalies {rep.anomalies}, query matches {rep.query_matches}, protected {rep.protected}, "
                f"must-keep dropped {rep.must_keep_dropped}\n"
            )
    except (ValueError, TypeError) as exc:
        raise SystemExit(f"scwo: {exc}") from None
    return _write(args, out)


def _cmd_lossless(args: argparse.Namespace) -> int:
    from ..anchor import lossless_decode, lossless_encode
    from ..tokens import as_token_counter, count_tokens

    if args.lossless and args.expand:
        raise SystemExit("scwo: --lossless encodes and --expand decodes; pass one")
    for flag in ("max_items", "marker", "protect", "query"):
        if getattr(args, flag):
            raise SystemExit(
                f"scwo: --{flag.replace('_', '-')} does not go with --{'lossless' if args.lossless else 'expand'}"
            )
    raw = _read(args.file)
    try:
        out = lossless_encode(raw, path=args.path) if args.lossless else lossless_decode(raw)
        if args.report:
            text = raw.decode("utf-8")
            counter = as_token_counter(args.tokens)
            before, after = count_tokens([text.strip(), out], counter).tolist()
            sys.stderr.write(
                f"scwo crush: {'lossless' if args.lossless else 'expanded'}: {len(text.strip()):,} -> {len(out):,} "
                f"characters, {before:,} -> {after:,} tokens ({counter.name})\n"
            )
    except (ValueError, TypeError) as exc:
        raise SystemExit(f"scwo: {exc}") from None
    return _write(args, out)


def _write(args: argparse.Namespace, out: str) -> int:
    with _output(args.output) as fh:
        fh.write(out + "\n")
    return 0


def _max_items(value: str) -> int | str:
    if value == "auto":
        return value
    try:
        n = int(value)
    except ValueError:
        raise ValueError(f"--max-items takes a positive integer or 'auto'; got {value!r}") from None
    if n < 1:
        raise ValueError(f"--max-items takes a positive integer or 'auto'; got {value!r}")
    return n


def _cmd_retrieve(args: argparse.Namespace) -> int:
    if args.file is not None:
        raise SystemExit("scwo: --retrieve reads the store, not a file; drop the file argument")
    start = stop = None
    if args.range:
        a, sep, b = args.range.partition(":")
        try:
            if not sep:
                start, stop = int(a), int(a) + 1
            else:
                start, stop = (int(a) if a else None), (int(b) if b else None)
        except ValueError:
            raise SystemExit(
                f"scwo: --range takes START:STOP positions (like 10:20, :5, 7); got {args.range!r}"
            ) from None
    where = {}
    for cond in args.where or ():
        name, sep, raw = cond.partition("=")
        if not sep or not name:
            raise SystemExit(f"scwo: --where takes FIELD=VALUE (like status=error); got {cond!r}")
        try:
            where[name] = json.loads(raw)  # 500 -> a number, true -> a boolean, "x" -> a string
        except json.JSONDecodeError:
            where[name] = raw
    with _store(args) as store:
        try:
            out = store.retrieve_json(args.retrieve, start=start, stop=stop, where=where or None)
        except KeyError as exc:
            raise SystemExit(f"scwo: {exc.args[0]}") from None
    return _write(args, out)
