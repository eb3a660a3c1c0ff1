"""Researchers' own question sets (issue 43): read_questions, quality_at_budget(sets=[FILE]), --set, --plot."""

import dataclasses
import importlib.util
import io
import json
import re
import sys
import warnings
from contextlib import redirect_stderr

import pytest

from scwo_np.bench import _at_budget, format_quality, plot_quality, quality_at_budget, read_questions
from scwo_np.cli import main
from scwo_np.datasets import QuestionSet, load_questions
from scwo_np.embed import as_embedder

N = 10  # questions of the bundled Python FAQ written as a user's file
METHODS = ["top-k", "mmr (auto)", "sentences", "knapsack"]  # chunks, lam="auto", sentences, a strategy


def _as_lines(qs: QuestionSet, n: int) -> list[dict]:
    """The first ``n`` questions of a bundled set as a user writes them: candidate texts, gold indices
    into them, and the answer paragraphs the retriever missed."""
    out = []
    for i in range(n):
        cand = qs.candidates[i]
        rec = {
            "id": f"faq-{i}",
            "question": qs.questions[i],
            "texts": [qs.paragraphs[c] for c in cand],
            "gold": [k for k, c in enumerate(cand) if c in qs.gold[i]],
            "split": qs.split[i],
        }
        missed = [qs.paragraphs[g] for g in qs.gold[i] if g not in cand]
        if missed:
            rec["answers"] = missed
        out.append(rec)
    return out


def _write(path, lines) -> str:
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), encoding="utf-8"
    )
    return str(path)


@pytest.fixture(scope="module")
def faq():
    return load_questions("python-faq")


@pytest.fixture(scope="module")
def faq_file(tmp_path_factory, faq):
    return _write(tmp_path_factory.mktemp("sets") / "faq10.jsonl", _as_lines(faq, N))


def test_the_file_holds_the_bundled_questions(faq, faq_file):
    mine = read_questions(faq_file)
    assert (mine.name, mine.kind, mine.source) == ("faq10", "user", faq_file)
    assert mine.questions == faq.questions[:N] and mine.split == faq.split[:N]
    assert len(set(mine.paragraphs)) == len(mine.paragraphs)  # identical texts are one paragraph
    for i in range(N):
        assert [mine.paragraphs[c] for c in mine.candidates[i]] == [
            faq.paragraphs[c] for c in faq.candidates[i]
        ]
        assert {mine.paragraphs[g] for g in mine.gold[i]} == {faq.paragraphs[g] for g in faq.gold[i]}
    # the answers the retriever missed count as parts, not as candidates: the ceiling stays honest
    missed = [i for i in range(N) if not set(faq.gold[i]) & set(faq.candidates[i])]
    assert missed, "the first questions should include one whose answer was not retrieved"
    assert all(not set(mine.gold[i]) & set(mine.candidates[i]) for i in missed)


def test_a_users_set_gives_the_rows_of_the_bundled_set(faq, faq_file):
    """The same questions, candidates and answers, bundled or from a file: the same measures."""
    bundled = dataclasses.replace(
        faq, name="faq10", questions=faq.questions[:N], candidates=faq.candidates[:N], gold=faq.gold[:N],
        split=faq.split[:N],
    )  # fmt: skip
    texts = {faq.paragraphs[c] for i in range(N) for c in (*faq.candidates[i], *faq.gold[i])}
    emb = as_embedder("lsa", [*sorted(texts), *faq.questions[:N]])  # one vector space for both runs
    kw = dict(embedder=emb, methods=METHODS, budgets=[200, 400], split=None)
    want = quality_at_budget([bundled], **kw)
    got = quality_at_budget([faq_file], **kw)
    assert len(got) == len(METHODS) * 2 * len(set(faq.split[:N]))
    assert [{**r, "kind": "user"} for r in want] == got  # every measure, and the ceiling, equal
    found = [bool(set(faq.gold[i]) & set(faq.candidates[i])) for i in range(N)]
    for r in got:
        mine = [f for f, s in zip(found, faq.split[:N], strict=True) if s == r["split"]]
        assert r["ceiling"] == sum(mine) / len(mine) and r["n"] == len(mine)
    assert "retrieval ceiling" in format_quality(got)


def test_sets_mix_names_files_and_objects(tmp_path, faq_file):
    small = [{"question": "Why is the sky blue?", "texts": ["Air scatters blue light most.", "The sea is wide."],
              "gold": [0]}, {"question": "Why is the sea salty?", "texts": ["The sea is wide."], "gold": [],
              "answers": ["Rivers carry salts into the sea."], "split": "tune"}]  # fmt: skip
    path = _write(tmp_path / "faq10.jsonl", small)  # the same name as faq_file: named by its path
    rows = quality_at_budget([faq_file, read_questions(path)], methods=["top-k"], budgets=[100], split="tune")
    assert [r["set"] for r in rows] == ["faq10", path]
    assert rows[1]["ceiling"] == 0.0 and rows[1]["n"] == 1  # its one tune question's answer was missed
    with pytest.raises(ValueError, match="'faq10' is given twice"):
        quality_at_budget([faq_file, faq_file], methods=["top-k"])
    with pytest.raises(
        ValueError, match=r"sets must be one of .* or the path of a JSONL file; got 'nope.jsonl'"
    ):
        quality_at_budget(["nope.jsonl"])
    with pytest.raises(ValueError, match="sets is empty"):
        quality_at_budget([])
    with pytest.raises(TypeError, match=r"sets\[0\] must be"):
        quality_at_budget([3])
    with pytest.raises(FileNotFoundError):
        read_questions(tmp_path / "missing.jsonl")


def test_a_question_set_made_by_hand_is_checked():
    qs = QuestionSet(name="hand", kind="faq", source="", licence="", retriever="", paragraphs=["a b c", "d e f"],
                     questions=["q?"], candidates=[[0, 1]], gold=[[2]], split=["held_out"])  # fmt: skip
    with pytest.raises(
        ValueError, match=r"QuestionSet 'hand'\): gold\[0\]\[0\] must be an integer in \[0, 1\]"
    ):
        quality_at_budget([qs])
    with pytest.raises(ValueError, match="split has 0 entries for 1 questions"):
        quality_at_budget([dataclasses.replace(qs, gold=[[1]], split=[])])
    # printed, a summary (it was every paragraph: 211,065 characters for a user's 39 questions)
    assert repr(qs) == (
        "QuestionSet(name='hand', kind='faq', 1 questions (1 held_out), 2 paragraphs, source='')"
    )


OK = {"question": "Why?", "texts": ["Because it is so.", "Another text."], "gold": [0]}

#: label -> (the second line of the file, what the error must say after "FILE:2: ")
BAD = {
    "not JSON": (
        '{"question": "Why?", "texts": [',
        r"not valid JSON \(.*column \d+\); write one JSON object per line",
    ),
    "not an object": ("[1, 2]", r"expected a JSON object like .*, got list"),
    "no question": ({"texts": ["a"], "gold": [0]}, r"missing field 'question'; give the question as text"),
    "no texts": (
        {"question": "Why?", "gold": [0]},
        r"missing field 'texts'; give the question's candidate texts",
    ),
    "no gold": ({"question": "Why?", "texts": ["a"]}, r"missing field 'gold'; give the indices into texts"),
    "question int": ({**OK, "question": 3}, r"field 'question': question must be a str; got int"),
    "question empty": ({**OK, "question": "  "}, r"field 'question' is empty; give the question as text"),
    "texts str": (
        {**OK, "texts": "one text"},
        r"field 'texts': texts must be a sequence of strings.*wrap it",
    ),
    "texts empty": ({**OK, "texts": []}, r"field 'texts' is empty; give at least one candidate text"),
    "text int": ({**OK, "texts": ["a", 3]}, r"field 'texts': texts\[1\] is int, not str"),
    "text empty": (
        {**OK, "texts": ["a", " "]},
        r"field 'texts': texts\[1\] is empty or only whitespace; drop it",
    ),
    "gold int": (
        {**OK, "gold": 0},
        r"field 'gold' must be a list of indices into texts, e.g. \[0\]; got int",
    ),
    "gold float": (
        {**OK, "gold": [0.0]},
        r"field 'gold': gold\[0\] must be an integer; got float 0.0 \(an index into texts\)",
    ),
    "gold past the end": (
        {**OK, "gold": [0, 2]},
        r"field 'gold': gold\[1\] is 2, out of range: gold holds indices into texts, which has 2 entries, "
        r"so 0 to 1",
    ),
    "gold negative": (
        {**OK, "gold": [-1]},
        r"field 'gold': gold\[0\] is -1, out of range",
    ),
    "gold twice": ({**OK, "gold": [1, 1]}, r"field 'gold' lists 1 twice; list each answer text once"),
    "no answer": ({**OK, "gold": []}, r"field 'gold' is empty and there are no 'answers'.*give the answer"),
    "answers str": ({**OK, "answers": "a"}, r"field 'answers': answers must be a sequence of strings"),
    "answer empty": ({**OK, "answers": [""]}, r"field 'answers': answers\[0\] is empty"),
    "split": (
        {**OK, "split": "test"},
        r"field 'split' must be 'tune' or 'held_out'; got 'test' \(leave it out",
    ),
    "id list": ({**OK, "id": [1]}, r"field 'id' must be a str or an int; got list"),
    "id again": ({**OK, "id": 7}, r"field 'id': 7 is also the id on line 1; give each question its own id"),
    "an answer among the texts": (
        {**OK, "answers": ["Another text."]},
        r"field 'answers': answers\[0\] is also texts\[1\]; answers are the answer paragraphs the "
        r"retriever missed: list an answer among the texts in 'gold' by its index",
    ),
    "a field given twice": (  # json keeps the last one silently
        '{"question": "Q", "texts": ["a"], "gold": [0], "question": "Q2"}',
        r"field 'question' is given twice on the line; keep the one you mean",
    ),
    "a raw tab in a string": (
        '{"question": "Why\tnot?", "texts": ["a"], "gold": [0]}',
        r"not valid JSON \(invalid control character at column 18\): a string holds a raw tab or line break; "
        r"write it escaped, as \\t or \\n",
    ),
}


@pytest.mark.parametrize("label", BAD)
def test_a_bad_line_names_the_file_the_line_and_the_field(tmp_path, label):
    line, says = BAD[label]
    path = _write(tmp_path / "mine.jsonl", [{**OK, "id": 7}, line, OK])
    with pytest.raises(ValueError) as info:
        read_questions(path)
    assert re.fullmatch(re.escape(f"{path}:2: ") + says + ".*", str(info.value)), str(info.value)
    assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match=re.escape(f"{path}:2: ")):  # the same through the benchmark
        quality_at_budget([path], methods=["top-k"], budgets=[50])


def test_a_bad_file_as_a_whole(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(
        ValueError, match=re.escape(f"{empty}: no questions (the file is empty); write one JSON")
    ):
        read_questions(empty)
    empty.write_text("\n  \r\n")  # it said "the file is empty" of this too
    with pytest.raises(
        ValueError, match=re.escape(f"{empty}: no questions (the file holds only blank lines)")
    ):
        read_questions(empty)
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"question": "Why?", "texts": ["caf\xe9"], "gold": [0]}\n')
    with pytest.raises(
        ValueError, match=re.escape(f"{latin}:1: not valid UTF-8 (byte ") + ".*save the file as UTF-8"
    ):
        read_questions(latin)
    # blank lines are skipped and still counted; other fields are the user's own
    ok = _write(tmp_path / "ok.jsonl", ["", {**OK, "score": [0.9, 0.1]}, "", {**OK, "split": 3}])
    with pytest.raises(ValueError, match=re.escape(f"{ok}:4: field 'split'")):
        read_questions(ok)
    with pytest.raises(TypeError, match="path must be the path of a JSONL file"):
        read_questions(3)


def test_a_field_spelled_like_one_that_is_read_is_a_warning_and_a_byte_order_mark_is_read(tmp_path):
    """ "answer" beside the fields stopped the run ("did you mean 'answers'?"), though other fields are
    the user's; a file an editor began with a byte-order mark was "not valid JSON"."""
    path = _write(tmp_path / "mine.jsonl", [{**OK, "answer": "x"}, {**OK, "answer": "y", "splits": "tune"}])
    with pytest.warns(UserWarning) as got:
        qs = read_questions(path)
    said = [str(w.message) for w in got]
    assert len(said) == 2 and said[0].startswith(f"{path}:1: field 'answer' is not read")
    assert "if you meant 'answers', rename it" in said[0] and said[1].startswith(f"{path}:2: field 'splits'")
    assert qs.split == ["held_out", "held_out"]
    # beside the field it looks like, it is the user's own: no warning
    both = _write(tmp_path / "both.jsonl", [{**OK, "answers": ["z"], "answer": "z"}])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_questions(both)
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes("\ufeff".encode() + json.dumps(OK).encode() + b"\n")
    assert read_questions(bom).questions == ["Why?"]
    # one on a later line (two files joined) is an error that says to delete it, not json's advice
    # to decode with utf-8-sig, which reads the first line's only
    bom.write_bytes(json.dumps(OK).encode() + b"\n" + "\ufeff".encode() + json.dumps(OK).encode() + b"\n")
    with pytest.raises(
        ValueError, match=r"bom.jsonl:2: not valid JSON \(a byte-order mark, U\+FEFF, opens the line\)"
    ):
        read_questions(bom)


def _cli(argv):
    err = io.StringIO()
    with redirect_stderr(err):
        status = main(argv)
    return status, err.getvalue()


def test_scwo_bench_quality_set(capsys, tmp_path, faq_file):
    argv = ["bench", "--quality", "--set", faq_file, "--methods", "top-k,sentences", "--budgets", "200,400"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    held = sum(s == "held_out" for s in load_questions("python-faq").split[:N])
    assert out.startswith(f"faq10 (user, held_out, {held} questions, retrieval ceiling ")
    assert "| top-k |" in out and "| sentences |" in out and "python-faq" not in out
    # with --sets and a second --set: every set, in the order given (the bundled ones came first)
    other = _write(tmp_path / "other.jsonl", [OK])
    argv = ["bench", "--quality", "--set", faq_file, "--methods", "top-k", "--budgets", "200"]
    assert main([*argv, "--sets", "python-faq", "--set", other, "--sets", "python-glossary", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert list(dict.fromkeys(r["set"] for r in rows)) == [
        "faq10",
        "other",
        "python-glossary",
    ]  # the last --sets
    assert all(0 <= r["ceiling"] <= 1 for r in rows)


@pytest.mark.parametrize(
    "extra, says",
    [
        (
            ["--set", "{bad}"],
            r"^scwo bench: {bad}:2: field 'gold': gold\[0\] is 5, out of range",
        ),
        (["--set", "{missing}"], r"^scwo bench: cannot read --set {missing}: No such file or directory$"),
        (["--set", "{ok}", "--plot", "{tmp}/fig.pdf"], r"--plot writes a .png or .svg file"),
        (["--set", "{ok}", "--plot", "{tmp}/no/fig.png"], r"cannot write --plot .*: no such folder"),
        (["--set", "{ok}", "--sets", "nope"], r"--sets takes a comma-separated list of python-faq"),
        (["--set", "{ok}", "--sets", ""], r"--sets takes a comma-separated list of python-faq.*got ''$"),
        (["--set", "{ok}", "--methods", ""], r"--methods takes a comma-separated list of top-k"),
        (["--set", "{ok}", "--methods", "top-k,"], r"--methods takes a comma-separated list .*got 'top-k,'$"),
        (  # it printed the 29 names and the whole value, not which one or what was meant
            ["--set", "{ok}", "--methods", "top-k,sentence"],
            r"--methods takes .*; 'sentence' is not one of them \(did you mean sentences\?\); got 'top-k,sentence'$",
        ),
        (["--set", "{ok}", "--budgets", ""], r"--budgets takes positive integers like 200,400,800; got ''$"),
        (["--set", "{ok}", "--budgets", "400,"], r"--budgets takes positive integers .*; got '400,'$"),
        (
            ["--set", "{ok}", "--split", "tune"],
            r"--split tune: no question has split 'tune': the questions of 'ok' are 'held_out' .*"
            r"use another --split, or --split both\.$",
        ),
        (  # it said "--split None" where the user gave no --split
            ["--set", "{tuned}"],
            r"--split held_out \(the default\): no question has split 'held_out'.* or --split both\.$",
        ),
    ],
)
def test_scwo_bench_quality_bad_input_is_one_line_and_status_2(tmp_path, extra, says):
    names = dict(tmp=tmp_path, bad=_write(tmp_path / "bad.jsonl", [OK, {**OK, "gold": [5]}]),
                 missing=tmp_path / "missing.jsonl", ok=_write(tmp_path / "ok.jsonl", [OK]),
                 tuned=_write(tmp_path / "tuned.jsonl", [{**OK, "split": "tune"}]))  # fmt: skip
    argv = ["bench", "--quality", *(a.format(**names) for a in extra)]
    status, err = _cli(argv)
    assert status == 2 and "Traceback" not in err and err.count("\n") == 1, err
    assert re.search(says.format(**{k: re.escape(str(v)) for k, v in names.items()}), err.strip()), err


def test_set_and_plot_go_with_quality(tmp_path):
    for argv, says in (
        (["--set", "x.jsonl"], "--set goes with --quality"),
        (["--plot", "x.png"], "--plot goes"),
    ):
        status, err = _cli(["bench", *argv])
        assert status == 2 and says in err and err.count("\n") == 1
        status, err = _cli(["bench", "--hsca", *argv])
        assert status == 2 and "goes with --quality, not --hsca" in err


def test_plot_without_matplotlib_names_the_extra(tmp_path, monkeypatch):
    for mod in ("matplotlib", "matplotlib.figure"):
        monkeypatch.setitem(sys.modules, mod, None)  # import fails as when it is not installed
    with pytest.raises(ImportError, match=r"pip install 'scwo_np\[notebooks\]'"):
        plot_quality([{"set": "s", "split": "held_out", "method": "top-k", "budget": 1, "hit": 0.5}])
    ok = _write(tmp_path / "ok.jsonl", [OK])
    status, err = _cli(["bench", "--quality", "--set", ok, "--plot", str(tmp_path / "f.png")])
    assert status == 2 and "scwo bench: --plot: plot_quality draws with matplotlib" in err
    assert "notebooks" in err and not (tmp_path / "f.png").exists()


def _rows(sets=("a", "b"), splits=("held_out",)):
    return [{"set": s, "split": sp, "method": m, "budget": b, "n": 5, "hit": h, "parts": h / 2, "ceiling": 0.8}
            for s in sets for sp in splits for m, h0 in (("top-k", 0.3), ("sentences", 0.4))
            for b, h in ((200, h0), (400, h0 + 0.2))]  # fmt: skip


@pytest.mark.integration
def test_plot_quality_draws_a_panel_per_set(tmp_path):
    pytest.importorskip("matplotlib")
    fig = plot_quality(_rows(("a", "b"), ("tune", "held_out")), tmp_path / "q.svg")
    assert [ax.get_title() for ax in fig.axes] == [
        "a (tune, 5 questions)", "a (held_out, 5 questions)", "b (tune, 5 questions)", "b (held_out, 5 questions)"
    ]  # fmt: skip
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.get_lines()] == ["top-k", "sentences", "retrieval ceiling"]
    assert list(ax.get_lines()[1].get_ydata()) == [0.4, pytest.approx(0.6)]
    assert (tmp_path / "q.svg").read_text().lstrip().startswith("<?xml")
    assert fig._repr_png_()[:8] == b"\x89PNG\r\n\x1a\n"  # a notebook shows it, with or without pyplot
    parts = plot_quality(_rows(("a",)), measure="parts")  # the ceiling is drawn with hit only
    assert [line.get_label() for line in parts.axes[0].get_lines()] == ["top-k", "sentences"]
    for kw, says in (
        (dict(measure="best"), "measure must be one of"),
        (dict(path=tmp_path / "q.jpg"), r"path must end in .png or .svg"),
        (dict(rows=[]), "rows must be the non-empty list"),
        (dict(rows=[{"set": "a"}]), r"rows\[0\] has no 'split'"),
    ):
        with pytest.raises(ValueError, match=says):
            plot_quality(**{"rows": _rows(), **kw})


@pytest.mark.integration
def test_plot_quality_with_many_methods_keeps_them_apart(tmp_path):
    """29 methods (ours and the peers): the legend ran off the top of the panel and covered the lines,
    and colours repeated after ten (mmr and cover both red); a new user's trial."""
    pytest.importorskip("matplotlib")
    methods = [f"method {k}" for k in range(29)]
    rows = [{"set": s, "split": "held_out", "method": m, "budget": b, "n": 5, "hit": 0.5, "ceiling": 0.8}
            for s in ("a", "b") for m in methods for b in (100, 800)]  # fmt: skip
    fig = plot_quality(rows, tmp_path / "many.png")
    looks = {(ln.get_color(), ln.get_linestyle(), ln.get_marker()) for ln in fig.axes[0].get_lines()[:29]}
    assert len(looks) == 29  # no two alike
    assert [ax.get_legend() for ax in fig.axes] == [None, None]  # beside the panels, not on them
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == [*methods, "retrieval ceiling"]
    fig.canvas.draw()
    for ax in fig.axes:  # the panels keep their size (they collapsed to 20 px with the legend inside)
        assert ax.get_window_extent().height > 200
    assert (tmp_path / "many.png").stat().st_size > 0


@pytest.mark.integration
def test_scwo_bench_quality_plot_writes_a_png(tmp_path, capsys, faq_file):
    pytest.importorskip("matplotlib")
    png = tmp_path / "quality.png"
    argv = ["bench", "--quality", "--set", faq_file, "--sets", "python-glossary", "--methods", "top-k",
            "--budgets", "200,400", "--plot", str(png)]  # fmt: skip
    assert main(argv) == 0
    assert capsys.readouterr().out.startswith("faq10 (user, held_out")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".scwo-")]  # no temporary file left


def test_a_split_with_no_question_is_an_error_or_left_out_with_a_warning(tmp_path):
    mine = _write(tmp_path / "mine.jsonl", [OK])  # no split: held out
    with pytest.raises(
        ValueError, match=r"no question has split 'tune': the questions of 'mine' are 'held_out'"
    ):
        quality_at_budget([mine], methods=["top-k"], budgets=[50], split="tune")
    with pytest.warns(UserWarning, match=r"the questions of 'mine' are 'held_out'; they are left out"):
        rows = quality_at_budget([mine, "python-glossary"], methods=["top-k"], budgets=[50], split="tune")
    assert {r["set"] for r in rows} == {"python-glossary"}


def test_budgets_are_counted_once_and_checked(tmp_path):
    mine = _write(tmp_path / "mine.jsonl", [OK, {**OK, "question": "How?"}])
    rows = quality_at_budget([mine], methods=["top-k"], budgets=[50, 50, 20])
    assert [(r["budget"], r["n"]) for r in rows] == [(50, 2), (20, 2)]
    with pytest.raises(
        TypeError, match=r"budgets must be a sequence of token budgets like \[200, 400, 800\]; got str"
    ):
        quality_at_budget([mine], methods=["top-k"], budgets="200")
    with pytest.raises(ValueError, match="budgets is empty"):
        quality_at_budget([mine], methods=["top-k"], budgets=[])
    with pytest.raises(ValueError, match=r"split must be one of 'held_out', 'tune'; got 'test'\. Or None"):
        quality_at_budget([mine], methods=["top-k"], split="test")


def test_format_quality_names_what_it_cannot_show():
    rows = _rows()
    with pytest.raises(ValueError, match=r"budget 123 is not one of the rows' budgets: 200, 400"):
        format_quality(rows, budget=123)
    with pytest.raises(ValueError, match="rows is empty"):
        format_quality([])
    one = [{**r, "n": 1, "kind": "faq", "share": 0.5, "fill": 0.9} for r in rows if r["set"] == "a"]
    assert format_quality(one).startswith("a (faq, held_out, 1 question, ")


@pytest.mark.parametrize("answer", ["Yes.", "Use -S"])
def test_a_short_answer_is_held_by_its_words(tmp_path, answer):
    line = {"question": "Is it allowed?", "texts": [answer, "The sky is blue today and always."], "gold": [0]}
    rows = quality_at_budget(
        [_write(tmp_path / "s.jsonl", [line])], methods=["top-k", "sentences"], budgets=[100]
    )
    assert [r["hit"] for r in rows] == [1.0, 1.0]
    far = {**line, "texts": ["The sky is blue today and always.", answer], "gold": [1]}
    rows = quality_at_budget([_write(tmp_path / "f.jsonl", [far])], methods=["top-k"], budgets=[9])
    assert rows[0]["hit"] == 0.0  # the answer did not fit: a miss, not a hit by a word of the other text


def test_retrieved_order_is_the_files_order_and_top_k_the_embedders(tmp_path, faq):
    """``top-k`` ranks a set's texts by the embedder's cosine to the question, whatever their order
    in the file: a new user's set, its texts shuffled, gave the same top-k hit rate as in their
    retriever's order.  ``retrieved order`` takes them as the file gives them."""
    lines = _as_lines(faq, N)
    flipped = [
        {**r, "texts": r["texts"][::-1], "gold": [len(r["texts"]) - 1 - g for g in r["gold"]]} for r in lines
    ]
    kw = dict(embedder="lsa", methods=["top-k", "retrieved order"], budgets=[200, 400], split=None)
    first = quality_at_budget([_write(tmp_path / "first.jsonl", lines)], **kw)
    last = quality_at_budget([_write(tmp_path / "last.jsonl", flipped)], **kw)
    by = lambda rows, m: [r["hit"] for r in rows if r["method"] == m]  # noqa: E731
    assert by(first, "top-k") == by(last, "top-k")
    assert sum(by(first, "retrieved order")) > sum(by(last, "retrieved order"))  # the nearest came first
    assert all(0.5 < r["fill"] <= 1.0 for r in first + last)
    # the order given, whole, each text that fits: the joined context is held to the budget
    texts = ["a b c d", "e" * 400, "f g h"]
    assert _at_budget._in_order(texts, 10, "estimate") == (["a b c d", "f g h"], 4)


def test_scwo_bench_quality_token_counter(capsys, faq_file):
    argv = ["bench", "--quality", "--set", faq_file, "--methods", "top-k", "--budgets", "200", "--json"]
    assert main(argv) == 0
    default = json.loads(capsys.readouterr().out)
    assert main([*argv, "--token-counter", "estimate"]) == 0
    assert json.loads(capsys.readouterr().out) == default
    if importlib.util.find_spec("tokenizers") is not None:  # (the embed extra)
        assert main([*argv, "--token-counter", "wordpiece"]) == 0
        wp = json.loads(capsys.readouterr().out)
        assert wp[0]["fill"] != default[0]["fill"] and 0 < wp[0]["fill"] <= 1.0
    assert main([*argv, "--token-counter", "bogus"]) == 2
    assert "token_counter must be one of" in capsys.readouterr().err
    assert main(["bench", "--token-counter", "wordpiece"]) == 2
    assert "--token-counter goes with --quality" in capsys.readouterr().err
