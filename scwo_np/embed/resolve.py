"""``embedder=`` arguments by name: ``"lsa"``, ``"minilm"``, or any callable."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .base import embedder_name

__all__ = ["EMBEDDERS", "as_embedder"]

#: Embedder names accepted wherever an ``embedder=`` is (and by ``scwo select --embedder``).
EMBEDDERS = ("lsa", "minilm")


def as_embedder(embedder: object, corpus: Sequence[str] = ()) -> Callable:
    """The embedder an ``embedder=`` argument names.

    ``"lsa"`` is an :class:`~scwo_np.embed.LSAEmbedder` fitted on ``corpus``
    (the texts at hand and the query), ``"minilm"`` a
    :class:`~scwo_np.embed.MiniLMEmbedder`; a callable is returned as it is
    (after checking it has a usable name).

    Examples
    --------
    >>> as_embedder("lsa", ["the cat sat", "the dog ran", "a cat and a dog"]).name[:6]
    'lsa-d2'
    >>> as_embedder("bert")
    Traceback (most recent call last):
    ...
    ValueError: embedder 'bert' is not one of lsa, minilm; pass one of those names or a callable texts -> (n, d) array.
    """
    if isinstance(embedder, str):
        if embedder == "lsa":
            from .lsa import LSAEmbedder

            return LSAEmbedder(list(corpus))
        if embedder == "minilm":
            from .minilm import MiniLMEmbedder

            return MiniLMEmbedder()
        raise ValueError(
            f"embedder {embedder!r} is not one of {', '.join(EMBEDDERS)}; pass one of those names or a "
            "callable texts -> (n, d) array."
        )
    embedder_name(embedder)  # a TypeError naming the problem when it is not a usable callable
    return embedder  # type: ignore[return-value]
