"""HSCA: hierarchical semantic compression with adaptive context windowing.

The specification's interface types (:mod:`~scwo_np.hsca.types`), Layer 1
relational weighting (:mod:`~scwo_np.hsca.layer1`, with its background
word-association model :mod:`~scwo_np.hsca.background`), Layer 2 domains and
coherence (:mod:`~scwo_np.hsca.layer2`), Layer 3 nuance flags
(:mod:`~scwo_np.hsca.layer3`), the engine with snapshots and structural
queries (:mod:`~scwo_np.hsca.engine`), sessions, a SQLite snapshot store and
cross-session aggregation (:mod:`~scwo_np.hsca.store`) and self-tuning
(:mod:`~scwo_np.hsca.tuning`).  The evals (1-7) and their test sets live in the
source tree, not in the package: ``python -m scwo_evals.hsca``.
"""

from .engine import HSCAEngine
from .layer1 import relational_weights, tokenize
from .layer2 import coherence, domain_tags, verse_form
from .layer3 import nuance_flags
from .store import SessionState, SnapshotStore, support_strength
from .tuning import Tuner
from .types import ContextSnapshot, DomainTag, NuanceFlag, WeightedChunk

__all__ = [
    "ContextSnapshot",
    "DomainTag",
    "HSCAEngine",
    "NuanceFlag",
    "SessionState",
    "SnapshotStore",
    "Tuner",
    "WeightedChunk",
    "coherence",
    "domain_tags",
    "nuance_flags",
    "relational_weights",
    "support_strength",
    "tokenize",
    "verse_form",
]
