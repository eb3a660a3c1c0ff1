"""Records in time order: the timeline, the must-keep items chosen across it, and the crush of logs.

The timeline is the items in time order (see :func:`timeline_order`).  A crush of
records in time order (the ``logs`` and ``time_series`` patterns) keeps, in this order:

1. the newest record (and the oldest when the query asks for the first ones);
2. the errors, anomalies, query matches and rare kinds, within what is left after a
   reserve for the spread: when they do not all fit, the query matches take up to half
   of it first, then each kind gets an equal share of the rest
   (what one kind does not need goes to the others, then in the order query matches,
   errors, anomalies, rare kinds) and a kind's share is spread evenly over its items in
   time order, ending at its newest one (worst severity or most query terms first;
   the rare kinds share theirs between each rare value; a query about the latest
   items takes a kind's newest instead, one about the first its oldest);
3. one record in each of ten equal runs of the timeline that has none yet (fewer
   runs when fewer than 20 items are kept: half as many as the items);
4. the newest few records (the oldest few when the query asks for the first ones);
5. the rest at evenly spaced quantiles of a density over the timeline, half even and
   half the pattern's front/back weights (a query about the latest items makes it
   heavier at the end, one about the first at the start, and 80% of it the weights').
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ._columns import Columns
from ._config import AnchorWeights

#: The must-keep kinds, in the order leftover room goes to them.
MUST_KINDS = ("query_matches", "errors", "anomalies", "rare")
#: Runs of the timeline that each get a kept record (when at least twice as many items are kept).
SPREAD_RUNS = 10


def _distinct_latest(
    cands: NDArray[np.int64], rank: NDArray[np.int64], c: Columns, taken: set
) -> NDArray[np.int64]:
    """``cands`` in time order, one per distinct item (its latest copy), none identical to a taken one."""
    if cands.size == 0:
        return cands
    cands = cands[np.argsort(rank[cands], kind="stable")]
    codes = c.item_code[cands]
    # the latest copy of each code: unique over the reversed order
    _, first_rev = np.unique(codes[::-1], return_index=True)
    keep = np.sort(cands.size - 1 - first_rev)
    out = cands[keep]
    if taken:
        out = out[~np.isin(c.item_code[out], np.fromiter(taken, np.int64, len(taken)))]
    return out


def spread(m: int, r: int) -> NDArray[np.int64]:
    """``r`` of ``m`` ordered places, evenly spaced, the last always among them (``r <= m``).

    Examples
    --------
    >>> spread(10, 3).tolist(), spread(10, 1).tolist(), spread(4, 4).tolist()
    ([2, 5, 9], [9], [0, 1, 2, 3])
    """
    if r <= 0 or m <= 0:
        return np.empty(0, np.int64)
    r = min(r, m)
    return ((np.arange(1, r + 1, dtype=np.int64) * m) // r - 1).astype(np.int64)


def water_fill(needs: list[int], room: int) -> list[int]:
    """Equal shares of ``room`` for the ``needs`` (none above its need), the remainder in list order.

    Examples
    --------
    >>> water_fill([3, 100, 100], 10), water_fill([3, 100, 100], 11), water_fill([1, 2], 10)
    ([3, 4, 3], [3, 4, 4], [1, 2])
    """
    give = [0] * len(needs)
    room = max(int(room), 0)
    active = [k for k, x in enumerate(needs) if x > 0]
    while room > 0 and active:
        share = room // len(active)
        if share == 0:  # fewer slots than kinds: one each, in list order
            for k in active[:room]:
                give[k] += 1
            break
        for k in active:
            add = min(share, needs[k] - give[k])
            give[k] += add
            room -= add
        active = [k for k in active if give[k] < needs[k]]
    return give


def _within(m: int, r: int, lean: str | None) -> NDArray[np.int64]:
    """``r`` of ``m`` ordered places: the last ``r`` (lean "latest"), the first (``"earliest"``), or a spread."""
    r = min(r, m)
    if lean == "latest":
        return np.arange(m - r, m, dtype=np.int64)
    if lean == "earliest":
        return np.arange(r, dtype=np.int64)
    return spread(m, r)


def _take_tiers(tiers: list[NDArray[np.int64]], r: int, lean: str | None = None) -> list[int]:
    """``r`` items from tiers (best first, each in time order): whole tiers, then some of the next."""
    out: list[int] = []
    for t in tiers:
        if r <= 0:
            break
        if t.size <= r:
            out += t.tolist()
            r -= t.size
        else:
            out += t[_within(t.size, r, lean)].tolist()
            r = 0
    return out


def choose_must(
    kinds: dict[str, tuple[NDArray[np.int64], NDArray[np.float64] | None]],
    room: int,
    rank: NDArray[np.int64],
    c: Columns,
    taken: set,
    groups: NDArray[np.int64] | None = None,
    lean: str | None = None,
) -> list[int]:
    """Must-keep items within ``room``, across the timeline (see the module docs); adds their codes to ``taken``.

    ``kinds`` maps each of :data:`MUST_KINDS` to its candidates and their scores
    (higher first; None: all equal); ``groups`` gives the rare kind's items their rare value;
    ``lean`` (``"latest"`` or ``"earliest"``, from the query) takes the newest or oldest of a
    kind that does not fit instead of a spread.
    """
    seen = set(taken)
    lists: list[list[NDArray[np.int64]]] = []
    for name in MUST_KINDS:
        cands, score = kinds.get(name, (np.empty(0, np.int64), None))
        cands = _distinct_latest(np.asarray(cands, np.int64), rank, c, seen)
        seen.update(c.item_code[cands].tolist())
        if name == "rare" and groups is not None and cands.size:
            g = groups[cands]
            tiers = [cands[g == v] for v in np.unique(g)]
        elif score is not None and cands.size:
            s = score[cands]
            tiers = [cands[s == v] for v in np.unique(s)[::-1]]
        else:
            tiers = [cands]
        lists.append(tiers)
    needs = [sum(t.size for t in tiers) for tiers in lists]
    first = min(needs[0], max(room // 2, min(room, 1)))  # what the user named: up to half the room first
    # then the rest of the matches and the errors, sharing; anomalies and rare kinds in what they leave
    # (a rare kind of record never pushes an error out)
    named = water_fill([needs[0] - first, needs[1]], room - first)
    give = [first + named[0], named[1], *water_fill(needs[2:], room - first - sum(named))]
    out: list[int] = []
    for name, tiers, r in zip(MUST_KINDS, lists, give, strict=True):
        if r <= 0:
            continue
        if name == "rare" and groups is not None and len(tiers) > 1:  # a share for each rare value
            for t, rg in zip(tiers, water_fill([t.size for t in tiers], r), strict=True):
                out += t[_within(t.size, rg, lean)].tolist()
        else:
            out += _take_tiers(tiers, r, lean)
    taken.update(c.item_code[np.asarray(out, np.int64)].tolist())
    return out


def _nearest_free(
    order: NDArray[np.int64], lo: int, hi: int, target: int, c: Columns, taken: set
) -> int | None:
    """The item of ``order[lo:hi]`` nearest ``target`` whose copy is not taken (None: every one is)."""
    for d in range(hi - lo):
        for p in (target - d, target + d):
            if lo <= p < hi and int(c.item_code[order[p]]) not in taken:
                return int(order[p])
    return None


def timeline_crush(
    c: Columns,
    order: NDArray[np.int64],
    k: int,
    kept: list[int],
    taken: set,
    kinds: dict[str, tuple[NDArray[np.int64], NDArray[np.float64] | None]],
    groups: NDArray[np.int64] | None,
    w: AnchorWeights,
    intents: tuple[str, ...],
) -> list[int]:
    """``kept`` (the protected items) grown to at most ``k`` items for records in time order ``order``."""
    n = c.n
    rank = np.empty(n, np.int64)
    rank[order] = np.arange(n, dtype=np.int64)
    have = set(kept)

    def add(i: int) -> None:
        if i not in have and len(kept) < k:
            kept.append(i)
            have.add(i)
            taken.add(int(c.item_code[i]))

    recency = "recency" in intents and "historical" not in intents
    historical = "historical" in intents and not recency
    runs = min(SPREAD_RUNS, (k - len(kept)) // 2)
    add(int(order[-1]))  # 1. the newest record
    if historical:
        add(int(order[0]))
    rest = k - len(kept)
    # 2. must-keep items, across the timeline, leaving room for the spread
    lean = "latest" if recency else "earliest" if historical else None
    # (at least one, when one is left: with room for two records, the newest and an error; and, in
    # fewer than 2 * SPREAD_RUNS records, where the spread is not promised, the errors before it)
    errors = int(np.asarray(kinds.get("errors", (np.empty(0),))[0]).size) if k < 2 * SPREAD_RUNS else 1
    for i in choose_must(kinds, max(rest - runs, min(rest, max(errors, 1))), rank, c, taken, groups, lean):
        add(i)
    # 3. one record in each run of the timeline that has none
    if runs > 0:
        # run j holds the ranks r with r * runs // n == j
        bounds = (np.arange(runs + 1, dtype=np.int64) * n + runs - 1) // runs
        covered = np.zeros(runs, dtype=bool)
        if have:
            covered[rank[np.fromiter(have, np.int64)] * runs // n] = True
        for j in np.flatnonzero(~covered).tolist():
            lo, hi = int(bounds[j]), int(bounds[j + 1])
            if hi <= lo:
                continue
            target = hi - 1 if recency else lo if historical else (lo + hi) // 2
            got = _nearest_free(order, lo, hi, target, c, taken)
            add(int(order[target]) if got is None else got)  # a copy rather than an empty run
    # 4. the newest few (the oldest few for a query about the first items)
    rest = k - len(kept)
    few = min(rest // 5, 5) * (2 if recency else 1)
    walk = range(n) if historical else range(n - 1, -1, -1)
    for p in walk:
        if few <= 0 or len(kept) >= k:
            break
        i = int(order[p])
        if int(c.item_code[i]) not in taken:
            add(i)
            few -= 1
    # 5. the rest along the density
    rest = k - len(kept)
    if rest > 0:
        x = (np.arange(n) + 0.5) / n
        wf, wb, wm = w
        even = 0.2 if (recency or historical) else 0.5  # a query's intent leans harder
        dens = even + (1 - even) * (2 * wf * (1 - x) + 2 * wb * x + wm)
        cdf = np.cumsum(dens)
        cdf /= cdf[-1]
        targets = np.minimum(np.searchsorted(cdf, (np.arange(rest) + 0.5) / rest), n - 1)
        for t in targets.tolist():
            got = _nearest_free(order, 0, n, t, c, taken)
            if got is None:
                break
            add(got)
    return kept


def timeline_slots(kept: NDArray[np.int64], order: NDArray[np.int64]) -> tuple[int, int, int]:
    """Kept items in the oldest 30% of the timeline, the newest 30%, and between (the report's slots)."""
    n = order.size
    rank = np.empty(n, np.int64)
    rank[order] = np.arange(n, dtype=np.int64)
    r = rank[kept]
    front = int(np.count_nonzero(r < 0.3 * n))
    back = int(np.count_nonzero(r >= 0.7 * n))
    return front, back, int(r.size) - front - back


def dropped_by_kind(
    kinds: dict[str, tuple[NDArray[np.int64], NDArray[np.float64] | None]],
    kept: NDArray[np.int64],
    c: Columns,
) -> dict[str, int]:
    """Per must-keep kind, its distinct items (each counted in its first kind) with no copy kept."""
    kept_codes = set(c.item_code[kept].tolist())
    seen: set = set()
    out: dict[str, int] = {}
    for name in MUST_KINDS:
        cands = kinds.get(name, (np.empty(0, np.int64), None))[0]
        codes = set(c.item_code[np.asarray(cands, np.int64)].tolist()) - seen
        seen |= codes
        left = len(codes - kept_codes)
        if left:
            out[name] = left
    return out
