"""How long a ``select_context`` round trip takes over stdio, and how much of it is the protocol.

:func:`mcp_latency` starts ``scwo mcp`` as a subprocess, talks to it with the official SDK's
client over stdio, and times ``select_context`` on 50 real texts of about 100 tokens (the
bundled Python-docs sample) with the default LSA embedder; the same call made in-process on
the same texts is the selection's own time, and the rest of the round trip is the
protocol's (JSON-RPC framing, pipes, validation, the worker thread).  It needs the ``mcp``
extra, imported when it runs (an ImportError names it).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from typing import Any

from ..datasets import load_sample
from ..tokens import estimate_tokens
from ..validation import check_budget, check_int

__all__ = ["mcp_latency"]


def _texts(n: int = 50, chars: int = 400) -> list[str]:
    """``n`` texts of about 100 tokens: the sample's chunks cut at ``chars`` characters, on a word."""
    out = []
    for t in load_sample().texts:
        cut = t[:chars].rsplit(" ", 1)[0] if len(t) > chars else t
        if len(cut) >= chars // 2:
            out.append(cut)
        if len(out) == n:
            break
    return out


def _p99(xs: list[float]) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, round(0.99 * (len(s) - 1)))]


def mcp_latency(calls: int = 200, budget: int = 1000) -> dict[str, Any]:
    """Round-trip times of ``select_context`` over stdio, against the selection alone.

    Parameters
    ----------
    calls : int
        Timed calls (after 5 warm-up calls).
    budget : int
        The token budget of each call.

    Returns
    -------
    dict
        ``median_ms`` and ``p99_ms`` of the round trip, ``selection_median_ms`` (the same
        call in-process), ``protocol_share`` (1 - selection / round trip, medians) and the
        inputs (``calls``, ``texts``, ``tokens_per_text``).

    Examples
    --------
    >>> r = mcp_latency(calls=5)
    >>> sorted(r), r["texts"], 0 <= r["protocol_share"] < 1
    (['calls', 'median_ms', 'p99_ms', 'protocol_share', 'selection_median_ms', 'texts', 'tokens_per_text'], 50, True)
    """
    calls = check_int(calls, name="calls", low=1)
    budget = check_budget(budget)
    try:  # the mcp extra, imported here so that scwo_np.bench imports without it
        import anyio
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters

        from ..mcp_server import Tools
    except ImportError as exc:
        raise ImportError(
            f"mcp_latency needs the official MCP SDK: pip install 'scwo_np[mcp]' ({exc})"
        ) from exc

    texts = _texts()
    question = "How do I parse a JSON document from a file?"
    args = {"texts": texts, "query": question, "budget": budget}
    with tempfile.TemporaryDirectory() as store:
        params = StdioServerParameters(  # this process's environment: the same scwo_np (PYTHONPATH), the same threads
            command=sys.executable, args=["-m", "scwo_np.cli", "mcp", "--store", store], env=dict(os.environ)
        )
        rtt: list[float] = []

        async def run() -> None:
            async with Client(params) as c:
                for _ in range(5):
                    await c.call_tool("select_context", args)
                for _ in range(calls):
                    t = time.perf_counter()
                    r = await c.call_tool("select_context", args)
                    rtt.append(time.perf_counter() - t)
                    if r.is_error:  # pragma: no cover - a broken server is not a latency
                        raise RuntimeError(f"select_context failed: {r.content}")

        anyio.run(run)
        tools = Tools(store)
        try:
            sel = []
            for _ in range(5):
                tools.select_context(**args)
            for _ in range(calls):
                t = time.perf_counter()
                tools.select_context(**args)
                sel.append(time.perf_counter() - t)
        finally:
            tools.close()
    med, smed = statistics.median(rtt), statistics.median(sel)
    return {
        "median_ms": 1e3 * med,
        "p99_ms": 1e3 * _p99(rtt),
        "selection_median_ms": 1e3 * smed,
        "protocol_share": max(0.0, 1.0 - smed / med),
        "calls": calls,
        "texts": len(texts),
        "tokens_per_text": round(float(estimate_tokens(texts).mean())),
    }
