"""``scwo bench --hsca``: the table or JSON, and the options that do not go with it."""

import contextlib
import io
import json
import re

import pytest

from scwo_np.cli import main


def _fails(argv, match):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(argv) == 2
    text = err.getvalue()
    assert re.search(match, text) and "Traceback" not in text and text.count("\n") == 1, text


@pytest.mark.volume
def test_bench_hsca_json_has_every_budget_and_no_context_over_it(capsys):
    assert main(["bench", "--hsca", "--budgets", "200,400", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert {row["budget"] for row in r["rows"]} == {200, 400}
    assert all(row["over"] == 0 for row in r["rows"])
    assert r["ingest"]["turns"] == 600 and r["embedder"].startswith("lsa")


@pytest.mark.parametrize(
    "argv, match",
    [
        (["bench", "--hsca", "--budgets", "a,b"], r"--budgets takes positive integers"),
        (["bench", "--hsca", "--budgets", "0"], r"--budgets takes positive integers"),
        (["bench", "--hsca", "--sets", "python-faq"], r"--sets goes with --quality, not --hsca"),
        (["bench", "--hsca", "--no-cache"], r"--no-cache goes with --quality, not --hsca"),
    ],
)
def test_bench_hsca_options_are_checked(argv, match):
    _fails(argv, match)
