"""The evaluation question sets of issue 43 (scwo_evals/data/quality/): each committed file loads
and has the quality benchmark's shape; the man-page question rule on examples."""

from pathlib import Path

import pytest

from scwo_evals.quality_sets import DATA, EVAL_SETS, FINAL_SETS, load
from scwo_evals.sentences import _question


def test_the_files_are_the_sets():
    names = EVAL_SETS + FINAL_SETS
    assert sorted(p.name for p in DATA.glob("*.json.gz")) == sorted(f"{n}.json.gz" for n in names)


def test_the_final_sets_are_not_tuned_on():
    """The final held-out sets are no source of the leave-one-source-out tuning."""
    from scwo_evals.relevance import SOURCES

    assert not set(FINAL_SETS) & {n for names in SOURCES.values() for n in names}
    assert not set(FINAL_SETS) & set(EVAL_SETS)


@pytest.mark.parametrize("name", EVAL_SETS + FINAL_SETS)
def test_shape(name):
    qs = load(name)
    assert (qs.name, qs.kind) == (name, "faq") and qs.source and qs.licence
    assert "the 50 nearest of" in qs.retriever
    n = len(qs.paragraphs)
    assert len(qs.questions) == len(qs.candidates) == len(qs.gold) == len(qs.split) > 0
    assert len(set(qs.questions)) == len(qs.questions)
    used = set()
    for text, cand, gold, split in zip(qs.questions, qs.candidates, qs.gold, qs.split, strict=True):
        assert len(cand) == 50 and len(set(cand)) == 50 and all(0 <= i < n for i in cand)
        assert gold and len(set(gold)) == len(gold) and all(0 <= i < n for i in gold)
        assert split == _question(text, [])["split"]  # the fixed split, by a hash of the text
        used |= set(cand) | set(gold)
    assert used == set(range(n))  # only what the questions refer to
    assert {"tune", "held_out"} <= set(qs.split)
    assert all(p.strip() for p in qs.paragraphs)
    assert (DATA / f"{name}.json.gz").stat().st_size < 2_000_000


def test_unknown_name():
    with pytest.raises(ValueError, match="name must be one of git"):
        load("python-faq")  # a bundled set, not one of these


@pytest.mark.skipif(not Path("/usr/share/wordnet/index.verb").is_file(), reason="needs wordnet-base")
@pytest.mark.parametrize(
    "description, question",
    [
        ("open and possibly create a file", "How do I open and possibly create a file?"),
        ("Copy a range of data from one file to another", "How do I copy a range of data from one file to another?"),
        ("set/get the name of a thread", "How do I set/get the name of a thread?"),
        ("get process identification.", "How do I get process identification?"),
        ("I/O event notification facility", None),  # a noun phrase
        ("overview of Linux capabilities", None),
        ("count of bytes", None),
        ("file block counts", None),
        ("log gamma function", None),
        ("get time", None),  # too short
    ],
)  # fmt: skip
def test_man_question(description, question):
    from scwo_evals import doc_pools

    assert doc_pools.man_question(description, doc_pools._wordnet()) == question


def test_plain_faq_sections():
    """lsof's and sed's FAQ layout: a numbered title at column 0, wrapped to the next blank line;
    paragraphs up to a blank line; a deeper indent (a command) joined to the paragraph before."""
    from scwo_evals.doc_pools import plain_faq_sections

    lines = [
        "1.0\tGeneral Concepts",  # the table of contents, before start
        "1.6\tIs there a test suite?",
        "",
        "1.0\tGeneral Concepts",
        "",
        "1.6\tIs there a test suite?",
        "",
        "\tYes, as of lsof revision 4.63 there's an automated lsof",
        "\ttest suite in the tests/ sub-directory.",
        "",
        "\t    $ make",
        "",
        "\tMore information is in 00TEST.",
        "",
        "2.2.1\tWhy does PSTAT-based lsof rebuild the device cache file",
        "\tafter each reboot?",
        "",
        "   Because the device numbers change.",
    ]
    got = plain_faq_sections(lines, 3)
    assert got == [
        ("General Concepts", []),
        ("Is there a test suite?", [
            "Yes, as of lsof revision 4.63 there's an automated lsof test suite in the tests/ sub-directory. $ make",
            "More information is in 00TEST.",
        ]),
        ("Why does PSTAT-based lsof rebuild the device cache file after each reboot?",
         ["Because the device numbers change."]),
    ]  # fmt: skip
