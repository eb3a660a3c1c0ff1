"""``scwo optimize``: the KB Labs and MoRAG context optimizers over JSONL chunks."""

from __future__ import annotations

import argparse
import re
import sys
import warnings

from ..optimize import KB_CAMEL_CASE, MORAG_LAYOUTS
from ..validation import renamed_message
from ._io import (
    _input_file,
    _json_object_option,
    _output,
    _put,
    _read_jsonl,
    _renamed_flag,
    _text_field,
    _texts,
    _where,
    _write_jsonl,
    _write_records,
)


def _cmd_optimize(args: argparse.Namespace) -> int:
    from ..optimize import KBContextOptimizer

    _refuse_other_pipelines_flags(args)
    opts = _json_object_option(args.options, "--options") if args.options else {}
    if args.pipeline == "kb":
        opts = _kb_options(opts, args)
        try:  # the options are checked before the input is read
            KBContextOptimizer().optimize([], opts)
        except (ValueError, TypeError) as exc:
            raise SystemExit(f"scwo: {exc}") from None
    elif not args.query.strip():  # MoRAG ranks by the query's words and names it in the context
        raise SystemExit("scwo: --pipeline morag needs --query (the question the context is for)")
    records = _read_jsonl(_input_file(args.file))
    field = _text_field(records, args.text_field, "optimize", quiet=args.quiet)
    texts = _texts(records, field)
    with warnings.catch_warnings(record=True) as caught:  # said after the work, and only if it did not fail
        warnings.simplefilter("always")
        kept, removed = _optimized(args, opts, records, field, texts)
    if args.report:
        _write_jsonl(
            (
                {"line": records.lines[r.index], "id": r.id, "step": r.step, "reason": r.reason}
                for r in removed
            ),
            args.report,
        )
    for w in caught:
        sys.stderr.write(f"scwo optimize: warning: {w.message}\n")
    if not args.quiet:
        sys.stderr.write(f"scwo optimize: kept {kept} of {len(records)} ({args.pipeline})\n")
    return 0


def _optimized(
    args: argparse.Namespace, opts: dict, records, field: str, texts: list[str]
) -> tuple[int, list]:
    """The pipeline run on the records, its output written: how many chunks it kept, and its removals."""
    from ..optimize import ContextChunk, KBContextOptimizer, MoragContextOptimizer

    lines = records.lines
    try:
        if args.pipeline == "kb":
            matches = [  # a match without an id is known by its line number, as MoRAG's chunks
                {"id": ln, **r, "text": t} for r, t, ln in zip(records, texts, lines, strict=True)
            ]
            res = KBContextOptimizer().optimize(matches, opts)
            _write_records(records, res.indices.tolist(), args.output)  # as given, byte for byte
            return len(res.chunks), res.removed
        # the default id: the line number, which the library's errors name as "chunk N"
        chunks = [
            ContextChunk.from_dict({**r, "content": t}, index=ln)
            for r, t, ln in zip(records, texts, lines, strict=True)
        ]
        opt = MoragContextOptimizer(
            budget=4000 if args.budget is None else args.budget, response_reserve=args.reserve
        )
        ctx = opt.optimize(chunks, args.query, args.strategy)
        if args.format == "text":
            with _output(args.output) as fh:  # -o as for JSONL (the text went to stdout whatever -o said)
                _put(fh, opt.format_context(ctx, args.query) + "\n")
        else:
            _write_jsonl(
                ({"id": c.id, field: c.content, "priority": c.relevance_score, "source": c.source_document}
                 for c in ctx.chunks),
                args.output,
            )  # fmt: skip
        return len(ctx.chunks), ctx.removals
    except (ValueError, TypeError) as exc:
        raise SystemExit(f"scwo: {_at_line(str(exc), records)}") from None


def _at_line(message: str, records) -> str:
    """The library's "matches[k] …" (KB: the k-th record), "chunks[k].field …" or "chunk N …" (MoRAG: N is the line)
    as "FILE:LINE: the record …", as every other input error names a record."""
    where = _where(records.path)
    m = re.match(r"chunks\[(\d+)\]\.(\w+) (.*)", message, re.S)  # MoRAG's checks of a chunk's field
    if m and int(m[1]) < len(records.lines):
        field = "score" if m[2] == "relevance_score" else m[2]
        return f"{where}:{records.lines[int(m[1])]}: the record's {field} {m[3]}"
    m = re.match(r"(?:matches\[(\d+)\]|chunk (\d+)(:?)) (has |is )?(.*)", message, re.S)
    if m is None:
        return message
    line = records.lines[int(m[1])] if m[1] is not None and int(m[1]) < len(records.lines) else None
    if m[2] is not None and int(m[2]) in records.lines:
        line = int(m[2])
    if line is None:
        return message
    whose = "the record " + m[4] if m[4] else "the record's "  # "has no text" / "tokens must be …"
    return f"{where}:{line}: {whose}{m[5]}"


def _refuse_other_pipelines_flags(args: argparse.Namespace) -> None:
    """A flag of the other pipeline is an error: it was ignored (``--query`` with kb gave output
    byte for byte the same as without it; ``--max-chunks 3`` with morag kept 64)."""
    given = {
        "kb": [("--options", args.options is not None), ("--max-chunks", args.max_chunks is not None)],
        "morag": [
            ("--query", bool(args.query)),
            ("--reserve", args.reserve is not None),
            ("--strategy", args.strategy != "auto"),
            ("--format text", args.format != "jsonl"),
        ],
    }
    other = "morag" if args.pipeline == "kb" else "kb"
    flags = [flag for flag, on in given[other] if on]
    if flags:
        why = {
            "kb": "kb ranks the records by their score field and keeps them as JSONL",
            "morag": "morag's options are its flags (--budget, --query, --reserve, --strategy, --format)",
        }[args.pipeline]
        raise SystemExit(
            f"scwo: {', '.join(flags)} {'is a' if len(flags) == 1 else 'are'} --pipeline {other} "
            f"option{'s' * (len(flags) > 1)}; {why}: leave {'it' if len(flags) == 1 else 'them'} out."
        )


def _kb_options(opts: dict, args: argparse.Namespace) -> dict:
    """``--options`` in the library's names, with ``--budget`` and ``--max-chunks`` in them.

    The ADR's camelCase keys (``tokenBudget``) are renamed here with one note on stderr, as an old
    flag is (the library's ``RenamedWarning`` is a ``DeprecationWarning`` Python would hide). A
    value given twice (a key and its old name, or a key and its flag) is an error naming what the
    user wrote, never resolved silently.
    """
    written = {KB_CAMEL_CASE.get(k, k): k for k in opts}  # the library's name -> the key as written
    for k in opts:
        new = KB_CAMEL_CASE.get(k)
        if new is not None and new in opts:
            raise SystemExit(f"scwo: --options gives {k} (the old name of {new}) and {new}; give {new} only")
    flags = {"budget": ("--budget", args.budget), "max_chunks": ("--max-chunks", args.max_chunks)}
    for key, (flag, value) in flags.items():
        if value is not None and key in written:
            k = written[key]
            what = k if k == key else f"{k} (the old name of {key})"
            raise SystemExit(f"scwo: --options gives {what} and {flag} gives it too; give one of them")
    old = [k for k in opts if k in KB_CAMEL_CASE]
    if old:
        notes = " ".join(renamed_message(k, KB_CAMEL_CASE[k], what="--options") for k in old)
        sys.stderr.write(f"scwo: warning: {notes}\n")
    opts = {KB_CAMEL_CASE.get(k, k): v for k, v in opts.items()}
    if args.budget is not None:
        opts["budget"] = args.budget
        opts.setdefault("adaptive_selection", True)
    if args.max_chunks is not None:
        opts["max_chunks"] = args.max_chunks
    return opts


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``scwo optimize`` to the ``scwo`` parser."""
    o = sub.add_parser("optimize", help="run the KB Labs or MoRAG context optimizer on JSONL chunks")
    o.add_argument("file", nargs="?", help="JSONL, one chunk per line (- or none, piped: stdin)")
    o.add_argument("--pipeline", choices=["kb", "morag"], required=True)
    o.add_argument("--options", help="kb: the ADR's options as JSON")
    o.add_argument(
        "--budget",
        type=int,
        help="the token budget: kb: the budget option (turns on adaptive selection; default none); "
        "morag: the context size (4000)",
    )
    _renamed_flag(o, "--token-budget", "--budget", type=int)
    _renamed_flag(o, "--max-tokens", "--budget", type=int)
    o.add_argument("--max-chunks", type=int, help="kb: the max_chunks option")
    o.add_argument(
        "--text-field",
        help="the chunks' text (default text; records with only content are read from content)",
    )
    o.add_argument("--query", default="", help="morag: the query")
    o.add_argument(
        "--reserve",
        type=int,
        default=None,
        help="morag: tokens kept free for the answer (default: 500, at most half of --budget)",
    )
    o.add_argument("--strategy", choices=list(MORAG_LAYOUTS), default="auto", help="morag: the layout (auto)")
    o.add_argument(
        "--format", choices=["jsonl", "text"], default="jsonl", help="morag: text = format_context"
    )
    o.add_argument("-o", "--output", default="-", help="output JSONL (default stdout)")
    o.add_argument("--report", help="write what was removed, and why, as JSONL (line: the input line)")
    o.add_argument("-q", "--quiet", action="store_true", help="no summary line on stderr")
    o.set_defaults(func=_cmd_optimize)
