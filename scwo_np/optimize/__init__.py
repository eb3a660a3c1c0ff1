"""The two context-optimizer pipelines of the specifications, as thin objects over array functions.

* :class:`KBContextOptimizer` — KB Labs ADR-0022: dedup, diversify, adaptive
  selection, top-k (:mod:`scwo_np.optimize.kb`).
* :class:`MoragContextOptimizer` — MoRAG's context optimizer: relevance
  filter, redundancy removal, relationships, prioritisation, budget fit,
  organisation, formatting (:mod:`scwo_np.optimize.morag`).

The ADR's array steps, usable on their own: :mod:`~scwo_np.optimize.diversify`
(spread over sources and content) and :mod:`~scwo_np.optimize.budget`
(token estimates, best-first budget fit, top-k).
"""

from .kb import KB_DEFAULTS, KBContextOptimizer, KBResult, Removal
from .morag import (
    STRATEGIES,
    ChunkRelationship,
    ContextChunk,
    MoragContextOptimizer,
    OptimizedContext,
    relationship_edges,
)

__all__ = [
    "KB_DEFAULTS",
    "STRATEGIES",
    "ChunkRelationship",
    "ContextChunk",
    "KBContextOptimizer",
    "KBResult",
    "MoragContextOptimizer",
    "OptimizedContext",
    "Removal",
    "relationship_edges",
]
