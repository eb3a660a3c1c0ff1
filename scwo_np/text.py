"""The one text module: words, stop words, sentences, and text as ragged integer arrays.

Every part of scwo_np that reads text reads it through this module, so a word, a stop
word and a sentence mean the same thing in selection, HSCA, JSON anchoring and the
optimizers:

* :data:`WORD` — the one word pattern (a run of letters with one inner apostrophe), and
  :func:`words`, the lower-case words of a text by it;
* :data:`TERM` — search terms in data (letters, digits and ``_``: ``500``, ``user_id``), for
  queries over records, where a status code or an id is what is asked for;
* :data:`STOPWORDS` — the one list of English function words;
* :func:`stem` — the English Snowball (Porter2) stem of a word, so "courts" and "court" meet
  (HSCA's domains and topic shifts, JSON retrieval's query terms);
* :func:`split_sentences` — the one sentence splitter (code blocks, list items, log lines
  and verse, abbreviations, decimals, inline code), and :func:`sentence_units`, the
  units sentence-level selection keeps or drops whole;
* the one token estimate is :func:`scwo_np.tokens.estimate_tokens` (with the other token
  counters: ``len(text) / 4``, rounded down as MoRAG's spec has it or up for a hard budget);
* :func:`word_sets` — the KB Labs ADR's words as sets of integer ids;
* :func:`code_points` — every character as its Unicode code point.

Where a capability defines words by its own specification or model, it keeps that
definition, written here or next to the reason:

* :func:`word_sets` splits on white space and keeps words longer than two characters
  (lowercased): the ADR's Jaccard dedup specifies exactly that (``split(/\\s+/)``,
  ``length > 2``), so ``"cat!"`` is a word there.
* MoRAG's query overlap (``optimize``) compares ``query.lower().split()`` with each chunk's
  whitespace words, as its spec writes it.
* HSCA layer 1 reads a stream of :data:`WORD` words and the marks ``, : . ! ? ;`` (a run of
  neighbours ends at a comma or colon, a sentence at ``. ! ? ;``): its background table of
  word associations was counted offline with that definition, and its scores are pinned
  bit for bit (``tests/golden``).
* HSCA layer 2's coherence counts sentence *marks* (every ``. ! ?`` before white space)
  for its sentence-length factor: text cut into pieces ("The committee met. review the.")
  must read as short sentences, which :func:`split_sentences` keeps together, as it must
  for "e.g. the" (with it, the fragments of HSCA eval 6 scored a median 1.0, not 0.205).
* A sentence unit glues to the one before when its first token points back ("It",
  "However"); that token may be a number, a footnote mark or a contraction, which block
  the rule (``_sentences._LEAD``; with :data:`WORD` the held-out quality figures dropped).
* The LSA embedder's vocabulary is scikit-learn's ``TfidfVectorizer`` default: a part of
  the model, not a reading of text.
* JSON anchoring sizes a crush from *facts* of values normalised first (digits become
  ``#``, ``anchor._auto``): a value's shape, not its words.

Ragged arrays are CSR style: ``indptr`` of length ``n + 1`` and a flat ``data`` array;
item ``i`` is ``data[indptr[i]:indptr[i + 1]]``.  :func:`word_sets` lowercases with
``str.lower`` and splits with ``str.split``; length counts code points (the ADR's
TypeScript counts UTF-16 units, so an emoji counts once here, twice there).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from numba import njit
from numpy.typing import NDArray

from ._config import JIT
from ._sentences import FUNCTION_WORDS, sentence_units, split_sentences
from .validation import check_int, check_text, check_texts

__all__ = [
    "STOPWORDS",
    "TERM",
    "WORD",
    "Ragged",
    "code_points",
    "find_words",
    "sentence_units",
    "split_sentences",
    "stem",
    "word_sets",
    "words",
]


def words(text: str, *, min_chars: int = 1, stopwords: bool = True) -> list[str]:
    """The words of ``text`` (:data:`WORD`), lower case, in order.

    Parameters
    ----------
    text : str
        Any text.
    min_chars : int
        Words shorter than this (in code points) are left out.
    stopwords : bool
        False leaves out the words of :data:`STOPWORDS`.

    Returns
    -------
    list of str
        The words, repeats included.

    Examples
    --------
    >>> words("It's 3.14 o’clock: the x_1 CATS don't!")
    ["it's", 'o’clock', 'the', 'x', 'cats', "don't"]
    >>> words("The cats sat on the mat.", min_chars=3, stopwords=False)
    ['cats', 'sat', 'mat']
    """
    text = check_text(text)
    min_chars = check_int(min_chars, name="min_chars", low=1)
    if not isinstance(stopwords, bool):
        raise TypeError(
            f"stopwords must be True (keep the stop words) or False (leave them out); "
            f"got {type(stopwords).__name__} {stopwords!r}."
        )
    out = find_words(text.lower())
    if min_chars > 1 or not stopwords:
        out = [w for w in out if len(w) >= min_chars and (stopwords or w not in STOPWORDS)]
    return out


#: A word of prose: a run of letters, with one inner apostrophe ("don't", "o’clock").
#: Digits and ``_`` end a word and are not part of one, so "3.14" and "x_1" hold no
#: digit-bearing words.  HSCA's layers and its engine use it.
WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")

#: Characters that never belong to a :data:`WORD` word, stripped from a token's ends before the test
#: that it is one word (:func:`find_words`).
_EDGE = "\"'“”‘’`.,;:!?()[]{}<>*_/|-=#~^&%$@+\\"


def find_words(text: str) -> list[str]:
    """``WORD.findall(text)``, faster on prose: a white-space token that is all letters (once
    stripped of marks that cannot be in a word) is that word; only the others go through the
    pattern.  A word never spans white space, so the two agree (a test checks them on random text).

    Parameters
    ----------
    text : str
        Any text (lower-case it first for the words as :func:`words` gives them).

    Returns
    -------
    list of str
        The :data:`WORD` matches, in order, repeats included.

    Examples
    --------
    >>> find_words("don't (parse) x_1 3.14 o’clock, 'quoted'")
    ["don't", 'parse', 'x', 'o’clock', 'quoted']
    """
    out: list[str] = []
    add = out.append
    for tok in check_text(text).split():
        if tok.isalpha():
            add(tok)
            continue
        core = tok.strip(_EDGE)
        if core.isalpha():
            add(core)
        elif core:
            out += WORD.findall(core)
    return out


#: A search term in data: a run of letters, digits and ``_`` (``\w+``), so "500",
#: "user_id" and "v2" are terms.  Queries over records need them: a status code or an id
#: is what is asked for.  JSON retrieval (:mod:`scwo_np.anchor`) and the quality
#: benchmark's answer 3-grams use it.
TERM = re.compile(r"\w+")

#: English function words (lower case): they co-occur with everything, so they carry no
#: topic.  HSCA layer 1 leaves them out of its content words (its scores are pinned by
#: ``tests/golden``), layer 2 out of its domain shares, the engine out of its topic-shift
#: stems; JSON retrieval drops them from a query (except the few that name a record's
#: state, ``anchor._keep``).
STOPWORDS = FUNCTION_WORDS

_STEMMERS = threading.local()  # a Snowball stemmer keeps state between calls: one per thread


@lru_cache(maxsize=1 << 16)
def _stem(word: str) -> str:
    stemmer = getattr(_STEMMERS, "english", None)
    if stemmer is None:
        import snowballstemmer  # on first use: it loads every language's stemmer (~10 ms)

        stemmer = _STEMMERS.english = snowballstemmer.stemmer("english")
    return stemmer.stemWord(word)


def stem(word: str) -> str:
    """The English Snowball (Porter2) stem of ``word``, so "courts", "courted" and "court" meet.

    Thread-safe (a stemmer per thread) and cached.  Give it a lower-case word (:func:`words`).

    Parameters
    ----------
    word : str
        One word.

    Returns
    -------
    str
        Its stem.

    Examples
    --------
    >>> [stem(w) for w in ("courts", "proceedings", "calculations", "calculate", "glass", "is")]
    ['court', 'proceed', 'calcul', 'calcul', 'glass', 'is']
    """
    return _stem(check_text(word, name="word"))


class Ragged(NamedTuple):
    """CSR ragged array: row ``i`` is ``data[indptr[i]:indptr[i + 1]]``.

    Parameters
    ----------
    indptr : numpy.ndarray
        int64 row offsets, ``len(rows) + 1`` of them, starting at 0, non-decreasing.
    data : numpy.ndarray
        Every row's values, one after another.

    Examples
    --------
    >>> import numpy as np
    >>> r = Ragged(np.array([0, 2, 2, 5]), np.arange(5))
    >>> len(r), r.row(0).tolist(), r.row(1).tolist(), r.lengths().tolist()
    (3, [0, 1], [], [2, 0, 3])
    """

    indptr: NDArray[np.int64]
    data: NDArray

    def __len__(self) -> int:
        return self.indptr.shape[0] - 1

    def row(self, i: int) -> NDArray:
        """Row ``i``'s values (a view of ``data``).

        Parameters
        ----------
        i : int
            The row.

        Returns
        -------
        ndarray
            Its values.

        Examples
        --------
        >>> import numpy as np
        >>> Ragged(np.array([0, 2, 3]), np.array([5, 6, 7])).row(1)
        array([7])
        """
        return self.data[self.indptr[i] : self.indptr[i + 1]]

    def lengths(self) -> NDArray[np.int64]:
        """Each row's length.

        Returns
        -------
        ndarray of int64
            One length per row.

        Examples
        --------
        >>> import numpy as np
        >>> Ragged(np.array([0, 2, 3]), np.array([5, 6, 7])).lengths()
        array([2, 1])
        """
        return np.diff(self.indptr)

    def take(self, rows: NDArray[np.int64]) -> Ragged:
        """The rows ``rows`` (in that order) as a new ragged array.

        Parameters
        ----------
        rows : array_like of int
            Row indices, in the order wanted (repeats allowed).

        Returns
        -------
        Ragged
            Those rows.

        Examples
        --------
        >>> import numpy as np
        >>> r = Ragged(np.array([0, 2, 3]), np.array([5, 6, 7])).take([1, 0])
        >>> r.row(0).tolist(), r.row(1).tolist()
        ([7], [5, 6])
        """
        rows = np.asarray(rows, dtype=np.int64)
        lens = self.indptr[rows + 1] - self.indptr[rows]
        indptr = np.zeros(rows.shape[0] + 1, dtype=np.int64)
        np.cumsum(lens, out=indptr[1:])
        owner = np.repeat(np.arange(rows.shape[0]), lens)
        src = self.indptr[rows][owner] + (np.arange(indptr[-1]) - indptr[owner])
        return Ragged(indptr, self.data[src])


def word_sets(texts: Sequence[str], *, min_chars: int = 3) -> tuple[Ragged, list[str]]:
    """Each text's set of words (lowercased, whitespace split, ``len >= min_chars``).

    Returns ``(sets, vocabulary)``: ``sets.row(i)`` holds the ids of text
    ``i``'s distinct words in increasing order (``int32``), and
    ``vocabulary[id]`` is the word.  Ids are given in order of first
    appearance, so the result depends only on the texts.

    Parameters
    ----------
    texts : sequence of str
        The texts.
    min_chars : int
        Words shorter than this are left out.

    Returns
    -------
    sets : Ragged
        Row ``i`` holds the sorted int32 ids of text ``i``'s distinct words.
    vocabulary : list of str
        ``vocabulary[id]`` is the word with that id.

    Examples
    --------
    >>> sets, vocab = word_sets(["The cat sat on the mat", "a CAT!"])
    >>> [[vocab[i] for i in sets.row(k)] for k in range(len(sets))]
    [['the', 'cat', 'sat', 'mat'], ['cat!']]
    """
    texts = check_texts(texts)
    min_chars = check_int(min_chars, name="min_chars", low=1)
    vocab: dict[str, int] = {}
    get = vocab.setdefault
    flat: list[int] = []
    lens = np.empty(len(texts), dtype=np.int64)
    for k, t in enumerate(texts):
        row = [get(w, len(vocab)) for w in dict.fromkeys(t.lower().split()) if len(w) >= min_chars]
        flat.extend(row)
        lens[k] = len(row)
    indptr = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(lens, out=indptr[1:])
    # Sort within each row: one global sort of (row << 32 | id).
    key = np.array(flat, dtype=np.int64)
    key |= np.repeat(np.arange(len(texts), dtype=np.int64), lens) << 32
    key.sort()
    return Ragged(indptr, (key & 0xFFFFFFFF).astype(np.int32)), list(vocab)


def code_points(texts: Sequence[str]) -> Ragged:
    """Every text as its Unicode code points (``uint32``), one row per text.

    Parameters
    ----------
    texts : sequence of str
        The texts.

    Returns
    -------
    Ragged
        Row ``i`` holds text ``i``'s code points as uint32.

    Examples
    --------
    >>> cp = code_points(["héllo", "😀"])
    >>> cp.row(0).tolist(), cp.row(1).tolist()
    ([104, 233, 108, 108, 111], [128512])
    """
    # surrogatepass: a lone surrogate (legal in a Python str) keeps its code point.
    rows = [
        np.frombuffer(t.encode("utf-32-le", "surrogatepass"), dtype=np.uint32) for t in check_texts(texts)
    ]
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([r.shape[0] for r in rows], out=indptr[1:])
    data = np.concatenate(rows) if rows else np.empty(0, np.uint32)
    return Ragged(indptr, data)


@njit(**JIT)
def _jaccard_sorted(x, y):
    """Jaccard of two sorted unique integer arrays (0 when both are empty)."""
    i = 0
    j = 0
    inter = 0
    while i < x.shape[0] and j < y.shape[0]:
        if x[i] == y[j]:
            inter += 1
            i += 1
            j += 1
        elif x[i] < y[j]:
            i += 1
        else:
            j += 1
    union = x.shape[0] + y.shape[0] - inter
    if union == 0:
        return 0.0
    return inter / union
