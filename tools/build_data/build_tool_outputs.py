"""Rebuild ``scwo_evals/data/tool_outputs/``: real tool outputs that no one on this project wrote.

Each file is what a tool printed on a Debian 12 machine, turned into JSON the way an
agent's tool wrapper would (the commands are below), trimmed to a few hundred kB:

* ``dpkg_status.json`` — ``dpkg-query -W`` over the installed packages (one object per
  package: name, version, architecture, section, priority, installed size, maintainer,
  source, status): database rows.
* ``dpkg_log.jsonl`` — ``/var/log/dpkg.log`` as JSON Lines (install/upgrade/remove/
  configure events and ``status`` lines, which have other fields): a log.
* ``git_log.json`` — ``git log`` of pallets/click (BSD-3-Clause), the 1,500 most recent
  commits: hash, author, date, subject, merge flag: a time series of prose.
* ``find_doc.json`` — ``find /usr/share/doc -maxdepth 2`` with type, size, mode,
  owner and date per entry (the first 2,000 in sorted order): a file listing.
* ``pip_list.json`` — ``pip list --format json`` of a Python environment.
* ``pip_inspect.json`` — ``pip inspect`` of the same environment, the first 60
  packages, each description cut to 400 characters: an object holding an array.

The texts belong to their authors (Debian maintainers, the click contributors, the
authors of the listed packages); they are used here as test data only.

    python tools/build_data/build_tool_outputs.py --click /path/to/click/git [--python /path/to/python]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "scwo_evals" / "data" / "tool_outputs"
_LOG = re.compile(r"^(\S+ \S+) (\S+) (.*)$")


def _run(*cmd: str, cwd: str | None = None) -> str:
    return subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=cwd).stdout


def dpkg_status() -> list[dict]:
    fields = [
        "Package",
        "Version",
        "Architecture",
        "Section",
        "Priority",
        "Installed-Size",
        "Maintainer",
        "Source",
        "Status",
    ]
    fmt = "\\t".join(f"${{{f}}}" for f in fields) + "\\n"  # dpkg-query's own escapes
    rows = []
    for line in _run("dpkg-query", "-W", "-f", fmt).splitlines():
        vals = line.split("\t")
        row = {f.lower().replace("-", "_"): v for f, v in zip(fields, vals, strict=True) if v != ""}
        if "installed_size" in row:
            row["installed_size"] = int(row["installed_size"])
        rows.append(row)
    return rows


def dpkg_log(path: str = "/var/log/dpkg.log", limit: int = 3000) -> list[dict]:
    out = []
    for line in Path(path).read_text(errors="replace").splitlines()[-limit:]:
        m = _LOG.match(line)
        if not m:
            continue
        ts, action, rest = m.groups()
        parts = rest.split()
        if action == "status" and len(parts) == 3:
            out.append(
                {"ts": ts, "action": action, "state": parts[0], "package": parts[1], "version": parts[2]}
            )
        elif action in ("install", "upgrade", "remove", "purge") and len(parts) == 3:
            out.append({"ts": ts, "action": action, "package": parts[0], "from": parts[1], "to": parts[2]})
        elif action in ("configure", "trigproc") and len(parts) == 3:
            out.append(
                {"ts": ts, "action": action, "package": parts[0], "version": parts[1], "pending": parts[2]}
            )
        else:
            out.append({"ts": ts, "action": action, "detail": rest})
    return out


def find_doc(root: str = "/usr/share/doc", limit: int = 2000) -> list[dict]:
    text = _run(
        "find",
        root,
        "-mindepth",
        "1",
        "-maxdepth",
        "2",
        "-printf",
        "%P\\t%y\\t%s\\t%m\\t%u\\t%g\\t%TY-%Tm-%Td\\n",
    )
    rows = []
    for line in sorted(text.splitlines())[:limit]:
        path, kind, size, mode, user, group, date = line.split("\t")
        rows.append(
            {
                "path": path,
                "type": kind,
                "size": int(size),
                "mode": mode,
                "user": user,
                "group": group,
                "date": date,
            }
        )
    return rows


def git_log(repo: str, limit: int = 1500) -> list[dict]:
    text = _run("git", "log", f"-{limit}", "--format=%H%x1f%an%x1f%aI%x1f%P%x1f%s", cwd=repo)
    rows = []
    for line in text.splitlines():
        h, author, date, parents, subject = line.split("\x1f", 4)
        rows.append(
            {"commit": h[:12], "author": author, "date": date, "merge": " " in parents, "subject": subject}
        )
    return rows


def pip_outputs(python: str) -> tuple[list[dict], dict]:
    listing = json.loads(_run(python, "-m", "pip", "list", "--format", "json"))
    inspect = json.loads(_run(python, "-m", "pip", "inspect"))
    inspect["installed"] = inspect["installed"][:60]
    for pkg in inspect["installed"]:
        meta = pkg.get("metadata", {})
        if "description" in meta:
            meta["description"] = meta["description"][:400]
        pkg.pop("metadata_location", None)  # a path on the machine that built it
    inspect.pop("environment", None)
    return listing, inspect


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--click", required=True, help="a git clone of pallets/click")
    ap.add_argument("--python", default=sys.executable, help="the environment for pip list / pip inspect")
    args = ap.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    (OUT / "dpkg_status.json").write_text(json.dumps(dpkg_status(), indent=1, ensure_ascii=False) + "\n")
    (OUT / "dpkg_log.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in dpkg_log()))
    (OUT / "find_doc.json").write_text(json.dumps(find_doc()) + "\n")
    (OUT / "git_log.json").write_text(json.dumps(git_log(args.click), indent=1, ensure_ascii=False) + "\n")
    listing, inspect = pip_outputs(args.python)
    (OUT / "pip_list.json").write_text(json.dumps(listing) + "\n")
    (OUT / "pip_inspect.json").write_text(json.dumps(inspect, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
