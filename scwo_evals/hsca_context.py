"""HSCA's budgeted context on long real interactions (issue 42): does it hold the answer?

    python tools/build_data/build_hsca_context.py          # once: scwo_evals/data/hsca_context/
    python -m scwo_evals.hsca_context                      # every source, budgets 200, 400, 800
    python -m scwo_evals.hsca_context --sources gitfaq,sqlite-faq --embedder none --json

Each source (``tools/build_data/build_hsca_context.py`` builds them; ``scwo_evals/README.md``
lists them with their licences) is one session: a FAQ's or a manual's answer paragraphs, in
document order and without their titles, ingested as turns into one
:class:`~scwo_np.hsca.HSCAEngine`; then its questions (the section titles) are asked, each
with the session's context at each budget.  A context answers a question when it holds,
verbatim, a sentence of the gold answer (:func:`scwo_np.bench._hsca.answer_sentences`:
sentences of 20 characters or more that are prose, not code).  Methods, each within the
budget counted on the whole text with the engine's token counter (default ``"estimate"``):

* ``hsca``: ``engine.context(query, budget).text`` (left out while the engine has no ``context``);
* ``recency``: the newest turns, whole, newest first while they fit, in conversation order;
* ``top-k turns``: the turns nearest the query by the embedder's cosine, whole, best first, each
  one that fits;
* ``top-k sentences``: the same over the sentences of every turn.

``--embedder minilm`` (default) ranks the top-k baselines with all-MiniLM-L6-v2 and gives the
engine the same embedder; ``--embedder none`` gives the engine none and ranks the baselines with
LSA fitted on the session (``lsa`` does both).  ``engine_options`` (``--engine-options JSON``)
are more keyword arguments of the engine or of its ``context`` method (``recent``, ``lam``), to
try settings: ``--engine-options '{"recent": 0.1, "max_buffer_chunks": 10}'``.

Each source has a fixed role: ``tune`` (settings may be chosen on it) or ``held_out`` (report
only).  Reported per source: hit rate, mean tokens used and overruns per method and budget, the
number of questions ``n``, and ingest speed (turns per second, the engine's own work: turns are
embedded beforehand); then the mean over the sources of each role.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

DATA = Path(__file__).resolve().parent / "data" / "hsca_context"
SOURCES = (
    "python-faq",
    "django-faq",
    "debian-faq",
    "git-manual",
    "gitfaq",
    "sqlite-faq",
    "sqlalchemy-faq",
)
BUDGETS = (200, 400, 800)


def load(name: str) -> dict[str, Any]:
    """One source: ``name``, ``role``, ``kind``, ``source``, ``licence``, ``turns`` and ``questions``."""
    path = DATA / f"{name}.json.gz"
    if not path.is_file():
        raise SystemExit(f"no {path}: run python tools/build_data/build_hsca_context.py")
    return json.loads(gzip.decompress(path.read_bytes()))


def _embedders(embedder: str, corpus: Sequence[str]):
    """(the baselines' embedder, the engine's) for ``--embedder``."""
    from scwo_np.bench._hsca import _Memo
    from scwo_np.embed import as_embedder

    if embedder == "none":
        return _Memo(as_embedder("lsa", corpus)), None
    emb = _Memo(as_embedder(embedder, corpus))
    return emb, emb


def run_source(
    name: str,
    *,
    budgets: Sequence[int] = BUDGETS,
    embedder: str = "minilm",
    token_counter: object = None,
    engine_options: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Rows (method, budget, n, hit, tokens, over) of one source, with its name, role and session size."""
    from scwo_np.bench._hsca import _evaluate, split_options
    from scwo_np.hsca import HSCAEngine
    from scwo_np.tokens import as_token_counter

    data = load(name)
    turns = data["turns"]
    queries = [q["text"] for q in data["questions"]]
    gold = [q["gold"] for q in data["questions"]]
    counter = as_token_counter(token_counter)
    base, eng_emb = _embedders(embedder, [*turns, *queries])
    options, context_options = split_options(engine_options)
    has_context = hasattr(HSCAEngine, "context")
    if has_context:
        options.setdefault("token_counter", counter)
        options.setdefault("embedder", eng_emb)
    if options.get("embedder") is not None:
        base(turns)  # embedded once, beforehand: ingest is timed as the engine's own work
    engine = HSCAEngine(**options)
    t0 = time.perf_counter()
    for t in turns:
        engine.ingest_turn(t)
    tps = len(turns) / (time.perf_counter() - t0)
    rows = _evaluate(
        turns,
        queries,
        gold,
        budgets=budgets,
        embedder=base,
        token_counter=counter,
        engine=engine,
        context_options=context_options,
    )
    for r in rows:
        r.update(
            source=name,
            role=data["role"],
            kind=data["kind"],
            turns=len(turns),
            embedder=embedder,
            ingest_turns_per_second=tps,
        )
    return rows


def run(
    sources: Sequence[str] = SOURCES,
    *,
    budgets: Sequence[int] = BUDGETS,
    embedder: str = "minilm",
    token_counter: object = None,
    engine_options: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """:func:`run_source` on each source, one engine per source reused for all its questions."""
    return [
        row
        for name in sources
        for row in run_source(
            name,
            budgets=budgets,
            embedder=embedder,
            token_counter=token_counter,
            engine_options=engine_options,
        )
    ]


def format_rows(rows: Sequence[Mapping[str, Any]]) -> str:
    """One Markdown table per source (hit and mean tokens at each budget, overruns), then the
    mean hit rate over the sources of each role."""
    budgets = sorted({r["budget"] for r in rows})
    head = (
        "| method | "
        + " | ".join(f"hit@{b}" for b in budgets)
        + " | "
        + " | ".join(f"tokens@{b}" for b in budgets)
        + " | over |"
    )
    rule = "|---" * (2 * len(budgets) + 2) + "|"
    out = []
    for src in dict.fromkeys(r["source"] for r in rows):
        rs = [r for r in rows if r["source"] == src]
        by = {(r["method"], r["budget"]): r for r in rs}
        r0 = rs[0]
        out += [
            f"{src} ({r0['role']}; {r0['kind']}): {r0['turns']} turns, n = {r0['n']} questions, "
            f"ingest {r0['ingest_turns_per_second']:,.0f} turns/s\n",
            head,
            rule,
        ]
        for m in dict.fromkeys(r["method"] for r in rs):
            cells = [f"{by[(m, b)]['hit']:.3f}" for b in budgets]
            cells += [f"{by[(m, b)]['tokens']:.0f}" for b in budgets]
            over = sum(by[(m, b)]["over"] for b in budgets)
            out.append(f"| {m} | " + " | ".join(cells) + f" | {over} |")
        out.append("")
    for role in ("tune", "held_out"):
        rs = [r for r in rows if r["role"] == role]
        if not rs:
            continue
        srcs = list(dict.fromkeys(r["source"] for r in rs))
        n = sum(r["n"] for r in rs if r["method"] == rs[0]["method"] and r["budget"] == budgets[0])
        out += [
            f"{role}: mean over {len(srcs)} sources ({', '.join(srcs)}; {n} questions); "
            "pooled over the questions in brackets\n",
            "| method | " + " | ".join(f"hit@{b}" for b in budgets) + " |",
            "|---" * (len(budgets) + 1) + "|",
        ]
        for m in dict.fromkeys(r["method"] for r in rs):
            cells = []
            for b in budgets:
                sel = [r for r in rs if r["method"] == m and r["budget"] == b]
                mean = np.mean([r["hit"] for r in sel])
                pooled = sum(r["hit"] * r["n"] for r in sel) / max(1, sum(r["n"] for r in sel))
                cells.append(f"{mean:.3f} ({pooled:.3f})")
            out.append(f"| {m} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out).rstrip("\n")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m scwo_evals.hsca_context", description=__doc__.split("\n")[0])
    p.add_argument("--budgets", default=",".join(map(str, BUDGETS)), help="comma-separated token budgets")
    p.add_argument("--sources", default=",".join(SOURCES), help="comma-separated sources (all)")
    p.add_argument("--role", choices=["tune", "held_out"], help="only the sources of this role")
    p.add_argument("--embedder", choices=["none", "lsa", "minilm"], default="minilm")
    p.add_argument("--token-counter", default=None, help="the engine's counter (estimate)")
    p.add_argument("--engine-options", default="{}", help="JSON: more keyword arguments of HSCAEngine")
    p.add_argument("--json", action="store_true", help="the rows as JSON")
    args = p.parse_args(argv)
    sources = [s.strip() for s in args.sources.split(",") if s.strip()]
    bad = [s for s in sources if s not in SOURCES]
    if bad:
        p.error(f"--sources: unknown {bad}; choose from {', '.join(SOURCES)}")
    if args.role:
        sources = [s for s in sources if load(s)["role"] == args.role]
    budgets = [int(b) for b in args.budgets.split(",")]
    rows = run(
        sources,
        budgets=budgets,
        embedder=args.embedder,
        token_counter=args.token_counter,
        engine_options=json.loads(args.engine_options),
    )
    sys.stdout.write((json.dumps(rows, indent=1) if args.json else format_rows(rows)) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
