"""What must be kept and what is informative: errors, anomalies, query matches, information, spacing."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..text import STOPWORDS, TERM
from ._columns import Columns, _sorted_quantile
from ._config import AnchorConfig, AnchorWeights

# ----------------------------------------------------------------------------------------
# Always kept: errors, anomalies, query matches
# ----------------------------------------------------------------------------------------

_STATUS_NAME = re.compile(r"^(status|level|severity|state|result|outcome|loglevel)$", re.I)
_ERROR_NAME = re.compile(
    r"^(error|errors|error_code|error_message|exception|err|stack|stacktrace|traceback)$", re.I
)
#: Fields that describe or name a thing rather than report an event: an error word there is the
#: thing's subject ("a fast memory error detector", valgrind's and libasan's package descriptions), or
#: its name (the entries of an object keyed by name, "HAVE_GAI_STRERROR" among Python's build
#: variables, are read with their names under "key"), not an error.
_DESCRIBES = re.compile(
    r"(?:^|\.)(description|desc|summary|synopsis|title|comment|comments|homepage|url|help|doc|docs|"
    r"documentation|about|license|licence|keywords|tags|package|name|_*key)$",
    re.I,
)
_SEVERITY = {
    "fatal": 3.0, "critical": 3.0, "crit": 3.0, "emergency": 3.0, "alert": 3.0,
    "error": 2.0, "err": 2.0, "exception": 2.0, "failed": 1.5, "failure": 1.5, "fail": 1.5,
}  # fmt: skip

#: Error words, worst level first, for records as text and the text fields of JSON items: (pattern,
#: level) pairs, a text's level the first whose pattern it holds.  Each pattern starts with a
#: literal, so the regular expression engine scans for its first letters instead of trying every
#: position (ten times faster on 100 KB of logs); the error words are three patterns, so that no
#: pattern's first letters are as common as "e" (1.3 ms on 100 KB of logs, 3.4 as one).  A word
#: followed by a dot or an at sign and a letter is part of a name (``andreas@fatal.se``, ``Error.java``).
LEVELS = (
    (
        re.compile(
            r"(?:FATAL|Fatal|fatal|CRITICAL|Critical|critical|PANIC|Panic|panic|EMERG(?:ENCY)?)\b(?![.@]\w)"
        ),
        "critical",
    ),
    (
        re.compile(
            r"(?:ERR(?:OR)?|Exception|Error|Errors were|Traceback|FAIL(?:ED|URE)?|Failed|Unable to|"
            r"No such file or directory|Permission denied)\b(?![.@]\w)"
        ),
        "error",
    ),
    (re.compile(r"(?:failed|unable to|permission denied)\b(?![.@]\w)"), "error"),
    # lower-case "error" as a word of its own: not a package's name (liberror-perl, libgpg-error0)
    (re.compile(r"error(?<![\w.+-]error)(?![\w+-]|\.\w)"), "error"),
    # a web server's access log: the request, then a 5xx status (the server failed it)
    (re.compile(r'HTTP/\d(?:\.\d)?" 5\d\d\b'), "error"),
)


def text_level(text: str) -> str:
    """``text``'s worst error word's level: ``"critical"``, ``"error"`` or ``""`` (:data:`LEVELS`)."""
    for pattern, name in LEVELS:
        if pattern.search(text):
            return name
    return ""


def text_levels(texts: Sequence[str]) -> list[str]:
    """Each text's :func:`text_level`, one pass a pattern over the texts joined by line feeds (no
    error word spans a line feed, and a line feed ends a word as the end of a text does): 1,400
    log items' fields were 2,800 searches a pattern."""
    out = [""] * len(texts)
    if not texts:
        return out
    sizes = np.fromiter((len(t) + 1 for t in texts), np.int64, len(texts))
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    body = "\n".join(texts)
    for pattern, name in reversed(LEVELS):  # the worse level last, so it wins
        at = [m.start() for m in pattern.finditer(body)]
        for k in np.unique(np.searchsorted(starts, at, side="right") - 1).tolist():
            out[k] = name
    return out


_TEXT_SEVERITY = {"critical": 3.0, "error": 2.0, "": 0.0}


def error_severity(c: Columns) -> NDArray[np.float64]:
    """0 for normal items; higher for worse errors (status words, plus 0.5 for an error field; a text
    field's error words, as records in text are read: ``"dpkg: error processing package ..."``, but
    not in a field that describes a thing, such as ``Description`` or ``summary``).  Computed once
    per :class:`Columns` (a fit crushes the same columns for several counts of items)."""
    known = c.__dict__.get("_error_severity")
    if known is not None:
        return known.copy()
    sev = np.zeros(c.n)
    for f, name in enumerate(c.names):
        if _STATUS_NAME.match(name):
            table = np.array([_SEVERITY.get(str(v).strip().lower(), 0.0) for v in c.values[f]] + [0.0])
            sev = np.maximum(sev, table[c.codes[f]])  # code -1 reads the trailing 0
        elif _ERROR_NAME.match(name):
            table = np.array([0.0 if v in (None, "", [], {}, False, 0) else 2.0 for v in c.values[f]] + [0.0])
            sev = np.maximum(sev, table[c.codes[f]] + 0.5 * (table[c.codes[f]] > 0))
        elif c.kinds[f] == {str} and not _DESCRIBES.search(name):
            table = np.array([_TEXT_SEVERITY[x] for x in text_levels(c.values[f])] + [0.0])
            sev = np.maximum(sev, table[c.codes[f]])
    c.__dict__["_error_severity"] = sev
    return sev.copy()


def known_severity(c: Columns, levels: Sequence[str]) -> Columns:
    """``c``, its items' error severity given by their levels (``"critical"``, ``"error"`` or ``""``,
    as :func:`text_level` reads them): records in text were read once already, whole, and
    :func:`error_severity` need not read their text again (1,442 searches a fit of dpkg's log)."""
    c.__dict__["_error_severity"] = np.array([_TEXT_SEVERITY[lv] for lv in levels], dtype=np.float64)
    return c


def rare_categories(c: Columns, share: float = 0.01, max_distinct: int = 20) -> NDArray[np.bool_]:
    """Items holding a rare value of a categorical field.

    A field is categorical when its values are text or booleans, it has from 2
    to ``max_distinct`` distinct values and at least half the items have it; a
    value is rare when fewer than ``share`` of those items hold it (so arrays of
    fewer than ``1 / share`` items have none).  A ``remove`` among thousands of
    ``install`` events, a ``CRITICAL`` among ``INFO`` lines.
    """
    return rare_groups(c, share, max_distinct) >= 0


def rare_groups(c: Columns, share: float = 0.01, max_distinct: int = 20) -> NDArray[np.int64]:
    """For each item, which rare value it holds (-1: none); an item with several holds its rarest.

    The same rule as :func:`rare_categories`; the number names one (field, value) pair, so
    that a crush can share its room between the rare kinds (``startup`` and ``trigproc``
    both, not the first few of whichever comes first).
    """
    out = np.full(c.n, -1, dtype=np.int64)
    best = np.full(c.n, np.inf)
    base = 0
    for f in range(len(c.names)):
        values = c.values[f]
        if not 2 <= len(values) <= max_distinct or not c.kinds[f] <= {str, bool}:
            continue
        codes = c.codes[f]
        m = int(np.count_nonzero(codes >= 0))
        if m < 0.5 * c.n:
            continue
        rare = c.counts[f] < share * m
        if rare.any() and not rare.all():
            held = np.append(np.where(rare, c.counts[f], np.inf), np.inf)[codes]  # code -1: the last slot
            better = held < best
            out[better] = base + codes[better]
            best[better] = held[better]
        base += len(values)
    return out


def anomaly_scores(c: Columns, z_cut: float = 3.5, max_share: float = 0.02) -> NDArray[np.float64]:
    """Largest robust z-score (median and MAD) of each item over the numeric fields.

    Anomalies are rare by definition: when more than ``max_share`` of a field's
    values score above ``z_cut`` (a spike of identical values, like the 4096
    of every directory in a file listing, collapses the MAD and makes a third
    of the data "anomalous"), only the field's most extreme 1% keep scores
    above ``z_cut``.
    """
    z = np.zeros(c.n)
    for f in range(len(c.names)):
        x = c.numeric[f]
        ok = ~np.isnan(x)
        if np.count_nonzero(ok) < 5:
            continue
        v = np.sort(x[ok])  # one sort serves the quartiles and the median (log1p keeps the order)
        q1, q2, q3 = _sorted_quantile(v, 0.25), _sorted_quantile(v, 0.5), _sorted_quantile(v, 0.75)
        if v[0] >= 0 and q3 > q1 and (q3 + q1 - 2 * q2) / (q3 - q1) > 0.1:
            # Right-skewed non-negative data (latencies, counts, sizes): judge on a log scale,
            # or the distribution's own long tail reads as anomalies.
            x = np.log1p(np.where(ok, x, 0.0))
            v = np.log1p(v)
        med = _sorted_quantile(v, 0.5)
        mad = _sorted_quantile(np.sort(np.abs(v - med)), 0.5)
        scale = 1.4826 * mad if mad > 0 else 1.2533 * np.mean(np.abs(v - med))
        if scale <= 0:
            continue
        zf = np.zeros(c.n)
        zf[ok] = np.abs(x[ok] - med) / scale
        m = int(np.count_nonzero(ok))
        if np.count_nonzero(zf > z_cut) > max(1, max_share * m):
            k = max(1, m // 100)
            cut = np.partition(zf[ok], m - k)[m - k]  # the k-th largest score
            zf = np.where(zf >= cut, zf, np.minimum(zf, z_cut))
        z = np.maximum(z, zf)
    return z


#: Words of a query over records that name a state or a value ("host down", "not found",
#: "May"): stop words in prose, terms here.
_STATE_WORDS = frozenset({"up", "down", "off", "out", "no", "not", "may", "one", "two"})
#: What people say to ask for records, not what the records hold.
_REQUEST_WORDS = frozenset(
    {"show", "find", "get", "give", "list", "please", "entries", "entry", "items", "item"}
)
#: Words of a query that are not terms: the one stop-word list (``scwo_np.text.STOPWORDS``) but
#: the state words, and the request words.
_STOP = (STOPWORDS - _STATE_WORDS) | _REQUEST_WORDS


def _forms(t: str) -> list[str]:
    """A query term and the bare forms it may stand for, each matched as a whole word.

    A plural finds its singular ("errors" finds level ``ERROR``), a past or a gerund its
    verb ("installed" finds action ``install``, "configured" and "configuring" find
    ``configure``): records name what happened by the bare verb, questions inflect it.
    """
    forms = [t]
    if len(t) > 3 and t.endswith("s") and not t.endswith("ss"):
        forms.append(t[:-1])
    if len(t) > 4 and t.endswith("ed"):
        forms += [t[:-2], t[:-1]]  # installed -> install; configured -> configure
    if len(t) > 5 and t.endswith("ing"):
        forms += [t[:-3], t[:-3] + "e"]  # installing -> install; configuring -> configure
    return list(dict.fromkeys(forms))


#: A name joined by punctuation (``python3-dev``, ``libc6:amd64``, ``ld.so.conf``): a term of its
#: own beside its words, matched whole.
_COMPOUND = re.compile(r"\w[\w.+:-]*[.+:-][\w.+:-]*\w")


def query_matches(c: Columns, query: str, config: AnchorConfig) -> NDArray[np.float64]:
    """How well each item matches the query: twice the distinct query terms it holds (a whole
    value, or a whole word of it), plus one when a term is a whole value of it (the record of
    ``package: git`` before the 300 whose command lines mention git), plus a fraction below one
    that puts a term matching ten times fewer items first among equals (a model table's 4
    entries named ``claude-3-5-sonnet`` before its 1,450 whose pricing link says "pricing";
    "errors" in 6 records and "svc2" in 17 weigh the same): each term weighs one plus the number
    of terms matching ten times as many items or more, and the fraction is the weight of the
    terms an item holds over one plus that of all.

    Intent keywords and common words are not terms. A name joined by punctuation
    (``python3-dev``) is a term, matched whole (``python3-dev:amd64`` too, not ``python3-devel``),
    and its words are not terms when some item holds it. A term matching more than half of the
    items does not discriminate: it counts only where it is a whole value (``python3-dev`` in
    the command lines of 300 apt records and the package of one: that one), else not at all.
    """
    intent_words = {
        k.lower() for k in (*config.recency_keywords, *config.historical_keywords, *config.range_keywords)
    }
    low = query.lower()
    compounds = list(dict.fromkeys(_COMPOUND.findall(low)))
    words = [t for t in dict.fromkeys(TERM.findall(low)) if len(t) > 1 and t not in _STOP | intent_words]
    terms = [*compounds, *(t for t in words if t not in compounds)]  # a compound first: its parts may go
    found: set[str] = set()  # the words of the compounds some item holds
    score = np.zeros(c.n, dtype=np.int64)
    whole = np.zeros(c.n, dtype=bool)
    hits: list[tuple[NDArray[np.bool_], int]] = []  # each counted term's items, and how many
    if not terms:
        return score.astype(np.float64)
    fields = []
    for f in range(len(c.names)):  # each field's distinct strings, lowercased, joined once
        vals = c.values[f]
        kinds = c.kinds[f]
        if str not in kinds:  # numbers only: matched by value below, no text to search
            fields.append(("", vals, c.distinct_numbers[f]))
            continue
        strs = vals if kinds <= {str} else [v if isinstance(v, str) else "" for v in vals]
        fields.append(("\n".join(strs).lower(), strs, c.distinct_numbers[f]))  # one C call
    for t in terms:
        if t in found:  # a part of a name the items hold ("python3" of "python3-dev"): the name says it
            continue
        forms = [t] if t in compounds else _forms(t)
        # a word: not inside another; a compound: not inside a longer name (python3-dev in python3-devel)
        edge = r"[\w.+:-]" if t in compounds else r"\w"
        words = [re.compile(rf"(?<!{edge}){re.escape(x)}(?![\w.+-]\w|[\w+-])" if t in compounds
                            else rf"(?<![\w]){re.escape(x)}(?![\w])") for x in forms]  # fmt: skip
        try:
            tnum = float(t)
        except ValueError:
            tnum = None
        hit = np.zeros(c.n, dtype=bool)
        exact = np.zeros(c.n, dtype=bool)
        for f, (big, strs, nums) in enumerate(fields):
            table = None
            for x, word in zip(forms, words, strict=True):
                if x not in big:  # the C substring test first: most fields hold no term
                    continue
                big, starts = _value_starts(big, strs)
                pos = [m.start() for m in word.finditer(big)]
                if pos:
                    table = np.zeros(len(c.values[f]) + 1, dtype=bool) if table is None else table
                    table[np.searchsorted(starts, pos, side="right") - 1] = True
            if tnum is not None and nums.size and (nums == tnum).any():
                table = np.zeros(len(c.values[f]) + 1, dtype=bool) if table is None else table
                table[:-1] |= nums == tnum
            if table is not None:
                hit |= table[c.codes[f]]
                same = np.append([_names(v, forms) for v in strs], False)
                if tnum is not None and nums.size:
                    same[:-1] |= nums == tnum
                exact |= (table & same)[c.codes[f]]
        if not 0 < np.count_nonzero(hit) <= 0.5 * c.n:
            # a word of every other command line, but the whole value of a few ("python3-dev" in
            # 300 apt command lines, the package of one record): those few
            hit = exact
        df = np.count_nonzero(hit)
        if 0 < df <= 0.5 * c.n:
            score += 2 * hit
            whole |= exact
            hits.append((hit, df))
            if t in compounds:
                found.update(TERM.findall(t))
    weights = [1 + sum(other >= 10 * df for _, other in hits) for _, df in hits]
    rarity = np.zeros(c.n)
    for (hit, _), w in zip(hits, weights, strict=True):
        rarity += w * hit
    return (score + whole) + rarity / (1.0 + sum(weights))


def _names(value: object, forms: list[str]) -> bool:
    """Whether a value is one of ``forms`` as a whole, or with a ``:qualifier`` (``git:amd64``)."""
    if not isinstance(value, str):
        return False
    v = value.strip().lower()
    return v in forms or v.split(":", 1)[0] in forms


def _value_starts(big: str, strs: list[str]) -> tuple[str, NDArray[np.int64]]:
    """Where each value starts in ``big`` (the values lowercased, joined by newlines).

    When lowercasing changed a length (a few Unicode letters do), the values
    are lowercased one by one so that positions still line up.
    """
    lens = np.fromiter(map(len, strs), dtype=np.int64, count=len(strs))
    if len(big) != int(lens.sum()) + max(len(strs) - 1, 0):
        low = [x.lower() for x in strs]
        big = "\n".join(low)
        lens = np.fromiter(map(len, low), dtype=np.int64, count=len(low))
    starts = np.zeros(len(strs), dtype=np.int64)
    if len(strs) > 1:
        np.cumsum(lens[:-1] + 1, out=starts[1:])
    return big, starts


def protected_items(c: Columns, protect: object) -> NDArray[np.bool_]:
    """Items matching ``protect``: regular expressions searched in every field's value, or per field.

    ``protect`` is a pattern (``str`` or compiled), a list of them (an item
    matches if any pattern finds any of its values), or a mapping from field
    name to a pattern or to a predicate ``value -> bool``.  Values are searched
    as text: strings as they are, other values in their JSON spelling
    (``true``, ``null``, ``3.5``, nested objects as JSON).
    """
    rules: list[tuple[int | None, Any]]
    if isinstance(protect, Mapping):
        rules = []
        for name, rule in protect.items():
            if name in c.names:
                rules.append((c.names.index(name), _rule(rule, f"protect[{name!r}]")))
            else:
                _rule(rule, f"protect[{name!r}]")  # still checked: a typo must not pass silently
    elif isinstance(protect, str | re.Pattern):
        rules = [(None, _rule(protect, "protect"))]
    elif isinstance(protect, Sequence):
        rules = [(None, _rule(p, f"protect[{k}]")) for k, p in enumerate(protect)]
    else:
        raise TypeError(
            "protect must be a regular expression, a list of them, or a mapping field -> expression or "
            f"predicate; got {type(protect).__name__}."
        )
    hit = np.zeros(c.n, dtype=bool)
    for f0, rule in rules:
        for f in range(len(c.names)) if f0 is None else [f0]:
            table = np.zeros(len(c.values[f]) + 1, dtype=bool)  # last slot: missing (code -1)
            for code, v in enumerate(c.values[f]):
                table[code] = rule(v)
            hit |= table[c.codes[f]]
    return hit


def _rule(rule: object, name: str):
    if callable(rule) and not isinstance(rule, re.Pattern):
        return lambda v: bool(rule(v))
    if isinstance(rule, str):
        try:
            rule = re.compile(rule)
        except re.error as exc:
            raise ValueError(f"{name} is not a valid regular expression ({exc}): {rule!r}.") from None
    if not isinstance(rule, re.Pattern):
        raise TypeError(f"{name} must be a regular expression or a predicate; got {type(rule).__name__}.")
    return lambda v: rule.search(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)) is not None


# ----------------------------------------------------------------------------------------
# Information density and region selection (ideas 4 and 6)
# ----------------------------------------------------------------------------------------


def information_scores(c: Columns) -> NDArray[np.float64]:
    """The plan's score per item: sum of (1 - value frequency), 0.5 per unusual field, 0.3 if longer than average."""
    s = np.zeros(c.n)
    typical = []
    for f in range(len(c.names)):
        present = c.codes[f] >= 0
        m = np.count_nonzero(present)
        typical.append(m >= 0.5 * c.n)
        if m == 0:
            continue
        freq = c.counts[f] / m
        s[present] += 1.0 - freq[c.codes[f][present]]
        if not typical[-1]:
            s[present] += 0.5
    s += 0.3 * (c.length > c.length.mean())
    return s


def _pick(
    cands: NDArray[np.int64],
    k: int,
    score: NDArray[np.float64] | None,
    taken: set,
    c: Columns,
    late: bool = False,
) -> list[int]:
    """Up to ``k`` of ``cands``, best score first (ties: earliest, or latest with ``late``),
    never an item identical to a taken one."""
    if k <= 0 or cands.size == 0:
        return []
    order = cands if score is None else cands[np.lexsort((-cands if late else cands, -score[cands]))]
    out = []
    for i in order.tolist():
        code = c.item_code[i]
        if code in taken:
            continue
        out.append(i)
        taken.add(code)
        if len(out) == k:
            break
    return out


def stratified_middle(c: Columns, k: int, taken: set) -> list[int]:
    """Middle samples (10%-90% of positions): by category, by numeric variance, or evenly spaced."""
    n = c.n
    lo, hi = int(n * 0.1), int(n * 0.9)
    middle = np.arange(lo, hi, dtype=np.int64)
    if k <= 0 or middle.size == 0:
        return []
    # 1. A categorical field with a few groups: one sample per group, largest groups first.
    for f in range(len(c.names)):
        ncodes = len(c.values[f])
        if 2 <= ncodes <= max(2, k * 2) and np.all(c.codes[f] >= 0) and ncodes < n / 2:
            codes = c.codes[f][middle]
            picked: list[int] = []
            for code in np.argsort(-np.bincount(codes, minlength=ncodes), kind="stable"):
                members = middle[codes == code]
                if members.size:
                    centre = members[members.size // 2 : members.size // 2 + 1]
                    picked += _pick(np.concatenate([centre, members]), 1, None, taken, c)
                if len(picked) == k:
                    return picked
            return picked + _even(middle, k - len(picked), taken, c)
    # 2. Numeric fields: the points where the series changes most.
    num = [f for f in range(len(c.names)) if np.count_nonzero(~np.isnan(c.numeric[f])) >= 0.9 * n]
    if num:
        change = np.zeros(n)
        for f in num:
            x = np.nan_to_num(c.numeric[f], nan=np.nanmedian(c.numeric[f]))
            d = np.abs(np.diff(x, prepend=x[0]))
            scale = np.std(x) or 1.0
            change += d / scale
        if np.ptp(change[middle]) > 1e-12 * max(1.0, change[middle].max()):
            return _pick(middle, k, change, taken, c)
    # 3. Even spacing.
    return _even(middle, k, taken, c)


def _even(middle: NDArray[np.int64], k: int, taken: set, c: Columns) -> list[int]:
    """The plan's even spacing (``step = len // (k + 1)``), sliding past identical items."""
    if k <= 0 or middle.size == 0:
        return []
    step = max(1, middle.size // (k + 1))
    out = []
    for j in range(1, k + 1):
        pos = min(j * step, middle.size - 1)
        got = _pick(np.concatenate([middle[pos:], middle[:pos]]), 1, None, taken, c)
        out += got
    return out


def _fill(c: Columns, k: int, w: AnchorWeights, taken: set) -> list[int]:
    """``k`` items at evenly spaced quantiles of the density ``2 wf (1 - x) + 2 wb x + wm``."""
    if k <= 0:
        return []
    n = c.n
    x = (np.arange(n) + 0.5) / n
    dens = 2 * w.front * (1 - x) + 2 * w.back * x + w.middle
    cdf = np.cumsum(dens)
    cdf /= cdf[-1]
    targets = (np.arange(k) + 0.5) / k
    pos = np.minimum(np.searchsorted(cdf, targets), n - 1)
    out = []
    for p in pos.tolist():
        for d in range(n):  # the nearest item not identical to one kept, looking outwards
            hit = next((i for i in (p - d, p + d) if 0 <= i < n and c.item_code[i] not in taken), None)
            if hit is not None:
                taken.add(c.item_code[hit])
                out.append(hit)
                break
    return out
