"""Real data from this machine that the project did not write, for the MCP tests and measurements.

* :func:`dpkg_records` — ``/var/log/dpkg.log`` as JSON records (``date``, ``time``, ``action``,
  ``package``, ``version``/``old``/``new`` or ``state``), 17 months of a package manager's log.
* :func:`changelog_entries` — Debian changelog entries (one per package version) from
  ``/usr/share/doc/*/changelog.Debian.gz``.

``python tests/mcp_server/realdata.py [--label NAME]`` measures the text block the SDK's
client receives from ``scwo mcp`` (the one on ``PYTHONPATH``) for ``crush_json`` at 500
tokens, ``retrieve_dropped`` at 300 and ``select_context`` at 300, by the server's counter
(the estimate), WordPiece and tiktoken cl100k, and prints one JSON line.  It speaks both the
old argument names (``max_tokens``, ``question``, ``counter``) and the new ones (``budget``,
``query``, ``token_counter``), read from the tools' input schemas; ``--token-counter NAME`` makes
the server count with NAME (new names only); ``--held-out`` measures on alternatives.log and
other changelogs instead.  Run it from outside the repository (``python -m`` puts the current
folder first on ``sys.path``) to measure another tree given by ``PYTHONPATH``.
"""

from __future__ import annotations

import glob
import gzip
import json
import os
import re
import sys

DPKG_LOG = "/var/log/dpkg.log"


def dpkg_records(path: str = DPKG_LOG) -> list[dict]:
    """The log's lines as records, in file (time) order; lines that do not parse are skipped."""
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            parts = line.split()
            if len(parts) < 4:
                continue
            date, time, action, rest = parts[0], parts[1], parts[2], parts[3:]
            rec: dict = {"date": date, "time": time, "action": action}
            if action == "status" and len(rest) >= 3:
                rec |= {"state": rest[0], "package": rest[1], "version": rest[2]}
            elif action in ("install", "upgrade", "remove", "purge") and len(rest) >= 3:
                rec |= {"package": rest[0], "old": rest[1], "new": rest[2]}
            elif action in ("configure", "trigproc") and len(rest) >= 2:
                rec |= {"package": rest[0], "version": rest[1]}
            else:
                rec["args"] = " ".join(rest)
            out.append(rec)
    return out


def alternatives_records(path: str = "/var/log/alternatives.log") -> list[dict]:
    """``/var/log/alternatives.log`` as records (``date``, ``time``, ``message``), in file order."""
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.match(r"\S+ (\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d): (.*)", line.rstrip("\n"))
            if m:
                out.append({"date": m[1], "time": m[2], "message": m[3]})
    return out


_ENTRY = re.compile(r"^\S.*?\(.*?\).*?;.*?urgency=", re.M)


def changelog_entries(n: int = 100, packages: int | None = None, skip: int = 0) -> list[str]:
    """``n`` changelog entries (a header line, its bullets, the trailer), a few per package, from the
    sorted list of Debian changelogs starting at the ``skip``-th file."""
    files = sorted(glob.glob("/usr/share/doc/*/changelog.Debian.gz"))[skip:]
    out: list[str] = []
    for path in files[: packages or len(files)]:
        try:
            with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
                text = f.read(200_000)
        except OSError:
            continue
        starts = [m.start() for m in _ENTRY.finditer(text)]
        for a, b in list(zip(starts, starts[1:] + [len(text)], strict=True))[:3]:
            entry = re.sub(r"\n{2,}", "\n", text[a:b]).strip()
            if 40 <= len(entry) <= 1500:
                out.append(entry)
                if len(out) == n:
                    return out
    return out


def _counts(text: str) -> dict:
    from scwo_np.tokens import count_tokens

    return {c: int(count_tokens([text], c)[0]) for c in ("estimate", "wordpiece", "tiktoken")}


def measure(token_counter: str | None = None, held_out: bool = False) -> dict:
    """Token counts of the text blocks a client receives (see the module docs); ``held_out``:
    on alternatives.log and changelog entries from the 601st file on, with another query."""
    import tempfile

    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    records = alternatives_records() if held_out else dpkg_records()
    entries = changelog_entries(100, skip=600) if held_out else changelog_entries(100)
    question = "fix for a memory leak or crash" if held_out else "security fix for a buffer overflow (CVE)"
    result: dict = {
        "records": len(records),
        "entries": len(entries),
        "server_counter": token_counter or "estimate",
    }
    tc = {"token_counter": token_counter} if token_counter else {}

    async def go(store: str) -> None:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "scwo_np.cli", "mcp", "--store", store], env=dict(os.environ)
        )
        async with Client(params) as c:
            props = {t.name: t.input_schema["properties"] for t in (await c.list_tools()).tools}
            ceiling = "budget" if "budget" in props["crush_json"] else "max_tokens"
            doc = "json" if "json" in props["crush_json"] else "json_text"
            r = await c.call_tool("crush_json", {doc: json.dumps(records), ceiling: 500, **tc})
            text = "".join(b.text for b in r.content)
            result["crush_json@500"] = _counts(text)
            key = r.structured_content["key"]
            rc = "budget" if "budget" in props["retrieve_dropped"] else "max_tokens"
            r = await c.call_tool("retrieve_dropped", {"key": key, rc: 300, **tc})
            result["retrieve_dropped@300"] = _counts("".join(b.text for b in r.content))
            q = "query" if "query" in props["select_context"] else "question"
            r = await c.call_tool(
                "select_context",
                {"texts": entries, q: question, "budget": 300, **tc},
            )
            result["select_context@300"] = _counts("".join(b.text for b in r.content))

    with tempfile.TemporaryDirectory() as store:
        anyio.run(go, store)
    return result


if __name__ == "__main__":
    label = sys.argv[sys.argv.index("--label") + 1] if "--label" in sys.argv else "run"
    counter = sys.argv[sys.argv.index("--token-counter") + 1] if "--token-counter" in sys.argv else None
    print(json.dumps({"label": label, **measure(counter, "--held-out" in sys.argv)}))
