"""``scwo dedup``: scores and entity flags that were taken silently are named errors."""

import json

import pytest

from scwo_np.cli import main

A = "The cache keeps the newest entries in memory."


@pytest.mark.parametrize(
    "records, flags, message",
    [
        ([{"text": A, "score": float("nan")}, {"text": A, "score": 1}], [],
         "in.jsonl:1: 'score' must be a finite number"),
        ([{"text": A, "score": 0.3}, {"text": A}], [],
         "in.jsonl:2: no 'score' field, where other records have one; score every record, or none"),
        ([{"text": A, "s": 0.1}, {"text": A + "!", "s": 0.9}], ["--method", "sequence", "--score-field", "score"],
         "in.jsonl: no record has a 'score' field; name the field that holds the scores, or leave --score-field out"),
        ([{"text": A}], ["--entities-field", "tags"],
         "--entities-field goes with --method sequence (the jaccard method does not weigh entities)"),
    ],
)  # fmt: skip
def test_a_score_or_flag_taken_silently_is_an_error(tmp_path, capsys, records, flags, message):
    """A NaN score was "scores[0] is NaN or inf" (0-based, no file); a record without a score was
    scored 0 beside scored ones; --entities-field with jaccard was ignored; a --score-field no
    record has (misspelt) kept the first of each group, not the best."""
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main(["dedup", str(path), *flags]) == 2
    err = capsys.readouterr().err
    assert err.strip().endswith(message) and err.count("\n") == 1
