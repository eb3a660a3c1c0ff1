"""``embedder=`` arguments by name: ``"lsa"``, ``"minilm"``, or any callable."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .._registry import Registry
from ._base import embedder_name

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


def as_embedder(embedder: object, corpus: Sequence[str] = ()) -> Callable:
    """The embedder an ``embedder=`` argument names.

    ``"lsa"`` is an :class:`~scwo_np.embed.LSAEmbedder` fitted on ``corpus``
    (the texts at hand and the query), ``"minilm"`` a
    :class:`~scwo_np.embed.MiniLMEmbedder`; a callable is returned as it is
    (after checking it has a usable name).

    Parameters
    ----------
    embedder : str or callable
        ``"lsa"``, ``"minilm"`` (the names of ``EMBEDDERS``), or a callable ``texts -> (n, d) array``.
    corpus : sequence of str
        The texts an LSA embedder is fitted on.

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
    if isinstance(embedder, str):
        return EMBEDDERS.lookup(
            embedder, hint="Pass one of those names or a callable texts -> (n, d) array."
        )(corpus)
    embedder_name(embedder)  # a TypeError naming the problem when it is not a usable callable
    return embedder  # type: ignore[return-value]
