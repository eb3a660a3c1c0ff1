"""``scwo optimize``: a flag of the other pipeline is an error, and the KB budget step says why."""

import json
import re

import pytest

from scwo_np.cli import main


@pytest.fixture
def chunks(tmp_path):
    """Chunks of real text: paragraphs of the bundled Python-docs sample, one huge chunk third."""
    from scwo_np import load_sample

    s = load_sample()
    texts = s.texts[:30]
    texts[2] = " ".join(s.texts[:200])  # far over any budget below
    path = tmp_path / "c.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": f"c{i}", "text": t, "score": 1 - i / 100}) + "\n" for i, t in enumerate(texts)
        )
    )
    return str(path)


@pytest.mark.parametrize(
    "pipeline, flags, named",
    [
        ("kb", ["--query", "read a file"], "--query is a --pipeline morag option"),
        ("kb", ["--format", "text"], "--format text is a --pipeline morag option"),
        (
            "kb",
            ["--reserve", "10", "--strategy", "relevance"],
            "--reserve, --strategy are --pipeline morag options",
        ),
        ("morag", ["--max-chunks", "3"], "--max-chunks is a --pipeline kb option"),
        ("morag", ["--options", "{}"], "--options is a --pipeline kb option"),
    ],
)
def test_a_flag_of_the_other_pipeline_is_refused(chunks, capsys, pipeline, flags, named):
    """They were ignored: kb with --query wrote the same bytes as without; morag kept 64 with --max-chunks 3."""
    assert main(["optimize", chunks, "--pipeline", pipeline, *flags]) == 2
    err = capsys.readouterr().err
    assert named in err and err.count("\n") == 1 and "Traceback" not in err


def test_kb_says_why_the_budget_step_left_a_chunk_out(chunks, tmp_path, capsys):
    """The ADR's adaptive selection stops at the first chunk that does not fit: every chunk after it
    was reported "over the token budget of 300", a 40-token one too. The one that did not fit says
    so; the others say they came after it; none kept is a warning."""
    report = tmp_path / "r.jsonl"
    assert main(["optimize", chunks, "--pipeline", "kb", "--budget", "300", "--report", str(report)]) == 0
    rows = [
        json.loads(x)
        for x in report.read_text().splitlines()
        if json.loads(x)["step"] == "adaptive_selection"
    ]
    stop = [r for r in rows if "did not fit in the" in r["reason"] and not r["reason"].startswith("after")]
    assert len(stop) == 1 and re.fullmatch(
        r"\d+ tokens did not fit in the \d+ left of the token budget of 300", stop[0]["reason"]
    )
    rest = [r for r in rows if r is not stop[0]]
    assert len(rest) > 20 and all(r["reason"].startswith(f"after {stop[0]['id']} (") for r in rest)
    capsys.readouterr()
    assert main(["optimize", chunks, "--pipeline", "kb", "--budget", "3"]) == 0
    assert (
        "no chunk kept within the token budget of 3: the first chunk by score takes"
        in capsys.readouterr().err
    )


@pytest.mark.parametrize(
    "pipeline, second, flags, message",
    [
        ("kb", {"text": "x", "score": "high"}, [], "c.jsonl:3: the record has score 'high'; a score must be a number."),
        ("kb", {"text": "x", "score": 0.4, "tokens": -4}, ["--budget", "10"],
         "c.jsonl:3: the record's tokens must be a non-negative token count; got -4."),
        ("morag", {"text": "x"}, ["--query", "x"], "c.jsonl:3: the record has no 'relevance_score' or 'score' field."),
        ("morag", {"text": "x", "score": "high"}, ["--query", "x"],
         "c.jsonl:3: the record's score must be a number; got str."),
        ("morag", {"text": "x", "score": 0.5, "entities": "x"}, ["--query", "x"],
         "c.jsonl:3: the record's entities must be a list of strings; got str."),
    ],
)  # fmt: skip
def test_a_bad_record_is_named_by_its_file_and_line(tmp_path, capsys, pipeline, second, flags, message):
    """The library's "matches[1] has score 'high'" (0-based, no file) and "chunk 3 has no ..." read
    as every other input error does: FILE:LINE (1-based, blank lines counted)."""
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"text": "a b c", "score": 0.5}) + "\n\n" + json.dumps(second) + "\n")
    assert main(["optimize", str(path), "--pipeline", pipeline, *flags]) == 2
    err = capsys.readouterr().err
    assert err.strip().endswith(message) and err.count("\n") == 1


@pytest.mark.parametrize("query", [[], ["--query", "  "]])
def test_morag_without_a_query_is_refused(chunks, capsys, query):
    """It ran, ranking without the query's words, and printed "# Context for Query: " (exit 0)."""
    assert main(["optimize", chunks, "--pipeline", "morag", "--format", "text", *query]) == 2
    assert "--pipeline morag needs --query" in capsys.readouterr().err


def test_morag_text_goes_where_o_says(chunks, tmp_path, capsys):
    """--format text wrote to stdout whatever -o said (exit 0, no file)."""
    out = tmp_path / "context.txt"
    assert main(["optimize", chunks, "--pipeline", "morag", "--query", "read a file", "--format", "text",
                 "-o", str(out)]) == 0  # fmt: skip
    assert capsys.readouterr().out == "" and out.read_text().startswith("# Context for Query: read a file")


def test_piped_chunks_quiet_and_one_line_a_failure(chunks):
    """``... | scwo optimize`` and ``... | scwo dedup`` said "the following arguments are required:
    file" (select and crush read a pipe); optimize had no -q; a budget too small printed a warning
    line before its error line (an error is one line on stderr)."""
    import subprocess
    import sys

    base = [sys.executable, "-m", "scwo_np.cli"]
    opt = ["optimize", "--pipeline", "morag", "--query", "read a file"]
    with open(chunks, "rb") as fh:
        piped = subprocess.run(
            [*base, *opt, "--budget", "800", "-q"], stdin=fh, capture_output=True, text=True
        )
    given = subprocess.run([*base, *opt, chunks, "--budget", "800"], capture_output=True, text=True)
    assert piped.returncode == given.returncode == 0, piped.stderr
    assert piped.stdout == given.stdout and piped.stdout
    assert piped.stderr == "" and given.stderr.splitlines()[-1].startswith("scwo optimize: kept ")
    with open(chunks, "rb") as fh:
        dd = subprocess.run([*base, "dedup", "-q"], stdin=fh, capture_output=True, text=True)
    dd_given = subprocess.run([*base, "dedup", chunks, "-q"], capture_output=True, text=True)
    assert dd.returncode == 0 and dd.stderr == "" and dd.stdout == dd_given.stdout and dd.stdout
    small = subprocess.run(
        [*base, *opt, chunks, "--budget", "10", "--format", "text"], capture_output=True, text=True
    )
    assert small.returncode == 2 and len(small.stderr.splitlines()) == 1, small.stderr
    assert "give budget >= " in small.stderr
