"""Embedders for text in, and a cache so that nothing is embedded twice.

An embedder is any callable ``texts -> (n, d) array`` with a ``name``
(:class:`Embedder`); :func:`embed_texts` calls one and checks what it returns;
:class:`EmbeddingCache` stores vectors in one SQLite file; :class:`LSAEmbedder` is
the embedder that needs nothing beyond scikit-learn; :class:`MiniLMEmbedder` is
all-MiniLM-L6-v2, offline (the ``embed`` extra);
:func:`~scwo_np.embed.as_embedder` turns an ``embedder=`` argument (a name or a
callable) into an embedder.
"""

from ._base import Embedder, embed_texts, embedder_name
from ._cache import EmbeddingCache
from ._lsa import LSAEmbedder
from ._minilm import MiniLMEmbedder
from ._resolve import EMBEDDERS, as_embedder

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
