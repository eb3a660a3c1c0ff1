"""quality_at_budget (issue 34): the bundled question sets, the measures by hand, the benchmark's rows."""

import json

import pytest

from scwo_np.bench import QUALITY_METHODS, format_quality, quality_at_budget
from scwo_np.bench._at_budget import _answer, _measure
from scwo_np.cli import main
from scwo_np.datasets import QUESTION_SETS, load_questions
from scwo_np.select import select_texts


@pytest.mark.parametrize("name", QUESTION_SETS)
def test_every_set_is_whole(name):
    qs = load_questions(name)
    n = len(qs.questions)
    assert n >= 30 and len(qs.candidates) == len(qs.gold) == len(qs.split) == n
    assert set(qs.split) == {"tune", "held_out"}
    assert all(len(c) == 50 == len(set(c)) for c in qs.candidates)
    assert all(g and 0 <= min(g) and max(g) < len(qs.paragraphs) for g in qs.gold)
    assert all(0 <= min(c) and max(c) < len(qs.paragraphs) for c in qs.candidates)
    assert all(p.strip() for p in qs.paragraphs) and qs.licence in ("PSF-2.0", "BSD-3-Clause")
    # most questions' answers were retrieved: the set measures selection, not retrieval
    found = sum(bool(set(g) & set(c)) for g, c in zip(qs.gold, qs.candidates, strict=True))
    assert found / n > 0.5
    # fresh lists: changing one does not change the next load
    qs.questions.clear()
    assert load_questions(name).questions


def test_kinds_and_parts():
    kinds = {name: load_questions(name).kind for name in QUESTION_SETS}
    assert kinds == {"python-faq": "faq", "django-faq": "faq", "python-glossary": "comparison",
                     "python-overview": "overview"}  # fmt: skip
    assert all(len(g) == 2 for g in load_questions("python-glossary").gold)
    assert all(4 <= len(g) <= 12 for g in load_questions("python-overview").gold)
    with pytest.raises(ValueError, match="name must be one of"):
        load_questions("python")


def test_the_measures_by_hand():
    answer = _answer(
        [
            "The cat sat on the mat all day. Then it slept under the old oak tree.",
            "Dogs bark at the moon when it is full.",
        ]
    )
    assert [len(part) for part in answer] == [2, 1]
    # one sentence of the first part, cut out of its paragraph, with other text around it
    hit, share, parts = _measure("Something else here. Then it slept under the old oak tree! More.", answer)
    assert (hit, share, parts) == (1.0, 1 / 3, 1 / 2)
    assert _measure("Dogs bark at the moon when it is full. The cat sat on the mat all day.", answer) == (
        1.0,
        2 / 3,
        1.0,
    )
    # 90% of a sentence's 3-grams: one changed word in a long sentence still counts, two do not
    long = ["one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
            "seventeen eighteen nineteen twenty twentyone twentytwo twentythree twentyfour"]  # fmt: skip
    ans = _answer(long)
    assert _measure(long[0].replace("twentyfour", "x"), ans)[0] == 1.0
    assert _measure(long[0].replace("ten", "x").replace("twenty ", "y "), ans)[0] == 0.0
    assert _measure("", ans) == (0.0, 0.0, 0.0)


def test_rows_agree_with_a_selection_made_by_hand():
    rows = quality_at_budget(["python-glossary"], methods=["top-k"], budgets=[400])
    (row,) = rows
    qs = load_questions("python-glossary")
    held = [i for i, s in enumerate(qs.split) if s == "held_out"]
    assert row["n"] == len(held) and row["split"] == "held_out" and row["kind"] == "comparison"
    # top-k by hand: the same LSA space, whole paragraphs; a gold paragraph kept whole is a hit
    from scwo_np.embed import as_embedder

    emb = as_embedder("lsa", [*qs.paragraphs, *qs.questions])
    hits = parts = 0.0
    for i in held:
        texts = [qs.paragraphs[c] for c in qs.candidates[i]]
        sel = select_texts(texts, emb([qs.questions[i]])[0], 400, embeddings=emb(texts), lam=1.0)
        kept = {qs.candidates[i][j] for j in sel.indices}
        hits += bool(kept & set(qs.gold[i]))
        parts += len(kept & set(qs.gold[i])) / len(qs.gold[i])
    # whole gold paragraphs are a lower bound (a gold sentence can also be quoted elsewhere)
    assert row["hit"] >= hits / len(held) > 0.5
    assert row["parts"] >= parts / len(held)
    assert 0.9 < row["fill"] <= 1.0


@pytest.mark.volume
def test_every_method_stays_within_the_budget():
    rows = quality_at_budget(["django-faq"], budgets=[200, 400], split="tune")
    assert {r["method"] for r in rows} == set(QUALITY_METHODS)
    assert all(0.5 < r["fill"] <= 1.0 and r["split"] == "tune" and r["n"] == 20 for r in rows)
    table = format_quality(rows)
    assert (
        table.startswith("django-faq (faq, tune, 20 questions, retrieval ceiling ")
        and "| knapsack |" in table
    )


def test_sentences_hold_answers_that_top_k_leaves_out():
    # two-part answers at 200 tokens: whole paragraphs leave one part out; the margin is wide
    # (held out, LSA: 1.00 against 0.79), so this does not hang on the last digit of an SVD
    rows = quality_at_budget(["python-glossary"], methods=["top-k", "sentences"], budgets=[200])
    by = {r["method"]: r for r in rows}
    assert by["sentences"]["hit"] >= by["top-k"]["hit"] + 0.1
    assert by["sentences"]["parts"] > by["top-k"]["parts"]


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="sets must be one of"):
        quality_at_budget(["nope"])
    with pytest.raises(ValueError, match="split must be one of"):
        quality_at_budget(split="all")
    with pytest.raises(ValueError, match="methods must be one of"):
        quality_at_budget(methods=["best"])
    with pytest.raises(ValueError, match="budgets must be"):
        quality_at_budget(budgets=[0])


def test_scwo_bench_quality(capsys, tmp_path):
    argv = ["bench", "--quality", "--sets", "python-glossary", "--methods", "top-k,sentences",
            "--budgets", "200", "--split", "both", "--json", "--cache", str(tmp_path / "e.sqlite")]  # fmt: skip
    assert main(argv) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {(r["method"], r["split"]) for r in rows} == {
        (m, s) for m in ("top-k", "sentences") for s in ("tune", "held_out")
    }
    assert (tmp_path / "e.sqlite").is_file()
    assert main(argv[:-2] + ["--no-cache"]) == 0
    assert json.loads(capsys.readouterr().out) == rows  # the cache changes nothing
