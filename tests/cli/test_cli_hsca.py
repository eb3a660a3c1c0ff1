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


def _faq_turns(a: int, b: int) -> list[str]:
    from scwo_np.datasets import load_faq

    return load_faq().texts[a:b]  # Python FAQ paragraphs (python3-doc, PSF-2.0), in order


def _conv(path, turns: list[str]):
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in turns), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("keep_open", [False, True])
def test_ingest_twice_continues_the_session(tmp_path, capsys, keep_open):
    first, second = _faq_turns(100, 118), _faq_turns(118, 134)
    store = str(tmp_path / "s.sqlite")
    opened = ["--open"] if keep_open else []
    assert (
        main(
            [
                "hsca",
                "ingest",
                _conv(tmp_path / "a.jsonl", first),
                "--store",
                store,
                "--session",
                "s",
                *opened,
            ]
        )
        == 0
    )
    out1 = _jsonl(capsys.readouterr().out)
    assert (
        main(["hsca", "ingest", _conv(tmp_path / "b.jsonl", second), "--store", store, "--session", "s"]) == 0
    )
    out2, err = capsys.readouterr()
    out2 = _jsonl(out2)
    assert f"holds {len(first) + len(second)} turns" in err
    # the second run's snapshots take the next positions; every turn is stored once, in order
    assert [s["conversation_position"] for s in out1 + out2] == list(range(len(out1) + len(out2)))
    st = SnapshotStore(store)
    try:
        snaps, buffered = st.load("s"), st.load_buffer("s")
    finally:
        st.close()
    assert [s.conversation_position for s in snaps] == list(range(len(snaps)))
    assert [c.text for s in snaps for c in s.chunks] == first + second and buffered == []
    if keep_open:  # the first run's last beat stayed open: the second run's first snapshot holds it
        assert sum(len(s["chunks"]) for s in out1) < len(first)
        assert sum(len(s["chunks"]) for s in out2) > len(second)
    else:
        assert sum(len(s["chunks"]) for s in out1) == len(first)
    assert main(["hsca", "ingest", _conv(tmp_path / "c.jsonl", second[:2]), "--store", store, "--session", "s",
                 "--macro", "--open"]) == 0  # fmt: skip
    out, err = capsys.readouterr()
    n = len(first) + len(second)
    assert out.startswith(f"{len(snaps) + 1:>3}  turns {n + 1}-") or out == ""  # numbered on, from 1
    assert f"holds {n + 2} turns" in err


def test_context_prints_the_text_within_the_budget_and_its_json(tmp_path, capsys):
    from scwo_np.hsca import HSCAEngine
    from scwo_np.tokens import count_tokens

    turns = _faq_turns(100, 136)
    store = str(tmp_path / "s.sqlite")
    assert main(["hsca", "ingest", _conv(tmp_path / "a.jsonl", turns), "--store", store, "--session", "faq",
                 "--open"]) == 0  # fmt: skip
    capsys.readouterr()
    for budget in (0, 30, 120, 400, 2000):
        for query in (None, "How do I read a file?", "Why does -22 // 10 return -3?"):
            argv = ["hsca", "context", "--store", store, "--session", "faq", "--budget", str(budget)]
            argv += ["--query", query] if query else []
            assert main(argv) == 0
            out, err = capsys.readouterr()
            text = out[:-1] if out else ""  # the text and its final newline
            tokens = int(count_tokens([text])[0]) if text else 0
            assert tokens <= budget and f"{tokens} tokens of {budget} (estimate)" in err
            if budget >= 2000:  # the newest turn, in the open beat (its share of the budget holds it whole)
                assert text.startswith("[turn ") and "[turn 36]" in text
            assert main([*argv, "--json"]) == 0
            d = json.loads(capsys.readouterr().out)
            assert d["text"] == text and d["tokens"] == tokens and d["budget"] == budget and d["turns"] == 36
            st = SnapshotStore(store)
            try:
                ctx = HSCAEngine.from_store(st, "faq").context(query, budget)
            finally:
                st.close()
            assert d == json.loads(json.dumps(ctx.to_dict()))
            for p in d["pieces"]:
                assert all(turns[p["turn"] - 1][a:b] in text for a, b in p["spans"])


@pytest.mark.parametrize(
    "argv, match",
    [
        (
            ["--store", "missing.sqlite", "--session", "s", "--budget", "10"],
            "--store missing.sqlite: no such file",
        ),
        (
            ["--store", "s.sqlite", "--session", "nobody", "--budget", "10"],
            "--session 'nobody' is not in s.sqlite",
        ),
        (["--store", "s.sqlite", "--session", "s", "--budget", "10", "--query", " "], "--query is empty"),
    ],
)
def test_context_usage_errors_are_one_line_and_status_2(tmp_path, monkeypatch, capsys, argv, match):
    monkeypatch.chdir(tmp_path)
    assert main(["hsca", "ingest", _conv(tmp_path / "a.jsonl", _faq_turns(0, 3)), "--store", "s.sqlite",
                 "--session", "s"]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["hsca", "context", *argv]) == 2
    out, err = capsys.readouterr()
    assert out == "" and match in err and err.count("\n") == 1 and err.startswith("scwo hsca:")
    assert not (tmp_path / "missing.sqlite").exists()


def test_ingest_refuses_an_empty_conversation_and_a_missing_directory(tmp_path, capsys):
    """A new user's trial: ``ingest /dev/null`` said the session "holds 0 turns" and ``context``
    then said it was not in the store; a store in a missing directory exited 1, not 2."""
    store = str(tmp_path / "s.sqlite")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    assert main(["hsca", "ingest", str(empty), "--store", store, "--session", "empty"]) == 2
    assert "holds no turns" in capsys.readouterr().err
    conv = tmp_path / "talk.jsonl"
    conv.write_text(
        "".join(json.dumps({"text": t["text"]}) + "\n" for t in real_texts()[:3]), encoding="utf-8"
    )
    missing = str(tmp_path / "nowhere" / "s.sqlite")
    assert main(["hsca", "ingest", str(conv), "--store", missing]) == 2
    assert "does not exist; create it first" in capsys.readouterr().err


def test_context_takes_recent_as_the_python_argument(tmp_path, capsys):
    """``--recent`` has HSCAEngine.context's name and meaning; out of [0, 1] is refused."""
    from scwo_np.hsca import HSCAEngine

    texts = [t["text"] for t in real_texts()[:12]]
    conv = tmp_path / "talk.jsonl"
    conv.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    store = str(tmp_path / "s.sqlite")
    assert main(["hsca", "ingest", str(conv), "--store", store, "--open", "-q"]) == 0
    assert capsys.readouterr().err == ""
    eng = HSCAEngine()
    for t in texts:
        eng.ingest_turn(t)
    for share in ("0", "0.5"):
        argv = ["hsca", "context", "--store", store, "--session", "default", "--budget", "300"]
        assert main([*argv, "--query", "love", "--recent", share, "-q"]) == 0
        out, err = capsys.readouterr()
        assert out[:-1] == eng.context("love", 300, recent=float(share)).text and err == ""
    assert main([*argv, "--recent", "1.5"]) == 2
    assert "from 0 to 1" in capsys.readouterr().err
