"""``embedder=`` arguments by name: ``"lsa"``, ``"minilm"``, or any callable; cached by default where it pays."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from .._registry import Registry
from ._base import embedder_name
from ._cache import EmbeddingCache
from ._default import CachedEmbedder

__all__ = ["EMBEDDERS", "as_embedder"]


def _lsa(corpus: Sequence[str]) -> Callable:
    from ._lsa import LSAEmbedder

    return LSAEmbedder(list(corpus))


def _minilm(corpus: Sequence[str]) -> Callable:
    from ._minilm import MiniLMEmbedder

    return MiniLMEmbedder()


#: Registry of embedders by name, wherever an ``embedder=`` is (and ``scwo select --embedder``):
#: name -> a function of the corpus (the texts at hand and the query) that makes the embedder.
EMBEDDERS: Registry[Callable[[Sequence[str]], Callable]] = Registry(
    "embedder", {"lsa": _lsa, "minilm": _minilm}
)


def as_embedder(
    embedder: object,
    corpus: Sequence[str] = (),
    *,
    cache: EmbeddingCache | str | os.PathLike | bool | None = None,
) -> Callable:
    """The embedder an ``embedder=`` argument names, behind the embedding cache it should use.

    ``"lsa"`` is an :class:`~scwo_np.embed.LSAEmbedder` fitted on ``corpus``
    (the texts at hand and the query), ``"minilm"`` a
    :class:`~scwo_np.embed.MiniLMEmbedder`; a callable is returned as it is
    (after checking it has a usable name).

    By default (``cache=None``) an embedder whose ``cache_by_default`` is True
    (``"minilm"``, any ``MiniLMEmbedder``) comes back as a :class:`~scwo_np.embed.CachedEmbedder`
    over the user's embedding cache (:func:`~scwo_np.embed.user_embedding_cache`: its vectors
    are kept on disk between runs and processes); ``"lsa"`` and other callables are not cached.
    The model itself is loaded once per process whatever ``cache`` says.

    Parameters
    ----------
    embedder : str or callable
        ``"lsa"``, ``"minilm"`` (the names of ``EMBEDDERS``), or a callable ``texts -> (n, d) array``.
    corpus : sequence of str
        The texts an LSA embedder is fitted on.
    cache : None, False, EmbeddingCache or path
        None: the user cache for an embedder cached by default; False: no cache (the bare
        embedder, also unwrapped from a ``CachedEmbedder``); an
        :class:`~scwo_np.embed.EmbeddingCache` or the path of its file: that cache, for any
        embedder.

    Returns
    -------
    callable
        An embedder: ``texts -> (n, d) array``, with a ``name``.

    Examples
    --------
    >>> as_embedder("lsa", ["the cat sat", "the dog ran", "a cat and a dog"]).name[:6]
    'lsa-d2'
    >>> as_embedder("bert")
    Traceback (most recent call last):
    ...
    ValueError: embedder must be one of 'lsa', 'minilm'; got 'bert'. Pass one of those names or a callable texts -> (n, d) array.
    """
    if cache is not None and not isinstance(cache, EmbeddingCache | str | os.PathLike | bool):
        raise TypeError(
            "cache must be None (the user cache, for embedders cached by default), False (no cache), an "
            f"EmbeddingCache or the path of its file; got {type(cache).__name__}."
        )
    if cache is True:
        cache = None
    if isinstance(embedder, str):
        make = EMBEDDERS.lookup(embedder, hint="Pass one of those names or a callable texts -> (n, d) array.")
        try:
            emb = make(corpus)
        except ValueError as exc:
            if embedder != "lsa" or "corpus" not in str(exc):
                raise
            raise ValueError(  # an LSA space is fitted on texts: say where they go
                f"{exc} as_embedder('lsa', corpus) fits the space on corpus: pass the texts you will embed "
                "(or a sample of their kind), or use 'minilm'."
            ) from None
    else:
        embedder_name(embedder)  # a TypeError naming the problem when it is not a usable callable
        emb = embedder
    if isinstance(emb, CachedEmbedder):
        if cache is None:
            return emb
        emb = emb.embedder
    if cache is False:
        return emb  # type: ignore[return-value]
    if cache is None:
        return CachedEmbedder(emb) if getattr(emb, "cache_by_default", False) is True else emb  # type: ignore[return-value]
    if isinstance(cache, str | os.PathLike):
        cache = EmbeddingCache(cache)
    return CachedEmbedder(emb, cache)
