"""Write the docs' headline figures from the one run kept in docs/_generated/figures.json.

    scwo bench --write-figures docs/_generated/figures.json --notes "..."   # the run (a few minutes)
    python tools/figures.py            # fill the marked regions of README.md, docs/index.md, docs/benchmarks.md
    python tools/figures.py --check    # exit 1 and name each region that says something else

The README's quality figure comes the same way from the committed quality run,
``docs/data/quality_minilm.json`` (``scwo bench --quality --embedder minilm --split both --json``),
which the quality guide draws; the quality guide's peers table from
``docs/data/quality_peers_minilm.json`` (the command is in ``PEERS_COMMAND`` below), with the peers'
versions from the pins in ``.ci/constraints.txt``.

A region is the text between ``<!-- figures:NAME -->`` and ``<!-- /figures -->`` on lines of their
own; everything between is generated (edit the templates below, never the region).
``tests/bench/test_figures.py`` runs the check, so a retyped figure fails the tests.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import re
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ROOT / "docs" / "_generated" / "figures.json"
QUALITY = ROOT / "docs" / "data" / "quality_minilm.json"
PEERS = ROOT / "docs" / "data" / "quality_peers_minilm.json"
#: Our methods shown beside the peers, in this order (the run writes them first).
OURS = ("top-k", "mmr", "sentences", "sentences (auto)", "msd", "dpp", "ssd", "cover")
PEERS_COMMAND = (
    f"scwo bench --quality --embedder minilm --methods '{','.join(OURS)}' --peers --json "
    "> docs/data/quality_peers_minilm.json"
)
#: File -> the regions it holds.
FILES = {
    "README.md": ("speed", "quality"),
    "docs/index.md": ("speed",),
    "docs/benchmarks.md": ("table",),
    "docs/user_guide/quality.md": ("peers",),
}
REGION = re.compile(r"(<!-- figures:(\w+) -->\n)(.*?)(<!-- /figures -->)", re.S)


def _machine(doc: dict) -> str:
    m = doc["machine"]
    return (
        f"a {m['cores']}-core {m['arch']} machine ({m['cpu']}; Python {m['python']}, NumPy {m['numpy']} "
        f"with {m['blas']}, Numba {m['numba']})"
    )


def _when(doc: dict) -> str:
    return datetime.date.fromisoformat(doc["date"]).strftime("%B %Y")


def _fill(text: str) -> str:
    """Lines of at most 100 characters, never breaking inside a `code span`."""
    text = re.sub(r"`[^`]*`", lambda m: m.group(0).replace(" ", "\0"), text)
    lines = textwrap.fill(text, 100, break_on_hyphens=False, break_long_words=False)
    return lines.replace("\0", " ") + "\n"


def _headline(doc: dict) -> dict:
    h = doc.get("headline")
    if not h:
        raise SystemExit(
            f"{FIGURES.relative_to(ROOT)} has no headline: write it from a full run (no --quick)"
        )
    return h


def _speed(doc: dict, link: str, lead: str) -> str:
    h = _headline(doc)
    return _fill(
        f"{lead}Budgeted MMR over {h['n']:,} chunks of {h['d']} dimensions with a {h['budget']:,}-token "
        f"budget runs **{h['lazy_vs_exact']:,.0f}× faster than the exact greedy** (the same picks, every "
        f"candidate re-scored at every pick, compiled with Numba too) and takes "
        f"{h['lazy_over_gemv']:.1f}× the time of one `E @ q` matrix-vector product over the same "
        f"embeddings (the least any exact method can do is read them once); over "
        f"{h['large_n']:,} chunks, {h['large_lazy_over_gemv']:.1f}× `E @ q`. Ratios from one run of "
        f"`scwo bench --write-figures` on {_machine(doc)}, {_when(doc)}: the [whole table]({link}), "
        f"with how busy the machine was; generated from `docs/_generated/figures.json`."
    )


def _table(doc: dict) -> str:
    from scwo_np.bench import format_table

    rows = [{k: math.nan if v is None else v for k, v in r.items()} for r in doc["rows"]]
    load = doc.get("load_average")
    busy = f" (load average {load[0]:g} before, {load[1]:g} after)" if load else ""
    notes = doc.get("notes", "").strip().rstrip(".")
    note = f" {notes[:1].upper()}{notes[1:]}{busy}." if notes else ""
    head = _fill(
        f"Measured in one run of `{doc['command']}` on {_machine(doc)}, {doc['date']}.{note} "
        f"Generated from `docs/_generated/figures.json` (`python tools/figures.py`)."
    )
    return head + "\n" + format_table(rows) + "\n\n"  # a blank line ends the table


def _hit(rows: list[dict], name: str, method: str, budget: int = 400) -> float:
    (r,) = [
        r
        for r in rows
        if (r["set"], r["method"], r["budget"], r["split"]) == (name, method, budget, "held_out")
    ]
    return r["hit"]


def _quality(_: dict) -> str:
    rows = json.loads(QUALITY.read_text(encoding="utf-8"))
    faq = [
        (_hit(rows, s, "sentences"), _hit(rows, s, "top-k"), _hit(rows, s, "sentences (auto)"))
        for s in ("python-faq", "django-faq")
    ]
    (s1, t1, a1), (s2, t2, a2) = faq
    over = 100 * (
        _hit(rows, "python-overview", "sentences (auto)") - _hit(rows, "python-overview", "sentences")
    )
    same = "does the same" if (a1, a2) == (s1, s2) else f"reaches {a1:.3f} and {a2:.3f}"
    adds = f"adds {over:.1f} points" if over >= 0 else f"loses {-over:.1f} points"
    return _fill(
        "On held-out questions of the Python and Django FAQs, each with the 50 paragraphs MiniLM retrieved "
        "from the whole documentation, sentence granularity puts a sentence of the answer into a 400-token "
        f"context **{100 * (s1 - t1):.1f} and {100 * (s2 - t2):.1f} points more often than top-k** ({s1:.3f} "
        f'against {t1:.3f}, {s2:.3f} against {t2:.3f}); with `lam="auto"` it {same} on the FAQs and {adds} '
        "on library overviews (`scwo bench --quality --embedder minilm`, [quality at "
        "budget](docs/user_guide/quality.md); generated from `docs/data/quality_minilm.json`)."
    )


def _pins() -> dict[str, str]:
    """Package -> the version ``.ci/constraints.txt`` pins (the peers' versions the figures were measured with)."""
    text = (ROOT / ".ci" / "constraints.txt").read_text(encoding="utf-8")
    return dict(re.findall(r"^([A-Za-z0-9_.-]+)==([^\s#]+)", text, re.M))


def _peers(_: dict) -> str:
    rows = json.loads(PEERS.read_text(encoding="utf-8"))
    from scwo_np.bench._peers import PEERS as REGISTRY

    sets = list(dict.fromkeys(r["set"] for r in rows))
    budgets = sorted({r["budget"] for r in rows})
    methods = list(dict.fromkeys(r["method"] for r in rows))
    n = {r["set"]: r["n"] for r in rows}
    pins = _pins()

    def cell(method, name, budget, measure):
        (r,) = [r for r in rows if (r["method"], r["set"], r["budget"]) == (method, name, budget)]
        return r[measure]

    def mean(method, budget, measure):
        return sum(cell(method, s, budget, measure) for s in sets) / len(sets)

    def library(method):
        if method not in REGISTRY:
            return "scwo_np"
        package = REGISTRY[method].package
        return f"{package} {pins[package]}" if package in pins else package

    head = _fill(
        f"Held-out questions of the {len(sets)} bundled sets ("
        + ", ".join(f"`{s}` {n[s]}" for s in sets)
        + "), the 50 paragraphs MiniLM retrieved for each, the same vectors and the same token "
        f"counter for every method; `{PEERS_COMMAND}`. Generated from `docs/data/quality_peers_minilm.json` "
        "(`python tools/figures.py`). **hit** is averaged over the sets (each set weighs the same); "
        "**over** is the share of calls whose output exceeded the budget before the benchmark cut it."
    )
    lines = [
        "| method | library | " + " | ".join(f"hit@{b}" for b in budgets) + " | "
        + " | ".join(f"over@{b}" for b in budgets) + " |",
        "|---|---|" + "---|" * (2 * len(budgets)),
    ]  # fmt: skip
    for m in methods:
        hits = " | ".join(f"{mean(m, b, 'hit'):.3f}" for b in budgets)
        overs = " | ".join(f"{mean(m, b, 'over'):.2f}" for b in budgets)
        lines.append(f"| {m} | {library(m)} | {hits} | {overs} |")
    per = [
        "",
        "Per set, hit at " + " / ".join(map(str, budgets)) + " tokens:",
        "",
        "| method | " + " | ".join(f"{s} ({n[s]})" for s in sets) + " |",
        "|---|" + "---|" * len(sets),
    ]
    for m in methods:
        cells = [" / ".join(f"{cell(m, s, b, 'hit'):.2f}" for b in budgets) for s in sets]
        per.append(f"| {m} | " + " | ".join(cells) + " |")
    return head + "\n" + "\n".join(lines + per) + "\n\n"


RENDER = {
    ("README.md", "speed"): lambda d: _speed(d, "docs/benchmarks.md", ""),
    ("README.md", "quality"): _quality,
    ("docs/index.md", "speed"): lambda d: _speed(d, "benchmarks.md", "**Headline figure.** "),
    ("docs/benchmarks.md", "table"): _table,
    ("docs/user_guide/quality.md", "peers"): _peers,
}


def load(path: Path = FIGURES) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def render(name: str, text: str, doc: dict) -> str:
    """``text`` (the file ``name``) with each of its regions generated from ``doc``."""
    found = [m.group(2) for m in REGION.finditer(text)]
    if sorted(found) != sorted(FILES[name]):
        raise ValueError(f"{name} must hold the regions {list(FILES[name])} once each; it holds {found}")
    return REGION.sub(lambda m: m.group(1) + RENDER[name, m.group(2)](doc) + m.group(4), text)


def differences(root: Path = ROOT, doc: dict | None = None) -> list[str]:
    """The files whose regions differ from what :func:`render` writes from the committed JSON."""
    doc = load() if doc is None else doc
    out = []
    for name in FILES:
        text = (root / name).read_text(encoding="utf-8")
        if render(name, text, doc) != text:
            out.append(name)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python tools/figures.py", description=__doc__.split("\n")[0])
    p.add_argument("--check", action="store_true", help="only report the regions that differ")
    args = p.parse_args(argv)
    doc = load()
    if args.check:
        bad = differences(ROOT, doc)
        for name in bad:
            sys.stderr.write(
                f"{name}: its figures differ from {FIGURES.relative_to(ROOT)}; run python tools/figures.py\n"
            )
        return 1 if bad else 0
    for name in FILES:
        path = ROOT / name
        text = path.read_text(encoding="utf-8")
        new = render(name, text, doc)
        if new != text:
            path.write_text(new, encoding="utf-8")
            sys.stderr.write(f"wrote {name}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
