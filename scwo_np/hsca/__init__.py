"""HSCA: hierarchical semantic compression with adaptive context windowing (in progress).

Done so far: the specification's interface types (:mod:`scwo_np.hsca.types`)
and Layer 1, relational weighting (:mod:`scwo_np.hsca.layer1`).
"""

from .layer1 import relational_weights, tokenize
from .types import ContextSnapshot, DomainTag, NuanceFlag, WeightedChunk

__all__ = ["ContextSnapshot", "DomainTag", "NuanceFlag", "WeightedChunk", "relational_weights", "tokenize"]
