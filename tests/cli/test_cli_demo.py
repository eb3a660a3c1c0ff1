"""``scwo demo`` and ``scwo select --lam auto`` show the choice ``mmr_select`` makes (issue 41, item 5).

Their cosines go through ``scwo_np/_dot.py`` (``cli._select._relevance``), so the ``lam`` they
report for ``--lam auto`` is the one the selection used and the picks they print are
``mmr_select``'s, on the bundled sample's real queries.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from scwo_np import mmr_select
from scwo_np.cli import main
from scwo_np.cli._select import _relevance
from scwo_np.datasets import load_sample
from tests import naive


def _demo(capsys, query: int, budget: int, lam: str = "auto"):
    assert main(["demo", "--query", str(query), "--budget", str(budget), "--lam", lam]) == 0
    out = capsys.readouterr().out
    shown = re.search(r"\(lam=auto: ([0-9.]+)\):", out)
    picks = [int(m) for m in re.findall(r"^  \[\s*(\d+)\]", out, flags=re.M)]
    return (float(shown.group(1)) if shown else None), picks


def test_relevance_is_the_canonical_cosine_bit_for_bit():
    s = load_sample()
    E, q = s.embeddings[:40], s.query_embeddings[3]
    got = _relevance(E, q)
    want = naive.relevance(E.tolist(), [q.tolist()], dtype=str(E.dtype))
    assert got.tolist() == want
    E64 = np.random.default_rng(1).standard_normal((25, 19))
    assert _relevance(E64, E64[2] + 0.5).tolist() == naive.relevance(E64.tolist(), [(E64[2] + 0.5).tolist()])


def test_relevance_leaves_unusable_input_to_mmr_select():
    assert _relevance(np.ones((3, 4)), np.ones(5)) is None  # mmr_select names the mismatch
    assert _relevance(np.array([["a", "b"]]), np.ones(2)) is None


@pytest.mark.parametrize("budget", [300, 1000, 4000])
def test_demo_picks_and_lam_are_mmr_selects(capsys, budget, nojit_step):
    s = load_sample()
    for k in range(0, len(s.queries), nojit_step):
        shown, picks = _demo(capsys, k, budget)
        q = s.query_embeddings[k]
        auto = mmr_select(s.embeddings, q, s.costs, budget, lam="auto").tolist()
        assert picks == auto, f"query {k}"
        assert picks == mmr_select(s.embeddings, q, s.costs, budget, lam=shown).tolist(), f"query {k}"
        assert shown == naive.auto_lam(_relevance(s.embeddings, q))


def test_demo_with_a_fixed_lam_prints_mmr_selects_picks(capsys):
    s = load_sample()
    _, picks = _demo(capsys, 5, 800, lam="0.5")
    assert picks == mmr_select(s.embeddings, s.query_embeddings[5], s.costs, 800, lam=0.5).tolist()


def test_select_lam_auto_reports_the_lam_mmr_select_used(tmp_path, capsys):
    s = load_sample()
    path = tmp_path / "chunks.jsonl"
    assert main(["sample", "-n", "300", "-o", str(path)]) == 0
    chunks = [json.loads(x) for x in path.read_text().splitlines()]
    E = np.asarray([c["embedding"] for c in chunks])  # as the CLI reads them
    costs = np.asarray([c["tokens"] for c in chunks])
    for k in (0, 7, 19):
        argv = ["select", str(path), "--query-embedding", json.dumps(s.query_embeddings[k].tolist()),
                "--budget", "900", "--lam", "auto", "--annotate"]  # fmt: skip
        assert main(argv) == 0
        rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
        q = np.asarray(s.query_embeddings[k].tolist())
        lam = rows[0]["_scwo"]["lam"]
        assert lam == naive.auto_lam(naive.relevance(E.tolist(), [q.tolist()]))
        assert [r["id"] for r in rows] == mmr_select(E, q, costs, 900, lam="auto").tolist()
        assert [r["id"] for r in rows] == mmr_select(E, q, costs, 900, lam=lam).tolist()
        assert [r["_scwo"]["relevance"] for r in rows] == [
            round(x, 6) for x in naive.relevance(E[[r["id"] for r in rows]].tolist(), [q.tolist()])
        ]
