"""scwo bench --hsca's measures: answer sentences, the baselines' contexts, the budget, the result's shape.

No timing is asserted: the latency and the ingest speed are reported, never checked.
"""

import json

import numpy as np
import pytest

from scwo_np.bench import format_hsca, hsca_bench
from scwo_np.bench._hsca import _evaluate, _fill, _Memo, answer_sentences, split_options
from scwo_np.datasets import load_faq
from scwo_np.embed import as_embedder
from scwo_np.hsca import HSCAEngine
from scwo_np.tokens import as_token_counter

HAS_CONTEXT = hasattr(HSCAEngine, "context")


def test_answer_sentences_keep_prose_and_drop_short_and_code():
    texts = [
        "Use it. Call the open() function with a path and a mode.",
        "x = f(a, b)[1:2] + {k: v for k in y}",
    ]
    assert answer_sentences(texts) == ["Call the open() function with a path and a mode."]
    assert answer_sentences([]) == []


def test_all_but_two_bundled_faq_answers_have_a_sentence_that_counts():
    faq = load_faq()
    empty = [
        q
        for q, g in zip(faq.questions, faq.gold, strict=True)
        if not answer_sentences([faq.texts[i] for i in g])
    ]
    assert len(empty) <= 2, empty  # "No, but it helps. :)" and "You can't. Use PyTuple_Pack instead."


@pytest.mark.parametrize("budget", [1, 7, 30, 64, 200])
@pytest.mark.parametrize("counter", ["estimate", lambda t: len(t.split())])
def test_fill_stays_within_the_budget_counting_the_rendered_text(budget, counter):
    counter = as_token_counter(counter)
    pieces = ["alpha beta gamma delta " * k for k in (1, 3, 2, 5, 1, 4)]
    costs = counter.count(pieces)
    for stop in (True, False):
        text = _fill(np.arange(6)[::-1], pieces, costs, budget, counter, stop=stop)
        assert counter(text) <= budget


def test_recency_is_the_newest_turns_in_order_and_top_k_skips_what_does_not_fit():
    counter = as_token_counter("estimate")
    pieces = ["a" * 40, "b" * 400, "c" * 40, "d" * 40]  # 10, 100, 10, 10 tokens
    costs = counter.count(pieces)
    newest = np.arange(4)[::-1]
    assert _fill(newest, pieces, costs, 40, counter, stop=True) == "c" * 40 + "\n\n" + "d" * 40
    assert _fill(newest, pieces, costs, 40, counter, stop=False) == "\n\n".join(
        ["a" * 40, "c" * 40, "d" * 40]
    )
    assert _fill(newest, pieces, costs, 5, counter, stop=False) == ""


def test_evaluate_counts_a_hit_when_a_whole_answer_sentence_is_in_the_context():
    turns = [
        "The printer on the third floor jams when the paper tray is overfilled by the staff.",
        "Coffee is served in the kitchen every morning from eight until ten o'clock sharp.",
        "Backups of the shared drive run every night and are kept for thirty days in total.",
    ]
    queries = ["Why does the printer jam?", "When are backups made?"]
    emb = _Memo(as_embedder("lsa", [*turns, *queries]))
    rows = _evaluate(turns, queries, [[0], [2]], budgets=[25, 1000], embedder=emb, token_counter="estimate")
    by = {(r["method"], r["budget"]): r for r in rows}
    assert by[("recency", 25)]["hit"] == 0.5  # only the newest turn fits: the backups answer
    assert by[("recency", 1000)]["hit"] == 1.0
    assert by[("top-k turns", 1000)]["hit"] == 1.0
    assert all(r["over"] == 0 and r["n"] == 2 for r in rows)
    assert ("hsca", 25) not in by  # no engine given


@pytest.mark.skipif(not HAS_CONTEXT, reason="HSCAEngine.context is not in this version")
def test_hsca_rows_are_within_the_budget_on_a_real_session():
    faq = load_faq()
    engine = HSCAEngine()
    for t in faq.texts[:120]:
        engine.ingest_turn(t)
    keep = [k for k, g in enumerate(faq.gold) if max(g) < 120][:15]
    rows = _evaluate(
        faq.texts[:120],
        [faq.questions[k] for k in keep],
        [faq.gold[k] for k in keep],
        budgets=[50, 400],
        embedder=None,
        token_counter="estimate",
        engine=engine,
    )
    assert {r["method"] for r in rows} == {"hsca", "recency"}
    assert all(r["over"] == 0 for r in rows)


@pytest.mark.volume
def test_hsca_bench_small_run_is_json_ready_and_within_the_budget():
    r = hsca_bench(budgets=[200, 400], turns=40)
    json.dumps(r)
    assert r["set"] == "python-faq" and r["turns"] == 503 and r["hsca"] == HAS_CONTEXT
    methods = {row["method"] for row in r["rows"]}
    assert {"recency", "top-k turns", "top-k sentences"} <= methods
    assert ("hsca" in methods) == HAS_CONTEXT
    assert all(row["over"] == 0 and 0 <= row["hit"] <= 1 and row["n"] == 173 for row in r["rows"])
    assert r["ingest"]["turns"] == 40 and r["ingest"]["turns_per_second"] > 0
    assert ("latency" in r) == HAS_CONTEXT
    text = format_hsca(r)
    assert "| recency |" in text and "hit@400" in text and "turns/s" in text


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(budgets=[0]), ValueError, "budgets"),
        (dict(budgets=[2.5]), TypeError, "budgets"),
        (dict(turns=0), ValueError, "turns"),
        (dict(turns=10_000), ValueError, "turns"),
        (dict(embedder="bert"), ValueError, "embedder"),
        (dict(engine_options=[("recent", 0.2)]), TypeError, "engine_options"),
    ],
)
def test_hsca_bench_bad_arguments_name_the_argument(kwargs, error, match):
    with pytest.raises(error, match=match):
        hsca_bench(**kwargs)


def test_engine_options_go_to_the_engine_or_to_context():
    assert split_options(None) == ({}, {})
    assert split_options({"max_buffer_chunks": 10}) == ({"max_buffer_chunks": 10}, {})
    if HAS_CONTEXT:
        assert split_options({"recent": 0.1, "embedder": None}) == ({"embedder": None}, {"recent": 0.1})
    with pytest.raises(ValueError, match="engine_options has keys .*'bogus'"):
        split_options({"bogus": 1})
