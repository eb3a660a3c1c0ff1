"""``scwo crush``: shrink a JSON array to the items an LLM will need (any text within a budget by its
shape), and get dropped items back."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys

from ..anchor import ANCHOR_STRATEGIES, COLUMNAR_KEY, PATTERNS
from ..tokens import COUNTERS
from ._io import (
    _count,
    _output,
    _positive,
    _put,
    _renamed_flag,
    _stdin,
    _stdin_is_terminal,
    _token_counter,
)


def _read(path: str) -> bytes:
    try:
        with contextlib.nullcontext(_stdin()) if path == "-" else open(path, "rb") as fh:
            return fh.read()  # bytes: read_document decodes UTF-8 and says where it is not
    except OSError as exc:
        raise SystemExit(f"scwo: cannot read {path}: {exc.strerror}") from None


_MALFORMED = re.compile(r"^malformed JSON at character (\d+)(?: \([^)]*\))?: (.*)$", re.S)


def _bad(exc: Exception, raw: bytes, path: str) -> SystemExit:
    """The library's error as one line; a JSON syntax error gets the file, line and column, whole."""
    m = _MALFORMED.match(str(exc))
    where = "standard input" if path == "-" else path
    if m is None:
        if str(exc).startswith("text is "):  # empty, or not UTF-8: the file is what it is about
            return SystemExit(f"scwo: {where}: {exc}")
        return SystemExit(f"scwo: {exc}")
    pos, msg = int(m.group(1)), m.group(2).rstrip(".")
    text = raw.decode("utf-8", errors="replace")
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    hint = ""
    if _is_text(raw):  # text, not JSON at all
        hint = (
            " (--max-items reads JSON: an array, an object holding one, or JSON Lines; text, such as a"
            " log, a diff or a manual, goes within a token budget with --budget N)"
        )
    return SystemExit(
        f"scwo: {where}:{line}: not valid JSON: {msg}: line {line} column {col} (char {pos}){hint}"
    )


def _store(args: argparse.Namespace):
    from ..anchor import CrushStore

    try:
        return CrushStore(args.store)  # None: the user cache folder
    except (OSError, ValueError) as exc:
        raise SystemExit(f"scwo: --store: {exc}") from None


def _cmd_crush(args: argparse.Namespace) -> int:
    if args.retrieve is not None:
        return _cmd_retrieve(args)
    for flag in ("range", "positions", "where", "fields", "all", "offset", "limit"):
        if getattr(args, flag):
            raise SystemExit(f"scwo: --{flag} goes with --retrieve")
    if (
        args.file is None and not _stdin_is_terminal()
    ):  # `scwo crush --budget 400 < log`: stdin, as jq reads it
        args.file = "-"
    if args.file is None:
        raise SystemExit("scwo: give the file to crush (- for stdin), or --retrieve KEY")
    if args.no_store and args.store is not None:
        raise SystemExit(f"scwo: --no-store and --store {args.store} contradict each other; pass one")
    if args.report:  # the name, before any work (the counter is made where it counts)
        COUNTERS.lookup(args.token_counter, hint="Pass one of those to --token-counter.")
    if args.lossless or args.expand:
        return _cmd_lossless(args)
    if args.max_items is None and args.budget is None:
        raise SystemExit("scwo: give --max-items (a number, or auto), --budget N, or both")
    if args.budget is not None:
        return _cmd_budget(args)
    from ..anchor import read_document
    from ..anchor._json import _crush_document

    text = _read(args.file)
    kw = _crush_kw(args)
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
        elif (
            not args.marker and len(rep.kept) < rep.n
        ):  # what is dropped is announced, here if not in the output
            sys.stderr.write(
                f"scwo crush: kept {len(rep.kept):,} of {rep.n:,} items; the output does not say so "
                "(--marker puts the omission in it, --report says more)\n"
            )
    except (ValueError, TypeError) as exc:
        raise _bad(exc, text, args.file) from None
    return _write(args, out)


def _crush_kw(args: argparse.Namespace) -> dict:
    from ..anchor import AnchorConfig

    for flag in ("bias", "upper"):  # "auto" sizes the crush by them; a number or a budget does not
        if getattr(args, flag) is not None and args.max_items != "auto":
            raise SystemExit(
                f"scwo: --{flag} goes with --max-items auto (it sizes that choice); leave it out"
            )
    try:
        bias = float(args.bias)
    except (TypeError, ValueError):
        bias = "balanced" if args.bias is None else args.bias
    upper = 100 if args.upper is None else args.upper
    return dict(query=args.query, pattern=args.pattern, config=AnchorConfig(strategy=args.strategy),
                protect=args.protect or None, bias=bias, upper=upper,
                protect_overflow="keep" if args.keep_protected else "error")  # fmt: skip


def _cmd_budget(args: argparse.Namespace) -> int:
    """``scwo crush --budget N``: the output, marker included, within N tokens of --token-counter."""
    from ..anchor import read_document
    from ..anchor._json import as_given, fit_json
    from ..tokens import tokens_over

    counter = _token_counter(args.token_counter)
    text = _read(args.file)
    kw = _crush_kw(args)
    where = "standard input" if args.file == "-" else args.file
    if not text.strip():
        raise SystemExit(f"scwo: {where}: text is empty (or only white space): nothing to crush")
    try:
        text.decode("utf-8")
    except UnicodeDecodeError as exc:  # (make's NEWS is Latin-1 past its newest releases): read, and said
        sys.stderr.write(
            f"scwo crush: warning: {where} is not valid UTF-8 (byte {exc.start}: {exc.reason}); its "
            "undecodable bytes are read as U+FFFD, in the output and in what --retrieve gives back\n"
        )
        text = text.decode("utf-8", errors="replace").encode("utf-8")
    try:
        try:
            doc = read_document(text, path=args.path)
        except ValueError as exc:
            if _MALFORMED.match(str(exc)) is None or not _is_text(text):
                raise
            return _cmd_text(args, text, counter)
        max_items = _max_items(args.max_items) if args.max_items is not None else None
        whole = as_given(text)
        if max_items is None and whole is not None:  # within the budget: the document as it came
            whole = whole.removesuffix("\n")
            if tokens_over(whole + "\n", counter, args.budget) <= args.budget:
                if args.report:
                    sys.stderr.write(
                        f"scwo crush: whole: within {args.budget} tokens ({args.token_counter})\n"
                    )
                return _write(args, whole)
        store = None if args.no_store else _store(args)
        res = _with_newline(
            lambda b: fit_json(doc, b, token_counter=counter, max_items=max_items, store=store, **kw),
            args.budget, counter,
        )  # fmt: skip
        if args.report:
            sys.stderr.write(
                f"scwo crush: {res.form}: kept {len(res.kept)} of {res.n}, {res.tokens} tokens of at most "
                f"{args.budget} ({args.token_counter})"
                + (f"; dropped items under key {res.key}" if res.key else "")
                + "\n"
            )
    except (ValueError, TypeError) as exc:
        raise _bad(exc, text, args.file) from None
    return _write(args, res.text)


#: Flags that choose items of a JSON array: what they mean for text is not defined.
_JSON_ONLY = ("max_items", "path", "pattern", "protect", "keep_protected", "bias", "upper")


def _is_text(raw: bytes) -> bool:
    """Whether input that is not valid JSON is text (a log, a diff, prose) rather than JSON with a
    mistake in it, whose error the user should see."""
    from ..shrink import looks_like_json

    return not looks_like_json(raw)


def _cmd_text(args: argparse.Namespace, raw: bytes, counter) -> int:
    """``scwo crush --budget N`` on text that is not JSON (a log, a diff, a manual): by its shape,
    as the MCP proxy shrinks a tool's text (:func:`scwo_np.shrink.shrink_text`)."""
    from ..shrink import shrink_text

    given = [f for f in _JSON_ONLY if getattr(args, f) not in (None, False, [])]
    if given:
        raise SystemExit(
            f"scwo: --{given[0].replace('_', '-')} chooses items of JSON, and this input is text; leave it "
            "out (--budget puts text within the budget by its shape: records by time, a diff by hunks, "
            "prose by sentences)"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        where = "standard input" if args.file == "-" else args.file
        raise SystemExit(f"scwo: {where}: text is not UTF-8 (byte {err.start}): {err.reason}") from None
    store = None if args.no_store else _store(args)
    query = args.query or ""

    def fit(b: int):
        return shrink_text(text, b, query=query or "text", token_counter=counter, store=store, hint=query)

    newline = True
    try:
        res = _with_newline(fit, args.budget, counter)
    except ValueError:  # the smallest budget, and stdout's line break over it: the text without one
        res, newline = fit(args.budget), False
    if res.of and (args.report or (res.key is not None and not args.quiet)):
        sys.stderr.write(
            f"scwo crush: {res.form}: kept {res.kept} of {res.of} {res.what}, {res.tokens} tokens of at most "
            f"{args.budget} ({args.token_counter})"
            + (f"; the rest under key {res.key} (scwo crush --retrieve KEY)" if res.key else "")
            + "\n"
        )
    return _write(args, res.text.removesuffix("\n"), newline)  # the text's own last line break is stdout's


def _cmd_lossless(args: argparse.Namespace) -> int:
    from ..anchor import lossless_decode, lossless_encode
    from ..tokens import count_tokens

    if args.lossless and args.expand:
        raise SystemExit("scwo: --lossless encodes and --expand decodes; pass one")
    for flag in ("max_items", "budget", "marker", "protect", "query", "bias", "upper"):
        if getattr(args, flag) not in (None, False, "", []):
            raise SystemExit(
                f"scwo: --{flag.replace('_', '-')} does not go with --{'lossless' if args.lossless else 'expand'}"
            )
    counter = _token_counter(args.token_counter) if args.report else None  # before any work
    raw = _read(args.file)
    if args.expand and COLUMNAR_KEY.encode() not in raw:  # lossless_decode gives such text back as it is
        where = "standard input" if args.file == "-" else args.file
        raise SystemExit(
            f"scwo: {where} holds no --lossless output (no {COLUMNAR_KEY!r} key) to expand; it is "
            "already the array"
        )
    try:
        out = lossless_encode(raw, path=args.path) if args.lossless else lossless_decode(raw)
        if counter is not None:
            text = raw.decode("utf-8")
            before, after = count_tokens([text.strip(), out], counter).tolist()
            sys.stderr.write(
                f"scwo crush: {'lossless' if args.lossless else 'expanded'}: {len(text.strip()):,} -> {len(out):,} "
                f"characters, {before:,} -> {after:,} tokens ({counter.name})\n"
            )
    except (ValueError, TypeError) as exc:
        raise _bad(exc, raw, args.file) from None
    return _write(args, out)


def _with_newline(fit, budget: int, counter):
    """``fit(budget)``, whose ``.text`` stdout ends with a line break: counted with it, so what is
    printed is within ``budget`` (the estimate counted 2,001 tokens for 2,000 with the newline)."""
    from ..tokens import count_tokens

    b, need = budget, budget
    while True:
        try:
            res = fit(b)
        except ValueError:
            if b == budget:
                raise
            raise ValueError(  # the budget asked for, not the one tried to leave room for the line break
                f"budget={budget} is too small for this document with the line break stdout ends with: "
                f"give budget >= {need}"
            ) from None
        over = int(count_tokens([res.text + "\n"], counter)[0]) - budget
        if over <= 0 or b <= 1:
            return res
        need = max(need, budget + over)
        b = max(1, b - over)


def _write(args: argparse.Namespace, out: str, newline: bool = True) -> int:
    with _output(args.output) as fh:
        _put(fh, out + "\n" if newline else out)
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


_OPS = {">=": "gte", "<=": "lte", ">": "gt", "<": "lt", "~": "contains", "=": "eq"}


def _where_value(raw: str):
    """A condition's value: JSON when it parses (500, 2.5, true, null, "x"), else the text itself."""
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, RecursionError):
        return raw


def _parse_where(conds: list[str]) -> dict:
    """``--where`` conditions -> the store's ``where`` mapping (field -> value or operator dict).

    ``FIELD=VALUE`` equality (VALUE read as JSON when it is: ``500``, ``true``, ``"500"``),
    ``FIELD~TEXT`` substring of the value as text, ``FIELD>=N`` ``FIELD>N`` ``FIELD<=N``
    ``FIELD<N`` ranges (numbers; ISO dates compare as text), ``FIELD?`` the field exists,
    ``!FIELD?`` it does not.  Conditions on one field combine (``--where 'size>=100' --where
    'size<200'``); every condition must hold.
    """
    where: dict = {}
    for cond in conds:
        at = min((i for i in (cond.find(c) for c in "<>=~") if i > 0), default=-1)
        if at < 0:
            name = cond[1:-1] if cond.startswith("!") else cond[:-1]
            if not cond.endswith("?") or not name:
                raise SystemExit(
                    f"scwo: --where takes FIELD=VALUE, FIELD~TEXT, FIELD>=N (>, <=, <), FIELD? or !FIELD? "
                    f"(like action=install, package~libc, size>=100, error?); got {cond!r}"
                )
            ops = {"exists": not cond.startswith("!")}
        else:
            name, rest = cond[:at], cond[at:]
            op = rest[:2] if rest[:2] in _OPS else rest[0]
            raw = rest[len(op) :]
            if op != "~" and raw[:1] in ("<", ">", "=", "~"):  # "size>>3": one operator per condition
                raise SystemExit(
                    f"scwo: --where {cond!r}: one operator per condition (=, ~, >=, >, <=, <); the value "
                    f"starts with {raw[0]!r} (for text that does, FIELD~TEXT)"
                )
            if op in (">=", "<=", ">", "<"):
                value = _where_value(raw)
                if not raw or not isinstance(value, int | float | str) or isinstance(value, bool):
                    raise SystemExit(f"scwo: --where {cond!r}: {op} takes a number or an ISO date/time")
            else:
                value = raw if op == "~" else _where_value(raw)
            ops = {_OPS[op]: value}
        old = where.get(name)
        if old is None:
            where[name] = ops
        else:
            for k, v in ops.items():
                if k in old and old[k] != v:
                    raise SystemExit(f"scwo: --where gives {name} two different {k!r} conditions; keep one")
                old[k] = v
    # a lone equality stays a plain value unless that value is itself an object (an operator dict)
    return {
        n: (c["eq"] if set(c) == {"eq"} and not isinstance(c["eq"], dict) else c) for n, c in where.items()
    }


def _parse_span(text: str | None, option: str) -> tuple[int | None, int | None]:
    """``START:STOP`` (either may be left out) or ``N`` (``N:N+1``): 0-based whole numbers, STOP excluded."""
    if not text:
        return None, None
    a, sep, b = text.partition(":")
    try:
        start, stop = (int(a), int(a) + 1) if not sep else ((int(a) if a else None), (int(b) if b else None))
    except ValueError:
        start = stop = -1
    if (start is not None and start < 0) or (stop is not None and stop < 0):
        raise SystemExit(
            f"scwo: {option} takes START:STOP (like 10:20, :5, 7; 0-based, STOP excluded); got {text!r}"
        )
    return start, stop


def _cmd_retrieve(args: argparse.Namespace) -> int:
    """``scwo crush --retrieve KEY``: filters first (--range, --where, dropped only), then --query, then a page."""
    if args.file is not None:
        raise SystemExit("scwo: --retrieve reads the store, not a file; drop the file argument")
    for flag in ("max_items", "marker", "lossless", "expand", "protect", "pattern", "keep_protected"):
        if getattr(args, flag):
            raise SystemExit(f"scwo: --{flag.replace('_', '-')} does not go with --retrieve")
    if args.store is not None and not os.path.exists(args.store):  # reading: a missing file is a typo
        raise SystemExit(f"scwo: --store {args.store}: no such file; give the store the crush wrote to")
    start, stop = _parse_span(args.positions, "--positions")
    kw: dict = {"start": start, "stop": stop, "where": _parse_where(args.where or []) or None}
    first, last = _parse_span(args.range, "--range")  # a page of the matching items: --offset/--limit
    if args.range and (args.offset or args.limit is not None):
        raise SystemExit(
            "scwo: --range START:STOP is --offset START --limit STOP-START; pass one or the other"
        )
    if args.range:
        args.offset = first or 0
        if last is not None:
            if last <= args.offset:
                raise SystemExit(f"scwo: --range {args.range}: STOP must be above START")
            args.limit = last - args.offset
    if args.fields:
        kw["fields"] = [f.strip() for f in args.fields.split(",") if f.strip()]
        if not kw["fields"]:
            raise SystemExit(f"scwo: --fields takes comma-separated field names; got {args.fields!r}")
    if args.query:
        kw["query"] = args.query
    if args.all:
        kw["dropped_only"] = False
    if args.offset:
        kw["offset"] = args.offset
    if args.limit is not None:
        kw["limit"] = args.limit
    with _store(args) as store:
        try:
            if args.budget is not None:  # a page within the ceiling; the next one's offset on stderr
                counter = _token_counter(args.token_counter)
                page = _with_newline(
                    lambda b: store.page(args.retrieve, budget=b, token_counter=counter, **kw),
                    args.budget,
                    counter,
                )
                out = page.text
                if page.next_offset is not None:
                    sys.stderr.write(
                        f"scwo crush: {len(page.items)} item{'' if len(page.items) == 1 else 's'}, {page.tokens} tokens; {page.remaining} more match "
                        f"(next page: --offset {page.next_offset})\n"
                    )
                elif args.report:
                    sys.stderr.write(
                        f"scwo crush: {len(page.items)} item{'' if len(page.items) == 1 else 's'}, {page.tokens} tokens; no more match\n"
                    )
            else:
                out = store.retrieve_json(args.retrieve, **kw)  # the items' text verbatim
        except KeyError as exc:
            raise SystemExit(f"scwo: {exc.args[0]}") from None
        except (
            ValueError,
            TypeError,
        ) as exc:  # the library's names for these options, as the CLI spells them
            msg = (
                str(exc)
                .replace("with query,", "with --query,")
                .replace("with start and stop", "with --range")
            )
            raise SystemExit(f"scwo: {msg.replace('where filters', '--where filters')}") from None
    return _write(args, out)


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``scwo crush`` to the ``scwo`` parser."""
    c = sub.add_parser(
        "crush",
        help="shrink a JSON array to the items an LLM will need (SmartCrusher), or any text (a log, a diff, "
        "a manual) within --budget tokens; get dropped items back",
        description="Keep at most N items of a JSON array (or of the largest array inside an object, of an "
        "object of records keyed by name, JSON Lines, concatenated JSON): errors, anomalies, query matches and protected items first, then "
        "position anchors. --marker says what was dropped and stores the whole array; --retrieve KEY "
        "gives items back. With --budget, text that is not JSON is shrunk by its shape, as `scwo mcp proxy` "
        "shrinks a tool's text: log lines and other records by time (errors, the newest and a spread kept), "
        "a diff by whole hunks, prose by the sentences --query asks about.",
    )
    c.add_argument("file", nargs="?", help="the tool output (- for stdin)")
    c.add_argument("--max-items", help="keep at most N items, or 'auto' (the data decides)")
    _renamed_flag(c, "--max-tokens", "--budget", type=_positive)
    c.add_argument(
        "--budget",
        type=_positive,
        help="the output, marker included, within N tokens of --token-counter: whole if it fits, else lossless "
        "if that fits, else the most items that fit (errors first); text by its shape; what is left out is "
        "stored",
    )
    c.add_argument(
        "--bias",
        help="with --max-items auto: conservative, balanced (the default), aggressive, or a share",
    )
    c.add_argument("--upper", type=int, help="with --max-items auto: at most this many (100)")
    c.add_argument("--query", default="", help="the user's request (position intents, terms to keep)")
    c.add_argument("--path", help="where the array is inside an object, e.g. data.items")
    c.add_argument("--pattern", choices=list(PATTERNS), help="override detection")
    c.add_argument(
        "--strategy", choices=list(ANCHOR_STRATEGIES), default="dynamic", help="static = first 3 + last 2"
    )
    c.add_argument(
        "--protect",
        action="append",
        metavar="REGEX",
        help="always keep items with a value matching REGEX (repeatable)",
    )
    c.add_argument(
        "--keep-protected", action="store_true", help="keep every protected item even beyond --max-items"
    )
    c.add_argument(
        "--marker", action="store_true", help="append an object saying what was dropped; stores the array"
    )
    c.add_argument("--store", help="the store file (default: crush_store.sqlite in the user cache folder)")
    c.add_argument("--no-store", action="store_true", help="with --marker: do not store the array")
    c.add_argument("--lossless", action="store_true", help="drop nothing: write the array in columnar form")
    c.add_argument("--expand", action="store_true", help="turn --lossless output back into the array")
    _renamed_flag(c, "--tokens", "--token-counter")
    c.add_argument(
        "--token-counter",
        default="estimate",
        help=f"with --budget or --report: the token counter ({', '.join(COUNTERS)})",
    )
    c.add_argument(
        "--retrieve", metavar="KEY", help="print items of the array stored under KEY (a marker's key)"
    )
    c.add_argument(
        "--range",
        metavar="START:STOP",
        help="with --retrieve: the matching items START to STOP (0-based, after the filters; the same as "
        "--offset START --limit STOP-START)",
    )
    c.add_argument(
        "--positions",
        metavar="START:STOP",
        help="with --retrieve: only items at these positions of the array (0-based, STOP excluded; the "
        "positions a marker names)",
    )
    c.add_argument(
        "--where",
        action="append",
        metavar="COND",
        help="with --retrieve: FIELD=VALUE, FIELD~TEXT (substring), FIELD>=N (>, <=, <), FIELD? (exists), "
        "!FIELD? (absent); repeatable, all must hold",
    )
    c.add_argument("--fields", help="with --retrieve: give each item only these fields (comma-separated)")
    c.add_argument(
        "--all",
        action="store_true",
        help="with --retrieve: the kept items too (default: only the dropped ones)",
    )
    c.add_argument(
        "--offset", type=_count, default=0, help="with --retrieve: skip the first N matching items (0)"
    )
    c.add_argument("--limit", type=_positive, help="with --retrieve: at most N matching items")
    c.add_argument("--report", action="store_true", help="print what was decided to stderr")
    c.add_argument(
        "-q", "--quiet", action="store_true",
        help="no summary line on stderr for text (the output's marker still says what was left out, and its key)",
    )  # fmt: skip
    c.add_argument("-o", "--output", default="-", help="output JSON (default stdout)")
    c.set_defaults(func=_cmd_crush)
