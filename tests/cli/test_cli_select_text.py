"""``scwo select FILE --query TEXT``: chunks with text and no embeddings, on the bundled real text."""

import json

import numpy as np
import pytest

from scwo_np import load_sample, select_texts
from scwo_np.cli import main
from scwo_np.embed import EmbeddingCache
from tests.cli.test_cli import _fails

QUESTION = "how do I read a CSV file?"


@pytest.fixture(scope="module")
def sample():
    return load_sample()


@pytest.fixture
def text_chunks(tmp_path, sample):
    """Chunks near the csv question: id, source, text; no embedding, no tokens."""
    cand = np.argsort(-(sample.embeddings @ sample.query_embeddings[0]), kind="stable")[:80]
    path = tmp_path / "chunks.jsonl"
    with path.open("w") as fh:
        for i in cand:
            fh.write(json.dumps({"id": int(i), "source": sample.sources[i], "text": sample.texts[i]}) + "\n")
    return path, [sample.texts[i] for i in cand], cand


def _run(argv, capsys):
    assert main(argv) == 0
    cap = capsys.readouterr()
    return [json.loads(line) for line in cap.out.splitlines()], cap.err


def test_text_in_records_out_as_select_texts_picks_them(text_chunks, tmp_path, capsys):
    path, texts, _ = text_chunks
    cache = tmp_path / "emb.sqlite"
    argv = ["select", str(path), "--query", QUESTION, "--budget", "900", "--cache", str(cache)]
    out, err = _run(argv, capsys)
    want = select_texts(texts, QUESTION, 900)
    assert [r["text"] for r in out] == want.texts
    assert set(out[0]) == {"id", "source", "text"}  # records as they were
    assert "estimate" in err and f"kept {len(want)} of 80 chunks" in err
    with EmbeddingCache(cache) as c:
        assert len(c) == len(set(texts)) + 1  # each distinct text once, and the question
    out2, _ = _run(argv, capsys)  # the second run reads every vector from the cache
    assert out2 == out


def test_the_command_picks_what_select_texts_picks_at_every_budget(text_chunks, capsys):
    """The command counted each text and passed the counts on, so the joined context was never
    counted again: it filled less than the call (385 against 395 tokens of 400 on a new user's man
    page set, picks differing in 46 of 64 runs), and its summary left the separators out."""
    path, texts, _ = text_chunks
    for budget in (50, 200, 400, 600, 710, 810):  # picks differed at 600, 710 and 810
        out, err = _run(
            ["select", str(path), "--query", QUESTION, "--budget", str(budget), "--no-cache"], capsys
        )
        want = select_texts(texts, QUESTION, budget)
        assert [r["text"] for r in out] == want.texts, budget
        assert f"{want.context_tokens} of {budget} tokens joined by blank lines" in err


def test_piped_chunks_a_strategy_and_the_hint_for_text_alone(text_chunks, tmp_path):
    """``... | scwo select --query Q`` said "the following arguments are required: file"; --strategy
    with --query was refused though select_texts takes it; --query-index on chunks of text said only
    "missing field 'embedding'"."""
    import subprocess
    import sys

    path, texts, _ = text_chunks
    argv = [
        sys.executable,
        "-m",
        "scwo_np.cli",
        "select",
        "--query",
        QUESTION,
        "--budget",
        "300",
        "--no-cache",
    ]
    with open(path, "rb") as fh:
        r = subprocess.run([*argv, "--strategy", "dpp"], stdin=fh, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    want = select_texts(texts, QUESTION, 300, strategy="dpp")
    assert [json.loads(line)["text"] for line in r.stdout.splitlines()] == want.texts
    _fails(
        ["select", str(path), "--query-index", "0", "--budget", "300"],
        "missing field 'embedding'; chunks of text alone are selected for a question as text: --query TEXT",
    )
    _fails(
        [
            "select",
            str(path),
            "--query",
            QUESTION,
            "--budget",
            "300",
            "--strategy",
            "dpp",
            "--granularity",
            "sentence",
        ],
        "--strategy goes with --granularity chunk",
    )


@pytest.mark.integration
def test_counter_order_and_annotations(text_chunks, tmp_path, capsys):
    path, texts, _ = text_chunks
    argv = [
        "select",
        str(path),
        "--query",
        QUESTION,
        "--budget",
        "700",
        "--no-cache",
        "--token-counter",
        "wordpiece",
    ]
    out, err = _run([*argv, "--order", "original", "--annotate", "-q"], capsys)
    assert err == ""
    want = select_texts(texts, QUESTION, 700, token_counter="wordpiece", order="original")
    assert [r["_scwo"]["line"] - 1 for r in out] == want.indices.tolist()  # no blank lines
    assert [r["_scwo"]["tokens"] for r in out] == want.tokens.tolist()
    assert {r["_scwo"]["token_counter"] for r in out} == {"wordpiece:all-MiniLM-L6-v2"}
    assert sum(r["_scwo"]["tokens"] for r in out) <= 700
    assert [r["_scwo"]["line"] for r in out] == sorted(r["_scwo"]["line"] for r in out)


@pytest.mark.integration
def test_chunks_with_minilm_embeddings_take_the_question_as_text(tmp_path, sample, capsys):
    path = tmp_path / "emb.jsonl"
    with path.open("w") as fh:
        for i in range(120):
            rec = {"id": i, "text": sample.texts[i], "tokens": int(sample.costs[i])}
            fh.write(json.dumps({**rec, "embedding": sample.embeddings[i].tolist()}) + "\n")
    _fails(["select", str(path), "--query", QUESTION, "--budget", "500"], "--embedder minilm")
    out, err = _run(["select", str(path), "--query", sample.queries[0], "--budget", "500", "--embedder",
                     "minilm", "--no-cache"], capsys)  # fmt: skip
    from scwo_np import mmr_select

    want = mmr_select(sample.embeddings[:120], sample.query_embeddings[0], sample.costs[:120], 500)
    assert [r["id"] for r in out] == want.tolist() and "field 'tokens'" in err


def test_bad_text_input_is_one_line_and_writes_nothing(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "csv.reader reads rows"}\n{"text": null}\n')
    out = tmp_path / "out.jsonl"
    base = ["select", str(bad), "--budget", "100", "--no-cache", "-o", str(out)]
    _fails([*base, "--query", "csv"], r"bad.jsonl:2: text field 'text' is missing")
    bad.write_text('{"text": "csv.reader reads rows"}\n{"text": "  "}\n')
    _fails([*base, "--query", "csv"], r"bad.jsonl:2: text field 'text' is empty")
    bad.write_text('{"text": "csv.reader reads rows"}\n{"text": 7}\n')
    _fails([*base, "--query", "csv"], r"bad.jsonl:2: text field 'text' is an int")
    bad.write_text('{"text": "csv.reader reads rows"}\n{"text": "json.load parses JSON"}\n')
    _fails([*base, "--query", " "], "--query is empty")
    _fails([*base, "--query-index", "0", "--embedder", "lsa"], "--embedder goes with --query")
    assert not out.exists() and list(tmp_path.iterdir()) == [bad]


def test_sentences_from_the_command_line(text_chunks, tmp_path, capsys):
    """--granularity sentence: each record's text holds its kept sentences, _scwo_spans where they are."""
    path, texts, _ = text_chunks
    argv = ["select", str(path), "--query", QUESTION, "--budget", "300", "--granularity", "sentence",
            "--no-cache", "--elision", "…", "--annotate"]  # fmt: skip
    out, err = _run(argv, capsys)
    want = select_texts(texts, QUESTION, 300, granularity="sentence", elision="…")
    assert [r["text"] for r in out] == want.texts
    assert [r["_scwo_spans"] for r in out] == [[list(x) for x in s] for s in want.spans]
    assert sum(r["_scwo"]["tokens"] for r in out) <= 300 and "sentences of them" in err
    _fails(["select", str(path), "--query-index", "0", "--budget", "300", "--granularity", "sentence"],
           "--granularity sentence goes with --query")  # fmt: skip
    _fails(["select", str(path), "--query", QUESTION, "--budget", "300", "--elision", "…"],
           "--elision goes with --granularity sentence")  # fmt: skip
