"""``scwo_np.text.stem``: snowballstemmer's C backend (PyStemmer), when installed, gives the stems
of its pure-Python English stemmer, word for word."""

import re

import pytest
from snowballstemmer.english_stemmer import EnglishStemmer

from scwo_np import datasets
from scwo_np.text import stem


def _real_words() -> list[str]:
    """Every distinct lower-case word of the bundled Python FAQ, questions and answers (real text)."""
    faq = datasets.load_faq()
    return sorted({w.lower() for text in faq.texts + faq.questions for w in re.findall(r"[^\W\d_]+", text)})


def test_stems_are_the_pure_python_stemmers():
    words = _real_words()
    assert len(words) > 2000
    pure = EnglishStemmer()
    assert [stem(w) for w in words] == [pure.stemWord(w) for w in words]


def test_the_c_backend_is_in_use_on_cpython():
    import platform

    if platform.python_implementation() != "CPython":
        pytest.skip("PyStemmer is a CPython dependency only")
    import snowballstemmer
    import Stemmer

    assert snowballstemmer.stemmer is Stemmer.Stemmer
