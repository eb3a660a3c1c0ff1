"""Choosing the size: ``max_items="auto"``, the fewest items that carry the array's information.

The measure.  Each item holds *facts*, one per field it has:

* a short text (up to four words) is one fact, its normalised form: lower case,
  runs of digits as ``#`` and long hex ids as ``#`` — so ``"req-000731"`` and
  ``"req-000732"`` are the same fact, ``"svc2"`` and ``"svc3"`` too, and a
  field of ids or timestamps adds one fact, not one per item; a field whose
  normalised values are still mostly distinct (more distinct values than half
  the items that have it, at least 20 of them: package names, versions, keys)
  is an identifier column and counts as one fact too, and so does, without
  being normalised, a field of single-word values that are mostly distinct
  (ids, timestamps, paths: the check that saves normalising them);
* a longer text (and a nested value, read as its JSON text) is one fact per
  distinct normalised word of three letters or more — prose carries many;
* a number is the one of eight quantile buckets of its field it falls in;
* ``true``/``false``/``null`` are themselves; and the set of fields an item
  has is one more fact (an item with an unusual field says something).

The greedy order that covers new facts fastest (maximum coverage; each step
takes the item with the most facts not yet covered, ties to the lowest index,
evaluated lazily: a gain can only shrink, so a stale gain that still tops the
heap is recomputed and, if it still tops it, is exact) gives the curve of facts
covered by the first k items.  ``auto`` is the smallest k whose items cover the
bias's share of all facts: ``"conservative"`` 100%, ``"balanced"`` 95%,
``"aggressive"`` 85% (or any share in (0, 1]).  Repetitive data (logs of a few
services and templates) reaches it in a few items; diverse data (search results
with their own titles and snippets) needs many, up to ``upper``.  Every error,
anomaly, query match and protected item is kept on top of that:
:func:`~scwo_np.anchor.crush` then uses ``max(k, must-keep + min_anchor_slots)``.

Why facts and not n-grams of the whole item: per-field facts are cheap on the
columns :func:`crush` already builds (each distinct value is normalised once),
and they separate "many values of the same few kinds" from "many different things",
which is what decides whether more items tell the model more.
"""

from __future__ import annotations

import json
import re

import numpy as np
from numba import njit
from numpy.typing import NDArray

from .._config import JIT
from .._registry import Registry
from ..validation import check_int
from ._columns import Columns, _check_columns, _Codes, _sorted_quantile

__all__ = ["BIASES", "auto_size", "information_curve"]

#: Share of the array's facts the kept items must cover, per bias.
#: Registry of the named biases of ``max_items="auto"`` (``bias=``): name -> share of the facts kept.
BIASES: Registry[float] = Registry("bias", {"conservative": 1.0, "balanced": 0.95, "aggressive": 0.85})
_HEX = re.compile(r"\b(?=[0-9a-f-]*\d)[0-9a-f][0-9a-f-]{7,}\b")
# Bytes to 'x' (lowercase hex digits) or ' ' (the rest): a run of 8 hex digits is one memmem away
# (the regular expression [0-9a-f]{8} took 10 ns a character; this, under one).
_HEX_BYTES = bytes(ord("x") if chr(b) in "0123456789abcdef" else ord(" ") for b in range(256))
_DIGITS = str.maketrans("0123456789", "#" * 10)
_BUCKETS = 8
_QUANTILES = (np.arange(1, _BUCKETS) / _BUCKETS).tolist()  # the bucket edges


def _norm(s: str) -> str:
    """Lower case, long hex ids as ``#``, every run of ASCII digits as one ``#``.

    Vector passes instead of a regular expression: a tool output has a digit
    run in nearly every value, and a substitution per match cost more than the
    rest of the auto size together.  ASCII text goes through ``str.translate``
    (a table lookup per byte); other text through its code points as an array
    (``str.translate`` looks each character up in a dict there: 3 ms on 200 kB).
    Hex ids are looked for only when the first 4,096 characters hold a run of 8 hex digits.
    """
    s = s.lower()
    if _has_hex_run(s):
        s = _HEX.sub("#", s)
    if s.isascii():
        s = s.translate(_DIGITS)
        if "##" not in s:
            return s
        cp, enc = _code_points(s)
    else:
        cp, enc = _code_points(s)
        digit = (cp >= 48) & (cp <= 57)
        if "##" not in s and not digit.any():
            return s
        cp = np.where(digit, np.uint32(35), cp)
    # Runs of '#' to one, in one vector pass (str.replace would need a pass per halving of the runs).
    h = cp == 35
    keep = np.ones(cp.size, dtype=bool)
    keep[1:] = ~(h[1:] & h[:-1])
    return cp[keep].tobytes().decode(enc, "surrogatepass")


def _has_hex_run(s: str) -> bool:
    """8 lowercase hex digits in a row within the first 4,096 characters of ``s``."""
    return b"xxxxxxxx" in s[:4096].encode("utf-8", "surrogatepass").translate(_HEX_BYTES)


def _code_points(s: str) -> tuple[NDArray[np.unsignedinteger], str]:
    """The code points of ``s`` as an array (bytes for ASCII text) and the encoding that gives them back."""
    if s.isascii():
        return np.frombuffer(s.encode("ascii"), dtype=np.uint8), "ascii"
    return np.frombuffer(s.encode("utf-32-le", "surrogatepass"), dtype=np.uint32), "utf-32-le"


_TOKEN = re.compile(r"\x1f|[a-z#][a-z#_'-]{2,}")


def _value_facts(strs: list[str]) -> tuple[NDArray[np.int64], NDArray[np.int64], int]:
    """Facts of a field's distinct values given as text: CSR ``(starts, flat local ids)``, number of ids.

    All values are normalised in a few C calls over one string joined by the unit separator (\\x1f); the
    words of long values are found in one ``findall``, each word's value given
    by the separators before it.  A short value and a word that normalise
    to the same text are the same fact.
    """
    joined = "\x1f".join(strs)
    if joined.count("\x1f") != len(strs) - 1:  # a value holds the separator itself
        joined = "\x1f".join(t.replace("\x1f", " ") for t in strs)
    big = _norm(joined)
    norm = big.split("\x1f")
    m = len(norm)
    code = _Codes()
    cp, _ = _code_points(big)  # lengths and spaces of every value from the separators' positions
    sep = np.flatnonzero(cp == 0x1F)
    lens = np.diff(sep, prepend=-1, append=cp.size) - 1
    spaces = np.bincount(np.searchsorted(sep, np.flatnonzero(cp == 0x20)), minlength=m)
    short = (lens <= 48) & (spaces <= 3)
    if short.all():
        flat = np.fromiter(map(code.__getitem__, norm), dtype=np.int64, count=m)
        return np.arange(m + 1, dtype=np.int64), flat, len(code)
    tokens = np.array(_TOKEN.findall(big), dtype=object)
    tsep = tokens == "\x1f"
    owner = np.cumsum(tsep)[~tsep]  # the value each word belongs to
    words = tokens[~tsep]
    wid = np.fromiter(map(code.__getitem__, words), dtype=np.int64, count=words.size)
    keep = ~short[owner]
    sv = np.flatnonzero(short)
    sid = np.fromiter(map(code.__getitem__, (norm[i] for i in sv.tolist())), dtype=np.int64, count=sv.size)
    owner = np.concatenate([owner[keep], sv])
    wid = np.concatenate([wid[keep], sid])
    k = len(code) + 1
    pairs = np.unique(owner * k + wid)  # distinct (value, fact), sorted by value
    starts = np.searchsorted(pairs // k, np.arange(m + 1))
    return starts.astype(np.int64), (pairs % k).astype(np.int64), len(code)


def _facts(c: Columns) -> tuple[NDArray[np.int64], NDArray[np.int64], int]:
    """CSR (indptr, fact ids) of each item's distinct facts, and an upper bound on the fact ids."""
    n_ids = 0
    single: list[NDArray[np.int64]] = []  # one fact per item per field (-1: none)
    multi: list[tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]] = []  # codes, starts, flat
    for f in range(len(c.names)):
        vals = c.values[f]
        codes = c.codes[f]
        kinds = c.kinds[f]
        if kinds and kinds <= {int, float}:
            x = c.numeric[f]
            ok = ~np.isnan(x)
            if ok.any():
                xs = np.sort(x[ok])
                edges = np.unique([_sorted_quantile(xs, q) for q in _QUANTILES])
                bucket = np.searchsorted(edges, np.nan_to_num(x), side="right")
                single.append(np.where(ok, n_ids + bucket, -1).astype(np.int64))
                n_ids += edges.size + 1
            continue
        if kinds <= {str}:
            strs = vals
            m = int(np.count_nonzero(codes >= 0))
            if m >= 20 and len(vals) > 0.5 * m and not any(" " in v for v in vals[:64]):
                joined = "\x1f".join(vals)
                if " " not in joined:  # single-word values, mostly distinct: ids, timestamps, paths
                    single.append(np.where(codes >= 0, n_ids, -1).astype(np.int64))
                    n_ids += 1
                    continue
        else:  # numbers in a mixed field are one fact; other values read as their JSON text
            strs = [
                v
                if isinstance(v, str)
                else "#"
                if type(v) in (int, float)
                else json.dumps(v, sort_keys=True, ensure_ascii=False)
                for v in vals
            ]
        starts, flat, used = _value_facts(strs)
        flat += n_ids
        n_ids += used
        if np.array_equal(starts, np.arange(len(vals) + 1)):  # one fact per value
            col = np.append(flat, -1)[codes]
            present = col >= 0
            m = int(np.count_nonzero(present))
            if m >= 20 and np.unique(col[present]).size > 0.5 * m:
                # An identifier column (names, versions, keys): every value new, none telling
                # more than its kind; it is one fact, or every list of names would look diverse.
                col = np.where(present, n_ids, -1).astype(np.int64)
                n_ids += 1
            single.append(col)
        else:
            multi.append((codes, starts, flat))
    base = n_ids
    present = c.codes >= 0
    if len(c.names) <= 62:  # the set of fields an item has, as a bit mask
        mask = (present.astype(np.int64) << np.arange(len(c.names), dtype=np.int64)[:, None]).sum(axis=0)
        _, shape = np.unique(mask, return_inverse=True)
    else:
        _, shape = np.unique(present.T, axis=0, return_inverse=True)
    shape = shape.reshape(-1).astype(np.int64)
    single.append(base + shape)
    n_facts = base + (int(shape.max()) + 1 if c.n else 0)
    cols = np.stack(single, axis=1) if single else np.zeros((c.n, 0), np.int64)
    counts = np.count_nonzero(cols >= 0, axis=1)
    for codes, starts, _ in multi:
        lens = np.append(np.diff(starts), 0)
        counts = counts + lens[codes]
    indptr = np.zeros(c.n + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    facts = np.empty(indptr[-1], dtype=np.int64)
    _fill_single(cols, indptr, facts)
    fill = indptr[:-1] + np.count_nonzero(cols >= 0, axis=1)
    for codes, starts, flat in multi:
        _fill_multi(codes, flat, starts, fill, facts)
    return indptr, facts, n_facts


@njit(**JIT)
def _fill_single(single, indptr, facts):
    for i in range(single.shape[0]):
        p = indptr[i]
        for j in range(single.shape[1]):
            if single[i, j] >= 0:
                facts[p] = single[i, j]
                p += 1


@njit(**JIT)
def _fill_multi(codes, flat, starts, fill, facts):
    for i in range(codes.shape[0]):
        k = codes[i]
        if k < 0:
            continue
        for r in range(starts[k], starts[k + 1]):
            facts[fill[i]] = flat[r]
            fill[i] += 1


@njit(**JIT)
def _coverage_curve(indptr, facts, n_facts, limit):
    """Facts covered after each of the first ``limit`` greedy picks (lazy max coverage)."""
    n = indptr.shape[0] - 1
    covered = np.zeros(n_facts, np.bool_)
    # Heap of (gain bound, index): larger gain first, then smaller index.
    hg = np.empty(n, np.int64)
    hi = np.empty(n, np.int64)
    size = 0
    for i in range(n):  # push all; a binary heap built by sifting up
        g = indptr[i + 1] - indptr[i]
        pos = size
        size += 1
        while pos > 0:
            par = (pos - 1) // 2
            if hg[par] > g or (hg[par] == g and hi[par] < i):
                break
            hg[pos] = hg[par]
            hi[pos] = hi[par]
            pos = par
        hg[pos] = g
        hi[pos] = i
    curve = np.zeros(limit, np.int64)
    total = 0
    k = 0
    while k < limit and size > 0:
        i = hi[0]
        g = 0
        for p in range(indptr[i], indptr[i + 1]):
            if not covered[facts[p]]:
                g += 1
        if g == hg[0]:  # the bound was exact: pick it
            for p in range(indptr[i], indptr[i + 1]):
                covered[facts[p]] = True
            total += g
            curve[k] = total
            k += 1
            size -= 1
            gk, ik = hg[size], hi[size]
        else:  # stale: re-insert with its true gain
            gk, ik = g, i
        pos = 0  # sift (gk, ik) down from the root
        while True:
            ch = 2 * pos + 1
            if ch >= size:
                break
            if ch + 1 < size and (hg[ch + 1] > hg[ch] or (hg[ch + 1] == hg[ch] and hi[ch + 1] < hi[ch])):
                ch += 1
            if gk > hg[ch] or (gk == hg[ch] and ik < hi[ch]):
                break
            hg[pos] = hg[ch]
            hi[pos] = hi[ch]
            pos = ch
        if size > 0:
            hg[pos] = gk
            hi[pos] = ik
    for r in range(k, limit):
        curve[r] = total
    return curve


def information_curve(c: Columns, limit: int | None = None) -> NDArray[np.int64]:
    """Facts covered by the first k items of the greedy order, k = 1..limit; the last entry is the total.

    A fact is one (field, value) pair, with numbers binned and long strings
    cut into their words; the greedy order takes at each step the item that
    covers the most facts not yet covered (ties to the lowest index).

    Parameters
    ----------
    c : Columns
        The items as columns (:func:`~scwo_np.anchor.columns`).
    limit : int, optional
        Length of the curve (default: every item).

    Returns
    -------
    ndarray of int64, shape (min(limit, n),)
        Facts covered by the first 1, 2, ... items.

    Examples
    --------
    >>> from scwo_np.anchor import columns
    >>> logs = [{"svc": f"svc{i % 3}", "level": "INFO", "msg": f"req {i} ok"} for i in range(50)]
    >>> information_curve(columns(logs), 5).tolist()
    [4, 4, 4, 4, 4]
    """
    c = _check_columns(c)
    limit = c.n if limit is None else min(check_int(limit, name="limit", low=0), c.n)
    indptr, facts, n_facts = _facts(c)
    return _coverage_curve(indptr, facts, np.int64(n_facts), np.int64(limit))


def auto_size(c: Columns, *, bias: str | float = "balanced", upper: int = 100, lower: int = 5) -> int:
    """The smallest k whose greedy items cover the bias's share of the facts, within ``[lower, upper]``.

    What ``crush(..., max_items="auto")`` keeps: the size where the
    :func:`information_curve` reaches the share of all facts that ``bias`` asks for.

    Parameters
    ----------
    c : Columns
        The items as columns (:func:`~scwo_np.anchor.columns`).
    bias : {"conservative", "balanced", "aggressive"} or float in (0, 1]
        The share of the facts to cover (``BIASES`` holds the names' shares).
    upper, lower : int
        Bounds of the size (never more than the number of items).

    Returns
    -------
    int

    Examples
    --------
    >>> from scwo_np.anchor import columns
    >>> logs = [{"svc": f"svc{i % 3}", "ms": i % 7, "msg": f"req {i} ok"} for i in range(500)]
    >>> auto_size(columns(logs))
    7
    """
    c = _check_columns(c)
    share = _share(bias)
    upper = check_int(upper, name="upper", low=1)
    lower = check_int(lower, name="lower", low=1)
    if c.n == 0:
        return lower
    indptr, facts, n_facts = _facts(c)
    total = int(np.count_nonzero(np.bincount(facts, minlength=n_facts)))  # what all items cover together
    limit = min(upper, c.n)  # the greedy stops at the upper bound: later picks cannot matter
    curve = _coverage_curve(indptr, facts, np.int64(n_facts), np.int64(limit))
    need = share * total
    k = int(np.searchsorted(curve, need - 1e-9, side="left")) + 1  # limit + 1 when not reached
    return int(min(max(k, lower), upper, c.n) if c.n > lower else c.n)


def _share(bias: object) -> float:
    if isinstance(bias, str):
        return BIASES.lookup(bias, hint="Or pass a share in (0, 1].")
    if isinstance(bias, bool) or not isinstance(bias, int | float) or not 0 < bias <= 1:
        raise ValueError(f"bias must be one of {sorted(BIASES)} or a share in (0, 1]; got {bias!r}.")
    return float(bias)
