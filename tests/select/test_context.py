"""TextSelection.context: the picks joined by the separator, within the budget by the selection's counter.

What the model reads is the joined context, so the budget holds for it, separators and elision
marks included, for both granularities and for counters whose counts do not add up.  Real text:
paragraphs of the Python documentation (the bundled sample) and its questions.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scwo_np import load_sample, mmr_select, select_texts
from scwo_np.select._texts import REFITS
from scwo_np.tokens import as_token_counter, count_tokens

SEPARATORS = ["\n\n", "", " ", "\n---\n", "\n\n\n\n", "\n\n## source\n\n"]


@pytest.fixture(scope="module")
def sample():
    return load_sample()


def words(text):
    return len(text.split())


def squares(text):
    """Superadditive: the joined text costs more than its parts (a join can only add tokens)."""
    return len(text) ** 2 // 2000


def lines(text):
    """Subadditive and counting the separator's newlines: a counter unlike the estimate."""
    return text.count("\n") + (len(text) + 9) // 10


def quarter(text):
    """Tokens as ``len(text) // 4``: each piece rounded down, so the joined text counts more."""
    return len(text) // 4


COUNTERS = {"estimate": None, "words": words, "squares": squares, "lines": lines}


def problems(sample):
    n = len(sample.texts)
    return st.fixed_dictionaries(
        {
            "picks": st.lists(st.integers(0, n - 1), min_size=0, max_size=25, unique=True),
            "query": st.integers(0, len(sample.queries) - 1),
            "budget": st.integers(0, 900) | st.sampled_from([0, 1, 2, 3, 10**9]),
            "separator": st.sampled_from(SEPARATORS),
            "order": st.sampled_from(["pick", "original", "edges"]),
            "lam": st.sampled_from([0.0, 0.5, 0.7, 1.0, "auto"]),
        }
    )


def _check(sel, budget, counter, separator):
    assert sel.context == separator.join(sel.texts)
    assert sel.separator == separator
    n = int(count_tokens([sel.context], counter)[0]) if sel.context else 0
    assert sel.context_tokens == n <= budget


@pytest.mark.parametrize("counter", COUNTERS)
@pytest.mark.parametrize("granularity", ["chunk", "sentence"])
def test_the_joined_context_is_within_the_budget(sample, counter, granularity):
    @settings(max_examples=25, deadline=None)
    @given(p=problems(sample))
    def run(p):
        texts = [sample.texts[i] for i in p["picks"]]
        tc = COUNTERS[counter]
        sel = select_texts(texts, sample.queries[p["query"]], p["budget"], token_counter=tc, lam=p["lam"],
                           order=p["order"], separator=p["separator"], granularity=granularity,
                           elision="[…]" if granularity == "sentence" else None)  # fmt: skip
        _check(sel, p["budget"], tc, p["separator"])
        if granularity == "chunk":
            np.testing.assert_array_equal(sel.tokens, count_tokens(sel.texts, tc))

    run()


@pytest.mark.integration
@pytest.mark.parametrize("counter", ["tiktoken", "wordpiece"])
@pytest.mark.parametrize("granularity", ["chunk", "sentence"])
def test_the_joined_context_is_within_the_budget_by_real_tokenizers(sample, counter, granularity):
    """BPE merges across a join ("\\n" at a text's end + "\\n\\n"): the context is counted whole."""
    if counter == "tiktoken":
        pytest.importorskip("tiktoken")
    tc = as_token_counter(counter)

    @settings(max_examples=20, deadline=None)
    @given(p=problems(sample), trailing=st.booleans())
    def run(p, trailing):
        texts = [sample.texts[i] + ("\n" if trailing else "") for i in p["picks"]]
        sel = select_texts(texts, sample.queries[p["query"]], p["budget"], token_counter=tc, lam=p["lam"],
                           order=p["order"], separator=p["separator"], granularity=granularity)  # fmt: skip
        _check(sel, p["budget"], tc, p["separator"])

    run()


def _refit(E, q, texts, counter, budget, separator="\n\n"):
    """The documented rule, plainly: MMR's picks for the room, counted joined.  Over the budget:
    those picks cut to fit (the last dropped until the context fits), or MMR's picks for the room
    lowered by the overflow (again, REFITS times at most), the first of these that fits, should it
    hold more tokens than the cut picks.  Within it but counted at less than MMR paid (the picks'
    costs less one separator): MMR's picks for the room raised by the difference (at most what is
    left of the budget), again REFITS times at most, while they fit and hold more."""
    s = int(counter(separator))
    costs = count_tokens(texts, counter) + s

    def used(picks):
        return counter(separator.join(texts[i] for i in picks)) if picks else 0

    room = budget + s
    picks = mmr_select(E, q, costs, room).tolist()
    if used(picks) <= budget:
        for _ in range(REFITS):
            paid = int(sum(costs[i] for i in picks)) - s if picks else 0
            spare = min(paid - used(picks), budget - used(picks))
            if spare <= 0:
                break
            more = mmr_select(E, q, costs, room + spare).tolist()
            if used(more) > budget or used(more) <= used(picks):
                break
            room, picks = room + spare, more
        return picks
    cut = list(picks)
    while used(cut) > budget:
        cut = cut[:-1]
    for _ in range(REFITS):
        room = max(room - (used(picks) - budget), 0)
        picks = mmr_select(E, q, costs, room).tolist()
        if used(picks) <= budget:
            return picks if used(picks) > used(cut) else cut
    return cut


@pytest.mark.parametrize("counter", [squares, lines, words, quarter])
@pytest.mark.parametrize("budget", [0, 7, 120, 300, 900])
def test_a_counter_that_does_not_add_up_selects_again_with_less_room(sample, counter, budget):
    """Over the budget once joined, MMR runs again with the room lowered by the overflow: the picks
    are MMR's for a room that fits (not MMR's for the whole budget less its last picks)."""
    texts = list(sample.texts[:40])
    E, q = sample.embeddings[:40], sample.query_embeddings[0]
    want = _refit(E, q, texts, counter, budget)
    sel = select_texts(texts, q, budget, embedder=lambda ts: E[[texts.index(t) for t in ts]], embeddings=E,
                       token_counter=counter)  # fmt: skip
    assert sel.indices.tolist() == want
    assert sel.context_tokens == (counter(sel.context) if sel.context else 0) <= budget


def _estimate(text):
    return int(count_tokens([text])[0])


def test_a_counter_that_counts_the_context_at_less_selects_again_with_more_room(sample):
    """The estimate rounds each piece up and the separator costs a token, so the joined context
    counts less than MMR paid: selecting again with the difference fills more of the budget,
    never less, and stays within it (the documented rule, written out in ``_refit``)."""
    texts = list(sample.texts[:60])
    E, q = sample.embeddings[:60], sample.query_embeddings[0]
    s = _estimate("\n\n")
    fuller = 0
    for budget in range(40, 1200, 53):
        sel = select_texts(
            texts, q, budget, embedder=lambda ts: E[[texts.index(t) for t in ts]], embeddings=E
        )
        before = mmr_select(E, q, count_tokens(texts) + s, budget + s).tolist()
        used = _estimate("\n\n".join(texts[i] for i in before)) if before else 0
        assert sel.indices.tolist() == _refit(E, q, texts, _estimate, budget)
        assert used <= sel.context_tokens == _estimate(sel.context) <= budget
        fuller += sel.context_tokens > used
    assert fuller  # more of the budget held at some budgets


def test_sentences_fill_more_of_the_budget_the_estimate_leaves(sample, monkeypatch):
    """Sentences under the estimate: the context holds at least what it held without selecting
    again, more at some budgets, and never more than the budget."""
    from scwo_np.select import _texts

    texts = list(sample.texts[:30])
    query = sample.queries[0]
    fills = {}
    shipped = _texts.REFITS
    for refits in (shipped, 0):
        monkeypatch.setattr(_texts, "REFITS", refits)
        fills[refits] = [
            select_texts(texts, query, budget, granularity="sentence").context_tokens
            for budget in (90, 250, 600)
        ]
    assert all(a >= b for a, b in zip(fills[shipped], fills[0], strict=True))
    assert fills[shipped] != fills[0] and max(fills[shipped]) <= 600


def test_selecting_again_fills_at_least_as_much_as_dropping_picks(sample):
    """Never less than MMR's picks for the whole budget cut to fit, and more at some budgets."""
    texts = list(sample.texts[:60])
    E, q = sample.embeddings[:60], sample.query_embeddings[0]
    s = quarter("\n\n")
    more = 0
    for budget in range(50, 1500, 37):
        cut = mmr_select(E, q, count_tokens(texts, quarter) + s, budget + s).tolist()
        while quarter("\n\n".join(texts[i] for i in cut)) > budget:
            cut = cut[:-1]
        sel = select_texts(texts, q, budget, embedder=lambda ts: E[[texts.index(t) for t in ts]], embeddings=E,
                           token_counter=quarter)  # fmt: skip
        assert sel.indices.tolist() == _refit(E, q, texts, quarter, budget)
        assert quarter("\n\n".join(texts[i] for i in cut)) <= sel.context_tokens <= budget
        more += sel.indices.tolist() != cut
    assert more  # selecting again changed the context at some budget


def test_separators_are_counted_in_mmr_s_costs(sample):
    """select_texts == mmr_select with each text costing one separator more and a budget one larger."""
    cand = np.argsort(-(sample.embeddings @ sample.query_embeddings[0]), kind="stable")[:60]
    texts = [sample.texts[i] for i in cand]
    E, q, c = sample.embeddings[cand], sample.query_embeddings[0], sample.costs[cand]
    for separator in SEPARATORS:
        s = int(count_tokens([separator])[0]) if separator else 0
        for budget in (0, 50, 300, 900, 5000):
            sel = select_texts(texts, q, budget, embeddings=E, costs=c, separator=separator)
            want = mmr_select(E, q, c + s, budget + s)
            np.testing.assert_array_equal(sel.indices, want)
            assert sel.context_tokens == c[want].sum() + s * max(len(want) - 1, 0) <= budget
            assert sel.context == separator.join(texts[i] for i in want)


def test_the_default_separator_is_a_blank_line_and_empty_is_mmr_select(sample):
    cand = np.arange(80)
    texts = [sample.texts[i] for i in cand]
    E, q, c = sample.embeddings[cand], sample.query_embeddings[3], sample.costs[cand]
    sel = select_texts(texts, q, 700, embeddings=E, costs=c)
    assert sel.separator == "\n\n" and sel.context == "\n\n".join(sel.texts)
    bare = select_texts(texts, q, 700, embeddings=E, costs=c, separator="")
    np.testing.assert_array_equal(bare.indices, mmr_select(E, q, c, 700))
    assert bare.context_tokens == bare.total_tokens <= 700


def test_elision_marks_count(sample):
    """With sentences, the elision marks between kept units are in the context, and counted."""
    texts = list(sample.texts[100:130])
    for elision in (None, "…", " [several sentences left out] "):
        for budget in (20, 80, 250):
            sel = select_texts(texts, sample.queries[5], budget, granularity="sentence", elision=elision)
            assert sel.context_tokens == count_tokens([sel.context])[0] <= budget
            assert sel.context == "\n\n".join(sel.texts)
            if elision:
                marked = [t for t in sel.texts if f" {elision} " in t]
                assert all(len(sp) > 1 for t, sp in zip(sel.texts, sel.spans, strict=True) if t in marked)


def test_nothing_selected_is_an_empty_context(sample):
    for g in ("chunk", "sentence"):
        sel = select_texts([], "anything", 100, granularity=g, separator="\n--\n")
        assert sel.context == "" and sel.context_tokens == 0 and sel.separator == "\n--\n"
        sel = select_texts(list(sample.texts[:5]), sample.queries[0], 0, granularity=g)
        assert sel.context == "" and sel.context_tokens == 0


@pytest.mark.parametrize("bad, err", [(3, TypeError), (b"\n", TypeError), (None, TypeError)])
def test_a_bad_separator_is_named(sample, bad, err):
    with pytest.raises(err, match="separator must be a str"):
        select_texts(list(sample.texts[:5]), sample.queries[0], 100, separator=bad)
