"""A dependency-light embedder: TF-IDF over a corpus reduced by truncated SVD (latent semantic analysis).

Needs nothing beyond scikit-learn.  It is fitted on the texts at hand (the chunks
a selection will choose from, plus the query) and then embeds any text in that
space; its ``name`` carries a hash of the fitting corpus and of its settings, so
the embedding cache never mixes vectors of two different fits.  Deterministic:
the same corpus and ``seed`` give the same vectors to the bit on one machine.

Weaker than a sentence encoder (it knows only the words of its corpus, and no
synonyms beyond what co-occurrence there teaches), stronger than chance: see
the README's embedder table.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from ..validation import check_int, check_texts

__all__ = ["LSAEmbedder"]

#: Corpora of up to this many texts are fitted on one BLAS thread: the randomized SVD of a small
#: matrix spends more time waking threads than computing (51 texts on two cores: 7 ms median and
#: 16 ms p99 on one thread, against 16 ms and 116 ms on two).
ONE_THREAD_CORPUS = 2000


class LSAEmbedder:
    """TF-IDF (words, sublinear tf) + ``TruncatedSVD(dim)`` fitted on ``corpus``; rows L2-normalised.

    Parameters
    ----------
    corpus : sequence of str
        The texts to fit on (at least 2 non-empty ones): usually the candidate
        chunks and the query together.
    dim : int
        Dimensions kept (fewer when the corpus cannot give that many).
    seed : int
        Seed of the randomised SVD.

    Examples
    --------
    >>> docs = ["the cat sat on the mat", "a dog chased the cat", "stocks fell on the market",
    ...         "the market rallied as stocks rose"]
    >>> lsa = LSAEmbedder(docs, dim=2)
    >>> V = lsa(["cat and dog", "stock market"])
    >>> V.shape, V.dtype.name, lsa.name.startswith("lsa-d2-s0-")
    ((2, 2), 'float32', True)
    >>> float(np.round(V[0] @ lsa(["a cat"])[0], 2)) > float(np.round(V[1] @ lsa(["a cat"])[0], 2))
    True
    """

    def __init__(self, corpus: Sequence[str], *, dim: int = 256, seed: int = 0):
        from sklearn.decomposition import TruncatedSVD
        from sklearn.feature_extraction.text import TfidfVectorizer

        corpus = check_texts(corpus, name="corpus")
        dim = check_int(dim, name="dim", low=1, high=4096)
        seed = check_int(seed, name="seed", low=0, high=2**32 - 1)
        if sum(bool(t.strip()) for t in corpus) < 2:
            raise ValueError("corpus must hold at least 2 non-empty texts to fit an LSA space on.")
        self.vectorizer = TfidfVectorizer(ngram_range=(1, 1), sublinear_tf=True, min_df=1, dtype=np.float64)
        try:
            X = self.vectorizer.fit_transform(corpus)
        except ValueError:
            raise ValueError(
                "corpus has no words to fit on: LSA reads words of two or more letters or digits, and these "
                "texts hold none (only one-letter words, punctuation or white space)."
            ) from None
        if X.shape[1] < 2:
            raise ValueError("corpus has fewer than 2 distinct words; an LSA space needs more text.")
        k = max(1, min(dim, X.shape[0] - 1, X.shape[1] - 1))
        self.svd = TruncatedSVD(n_components=k, random_state=seed, algorithm="randomized", n_iter=5)
        from threadpoolctl import threadpool_limits  # (here: importing it sets KMP_DUPLICATE_LIB_OK in
        # os.environ, which every process the user's one starts then inherits: the MCP proxy's upstream)

        small = len(corpus) <= ONE_THREAD_CORPUS
        with threadpool_limits(1, user_api="blas") if small else contextlib.nullcontext():
            self.svd.fit(X)
        h = hashlib.sha256()
        for t in corpus:
            h.update(hashlib.sha256(t.encode("utf-8", "surrogatepass")).digest())
        self.dim = k
        self.name = f"lsa-d{k}-s{seed}-{h.hexdigest()[:16]}"

    def __call__(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """``(n, dim)`` float32 unit vectors; a text with no known word gets a fixed direction."""
        texts = check_texts(texts)
        if not texts:
            return np.empty((0, self.dim), dtype=np.float32)
        V = self.svd.transform(self.vectorizer.transform(texts))
        norms = np.linalg.norm(V, axis=1, keepdims=True)
        empty = norms[:, 0] < 1e-12
        V[empty] = 0.0
        V[empty, 0] = 1.0  # no word of the corpus: not a zero vector, which has no cosine
        norms[empty] = 1.0
        return (V / norms).astype(np.float32)
