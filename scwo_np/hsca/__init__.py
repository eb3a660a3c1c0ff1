"""HSCA: hierarchical semantic compression with adaptive context windowing.

The specification's interface types (:class:`WeightedChunk`,
:class:`ContextSnapshot`, :class:`DomainTag`, :class:`NuanceFlag`), Layer 1
relational weighting (:func:`relational_weights`, :func:`beat_weights`, on
:func:`tokenize`, with a background word-association model), Layer 2 domains and
coherence (:func:`domain_tags`, :func:`domain_scores`, :func:`coherence`,
:func:`verse_form`), Layer 3 nuance flags (:func:`nuance_flags`), the engine with
snapshots and structural queries (:class:`HSCAEngine`), the context the map surfaces
within a token budget (:meth:`HSCAEngine.context`, :class:`HSCAContext`,
:class:`ContextPiece`), sessions, a SQLite
snapshot store and cross-session aggregation (:class:`SessionState`,
:class:`SnapshotStore`, :func:`support_strength`) and self-tuning (:class:`Tuner`).
The evals (1-7) and their test sets live in the source tree, not in the package:
``python -m scwo_evals.hsca``.

The lexicons and layer 1's background statistics come from permissive sources
(``scwo_np.bundled``), or from the optional ``scwo-np-gpl-data`` package when it is
installed (``SCWO_NP_HSCA_DATA=bundled`` turns it off); :data:`DATA_SOURCE` says which.
"""

from ._context import ContextPiece, HSCAContext
from ._data import DATA_SOURCE
from ._engine import HSCAEngine
from ._layer1 import beat_weights, relational_weights, tokenize
from ._layer2 import coherence, domain_scores, domain_tags, verse_form
from ._layer3 import nuance_flags
from ._store import SessionState, SnapshotStore, support_strength
from ._tuning import Tuner
from ._types import ContextSnapshot, DomainTag, NuanceFlag, WeightedChunk

__all__ = [
    "DATA_SOURCE",
    "ContextPiece",
    "ContextSnapshot",
    "DomainTag",
    "HSCAContext",
    "HSCAEngine",
    "NuanceFlag",
    "SessionState",
    "SnapshotStore",
    "Tuner",
    "WeightedChunk",
    "beat_weights",
    "coherence",
    "domain_scores",
    "domain_tags",
    "nuance_flags",
    "relational_weights",
    "support_strength",
    "tokenize",
    "verse_form",
]
