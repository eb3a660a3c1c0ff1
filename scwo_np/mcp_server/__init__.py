"""``scwo mcp``: scwo_np's tools for agents, over the Model Context Protocol (the ``mcp`` extra).

:func:`build_server` makes the server (the official ``mcp`` SDK, version 2): ``select_context``,
``dedup_texts``, ``crush_json``, ``retrieve_dropped``, ``count_tokens``, ``hsca_ingest`` and
``hsca_context``, over a crush store and an HSCA snapshot store (SQLite) in one data folder,
within the per-call :class:`Limits`.  ``scwo mcp`` serves it over stdio, or streamable HTTP
with ``--http``.  ``mcp_latency`` (``scwo bench --mcp``) moved to :mod:`scwo_np.bench` in 0.2;
its old name here still works until 0.3, with a ``DeprecationWarning``.
"""

from ..validation import renamed_attributes
from ._server import build_server, default_data_dir
from ._tools import Limits, Tools

__all__ = ["Limits", "Tools", "build_server", "default_data_dir"]

#: Moved to scwo_np.bench in 0.2 (issue 41): the old name warns and forwards until 0.3.
__getattr__ = renamed_attributes(__name__, {"mcp_latency": "scwo_np.bench:mcp_latency"})
