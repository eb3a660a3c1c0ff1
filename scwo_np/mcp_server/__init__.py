"""``scwo mcp``: scwo_np's tools for agents, over the Model Context Protocol (the ``mcp`` extra).

:func:`build_server` makes the server (the official ``mcp`` SDK, version 2): ``select_context``,
``dedup_texts``, ``crush_json``, ``retrieve_dropped``, ``count_tokens``, ``hsca_ingest`` and
``hsca_context``, over a crush store and an HSCA snapshot store (SQLite) in one data folder,
within the per-call :class:`Limits`.  ``scwo mcp`` serves it over stdio, or streamable HTTP
with ``--http``.  :func:`mcp_latency` times a ``select_context`` round trip over stdio
(``scwo bench --mcp``).
"""

from ._bench import mcp_latency
from ._server import build_server, default_data_dir
from ._tools import Limits, Tools

__all__ = ["Limits", "Tools", "build_server", "default_data_dir", "mcp_latency"]
