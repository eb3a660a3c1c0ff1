import json

import numpy as np
import pytest

from scwo_np import mmr_select
from scwo_np.cli import main


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
    with pytest.raises(SystemExit, match=f"bad.jsonl:1: {message}"):
        main(["select", str(path), "--query-index", "0", "--budget", "5"])


def test_select_bad_lambda_and_index(chunks):
    path, _, _ = chunks
    with pytest.raises(SystemExit, match="lam"):
        main(["select", str(path), "--query-index", "0", "--budget", "5", "--lam", "2"])
    with pytest.raises(SystemExit, match="--query-index must be in"):
        main(["select", str(path), "--query-index", "99", "--budget", "5"])


def test_demo_runs_on_the_bundled_sample(capsys):
    assert main(["demo", "--budget", "600"]) == 0
    out = capsys.readouterr().out
    assert "Selected" in out and "Coverage" in out
    tail = out.split("Coverage", 1)[1].splitlines()[1:4]
    cov = dict(line.split() for line in tail)
    assert float(cov["MMR"]) >= float(cov["truncation"])


def test_bench_quick_prints_the_spec_table(capsys):
    assert main(["bench", "--quick"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("| n | d |")
    assert [line.split("|")[1].strip() for line in lines[2:]] == ["50", "100", "300", "500"]
