"""A small real MCP server (the official SDK's MCPServer over stdio) for the proxy's tests.

Its tools misbehave on request: ``crash`` ends the process mid-call, ``hang`` never answers,
``progress`` reports progress before answering, ``wait_for_cancel`` writes to a file when its
call is cancelled, ``logs`` returns log lines, ``failing_logs`` fails with them, ``rows`` returns a
structured result (its text the same JSON), ``broken_json`` text that starts like JSON and is
not; ``read_file``, ``run`` and ``json_items`` give this machine's files, command outputs and JSON
arrays as a real server would (a file's carriage returns kept; a list one text block per item); it
also has a resource and a prompt.  ``python upstream_server.py`` serves stdio; ``--http PORT``
serves streamable HTTP.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

server = MCPServer("test-upstream", instructions="A server for the proxy's tests.")


@server.tool(description="Echo the text back.")
def echo(text: str) -> str:
    return text


@server.tool(description="End the server's process in the middle of the call.")
def crash() -> str:
    os._exit(3)


@server.tool(description="Never answer (sleeps for an hour).")
def hang() -> str:
    time.sleep(3600)
    return "late"


@server.tool(
    description="Wait up to a minute; when the call is cancelled, write 'cancelled' to the file at path."
)
async def wait_for_cancel(path: str) -> str:
    try:
        await anyio.sleep(60)
    except anyio.get_cancelled_exc_class():
        with open(path, "w", encoding="utf-8") as f:
            f.write("cancelled")
        raise
    return "not cancelled"


@server.tool(description="Report progress three times, then answer.")
async def progress(ctx: Context) -> str:
    for i in range(3):
        await ctx.report_progress(i + 1, 3, f"step {i + 1}")
        await anyio.sleep(0.05)
    return "done"


@server.tool(description="n log lines, one an error.")
def logs(n: int = 500) -> str:
    lines = []
    for i in range(n):
        level = "ERROR" if i == n // 3 else "INFO"
        msg = "disk /dev/sda1 full, write failed" if level == "ERROR" else f"GET /items/{i * 37 % 1009} 200"
        lines.append(f"2026-03-01T10:{i // 60 % 60:02d}:{i % 60:02d}Z {level} worker-{i % 4} {msg} seq={i}")
    return "\n".join(lines) + "\n"


@server.tool(description="Fail, with n log lines as the error's text.")
def failing_logs(n: int = 500) -> str:
    raise ToolError(logs(n))  # a ToolError's text reaches the client (others are masked)


class Row(BaseModel):
    id: int
    status: str
    total: int


class Table(BaseModel):
    table: str
    rows: list[Row]


@server.tool(description="A structured result: n rows (the text is the same JSON).")
def rows(n: int = 400) -> Table:
    return Table(
        table="orders", rows=[Row(id=i, status="failed" if i == 123 else "ok", total=i * 3) for i in range(n)]
    )


@server.tool(description="Text that starts like JSON and is not.")
def broken_json(n: int = 300) -> str:
    return "[" + ", ".join(
        f'{{"id": {i}, "note": "unterminated' if i == n // 2 else f'{{"id": {i}}}' for i in range(n)
    )


@server.tool(description="A file's text, as its bytes say (no newline translation: a carriage return stays).")
def read_file(path: str) -> str:
    with open(path, "rb") as f:
        return f.read().decode("utf-8", errors="replace")


@server.tool(description="Run a command (argv, no shell) and return its standard output, as written.")
def run(argv: list[str]) -> str:
    return subprocess.run(argv, capture_output=True, check=False).stdout.decode("utf-8", errors="replace")


@server.tool(
    description="The JSON array in the file at path, as the SDK returns a list: one text block per item."
)
def json_items(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


@server.resource("test://readme", description="A small text resource.")
def readme() -> str:
    return "This is the test upstream's readme."


@server.prompt(description="Ask about a topic.")
def ask(topic: str) -> str:
    return f"Tell me about {topic}."


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
