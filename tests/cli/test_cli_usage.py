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
    """``(words, parser)`` of every runnable sub-command (``("hsca", "score")`` ..., and ``("mcp",)``, which
    runs on its own and has the sub-command ``proxy``)."""
    sp = _subparsers(parser)
    if sp is None or (prefix and not sp.required):
        yield prefix, parser
    if sp is None:
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
    assert {
        "select",
        "dedup",
        "optimize",
        "crush",
        "rerank",
        "mcp",
        "mcp proxy",
        "hsca score",
        "hsca ingest",
    } <= names
    assert len(list(_cases())) > 5 * len(LEAVES)


@pytest.mark.parametrize(
    "argv, line",
    [
        ([], "scwo: error: give a command: select, demo, sample, bench, dedup, optimize, crush, hsca, rerank, mcp"),
        (["selct", "x.jsonl"], "scwo: error: unknown command 'selct' (did you mean select?); the commands are "
                               "select, demo, sample, bench, dedup, optimize, crush, hsca, rerank, mcp"),
        (["hsca"], "scwo hsca: error: give a command: score, ingest, context"),
        (["hsca", "scroe", "x"], "scwo hsca: error: unknown command 'scroe' (did you mean score?); the commands "
                                 "are score, ingest, context"),
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


def _renamed_cases():
    """``(words, old flag action)`` of every renamed flag of every sub-command."""
    for words, p in LEAVES:
        for a in _options(p):
            if isinstance(a, _RenamedFlag):
                yield pytest.param(list(words), a, id=f"{' '.join(words)}{a.option_strings[0]}")


def test_every_sub_command_with_a_renamed_flag_is_covered():
    ids = {(tuple(c.values[0]), c.values[1].option_strings[0]) for c in _renamed_cases()}
    assert {(("crush",), "--max-tokens"), (("crush",), "--tokens"), (("select",), "--tokens"),
            (("optimize",), "--token-budget"), (("optimize",), "--max-tokens")} <= ids  # fmt: skip


@pytest.mark.parametrize("cmd, action", list(_renamed_cases()))
def test_an_old_flag_with_its_new_one_is_a_usage_error_naming_both(cmd, action):
    """As the Python API's TypeError for an old keyword with its new one: never 'the last one wins'."""
    old, new = action.option_strings[0], action.new
    prog = "scwo " + " ".join(cmd)
    want = f"{prog}: error: {old} (the old name of {new}) and {new} are given together; give {new} only"
    for argv in ([*cmd, old, "1", new, "2"], [*cmd, new, "2", old, "1"], [*cmd, f"{new}=2", f"{old}=1"]):
        status, out, err = _run(argv)
        assert (status, out, err) == (2, "", f"{want}; see {prog} --help\n"), argv


@pytest.mark.parametrize(
    "argv, line",
    [
        (["crush", "f.json", "--budget", "400", "--max-tokens", "100", "--no-store"],
         "scwo crush: error: --max-tokens (the old name of --budget) and --budget are given together; "
         "give --budget only"),
        (["crush", "f.json", "--tokens", "wordpiece", "--token-counter", "estimate"],
         "scwo crush: error: --tokens (the old name of --token-counter) and --token-counter are given "
         "together; give --token-counter only"),
        (["optimize", "f.jsonl", "--pipeline", "kb", "--token-budget", "1", "--max-tokens", "2"],
         "scwo optimize: error: --token-budget (the old name of --budget) and --max-tokens (the old name "
         "of --budget) are given together; give --budget only"),
        (["crush", "f.json", "--max-tokns", "300"],
         "scwo crush: error: unrecognized option --max-tokns (did you mean --budget?)"),
        (["crush", "f.json", "--tokns", "estimate"],
         "scwo crush: error: unrecognized option --tokns (did you mean --token-counter?)"),
        (["optimize", "f.jsonl", "--pipeline", "kb", "--token-budgt", "300"],
         "scwo optimize: error: unrecognized option --token-budgt (did you mean --budget?)"),
        (["select", "f.jsonl", "--query", "q", "--budget", "5", "--token", "x"],
         "scwo select: error: ambiguous option: --token could match --tokens-field, --token-counter"),
    ],
)  # fmt: skip
def test_old_flags_are_neither_suggested_nor_listed(argv, line):
    """Suggestions and ambiguity lists name what --help lists; a misspelt old flag suggests its new name."""
    status, out, err = _run(argv)
    prog = line.split(": error:")[0]
    assert (status, out, err) == (2, "", f"{line}; see {prog} --help\n")


def test_an_old_flag_still_works_typed_whole_or_by_an_unambiguous_prefix(tmp_path):
    doc = tmp_path / "a.json"
    doc.write_text('[{"a": 1}, {"a": 2}, {"a": 3}]')
    new = _run(["crush", str(doc), "--budget", "12", "--no-store"])
    assert new[0] == 0 and "renamed" not in new[2]
    for flag in ("--max-tokens", "--max-tok"):
        status, out, err = _run(["crush", str(doc), flag, "12", "--no-store"])
        assert (status, out) == (0, new[1])
        assert err == "scwo: warning: '--max-tokens' was renamed to '--budget' in 0.2; the old name stops " \
                      "working in 0.3. Use --budget.\n"  # fmt: skip
    # --max is --max-items: the hidden --max-tokens does not make it ambiguous
    by_prefix, whole = _run(["crush", str(doc), "--max", "1"]), _run(["crush", str(doc), "--max-items", "1"])
    assert by_prefix[:2] == whole[:2] and whole[0] == 0
