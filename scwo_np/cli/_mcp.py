"""``scwo mcp``: serve scwo_np's tools to agents over the Model Context Protocol (the ``mcp`` extra)."""

from __future__ import annotations

import argparse
import ipaddress
import sys

from ._io import _positive


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
