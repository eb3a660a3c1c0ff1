"""Output files of every command: one writer (``cli/_io._output_file``) that follows a symlink to
its target, writes a device or a FIFO directly, gives a new file the umask's mode and names the
path when it fails; ``scwo rerank -o -`` and its column flags; ``scwo dedup``'s progress and -q.

No test here touches the machine's own /dev/stderr: symlinks point into ``tmp_path``, and the
non-regular targets are a FIFO made here, ``/dev/null`` and ``/dev/full``.
"""

import contextlib
import io
import json
import os
import stat
import threading
from pathlib import Path

import numpy as np
import pytest

from scwo_np.cli import main
from scwo_np.datasets import load_sample
from scwo_np.dedup import deduplicate
from scwo_np.tokens import count_tokens


def _run(argv, *, tty=False):
    out, err = io.StringIO(), _TTY() if tty else io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


class _TTY(io.StringIO):
    """A standard error that says it is a terminal (so the progress bar draws)."""

    def isatty(self):
        return True


@pytest.fixture
def logs(tmp_path):
    """Real text (the bundled Python-docs chunks), every fourth one twice: ten records to drop."""
    pool = load_sample().texts[:80]
    kept = set(deduplicate(pool).keep.tolist()) & set(deduplicate(pool, method="sequence").keep.tolist())
    texts = [pool[i] for i in sorted(kept)][:40]  # none a near-duplicate of another
    path = tmp_path / "logs.jsonl"
    rows = [{"id": i, "text": t} for i, t in enumerate(texts)]
    rows += [{"id": 100 + i, "text": texts[i]} for i in range(0, 40, 4)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def _commands(logs, out):
    """A command line per writer of JSON text with -o/--report (``out`` the output path)."""
    return {
        "dedup -o": ["dedup", str(logs), "-o", out],
        "dedup --report": ["dedup", str(logs), "-o", os.devnull, "--report", out],
        "select -o": ["select", str(logs), "--query", "json", "--budget", "200", "-q", "-o", out],
        "sample -o": ["sample", "-n", "3", "-o", out],
        "crush -o": ["crush", str(logs.parent / "items.json"), "--max-items", "5", "-o", out],
    }


@pytest.fixture
def items(tmp_path):
    items = [{"id": i, "status": "error" if i % 9 == 0 else "ok", "ms": i % 7} for i in range(60)]
    (tmp_path / "items.json").write_text(json.dumps(items), encoding="utf-8")


COMMANDS = ["dedup -o", "dedup --report", "select -o", "sample -o", "crush -o"]


@pytest.mark.parametrize("which", COMMANDS)
def test_an_output_through_a_symlink_writes_its_target_and_keeps_the_link(tmp_path, logs, items, which):
    """`ln -s real/target.jsonl link.jsonl; scwo dedup logs.jsonl -o link.jsonl` left the target
    empty and the link replaced by a file."""
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "target.jsonl"
    target.write_text("old\n")
    target.chmod(0o640)
    link = tmp_path / "link.jsonl"
    link.symlink_to(os.path.join("real", "target.jsonl"))  # relative, as ln -s makes it
    status, _, err = _run(_commands(logs, str(link))[which])
    assert status == 0, err
    assert link.is_symlink() and os.readlink(link) == os.path.join("real", "target.jsonl")
    text = target.read_text(encoding="utf-8")
    assert text != "old\n" and text.strip()
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # the existing file's mode is kept
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["target.jsonl"]  # no temporary left


@pytest.mark.parametrize("which", COMMANDS)
@pytest.mark.parametrize("mask", [0o022, 0o027])
def test_a_new_output_has_the_umasks_mode_not_0600(tmp_path, logs, items, which, mask):
    out = tmp_path / "new.jsonl"
    old = os.umask(mask)
    try:
        status, _, err = _run(_commands(logs, str(out))[which])
    finally:
        os.umask(old)
    assert status == 0, err
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~mask


def test_a_dangling_symlink_creates_its_target(tmp_path, logs, umask_022):
    link = tmp_path / "link.jsonl"
    link.symlink_to(tmp_path / "made.jsonl")
    assert _run(["dedup", str(logs), "-o", str(link)])[0] == 0
    assert link.is_symlink() and (tmp_path / "made.jsonl").read_text().count("\n") == 40
    assert stat.S_IMODE((tmp_path / "made.jsonl").stat().st_mode) == 0o644


def test_a_fifo_is_written_directly_and_stays_a_fifo(tmp_path, logs):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    link = tmp_path / "to-pipe.jsonl"  # through a symlink too, as /dev/stderr -> /proc/self/fd/2
    link.symlink_to(fifo)
    try:
        status, _, err = _run(["dedup", str(logs), "--report", str(link), "-o", os.devnull])
    finally:
        if reader.is_alive() and not got:  # never opened for writing: let the reader finish
            with open(fifo, "wb"):
                pass
        reader.join(10)
    assert status == 0, err
    report = [json.loads(line) for line in got[0].decode().splitlines()]
    assert len(report) == 10 and {"line", "duplicate_of_line", "similarity"} <= report[0].keys()
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["logs.jsonl", "pipe", "to-pipe.jsonl"]


def test_dev_null_is_written_directly(logs):
    before = os.stat(os.devnull)
    assert _run(["dedup", str(logs), "-o", os.devnull, "--report", os.devnull])[0] == 0
    after = os.stat(os.devnull)
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_a_full_disk_is_an_error_naming_the_path(logs):
    status, out, err = _run(["dedup", str(logs), "-o", "/dev/full"])
    assert status == 1 and out == ""
    assert err == "scwo dedup: cannot write /dev/full: No space left on device\n"


def test_a_missing_folder_is_an_error_naming_the_path(tmp_path, logs):
    where = str(tmp_path / "no" / "such" / "out.jsonl")
    status, _, err = _run(["dedup", str(logs), "-o", where])
    assert status == 1 and err == f"scwo dedup: cannot write {where}: No such file or directory\n"


def test_a_failed_write_leaves_the_target_as_it_was(tmp_path):
    from scwo_np.cli._io import _output_file

    target = tmp_path / "t.png"
    target.write_bytes(b"before")
    with pytest.raises(RuntimeError), _output_file(str(target), suffix=".png") as name:
        assert name.endswith(".png") and os.path.dirname(name) == str(tmp_path)
        with open(name, "wb") as fh:
            fh.write(b"half")
        raise RuntimeError("the writer failed")
    assert target.read_bytes() == b"before" and [p.name for p in tmp_path.iterdir()] == ["t.png"]


def test_a_directory_is_an_error_naming_it(tmp_path, logs):
    status, _, err = _run(["dedup", str(logs), "-o", str(tmp_path)])
    assert status == 1 and err == f"scwo dedup: cannot write {tmp_path}: is a directory\n"


def test_no_writer_of_the_command_line_makes_its_own_temporary_file():
    """One writer: the others call cli/_io's (no mkstemp or os.replace of their own)."""
    import pathlib

    import scwo_np.cli

    folder = pathlib.Path(scwo_np.cli.__file__).parent
    for path in folder.glob("*.py"):
        if path.name == "_io.py":
            continue
        text = path.read_text(encoding="utf-8")
        assert "mkstemp" not in text and "os.replace" not in text, path.name


# -- scwo rerank: -o -, the column flags, its output through the one writer --------------------


def _sets(tmp_path, tokens="tokens"):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rng = np.random.default_rng(0)
    E = rng.standard_normal((60, 8)).astype(np.float32)
    t = pa.table({
        "query_id": np.repeat(["a", "b", "c"], 20), "chunk_id": [f"c{i}" for i in range(60)],
        "embedding": pa.FixedSizeListArray.from_arrays(pa.array(E.ravel()), 8), tokens: rng.integers(1, 50, 60),
    })  # fmt: skip
    q = pa.table({"query_id": ["a", "b", "c"],
                  "embedding": pa.FixedSizeListArray.from_arrays(pa.array(E[:3].ravel()), 8)})  # fmt: skip
    pq.write_table(t, tmp_path / "c.parquet", row_group_size=7)
    pq.write_table(q, tmp_path / "q.parquet")
    return t, q


def _rerank(tmp_path):
    return [
        "rerank",
        str(tmp_path / "c.parquet"),
        "--queries",
        str(tmp_path / "q.parquet"),
        "--budget",
        "100",
        "-q",
    ]


@pytest.mark.integration
def test_rerank_dash_writes_parquet_to_standard_output(tmp_path, monkeypatch, capsysbinary):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from scwo_np.rerank import rerank_table

    t, q = _sets(tmp_path)
    monkeypatch.chdir(tmp_path)
    argv = ["rerank", "c.parquet", "--queries", "q.parquet", "--budget", "100", "-q", "-o", "-"]
    assert main(argv) == 0
    out = capsysbinary.readouterr().out
    assert pq.read_table(pa.BufferReader(out)).equals(rerank_table(t, q, 100))
    assert not (tmp_path / "-").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.parquet", "q.parquet"]


@pytest.mark.integration
def test_rerank_dash_refuses_a_terminal(tmp_path, monkeypatch, capsys):
    _sets(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    assert main(["rerank", "c.parquet", "--queries", "q.parquet", "--budget", "100", "-o", "-"]) == 2
    cap = capsys.readouterr()
    assert cap.err.startswith("scwo rerank: -o - writes Parquet (binary) to standard output, which is a")
    assert cap.err.count("\n") == 1 and cap.out == "" and not (tmp_path / "-").exists()


@pytest.mark.integration
def test_rerank_help_says_what_dash_and_the_column_flags_do(capsys):
    assert main(["rerank", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "- for standard output" in text
    for flag in ("--query-column", "--embedding-column", "--tokens-column", "--query-embedding-column"):
        assert flag in text


@pytest.mark.integration
def test_rerank_column_flags_read_other_names_and_errors_name_the_flags(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    from scwo_np.rerank import rerank_table

    t, q = _sets(tmp_path, tokens="n_tokens")
    base = _rerank(tmp_path)
    status, _, err = _run([*base, "-o", str(tmp_path / "o.parquet")])
    assert status == 2 and err.count("\n") == 1
    assert "--tokens-column" in err and "tokens_col=" not in err, err
    assert _run([*base, "--tokens-column", "n_tokens", "-o", str(tmp_path / "o.parquet")])[0] == 0
    assert pq.read_table(tmp_path / "o.parquet").equals(rerank_table(t, q, 100, tokens_col="n_tokens"))
    renamed = t.rename_columns(["set", "chunk_id", "vec", "n_tokens"])
    pq.write_table(renamed, tmp_path / "r.parquet")
    pq.write_table(q.rename_columns(["set", "vec"]), tmp_path / "rq.parquet")
    argv = ["rerank", str(tmp_path / "r.parquet"), "--queries", str(tmp_path / "rq.parquet"), "--budget", "100",
            "--query-column", "set", "--embedding-column", "vec", "--tokens-column", "n_tokens", "-q",
            "-o", str(tmp_path / "r-out.parquet")]  # fmt: skip
    assert _run(argv)[0] == 0
    picked = pq.read_table(tmp_path / "o.parquet").column("chunk_id")
    assert pq.read_table(tmp_path / "r-out.parquet").column("chunk_id").equals(picked)


@pytest.mark.integration
def test_rerank_through_a_symlink_and_the_umask(tmp_path, umask_022):
    pq = pytest.importorskip("pyarrow.parquet")
    _sets(tmp_path)
    (tmp_path / "real").mkdir()
    link = tmp_path / "link.parquet"
    link.symlink_to(tmp_path / "real" / "o.parquet")
    base = _rerank(tmp_path)
    assert _run([*base, "-o", str(link)])[0] == 0
    assert link.is_symlink() and pq.read_table(tmp_path / "real" / "o.parquet").num_rows > 0
    assert stat.S_IMODE((tmp_path / "real" / "o.parquet").stat().st_mode) == 0o644
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["o.parquet"]
    assert _run([*base, "-o", os.devnull])[0] == 0 and stat.S_ISCHR(os.stat(os.devnull).st_mode)


@pytest.mark.integration
def test_sample_retrieved_sets_through_a_symlink(tmp_path, umask_022):
    pq = pytest.importorskip("pyarrow.parquet")
    link = tmp_path / "link.parquet"
    link.symlink_to(tmp_path / "sets.parquet")
    assert _run(["sample", "--retrieved-sets", "--top-k", "3", "-o", str(link)])[0] == 0
    assert link.is_symlink() and pq.read_table(tmp_path / "sets.parquet").num_rows > 0
    assert stat.S_IMODE((tmp_path / "sets.parquet").stat().st_mode) == 0o644


# -- scwo dedup: a progress bar on a terminal, -q ------------------------------------------------


def test_dedup_shows_progress_on_a_terminal_and_keeps_stdout_clean(logs):
    status, out, err = _run(["dedup", str(logs), "--method", "sequence"], tty=True)
    assert status == 0
    assert [json.loads(line)["id"] for line in out.splitlines()] == list(range(40))
    assert "scwo dedup: 100%" in err and "50/50" in err, err
    assert err.rstrip().endswith("scwo dedup: kept 40 of 50 (sequence)")


def test_dedup_quiet_writes_nothing_on_stderr(logs):
    for tty in (False, True):
        status, out, err = _run(["dedup", str(logs), "--method", "sequence", "-q"], tty=tty)
        assert status == 0 and err == "" and out.count("\n") == 40


def test_dedup_without_a_terminal_has_no_bar(logs):
    status, _, err = _run(["dedup", str(logs)])
    assert status == 0 and err == "scwo dedup: kept 40 of 50 (jaccard)\n"


@pytest.mark.parametrize(
    "argv",
    [["dedup", "{path}"], ["optimize", "{path}", "--pipeline", "kb"]],
)
def test_records_passed_through_are_the_input_lines_unchanged(tmp_path, capsys, argv):
    """dedup and kb write the records they keep as given: they were parsed and dumped again, so
    ``1e400`` came out as ``Infinity`` (no strict JSON parser reads it), ``1.50`` as ``1.5``, and
    spacing and key order changed."""
    lines = [
        '{"score": 1.50, "text": "The cache keeps the newest entries.", "f": 1e400}',
        '{"text":"The cache keeps the newest entries.","score":0.4}',
        '{ "text" : "Evicted entries are written to disk." , "score" : 0.3 , "id" : 7 }',
    ]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\r\n")
    assert main([a.format(path=path) for a in argv]) == 0
    assert capsys.readouterr().out.splitlines() == [lines[0], lines[2]]


@pytest.mark.skipif(not Path("/var/log/dpkg.log").exists(), reason="no /var/log/dpkg.log on this machine")
def test_crush_stdout_with_its_line_break_is_within_the_budget(tmp_path, capsys):
    """The crush was fitted to the budget and the CLI then printed a line break after it: this
    machine's dpkg.log as records printed 2,001 estimate tokens at --budget 2000 (1,901 at 1,900).
    What stdout holds is counted now."""
    from scwo_evals.logs import dpkg_records
    from scwo_np.tokens import count_tokens

    lines = Path("/var/log/dpkg.log").read_text(encoding="utf-8", errors="replace").splitlines()
    path = tmp_path / "dpkg.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in dpkg_records(lines)))
    over = []
    for budget in range(1900, 2100, 7):
        assert main(["crush", str(path), "--budget", str(budget), "--no-store"]) == 0
        out = capsys.readouterr().out
        if int(count_tokens([out], "estimate")[0]) > budget:
            over.append(budget)
    assert not over


def test_crush_names_the_file_that_is_empty_or_not_utf8(tmp_path, capsys):
    """ "text is empty" named no file, where every other input error says FILE: or FILE:LINE:. Text
    that is not UTF-8 is crushed with its bad bytes as U+FFFD, and said (make's NEWS is Latin-1 past
    its newest releases: it was refused whole)."""
    path = tmp_path / "tool.json"
    path.write_bytes(b"")
    assert main(["crush", str(path), "--budget", "100"]) == 2
    assert f"scwo crush: {path}: text is empty" in capsys.readouterr().err
    news = "".join(
        f"Version 4.{k}\n\n* Fixed the parser for case {k}, reported by Fran\u00e7ois.\n\n"
        for k in range(60, 0, -1)
    )
    path.write_bytes(news.encode("latin-1"))
    assert main(["crush", str(path), "--budget", "100", "--no-store"]) == 0
    out, err = capsys.readouterr()
    assert f"scwo crush: warning: {path} is not valid UTF-8 (byte " in err and "U+FFFD" in err
    assert out.startswith("Version 4.60") and "Fran\ufffdois" in out
    assert int(count_tokens([out], "estimate")[0]) <= 100


def test_crush_max_items_announces_on_stderr_what_stdout_does_not_say(logs):
    """Every drop is announced: without --marker the output holds no omission, so stderr says it."""
    status, out, err = _run(["crush", str(logs), "--max-items", "5"])
    assert status == 0 and len(out.splitlines()) == 5
    assert (
        err
        == "scwo crush: kept 5 of 50 items; the output does not say so (--marker puts the omission in it, --report says more)\n"
    )
    status, out, err = _run(["crush", str(logs), "--max-items", "5", "--marker", "--no-store"])
    assert status == 0 and err == "" and '"_omitted"' in out.splitlines()[-1]
    status, out, err = _run(["crush", str(logs), "--max-items", "60"])  # nothing dropped, nothing said
    assert status == 0 and err == "" and len(out.splitlines()) == 50


@pytest.mark.parametrize("flag", [["--bias", "wrong"], ["--bias", "0.3"], ["--upper", "7"]])
def test_crush_bias_and_upper_go_with_auto_only(logs, flag):
    """They size "auto": with a number of items or a budget they did nothing, silently."""
    for mode in (["--max-items", "10"], ["--budget", "500"]):
        status, out, err = _run(["crush", str(logs), *mode, *flag])
        assert status == 2 and out == ""
        assert (
            err == f"scwo crush: {flag[0]} goes with --max-items auto (it sizes that choice); leave it out\n"
        )
    assert _run(["crush", str(logs), "--max-items", "auto", *flag])[0] == (2 if flag[1] == "wrong" else 0)
    status, _, err = _run(["crush", str(logs), "--lossless", *flag])  # it took them and did nothing
    assert status == 2 and err == f"scwo crush: {flag[0]} does not go with --lossless\n"


def test_crush_expand_refuses_what_is_no_lossless_output(logs):
    status, out, err = _run(["crush", str(logs), "--expand"])
    assert status == 2 and out == ""
    assert (
        err
        == f"scwo crush: {logs} holds no --lossless output (no '_columnar' key) to expand; it is already the array\n"
    )


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_a_full_standard_output_is_named(logs):
    import subprocess
    import sys

    with open("/dev/full", "w") as full:
        p = subprocess.run(
            [sys.executable, "-m", "scwo_np.cli", "crush", str(logs), "--max-items", "3", "--marker", "--no-store"],
            stdout=full, stderr=subprocess.PIPE, text=True, check=False,
        )  # fmt: skip
    assert p.returncode == 1
    assert p.stderr == "scwo crush: cannot write standard output: No space left on device\n"
