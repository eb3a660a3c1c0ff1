"""Moved: the position learner is :mod:`scwo_np.anchor.learning` (import it from :mod:`scwo_np.anchor`).

This alias keeps ``from scwo_np.learning import PositionLearner``, which the
README of 0.1 showed, working; it warns once and will go in 0.3.
"""

import warnings

from .anchor.learning import BUCKETS, PositionLearner, PositionRetrievalPattern, classify_position

warnings.warn(
    "scwo_np.learning moved to scwo_np.anchor: use `from scwo_np.anchor import PositionLearner`.",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = ["BUCKETS", "PositionLearner", "PositionRetrievalPattern", "classify_position"]
