"""The :func:`crush` front and :func:`crush_json`: anchoring over items or over JSON text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..validation import check_int, check_nonnegative_float, check_text
from ._auto import auto_size
from ._columns import Columns, _check_items, _columns
from ._config import PATTERNS, PROTECT_OVERFLOWS, AnchorConfig, AnchorWeights, CrushReport
from ._keep import (
    _even,
    _fill,
    _pick,
    anomaly_scores,
    error_severity,
    information_scores,
    protected_items,
    query_matches,
    rare_groups,
    stratified_middle,
)
from ._patterns import (
    adjust_for_query,
    anchor_budget,
    detect_pattern,
    pattern_weights,
    query_intents,
    split_slots,
    timeline_order,
)
from ._timeline import SPREAD_RUNS, choose_must, dropped_by_kind, timeline_crush, timeline_slots
from ._timeline import _take_tiers as take_tiers

# ----------------------------------------------------------------------------------------
# crush
# ----------------------------------------------------------------------------------------

_DEFAULT_CONFIG = AnchorConfig()  # read, never written: building one checks 20 fields (20 us)


def _check_learned(learned: object) -> AnchorWeights:
    """``learned`` as three finite weights >= 0 (front, back, middle)."""
    if isinstance(learned, str | bytes) or not isinstance(learned, Sequence) or len(learned) != 3:
        raise TypeError(f"learned must be AnchorWeights(front, back, middle); got {learned!r}.")
    return AnchorWeights(
        *(
            check_nonnegative_float(v, name=f"learned.{k}")
            for k, v in zip(AnchorWeights._fields, learned, strict=True)
        )
    )


def crush(
    items: Sequence[Mapping] | Sequence[Any],
    max_items: int,
    *,
    query: str | None = "",
    pattern: str | None = None,
    config: AnchorConfig | None = None,
    learned: AnchorWeights | None = None,
    protect: Any = None,
    protect_overflow: str = "error",
    bias: str | float = "balanced",
    upper: int = 100,
    report: bool = False,
) -> NDArray[np.int64] | tuple[NDArray[np.int64], CrushReport]:
    """Indices (sorted) of at most ``max_items`` items to keep.

    Parameters
    ----------
    items : list of dict (or of scalars, each read as ``{"value": x}``), or Columns
        The array, e.g. a parsed tool output; or its :func:`columns`, to crush one array
        several times (to several sizes) without reading it again.
    max_items : int or "auto"
        The most items to keep (>= 1); arrays no longer than this are kept whole.
        ``"auto"``: the fewest items that carry the ``bias``'s share of the
        array's information (see :mod:`scwo_np.anchor._auto`), at most ``upper``,
        plus every error, anomaly, query match and protected item.
    query : str or None
        The user's request: its position intents shift the anchors, its terms
        keep matching items (``None`` or ``""``: no query).
    pattern : {"search_results", "logs", "time_series", "generic"}, optional
        Overrides the detected pattern.  Records in time order (``logs``, ``time_series``:
        a timestamp, a date and a time field, a line number, or the position) keep the
        newest record, their must-keep items chosen across the timeline, and a record in
        every tenth of it (see :mod:`scwo_np.anchor._timeline`).
    config : AnchorConfig, optional
    learned : AnchorWeights, optional
        Learned position weights (``PositionLearner.weights(tool)``); used in
        place of the pattern's when ``config.use_learned_positions``.
    protect : str, list of str, or dict, optional
        Items that are always kept, before anything else: a regular expression
        searched in every field's value, a list of them, or a mapping from field
        name to an expression or a predicate (see :func:`protected_items`).
        Copies of a protected item are kept too.
    protect_overflow : {"error", "keep"}
        When the protected items alone are more than ``max_items``: ``"error"``
        raises ``ValueError`` (nothing is dropped silently); ``"keep"`` keeps
        every protected item and nothing else, more than ``max_items``.
    bias : {"conservative", "balanced", "aggressive"} or float
        With ``max_items="auto"``: the share of the facts to cover (100%, 95%,
        85%, or a number in (0, 1]).
    upper : int
        With ``max_items="auto"``: the most items the information part may take.
    report : bool
        Also return a :class:`CrushReport` (its ``max_items`` is the size used).

    Returns
    -------
    indices : ndarray of int64
        The kept items' indices, ascending, at most ``max_items`` (unless ``protect_overflow="keep"``).
    report : CrushReport
        What was done and why; only with ``report=True``.

    Examples
    --------
    >>> items = [{"status": "ok", "value": i} for i in range(100)]
    >>> items[50] = {"status": "error", "error_code": "CRITICAL", "value": 50}
    >>> idx = crush(items, 10)
    >>> len(idx) <= 10, 50 in idx, int(idx[0]), int(idx[-1])
    (True, True, 0, 99)
    >>> log = [{"date": "2025-06-24", "time": f"14:{i // 60:02d}:{i % 60:02d}", "action": "install",
    ...         "package": f"p{i}"} for i in range(600)]
    >>> idx, rep = crush(log, 20, report=True)
    >>> rep.pattern, int(idx[-1]), sorted(set((idx * 10 // 600).tolist())) == list(range(10))
    ('logs', 599, True)
    """
    if config is not None and not isinstance(config, AnchorConfig):
        raise TypeError(
            f"config must be an AnchorConfig (e.g. AnchorConfig(strategy='static')); got {type(config).__name__}."
        )
    cfg = config or _DEFAULT_CONFIG
    if learned is not None:
        learned = _check_learned(learned)
    built = items if isinstance(items, Columns) else None  # the columns of an array crushed before
    items = _check_items(items) if built is None else None
    auto = isinstance(max_items, str)
    if auto and max_items != "auto":
        raise ValueError(f"max_items must be a positive integer or 'auto'; got {max_items!r}.")
    if not auto:
        max_items = int(check_int(max_items, name="max_items", low=1))
    upper = check_int(upper, name="upper", low=1)
    query = "" if query is None else check_text(query, name="query")  # None: no query, as over MCP
    if pattern is not None:
        PATTERNS.lookup(pattern, hint="Pass None to detect it from the data.")
    PROTECT_OVERFLOWS.lookup(protect_overflow)
    n = len(items) if built is None else built.n
    if not auto and n <= max_items:
        return _passthrough(n, max_items, pattern, report, built)
    c = _columns(items) if built is None else built
    prot = np.flatnonzero(protected_items(c, protect)) if protect is not None else np.empty(0, np.int64)
    sev = error_severity(c) if cfg.keep_errors else np.zeros(n)
    z = anomaly_scores(c, cfg.anomaly_z) if cfg.keep_anomalies else np.zeros(n)
    qm = query_matches(c, query, cfg) if (query and cfg.keep_query_matches) else np.zeros(n, np.int64)
    ano_mask = (z > cfg.anomaly_z) & (sev == 0)
    rare_mask = np.zeros(n, dtype=bool)
    groups = None
    if cfg.keep_rare_categories:
        groups = rare_groups(c, cfg.rare_share)
        rare_mask = (groups >= 0) & (sev == 0) & ~ano_mask
    pat = pattern or detect_pattern(c)
    timeline = pat in ("logs", "time_series") and cfg.strategy != "static"
    if auto:  # the information the data carries, and never fewer than what must be kept
        must_mask = (sev > 0) | ano_mask | (qm > 0) | rare_mask
        must_n = len(set(c.item_code[must_mask].tolist()) - set(c.item_code[prot].tolist()))
        # records in time order also keep the newest and one in each run of the timeline beside them
        # (dpkg.log: 158 rare records, 161 slots, and the spread's ten took the room of eight)
        around = cfg.min_anchor_slots + (SPREAD_RUNS + 1 if timeline else 0)
        max_items = max(auto_size(c, bias=bias, upper=upper), must_n + prot.size + around)
        if n <= max_items:
            return _passthrough(n, n, pattern, report, c)
    if prot.size > max_items:
        if protect_overflow == "error":
            raise ValueError(
                f"{prot.size} items match protect, more than max_items={max_items}; raise max_items, narrow "
                "protect, or pass protect_overflow='keep' to keep them all (and nothing else)."
            )
        rep = CrushReport(n, max_items, pattern or "generic", AnchorWeights(0.5, 0.5, 0.0), (), (0, 0, 0),
                          protected=int(prot.size), columns=c, kept=prot)  # fmt: skip
        return (prot, rep) if report else prot
    intents = query_intents(query, cfg)
    use_learned = learned is not None and cfg.use_learned_positions
    w = (
        AnchorWeights(*learned).normalize()
        if use_learned
        else adjust_for_query(pattern_weights(pat, cfg), intents)
    )
    kept: list[int] = prot.tolist()  # protected items first, copies included
    taken: set = set(c.item_code[prot].tolist())
    max_items_left = max_items - len(kept)

    # 1. Always kept (as far as they fit): query matches (at most half), errors, anomalies, rare kinds.
    ar = np.arange(n)
    err = ar[sev > 0]
    qry = ar[qm > 0]
    lean = "latest" if "recency" in intents and "historical" not in intents else None
    lean = "earliest" if "historical" in intents and "recency" not in intents else lean
    # The best matches; among equals, the intent's end or a spread ("auto" sized itself to hold them all).
    if not auto and qry.size > max(1, max_items // 2):
        tiers = [qry[qm[qry] == v] for v in np.unique(qm[qry])[::-1]]
        qry = np.sort(np.asarray(take_tiers(tiers, max(1, max_items // 2), lean), dtype=np.int64))
    ano = ar[ano_mask]
    rare = ar[rare_mask]
    kinds = {
        "query_matches": (qry, qm.astype(np.float64)),
        "errors": (err, sev),
        "anomalies": (ano, None),
        "rare": (rare, None),
    }
    fs = bs = ms = 0
    if timeline:  # records in time order: the newest, the must-keep across the timeline, a spread
        order = timeline_order(c)
        kept = timeline_crush(c, order, max_items, kept, taken, kinds, groups, w, intents)
    else:
        kept += choose_must(kinds, max_items_left, ar, c, taken, groups, lean)
    # 2. Position anchors.
    rest = max_items - len(kept)
    if timeline:
        pass
    elif cfg.strategy == "static":
        fs, bs, ms = min(3, rest), min(2, max(rest - 3, 0)), 0
        kept += [i for i in range(fs) if i not in kept]
        kept += [i for i in range(n - bs, n) if i not in kept]
        taken |= {int(c.item_code[i]) for i in kept}
        kept += _even(np.arange(n, dtype=np.int64), max_items - len(set(kept)), taken, c)
    else:
        slots = min(rest, anchor_budget(n, max_items, cfg))
        fs, bs, ms = split_slots(slots, w)
        info = information_scores(c) if cfg.use_information_density else None
        m = cfg.candidate_multiplier
        # An explicit intent asks for the extreme items themselves, not the most informative near them.
        front_score = None if "historical" in intents else info
        back_score = None if "recency" in intents else info
        kept += _pick(np.arange(min(n, fs * m), dtype=np.int64), fs, front_score, taken, c)
        back = np.arange(max(0, n - bs * m), n, dtype=np.int64)
        kept += _pick(back if back_score is not None else back[::-1], bs, back_score, taken, c, late=True)
        kept += stratified_middle(c, ms, taken)
        # 3. Fill the rest along the same position weights.
        kept += _fill(c, max_items - len(kept), w, taken)
    idx = np.unique(np.asarray(kept, dtype=np.int64))[:max_items]
    # Announced as left out: every query match as good as the worst one taken above, not only
    # those taken (the best 11 of the records naming postgresql-15 and "installed" were must-keep,
    # and the rest of them were dropped unsaid).
    told = kinds | {"query_matches": (ar[qm >= qm[qry].min()] if qry.size else qry, None)}
    by_kind = dropped_by_kind(told, idx, c)
    if timeline:
        fs, bs, ms = timeline_slots(idx, order)
    if not report:
        return idx
    rep = CrushReport(
        n, max_items, pat, w, intents, (fs, bs, ms), errors=int(err.size), anomalies=int(ano.size),
        query_matches=int(qry.size), must_keep_dropped=sum(by_kind.values()), learned=use_learned, kept=idx,
        must_keep_by_kind=by_kind, must_keep_counts=dropped_by_kind(told, np.empty(0, np.int64), c),
        rare=int(rare.size), must_keep={name: np.asarray(v[0], np.int64) for name, v in told.items()},
        protected=int(prot.size), columns=c,
    )  # fmt: skip
    return idx, rep


def largest_count(attempt, k: int, cap: int, limit: int, costs, mean: float, tried, tries: int) -> int:
    """The largest count of items in ``[0, cap]`` whose rendering ``attempt(k)`` (its text, tokens and
    kept positions) fits ``limit`` tokens, or -1: from the guess ``k``, each next count moves by the
    tokens left over (or missing) at the kept items' own cost per item (``mean`` when none is kept),
    bisecting when a count was ``tried`` already; at most ``tries`` renderings.  The JSON fit and
    the records fit search so (a crush's picks differ by count, so fitting is not monotone in it)."""
    lo, hi = -1, cap + 1  # the largest count known to fit, the smallest known not to
    for _ in range(tries):
        _, t, idx = attempt(k)
        if t <= limit:
            lo = k
        else:
            hi = k
        if hi - lo <= 1:
            break
        per = float(costs[idx].mean()) if idx.size else mean
        k = int(np.clip(k + int((limit - t) / max(per, 1.0)), lo + 1, hi - 1))
        if k in tried:  # the estimate stalls: bisect
            k = (lo + hi) // 2
    return lo


def _passthrough(n, max_items, pattern, report, c=None):
    idx = np.arange(n, dtype=np.int64)
    if not report:
        return idx
    rep = CrushReport(n, max_items, pattern or "generic", AnchorWeights(0.5, 0.5, 0.0), (), (0, 0, 0),
                      passthrough=True, columns=c, kept=idx)  # fmt: skip
    return idx, rep
