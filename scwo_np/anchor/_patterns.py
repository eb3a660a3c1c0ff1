"""Which positions matter: the data pattern, the query's intent, the anchor budget and its split."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

from ..validation import check_int, check_text
from ._columns import Columns, _check_columns
from ._config import PATTERNS, AnchorConfig, AnchorWeights

# ----------------------------------------------------------------------------------------
# Pattern, intent, budget (ideas 1-3)
# ----------------------------------------------------------------------------------------

_TIME_NAME = re.compile(r"(time|date|timestamp|created|updated|^ts$|_at$|_on$)", re.I)
_SCORE_NAME = re.compile(r"(score|relevance|similarity|confidence)", re.I)
_LOG_NAME = re.compile(r"^(level|severity|loglevel|message|msg|log)$", re.I)
_TIMEISH = re.compile(r"^\d{4}-\d{2}(-\d{2})?([T ]\d{2}(:\d{2}){0,2})?")


def _time_field(c: Columns) -> int | None:
    for f, name in enumerate(c.names):
        if not _TIME_NAME.search(name):
            continue
        present = c.codes[f] >= 0
        if present.mean() < 0.9:
            continue
        vals = c.values[f][:: max(1, len(c.values[f]) // 64)]  # a sample of the distinct values is enough
        ok = sum(1 for v in vals if isinstance(v, str) and _TIMEISH.match(v) or isinstance(v, int | float))
        if vals and ok >= 0.9 * len(vals):
            return f
    return None


def detect_pattern(c: Columns) -> str:
    """``search_results``, ``logs``, ``time_series`` or ``generic``, from the data alone.

    A score-like numeric field that never increases down the array means search
    results; a timestamp plus a level or message field means logs; a timestamp
    plus another numeric field means a time series.

    Parameters
    ----------
    c : Columns
        The array's columns (from :func:`columns`).

    Returns
    -------
    str
        One of ``PATTERNS``.

    Examples
    --------
    >>> from scwo_np.anchor import columns
    >>> logs = [{"ts": f"2024-05-01T10:00:{i:02d}", "level": "INFO", "msg": "ok"} for i in range(20)]
    >>> hits = [{"id": i, "score": 1.0 - i / 20} for i in range(20)]
    >>> detect_pattern(columns(logs)), detect_pattern(columns(hits))
    ('logs', 'search_results')
    """
    c = _check_columns(c)
    for f, name in enumerate(c.names):
        if _SCORE_NAME.search(name):
            x = c.numeric[f]
            x = x[~np.isnan(x)]
            if x.size >= 2 and x.size >= 0.9 * c.n and np.all(np.diff(x) <= 0) and x[0] > x[-1]:
                return "search_results"
    t = _time_field(c)
    if t is not None:
        if any(_LOG_NAME.match(name) for name in c.names):
            return "logs"
        for f in range(len(c.names)):
            if f != t and np.count_nonzero(~np.isnan(c.numeric[f])) >= 0.9 * c.n:
                return "time_series"
    return "generic"


def query_intents(query: str, config: AnchorConfig | None = None) -> tuple[str, ...]:
    """Position intents of ``query``, matched as whole words ("know" is not "now").

    Parameters
    ----------
    query : str
        The question the output is crushed for.
    config : AnchorConfig, optional
        The configuration (default: ``AnchorConfig()``).

    Returns
    -------
    tuple of str
        ``"recency"``, ``"historical"`` and ``"range"``, those the query asks for.

    Examples
    --------
    >>> query_intents("Show me the latest entries"), query_intents("I know the first one")
    (('recency',), ('historical',))
    """
    cfg = config or AnchorConfig()
    words = set(re.findall(r"[a-z0-9]+", check_text(query, name="query").lower()))
    out = []
    for name, kws in (
        ("recency", cfg.recency_keywords),
        ("historical", cfg.historical_keywords),
        ("range", cfg.range_keywords),
    ):
        if words & {k.lower() for k in kws}:
            out.append(name)
    return tuple(out)


def pattern_weights(pattern: str, config: AnchorConfig) -> AnchorWeights:
    if pattern == "search_results":
        return AnchorWeights(config.search_front_weight, 1 - config.search_front_weight, 0.0)
    if pattern == "logs":
        return AnchorWeights(1 - config.logs_back_weight, config.logs_back_weight, 0.0)
    if pattern == "time_series":
        return AnchorWeights(config.time_series_balance, 1 - config.time_series_balance, 0.0)
    return AnchorWeights(*PATTERNS["generic"])


def adjust_for_query(w: AnchorWeights, intents: Sequence[str]) -> AnchorWeights:
    """The plan's multipliers: recency x1.5 back, x0.7 front; historical the reverse; range x1.3 middle.

    One change: after the multipliers, an intent's end is made the heavier one
    (the two ends swap weights if needed).  The plan's factors alone leave a
    back-heavy log at 0.35 front / 0.65 back for "show the first entries",
    which is not what the user asked for.
    """
    front, back, middle = w
    recency, historical = "recency" in intents, "historical" in intents
    if recency:
        back, front = back * 1.5, front * 0.7
    if historical:
        front, back = front * 1.5, back * 0.7
    if recency and not historical and front > back:
        front, back = back, front
    if historical and not recency and back > front:
        front, back = back, front
    if "range" in intents:
        middle = max(middle, 0.1) * 1.3  # a zero middle would ignore "all"
    return AnchorWeights(front, back, middle).normalize()


def anchor_budget(n: int, max_items: int, config: AnchorConfig | None = None) -> int:
    """Position-anchor slots: ``pct * max_items``, grown with ``log10(n / max_items)``, clamped.

    Parameters
    ----------
    n : int
        Items in the array.
    max_items : int
        The most items kept.
    config : AnchorConfig, optional
        The configuration (default: ``AnchorConfig()``).

    Returns
    -------
    int
        The number of position-anchor slots.

    Examples
    --------
    >>> [anchor_budget(n, m) for n, m in [(50, 10), (200, 15), (1000, 20), (5000, 30)]]
    [3, 6, 10, 10]
    >>> [anchor_budget(n, m, AnchorConfig(size_scaling=False)) for n, m in [(50, 10), (1000, 20), (5000, 30)]]
    [3, 4, 6]
    """
    cfg = config or AnchorConfig()
    n = check_int(n, name="n", low=0)
    max_items = check_int(max_items, name="max_items", low=1)
    base = max_items * cfg.anchor_budget_pct
    if cfg.size_scaling and n > max_items > 0:
        base *= 1.0 + math.log10(n / max_items)
    slots = max(
        cfg.min_anchor_slots, min(cfg.max_anchor_slots, int(base + 0.5) if cfg.size_scaling else int(base))
    )
    return min(slots, max_items)


def split_slots(total: int, w: AnchorWeights) -> tuple[int, int, int]:
    front = int(round(total * w.front))
    back = int(round(total * w.back))
    if front + back > total:
        back = total - front
    middle = total - front - back
    if w.middle == 0 and middle > 0:  # no middle share: give the remainder to the heavier end
        if w.front >= w.back:
            front += middle
        else:
            back += middle
        middle = 0
    return front, back, middle
