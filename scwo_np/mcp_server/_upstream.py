"""The server ``scwo mcp proxy`` stands in front of: started once, called under a time limit, restarted.

:class:`Upstream` owns one connection at a time, made with the official SDK's ``Client``: a
command started over stdio, or a streamable-HTTP URL.  Its :meth:`Upstream.run` task
connects (a connection not made within ``start_timeout`` seconds, or a command that exits or
cannot be found, is an :class:`UpstreamError` at startup) and then waits; a call that crashes
the connection or takes longer than ``call_timeout`` seconds is an :class:`UpstreamError` for
that call, and the task closes the connection (ending a stdio server's process) and makes a
new one for the next call.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio

__all__ = ["Upstream", "UpstreamError"]

log = logging.getLogger(__name__)

#: Lines an upstream wrote on its standard output that are not JSON-RPC (a banner, a usage
#: message), newest last: the SDK skips each with a traceback; they are named in one line instead.
_not_json: list[str] = []


class _NotJsonLines(logging.Filter):
    """On the SDK's stdio logger: each line it cannot parse is noted, and logged as one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        errors = getattr(exc, "errors", None)
        if record.getMessage().startswith("Failed to parse") and callable(errors):
            try:
                line = str(errors()[0].get("input", ""))
            except Exception:  # noqa: BLE001 - an error of another shape: leave the record as it was
                return True
            _not_json[:] = [*_not_json[-2:], line]
            log.warning(
                "the upstream server wrote a line that is not JSON-RPC on its standard output, skipped: %s",
                _quote(line),
            )
            return False
        return True


def _quote(line: str, width: int = 120) -> str:
    return repr(line if len(line) <= width else line[: width - 3] + "...")


logging.getLogger("mcp.client.stdio").addFilter(_NotJsonLines())


class UpstreamError(RuntimeError):
    """The upstream server did not start, crashed, or did not answer in time."""


def _reason(exc: BaseException) -> str:
    """The innermost message of ``exc`` (an exception group's first leaf), in one line."""
    while getattr(exc, "exceptions", None):  # an exception group (Python 3.10: the backport's)
        exc = exc.exceptions[0]
    while exc.__cause__ is not None and str(exc) in ("", "Connection closed"):
        exc = exc.__cause__
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}".splitlines()[0] if not isinstance(exc, UpstreamError) else text


class Upstream:
    """One upstream MCP server: ``command`` (argv, over stdio) or ``url`` (streamable HTTP).

    Parameters
    ----------
    command : sequence of str, optional
        The server's command line; it inherits this process's environment.
    url : str, optional
        A streamable-HTTP endpoint (``http://host:port/mcp``) instead.
    start_timeout : float
        Seconds a connection may take to be made (30).
    call_timeout : float
        Seconds a call may take before it is an error and the server is restarted (60).
    """

    def __init__(
        self,
        command: Sequence[str] | None = None,
        url: str | None = None,
        *,
        start_timeout: float = 30.0,
        call_timeout: float = 60.0,
    ) -> None:
        if (command is None) == (url is None):
            raise ValueError("give the upstream's command or its url, not both and not neither.")
        if command is not None and not command:
            raise ValueError("the upstream command is empty: give the server's command after '--'.")
        self.command = list(command) if command is not None else None
        self.url = url
        self.start_timeout = float(start_timeout)
        self.call_timeout = float(call_timeout)
        self.client: Any = None
        self.generation = 0
        self.restarts = 0
        self._restart = anyio.Event()
        self._restarting = False
        self._down: str | None = None

    @property
    def name(self) -> str:
        """The command line or the URL, for messages."""
        return " ".join(self.command) if self.command is not None else str(self.url)

    def _client(self) -> Any:
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters

        if self.command is not None:
            params = StdioServerParameters(
                command=self.command[0], args=self.command[1:], env=dict(os.environ)
            )
            return Client(params, mode="legacy")  # the initialize handshake every server version speaks
        return Client(self.url, mode="legacy")

    async def _session(self, done: anyio.Event, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        """One connection, from the handshake until a restart is asked for (or the connection dies)."""
        started = False
        try:
            async with self._client() as client:
                self.client = client
                self.generation += 1
                self._down = None
                self._restarting = False
                started = True
                task_status.started()
                await self._restart.wait()
        except Exception as exc:  # noqa: BLE001 - a dead upstream must not end the proxy
            if not started:
                raise
            log.warning("upstream %r: the connection ended (%s)", self.name, _reason(exc))
        finally:
            self.client = None
            done.set()

    async def run(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        """Connect, report started, and reconnect whenever :meth:`restart` asks (a task; runs until cancelled).

        The first connection's failure is raised (as :class:`UpstreamError`); a later one is
        logged and leaves the upstream down until the next call asks again.
        """
        first = True
        async with anyio.create_task_group() as tg:
            while True:
                done = anyio.Event()
                reason = None
                del _not_json[:]
                try:
                    with anyio.fail_after(self.start_timeout):
                        await tg.start(self._session, done)
                except TimeoutError:
                    reason = f"no answer within {self.start_timeout:g} s"
                    if _not_json:  # it printed something else: likely not an MCP server over stdio
                        reason += (
                            f"; it wrote {_quote(_not_json[-1])} on its standard output, which is not "
                            "MCP's JSON-RPC (is the command an MCP server over stdio, with its own "
                            "messages on standard error?)"
                        )
                except Exception as exc:  # noqa: BLE001 - reported, and retried on the next call
                    reason = _reason(exc)
                if reason is not None:
                    if first:
                        raise UpstreamError(f"the upstream server {self.name!r} did not start: {reason}")
                    log.warning("upstream %r: could not reconnect (%s)", self.name, reason)
                    self._down = reason
                    self._restarting = False  # callers see that it is down, and ask again
                    await self._restart.wait()
                else:
                    if first:
                        first = False
                        task_status.started()
                    await done.wait()
                self._restart = anyio.Event()
                self.restarts += 1

    def restart(self, generation: int | None = None) -> None:
        """Ask for a new connection (once per failing connection: ``generation`` is the one that failed)."""
        if (generation is None or generation == self.generation) and not self._restarting:
            self._restarting = True
            self._restart.set()

    async def connected(self) -> Any:
        """The client, waiting while a connection is being made; :class:`UpstreamError` when none can be."""
        asked = False
        with anyio.move_on_after(self.start_timeout + 5):
            while True:
                if self.client is not None and not self._restarting:
                    return self.client
                if not self._restarting and self._down is not None:
                    if asked:
                        break
                    asked = True
                    self.restart()  # down: try once more
                await anyio.sleep(0.01)
        raise UpstreamError(f"the upstream server {self.name!r} is down ({self._down or 'not connected'})")

    async def call(self, what: str, fn: Callable[[Any], Awaitable[Any]]) -> Any:
        """``await fn(client)`` under ``call_timeout``; a crash or a timeout restarts the upstream and raises
        :class:`UpstreamError` saying so.  An error the upstream answered with (an ``MCPError`` other
        than a closed connection) is raised as it is."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED

        client = await self.connected()
        gen = self.generation
        try:
            with anyio.fail_after(self.call_timeout):
                return await fn(client)
        except TimeoutError:
            self.restart(gen)
            raise UpstreamError(
                f"{what}: the upstream server did not answer within {self.call_timeout:g} s (the proxy's --timeout); "
                "it is being restarted for the next call"
            ) from None
        except MCPError as exc:
            if exc.code != CONNECTION_CLOSED:
                raise
            self.restart(gen)
            raise UpstreamError(
                f"{what}: the upstream server closed the connection ({exc}); it is being restarted for the next call"
            ) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError) as exc:
            self.restart(gen)
            raise UpstreamError(
                f"{what}: the upstream server's connection broke ({_reason(exc)}); it is being restarted for the "
                "next call"
            ) from None
