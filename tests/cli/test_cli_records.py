"""Issue 40, part 7: line numbers, one text field, whole JSON errors, the lambda --lam auto chose,
and ``scwo dedup --embedder`` -- on the bundled Python-docs chunks (real text no one here wrote)."""

import contextlib
import io
import json
import re

import numpy as np
import pytest

from scwo_np.cli import main
from scwo_np.datasets import load_sample
from scwo_np.dedup import deduplicate
from scwo_np.select import auto_lam, select_texts


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


def _one_line(argv, match):
    status, out, err = _run(argv)
    assert status == 2 and err.count("\n") == 1 and re.search(match, err), err
    return err


@pytest.fixture(scope="module")
def docs():
    s = load_sample()
    texts = [t for t in s.texts[:40]]
    return texts + texts[:5]  # five exact duplicates at the end


def _write(path, records, field="text", blank_every=3):
    """JSONL with a blank line after every ``blank_every``-th record; returns each record's line number."""
    lines, n = [], 0
    with path.open("w") as fh:
        for k, r in enumerate(records):
            fh.write(json.dumps(r) + "\n")
            n += 1
            lines.append(n)
            if k % blank_every == blank_every - 1:
                fh.write("\n")
                n += 1
    return lines


def test_dedup_report_names_records_by_their_line(tmp_path, docs):
    path = tmp_path / "d.jsonl"
    lines = _write(path, [{"id": k, "text": t} for k, t in enumerate(docs)])
    report = tmp_path / "r.jsonl"
    status, out, err = _run(["dedup", str(path), "--report", str(report)])
    res = deduplicate(docs)
    assert status == 0 and [json.loads(x)["id"] for x in out.splitlines()] == res.keep.tolist()
    got = [json.loads(x) for x in report.read_text().splitlines()]
    assert [(r["line"], r["duplicate_of_line"]) for r in got] == [
        (lines[d], lines[k]) for d, k in zip(res.dropped.tolist(), res.duplicate_of.tolist(), strict=True)
    ]
    assert len(got) >= 5


def test_select_optimize_and_hsca_name_records_by_their_line(tmp_path, docs):
    path = tmp_path / "d.jsonl"
    lines = _write(path, [{"id": f"c{k}", "text": t, "score": 1 - k / 100} for k, t in enumerate(docs)])
    status, out, _ = _run(
        ["select", str(path), "--query", "json", "--budget", "300", "--annotate", "--no-cache"]
    )
    picks = [json.loads(x) for x in out.splitlines()]
    assert status == 0 and picks
    assert all(r["_scwo"]["line"] == lines[int(r["id"][1:])] for r in picks)

    report = tmp_path / "r.jsonl"
    assert _run(["optimize", str(path), "--pipeline", "kb", "--report", str(report)])[0] == 0
    removed = [json.loads(x) for x in report.read_text().splitlines()]
    assert removed and all(r["line"] == lines[int(r["id"][1:])] for r in removed)

    status, out, _ = _run(["hsca", "score", str(path), "--format", "jsonl"])
    assert status == 0 and [json.loads(x)["line"] for x in out.splitlines()] == lines


@pytest.mark.parametrize(
    "argv",
    [["dedup"], ["select", "--query", "json", "--budget", "200", "--no-cache"], ["optimize", "--pipeline", "kb"],
     ["optimize", "--pipeline", "morag", "--query", "json"], ["hsca", "score", "--format", "jsonl"]],
)  # fmt: skip
def test_one_text_field_rule_in_every_command(tmp_path, docs, argv):
    """``text`` by default; ``--text-field NAME`` everywhere; ``content`` read with a note when no record has ``text``."""
    cmd, rest = (argv[:2], argv[2:]) if argv[0] == "hsca" else (argv[:1], argv[1:])
    body = tmp_path / "body.jsonl"
    _write(body, [{"body": t, "score": 0.5} for t in docs[:12]])
    status, out, err = _run([*cmd, str(body), *rest, "--text-field", "body"])
    assert status == 0 and out and "note" not in err, err
    _one_line(
        [*cmd, str(body), *rest],
        r"body.jsonl:1: text field 'text' is missing \(choose the field with --text-field\)",
    )

    content = tmp_path / "content.jsonl"
    _write(content, [{"content": t, "score": 0.5} for t in docs[:12]])
    status, out2, err = _run([*cmd, str(content), *rest])
    name = " ".join(cmd)
    assert status == 0 and f"scwo {name}: note: the records have no 'text' field; reading 'content'" in err
    assert out2 == out.replace('"body"', '"content"')  # the same result, whatever the field is called
    status, _, err = _run([*cmd, str(content), *rest, "--text-field", "content"])
    assert status == 0 and "note" not in err
    if argv[0] != "hsca":  # --quiet silences the note as it does the summary
        status, out3, err = _run([*cmd, str(content), *rest, "-q"])
        assert status == 0 and err == "" and out3 == out2, err


def test_json_errors_are_whole_and_name_the_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "ok"}\n\n{"text": "a\ttab"}\n')
    for argv in (
        ["dedup"],
        ["select", "--query", "x", "--budget", "9"],
        ["hsca", "score", "--format", "jsonl"],
    ):
        cmd, rest = (argv[:2], argv[2:]) if argv[0] == "hsca" else (argv[:1], argv[1:])
        err = _one_line([*cmd, str(bad), *rest], "bad.jsonl:3: not valid JSON: ")
        assert err.rstrip().endswith("Invalid control character at: line 3 column 12"), err
    doc = tmp_path / "bad.json"
    doc.write_text('[{"a": 1},\n {"a": "x\ty"}]\n')
    for extra in (["--max-items", "1"], ["--budget", "50"], ["--lossless"]):
        err = _one_line(["crush", str(doc), *extra], "bad.json:2: not valid JSON: ")
        assert err.rstrip().endswith("Invalid control character at: line 2 column 10 (char 20)"), err
    good = tmp_path / "good.jsonl"
    good.write_text('{"embedding": [1.0, 0.0], "tokens": 3}\n')
    _one_line(["select", str(good), "--query-embedding", "[1, 2", "--budget", "9"],
              r"--query-embedding is not valid JSON \(Expecting ',' delimiter: line 1 column 6 \(char 5\)\)")  # fmt: skip


def test_lam_auto_says_what_it_chose(tmp_path, docs):
    path = tmp_path / "d.jsonl"
    _write(path, [{"text": t} for t in docs])
    for q in ("Compare lists and tuples.", "How do I open a file?"):
        status, out, err = _run(
            [
                "select",
                str(path),
                "--query",
                q,
                "--budget",
                "300",
                "--lam",
                "auto",
                "--annotate",
                "--no-cache",
            ]
        )
        want = select_texts(docs, q, 300, lam="auto").lam
        assert status == 0 and f"lam auto: {want:g}" in err
        assert {json.loads(x)["_scwo"]["lam"] for x in out.splitlines()} == {want}
    s = load_sample()
    vec = tmp_path / "v.jsonl"
    _write(vec, [{"embedding": s.embeddings[k].tolist(), "tokens": int(s.costs[k])} for k in range(60)])
    status, out, err = _run(
        ["select", str(vec), "--query-index", "3", "--budget", "400", "--lam", "auto", "--annotate"]
    )
    E = s.embeddings[:60].astype(np.float64)
    rel = E @ E[3] / (np.linalg.norm(E, axis=1) * np.linalg.norm(E[3]))
    assert status == 0 and f"lam auto: {auto_lam(rel):g}" in err
    assert {json.loads(x)["_scwo"]["lam"] for x in out.splitlines()} == {auto_lam(rel)}
    status, _, err = _run(["select", str(vec), "--query-index", "3", "--budget", "400", "--lam", "0.5"])
    assert "lam 0.5" in err


def test_dedup_cosine_with_an_embedder(tmp_path, docs):
    path = tmp_path / "d.jsonl"
    _write(path, [{"id": k, "text": t} for k, t in enumerate(docs)])
    status, out, err = _run(["dedup", str(path), "--method", "cosine", "--embedder", "lsa"])
    want = deduplicate(docs, method="cosine", embedder="lsa")
    assert status == 0 and [json.loads(x)["id"] for x in out.splitlines()] == want.keep.tolist()
    assert "(cosine, lsa)" in err and len(want.dropped) >= 5
    assert _run(["dedup", str(path), "--method", "cosine", "--embedder", "lsa", "--no-cache"])[1] == out
    _one_line(["dedup", str(path), "--no-cache"], "--no-cache goes with --embedder")
    _one_line(["dedup", str(path), "--method", "cosine"],
              r"d.jsonl:1: no 'embedding' field for --method cosine; give --embedder \(lsa, minilm\)")  # fmt: skip
    _one_line(["dedup", str(path), "--embedder", "lsa"], "--embedder goes with --method cosine")
    _one_line(["dedup", str(path), "--method", "cosine", "--embedder", "bert"], "invalid choice: 'bert'")


@pytest.mark.parametrize(
    "record, argv, message",
    [('{"embedding": [0, 0], "tokens": 3}', ["select", "--query-index", "0", "--budget", "9"], "'embedding' is all zeros"),
     ('{"embedding": [1, "x"], "tokens": 3}', ["select", "--query-index", "0", "--budget", "9"],
      "'embedding' must be a non-empty list of numbers"),
     ('{"embedding": [1, 0, 0], "tokens": 3}', ["select", "--query-index", "0", "--budget", "9"],
      "'embedding' has 3 numbers where the first record's has 2"),
     ('{"embedding": [1, 0], "tokens": -3}', ["select", "--query-index", "0", "--budget", "9"],
      "'tokens' must be a whole number >= 0; got -3"),
     ('{"embedding": [1, 0], "tokens": 2.5}', ["select", "--query-index", "0", "--budget", "9"],
      "'tokens' must be a whole number >= 0; got 2.5"),
     ('{"embedding": [0, 0], "text": "x"}', ["dedup", "--method", "cosine"], "'embedding' is all zeros"),
     ('{"text": "a b c", "score": "high"}', ["dedup"], "'score' must be a finite number")],
)  # fmt: skip
def test_a_bad_record_is_named_by_its_line(tmp_path, record, argv, message):
    path = tmp_path / "r.jsonl"
    path.write_text('{"embedding": [1, 0], "tokens": 3, "text": "a b c", "score": 1}\n\n' + record + "\n")
    _one_line([argv[0], str(path), *argv[1:]], f"^scwo {argv[0]}: .*r.jsonl:3: {re.escape(message)}")


def test_dedup_grouping_greedy_does_not_chain(tmp_path):
    # a ~ b and b ~ c at Jaccard 4/6, a ~ c at 2/6: greedy keeps a and c, components chain all three
    A, B, C = "alpha beta gamma delta", "alpha beta gamma delta epsilon zeta", "gamma delta epsilon zeta"
    path = tmp_path / "chain.jsonl"
    path.write_text("\n".join(json.dumps({"text": t}) for t in (A, B, C)) + "\n")
    kept = {}
    for grouping in ("greedy", "components"):
        code, out, _ = _run(["dedup", str(path), "--threshold", "0.5", "--grouping", grouping])
        assert code == 0
        kept[grouping] = [json.loads(line)["text"] for line in out.splitlines()]
    assert kept == {"greedy": [A, C], "components": [A]}
