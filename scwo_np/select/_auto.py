"""``lam="auto"``: MMR's trade-off chosen per question, from the question and the retrieved set.

Two values, chosen on the tune split of the bundled question sets (``scwo bench --quality``,
MiniLM vectors) and checked on the held-out split:

* ``AUTO_LOOKUP = 0.7`` (the default) for a question with one answer: "How do I ...?",
  "Why does ...?".  On the FAQ sets no other rule we tried did better than the default.
* ``AUTO_BROAD = 0.9`` for a question whose answer has several parts: one that asks to
  compare, list or give an overview (:data:`BROAD_CUES`), or, with or without its text,
  one whose retrieved set singles out a group of candidates: its most relevant tenth
  stands more than ``AUTO_STANDOUT`` standard deviations above the mean relevance of the
  set (five of 50 retrieved candidates).  The measure does not change when an embedder's
  cosines are shifted or scaled, nor, for a given shape of the relevances, with the
  number of candidates; it needs 10 candidates or more.

Why higher, not lower, for broad questions: the parts of a multi-part answer are relevant
*and* alike (two related glossary terms, the sections of one page), so MMR's redundancy
term pushes the second part out for an unrelated paragraph; a higher ``lam`` keeps them.
At 0.9 MMR still passes over a near copy of a picked chunk, which 1.0 (top-k) would not.
The docs' selection guide gives the measurements behind each number.
"""

from __future__ import annotations

import re

import numpy as np
from numba import njit
from numpy.typing import ArrayLike

from .._config import JIT
from ..validation import check_ndim, check_scores, renamed_attributes, renamed_keywords

__all__ = [
    "AUTO_BROAD",
    "AUTO_LOOKUP",
    "AUTO_STANDOUT",
    "BROAD_CUES",
    "auto_lam",
    "query_kind",
]

#: ``lam`` for a question with one answer.
AUTO_LOOKUP = 0.7
#: ``lam`` for a question whose answer has several parts.
AUTO_BROAD = 0.9
#: How far (in standard deviations of the set's relevance) its most relevant tenth must stand
#: above the mean for the set to count as broad.
AUTO_STANDOUT = 2.45

#: What makes a question broad: it asks to compare, list, survey or summarise.
BROAD_CUES = re.compile(
    r"\b(?:differen(?:ce|ces|t)\s+between|compar(?:e|es|ed|ing|ison)|versus|vs\.?|overview|"
    r"summar(?:y|ise|ize)|list\s+(?:all|the|every)|what\s+are\s+(?:the|all)|types\s+of|kinds\s+of|"
    r"ways\s+(?:to|of)|pros\s+and\s+cons|advantages|trade-?offs?)\b",
    re.IGNORECASE,
)


@renamed_keywords(question="query")
def query_kind(query: str) -> str:
    """``"broad"`` if the query asks to compare, list or give an overview, else ``"lookup"``.

    Parameters
    ----------
    query : str
        The query's text (a question).

    Returns
    -------
    str
        ``"broad"`` or ``"lookup"``.

    Examples
    --------
    >>> query_kind("What is the difference between a module and a package?")
    'broad'
    >>> query_kind("How do I read a file line by line?")
    'lookup'
    """
    if not isinstance(query, str):
        raise TypeError(f"query must be a str; got {type(query).__name__}.")
    return "broad" if BROAD_CUES.search(query) else "lookup"


@njit(**JIT)
def _auto_lam(rel, broad_question):
    """The rule on relevance scores ``rel`` (1-d float64, finite); never validates."""
    if broad_question:
        return AUTO_BROAD
    n = rel.shape[0]
    k = n // 10  # the most relevant tenth
    if k < 1:
        return AUTO_LOOKUP
    sd = rel.std()
    if not sd > 1e-12:
        return AUTO_LOOKUP
    top = np.partition(rel, n - k)[n - k :]
    return AUTO_BROAD if (top.mean() - rel.mean()) / sd > AUTO_STANDOUT else AUTO_LOOKUP


def _rule(rel, query: str | None = None) -> float:
    """``lam`` for validated float64 relevance ``rel`` and, when known, the query's text."""
    broad = query is not None and query_kind(query) == "broad"
    return float(_auto_lam(np.ascontiguousarray(rel, dtype=np.float64), broad))


@renamed_keywords(question="query")
def auto_lam(relevance: ArrayLike, query: str | None = None) -> float:
    """The ``lam`` that ``lam="auto"`` picks for this retrieved set (and question).

    Parameters
    ----------
    relevance : array_like, shape (n,)
        Each retrieved candidate's cosine similarity to the question.
    query : str, optional
        The query's text, when there is one (the text APIs pass it).

    Returns
    -------
    float
        ``AUTO_BROAD`` (0.9) if the question asks to compare, list or give an overview, or
        if the most relevant tenth of the candidates stands more than ``AUTO_STANDOUT``
        (2.45) standard deviations above their mean relevance; otherwise ``AUTO_LOOKUP`` (0.7).
        See the module docs.

    Examples
    --------
    >>> import numpy as np
    >>> flat = np.linspace(0.60, 0.40, 50)                # nothing stands out
    >>> auto_lam(flat), auto_lam(flat, "Compare lists and tuples.")
    (0.7, 0.9)
    >>> group = np.r_[[0.80, 0.79, 0.78, 0.78, 0.77], np.linspace(0.45, 0.40, 45)]
    >>> auto_lam(group)                                   # five stand out
    0.9
    """
    check_ndim(relevance, 1, name="relevance", what="one score per candidate")
    if query is not None and not isinstance(query, str):
        raise TypeError(f"query must be a str or None; got {type(query).__name__}.")
    return _rule(check_scores(relevance, len(relevance), name="relevance"), query)


__getattr__ = renamed_attributes(__name__, {"question_kind": "query_kind"})
