"""Logs keep their time: crushing real logs of this machine to a token ceiling.

``python -m scwo_evals.logs`` reads the logs at run time (nothing from ``/var/log``
is committed), turns each into a JSON array of records and crushes it with
``crush_json(budget=...)`` at 500 and 1,500 tokens, by the ``"estimate"``
counter and by tiktoken's ``cl100k_base`` when installed.  For each output it
checks what the model reads (the output text, parsed back):

* the **newest** record is kept;
* wherever 20 or more records are kept, **every tenth of the timeline** (the
  records in time order cut into ten equal runs) has a kept record;
* the output is **within the ceiling** by the counter;
* the marker's dropped ranges are exactly the positions not kept;
* the kept items' mean place in the timeline (0 the oldest, 1 the newest), which a
  query about the latest items should raise and one about the first should lower.

The sets (the split is fixed; nothing held out was looked at while tuning):

* ``dpkg-tune``: the first half of ``/var/log/dpkg.log`` (tuning only);
* ``dpkg-held``: its second half;
* ``alternatives``: ``/var/log/alternatives.log``, ``{date, time, program, message}``;
* ``apt-history``: ``/var/log/apt/history.log``, one record per package an apt run
  touched, ``{date, time, commandline, action, package, version}``;
* ``apt-term``: ``/var/log/apt/term.log``, one record per line, ``{line, session, text}``
  (a line number for a timeline);
* ``changelog-*``: the 8 longest Debian changelogs under ``/usr/share/doc`` (newest
  entry first, as Debian writes them), ``{package, version, distribution, urgency,
  date, maintainer, changes}`` with the date in ISO form.
"""

from __future__ import annotations

import argparse
import email.utils
import glob
import gzip
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

__all__ = [
    "alternatives_records",
    "apt_history_records",
    "apt_term_records",
    "changelog_records",
    "dpkg_records",
    "evaluate",
    "log_sets",
]


def dpkg_records(lines: list[str]) -> list[dict]:
    """``/var/log/dpkg.log`` lines as records ``{date, time, action, ...}``."""
    out = []
    for line in lines:
        t = line.split()
        if len(t) < 4:
            continue
        rec: dict = {"date": t[0], "time": t[1], "action": t[2]}
        if t[2] == "startup":
            rec.update(what=t[3], mode=" ".join(t[4:]))
        elif t[2] == "status":
            rec.update(state=t[3], package=t[4] if len(t) > 4 else "", version=t[5] if len(t) > 5 else "")
        elif t[2] in ("conffile",):
            rec.update(file=t[3], decision=" ".join(t[4:]))
        else:
            rec.update(
                package=t[3], old_version=t[4] if len(t) > 4 else "", new_version=t[5] if len(t) > 5 else ""
            )
        out.append(rec)
    return out


_ALT = re.compile(r"^(\S+) (\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}): (.*)$")


def alternatives_records(lines: list[str]) -> list[dict]:
    """``/var/log/alternatives.log`` lines as ``{date, time, program, message}``."""
    out = []
    for line in lines:
        m = _ALT.match(line.rstrip("\n"))
        if m:
            out.append({"date": m[2], "time": m[3], "program": m[1], "message": m[4]})
    return out


_PKG = re.compile(r"([^\s,()]+) \(([^)]*)\)")


def apt_history_records(text: str) -> list[dict]:
    """``/var/log/apt/history.log`` as one record per package an apt run touched."""
    out = []
    for block in re.split(r"\n\s*\n", text):
        head = dict(
            (k.strip(), v.strip()) for k, _, v in (ln.partition(":") for ln in block.splitlines()) if v
        )
        start = head.get("Start-Date", "").split()
        if len(start) != 2:
            continue
        for action in ("Install", "Upgrade", "Remove", "Purge", "Downgrade", "Reinstall"):
            for pkg, ver in _PKG.findall(head.get(action, "")):
                out.append(
                    {"date": start[0], "time": start[1], "commandline": head.get("Commandline", ""),
                     "action": action.lower(), "package": pkg, "version": ver}
                )  # fmt: skip
    return out


def apt_term_records(lines: list[str]) -> list[dict]:
    """``/var/log/apt/term.log`` as one record per line ``{line, session, text}`` (long lines cut to 200)."""
    out, session = [], ""
    for k, line in enumerate(lines, 1):
        line = line.rstrip("\n")
        if line.startswith("Log started:"):
            session = " ".join(line.split()[2:])
        if line.strip():
            out.append({"line": k, "session": session, "text": line[:200]})
    return out


_ENTRY = re.compile(r"^(\S+) \(([^)]+)\) ([^;]*);\s*urgency=(\S+)")
_TRAILER = re.compile(r"^ -- (.+?)  (.+)$")


def changelog_records(text: str) -> list[dict]:
    """A Debian changelog's entries (newest first), each ``{package, version, ..., date}``."""
    out, cur = [], None
    for line in text.splitlines():
        m = _ENTRY.match(line)
        if m:
            cur = {"package": m[1], "version": m[2], "distribution": m[3].strip(), "urgency": m[4],
                   "changes": []}  # fmt: skip
            continue
        t = _TRAILER.match(line)
        if t and cur is not None:
            try:
                when = email.utils.parsedate_to_datetime(t[2].strip())
            except (TypeError, ValueError):
                cur = None
                continue
            cur["date"] = when.strftime("%Y-%m-%dT%H:%M:%S")
            cur["maintainer"] = t[1]
            cur["changes"] = " ".join(" ".join(cur["changes"]).split())[:300]
            out.append(cur)
            cur = None
        elif cur is not None and line.strip():
            cur["changes"].append(line.strip())
    return out


def _read(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.readlines()
    except OSError:
        return []


def log_sets(*, tuning: bool = False) -> Iterator[tuple[str, list[dict]]]:
    """The named record arrays: the tuning half of dpkg.log with ``tuning=True``, else the held-out sets."""
    dpkg = dpkg_records(_read("/var/log/dpkg.log"))
    half = len(dpkg) // 2
    if tuning:
        yield "dpkg-tune", dpkg[:half]
        return
    yield "dpkg-held", dpkg[half:]
    yield "alternatives", alternatives_records(_read("/var/log/alternatives.log"))
    yield "apt-history", apt_history_records("".join(_read("/var/log/apt/history.log")))
    yield "apt-term", apt_term_records(_read("/var/log/apt/term.log"))
    logs, seen = [], set()
    for path in glob.glob("/usr/share/doc/*/changelog.Debian.gz"):
        try:
            with gzip.open(path, "rt", encoding="utf-8", errors="replace") as fh:
                recs = changelog_records(fh.read())
        except (OSError, EOFError):
            continue
        first = json.dumps(recs[:1])
        if first not in seen:  # several packages ship one source package's changelog: once
            seen.add(first)
            logs.append((len(recs), Path(path).parent.name, recs))
    for _, name, recs in sorted(logs, key=lambda t: (-t[0], t[1]))[:8]:
        yield f"changelog-{name}", recs


def _timeline(records: list[dict]) -> np.ndarray:
    """The positions in time order (date+time, an ISO date, a line number; else the array order)."""
    keys = []
    for r in records:
        if "line" in r:
            keys.append(f"{r['line']:012d}")
        else:
            keys.append(f"{r.get('date', '')} {r.get('time', '')}")
    return np.argsort(np.array(keys), kind="stable")


def _ranges_to_positions(ranges: list) -> set[int]:
    out: set[int] = set()
    for a, b in ranges:
        out.update(range(a, b + 1))
    return out


def check_output(records: list[dict], out: str, budget: int, count: Callable[[str], int]) -> dict:
    """What the model reads from one crushed output: the figures of the module's checks."""
    pieces = [json.dumps(r, separators=(",", ":")) for r in records]
    arr = json.loads(out)
    marker = arr[-1]["_omitted"] if arr and isinstance(arr[-1], dict) and "_omitted" in arr[-1] else None
    kept_items = arr[:-1] if marker else arr
    n = len(records)
    kept_pieces = [json.dumps(it, separators=(",", ":")) for it in kept_items]
    exact = False
    if marker is None:
        kept, exact = list(range(n)), kept_pieces == pieces
    elif "ranges" in marker:  # the positions not listed must be the kept items, in order
        kept = sorted(set(range(n)) - _ranges_to_positions(marker["ranges"]))
        exact = [pieces[i] for i in kept] == kept_pieces
    if not exact:  # no usable ranges: the kept items' positions from their text (copies: the next unused)
        index: dict[str, list[int]] = {}
        for i, p in enumerate(pieces):
            index.setdefault(p, []).append(i)
        kept = []
        for p in kept_pieces:
            kept.append(next(i for i in index[p] if not kept or i > kept[-1]))
    order = _timeline(records)
    rank = np.empty(len(records), np.int64)
    rank[order] = np.arange(len(records))
    tenths = set((rank[kept] * 10 // n).tolist()) if kept else set()
    newest_time = order[-1]
    same = [i for i in range(n) if pieces[i] == pieces[newest_time]]
    return {
        "tokens": count(out),
        "over": count(out) > budget,
        "kept": len(kept),
        "newest": any(i in kept for i in same),
        "tenths": len(tenths),
        "place": float(np.mean(rank[kept] / max(n - 1, 1))) if kept else 0.5,
        "ranges_exact": exact,
        "marker": marker,
    }


def _counters() -> list[tuple[str, object, Callable[[str], int]]]:
    from scwo_np.tokens import as_token_counter, count_tokens

    out = []
    for name in ("estimate", "cl100k_base"):
        try:
            c = as_token_counter(name)
            c("probe") if callable(c) else None
        except Exception:  # tiktoken not installed or its encoding not cached: skip the counter
            continue
        out.append((name, name, lambda s, c=c: int(count_tokens([s], c)[0])))
    return out


def evaluate(budgets=(500, 1500), *, tuning: bool = False, query: str = "", verbose: bool = False) -> dict:
    """Crush every set at every budget and counter; the totals of the checks."""
    from scwo_np.anchor import crush_json

    tot = {"outputs": 0, "newest_kept": 0, "over": 0, "tenths_cases": 0, "tenths_ok": 0, "ranges_exact": 0,
           "mean_place": 0.0}  # fmt: skip
    for name, records in log_sets(tuning=tuning):
        if len(records) < 40:
            continue
        text = json.dumps(records)
        for cname, counter, count in _counters():
            for b in budgets:
                out = crush_json(text, budget=b, token_counter=counter, query=query)
                r = check_output(records, out, b, count)
                tot["outputs"] += 1
                tot["newest_kept"] += r["newest"]
                tot["over"] += r["over"]
                tot["ranges_exact"] += r["ranges_exact"]
                tot["mean_place"] += r["place"]
                if r["kept"] >= 20:
                    tot["tenths_cases"] += 1
                    tot["tenths_ok"] += r["tenths"] == 10
                if verbose:
                    m = r["marker"] or {}
                    extra = {k: m[k] for k in ("must_keep_dropped", "must_keep_by_kind") if k in m}
                    print(
                        f"{name:28s} n={len(records):5d} {cname:8s} {b:5d}: {r['tokens']:5d} tok, kept {r['kept']:3d}, "
                        f"newest {'yes' if r['newest'] else 'NO '}, tenths {r['tenths']:2d}/10, "
                        f"ranges {'exact' if r['ranges_exact'] else 'NOT exact'} {extra}"
                    )
    tot["mean_place"] = round(tot["mean_place"] / max(tot["outputs"], 1), 3)
    return tot


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m scwo_evals.logs", description=__doc__.splitlines()[0])
    ap.add_argument(
        "--tuning", action="store_true", help="the tuning half of dpkg.log instead of the held-out sets"
    )
    ap.add_argument("--query", default="", help="the query passed to crush_json")
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args(argv)
    tot = evaluate(tuning=args.tuning, query=args.query, verbose=not args.quiet)
    print(json.dumps(tot))
    print(
        f"newest kept {tot['newest_kept']}/{tot['outputs']}; every tenth covered {tot['tenths_ok']}/"
        f"{tot['tenths_cases']} (outputs keeping >= 20); over the ceiling {tot['over']}; "
        f"marker ranges exact {tot['ranges_exact']}/{tot['outputs']}; kept items' mean place in the "
        f"timeline {tot['mean_place']:.2f} (0 oldest, 1 newest)"
    )


if __name__ == "__main__":
    main()
