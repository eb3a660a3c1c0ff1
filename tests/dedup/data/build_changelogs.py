"""Build the Debian changelog samples used by the dedup tests and measurements.

Source: ``/usr/share/doc/*/changelog.Debian.gz`` on a Debian 12 machine (the
changelogs of the installed packages).  Each changelog is split into its
entries (``pkg (version) dist; urgency=...`` header to the `` -- maintainer``
trailer, both kept: that is the text a retriever would return).  Changelogs
shared by binary packages of one source (``libdrm2``, ``libdrm-common``, ...)
count once, by their source name.  Sources are split by a hash of their name
into two disjoint halves: ``tune`` (looked at while building) and ``held_out``
(only measured).  From each half, packages are drawn at random (seed 0) and up
to 3 entries from each, 300 entries per half.

Licence: each entry is part of its package's Debian changelog, under that
package's licence (see ``/usr/share/doc/PKG/copyright``); the fixture lives in
the source tree's tests only and is not shipped in the wheel.

Run: ``python tests/dedup/data/build_changelogs.py [--out tests/dedup/data/debian_changelog_entries.jsonl]``.
"""

from __future__ import annotations

import argparse
import glob
import gzip
import hashlib
import json
import os
import random
import re

HEADER = re.compile(r"^([a-z0-9][a-z0-9+.\-]*) \(([^)]*)\) [^;]*; .*$", re.M)
PER_PACKAGE = 3
SIZE = 300


def entries(text: str) -> list[tuple[str, str]]:
    """``(source, entry text)`` for each entry of a changelog, in file order."""
    heads = list(HEADER.finditer(text))
    out = []
    for k, m in enumerate(heads):
        end = heads[k + 1].start() if k + 1 < len(heads) else len(text)
        body = text[m.start() : end].strip()
        if body:
            out.append((m.group(1), body))
    return out


def load(root: str = "/usr/share/doc") -> dict[str, list[str]]:
    """Every source's entries (the first changelog seen for a source wins)."""
    by_source: dict[str, list[str]] = {}
    seen: set[str] = set()
    for path in sorted(glob.glob(os.path.join(root, "*", "changelog.Debian.gz"))):
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        try:
            with gzip.open(real, "rt", encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        es = entries(text)
        if es and es[0][0] not in by_source:
            by_source[es[0][0]] = [body for src, body in es if src == es[0][0]]
    return by_source


def half(source: str) -> str:
    return "held_out" if hashlib.sha256(source.encode()).digest()[0] & 1 else "tune"


def sample(by_source: dict[str, list[str]], which: str, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    names = sorted(s for s in by_source if half(s) == which)
    rng.shuffle(names)
    out: list[dict] = []
    for s in names:
        es = by_source[s]
        pick = sorted(rng.sample(range(len(es)), min(PER_PACKAGE, len(es))))
        for k in pick:
            if len(out) < SIZE:
                out.append({"package": s, "entry": k, "text": es[k], "split": which})
        if len(out) >= SIZE:
            break
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--out", default=os.path.join(os.path.dirname(__file__), "debian_changelog_entries.jsonl")
    )
    args = ap.parse_args()
    by_source = load()
    rows = sample(by_source, "tune") + sample(by_source, "held_out")
    with open(args.out, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
