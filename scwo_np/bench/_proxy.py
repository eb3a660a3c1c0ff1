"""What ``scwo mcp proxy`` adds to a call, and what shrinking a 100 KB text costs.

:func:`proxy_latency` starts ``scwo mcp`` twice as a subprocess over stdio, once alone and
once behind ``scwo mcp proxy``, and talks to each with the official SDK's client:

* a small result that passes through (``count_tokens`` on one short text): the median round trip
  with and without the proxy, in alternating rounds, and the difference of the medians (the
  proxy's added latency: one more process, two more JSON-RPC hops and the budget check);
* a 100 KB text result (``select_context`` asked for the whole of ~100 KB of the bundled
  sample's texts, then cut by the proxy to ``budget`` tokens by sentence selection): the same
  difference, the proxy's crush beside the upstream's own time;
* in process, :func:`~scwo_np.shrink.shrink_text` on 100 KB of log lines (records),
  of JSON records and of prose, each to ``budget`` tokens: the shrink alone.

It needs the ``mcp`` extra, imported when it runs.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from typing import Any

from ..datasets import load_sample
from ..validation import check_budget, check_int

__all__ = ["proxy_latency"]


def _text_100kb() -> list[str]:
    out, size = [], 0
    texts = load_sample().texts
    k = 0
    while size < 100_000:
        t = texts[k % len(texts)]
        out.append(t)
        size += len(t.encode("utf-8"))
        k += 1
    return out


def _logs_100kb() -> str:
    lines, i = [], 0
    while sum(map(len, lines)) < 100_000:
        level = "ERROR" if i % 211 == 97 else "INFO"
        lines.append(f"2026-03-01T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z {level} svc-{i % 7} "
                     f"GET /orders/{i * 37 % 1009} {200 if level == 'INFO' else 500} {i % 97} ms\n")  # fmt: skip
        i += 1
    return "".join(lines)


def _median_ms(xs: list[float]) -> float:
    return 1e3 * statistics.median(xs)


def proxy_latency(calls: int = 200, budget: int = 1000) -> dict[str, Any]:
    """The proxy's added latency for a small result and a 100 KB one, and the shrink's own times.

    Parameters
    ----------
    calls : int
        Timed calls of the small result, each way (after 5 warm-up calls); the 100 KB call is
        timed ``max(5, calls // 10)`` times each way.
    budget : int
        The proxy's budget (tokens).

    Returns
    -------
    dict
        ``passthrough_direct_ms``, ``passthrough_proxy_ms``, ``passthrough_added_ms`` (medians),
        ``big_direct_ms``, ``big_proxy_ms``, ``big_added_ms``, ``big_passthrough_ms`` (through a proxy
        with ``--mode off``: the extra hop alone), ``big_shrink_added_ms`` (the proxy's shrink beside the
        hop), ``big_kb``, ``big_tokens_before`` and ``big_tokens`` (the 100 KB result), and ``shrink_ms`` (in process, per shape: records, json,
        prose) with ``calls`` and ``budget``.
    """
    calls = check_int(calls, name="calls", low=1)
    budget = check_budget(budget)
    try:
        import anyio
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters

        from ..shrink import shrink_text
    except ImportError as exc:
        raise ImportError(
            f"proxy_latency needs the official MCP SDK: pip install 'scwo_np[mcp]' ({exc})"
        ) from exc

    small = {"texts": ["a small result that passes through"]}
    big_texts = _text_100kb()
    big = {"texts": big_texts, "query": "how do I read a file", "budget": 10**6, "order": "original"}
    out: dict[str, Any] = {"calls": calls, "budget": budget}
    rows = [{"ts": f"2026-03-01T10:{i // 60 % 60:02d}:{i % 60:02d}Z", "level": "ERROR" if i % 211 == 97 else "INFO",
             "path": f"/orders/{i * 37 % 1009}", "ms": i % 97} for i in range(1400)]  # fmt: skip
    shapes = {"records": _logs_100kb(), "json": json.dumps(rows), "prose": "\n\n".join(big_texts)}
    out["shrink_ms"] = {}
    for name, text in shapes.items():  # first: no server is starting or stopping meanwhile
        shrink_text(text, budget, query="errors")
        ts = []
        for _ in range(max(11, calls // 10)):
            t = time.perf_counter()
            shrink_text(text, budget, query="errors")
            ts.append(time.perf_counter() - t)
        out["shrink_ms"][name] = {
            "kb": round(len(text.encode("utf-8")) / 1024, 1),
            "median_ms": _median_ms(ts),
        }
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ)
        scwo = [sys.executable, "-m", "scwo_np.cli"]
        direct = StdioServerParameters(command=scwo[0], args=[*scwo[1:], "mcp", "--store", tmp], env=env)
        proxied = StdioServerParameters(command=scwo[0], args=[*scwo[1:], "mcp", "proxy", "--budget", str(budget),
                                                               "--store", tmp, "--", *scwo, "mcp", "--store", tmp],
                                        env=env)  # fmt: skip
        off = StdioServerParameters(command=scwo[0], args=[*scwo[1:], "mcp", "proxy", "--mode", "off", "--store", tmp,
                                                           "--", *scwo, "mcp", "--store", tmp], env=env)  # fmt: skip
        times: dict[str, list[float]] = {"sd": [], "sp": [], "bd": [], "bp": [], "bo": []}

        async def run() -> None:
            async with Client(direct) as d, Client(proxied) as p, Client(off) as o:
                for _ in range(5):
                    await d.call_tool("count_tokens", small)
                    await p.call_tool("count_tokens", small)
                r = await d.call_tool("select_context", big)
                whole = r.content[0].text
                r = await p.call_tool("select_context", big)
                meta = (r.meta or {}).get("scwo_np/proxy", {})
                out.update(big_kb=round(len(whole.encode("utf-8")) / 1024, 1),
                           big_tokens_before=meta.get("tokens_before"), big_tokens=meta.get("tokens"),
                           big_form=meta.get("form"))  # fmt: skip
                for k in range(calls):  # alternating: both see the same machine
                    for client, key in ((d, "sd"), (p, "sp")) if k % 2 else ((p, "sp"), (d, "sd")):
                        t = time.perf_counter()
                        await client.call_tool("count_tokens", small)
                        times[key].append(time.perf_counter() - t)
                await o.call_tool("select_context", big)
                for k in range(max(5, calls // 10)):
                    trio = ((d, "bd"), (o, "bo"), (p, "bp"))
                    for client, key in trio if k % 2 else trio[::-1]:
                        t = time.perf_counter()
                        await client.call_tool("select_context", big)
                        times[key].append(time.perf_counter() - t)

        anyio.run(run)
    out.update(
        passthrough_direct_ms=_median_ms(times["sd"]),
        passthrough_proxy_ms=_median_ms(times["sp"]),
        big_direct_ms=_median_ms(times["bd"]),
        big_proxy_ms=_median_ms(times["bp"]),
        big_passthrough_ms=_median_ms(times["bo"]),
    )
    out["passthrough_added_ms"] = out["passthrough_proxy_ms"] - out["passthrough_direct_ms"]
    out["big_added_ms"] = out["big_proxy_ms"] - out["big_direct_ms"]
    out["big_shrink_added_ms"] = out["big_proxy_ms"] - out["big_passthrough_ms"]  # the shrink, beside the hop
    return out
