"""``scwo crush --budget N`` on text that is not JSON: a log, a manual, within the budget by its
shape (as ``scwo mcp proxy`` shrinks a tool's text), on real files of this machine."""

from __future__ import annotations

import contextlib
import io
import json
import os

import pytest

from scwo_np.cli import main
from scwo_np.tokens import count_tokens

DPKG_LOG = "/var/log/dpkg.log"
GPL = "/usr/share/common-licenses/GPL-3"


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


@pytest.mark.skipif(not os.path.exists(DPKG_LOG), reason="no /var/log/dpkg.log on this machine")
@pytest.mark.parametrize("budget", [100, 300, 1000])
def test_a_log_is_crushed_by_time_within_the_budget_and_comes_back(tmp_path, budget):
    lines = open(DPKG_LOG, encoding="utf-8", errors="replace").read().splitlines()
    store = str(tmp_path / "s.sqlite")
    status, out, err = _run(["crush", DPKG_LOG, "--budget", str(budget), "--store", store])
    assert status == 0 and count_tokens([out])[0] <= budget  # stdout, its line break included
    kept = [line for line in out.splitlines() if line in set(lines)]
    assert kept and kept[-1] == lines[-1]  # the newest line, not the first minute
    assert err.startswith("scwo crush: records: kept ") and f"at most {budget} " in err
    key = err.split("under key ")[1].split()[0]
    assert key in out
    n_kept, n = (int(x) for x in err.split("kept ")[1].split(" records")[0].split(" of "))
    status, back, _ = _run(["crush", "--retrieve", key, "--store", store])
    back = json.loads(back)  # the records left out, as they came (lines with their line break)
    assert status == 0 and n_kept == len(kept) and len(back) == n - n_kept and n >= len(lines) // 2
    assert not {r.rstrip("\n") for r in back} & set(kept) and back[-1].rstrip("\n") in lines


@pytest.mark.skipif(not os.path.exists(DPKG_LOG), reason="no /var/log/dpkg.log on this machine")
def test_a_log_that_opens_with_a_bracketed_tag_is_text_and_json_with_a_mistake_is_an_error(tmp_path):
    lines = open(DPKG_LOG, encoding="utf-8", errors="replace").read().splitlines()[-400:]
    tagged = tmp_path / "tagged.log"  # as dmesg, Maven or Apache write them: "[time] message"
    tagged.write_text("".join(f"[{line[:19]}] {line[20:]}\n" for line in lines))
    status, out, err = _run(["crush", str(tagged), "--budget", "200", "--no-store"])
    assert status == 0 and count_tokens([out])[0] <= 200 and "records" in out
    bad = tmp_path / "bad.json"
    bad.write_text('[{"a": 1},\n {"a": "x\ty"}]\n' * 40)
    status, out, err = _run(["crush", str(bad), "--budget", "50"])
    assert status != 0 and out == "" and "bad.json:2: not valid JSON" in err
    status, out, err = _run(["crush", str(tagged), "--budget", "200", "--pattern", "logs"])
    assert status != 0 and "--pattern chooses items of JSON, and this input is text" in err
    status, out, err = _run(["crush", str(tagged), "--max-items", "3"])
    assert status != 0 and "within a token budget with --budget N" in err


@pytest.mark.skipif(not os.path.exists(GPL), reason="no /usr/share/common-licenses/GPL-3 on this machine")
def test_a_manual_gives_the_sentences_the_query_asks_about(tmp_path):
    status, out, err = _run(["crush", GPL, "--budget", "150", "--query", "May I charge a fee for copies?",
                             "--store", str(tmp_path / "s.sqlite")])  # fmt: skip
    assert status == 0 and count_tokens([out])[0] <= 150
    assert "charge any price or no price for each copy" in out and "prose" in err
    small = tmp_path / "small.txt"
    small.write_text("A short note that fits.\n")
    status, out, err = _run(["crush", str(small), "--budget", "150"])
    assert (status, out, err) == (0, "A short note that fits.\n", "")


@pytest.mark.skipif(not os.path.exists(GPL), reason="no /usr/share/common-licenses/GPL-3 on this machine")
def test_retrieving_text_speaks_the_cli_s_options_and_parts_keep_their_words(tmp_path):
    words = open(GPL, encoding="utf-8").read().split()
    lines = [
        f"2026-11-29 03:{i // 60:02d}:{i % 60:02d} INFO " + " ".join(words[i * 7 : i * 7 + 7])
        for i in range(200)
    ]
    lines[150] = "2026-11-29 03:02:30 INFO " + " ".join(words[:2000])  # one record of ~3,000 tokens
    log = tmp_path / "app.log"
    log.write_text("\n".join(lines) + "\n")
    store = str(tmp_path / "s.sqlite")
    status, out, err = _run(["crush", str(log), "--budget", "200", "--store", store])
    key = err.split("under key ")[1].split()[0]
    status, out, err = _run(["crush", "--retrieve", key, "--store", store, "--where", "level=ERROR"])
    assert status != 0 and "--query" in err and "--range" in err and " query," not in err
    status, out, _ = _run(["crush", "--retrieve", key, "--store", store])
    parts = [p for p in json.loads(out) if p.startswith("[scwo: part ") or len(p) > 1000]
    assert len(parts) > 2  # the long record stored in parts, none of them cut inside a word
    assert all(p.endswith((" ", "\n")) or p == parts[-1] for p in parts)
