"""The embedder protocol: any callable ``texts -> (n, d) float array``, with a ``name`` for caches.

An embedder takes a list of ``n`` strings and returns their vectors as an
``(n, d)`` array (any float dtype; it is checked and converted to float32 by
:func:`embed_texts`).  Its ``name`` attribute keys the embedding cache
(:class:`~scwo_np.embed.EmbeddingCache`), so two embedders with the same name must
give the same vectors.  A plain function works too, then its qualified name is
used.  So does a LangChain ``Embeddings`` object's bound ``embed_documents`` or
a lambda around an API client::

    emb = OpenAIEmbeddings(model="text-embedding-3-small")   # any LangChain Embeddings
    vectors = embed_texts(emb.embed_documents, ["a", "b"])   # name: "OpenAIEmbeddings.embed_documents"

Give a lambda a ``name`` (``f.name = "my-model-v2"``) before caching its output:
every lambda has the same qualified name.

A model that embeds questions differently from passages (LangChain's ``embed_query``, the
"query:" prefix of E5 models, sentence-transformers' ``encode_query``) can say so: an
embedder with an ``embed_query(text) -> vector`` method has its questions embedded by it
(:func:`embed_query`), and its texts by the call.

A transformer reads a text as word pieces and has an output vector for each.  An embedder with
an ``embed_pieces(texts) -> (vectors, pieces)`` method gives them (:func:`embed_pieces`;
:class:`~scwo_np.embed.MiniLMEmbedder` does, from the same pass as its vectors), and
:func:`~scwo_np.select_texts` then also matches the question's pieces to each text's, as
ColBERT's late interaction does.  Nothing else needs them: any embedder without the method
works as before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..validation import check_embeddings, check_int, check_text, check_texts

__all__ = [
    "Embedder",
    "embed_pieces",
    "embed_query",
    "embedder_name",
    "embed_texts",
    "quantize_pieces",
]


@runtime_checkable
class Embedder(Protocol):
    """What scwo_np calls an embedder: ``name`` and ``__call__(texts) -> (n, d) array``.

    Examples
    --------
    Any function with a ``name`` is one:

    >>> def bag_of_letters(texts):
    ...     return [[t.count("a") + 1.0, t.count("e") + 1.0] for t in texts]
    >>> bag_of_letters.name = "letters-v1"
    >>> isinstance(bag_of_letters, Embedder)
    True
    """

    name: str

    def __call__(self, texts: Sequence[str]) -> NDArray[np.floating]: ...


def embedder_name(embedder: object) -> str:
    """The cache name of an embedder: its ``name`` attribute, else the callable's qualified name.

    Parameters
    ----------
    embedder : callable
        The embedder.

    Returns
    -------
    str
        The name its vectors are cached under.

    Examples
    --------
    >>> def my_model(texts):
    ...     return [[1.0, 0.0] for _ in texts]
    >>> embedder_name(my_model)
    'my_model'
    >>> my_model.name = "my-model-v2"
    >>> embedder_name(my_model)
    'my-model-v2'
    """
    if not callable(embedder):
        raise TypeError(f"embedder must be callable (texts -> (n, d) array); got {type(embedder).__name__}.")
    name = getattr(embedder, "name", None)
    if isinstance(name, str) and name:
        return name
    if name is not None and not isinstance(name, str):
        raise TypeError(f"embedder.name must be a str; got {type(name).__name__}.")
    # A bound method's qualified name includes its class ("OpenAIEmbeddings.embed_documents");
    # an object with __call__ but no __qualname__ is named by its type.
    return getattr(embedder, "__qualname__", None) or type(embedder).__qualname__


def embed_texts(embedder: Callable[[list[str]], object], texts: Sequence[str]) -> NDArray[np.float32]:
    """Call ``embedder`` on ``texts`` and check what it returns: ``(len(texts), d)``, finite, float32.

    An embedder that returns the wrong number of rows, a ragged or non-numeric
    result, NaN or inf, or zero vectors is a ``ValueError`` naming it; nothing
    it returns is trusted unchecked.

    Parameters
    ----------
    embedder : callable
        ``texts -> (n, d) array`` (see :class:`Embedder`).
    texts : sequence of str
        The texts to embed.

    Returns
    -------
    numpy.ndarray
        ``(len(texts), d)`` float32, finite, no zero rows.

    Examples
    --------
    >>> embed_texts(lambda ts: [[len(t), 1.0] for t in ts], ["ab", "abc"])
    array([[2., 1.],
           [3., 1.]], dtype=float32)
    >>> embed_texts(lambda ts: [[1.0, 2.0]], ["a", "b"])
    Traceback (most recent call last):
    ...
    ValueError: embedder <lambda> returned 1 row(s) for 2 text(s); it must return one vector per text.
    """
    name = embedder_name(embedder)
    texts = check_texts(texts)
    if not texts:
        return np.empty((0, 0), dtype=np.float32)
    out = embedder(list(texts))
    try:
        arr = np.asarray(out, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"embedder {name} returned something that is not a numeric (n, d) array "
            f"({type(out).__name__}); it must return one vector of floats per text."
        ) from None
    if arr.ndim != 2:
        raise ValueError(f"embedder {name} returned an array of shape {arr.shape}; it must be (n, d).")
    if arr.shape[0] != len(texts):
        raise ValueError(
            f"embedder {name} returned {arr.shape[0]} row(s) for {len(texts)} text(s); "
            "it must return one vector per text."
        )
    if arr.shape[1] == 0:
        raise ValueError(f"embedder {name} returned vectors of length 0.")
    with np.errstate(over="ignore"):
        arr = arr.astype(np.float32)  # beyond float32's range is inf, and refused below
    bad = ~np.isfinite(arr).all(axis=1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"embedder {name} returned NaN or inf for texts[{i}] ({texts[i][:40]!r}).")
    zero = ~arr.any(axis=1)
    if zero.any():
        i = int(np.flatnonzero(zero)[0])
        raise ValueError(
            f"embedder {name} returned a zero vector for texts[{i}] ({texts[i][:40]!r}); "
            "a cosine needs a direction."
        )
    return arr


def embed_pieces(
    embedder: Callable[[list[str]], object], texts: Sequence[str]
) -> tuple[NDArray[np.float32], list[NDArray[np.float32]]] | None:
    """The texts' vectors and their word pieces' vectors, or None for an embedder without pieces.

    An embedder that can say how each piece of a text was read (a transformer's token outputs,
    what ColBERT matches late) has an ``embed_pieces(texts) -> (vectors, pieces)`` method:
    :class:`~scwo_np.embed.MiniLMEmbedder` has, from the same pass of the model as its
    vectors, and a :class:`~scwo_np.embed.CachedEmbedder` keeps them beside the vectors.
    :func:`~scwo_np.select_texts` then matches each of the question's pieces to the nearest
    piece of each text.  Any other embedder gives None, and nothing else changes.

    Each piece is scaled to unit length (a zero piece stays zero), so that its dot with another
    is their cosine whatever the embedder's scale, and kept to 8 bits: its values are rounded to
    a multiple of a power of two (:func:`quantize_pieces`), so a piece read from a cache is the
    same, bit for bit, as one just computed, and a cached text costs a quarter of the bytes of
    float32.

    Parameters
    ----------
    embedder : callable
        ``texts -> (n, d) array`` (see :class:`Embedder`), optionally with ``embed_pieces``.
    texts : sequence of str
        The texts.

    Returns
    -------
    tuple of (ndarray, list of ndarray) or None
        The ``(n, d)`` float32 vectors (checked as :func:`embed_texts` checks them) and, for
        each text, its ``(m_i, d)`` float32 piece vectors, unit rows rounded to 8 bits (a text
        may have none); None when the embedder has no ``embed_pieces`` or it returns None.

    Examples
    --------
    >>> embed_pieces(lambda ts: [[1.0, 0.0] for t in ts], ["a"]) is None
    True
    >>> class Pieces:
    ...     name = "toy-pieces"
    ...     def __call__(self, texts):
    ...         return [[1.0, len(t)] for t in texts]
    ...     def embed_pieces(self, texts):
    ...         return self(texts), [[[3.0, 4.0]] * len(t.split()) for t in texts]
    >>> V, P = embed_pieces(Pieces(), ["a b", "c"])
    >>> V.tolist(), [p.shape for p in P], P[1].tolist()
    ([[1.0, 3.0], [1.0, 1.0]], [(2, 2), (1, 2)], [[0.6015625, 0.796875]])
    """
    texts = check_texts(texts)
    one = getattr(embedder, "embed_pieces", None)
    got = one(list(texts)) if callable(one) else None
    if got is None:
        return None
    if getattr(type(embedder), "_checked_pieces", False):  # a cache's: checked when first embedded
        return got
    name = embedder_name(embedder)
    if not isinstance(got, tuple | list) or len(got) != 2:
        raise ValueError(
            f"{name}.embed_pieces must return a pair (vectors, pieces) or None; got {type(got).__name__}."
        )
    vectors, pieces = got
    V = embed_texts(_Given(name, vectors), texts)
    if isinstance(pieces, str | bytes) or not isinstance(pieces, Sequence | np.ndarray):
        raise ValueError(
            f"{name}.embed_pieces returned pieces as {type(pieces).__name__}; it must return a list of "
            "one (m, d) array per text."
        )
    if len(pieces) != len(texts):
        raise ValueError(
            f"{name}.embed_pieces returned pieces of {len(pieces)} text(s) for {len(texts)}; it must "
            "return one (m, d) array per text."
        )
    d, out = V.shape[1], []
    for i, p in enumerate(pieces):
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                P = np.asarray(p, dtype=np.float32)
        except (TypeError, ValueError):  # ragged, or not numbers
            P = None
        if P is None or (P.size and (P.ndim != 2 or P.shape[1] != d)) or not np.isfinite(P).all():
            what = "not an array of numbers" if P is None else f"of shape {P.shape}"
            what += "" if P is None or np.isfinite(P).all() else ", with NaN or inf"
            raise ValueError(
                f"{name}.embed_pieces returned pieces for {texts[i][:40]!r} {what}: a text's pieces must be "
                f"finite (m, {d}) vectors, as long as its vector."
            )
        P = P.reshape(-1, d)
        norms = np.sqrt(np.einsum("ij,ij->i", P.astype(np.float64), P.astype(np.float64)))
        P = (P / np.where(norms > 0, norms, 1.0)[:, None]).astype(np.float32)  # unit rows: dots are cosines
        out.append(_dequantize(*_quantize(P)))
    return V, out


def quantize_pieces(pieces: ArrayLike, d: int) -> tuple[NDArray[np.int8], NDArray[np.int8]]:
    """Piece vectors to 8 bits: ``(exponents, codes)`` with ``pieces ≈ codes * 2.0**exponents[:, None]``.

    Each row's scale is the smallest power of two ``s`` with ``max|row| <= 127 * s``, and its
    codes are ``round(row / s)``: an error of at most half a code, below 1/127 of the row's
    largest value (a row whose largest value is below ``2**-121``, past float32's normal range,
    keeps the scale ``2**-128`` and loses more; values past ``127 * 2**121``, near float32's
    largest, are clipped to it).  The rounding is idempotent: rounded pieces round to
    themselves, so pieces stored and read back are the same bits.  What
    :func:`embed_pieces` and the embedding cache keep of each piece.

    Parameters
    ----------
    pieces : array_like, shape (m, d)
        Finite piece vectors (``m`` may be 0).
    d : int
        Their length.

    Returns
    -------
    exponents : ndarray of int8, shape (m,)
        Each row's power of two.
    codes : ndarray of int8, shape (m, d)
        The rounded values over it.

    Examples
    --------
    >>> e, c = quantize_pieces([[1.0, 0.3], [0.0, 0.0]], 2)
    >>> e.tolist(), c.tolist(), (c * 2.0 ** e[:, None]).tolist()
    ([-6, 0], [[64, 19], [0, 0]], [[1.0, 0.296875], [0.0, 0.0]])
    """
    d = check_int(d, name="d", low=1)
    if isinstance(pieces, list | tuple | np.ndarray) and len(pieces) == 0:  # a text with no piece
        return np.empty(0, dtype=np.int8), np.empty((0, d), dtype=np.int8)
    arr = check_embeddings(pieces, name="pieces")  # numbers, 2-D: a TypeError or ValueError naming it
    if arr.shape[1] != d:
        raise ValueError(f"pieces must have shape (m, d) with d={d}; got shape {arr.shape}.")
    with np.errstate(over="ignore", invalid="ignore"):
        P = arr.astype(np.float32)
    if not np.isfinite(P).all():
        raise ValueError("pieces hold NaN or inf (or values too large for float32); they must be finite.")
    return _quantize(P)


def _quantize(P: NDArray[np.float32]) -> tuple[NDArray[np.int8], NDArray[np.int8]]:
    """:func:`quantize_pieces` of a finite 2-D float32 array, unchecked."""
    if not P.size:
        return np.empty(0, dtype=np.int8), np.empty(P.shape, dtype=np.int8)
    top = np.abs(P).max(axis=1)
    with np.errstate(divide="ignore"):
        exps = np.where(top > 0, np.ceil(np.log2(top / 127.0)), 0.0)
    exps = np.clip(exps, -128, 121)  # int8, and 127 * 2**121 below float32's largest
    codes = np.clip(np.rint(np.ldexp(P, -exps[:, None].astype(np.int32))), -127, 127)
    return exps.astype(np.int8), codes.astype(np.int8)


def _dequantize(exponents: NDArray[np.int8], codes: NDArray[np.int8]) -> NDArray[np.float32]:
    """``codes * 2.0**exponents[:, None]`` as float32, exactly (the inverse of :func:`quantize_pieces`)."""
    out = codes.astype(np.float32)
    out *= np.ldexp(np.float32(1.0), exponents.astype(np.int32))[:, None]  # a power of two: exact
    return out


class _Given:
    """Vectors already computed, as an embedder, so that :func:`embed_texts` checks them."""

    def __init__(self, name: str, vectors: object) -> None:
        self.name, self.vectors = f"{name}.embed_pieces", vectors

    def __call__(self, texts: Sequence[str]) -> object:
        return self.vectors


class _QueryModel:
    """An embedder's ``embed_query`` as an embedder of its own, so its output is checked as any."""

    def __init__(self, embedder: object, embed_one: Callable[[str], object]) -> None:
        self.name = f"{embedder_name(embedder)}.embed_query"
        self.embed_one = embed_one

    def __call__(self, texts: Sequence[str]) -> list[object]:
        return [self.embed_one(t) for t in texts]


def embed_query(embedder: Callable[[list[str]], object], query: str) -> NDArray[np.float32]:
    """The question's vector: by ``embedder.embed_query`` when it has one, else as a text.

    Parameters
    ----------
    embedder : callable
        ``texts -> (n, d) array`` (see :class:`Embedder`), optionally with an
        ``embed_query(text) -> (d,) vector`` method for questions.
    query : str
        The question.

    Returns
    -------
    numpy.ndarray
        ``(d,)`` float32, finite and non-zero (checked as :func:`embed_texts` checks).

    Examples
    --------
    >>> class Asymmetric:
    ...     name = "toy-e5"
    ...     def __call__(self, texts):
    ...         return [[1.0, len(t)] for t in texts]
    ...     def embed_query(self, text):
    ...         return [2.0, len(text)]
    >>> embed_query(Asymmetric(), "why?")
    array([2., 4.], dtype=float32)
    >>> embed_query(lambda ts: [[1.0, len(t)] for t in ts], "why?")
    array([1., 4.], dtype=float32)
    """
    query = check_text(query, name="query")
    one = getattr(embedder, "embed_query", None)
    model = _QueryModel(embedder, one) if callable(one) else embedder
    return embed_texts(model, [query])[0]
