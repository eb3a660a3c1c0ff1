"""The anchoring configuration, the data patterns, and the result types."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from .._registry import Registry
from ..validation import check_int, check_positive_float, check_texts, check_unit_interval

#: Registry of data patterns (``pattern=``): name -> default (front, back, middle) anchor weights.
#: ``AnchorConfig(strategy=)``: how the kept slots are placed -> what it does.
ANCHOR_STRATEGIES: Registry[str] = Registry(
    "strategy",
    {
        "dynamic": "slots placed by the array's pattern, what must be kept first (the default)",
        "static": "the first 3 and the last 2 items, as the spec's baseline",
    },
)

#: ``crush(protect_overflow=)``: what happens when the protected items alone exceed the size.
PROTECT_OVERFLOWS: Registry[str] = Registry(
    "protect_overflow",
    {"error": "a ValueError saying how many are protected (the default)", "keep": "keep them all anyway"},
)

PATTERNS: Registry[tuple[float, float, float]] = Registry(
    "pattern",
    {
        "search_results": (0.8, 0.2, 0.0),  # FRONT_HEAVY: ranked by relevance
        "logs": (0.2, 0.8, 0.0),  # BACK_HEAVY: recent entries matter
        "time_series": (0.5, 0.5, 0.0),  # BALANCED: both ends for the trend
        "generic": (0.3, 0.3, 0.4),  # MIDDLE_AWARE: order may be arbitrary
    },
)


@dataclass
class AnchorConfig:
    """The plan's configuration schema, with its defaults, plus what it left open.

    ``strategy="static"`` is today's rule: the first 3 and last 2 items as
    anchors (the rest of the budget by even spacing; errors, anomalies and
    query matches are still kept).  ``size_scaling`` grows the anchor budget
    with ``log10(n / max_items)``: the plan's test expects more anchors for
    larger arrays at the same ``max_items``, which its budget formula alone
    does not give.

    Parameters
    ----------
    anchor_budget_pct : float
        Share of ``max_items`` given to position anchors, in [0, 1].
    min_anchor_slots, max_anchor_slots : int
        Bounds on the number of anchor slots.
    default_front_weight, default_back_weight, default_middle_weight : float
        How the anchor slots split between the array's front, back and middle, when neither
        the pattern nor the query says otherwise.
    search_front_weight : float
        Front share for search results (the best hits come first).
    logs_back_weight : float
        Back share for logs (the latest entries come last).
    time_series_balance : float
        Front share for time series (both ends show the trend).
    recency_keywords, historical_keywords, range_keywords : list of str
        Query words that shift the anchors to the back, to the front, or spread them.
    use_information_density : bool
        Within a region, prefer the items that carry the most distinct values.
    candidate_multiplier : int
        Candidates per slot considered when choosing by information density.
    use_learned_positions : bool
        Use a :class:`PositionLearner`'s weights when given (``learned=``).
    min_samples_for_learning : int
        Compressions of a tool before its learned weights are used.
    strategy : {"dynamic", "static"}
        The plan's dynamic anchoring, or the old fixed rule.
    size_scaling : bool
        Grow the anchor budget with ``log10(n / max_items)``.
    anomaly_z : float
        The robust z-score above which a numeric value is an anomaly.
    keep_errors, keep_anomalies, keep_query_matches, keep_rare_categories : bool
        Which kinds of items are always kept (as far as ``max_items`` allows).
    rare_share : float
        A category value held by less than this share of the items is rare.

    Examples
    --------
    >>> from scwo_np.anchor import crush
    >>> items = [{"id": i, "status": "ok"} for i in range(100)]
    >>> crush(items, 10, config=AnchorConfig(strategy="static", keep_errors=False)).tolist()
    [0, 1, 2, 16, 32, 48, 64, 80, 98, 99]
    """

    anchor_budget_pct: float = 0.20
    min_anchor_slots: int = 3
    max_anchor_slots: int = 10
    default_front_weight: float = 0.5
    default_back_weight: float = 0.5
    default_middle_weight: float = 0.0
    search_front_weight: float = 0.8
    logs_back_weight: float = 0.8
    time_series_balance: float = 0.5
    recency_keywords: list[str] = field(
        default_factory=lambda: ["latest", "recent", "recently", "last", "newest", "current", "lately", "now"]
    )
    historical_keywords: list[str] = field(
        default_factory=lambda: ["first", "oldest", "earliest", "original", "initial", "beginning"]
    )
    range_keywords: list[str] = field(default_factory=lambda: ["all", "every", "complete", "full"])
    use_information_density: bool = True
    candidate_multiplier: int = 3
    use_learned_positions: bool = True
    min_samples_for_learning: int = 10
    strategy: str = "dynamic"
    size_scaling: bool = True
    anomaly_z: float = 3.5
    keep_errors: bool = True
    keep_anomalies: bool = True
    keep_query_matches: bool = True
    keep_rare_categories: bool = True
    rare_share: float = 0.01

    def __post_init__(self) -> None:
        ANCHOR_STRATEGIES.lookup(self.strategy)
        for name in (
            "anchor_budget_pct", "default_front_weight", "default_back_weight", "default_middle_weight",
            "search_front_weight", "logs_back_weight", "time_series_balance",
        ):  # fmt: skip
            setattr(self, name, check_unit_interval(getattr(self, name), name=name))
        for name, low in (
            ("min_anchor_slots", 0), ("max_anchor_slots", 1), ("candidate_multiplier", 1), ("min_samples_for_learning", 1)
        ):  # fmt: skip
            setattr(self, name, check_int(getattr(self, name), name=name, low=low))
        if self.min_anchor_slots > self.max_anchor_slots:
            raise ValueError(
                f"min_anchor_slots ({self.min_anchor_slots}) must not exceed max_anchor_slots ({self.max_anchor_slots})."
            )
        self.rare_share = check_unit_interval(self.rare_share, name="rare_share")
        self.anomaly_z = check_positive_float(
            self.anomaly_z, name="anomaly_z", meaning="a robust z-score cutoff"
        )
        for name in ("recency_keywords", "historical_keywords", "range_keywords"):
            setattr(self, name, check_texts(getattr(self, name), name=name))


class AnchorWeights(NamedTuple):
    """Normalised share of anchor slots for the front, back and middle of the array.

    Parameters
    ----------
    front, back, middle : float
        Non-negative shares; :meth:`normalize` makes them sum to 1.

    Examples
    --------
    >>> AnchorWeights(2.0, 1.0, 1.0).normalize()
    AnchorWeights(front=0.5, back=0.25, middle=0.25)
    """

    front: float
    back: float
    middle: float

    def normalize(self) -> AnchorWeights:
        """The same proportions, summing to 1 (front and back halves when all are 0).

        Returns
        -------
        AnchorWeights
            The normalised weights.

        Examples
        --------
        >>> AnchorWeights(0, 0, 0).normalize()
        AnchorWeights(front=0.5, back=0.5, middle=0.0)
        """
        total = self.front + self.back + self.middle
        if total <= 0:
            return AnchorWeights(0.5, 0.5, 0.0)
        return AnchorWeights(self.front / total, self.back / total, self.middle / total)


@dataclass
class CrushReport:
    """What :func:`crush` did: the pattern, the weights, the slots and the must-keep counts.

    Made by ``crush(..., report=True)``; its fields are:

    Parameters
    ----------
    n : int
        Items in the array.
    max_items : int
        The most items it could keep.
    pattern : str
        The array's pattern (one of ``PATTERNS``).
    weights : AnchorWeights
        The front, back and middle shares used.
    intents : tuple of str
        What the query asked for (``"recency"``, ``"historical"``, ``"range"``).
    anchor_slots : tuple of int
        Anchor slots at the front, back and middle; for records in time order (patterns
        ``logs`` and ``time_series``), the kept items in the oldest 30% of the timeline,
        the newest 30%, and between.
    errors, anomalies, query_matches : int
        Items kept because they are errors, anomalies, or match the query.
    must_keep_dropped : int
        Must-keep items (distinct ones) that did not fit in ``max_items``: none of their copies is kept.
    must_keep_counts : dict
        The must-keep items (distinct ones) per kind, kept or not.
    must_keep_by_kind : dict
        The ones left out, per kind: ``"query_matches"``, ``"errors"``, ``"anomalies"``, ``"rare"`` (each
        item counted in the first kind it belongs to; kinds with none left out are absent).
    learned : bool
        Whether learned position weights were used.
    passthrough : bool
        Whether the array was small enough to keep whole.
    protected : int
        Items kept because ``protect=`` matched them.
    rare : int
        Items kept because they hold a rare category value.
    columns : Columns or None
        The columns it built (None on passthrough).
    kept : ndarray of int64
        The kept indices.
    must_keep : dict
        The must-keep items of each kind, kept or not (positions, as ``must_keep_counts`` counts
        them; empty on passthrough).

    Examples
    --------
    >>> from scwo_np.anchor import crush
    >>> items = [{"id": i, "status": "error" if i == 50 else "ok"} for i in range(100)]
    >>> idx, report = crush(items, 10, report=True)
    >>> report.errors, report.pattern, len(report.kept) <= 10
    (1, 'generic', True)
    """

    n: int
    max_items: int
    pattern: str
    weights: AnchorWeights
    intents: tuple[str, ...]
    anchor_slots: tuple[int, int, int]
    errors: int = 0
    anomalies: int = 0
    query_matches: int = 0
    must_keep_dropped: int = 0
    learned: bool = False
    passthrough: bool = False
    protected: int = 0
    rare: int = 0
    columns: Any = field(default=None, repr=False)  # the Columns built (None on passthrough)
    kept: NDArray[np.int64] = field(default_factory=lambda: np.empty(0, np.int64))
    must_keep_by_kind: dict = field(default_factory=dict)
    must_keep_counts: dict = field(default_factory=dict)
    must_keep: dict = field(default_factory=dict, repr=False)
