"""The ``scwo`` parser and :func:`main`; each command module adds its own sub-commands (``register``)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings

from . import _crush, _dedup, _hsca, _mcp, _optimize, _rerank, _select


def build_parser() -> argparse.ArgumentParser:
    """The ``scwo`` argument parser, every sub-command registered.

    Returns
    -------
    argparse.ArgumentParser
        The parser :func:`main` uses (``scwo --help`` prints its help).

    Examples
    --------
    >>> args = build_parser().parse_args(["select", "chunks.jsonl", "--budget", "800", "--query-index", "0"])
    >>> args.command, args.budget
    ('select', 800)
    """
    p = argparse.ArgumentParser(prog="scwo", description="Decide what goes into an LLM's context window.")
    sub = p.add_subparsers(dest="command", required=True)
    for module in (_select, _dedup, _optimize, _crush, _hsca, _rerank, _mcp):
        module.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns its exit status.

    Like a Unix tool: bad input (a malformed file or argument) is one line on
    stderr and status 2, any other failure (a file that cannot be written, a
    full disk) one line and status 1, never a traceback; a closed output pipe
    (``scwo select ... | head -1``) ends the command quietly.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after ``scwo`` (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: 0 on success, 2 on bad input, 1 on any other failure.

    Examples
    --------
    >>> main(["sample", "-n", "1", "-o", "/dev/null"])
    0
    """
    args = build_parser().parse_args(argv)
    if sys.stdout is None and getattr(args, "output", "-") == "-":  # started with stdout closed (>&-)
        if sys.stderr is not None:
            hint = "; give -o FILE" if hasattr(args, "output") else ""
            sys.stderr.write(f"scwo {args.command}: standard output is closed{hint}.\n")
        return 1

    def warn(message, category, filename, lineno, file=None, line=None):
        sys.stderr.write(f"scwo {args.command}: warning: {message}\n")

    try:
        with warnings.catch_warnings():
            warnings.showwarning = warn
            return args.func(args)
    except SystemExit as exc:  # our own "scwo: ..." messages are about the input
        if isinstance(exc.code, str):
            msg = exc.code.rstrip()
            if msg.startswith("scwo: "):  # one prefix for every message: "scwo CMD: ..."
                msg = f"scwo {args.command}: " + msg[len("scwo: ") :]
            sys.stderr.write(msg + "\n")
            return 2
        raise
    except (ValueError, TypeError, RecursionError, UnicodeError) as exc:
        msg = "input nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        sys.stderr.write(f"scwo {args.command}: {msg}\n")
        return 2
    except BrokenPipeError:
        # Whoever read our output has gone: stop writing, quietly.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as exc:
        where = f" {exc.filename}" if exc.filename else ""
        sys.stderr.write(f"scwo {args.command}: cannot use{where}: {exc.strerror or exc}\n")
        return 1
    except KeyboardInterrupt:
        return 130
