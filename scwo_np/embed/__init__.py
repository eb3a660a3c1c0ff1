"""Embedders for text in, and a cache so that nothing is embedded twice.

An embedder is any callable ``texts -> (n, d) array`` with a ``name``
(:class:`Embedder`); :func:`embed_texts` calls one and checks what it returns;
:class:`EmbeddingCache` stores vectors in one SQLite file; :class:`LSAEmbedder` is
the embedder that needs nothing beyond scikit-learn; :class:`MiniLMEmbedder` is
all-MiniLM-L6-v2, offline (the ``embed`` extra);
:func:`~scwo_np.embed.as_embedder` turns an ``embedder=`` argument (a name or a
callable) into an embedder, behind the user's embedding cache
(:func:`user_embedding_cache`, a SQLite file in the user cache folder) for ``"minilm"``:
vectors of a named model are computed once per user, not once per call
(:class:`CachedEmbedder`; ``cache=False`` or ``SCWO_NP_EMBEDDING_CACHE=off`` opts out).
"""

from ._base import (
    Embedder,
    embed_pieces,
    embed_query,
    embed_texts,
    embedder_name,
    quantize_pieces,
)
from ._cache import CACHE_ON_ERROR, EmbeddingCache
from ._default import DEFAULT_MAX_MB, CachedEmbedder, embedding_cache_path, user_embedding_cache
from ._lsa import LSAEmbedder
from ._minilm import MiniLMEmbedder
from ._resolve import EMBEDDERS, as_embedder

__all__ = [
    "CACHE_ON_ERROR",
    "DEFAULT_MAX_MB",
    "EMBEDDERS",
    "as_embedder",
    "CachedEmbedder",
    "Embedder",
    "EmbeddingCache",
    "embedding_cache_path",
    "user_embedding_cache",
    "LSAEmbedder",
    "MiniLMEmbedder",
    "embed_pieces",
    "quantize_pieces",
    "embed_query",
    "embed_texts",
    "embedder_name",
]
