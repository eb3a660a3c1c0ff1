"""``scwo hsca score``, ``scwo hsca ingest`` and ``scwo hsca context``."""

from __future__ import annotations

import argparse
import json
import os
import sys

from ._io import (
    _count,
    _out,
)


def _read_texts(path: str, fmt: str, text_field: str | None, command: str) -> tuple[list[str], list[dict]]:
    """Chunks from ``path`` (``-`` = stdin): one per non-blank line, or JSONL records with ``text_field``.

    Returns the texts and, per text, the fields that identify it in the output
    (``line``, the input line it is on, plus ``id`` when a JSONL record has one).
    """
    from ._io import _lines, _read_jsonl, _text_field, _texts

    if fmt == "auto":
        fmt = "jsonl" if path.endswith((".jsonl", ".ndjson")) else "lines"
    if fmt == "jsonl":
        records = _read_jsonl(path)
        texts = _texts(records, _text_field(records, text_field, command))
        keys = [
            {"line": ln, **({"id": r["id"]} if "id" in r else {})}
            for ln, r in zip(records.lines, records, strict=True)
        ]
        return texts, keys
    texts, keys = [], []
    for lineno, line in _lines(path):
        if line.strip():
            texts.append(line.strip())
            keys.append({"line": lineno})
    return texts, keys


def _cmd_hsca_score(args: argparse.Namespace) -> int:
    from tqdm.auto import tqdm

    from ..hsca import coherence, domain_tags, nuance_flags, relational_weights
    from ._io import _write_jsonl

    texts, keys = _read_texts(args.file, args.format, args.text_field, "hsca score")
    l1 = relational_weights(texts, window=args.window) if texts else None

    def rows():
        bar = tqdm(total=len(texts), desc="scwo hsca score", unit="chunk", disable=not sys.stderr.isatty())
        for k, text in enumerate(texts):
            score = float(l1.scores[k])
            flags = nuance_flags(text)
            if l1.short[k]:
                flags.append("short_chunk")
            yield {
                **keys[k],
                "layer1": round(score, 4),
                "domains": domain_tags(text),
                "coherence": round(coherence(text, layer1=score), 4),
                "flags": flags,
            }
            bar.update(1)
        bar.close()

    _write_jsonl(rows(), args.output)
    return 0


def _cmd_hsca_ingest(args: argparse.Namespace) -> int:
    from tqdm.auto import tqdm

    from ..hsca import HSCAEngine, SnapshotStore
    from ._io import _write_jsonl

    texts, _ = _read_texts(args.file, "jsonl", args.text_field, "hsca ingest")
    if not texts:  # (a session is made by its turns: an empty one could not be asked for its context)
        raise SystemExit(
            f"scwo: {args.file} holds no turns (no JSONL records); give a conversation, one turn per line "
            'as {"text": ...}'
        )
    parent = os.path.dirname(os.path.abspath(args.store))
    if not os.path.isdir(parent):
        raise SystemExit(f"scwo: --store {args.store}: directory {parent} does not exist; create it first")
    store = SnapshotStore(args.store)
    try:
        # a session the store holds goes on: its snapshots, its open beat, the next positions
        eng = HSCAEngine.from_store(store, args.session, cooccurrence_window=args.window)
        before = len(eng.get_macro_context())
        earlier = sum(len(s.chunks) for s in eng.get_macro_context())  # turns before this run's snapshots
        quiet = args.quiet or not sys.stderr.isatty()
        for text in tqdm(texts, desc="scwo hsca ingest", unit="turn", disable=quiet, leave=False):
            eng.ingest_turn(text)
        if eng.buffer and not args.open:  # the conversation (or this part of it) ends: freeze the last beat
            eng.take_snapshot()
        snaps = eng.get_macro_context()[before:]
        store.save(args.session, snaps, buffer=eng.buffer)  # the new snapshots and the open beat, at once
        total = len(eng.get_micro_context())
    finally:
        store.close()
    if args.macro:
        turn = earlier
        for s in snaps:
            top = sorted(s.domain_summary.items(), key=lambda kv: -kv[1])[:3]
            domains = ", ".join(f"{d} {w:.2f}" for d, w in top)
            # snapshots and turns numbered from 1, as scwo hsca context cites them
            _out(f"{s.conversation_position + 1:>3}  turns {turn + 1}-{turn + len(s.chunks)}  "
                 f"macro_weight {s.macro_weight:.2f}  {domains}")  # fmt: skip
            turn += len(s.chunks)
    else:
        _write_jsonl((s.to_dict() for s in snaps), args.output)
    is_open = f", {len(eng.buffer)} in the open beat" if eng.buffer else ""
    if not args.quiet:
        sys.stderr.write(
            f"scwo hsca ingest: {_n(len(texts), 'turn')} -> {_n(len(snaps), 'new snapshot')}; session {args.session!r} in "
            f"{args.store} holds {_n(total, 'turn')} in {_n(before + len(snaps), 'snapshot')}{is_open}\n"
        )
    return 0


def _n(k: int, noun: str) -> str:
    return f"{k} {noun}" + ("" if k == 1 else "s")


def _window(value: str) -> int:
    """``--window``: a whole number of at least 2 (layer 1's co-occurrence window)."""
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes a whole number of at least 2; got {value!r}") from None
    if n < 2:
        raise argparse.ArgumentTypeError(f"takes a whole number of at least 2 (words seen together); got {n}")
    return n


def _share(value: str) -> float:
    """``--recent``: a number in [0, 1] (the share of the budget for the newest turns)."""
    try:
        x = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes a number from 0 to 1; got {value!r}") from None
    if not 0.0 <= x <= 1.0:
        raise argparse.ArgumentTypeError(f"takes a number from 0 to 1 (a share of the budget); got {value}")
    return x


def _cmd_hsca_context(args: argparse.Namespace) -> int:
    from ..hsca import HSCAEngine, SnapshotStore
    from ._io import _token_counter

    if not os.path.isfile(args.store):
        what = "a directory, not a store file" if os.path.isdir(args.store) else "no such file"
        raise SystemExit(
            f"scwo: --store {args.store}: {what}; give the store that scwo hsca ingest (or scwo mcp) wrote"
        )
    if args.query is not None and not args.query.strip():
        raise SystemExit("scwo: --query is empty; give the question as text, or leave --query out")
    counter = _token_counter(args.token_counter)
    store = SnapshotStore(args.store)
    try:
        sessions = store.sessions()
        if args.session not in sessions:
            known = ", ".join(repr(s) for s in sessions[:20]) or "none"
            raise SystemExit(
                f"scwo: --session {args.session!r} is not in {args.store} (its sessions: {known})"
            )
        eng = HSCAEngine.from_store(store, args.session, token_counter=counter)
    finally:
        store.close()
    ctx = eng.context(args.query, args.budget, recent=args.recent, exchange=args.exchange)
    if args.json:
        _out(json.dumps(ctx.to_dict(), ensure_ascii=False))
    elif ctx.text:
        _out(ctx.text)
    if not args.quiet:
        sys.stderr.write(
            f"scwo hsca context: {len(ctx.pieces)} pieces of {ctx.turns} turns, {ctx.tokens} tokens of "
            f"{ctx.budget} ({args.token_counter})\n"
        )
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """``scwo hsca score``, ``scwo hsca ingest`` and ``scwo hsca context``."""
    from ..tokens import COUNTERS

    h = sub.add_parser(
        "hsca", help="HSCA on your own text: score chunks, ingest a conversation, get its context in a budget"
    )
    hs = h.add_subparsers(dest="hsca_command", required=True, metavar="{score,ingest,context}")
    s = hs.add_parser(
        "score",
        help="layer 1, domains, coherence and flags of each chunk, as JSONL",
        description="Score each chunk of FILE: one chunk per non-blank line, or JSONL records "
        "(a .jsonl file, or --format jsonl) with a text field.",
    )
    s.add_argument("file", help="chunks, one per line or JSONL ('-' = stdin)")
    s.add_argument("--format", choices=("auto", "lines", "jsonl"), default="auto",
                   help="auto: JSONL for .jsonl/.ndjson files, else one chunk per line "
                        "(use JSONL for text whose line breaks matter, such as poems)")  # fmt: skip
    s.add_argument(
        "--text-field", help="JSONL field holding the text (default text; else content, with a note)"
    )
    s.add_argument("--window", type=_window, default=5, help="co-occurrence window of layer 1 (5)")
    s.add_argument("-o", "--output", default="-", help="output JSONL (default stdout)")
    s.set_defaults(func=_cmd_hsca_score)
    g = hs.add_parser(
        "ingest",
        help="turns of a conversation in, snapshots out (saved in a SQLite store)",
        description="Ingest the turns of CONVERSATION (JSONL, one turn per line with a text field) "
        "in order into --session of --store, and write the snapshots this run took as JSONL (or, with "
        "--macro, print them as the macro map). A session the store already holds goes on where it "
        "stopped: its open beat is restored, turns and snapshot positions continue (each run appends "
        "its turns: the same file ingested twice is stored twice). At the end the last beat is frozen into a snapshot (the file is a "
        "conversation, or a part of one, that ends); with --open it stays open in the store, and "
        "the next run (or scwo mcp) continues it.",
    )
    g.add_argument("file", help="conversation turns as JSONL ('-' = stdin)")
    g.add_argument("--store", required=True, help="SQLite snapshot store (created if missing)")
    g.add_argument("--session", default="default", help="session id in the store (default 'default')")
    g.add_argument(
        "--text-field", help="JSONL field holding the turn (default text; else content, with a note)"
    )
    g.add_argument("--window", type=_window, default=5, help="co-occurrence window of layer 1 (5)")
    g.add_argument(
        "--open", action="store_true", help="keep the last beat open (stored) instead of freezing it"
    )
    g.add_argument("--macro", action="store_true", help="print the macro map instead of the snapshots")
    g.add_argument("-o", "--output", default="-", help="output JSONL of snapshots (default stdout)")
    g.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no summary line on stderr")
    g.set_defaults(func=_cmd_hsca_ingest)
    c = hs.add_parser(
        "context",
        help="what the model should read about a stored session, within a token budget",
        description="Print the context of --session (from --store, as scwo hsca ingest or scwo mcp "
        "saved it) for --query within --budget tokens: the sentences of earlier turns the map ranks "
        "highest for the query, and the newest turns, one block per turn cited as "
        "'[turn 12, snapshot 3]' (a budget that holds the whole conversation: '[turns 1-40]' once, before "
        "the turns as they were). Without --query: the newest turns and each snapshot's most central "
        "sentences. The printed text (without its final newline) is within the budget by "
        "--token-counter; --json prints the context with its pieces (turn, snapshot, spans, score, "
        "reason) instead.",
    )
    c.add_argument("--store", required=True, help="the SQLite snapshot store (must exist)")
    c.add_argument("--session", required=True, help="the session's id in the store")
    c.add_argument("--query", help="what the context is for (the user's new message); default: none")
    c.add_argument("--budget", type=_count, required=True, help="the most tokens of the context (tokens)")
    c.add_argument(
        "--token-counter",
        default="estimate",
        choices=list(COUNTERS),
        help=f"how tokens are counted ({', '.join(COUNTERS)}; default estimate)",
    )
    c.add_argument(
        "--recent",
        type=_share,
        default=0.1,
        help="share of the budget for the newest turns, after the newest --exchange turns; 0 turns both "
        "off (default 0.1, as HSCAEngine.context's recent)",
    )
    c.add_argument(
        "--exchange",
        type=_count,
        default=0,
        help="the newest turns that come first, whole, as many as fit: 3 for a chat whose next message may "
        "be a follow-up (default 0, as HSCAEngine.context's exchange)",
    )
    c.add_argument(
        "--json", action="store_true", help="print the context as JSON (text, pieces, tokens, ...)"
    )
    c.add_argument("-q", "--quiet", action="store_true", help="no summary line on stderr")
    c.set_defaults(func=_cmd_hsca_context)
