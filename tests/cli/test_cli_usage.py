"""Issue 40, part 7: every usage error, argparse's own included, is one line on stderr and status 2.

The cases are derived from the parser itself (every sub-command, every option that takes a
value, every choice, every typed option, every required argument), so a new sub-command or
option is covered as soon as it is registered.
"""

import argparse
import contextlib
import io
import re
import subprocess
import sys

import pytest

from scwo_np.cli import build_parser, main
from scwo_np.cli._io import _count, _lam, _positive, _RenamedFlag


def _subparsers(parser):
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def _leaves(parser, prefix=()):
    """``(words, parser)`` of every runnable sub-command (``("hsca", "score")`` ...)."""
    sp = _subparsers(parser)
    if sp is None:
        yield prefix, parser
        return
    for name, p in sp.choices.items():
        yield from _leaves(p, (*prefix, name))


LEAVES = list(_leaves(build_parser()))
TYPED = (int, float, _positive, _count, _lam)


def _options(parser):
    return [a for a in parser._actions if a.option_strings and not isinstance(a, argparse._HelpAction)]


def _misspell(option: str) -> str:
    """``--budget`` -> ``--buddget``: a letter doubled, no longer any option's prefix."""
    k = 2 + (len(option) - 2) // 2
    return option[:k] + option[k] + option[k:]


def _cases():
    for words, p in LEAVES:
        cmd = list(words)
        name = " ".join(words)
        yield pytest.param(cmd, [*cmd, "--xyzzy"], "unrecognized option --xyzzy$", id=f"{name}-unknown")
        if any(a.required for a in p._actions) or any(g.required for g in p._mutually_exclusive_groups):
            yield pytest.param(cmd, cmd, "(required|give)", id=f"{name}-missing-required")
        for a in _options(p):
            long = [o for o in a.option_strings if o.startswith("--")]
            if long:
                wrong = _misspell(long[0])
                shown = a.new if isinstance(a, _RenamedFlag) else long[0]  # an old flag: its new name
                yield pytest.param(
                    cmd, [*cmd, wrong], re.escape(f"unrecognized option {wrong} (did you mean {shown}?)") + "$",
                    id=f"{name}-misspelt{long[0]}",
                )  # fmt: skip
            opt = a.option_strings[-1]
            if a.nargs is None and not isinstance(a, argparse._StoreConstAction):
                yield pytest.param(cmd, [*cmd, opt], f"argument .*{re.escape(opt)}: expected one argument$",
                                   id=f"{name}-missing-value{opt}")  # fmt: skip
            if a.choices:
                first = str(list(a.choices)[0])
                yield pytest.param(
                    cmd, [*cmd, opt, first + "x"],
                    rf"argument .*{re.escape(opt)}: invalid choice: '{re.escape(first)}x' .*\(did you mean {re.escape(first)}\?\)$",
                    id=f"{name}-bad-choice{opt}",
                )  # fmt: skip
            if a.type in TYPED:
                yield pytest.param(cmd, [*cmd, opt, "many"], rf"argument .*{re.escape(opt)}: (invalid|must be)",
                                   id=f"{name}-bad-type{opt}")  # fmt: skip


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("cmd, argv, match", list(_cases()))
def test_every_usage_error_is_one_line_and_status_2(cmd, argv, match):
    status, out, err = _run(argv)
    prog = "scwo " + " ".join(cmd)
    assert status == 2 and out == "", (status, out, err)
    assert err.count("\n") == 1 and err.endswith("\n"), err
    line = err[:-1]
    assert line.startswith(f"{prog}: error: ") and line.endswith(f"; see {prog} --help"), line
    body = line[len(f"{prog}: error: ") : -len(f"; see {prog} --help")]
    assert re.search(match, body), body


def test_the_cases_cover_every_sub_command():
    names = {" ".join(w) for w, _ in LEAVES}
    assert {"select", "dedup", "optimize", "crush", "rerank", "mcp", "hsca score", "hsca ingest"} <= names
    assert len(list(_cases())) > 5 * len(LEAVES)


@pytest.mark.parametrize(
    "argv, line",
    [
        ([], "scwo: error: give a command: select, demo, sample, bench, dedup, optimize, crush, hsca, rerank, mcp"),
        (["selct", "x.jsonl"], "scwo: error: unknown command 'selct' (did you mean select?); the commands are "
                               "select, demo, sample, bench, dedup, optimize, crush, hsca, rerank, mcp"),
        (["hsca"], "scwo hsca: error: give a command: score, ingest"),
        (["hsca", "scroe", "x"], "scwo hsca: error: unknown command 'scroe' (did you mean score?); the commands "
                                 "are score, ingest"),
        (["dedup", "a.jsonl", "b.jsonl"], "scwo dedup: error: unrecognized arguments: b.jsonl"),
        (["select", "x.jsonl", "--query", "q", "--budjet", "100"],
         "scwo select: error: unrecognized option --budjet (did you mean --budget?)"),
        (["select", "x.jsonl", "--query", "q", "--budjet=100"],
         "scwo select: error: unrecognized option --budjet (did you mean --budget?)"),
        (["dedup", "x.jsonl", "--method", "cosin"],
         "scwo dedup: error: argument --method: invalid choice: 'cosin' (choose from 'jaccard', 'sequence', "
         "'cosine', 'minhash') (did you mean cosine?)"),
        (["select", "x.jsonl", "--query", "q", "--query-index", "0", "--budget", "5"],
         "scwo select: error: argument --query-index: not allowed with argument --query"),
    ],
)  # fmt: skip
def test_usage_errors_read_as_one_line(argv, line):
    status, out, err = _run(argv)
    prog = line.split(": error:")[0]
    assert (status, out, err) == (2, "", f"{line}; see {prog} --help\n")


def test_the_real_entry_point_prints_one_line_and_exits_2(tmp_path):
    """The installed command, not main(): argparse's usage text never reaches the terminal."""
    r = subprocess.run(
        [sys.executable, "-m", "scwo_np.cli", "select", "x.jsonl", "--query", "q", "--budjet", "100"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == (
        "scwo select: error: unrecognized option --budjet (did you mean --budget?); see scwo select --help\n"
    )


def test_help_still_prints_the_usage_and_exits_0():
    status, out, err = _run(["dedup", "--help"])
    assert status == 0 and out.startswith("usage: scwo dedup") and "--embedder" in out and err == ""


def test_negative_numbers_and_abbreviations_are_values_and_options_not_misspellings(tmp_path):
    chunks = tmp_path / "c.jsonl"
    chunks.write_text('{"embedding": [1.0, 0.0], "tokens": 3}\n{"embedding": [0.0, 1.0], "tokens": 3}\n')
    status, out, err = _run(["select", str(chunks), "--query-index", "0", "--budg", "5", "--lam", "-1"])
    assert status == 2 and err.startswith("scwo select: lam must be in [0, 1]"), err  # the library's check
    status, out, err = _run(["select", str(chunks), "--query-index", "0", "--budg", "5", "-q"])
    assert status == 0 and len(out.splitlines()) == 1 and err == ""
