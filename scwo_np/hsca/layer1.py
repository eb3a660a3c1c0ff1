"""HSCA Layer 1, relational weighting: how tightly a chunk's vocabulary meshes, on an absolute scale.

Text becomes integer arrays once (:func:`tokenize`): content-word ids (stop
words and one-letter tokens dropped), the sentence of every token and the
paragraph of every sentence.  The kernel then counts, for every pair of
distinct words within ``window`` tokens of each other *in the same
sentence*, how often the pair occurs and in how many sentences.  The window
stops at sentence ends: the last word of one sentence and the first of the
next are neighbours by layout, not by meaning, and letting the window cross
would link a keyword placed at the end of every sentence to whatever opens
the next one.  A pair that recurs in two or more
sentences is a *structural* link: the same two concepts keep appearing
together.  A sentence's score is the share of its pairs that are structural
links; a paragraph's is the mean of its sentences (mean, not max, as the spec
asks); the chunk's is the mean of its paragraphs.

The score is a fraction, so it is comparable across chunks without any
per-chunk normalisation: a keyword-stuffed text repeats its keywords next to
ever-different words and scores low however dense the keywords are, while a
text whose concepts recur together scores high.  This is the spec's "not
TF-IDF" property.

Short chunks (spec 8.4, left open there): a chunk with fewer than 3
sentences or fewer than ``2 * window`` content tokens has too little
structure to measure; its score is capped at :data:`SHORT_CHUNK_CAP` and the
caller flags it ``short_chunk``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numba import njit
from numpy.typing import NDArray

from .._config import JIT
from .._parallel import run_chunks
from ..validation import check_int, check_texts

__all__ = ["STOPWORDS", "SHORT_CHUNK_CAP", "Tokens", "Layer1", "tokenize", "relational_weights"]

#: Score cap for chunks too short to have co-occurrence structure.
SHORT_CHUNK_CAP = 0.3

#: English function words: they co-occur with everything, so they are not concepts.
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below between
    both but by can could did do does doing down during each few for from further had has have having he her here
    hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of
    off on once only or other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up very was we were what
    when where which while who whom why will with would you your yours yourself yourselves also may might must
    shall one two us upon yet via per""".split()
)

_PARA = re.compile(r"\n\s*\n")
_SENT = re.compile(r"(?<=[.!?;])\s+|\n")
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
# ASCII fast path of _WORD.findall: every ASCII character but letters and "'" becomes a space.
_ASCII_NON_WORD = str.maketrans({chr(c): " " for c in range(128) if not (chr(c).isalpha() or chr(c) == "'")})


def _words(sentence: str) -> list[str]:
    """``_WORD.findall(sentence)``, about 1.5x faster on ASCII text (same result)."""
    if not sentence.isascii():
        return _WORD.findall(sentence)
    out = sentence.translate(_ASCII_NON_WORD).split()
    if "'" not in sentence:
        return out
    res: list[str] = []
    for w in out:
        if "'" in w:
            res.extend(_WORD.findall(w))
        else:
            res.append(w)
    return res


class Tokens(NamedTuple):
    """Ragged token arrays for many texts.

    Text ``t`` owns tokens ``tok_ptr[t]:tok_ptr[t + 1]`` (word ids in
    ``words``, sentence index in ``sent`` — global over all texts) and
    sentences ``sent_ptr[t]:sent_ptr[t + 1]`` whose paragraph indices (global)
    are ``para``.
    """

    tok_ptr: NDArray[np.int64]
    words: NDArray[np.int64]
    sent: NDArray[np.int64]
    sent_ptr: NDArray[np.int64]
    para: NDArray[np.int64]
    vocab_size: int


#: Windows above this are treated as this: no text has 2**31 words, so every
#: larger window gives the same scores (and stays an int64 in the kernels).
MAX_WINDOW = 2**31 - 1


def check_window(window: object, *, name: str = "window") -> int:
    """The co-occurrence window as an int in ``[2, MAX_WINDOW]`` (larger values are clamped)."""
    return check_int(window, name=name, low=2, high=MAX_WINDOW, clamp=True)


def tokenize(texts: Sequence[str], vocab: dict[str, int] | None = None) -> Tokens:
    """Paragraphs (blank lines), sentences (after ``. ! ? ;`` or a newline), content words.

    Examples
    --------
    >>> t = tokenize(["The cat sat. The cat ran!\\n\\nDogs bark."])
    >>> t.words.tolist(), t.sent.tolist(), t.para.tolist()
    ([0, 1, 0, 2, 3, 4], [0, 0, 1, 1, 2, 2], [0, 0, 1])
    """
    texts = check_texts(texts)
    vocab = {} if vocab is None else vocab
    # One dict lookup per token decides everything: stop words and one-letter words map to -1.
    lookup = dict.fromkeys(STOPWORDS, -1)
    lookup.update(vocab)
    get = lookup.get
    words: list[int] = []
    sent: list[int] = []
    para: list[int] = []
    tok_ptr = [0]
    sent_ptr = [0]
    s_idx = 0
    p_idx = 0
    for text in texts:
        for paragraph in _PARA.split(text.lower()):
            had = False
            for sentence in _SENT.split(paragraph):
                toks = _words(sentence)
                if not toks:
                    continue
                ids = [get(w, -2) for w in toks]
                if -2 in ids:  # words not seen before
                    for k, i in enumerate(ids):
                        if i == -2:
                            w = toks[k]
                            i = get(w, -2)
                            if i == -2:
                                i = len(vocab) if len(w) > 1 else -1
                                if i >= 0:
                                    vocab[w] = i
                                lookup[w] = i
                            ids[k] = i
                ids = [i for i in ids if i >= 0]
                if not ids:
                    continue
                words.extend(ids)
                sent.extend([s_idx] * len(ids))
                para.append(p_idx)
                s_idx += 1
                had = True
            if had:
                p_idx += 1
        tok_ptr.append(len(words))
        sent_ptr.append(s_idx)
    return Tokens(
        np.asarray(tok_ptr, np.int64), np.asarray(words, np.int64), np.asarray(sent, np.int64),
        np.asarray(sent_ptr, np.int64), np.asarray(para, np.int64), len(vocab),
    )  # fmt: skip


@njit(**JIT)
def _score_text(words, sent, s0, s1, para, window, sent_score):
    """Sentence scores (written to ``sent_score[s0:s1]``) and the chunk score of one text."""
    n = words.shape[0]
    nsent = s1 - s0
    if n < 2 or nsent == 0:
        for s in range(nsent):
            sent_score[s0 + s] = 0.0
        return 0.0
    npairs = 0
    for p in range(n):
        npairs += min(window - 1, n - 1 - p)
    keys = np.empty(npairs, np.int64)
    psent = np.empty(npairs, np.int64)
    m = 0
    vmax = 0
    for p in range(n):
        vmax = max(vmax, words[p])
    base = vmax + 1
    for p in range(n):
        a = words[p]
        for q in range(p + 1, min(p + window, n)):
            if sent[q] != sent[p]:
                break
            b = words[q]
            if a == b:
                continue
            keys[m] = min(a, b) * base + max(a, b)
            psent[m] = sent[p] - s0
            m += 1
    keys = keys[:m]
    psent = psent[:m]
    order = np.argsort(keys, kind="mergesort")
    linked = np.zeros(m, np.bool_)
    i = 0
    while i < m:
        j = i + 1
        while j < m and keys[order[j]] == keys[order[i]]:
            j += 1
        if j - i >= 2:
            first = psent[order[i]]
            multi = False
            for k in range(i + 1, j):
                if psent[order[k]] != first:
                    multi = True
                    break
            if multi:
                for k in range(i, j):
                    linked[order[k]] = True
        i = j
    tot = np.zeros(nsent, np.int64)
    hit = np.zeros(nsent, np.int64)
    for k in range(m):
        tot[psent[k]] += 1
        hit[psent[k]] += linked[k]
    for s in range(nsent):
        sent_score[s0 + s] = hit[s] / tot[s] if tot[s] > 0 else 0.0
    # Paragraph means, then the mean over paragraphs.
    total = 0.0
    npara = 0
    s = 0
    while s < nsent:
        e = s + 1
        while e < nsent and para[s0 + e] == para[s0 + s]:
            e += 1
        acc = 0.0
        for k in range(s, e):
            acc += sent_score[s0 + k]
        total += acc / (e - s)
        npara += 1
        s = e
    return total / npara


@njit(**JIT)
def _score_range(tok_ptr, words, sent, sent_ptr, para, window, scores, sent_score, lo, hi):
    for t in range(lo, hi):
        a, b = tok_ptr[t], tok_ptr[t + 1]
        scores[t] = _score_text(words[a:b], sent[a:b], sent_ptr[t], sent_ptr[t + 1], para, window, sent_score)


class Layer1(NamedTuple):
    """Layer-1 scores of many texts: per text, per sentence, and which texts are short."""

    scores: NDArray[np.float64]
    sentence_scores: NDArray[np.float64]
    sent_ptr: NDArray[np.int64]
    short: NDArray[np.bool_]


def relational_weights(texts: Sequence[str] | Tokens, *, window: int = 5) -> Layer1:
    """Layer-1 relational weight of every text, in one batch (threads over texts).

    Examples
    --------
    >>> mesh = ("The fox hunts the rabbit at dawn. The rabbit hides from the fox. "
    ...         "At dawn the fox returns and the rabbit runs.")
    >>> stuffed = "Fox cheap. Rabbit deals. Dawn offers now. Fox prices. Rabbit sale today. Dawn discount."
    >>> r = relational_weights([mesh, stuffed])
    >>> bool(r.scores[0] > 0.35 > r.scores[1]), r.short.tolist()
    (True, [False, False])
    """
    window = check_window(window)
    tok = texts if isinstance(texts, Tokens) else tokenize(texts)
    n = tok.tok_ptr.shape[0] - 1
    scores = np.zeros(n)
    sent_score = np.zeros(tok.para.shape[0])
    run_chunks(_score_range, n, tok.tok_ptr, tok.words, tok.sent, tok.sent_ptr, tok.para, int(window), scores,
               sent_score, chunk=256)  # fmt: skip
    nsent = np.diff(tok.sent_ptr)
    ntok = np.diff(tok.tok_ptr)
    short = (nsent < 3) | (ntok < 2 * window)
    scores = np.where(short, np.minimum(scores, SHORT_CHUNK_CAP), scores)
    return Layer1(np.clip(scores, 0.0, 1.0), sent_score, tok.sent_ptr, short)


def beat_weights(texts: Sequence[str], *, window: int = 5) -> NDArray[np.float64]:
    """Relational weight of each text *within the beat* formed by all of them.

    The texts are scored as one document with one paragraph per text, so a
    word pair counts as structural when it recurs anywhere in the beat: a
    thread spread over several short turns weighs in even though no single
    turn has structure of its own, and a long turn that shares nothing with
    the others does not.  Returns one score per text (its paragraph's mean).

    Examples
    --------
    >>> thread = ["The fox chased the rabbit.", "Again the fox chased the rabbit at dawn.",
    ...           "At dawn the rabbit outran the fox."]
    >>> aside = ["Quarterly invoices list vendor payments, freight surcharges and warehouse rental fees."]
    >>> w = beat_weights(thread + aside)
    >>> bool(min(w[:3]) > w[3])
    True
    """
    texts = check_texts(texts)
    window = check_window(window)
    tok = tokenize(texts)
    n = len(texts)
    nsent = tok.sent_ptr[-1]
    para = np.repeat(np.arange(n, dtype=np.int64), np.diff(tok.sent_ptr))
    one = Tokens(np.array([0, tok.words.shape[0]], np.int64), tok.words, tok.sent,
                 np.array([0, nsent], np.int64), para, tok.vocab_size)  # fmt: skip
    sent_score = np.zeros(nsent)
    if tok.words.shape[0]:
        _score_text(one.words, one.sent, 0, nsent, one.para, int(window), sent_score)
    out = np.zeros(n)
    for t in range(n):
        a, b = tok.sent_ptr[t], tok.sent_ptr[t + 1]
        out[t] = sent_score[a:b].mean() if b > a else 0.0
    return np.clip(out, 0.0, 1.0)
