"""Layer 2's domain tags on real documents (issue: domains on real text) and eval 7."""

import random

import pytest

from scwo_evals.realtext import DOMAIN_SOURCES, domain_texts, eval7_real_domains, real_texts
from scwo_np.hsca import domain_tags, verse_form
from scwo_np.hsca._layer2 import domain_scores, inflects


def test_domain_documents_have_fixed_splits_and_every_domain():
    tune, held = domain_texts("tune"), domain_texts("held_out")
    assert {r["text"] for r in tune}.isdisjoint(r["text"] for r in held)
    for d in DOMAIN_SOURCES:
        assert sum(r["domain"] == d for r in held) >= 60, d
    assert len(domain_texts("all")) == len(tune) + len(held)
    # The real-text rows of eval 6 are all here, with the domain their file gives.
    assert len(real_texts("held_out")) == sum(r["source"] not in ("pubmed", "python3-doc") for r in held)
    with pytest.raises(ValueError, match="split"):
        domain_texts("test")


def test_held_out_documents_are_tagged_with_their_source_domain():
    r = eval7_real_domains()
    assert r.passed, r.detail  # macro recall >= 0.75 on the held-out third
    for d in DOMAIN_SOURCES:
        assert r.detail[f"{d}_recall"] >= 0.7, (d, r.detail)
        assert r.detail[f"{d}_precision"] > 0.25, (d, r.detail)  # far above the base rate
    small = eval7_real_domains(cases=200, seed=1)
    assert small.cases == 200 and 0.0 <= small.pass_rate <= 1.0


POEM = """Come live with me and be my love,
And we will some new pleasures prove
Of golden sands and crystal brooks
With silken lines, and silver hooks.
		-- John Donne"""

WRAPPED_PROSE = """The people of Gideon have always believed that life is sacred.  That
the love of life is the greatest gift we know, and we are incapable of
destroying or interfering with the creation of that which we love so
deeply, life in every form from the smallest to the most developed being."""


def test_poems_are_told_by_their_form_not_by_words_about_poetry():
    assert verse_form(POEM) == 1.0
    assert "poetry" in domain_tags(POEM)
    assert verse_form(WRAPPED_PROSE) < 0.5  # hard-wrapped prose: the next word would not have fit
    assert verse_form(POEM.replace("\n", " ")) == 0.0  # one line: the form is lost
    # The same lines in lower case and run together at full width read as prose.
    flat = " ".join(POEM.lower().split("\n")[:4])
    assert verse_form("\n".join(flat[i : i + 60] for i in range(0, len(flat), 60))) < 1.0
    lecture = "A sonnet has fourteen lines. The poet's rhyme scheme and the stanza form decide its verse."
    assert verse_form(lecture) == 0.0


def test_verse_form_ignores_blank_and_attribution_lines():
    rng = random.Random(0)
    lines = POEM.splitlines()[:4]
    for _ in range(20):
        gappy = "\n\n".join(lines) + "\n-- " + "".join(rng.choice("abc") for _ in range(5))
        assert verse_form(gappy) == verse_form("\n".join(lines))


def test_common_words_borrow_no_domain_from_a_longer_lexicon_word():
    assert inflects("rights", "right") and inflects("studied", "study") and inflects("stopping", "stop")
    assert not inflects("right", "rights") and not inflects("several", "sever")
    s = domain_scores("He did the right thing and had done it well, as a better person would.")
    assert s["legal"] == 0.0  # not "rights", "donee", "betterment", "personable"
    assert domain_scores("The licensees distribute copies.")["legal"] > 0  # inflections still count


def test_medical_and_computing_words_outside_wordnet_are_known():
    assert "medical" in domain_tags("Serum metoprolol concentrations fell in hyperlipidemic patients.")
    assert "technical_prose" in domain_tags("The Linux kernel loads the widget driver at boot.")
