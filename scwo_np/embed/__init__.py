"""Embedders for text in, and a cache so that nothing is embedded twice.

:mod:`~scwo_np.embed.base` defines what an embedder is (any callable
``texts -> (n, d) array`` with a ``name``) and checks what it returns;
:mod:`~scwo_np.embed.cache` stores vectors in one SQLite file;
:mod:`~scwo_np.embed.lsa` is the embedder that needs nothing beyond scikit-learn;
:mod:`~scwo_np.embed.minilm` is all-MiniLM-L6-v2, offline (the ``embed`` extra);
:func:`~scwo_np.embed.as_embedder` turns an ``embedder=`` argument (a name or a
callable) into an embedder.
"""

from .base import Embedder, embed_texts, embedder_name
from .cache import EmbeddingCache
from .lsa import LSAEmbedder
from .minilm import MiniLMEmbedder
from .resolve import EMBEDDERS, as_embedder

__all__ = [
    "EMBEDDERS",
    "as_embedder",
    "Embedder",
    "EmbeddingCache",
    "LSAEmbedder",
    "MiniLMEmbedder",
    "embed_texts",
    "embedder_name",
]
