"""``scwo mcp proxy``: another MCP server's tools, each result's text within a token budget.

:func:`build_proxy` makes the SDK's low-level ``Server`` in front of an :class:`Upstream`:

* the upstream's tools, mirrored (name, title, description, input schema, annotations, icons,
  ``_meta``), less the excluded ones, plus ``retrieve_dropped`` (``scwo mcp``'s own tool, over
  the proxy's store).  A tool's output schema is mirrored only for a tool whose mode is
  ``"off"``: a shrunk result cannot keep the structured content a schema would demand;
* its resources, resource templates, prompts and completions, passed through;
* each call forwarded with its progress notifications (the upstream's, sent on to the
  client) and cancelled with the client's request; the result, within the tool's budget,
  by :func:`~scwo_np.mcp_server._shrink.shrink_result` (one that fits passes as it is; an
  error result's text is held to the budget too, and it stays an error);
* the faults of :mod:`~scwo_np.mcp_server._upstream` as tool errors, and a result the proxy
  cannot shrink (a bug, or output it cannot read) passed on unchanged, with a warning.

:class:`ProxyConfig` holds the settings, read by :func:`read_config` from a TOML or JSON file.
"""

from __future__ import annotations

import copy
import difflib
import functools
import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import anyio

from ..anchor import CrushStore
from ..anchor._records import MIN_BUDGET
from ..shrink import MODES, BudgetTooSmall, call_query, shrink_text
from ..tokens import COUNTERS, as_token_counter, count_tokens
from ._shrink import RETRIEVE, shrink_result
from ._upstream import Upstream, UpstreamError

__all__ = ["ProxyConfig", "ToolConfig", "build_proxy", "read_config"]

log = logging.getLogger(__name__)

#: The retrieval tool the proxy adds (``scwo mcp``'s, over the proxy's store).
RETRIEVE_DESCRIPTION = (
    "Get back what this proxy left out of another tool's result. When a result was over its token budget, "
    "its text ends with a marker such as '[scwo: 288 of 300 records left out (positions 1-45, ...); "
    'retrieve_dropped with key "81da0e0bcae974e0" gives them back]\' (for JSON, an object {"_omitted": {...,'
    ' "key": ...}} inside the array). Call this tool with that key when what you need may be among the '
    "left-out records, items, sentences or diff hunks (an older commit, a row, a log line, a file's changes): "
    "by default it returns only those, one page within budget tokens, as a JSON array (records, sentences "
    "and hunks as strings, each hunk under its file's header; JSON items whole); filter with start/stop "
    "(positions), where (JSON items' fields) or rank with query (a file's name finds its hunks); call again "
    "with offset=next_offset for the next page."
)


@dataclass(frozen=True)
class ToolConfig:
    """One tool's settings: ``budget`` (tokens), ``mode`` (one of :data:`MODES`) and ``query`` (a hint
    added to the call's arguments as the query); a budget or mode of None is the proxy's own, as
    it is when the tool is called (so ``--budget`` on the command line reaches a tool whose table
    in the config file sets only its mode)."""

    budget: int | None = None
    mode: str | None = None
    query: str = ""


@dataclass(frozen=True)
class ProxyConfig:
    """The proxy's settings (``scwo mcp proxy --help`` and the config file give each).

    Parameters
    ----------
    budget : int
        Tokens of a result's text the model may read, markers included (2,000).
    token_counter : str
        What counts them (``"estimate"``: 4 characters a token).
    mode : str
        The default mode (``"auto"``).
    exclude : frozenset of str
        Tools the client does not see (calling one is an error).
    tools : mapping
        Per tool, its :class:`ToolConfig`.
    call_timeout, start_timeout : float
        Seconds a call may take (60), and the upstream's start (30).
    max_result_bytes : int
        A result's text larger than this is an error rather than read (16 MB).
    store_bytes : int
        The store's size, beyond which the least recently used entries go (256 MB).

    Examples
    --------
    >>> cfg = ProxyConfig(budget=800, tools={"git_log": ToolConfig(1500, "records")})
    >>> cfg.tool("git_log").budget, cfg.tool("git_status").budget, cfg.tool("git_status").mode
    (1500, 800, 'auto')
    """

    budget: int = 2000
    token_counter: str = "estimate"
    mode: str = "auto"
    exclude: frozenset[str] = frozenset()
    tools: Mapping[str, ToolConfig] = field(default_factory=dict)
    call_timeout: float = 60.0
    start_timeout: float = 30.0
    max_result_bytes: int = 16 * 2**20
    store_bytes: int = 256 * 2**20

    def tool(self, name: str) -> ToolConfig:
        """The settings of tool ``name`` (the defaults for a tool the file does not name)."""
        t = self.tools.get(name) or ToolConfig()
        return ToolConfig(self.budget if t.budget is None else t.budget, t.mode or self.mode, t.query)


_TOP = {"budget", "token_counter", "mode", "exclude", "tools", "timeout", "start_timeout", "max_result_mb",
        "max_store_mb"}  # fmt: skip
_PER_TOOL = {"budget", "mode", "query"}


def _budget(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{where} must be a whole number of tokens; got {value!r}.")
    if value < MIN_BUDGET:
        raise ValueError(f"{where} must be at least {MIN_BUDGET} tokens (a marker must fit); got {value}.")
    return value


def _positive(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(f"{where} must be a positive number; got {value!r}.")
    return float(value)


def read_config(path: str | os.PathLike, base: ProxyConfig | None = None) -> ProxyConfig:
    """The settings of a TOML (``.toml``) or JSON file over ``base``.

    Top level: ``budget``, ``token_counter``, ``mode``, ``exclude`` (a list of tool names),
    ``timeout``, ``start_timeout`` (seconds), ``max_result_mb``, ``max_store_mb``; and ``tools``,
    a table per tool with ``budget``, ``mode`` and ``query``.  An unknown key is an error that
    names it.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "proxy.toml")
    >>> _ = open(path, "w").write('budget = 900\\nexclude = ["git_reset"]\\n[tools.git_log]\\nmode = "records"\\n'
    ...                           'query = "the latest fixes"\\n')
    >>> cfg = read_config(path)
    >>> cfg.budget, sorted(cfg.exclude), cfg.tool("git_log")
    (900, ['git_reset'], ToolConfig(budget=900, mode='records', query='the latest fixes'))
    """
    path = os.fspath(path)
    if not path.endswith((".toml", ".json")):
        raise ValueError(
            f"config file {path!r}: name it *.toml (TOML) or *.json (JSON), the two forms it may take."
        )
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise ValueError(f"config file {path!r} cannot be read: {exc}") from None
    try:
        if path.endswith(".toml"):
            try:
                import tomllib
            except ImportError:  # Python 3.10: tomli, the same parser, if it is installed
                try:
                    import tomli as tomllib  # type: ignore[no-redef]
                except ImportError:
                    raise ValueError(
                        f"config file {path!r}: TOML needs Python 3.11 or the tomli package; or write it as JSON"
                    ) from None
            data = tomllib.loads(raw.decode("utf-8"))
        else:
            data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(
            f"config file {path!r} is not valid {'TOML' if path.endswith('.toml') else 'JSON'}: {exc}"
        ) from None
    return config_from_dict(data, base, where=path)


def _named(registry: Any, value: object, where: str) -> None:
    """``registry.lookup(value)``, its error naming where the value was written."""
    try:
        registry.lookup(value)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{where}: {exc}") from None


def config_from_dict(data: object, base: ProxyConfig | None = None, *, where: str = "config") -> ProxyConfig:
    """:func:`read_config` on a parsed file (a dict)."""
    cfg = base or ProxyConfig()
    if not isinstance(data, dict):
        raise ValueError(f"{where}: the top level must be a table (an object); got {type(data).__name__}.")
    unknown = sorted(set(data) - _TOP)
    if unknown:
        raise ValueError(f"{where}: unknown key {unknown[0]!r}; the keys are {', '.join(sorted(_TOP))}.")
    kw: dict[str, Any] = {}
    if "budget" in data:
        kw["budget"] = _budget(data["budget"], f"{where}: budget")
    if "token_counter" in data:
        _named(COUNTERS, data["token_counter"], where)
        kw["token_counter"] = data["token_counter"]
    if "mode" in data:
        _named(MODES, data["mode"], where)
        kw["mode"] = data["mode"]
    if "exclude" in data:
        ex = data["exclude"]
        if not isinstance(ex, list) or not all(isinstance(x, str) for x in ex):
            raise ValueError(f"{where}: exclude must be a list of tool names.")
        kw["exclude"] = frozenset(ex)
    for key, attr in (("timeout", "call_timeout"), ("start_timeout", "start_timeout")):
        if key in data:
            kw[attr] = _positive(data[key], f"{where}: {key}")
    for key, attr in (("max_result_mb", "max_result_bytes"), ("max_store_mb", "store_bytes")):
        if key in data:
            kw[attr] = int(_positive(data[key], f"{where}: {key}") * 2**20)
    cfg = replace(cfg, **kw)
    tools = dict(cfg.tools)
    per = data.get("tools", {})
    if not isinstance(per, dict):
        raise ValueError(f"{where}: tools must be a table of tool name -> settings.")
    for name, t in per.items():
        if not isinstance(t, dict):
            raise ValueError(f"{where}: tools.{name} must be a table (budget, mode, query).")
        bad = sorted(set(t) - _PER_TOOL)
        if bad:
            raise ValueError(
                f"{where}: tools.{name}: unknown key {bad[0]!r}; the keys are budget, mode, query."
            )
        mode = t.get("mode")
        if mode is not None:
            _named(MODES, mode, f"{where}: tools.{name}")
        query = t.get("query", "")
        if not isinstance(query, str):
            raise ValueError(f"{where}: tools.{name}.query must be text.")
        budget = _budget(t["budget"], f"{where}: tools.{name}.budget") if "budget" in t else None
        tools[name] = ToolConfig(budget, mode, query)
    return replace(cfg, tools=tools)


def _retrieve_tool(store: CrushStore, limit: float) -> tuple[Any, Any]:
    """``scwo mcp``'s retrieve_dropped over ``store``: the SDK tool (for its schema and checks) and its
    listing."""
    from mcp_types import Tool as ListedTool

    from ._server import READ_ONLY, _tool, _tool_functions
    from ._tools import Tools

    class _Store:  # what Tools.retrieve_dropped reads: the crush store
        crush_store = store
        retrieve_dropped = Tools.retrieve_dropped

    fn, result, _, _ = next(t for t in _tool_functions(_Store()) if t[0].__name__ == RETRIEVE)
    tool = _tool(fn, result, READ_ONLY, RETRIEVE_DESCRIPTION, limit)
    listed = ListedTool(name=RETRIEVE, description=RETRIEVE_DESCRIPTION, input_schema=tool.parameters,
                        output_schema=tool.output_schema, annotations=READ_ONLY)  # fmt: skip
    return tool, listed


_warned: set[str] = set()


def _warn_unknown_names(config: ProxyConfig, names: set[str]) -> None:
    """Warn (once per name) about a tool the config file excludes or configures that the upstream does not
    have: most likely a typo, which would otherwise do nothing silently."""
    for name in sorted((set(config.exclude) | set(config.tools)) - names - _warned):
        _warned.add(name)
        close = difflib.get_close_matches(name, sorted(names), n=1)
        log.warning(
            "the config names tool %r, which the upstream server does not have%s",
            name,
            f" (did you mean {close[0]!r}?)" if close else "",
        )


def _text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def _error(text: str) -> Any:
    from mcp_types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def build_proxy(upstream: Upstream, config: ProxyConfig, store: CrushStore, capabilities: Any = None) -> Any:
    """The proxy server in front of ``upstream`` (connected: see :meth:`Upstream.run`).

    Parameters
    ----------
    upstream : Upstream
        The server behind.
    config : ProxyConfig
        Budgets, modes, exclusions, limits.
    store : CrushStore
        Where left-out text goes, for ``retrieve_dropped``.
    capabilities : ServerCapabilities, optional
        The upstream's (default: its connection's): resources, prompts and completions are
        passed through when it has them.

    Returns
    -------
    mcp.server.lowlevel.Server
        Serve it with ``server.run(read, write, server.create_initialization_options())``.
    """
    from mcp.server.lowlevel import Server
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.shared.exceptions import MCPError
    from mcp_types import ListToolsResult

    from ._server import _invalid_arguments, _renamed_arguments, _unknown_arguments

    caps = capabilities if capabilities is not None else upstream.client.server_capabilities
    retrieve, retrieve_listed = _retrieve_tool(store, config.call_timeout)
    counter = as_token_counter(config.token_counter)
    # retrieve_dropped counts a page as the proxy counts results, unless the call names a counter.
    schema = copy.deepcopy(retrieve_listed.input_schema)
    schema["properties"]["token_counter"]["default"] = config.token_counter
    retrieve_listed = retrieve_listed.model_copy(update={"input_schema": schema})
    retrieve_args = tuple(schema["properties"])

    async def list_tools(ctx: Any, params: Any) -> Any:
        tools, cursor = [], None
        while True:
            page = await upstream.call(
                "tools/list", lambda c, cur=cursor: c.list_tools(cursor=cur, cache_mode="refresh")
            )
            tools += page.tools
            cursor = page.next_cursor
            if not cursor:
                break
        _warn_unknown_names(config, {t.name for t in tools})
        out = []
        for t in tools:
            if t.name in config.exclude or t.name == RETRIEVE:
                continue
            out.append(
                t if config.tool(t.name).mode == "off" else t.model_copy(update={"output_schema": None})
            )
        return ListToolsResult(tools=[*out, retrieve_listed])

    async def _retrieve(args: dict) -> Any:
        """The proxy's retrieve_dropped, with ``scwo mcp``'s checks: old argument names read as the
        new ones (with a note in ``_meta``), an unknown one refused with the closest known name."""
        try:
            args, notes = _renamed_arguments(RETRIEVE, dict(args), retrieve_args)
            unknown = [a for a in args if a not in retrieve_args]
            if unknown:
                return _error(_unknown_arguments(RETRIEVE, unknown, retrieve_args))
            args.setdefault("token_counter", config.token_counter)
            result = await retrieve.run(args, None)
            if notes:
                result.meta = {**(result.meta or {}), "scwo_np/deprecated": notes}
            return result
        except ToolError as exc:
            from pydantic import ValidationError

            cause = exc.__cause__
            return _error(
                _invalid_arguments(RETRIEVE, cause) if isinstance(cause, ValidationError) else str(exc)
            )

    async def call_tool(ctx: Any, params: Any) -> Any:
        name, args = params.name, dict(params.arguments or {})
        if name == RETRIEVE:
            mine = await _retrieve(args)
            if mine.is_error and "unknown or expired" in _text(mine):  # maybe the upstream's own key
                try:
                    theirs = await upstream.call(name, lambda c: c.call_tool(name, args))
                except Exception:  # noqa: BLE001 - the upstream has no such tool, or failed: our answer stands
                    return mine
                return mine if theirs.is_error else theirs
            return mine
        if name in config.exclude:
            return _error(f"tool {name!r} is not served by this proxy (its config file excludes it).")
        meta = ctx.meta or {}
        token = meta.get("progress_token", meta.get("progressToken")) if isinstance(meta, Mapping) else None

        async def progress(value: float, total: float | None, message: str | None) -> None:
            await ctx.session.report_progress(value, total, message)

        try:
            result = await upstream.call(
                name,
                lambda c: c.call_tool(name, args, progress_callback=progress if token is not None else None),
            )
        except UpstreamError as exc:
            return _error(str(exc))
        except MCPError:
            raise  # the upstream's own protocol error, sent on as it is
        except Exception as exc:  # noqa: BLE001 - an answer the SDK cannot read: an error, never a crash
            log.warning("tool %s: the upstream's answer could not be read (%s)", name, exc)
            return _error(
                f"{name}: the upstream server's answer could not be read: {str(exc).splitlines()[0]}"
            )
        return (
            await anyio.to_thread.run_sync(functools.partial(_fit, result, name, args))
            if _over(result, name)
            else result
        )

    def _over(result: Any, name: str) -> bool:
        """Whether the result needs the worker thread (its text blocks over the tool's budget)."""
        if config.tool(name).mode == "off":
            return False
        texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
        if not texts:
            return False
        size = sum(len(t) for t in texts)
        return (
            size > config.tool(name).budget
            or int(count_tokens(["\n".join(texts)], counter).sum()) > config.tool(name).budget
        )

    def _fit(result: Any, name: str, args: dict) -> Any:
        tc = config.tool(name)
        size = sum(
            len(c.text.encode("utf-8", "surrogatepass"))
            for c in result.content
            if getattr(c, "type", None) == "text"
        )
        if size > config.max_result_bytes:
            return _error(
                f"{name}: the upstream's result is {size:,} bytes, above this proxy's limit of "
                f"{config.max_result_bytes:,} (--max-result-mb); ask for less."
            )
        try:
            out, _ = shrink_result(result, tc.budget, query=call_query(name, args, tc.query), mode=tc.mode,
                                   token_counter=counter, store=store, hint=tc.query)  # fmt: skip
            return out
        except (
            BudgetTooSmall
        ) as exc:  # JSON that no crush fits as JSON: an error naming the budget, not broken JSON
            return _error(f"{name}: {exc}")
        except Exception as exc:  # noqa: BLE001 - malformed output: passed on unchanged, with a warning
            log.warning("tool %s: result passed on unchanged, it could not be shrunk (%s: %s)", name,
                        type(exc).__name__, exc)  # fmt: skip
            meta = {**(result.meta or {}), "scwo_np/proxy": {"form": "unchanged", "warning": str(exc)[:200]}}
            return result.model_copy(update={"meta": meta})

    handlers: dict[str, Any] = {"on_list_tools": list_tools, "on_call_tool": call_tool}
    if caps is not None and caps.resources is not None:

        async def list_resources(ctx: Any, params: Any) -> Any:
            cursor = params.cursor if params is not None else None
            return await upstream.call("resources/list", lambda c: c.list_resources(cursor=cursor))

        async def list_templates(ctx: Any, params: Any) -> Any:
            cursor = params.cursor if params is not None else None
            return await upstream.call(
                "resources/templates/list", lambda c: c.list_resource_templates(cursor=cursor)
            )

        async def read_resource(ctx: Any, params: Any) -> Any:
            return await upstream.call("resources/read", lambda c: c.read_resource(params.uri))

        handlers.update(on_list_resources=list_resources, on_list_resource_templates=list_templates,
                        on_read_resource=read_resource)  # fmt: skip
    if caps is not None and caps.prompts is not None:

        async def list_prompts(ctx: Any, params: Any) -> Any:
            cursor = params.cursor if params is not None else None
            return await upstream.call("prompts/list", lambda c: c.list_prompts(cursor=cursor))

        async def get_prompt(ctx: Any, params: Any) -> Any:
            return await upstream.call("prompts/get", lambda c: c.get_prompt(params.name, params.arguments))

        handlers.update(on_list_prompts=list_prompts, on_get_prompt=get_prompt)
    if caps is not None and getattr(caps, "completions", None) is not None:

        async def complete(ctx: Any, params: Any) -> Any:
            return await upstream.call(
                "completion/complete",
                lambda c: c.complete(
                    params.ref, params.argument, params.context.arguments if params.context else None
                ),
            )

        handlers["on_completion"] = complete
    info = getattr(upstream.client, "server_info", None) if upstream.client is not None else None
    name = f"scwo-proxy:{info.name}" if info is not None and getattr(info, "name", None) else "scwo-proxy"
    from .. import __version__

    instructions = getattr(upstream.client, "instructions", None) if upstream.client is not None else None
    server = Server(name, version=__version__, instructions=instructions, **handlers)
    server._scwo_upstream = upstream
    return server


async def serve_proxy(
    upstream: Upstream,
    config: ProxyConfig,
    store_path: str | os.PathLike,
    *,
    http: tuple[str, int] | None = None,
) -> None:
    """Start ``upstream``, then serve the proxy over stdio (or streamable HTTP at ``http=(host, port)``)
    until the client goes; :class:`UpstreamError` when the upstream does not start."""
    store = CrushStore(store_path, max_bytes=config.store_bytes)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(anyio.to_thread.run_sync, _warm_up)  # while the upstream starts
            try:
                await tg.start(upstream.run)
            except BaseException as exc:  # the start's error, out of the task group's wrapping
                raise _unwrap(exc) from None
            server = build_proxy(upstream, config, store)
            if http is None:
                from mcp.server.stdio import stdio_server

                async with stdio_server() as (read, write):
                    await server.run(read, write, server.create_initialization_options())
            else:
                import uvicorn

                host, port = http
                app = server.streamable_http_app(host=host)
                await uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning")).serve()
            tg.cancel_scope.cancel()
    except BaseException as exc:
        raise _unwrap(exc) from None
    finally:
        store.close()


def _warm_up() -> None:
    """Shrink a small text of each shape once, so that the first real call does not pay for loading the
    compiled kernels and the first stems (about 0.3 s, once per process)."""
    rows = [{"id": i, "level": "ERROR" if i == 7 else "INFO", "path": f"/items/{i}"} for i in range(60)]
    logs = "".join(f"2026-01-01T10:00:{i:02d}Z INFO GET /items/{i} 200\n" for i in range(60))
    prose = " ".join(
        f"Sentence {i} says how the proxy keeps what the model reads within its budget." for i in range(60)
    )
    try:
        for text in (json.dumps(rows), logs, prose):
            shrink_text(text, 100, query="warm up")
    except Exception as exc:  # noqa: BLE001 - a warm-up never stops the proxy
        log.debug("warm-up failed: %s", exc)


def _unwrap(exc: BaseException) -> BaseException:
    """The :class:`UpstreamError` inside an exception group (or ``exc`` itself)."""
    stack = [exc]
    while stack:
        e = stack.pop()
        if isinstance(e, UpstreamError):
            return e
        stack.extend(getattr(e, "exceptions", ()))
    return exc
