"""The two context-optimizer pipelines of the specifications, as thin objects over array functions.

* :class:`KBContextOptimizer` — KB Labs ADR-0022: dedup, diversify, adaptive
  selection, top-k.
* :class:`MoragContextOptimizer` — MoRAG's context optimizer: relevance
  filter, redundancy removal, relationships (:func:`relationship_edges`),
  prioritisation, budget fit, organisation (``MORAG_LAYOUTS``), formatting.

The ADR's array steps, usable on their own: :func:`diversify` (spread over
sources and content), :func:`estimate_tokens`, :func:`best_first`,
:func:`fit_budget` (best-first budget fit) and :func:`top_k`.
"""

from ..validation import renamed_attributes
from ._budget import FIT_MODES, best_first, estimate_tokens, fit_budget, top_k
from ._diversify import Diversified, diversify
from ._kb import KB_CAMEL_CASE, KB_DEFAULTS, KB_SELECTIONS, KBContextOptimizer, KBResult, Removal
from ._morag import (
    MORAG_LAYOUTS,
    RELATIONSHIP_TYPES,
    ChunkRelationship,
    ContextChunk,
    MoragContextOptimizer,
    OptimizedContext,
    relationship_edges,
)

__all__ = [
    "KB_CAMEL_CASE",
    "FIT_MODES",
    "KB_DEFAULTS",
    "KB_SELECTIONS",
    "RELATIONSHIP_TYPES",
    "MORAG_LAYOUTS",
    "ChunkRelationship",
    "ContextChunk",
    "Diversified",
    "KBContextOptimizer",
    "KBResult",
    "MoragContextOptimizer",
    "OptimizedContext",
    "Removal",
    "best_first",
    "diversify",
    "estimate_tokens",
    "fit_budget",
    "relationship_edges",
    "top_k",
]

__getattr__ = renamed_attributes(__name__, {"STRATEGIES": "MORAG_LAYOUTS"})
