"""The peers of quality_at_budget (issue 43): each installed peer on real bundled questions, cut to the
budget with its overrun counted; a peer that is not installed is skipped with one line."""

import json

import numpy as np
import pytest

from scwo_np._registry import Registry
from scwo_np.bench import QUALITY_METHODS, _peers, format_quality, quality_at_budget
from scwo_np.bench._peers import PEERS, Peer, cut_to_budget, installed, run_peer
from scwo_np.cli import main
from scwo_np.datasets import QUESTION_SETS, load_questions
from scwo_np.embed import as_embedder, embed_texts
from scwo_np.tokens import as_token_counter, count_tokens


@pytest.fixture(scope="module")
def faq():
    """The first held-out questions of the Python FAQ, with LSA vectors as the benchmark makes them."""
    qs = load_questions("python-faq")
    held = [i for i, s in enumerate(qs.split) if s == "held_out"][:4]
    emb = as_embedder("lsa", [*qs.paragraphs, *qs.questions])
    counter = as_token_counter("estimate")
    out = []
    for i in held:
        texts = [qs.paragraphs[c] for c in qs.candidates[i]]
        out.append((texts, qs.questions[i], embed_texts(emb, [qs.questions[i]])[0], embed_texts(emb, texts)))
    return out, emb, counter


@pytest.mark.integration
@pytest.mark.parametrize("name", list(PEERS))
def test_each_peer_is_cut_to_the_budget(name, faq):
    pytest.importorskip(PEERS[name].module)
    problems, emb, counter = faq
    for texts, question, q, E in problems:
        costs = count_tokens(texts, counter)
        for budget in (200, 400, 800):
            context, tokens, overran = run_peer(name, texts, question, q, E, costs, budget, counter, emb)
            raw = PEERS[name].fn(
                texts, question, q, E, costs, budget, counter, embedder=emb, **PEERS[name].settings
            )
            # counted as the array strategies' picks are: each text by the counter, separators free
            # (a k peer whose first pick is longer than the budget gives nothing: k = 0)
            assert overran == (sum(map(counter, raw)) > budget) and bool(context.strip()) == bool(raw)
            if not overran:
                assert context == "\n\n".join(raw) and tokens == sum(map(counter, raw)) <= budget
            else:  # a prefix of what the peer gave, ended at a word boundary, within the budget
                assert "\n\n".join(raw).startswith(context) and tokens == counter(context) <= budget


@pytest.mark.integration
def test_the_k_peers_take_the_largest_k_that_fits(faq):
    pytest.importorskip("langchain_core")
    from langchain_core.vectorstores.utils import maximal_marginal_relevance

    problems, emb, counter = faq
    texts, question, q, E = problems[0]
    costs = count_tokens(texts, counter)
    context, tokens, overran = run_peer("langchain mmr", texts, question, q, E, costs, 400, counter, emb)
    picks = maximal_marginal_relevance(q, E, k=len(texts))  # greedy: each k's picks are a prefix
    k = int(np.searchsorted(np.cumsum(costs[picks]), 400, side="right"))
    assert not overran and context == "\n\n".join(texts[j] for j in picks[:k])
    assert costs[picks[: k + 1]].sum() > 400


@pytest.mark.integration
def test_rows_of_every_installed_peer():
    names, _ = installed()
    if not names:
        pytest.skip("no peer installed")
    rows = quality_at_budget(["python-glossary"], methods=["top-k", *names], budgets=[200, 800])
    assert {r["method"] for r in rows} == {"top-k", *names}
    assert all(
        0 <= r["over"] <= 1 and 0 <= r["hit"] <= 1 and 0 < r["fill"] <= 1 and r["n"] == 19 for r in rows
    )
    assert all(r["over"] == 0 for r in rows if r["method"] == "top-k")
    # the k peers never overrun; LlamaIndex's optimizer has no budget and always does
    assert all(r["over"] == 0 for r in rows if r["method"].startswith(("pyversity", "langchain")))
    assert all(r["over"] == 1 for r in rows if r["method"].startswith("llamaindex"))
    if any(r["over"] for r in rows):
        assert "over@200" in format_quality(rows)


def test_our_methods_report_over_zero():
    rows = quality_at_budget(["python-glossary"], methods=["top-k", "sentences", "dpp"], budgets=[200])
    assert [r["over"] for r in rows] == [0.0, 0.0, 0.0]
    assert "over@" not in format_quality(rows)  # nothing overran: no column of zeros


def test_cut_to_budget():
    counter = as_token_counter("estimate")
    text = "The quick brown fox jumps over the lazy dog. " * 20
    for budget in (1, 5, 17, 100):
        cut = cut_to_budget(text, budget, counter)
        assert counter(cut) <= budget and text.startswith(cut)
        assert counter(text[: len(cut) + 10]) > budget or len(cut) + 10 > len(text)
    assert cut_to_budget("short", 100, counter) == "short"


@pytest.fixture
def ghost(monkeypatch):
    """A peer whose package is not installed, beside no other."""
    peer = Peer(PEERS["langchain mmr"].fn, "scwo_np_no_such_peer", "scwo-np-no-such-peer")
    monkeypatch.setattr(_peers, "PEERS", Registry("methods", {"ghost": peer}))
    return "peer 'ghost' skipped: scwo-np-no-such-peer is not installed (pip install scwo-np-no-such-peer)"


def test_a_missing_peer_is_skipped_with_its_message(ghost, capsys):
    with pytest.warns(UserWarning) as record:
        rows = quality_at_budget(["python-glossary"], methods=["top-k"], budgets=[200], peers=True)
    assert [str(w.message) for w in record] == [ghost]
    assert [r["method"] for r in rows] == ["top-k"]
    argv = ["bench", "--quality", "--sets", "python-glossary", "--methods", "top-k", "--budgets", "200",
            "--json", "--peers"]  # fmt: skip
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert err == f"scwo bench: {ghost}\n" and [r["method"] for r in json.loads(out)] == ["top-k"]


def test_a_missing_peer_named_explicitly_is_an_error(ghost, capsys):
    with pytest.raises(ImportError, match="pip install scwo-np-no-such-peer"):
        quality_at_budget(["python-glossary"], methods=["ghost"])
    assert main(["bench", "--quality", "--methods", "ghost"]) == 2
    assert "'ghost' needs scwo-np-no-such-peer: pip install scwo-np-no-such-peer" in capsys.readouterr().err


def test_peer_names_are_not_ours(capsys):
    assert not set(PEERS) & set(QUALITY_METHODS)
    with pytest.raises(ValueError, match="Peers: 'headroom'"):
        quality_at_budget(["python-glossary"], methods=["nope"])
    assert main(["bench", "--quality", "--methods", "nope"]) == 2
    assert "langchain mmr" in capsys.readouterr().err
    assert main(["bench", "--peers"]) == 2
    assert "--peers goes with --quality" in capsys.readouterr().err


def test_the_committed_peers_run_is_whole():
    """docs/data/quality_peers_minilm.json (the quality guide's peers table and figure) holds every
    peer and our methods shown beside them, on the held-out questions of every set."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    rows = json.loads((root / "docs" / "data" / "quality_peers_minilm.json").read_text(encoding="utf-8"))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    assert set(PEERS) <= set(methods) and set(methods) - set(PEERS) <= set(QUALITY_METHODS)
    assert {(r["set"], r["split"]) for r in rows} == {(s, "held_out") for s in QUESTION_SETS}
    assert all(0 <= r["over"] <= 1 and 0 <= r["hit"] <= 1 for r in rows)
    assert all(r["over"] == 0 for r in rows if r["method"] in QUALITY_METHODS)
