"""The background word-association model of layer 1 and coherence.

Which ordered pairs of adjacent English words are *associations*: seen at
least twice next to each other in a background corpus of 9.1 million
words (GCIDE, FOLDOC, the Jargon File, WordNet definitions and the Python
documentation, all from Debian packages) and more often than chance (positive
pointwise mutual information).  Built offline by
``tools/build_data/build_background.py`` and installed as
``scwo_np.bundled/hsca/background.npz`` (words, then CSR rows of follower ids);
see ``data/README.md`` for the sources, their licences and what was kept out.

Loaded once per process, on first use (about 40 ms).
"""

from __future__ import annotations

import threading
from typing import NamedTuple

import numpy as np
from numba import njit
from numpy.typing import NDArray

from .._config import JIT
from ._data import data_file

__all__ = ["Background", "background", "is_association"]


class Background(NamedTuple):
    """Word ids and the association table: the followers of word ``a`` are ``indices[indptr[a]:indptr[a + 1]]``."""

    vocab: dict[str, int]
    indptr: NDArray[np.int32]
    indices: NDArray[np.int32]


_LOCK = threading.Lock()
_MODEL: list[Background] = []


def background() -> Background:
    """The installed association model (loaded once, then shared)."""
    if not _MODEL:
        with _LOCK:
            if not _MODEL:
                path = data_file("background.npz")
                with path.open("rb") as fh, np.load(fh) as z:
                    words = z["words"].tobytes().decode("utf-8").split("\n")
                    indptr = z["indptr"]
                    indices = z["indices"]
                _MODEL.append(Background(dict(zip(words, range(len(words)), strict=True)), indptr, indices))
    return _MODEL[0]


@njit(**JIT)
def _is_association(indptr, indices, a, b):
    """Whether ``b`` follows ``a`` in the table (binary search in row ``a``)."""
    lo = indptr[a]
    hi = indptr[a + 1]
    while lo < hi:
        mid = (lo + hi) // 2
        v = indices[mid]
        if v == b:
            return True
        if v < b:
            lo = mid + 1
        else:
            hi = mid
    return False


def is_association(first: str, second: str) -> bool:
    """Whether real English puts ``second`` right after ``first`` more often than chance.

    Examples
    --------
    >>> is_association("supreme", "court"), is_association("court", "supreme")
    (True, False)
    """
    bg = background()
    a = bg.vocab.get(first.lower(), -1)
    b = bg.vocab.get(second.lower(), -1)
    return a >= 0 and b >= 0 and bool(_is_association(bg.indptr, bg.indices, a, b))
