"""``scwo hsca score`` and ``scwo hsca ingest``."""

from __future__ import annotations

import argparse
import sys

from ._io import (
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
    from ..hsca import HSCAEngine, SnapshotStore
    from ._io import _write_jsonl

    texts, _ = _read_texts(args.file, "jsonl", args.text_field, "hsca ingest")
    store = SnapshotStore(args.store)
    eng = HSCAEngine(cooccurrence_window=args.window)
    for text in texts:
        eng.ingest_turn(text)
    if eng.buffer:  # the conversation ends: freeze what is left
        eng.take_snapshot()
    snaps = eng.get_macro_context()
    store.save(args.session, snaps)
    if args.macro:
        turn = 0
        for s in snaps:
            top = sorted(s.domain_summary.items(), key=lambda kv: -kv[1])[:3]
            domains = ", ".join(f"{d} {w:.2f}" for d, w in top)
            _out(f"{s.conversation_position:>3}  turns {turn + 1}-{turn + len(s.chunks)}  "
                 f"macro_weight {s.macro_weight:.2f}  {domains}")  # fmt: skip
            turn += len(s.chunks)
    else:
        _write_jsonl((s.to_dict() for s in snaps), args.output)
    sys.stderr.write(
        f"scwo hsca ingest: {len(texts)} turns -> {len(snaps)} snapshots, saved as session "
        f"{args.session!r} in {args.store}\n"
    )
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """``scwo hsca score`` and ``scwo hsca ingest``."""
    h = sub.add_parser("hsca", help="HSCA on your own text: score chunks, or ingest a conversation")
    hs = h.add_subparsers(dest="hsca_command", required=True, metavar="{score,ingest}")
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
    s.add_argument("--window", type=int, default=5, help="co-occurrence window of layer 1 (5)")
    s.add_argument("-o", "--output", default="-", help="output JSONL (default stdout)")
    s.set_defaults(func=_cmd_hsca_score)
    g = hs.add_parser(
        "ingest",
        help="turns of a conversation in, snapshots out (saved in a SQLite store)",
        description="Ingest the turns of CONVERSATION (JSONL, one turn per line with a text field) "
        "in order, freeze the last beat, save the snapshots in --store under --session, and write "
        "them as JSONL (or, with --macro, print the macro map).",
    )
    g.add_argument("file", help="conversation turns as JSONL ('-' = stdin)")
    g.add_argument("--store", required=True, help="SQLite snapshot store (created if missing)")
    g.add_argument("--session", default="default", help="session id in the store (default 'default')")
    g.add_argument(
        "--text-field", help="JSONL field holding the turn (default text; else content, with a note)"
    )
    g.add_argument("--window", type=int, default=5, help="co-occurrence window of layer 1 (5)")
    g.add_argument("--macro", action="store_true", help="print the macro map instead of the snapshots")
    g.add_argument("-o", "--output", default="-", help="output JSONL of snapshots (default stdout)")
    g.set_defaults(func=_cmd_hsca_ingest)
