import json

import pytest

from scwo_evals.realtext import real_texts
from scwo_np.cli import main
from scwo_np.hsca import SnapshotStore

PROSE = "The court held that the contract was void because the seller concealed a defect he knew about."
SALAD = "Defect the about contract seller void held the concealed because knew he a was that court."


def _jsonl(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_score_lines_gives_one_record_per_non_blank_line(tmp_path, capsys):
    f = tmp_path / "chunks.txt"
    f.write_text(f"{PROSE}\n\n{SALAD}\nqwx zrt plk vbn mmq\n", encoding="utf-8")
    assert main(["hsca", "score", str(f)]) == 0
    recs = _jsonl(capsys.readouterr().out)
    assert [r["line"] for r in recs] == [1, 3, 4]
    assert set(recs[0]) == {"line", "layer1", "domains", "coherence", "flags"}
    assert (
        recs[0]["layer1"] > 0.5 > recs[1]["layer1"]
        and recs[0]["coherence"] > 0.8 > 0.3 > recs[1]["coherence"]
    )
    assert recs[2]["domains"] == ["unclassified"] and "short_chunk" in recs[2]["flags"]


def test_score_jsonl_keeps_ids_and_writes_a_file(tmp_path):
    f = tmp_path / "chunks.jsonl"
    rows = real_texts("held_out")[:5]
    f.write_text("".join(json.dumps({"id": f"c{k}", "text": r["text"]}) + "\n" for k, r in enumerate(rows)))
    out = tmp_path / "scores.jsonl"
    assert main(["hsca", "score", str(f), "-o", str(out)]) == 0
    recs = _jsonl(out.read_text())
    assert [r["id"] for r in recs] == [f"c{k}" for k in range(5)]
    assert all(0.0 <= r["layer1"] <= 1.0 and 0.0 <= r["coherence"] <= 1.0 for r in recs)


def test_ingest_saves_snapshots_and_prints_the_macro_map(tmp_path, capsys):
    conv = tmp_path / "conv.jsonl"
    turns = [r["text"] for r in real_texts("held_out")[:8]]
    conv.write_text("".join(json.dumps({"text": t}) + "\n" for t in turns))
    store = tmp_path / "s.sqlite"
    assert main(["hsca", "ingest", str(conv), "--store", str(store), "--session", "s1"]) == 0
    snaps = _jsonl(capsys.readouterr().out)
    assert sum(len(s["chunks"]) for s in snaps) == len(turns)
    loaded = SnapshotStore(str(store)).load("s1")  # ids come back namespaced by session
    assert [s.snapshot_id for s in loaded] == [f"s1/{s['snapshot_id']}" for s in snaps]
    assert main(["hsca", "ingest", str(conv), "--store", str(store), "--macro"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines and all("macro_weight" in line for line in lines)
    assert lines[0].split()[2] == "1-" + lines[0].split()[2].split("-")[1]  # "turns 1-k"


@pytest.mark.parametrize(
    "argv, match",
    [
        (["hsca", "score", "missing.txt"], "cannot read missing.txt"),
        (["hsca", "ingest", "PLAIN", "--store", "s.sqlite"], "not valid JSON"),
        (["hsca", "score", "BADUTF8"], "not valid UTF-8"),
    ],
)
def test_bad_input_is_one_line_and_status_2(tmp_path, monkeypatch, capsys, argv, match):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "PLAIN").write_text("just a line\n")
    (tmp_path / "BADUTF8").write_bytes(b"ok\n\xff\xfe\n")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert match in err and err.count("\n") == 1 and err.startswith("scwo hsca:")
