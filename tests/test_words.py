"""``scwo_np.text.find_words``: the fast path of the word pattern gives ``WORD.findall`` word for word,
on random text (letters of several scripts, apostrophes, digits, marks, white space) and on real text."""

import gzip
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from scwo_np import datasets
from scwo_np.text import WORD, find_words, words

PIECES = ["a", "Z", "é", "ß", "İ", "ǅ", "ʼ", "²", "½", "٣", "3", "_", "'", "’", "-", ".", ",", "(", ")", '"', "`",
          "\u0307", "\u200b", "·", "don't", "o’clock", " ", "\t", "\n", "\u3000", "\xa0", "x_1", "3.14"]  # fmt: skip


@given(st.lists(st.sampled_from(PIECES), max_size=40).map("".join))
def test_find_words_is_the_pattern(text):
    for t in (text, text.lower()):
        assert find_words(t) == WORD.findall(t)


def test_find_words_on_real_text():
    texts = datasets.load_faq().texts + datasets.load_sample().texts
    for path in sorted(Path("/usr/share/man/man1").glob("*.gz"))[:50]:  # man pages, when the machine has them
        texts.append(gzip.open(path).read().decode("utf-8", "replace"))
    for t in texts:
        low = t.lower()
        assert find_words(low) == WORD.findall(low)
    assert words("It's 3.14 o’clock") == ["it's", "o’clock"]
