"""``scwo mcp``: serve scwo_np's tools to agents over the Model Context Protocol (the ``mcp`` extra);
``scwo mcp proxy``: stand in front of another MCP server, its tool results within a token budget."""

from __future__ import annotations

import argparse
import functools
import ipaddress
import os
import sys

from ._io import _positive, _token_counter


def _cmd_mcp(args: argparse.Namespace) -> int:
    try:
        from ..mcp_server import Limits, build_server, default_data_dir
    except ImportError:
        raise SystemExit("scwo: mcp needs the official MCP SDK: pip install 'scwo_np[mcp]'") from None
    if args.time_limit <= 0:
        raise SystemExit(f"scwo: --time-limit must be a positive number of seconds; got {args.time_limit}")
    if not args.http and (args.host or args.port):
        raise SystemExit("scwo: --host and --port go with --http (stdio needs neither)")
    limits = Limits(
        max_request_bytes=int(args.max_request_mb * 2**20),
        max_items=args.max_items,
        time_limit=args.time_limit,
    )
    if args.max_request_mb <= 0:
        raise SystemExit(f"scwo: --max-request-mb must be positive; got {args.max_request_mb}")
    try:
        server = build_server(args.store or default_data_dir(), limits)
    except (OSError, ValueError) as exc:
        raise SystemExit(f"scwo: --store: {exc}") from None
    if not args.http:
        server.run()  # stdio
        return 0
    host = args.host or "127.0.0.1"
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if not loopback:
        sys.stderr.write(
            f"scwo mcp: warning: serving on {host}, not on this machine's loopback address: anyone who can "
            "reach it can call the tools (there is no authentication)\n"
        )
    server.run(
        "streamable-http", host=host, port=args.port or 8000, max_request_body_size=limits.max_request_bytes
    )
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``scwo mcp`` to the ``scwo`` parser."""
    m = sub.add_parser(
        "mcp",
        help="serve the tools to agents over MCP (stdio, or --http)",
        description="An MCP server (the official mcp SDK) with select_context, dedup_texts, crush_json, "
        "retrieve_dropped, count_tokens, hsca_ingest and hsca_context. Speaks stdio by default.",
    )
    m.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    m.add_argument("--host", help="with --http: the address (127.0.0.1; another one is warned about)")
    m.add_argument("--port", type=_positive, help="with --http: the port (8000)")
    m.add_argument(
        "--store", help="the data folder of the stores (default: scwo_np/mcp in the user cache folder)"
    )
    m.add_argument(
        "--max-request-mb", type=float, default=8.0, help="the most text one call may carry, in MB (8)"
    )
    m.add_argument(
        "--max-items",
        type=_positive,
        default=100_000,
        help="the most texts or JSON items in one call (100000)",
    )
    m.add_argument("--time-limit", type=float, default=60.0, help="seconds a call may take (60)")
    m.set_defaults(func=_cmd_mcp)
    _register_proxy(m.add_subparsers(dest="mcp_command", metavar="{proxy}"))


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def _cmd_proxy(args: argparse.Namespace) -> int:
    command = list(args.upstream or [])
    if command[:1] == ["--"]:
        command = command[1:]
    usage = None
    if bool(command) == bool(args.upstream_url):
        usage = (
            "give the upstream server: its command after '--' (scwo mcp proxy -- mcp-server-git --repository .), "
            "or --upstream-url URL; not both"
        )
    elif not args.http and (args.host or args.port):
        usage = "--host and --port go with --http (stdio needs neither)"
    if usage is not None:  # one line and status 2, as the parser's own errors
        sys.stderr.write(f"scwo mcp proxy: error: {usage}; see scwo mcp proxy --help\n")
        return 2
    try:  # the usage first (as the parser checks it), then the extra
        import anyio

        from ..mcp_server import default_data_dir
        from ..mcp_server._proxy import ProxyConfig, config_from_dict, read_config, serve_proxy
        from ..mcp_server._upstream import Upstream, UpstreamError
    except ImportError:
        raise SystemExit("scwo mcp proxy: needs the official MCP SDK: pip install 'scwo_np[mcp]'") from None
    try:
        cfg = read_config(args.config) if args.config else ProxyConfig()
        flags = {k: v for k, v in (("budget", args.budget), ("token_counter", args.token_counter),
                                   ("mode", args.mode), ("timeout", args.timeout),
                                   ("max_result_mb", args.max_result_mb), ("max_store_mb", args.max_store_mb))
                 if v is not None}  # fmt: skip
        cfg = config_from_dict(flags, cfg, where="the command line")
    except (TypeError, ValueError) as exc:
        raise SystemExit(f"scwo mcp proxy: {exc}") from None
    _token_counter(cfg.token_counter)  # no offline table, or no package: one line here, not a traceback later
    store_dir = args.store or default_data_dir()
    try:
        os.makedirs(store_dir, exist_ok=True)
    except OSError as exc:
        raise SystemExit(f"scwo: --store: {exc}") from None
    upstream = Upstream(command or None, args.upstream_url, start_timeout=cfg.start_timeout,
                        call_timeout=cfg.call_timeout)  # fmt: skip
    http = None
    if args.http:
        host = args.host or "127.0.0.1"
        if not _loopback(host):
            sys.stderr.write(
                f"scwo mcp proxy: warning: serving on {host}, not on this machine's loopback address: anyone who "
                "can reach it can call the upstream's tools (there is no authentication)\n"
            )
        http = (host, args.port or 8000)
    try:
        anyio.run(functools.partial(serve_proxy, upstream, cfg, os.path.join(store_dir, "crush_store.sqlite"),
                                    http=http))  # fmt: skip
    except UpstreamError as exc:
        raise SystemExit(f"scwo mcp proxy: {exc}") from None
    except KeyboardInterrupt:
        return 130
    return 0


#: The proxy's modes, as ``scwo_np.mcp_server``'s ``MODES`` names them (a test checks they agree):
#: written out because building the parser must not import the mcp extra (``scwo demo`` runs
#: on the core install).
PROXY_MODES = ("auto", "json", "diff", "records", "prose", "off")


def _register_proxy(sub: argparse._SubParsersAction) -> None:
    from ..tokens import COUNTERS

    p = sub.add_parser(
        "proxy",
        help="stand in front of another MCP server: its tool results within a token budget",
        description="Start an upstream MCP server (its command after '--', over stdio; or --upstream-url) and "
        "serve its tools, resources and prompts, each tool result's text within a token budget: lossless when "
        "that fits, else crushed by its shape (JSON, a diff, repeated records, prose), what is left out stored for "
        "the added tool retrieve_dropped.",
    )
    p.add_argument("--budget", type=_positive, help="tokens of a result's text, markers included (2000)")
    p.add_argument("--token-counter", choices=list(COUNTERS), help="what counts tokens (estimate)")
    p.add_argument("--mode", choices=list(PROXY_MODES), help="how results are shrunk (auto: by their shape)")
    p.add_argument("--config", help="a TOML or JSON file: exclude, per-tool budget, mode and query hints")
    p.add_argument("--store", help="the folder of the store of left-out text (as scwo mcp's --store)")
    p.add_argument(
        "--timeout", type=float, help="seconds an upstream call may take; then the upstream is restarted (60)"
    )
    p.add_argument("--max-result-mb", type=float, help="the largest result text read, in MB (16)")
    p.add_argument(
        "--max-store-mb", type=float, help="the store's size before the oldest entries go, in MB (256)"
    )
    p.add_argument("--upstream-url", help="a streamable-HTTP upstream instead of a command")
    p.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    p.add_argument("--host", help="with --http: the address (127.0.0.1; another one is warned about)")
    p.add_argument("--port", type=_positive, help="with --http: the port (8000)")
    p.add_argument("upstream", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]: the upstream server")
    p.set_defaults(func=_cmd_proxy)


def bench_proxy() -> int:
    """``scwo bench --mcp-proxy``: what scwo mcp proxy adds to a call, and the shrink of 100 KB."""
    try:
        from ..bench._proxy import proxy_latency

        r = proxy_latency()
    except ImportError:
        raise SystemExit(
            "scwo: bench --mcp-proxy needs the official MCP SDK: pip install 'scwo_np[mcp]'"
        ) from None
    _write(
        f"scwo mcp alone and behind scwo mcp proxy --budget {r['budget']}, over stdio, {r['calls']} calls each\n"
    )
    _write("| result | alone, median | through the proxy, median | added |")
    _write("|---|---|---|---|")
    _write(f"| small, passed through | {r['passthrough_direct_ms']:.1f} ms | {r['passthrough_proxy_ms']:.1f} ms | "
         f"{r['passthrough_added_ms']:.1f} ms |")  # fmt: skip
    _write(f"| {r['big_kb']:.0f} KB text, {r['big_tokens_before']} -> {r['big_tokens']} tokens ({r['big_form']}) | "
         f"{r['big_direct_ms']:.1f} ms | {r['big_proxy_ms']:.1f} ms | {r['big_added_ms']:.1f} ms |")  # fmt: skip
    _write(f"| the same through the proxy with --mode off (the extra hop alone) | | {r['big_passthrough_ms']:.1f} ms | "
           f"{r['big_passthrough_ms'] - r['big_direct_ms']:.1f} ms |")  # fmt: skip
    _write(f"\nthe shrink beside the hop (through the proxy less through it with --mode off): "
           f"{r['big_shrink_added_ms']:.1f} ms\n")  # fmt: skip
    _write("| shrink alone, in process | size | median |")
    _write("|---|---|---|")
    for name, x in r["shrink_ms"].items():
        _write(f"| {name} | {x['kb']:.0f} KB | {x['median_ms']:.1f} ms |")
    return 0


def _write(text: str) -> None:
    sys.stdout.write(text + "\n")
