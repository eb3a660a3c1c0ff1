"""The headline figures are generated, never retyped (issue 41, item 6).

``docs/_generated/figures.json`` keeps one run of ``scwo bench --write-figures``;
``tools/figures.py`` writes the marked regions of the README, the index and the benchmarks page
from it.  These tests fail when a region says something else than the generator would write.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

from scwo_np.bench import format_table
from scwo_np.bench._figures import HEADLINE, LARGE, figures, headline
from scwo_np.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _tool():
    spec = importlib.util.spec_from_file_location("figures_tool", ROOT / "tools" / "figures.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_region_is_what_the_generator_writes_from_the_committed_run():
    assert _tool().differences() == [], "run python tools/figures.py (never edit a figures region by hand)"


def test_a_retyped_figure_is_caught(tmp_path):
    tool = _tool()
    for name in tool.FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text((ROOT / name).read_text(encoding="utf-8"), encoding="utf-8")
    assert tool.differences(tmp_path) == []
    readme = tmp_path / "README.md"
    h = tool.load()["headline"]
    old = f"{h['lazy_vs_exact']:,.0f}×"
    text = readme.read_text(encoding="utf-8")
    assert old in text
    readme.write_text(text.replace(old, "999×", 1), encoding="utf-8")
    assert tool.differences(tmp_path) == ["README.md"]
    (tmp_path / "docs/index.md").write_text("no markers here\n", encoding="utf-8")
    with pytest.raises(ValueError, match="regions"):
        tool.differences(tmp_path)


def test_the_committed_run_is_complete_and_its_headline_is_its_rows():
    doc = _tool().load()
    for key in ("date", "machine", "notes", "command", "rows", "headline"):
        assert key in doc
    assert {"cpu", "cores", "arch", "python", "numpy", "numba"} <= set(doc["machine"])
    sizes = [(r["n"], r["d"]) for r in doc["rows"]]
    assert HEADLINE in sizes and LARGE in sizes
    assert doc["headline"] == headline(doc["rows"])
    table = format_table([{k: math.nan if v is None else v for k, v in r.items()} for r in doc["rows"]])
    assert table in (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")


@pytest.mark.volume
def test_scwo_bench_write_figures_writes_the_run_it_prints(tmp_path, capsys):
    out = tmp_path / "figures.json"
    assert main(["bench", "--quick", "--write-figures", str(out), "--notes", "a test"]) == 0
    printed = capsys.readouterr().out
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["notes"] == "a test" and doc["headline"] is None  # --quick has no 10,000 row
    assert [r["n"] for r in doc["rows"]] == [50, 100, 300, 500]
    rows = [{k: math.nan if v is None else v for k, v in r.items()} for r in doc["rows"]]
    assert printed.strip() == format_table(rows)
    assert figures(quick=True)["rows"][0].keys() == doc["rows"][0].keys()


def test_write_figures_options_are_checked(tmp_path, capsys):
    assert main(["bench", "--quick", "--notes", "x"]) == 2
    assert "--notes goes with --write-figures" in capsys.readouterr().err
    assert main(["bench", "--quick", "--write-figures", str(tmp_path / "no" / "such" / "dir.json")]) == 2
    assert "cannot write --write-figures" in capsys.readouterr().err


def test_the_quality_figure_is_the_committed_quality_run(tmp_path):
    """The README's quality paragraph follows docs/data/quality_minilm.json: a changed run changes it."""
    tool = _tool()
    rows = json.loads(tool.QUALITY.read_text(encoding="utf-8"))
    assert tool._hit(rows, "python-faq", "top-k") == pytest.approx(0.659, abs=5e-4)
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "0.829 against 0.659" in text  # as the committed run says
    for r in rows:
        if (r["set"], r["method"], r["budget"], r["split"]) == ("python-faq", "top-k", 400, "held_out"):
            r["hit"] = 0.5
    tool.QUALITY = tmp_path / "quality.json"
    tool.QUALITY.write_text(json.dumps(rows), encoding="utf-8")
    assert "0.829 against 0.500" in tool.render("README.md", text, tool.load())
