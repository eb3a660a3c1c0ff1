"""The ``scwo`` parser and :func:`main`; each command module adds its own sub-commands (``register``)."""

from __future__ import annotations

import argparse
import contextlib
import difflib
import errno
import os
import re
import signal
import sys
import threading
import warnings

from . import _bench, _crush, _dedup, _hsca, _mcp, _optimize, _rerank, _select
from ._io import _closest, _RenamedFlag


class _UsageError(Exception):
    """A usage error found while parsing: the parser's ``prog`` (``scwo select``) and one line."""

    def __init__(self, prog: str, message: str):
        super().__init__(message)
        self.prog, self.message = prog, " ".join(message.split())


class _Parser(argparse.ArgumentParser):
    """An argparse parser whose errors are one line (raised, printed by :func:`main`), never usage + exit."""

    def error(self, message: str):  # argparse's own errors come here
        m = re.search(r"invalid choice: '(.*?)' \(choose from (.*)\)$", message)
        if m:  # a bad --method, --embedder ... value: name the nearest choice
            choices = re.findall(r"'([^']*)'", m.group(2))
            message += _closest(m.group(1), choices)
        sp = _subparsers(self)
        if sp is not None and message.endswith(f"required: {sp.metavar or sp.dest}"):
            message = f"give a command: {', '.join(sp.choices)}"
        raise _UsageError(self.prog, message)

    def _get_option_tuples(self, option_string):
        """argparse's prefix matches, without the hidden old flags when a visible flag matches too.

        ``--max`` is ``--max-items`` (not ambiguous with the hidden ``--max-tokens``), and an
        ambiguity names only the flags ``--help`` lists; a prefix of an old flag alone still works.
        """
        found = super()._get_option_tuples(option_string)
        visible = [t for t in found if not isinstance(t[0], _RenamedFlag)]
        return visible or found


def _shown(parser: argparse.ArgumentParser, option: str) -> str:
    """``option`` as ``--help`` names it: an old (hidden) flag's new name."""
    action = parser._option_string_actions.get(option)
    return action.new if isinstance(action, _RenamedFlag) else option


def _long_options(parser: argparse.ArgumentParser) -> list[str]:
    return [o for o in parser._option_string_actions if o.startswith("--")]


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def _option_action(parser: argparse.ArgumentParser, token: str):
    """What argparse takes ``token`` for: None for a positional, else ``(action or None if unknown,)``."""
    try:
        found = parser._parse_optional(token)  # argparse's own test: option, positional, or unknown
    except _UsageError:
        raise
    except Exception:  # noqa: BLE001 - a future argparse: let parse_args judge
        return (False,)
    if found is None:
        return None
    return (found[0] if isinstance(found, tuple) else found[0][0],)  # 3.11: a tuple; 3.12.7+: a list


def _is_unknown_option(parser: argparse.ArgumentParser, token: str) -> bool | None:
    """True for a token argparse would take as an option this parser does not have; None for a positional."""
    found = _option_action(parser, token)
    return None if found is None else found[0] is None


def _check_renamed(parser: argparse.ArgumentParser, given: list[argparse.Action]) -> None:
    """An old flag with its new one (or two old names of one flag): a usage error naming both.

    As the Python API's ``TypeError`` for an old keyword with its new one: which value was meant is
    not for the parser to guess (argparse would keep the last).
    """
    names: dict[str, list[str]] = {}  # the new flag -> the flags of it given, in order, each once
    for action in given:
        if isinstance(action, _RenamedFlag):
            new, name = action.new, action.option_strings[0]
        else:
            new = name = next((o for o in action.option_strings if o.startswith("--")), "")
        if name and name not in names.setdefault(new, []):
            names[new].append(name)
    for new, flags in names.items():
        if len(flags) > 1:
            old = [f for f in flags if f != new]
            what = " and ".join(f"{f} (the old name of {new})" for f in old)
            both = f"{what} and {new}" if new in flags else what
            raise _UsageError(parser.prog, f"{both} are given together; give {new} only")


def _prescan(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """Find a misspelt command or option before argparse does (it would report a missing --budget for
    ``--budjet``, or the top-level usage for an option of a sub-command), and name the closest one."""
    p, needs_command, given = parser, _subparsers(parser), []
    value = False  # the token is an option's value (``--store DIR``), not a command
    for tok in argv:
        if value:
            value = False
            continue
        if tok == "--":
            break
        if tok in ("-h", "--help"):
            return  # help is printed whatever else is wrong
        found = _option_action(p, tok)
        if found is None:  # a positional: maybe the sub-command
            if needs_command is not None:
                if tok not in needs_command.choices:
                    names = list(needs_command.choices)
                    raise _UsageError(
                        p.prog,
                        f"unknown command {tok!r}{_closest(tok, names)}; the commands are {', '.join(names)}",
                    )
                p, given = needs_command.choices[tok], []
                needs_command = _subparsers(p)
            continue
        if found[0] is None:
            name = tok.split("=", 1)[0]
            near = difflib.get_close_matches(name, _long_options(p), n=1, cutoff=0.75)
            hint = f" (did you mean {_shown(p, near[0])}?)" if near and name.startswith("--") else ""
            raise _UsageError(p.prog, f"unrecognized option {name}{hint}")
        if found[0]:
            given.append(found[0])
            value = (
                "=" not in tok
                and found[0].nargs is None
                and not isinstance(
                    found[0],
                    argparse._StoreConstAction | argparse._StoreTrueAction | argparse._StoreFalseAction,
                )
            )
    _check_renamed(p, given)


def _parse(argv: list[str] | None) -> argparse.Namespace:
    """Parse ``argv``; any usage error raises :class:`_UsageError` (one line)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    _prescan(parser, argv)
    args, extras = parser.parse_known_args(argv)
    if extras:  # leftover words (a second file ...): name the sub-command they were given to
        p = parser
        for name in ("command", "hsca_command"):
            sp = _subparsers(p)
            if sp is None or getattr(args, name, None) is None:
                break
            p = sp.choices[getattr(args, name)]
        raise _UsageError(p.prog, f"unrecognized arguments: {' '.join(extras)}")
    return args


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
    p = _Parser(prog="scwo", description="Decide what goes into an LLM's context window.")
    sub = p.add_subparsers(dest="command", required=True)
    for module in (_select, _bench, _dedup, _optimize, _crush, _hsca, _rerank, _mcp):
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
    try:
        args = _parse(argv)
    except _UsageError as exc:  # argparse's own errors, and misspellings: one line, status 2
        sys.stderr.write(f"{exc.prog}: error: {exc.message}; see {exc.prog} --help\n")
        return 2
    except SystemExit as exc:  # --help printed its text
        return exc.code if isinstance(exc.code, int) else 0
    if sys.stdout is None and getattr(args, "output", "-") == "-":  # started with stdout closed (>&-)
        if sys.stderr is not None:
            hint = "; give -o FILE" if hasattr(args, "output") else ""
            sys.stderr.write(f"scwo {args.command}: standard output is closed{hint}.\n")
        return 1

    def warn(message, category, filename, lineno, file=None, line=None):
        sys.stderr.write(f"scwo {args.command}: warning: {message}\n")

    # SIGTERM (timeout, a batch scheduler, kill) ends a command as Ctrl-C does: its temporary files
    # go (they were left behind: 73 MB of a killed rerank); the MCP server keeps the default.
    previous = None
    if args.command != "mcp" and threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return _run(args, warn)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the command is, so that it cleans up as on Ctrl-C."""


def _terminate(signum, frame):
    raise _Terminated


def _run(args: argparse.Namespace, warn) -> int:
    """The command, its failures as one line on stderr and a status (see :func:`main`)."""
    try:
        with warnings.catch_warnings():
            warnings.showwarning = warn
            status = args.func(args)
        sys.stdout.flush()  # here, not at exit: a reader that has gone is status 141, as for the others
        return status
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
        from ._io import _WriteError

        where = f" {exc.filename}" if exc.filename else ""
        verb = "write" if isinstance(exc, _WriteError) else "use"
        if not exc.filename and exc.errno in (
            errno.ENOSPC,
            errno.EFBIG,
            errno.EDQUOT,
        ):  # a full disk: our output
            verb, where = "write", " standard output"
        sys.stderr.write(f"scwo {args.command}: cannot {verb}{where}: {exc.strerror or exc}\n")
        return 1
    except KeyboardInterrupt as exc:  # 128 + the signal, as a shell reports it
        return 128 + (signal.SIGTERM if isinstance(exc, _Terminated) else signal.SIGINT)
