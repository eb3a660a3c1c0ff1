"""Any tool output within a token budget, by its shape: what an agent's model reads of a tool.

:func:`shrink_text` puts a text within a budget, losing nothing when it can: JSON in its cheapest
lossless form that fits, else crushed (:mod:`scwo_np.anchor`); a unified diff by whole hunks;
repeated records (log lines, ``git log`` entries, table rows) by their time order, errors and
anomalies; prose by the sentences :func:`scwo_np.select.select_texts` picks.  What is left out is
stored in a :class:`~scwo_np.anchor.CrushStore` under the key the text names.  ``scwo mcp proxy``
applies it to every tool result of an MCP server, and LangChain's ``ScwoToolOutputMiddleware`` to
every tool result of an agent.
"""

from ._text import LOSSLESS_FORMS, MODES, BudgetTooSmall, Shrunk, call_query, looks_like_json, shrink_text

__all__ = [
    "LOSSLESS_FORMS",
    "MODES",
    "BudgetTooSmall",
    "Shrunk",
    "call_query",
    "looks_like_json",
    "shrink_text",
]
