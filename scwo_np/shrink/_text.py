"""One text within a token budget by its shape: a tool result as the model will read it.

:func:`shrink_text` puts a text within a token budget by its shape, losing nothing when it can:

1. within the budget: the text itself (``"whole"``);
2. JSON (an array, an object holding one, JSON Lines, or a Python literal such as a
   ``repr`` of a list of dicts): the cheapest lossless form that fits, of compact JSON
   (``"compact"``), the columnar form (``"lossless"``), CSV for a flat array of objects
   (``"csv"``) and TOON (``"toon"``, when the ``toon-format`` library is installed and its text
   decodes back to the same data); else the token-budgeted crush of :func:`scwo_np.anchor` with the call's
   arguments as the query (``"crushed"``: errors, anomalies, query matches and the newest
   items first, the omission marker inside the JSON); when the text around that array is over the
   budget, its arrays crushed in turn (:func:`_shrink_nested`); JSON is never shrunk as text, and
   JSON that does not fit as JSON raises :class:`BudgetTooSmall`, naming the budget that holds it;
3. a unified diff (``git diff``, ``git show``, ``git log -p``, ``diff -u``:
   :func:`scwo_np.anchor._diff.split_diff`): the commit's text first, whole hunks under their
   file's header, each file's first hunk offered before any file's second, the files left
   without one named (``"diff"``);
4. repeated records as text (:func:`scwo_np.anchor._records.split_records`: ``git log``
   entries, log lines, table rows, ``key: value`` blocks): the crush of records in time
   order (``"records"``);
5. prose: the sentences :func:`scwo_np.select.select_texts` picks for the call's arguments
   and the tool's name, in their order (``"prose"``);
6. anything else: its lines, or pieces of it, crushed as records (``"pieces"``).

Whatever was left out is stored (:class:`~scwo_np.anchor.CrushStore`) under the key the text
names, so ``CrushStore.retrieve`` (``retrieve_dropped`` over MCP) gives it back.  ``scwo mcp
proxy`` applies it to each ``CallToolResult`` (:mod:`scwo_np.mcp_server._shrink`), LangChain's
``ScwoToolOutputMiddleware`` to each tool message.
"""

from __future__ import annotations

import ast
import csv
import dataclasses
import io
import json
import logging
import os
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._lexical import hashed_tfidf, lexical_relevance, word_lists
from .._registry import Registry
from ..anchor import COLUMNAR_KEY, MARKER_KEY, CrushStore, is_marker, lossless_decode, read_document
from ..anchor._diff import fit_diff, split_diff
from ..anchor._json import JSONTooLarge, _lossless_may_fit, fit_nested, fit_tokens
from ..anchor._lossless import _encode_document, _squeeze
from ..anchor._records import (
    MIN_BUDGET,
    chunk_records,
    fit_records,
    records_marker,
    split_records,
    wrapped_prose,
)
from ..anchor._store import _crush_key, array_key, json_strings
from ..select import select_texts
from ..text import split_sentences
from ..tokens import as_token_counter, count_tokens

__all__ = [
    "LOSSLESS_FORMS",
    "MODES",
    "BudgetTooSmall",
    "Shrunk",
    "call_query",
    "looks_like_json",
    "shrink_text",
]

log = logging.getLogger(__name__)

#: ``mode`` of a tool (the proxy's config file): how its results are put within the budget.
MODES: Registry = Registry(
    "mode",
    {
        "auto": "by the text's shape: JSON, then a unified diff, then repeated records, then prose",
        "json": "as JSON (a text that is not JSON falls back to auto)",
        "diff": "as a unified diff (git diff, git show, diff -u): whole hunks under their file's header",
        "records": "as repeated records (log lines, git log entries, rows, key: value blocks)",
        "prose": "sentence selection for the call's arguments and the tool's name",
        "off": "never shrink: every result passes through unchanged",
    },
)
#: Sentences sentence selection weighs at least, of a long text (see :func:`_pool`): more when twice as
#: many as fill the budget, at the text's mean sentence, are more.
PROSE_POOL = 240
#: Buckets of the hashed TF-IDF vectors the sentences are compared by (:func:`scwo_np._lexical.hashed_tfidf`:
#: no fitting; an LSA space fitted on the pool took 17 ms of the 20 a 100 KB result may cost).
PROSE_DIM = 256
#: The most of the budget one prose unit may take: a longer one (a man page's option list, a code
#: block read as one span) is cut at its line breaks (:func:`_capped`).
UNIT_SHARE = 0.25
#: Characters of one argument value, and of all of them, that a call's query takes (:func:`call_query`).
QUERY_VALUE_CHARS = 200
QUERY_CHARS = 1000
_SCALARS = (str, int, float, bool, type(None))


@dataclass(frozen=True)
class Shrunk:
    """A text within the budget, and what was done to it (what :func:`shrink_text` returns).

    Parameters
    ----------
    text : str
        The text, within the budget, markers included.
    form : str
        How: ``"whole"``, ``"compact"``, ``"lossless"``, ``"csv"``, ``"toon"``, ``"crushed"``,
        ``"diff"``, ``"records"``, ``"prose"``, ``"pieces"`` (``"blocks"`` and ``"files"`` from the
        proxy).
    tokens : int
        Its tokens.
    tokens_before : int
        The tokens of the text it was made from.
    key : str, optional
        The store key of what was left out; None when nothing was, or no store was given.
    kept : int
        Units kept ...
    of : int
        ... of this many.
    what : str
        What a unit is: items, records, hunks, sentences or pieces.
    collections : tuple of dict
        For JSON of which several collections lost items (crushed in turn), each one's ``path``,
        ``kept``, ``of`` and ``key``; ``kept`` and ``of`` are then their sums, ``key`` the last one's.

    Examples
    --------
    >>> s = shrink_text("".join(f"2026-01-01 10:00:{i % 60:02d} INFO request {i}\\n" for i in range(500)), 100)
    >>> s.form, s.tokens <= 100, s.kept < s.of == 500, s.what
    ('records', True, True, 'records')
    """

    text: str
    form: str
    tokens: int
    tokens_before: int
    key: str | None = None
    kept: int = 0
    of: int = 0
    what: str = ""
    collections: tuple[dict, ...] = ()

    def meta(self, budget: int) -> dict[str, Any]:
        """What was done, in numbers (the proxy's ``_meta["scwo_np/proxy"]``).

        Parameters
        ----------
        budget : int
            The budget it was shrunk to.

        Returns
        -------
        dict
            ``form``, ``tokens``, ``tokens_before``, ``budget``; ``kept``, ``of`` and ``what`` when
            units were counted; ``key`` when something was stored.

        Examples
        --------
        >>> Shrunk("short", "whole", 2, 2).meta(100)
        {'form': 'whole', 'tokens': 2, 'tokens_before': 2, 'budget': 100}
        """
        out = {
            "form": self.form,
            "tokens": self.tokens,
            "tokens_before": self.tokens_before,
            "budget": budget,
        }
        if self.of:
            out.update(kept=self.kept, of=self.of, what=self.what)
        if self.key is not None:
            out["key"] = self.key
        if self.collections:  # each array crushed, not only the last (a graph's 653 relations)
            out["collections"] = [dict(c) for c in self.collections]
        return out


#: An SQL statement, as a database tool takes it (``read_query``'s ``query``): not a question.
_SQL_COLUMN = r"[\w.\"`\[\]*]+(?:\([^)]*\))?(?:\s+as\s+\w+)?"  # name, t.name, count(*), x AS y
_SQL = re.compile(
    rf"\s*(?:select\s+(?:distinct\s+)?(?:\*|{_SQL_COLUMN}(?:\s*,\s*{_SQL_COLUMN})*)\s+from\s|"
    r"with\s+(?:recursive\s+)?\w+(?:\s*\([^)]*\))?\s+as\s*\(|pragma\s+\w|"
    r"explain\s+(?:query\s+plan\s+)?select\b|insert\s+(?:or\s+\w+\s+)?into\s|update\s+\S+\s+set\s|"
    r"delete\s+from\s|create\s+(?:temp\w*\s+)?(?:table|view|index)\s|drop\s+(?:table|view|index)\s)",
    re.IGNORECASE,
)


def call_query(tool: str, arguments: Mapping[str, Any] | None, hint: str = "") -> str:
    """The query of a call: the tool's name (for prose), its argument values and a configured hint.

    An argument value is what the call asks about only in its first :data:`QUERY_VALUE_CHARS`
    characters (a file's new content or a batch of texts is material, not a question), and the
    values together in their first :data:`QUERY_CHARS`; a longer value of several lines, or one
    that opens as JSON, is the material itself (a log or a JSON document handed to a tool), not a
    question, and is left out: its first lines would make its first records "match"; the hint
    is always whole.  An SQL statement (``SELECT ... FROM``, ``WITH ... AS (``, ``PRAGMA``...) is
    left out too: the rows are what it asked for, and its words ("packages" in ``select * from
    packages``) would make rows that mention them by chance "match".

    Parameters
    ----------
    tool : str
        The tool's name.
    arguments : mapping, optional
        The call's arguments.
    hint : str
        A query configured for the tool, added whole.

    Returns
    -------
    str
        The query, words separated by spaces.

    Examples
    --------
    >>> call_query("git_log", {"repo_path": "/repo", "max_count": 300, "x": None}, "latest fixes")
    'git_log /repo 300 latest fixes'
    >>> len(call_query("write_file", {"path": "/a", "content": "word " * 10_000}))
    214
    >>> call_query("crush", {"text": "[" + ", ".join(['{"level": "INFO"}'] * 50) + "]", "budget": 300})
    'crush 300'
    >>> call_query("read_query", {"query": "SELECT name, version FROM packages WHERE arch = 'all'"})
    'read_query'
    """
    words: list[str] = [tool]
    room = [QUERY_CHARS]

    def walk(v: Any) -> None:
        if room[0] <= 0:
            return
        if isinstance(v, Mapping):
            for x in v.values():
                walk(x)
        elif isinstance(v, list | tuple):
            for x in v:
                walk(x)
        elif v is not None and not isinstance(v, bool):
            text = str(v)
            if len(text) > QUERY_VALUE_CHARS and ("\n" in text.strip() or text.lstrip()[:1] in ("[", "{")):
                return  # the material itself, not what is asked about it
            if _SQL.match(text):
                return  # a statement: its result is what it asked for, and its words match rows by chance
            text = text[: min(QUERY_VALUE_CHARS, room[0])]
            room[0] -= len(text)
            words.append(text)

    walk(dict(arguments or {}))
    if hint:
        words.append(hint)
    return " ".join(w for w in words if w.strip())


def _counter(token_counter: object):
    c = as_token_counter(token_counter)
    return lambda text: int(count_tokens([text], c)[0])


def _read_json(text: str):
    """``(document, value or None)`` of a JSON text, or of a Python literal (``repr`` of a list); None if neither.

    A text in the columnar form (``scwo mcp``'s lossless answer) is read as the array it stands for.
    """
    s = text.strip()
    if not s or s[0] not in "[{":
        return None
    try:
        if f'"{COLUMNAR_KEY}"' in s:
            decoded = lossless_decode(s)
            return read_document(decoded), json.loads(decoded)
        return read_document(text), None
    except (ValueError, TypeError, RecursionError):
        pass
    try:  # a Python repr of data (some servers print their rows with str()): read it, never run it
        value = ast.literal_eval(s)
        compact = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        return read_document(compact), value
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _csv(value: Any) -> str | None:
    """A flat array of objects as CSV, when that loses nothing: every value a string that does not read
    as another type, a number or a boolean, and every object with the same keys."""
    if not isinstance(value, list) or not value or not all(isinstance(x, dict) for x in value):
        return None
    keys = list(value[0])
    if not keys or any(list(x) != keys for x in value):
        return None
    for x in value:
        for v in x.values():
            if isinstance(v, str):
                if not v or v != v.strip() or v in ("true", "false", "null") or _numeric(v):
                    return None
            elif not isinstance(v, int | float) or isinstance(v, float) and not np.isfinite(v):
                return None
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(keys)
    for x in value:
        w.writerow(["true" if v is True else "false" if v is False else v for v in x.values()])
    return out.getvalue()


def _numeric(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def _shrink_json(
    text: str, budget: int, count, query: str, store, before: int, counter=None
) -> Shrunk | None:
    got = _read_json(text)
    if got is None:
        return None
    doc, value = got
    if value is None and doc.form == "array":
        value = doc.items  # the array itself, parsed already
    n = len(doc.items)
    # Lossless first, each form built only when a cheap bound says it may fit.
    lossless: list[tuple[str, str | None]] = []
    ws = sum(text.count(c) for c in " \n\t\r")
    # The compact JSON's tokens, estimated: the forms below are sized against the compact JSON of a
    # sample, so an indented text (findmnt -J: 1,232 tokens, 541 compact) is not taken at its size
    # (which left TOON at 532 unbuilt for budgets of 541-649, the compact form given instead).
    flat = before * (len(text) - ws) / max(len(text), 1)
    if doc.form in ("array", "object", "mapping") and flat <= 1.1 * budget:
        lossless.append(("compact", _squeeze(text.strip()) if got[1] is None else doc.render(doc.pieces)))
    elif doc.form in ("jsonl", "concatenated") and n > 1 and flat <= 1.1 * budget:
        lossless.append(("compact", "\n".join(_squeeze(p) for p in doc.pieces)))  # one compact item a line
    if isinstance(value, list) and value and _csv_may_fit(value, flat, budget, count):
        lossless.append(("csv", _csv(value)))
    if n and doc.form != "mapping" and _lossless_may_fit(doc, flat, budget, count):
        lossless.append(("lossless", _encode_document(doc)))
    toon = _toon_module()
    if (
        toon is not None
        and n
        and doc.form in ("array", "object", "mapping")
        and _toon_may_fit(toon, doc, flat, budget, count)
    ):
        data = value if doc.form == "array" or got[1] is not None else json.loads(text)
        lossless.append(("toon", _toon(toon, data)))
    fits = [(count(t), form, t) for form, t in lossless if t is not None]
    fits = [f for f in fits if f[0] <= budget]
    if fits:
        t, form, out = min(fits, key=lambda f: f[0])
        if form == "toon" and not _toon_reads_back(toon, out, data):
            fits = [f for f in fits if f[1] != "toon"]
            t, form, out = min(fits, key=lambda f: f[0]) if fits else (0, "", "")
        if fits:
            return Shrunk(out, form, t, before, None, n, n, "items")
    if not n:
        return None
    if got[1] is None and doc.form in ("array", "object", "mapping") and ws > 0.02 * len(text):
        # spaces between tokens (json.dumps' ", " and ": ", an indented array): the kept items are
        # crushed and shown compact, the same values in fewer tokens
        doc = read_document(_squeeze(text.strip()))
    elif doc.form in ("jsonl", "concatenated") and n > 1 and ws > n + 0.02 * len(text):
        # an SDK server's list result: one text block per item, each indented by 2 (the blocks joined
        # by line breaks): the same, one compact item a line
        doc = dataclasses.replace(doc, pieces=[_squeeze(p) for p in doc.pieces])
    # An array an upstream crushed already (``scwo mcp`` behind the proxy) ends with its marker: the
    # count of what it left out and the key that gets it back. Kept, last, as the item it is not (so
    # the proxy's own marker counts the upstream's items alone), and without its ranges and field
    # summary (one was 1,000 tokens), which its key gives back.
    theirs = None
    if is_marker(doc.items[-1]) and doc.form in ("array", "object"):
        mark = doc.items[-1][MARKER_KEY]
        theirs = json.dumps({MARKER_KEY: {k: mark[k] for k in ("count", "of", "key") if k in mark}},
                            ensure_ascii=False, separators=(",", ":"))  # fmt: skip
        doc = dataclasses.replace(doc, items=doc.items[:-1], pieces=doc.pieces[:-1])
        n -= 1
    room = budget - (count(theirs) + 1 if theirs is not None else 0)  # the upstream's marker and a comma
    for _ in range(4):  # a counter whose counts do not add up: less room by the overflow
        res = fit_tokens(doc, room, store=store, query=query, token_counter=counter, lossless=False)
        text, tokens = res.text, res.tokens
        if theirs is not None:
            end = len(text) - len(doc.tail) - 1  # the array's closing bracket
            text = text[:end] + ("," if res.kept.size or res.key else "") + theirs + text[end:]
            tokens = count(text)
        if tokens <= budget:
            break
        room -= tokens - budget
    else:
        raise ValueError(f"the crushed array and the upstream's marker do not fit in {budget} tokens")
    if res.form == "whole":
        return Shrunk(text, "compact", tokens, before, None, n, n, "items")
    return Shrunk(text, "crushed", tokens, before, res.key, len(res.kept), res.n, "items")


#: Forms of a shrunk text that hold the whole result (nothing left out).
LOSSLESS_FORMS = ("compact", "lossless", "csv", "toon")


class BudgetTooSmall(ValueError):
    """A JSON result that no crush puts within the budget as JSON: the message names the budget that
    would do (the proxy answers the call with it as a tool error, never with broken JSON).

    Examples
    --------
    >>> import json
    >>> deep = json.dumps({"note": "word " * 400, "rows": [{"id": i} for i in range(500)]})
    >>> try:
    ...     shrink_text(deep, 64, token_counter=lambda text: len(text))  # a token per character
    ... except BudgetTooSmall as exc:
    ...     "give budget >=" in str(exc)
    True
    """


def _shrink_nested(text: str, budget: int, count, query: str, store, before: int, counter) -> Shrunk | None:
    """A JSON array or object whose collection's crush leaves too much around it (``findmnt -J``), or
    keeps none of its items (every one over the budget), as JSON still: its collections crushed one
    after another (:func:`scwo_np.anchor._nested.fit_nested`). None when ``text`` is not a JSON array
    or object.

    Raises
    ------
    BudgetTooSmall
        When every collection crushed to its marker still leaves the text over ``budget``: it names
        the budget that holds it.
    """
    got = _read_json(text)
    if got is None or got[0].form not in ("array", "object", "mapping"):
        return None
    cur = text if got[1] is None else json.dumps(got[1], ensure_ascii=False, separators=(",", ":"))
    if f'"{COLUMNAR_KEY}"' in cur:  # the columnar form: the array it stands for
        cur = json.dumps(json.loads(lossless_decode(cur)), ensure_ascii=False, separators=(",", ":"))
    try:
        res = fit_nested(cur, budget, token_counter=counter, query=query, store=store)
    except JSONTooLarge as exc:
        raise BudgetTooSmall(
            f"the result is JSON of {before:,} tokens; with its arrays crushed to their markers it still takes "
            f"{exc.need:,}, over the budget of {budget:,}: give budget >= {exc.need:,} for this tool."
        ) from None
    # every collection that lost items, in the order crushed (a graph's 653 relations of 654 were
    # not reported beside its entities; a kept item's fields, all kept, were reported alone)
    colls = [c for c in (*res.earlier, {"path": res.path, "kept": len(res.kept), "of": res.n, "key": res.key})
             if c["kept"] < c["of"]]  # fmt: skip
    if not colls:
        return Shrunk(res.text, "crushed", res.tokens, before, res.key, len(res.kept), res.n, "items")
    if len(colls) == 1:  # the one that lost items, which need not be the last crushed (pip inspect's
        c = colls[0]  # 248 packages all left out were reported as "kept 11 of 11": its environment)
        return Shrunk(res.text, "crushed", res.tokens, before, c["key"], c["kept"], c["of"], "items")
    kept, of = sum(c["kept"] for c in colls), sum(c["of"] for c in colls)
    return Shrunk(res.text, "crushed", res.tokens, before, colls[-1]["key"], kept, of, "items", tuple(colls))


def _toon_module():
    """``toon_format`` (TOON's official Python library, in the mcp extra), or None when it is not installed."""
    try:
        import toon_format
    except ImportError:
        return None
    return toon_format


def _toon(toon, data: Any) -> str | None:
    try:
        return toon.dumps(data)
    except (TypeError, ValueError) as exc:  # a value TOON cannot write: the other forms remain
        log.info("TOON could not encode the result (%s)", exc)
        return None


def _toon_reads_back(toon, text: str, data: Any) -> bool:
    """Whether the TOON text decodes to the data (it drops what JSON cannot hold, such as NaN)."""
    try:
        return toon.loads(text) == data
    except ValueError:
        return False


def _toon_may_fit(toon, doc, before: float, budget: int, count) -> bool:
    """Whether TOON might fit: the first 64 items' TOON against their compact JSON, scaled, with a 25% margin."""
    head = doc.items[:64]
    sample = _toon(toon, head)
    if sample is None:
        return False
    return count(sample) * before <= 1.25 * budget * max(count(json.dumps(head, separators=(",", ":"))), 1)


def _csv_may_fit(value: list, before: float, budget: int, count) -> bool:
    """Whether CSV might fit: the first 64 rows' CSV against their JSON, scaled, with a 25% margin."""
    head = value[:64]
    sample = _csv(head)
    if sample is None:
        return False
    return count(sample) * before <= 1.25 * budget * max(count(json.dumps(head, separators=(",", ":"))), 1)


def _pool(sents: list[str], query: str, lists: list[list[str]], size: int = PROSE_POOL) -> np.ndarray:
    """Which sentences sentence selection weighs: all of them, or of a text longer than ``size``
    sentences the two thirds of that many that match the question best (BM25) and an even spread of the
    rest over the text (selection over every sentence of 100 KB would cost several times more)."""
    n = len(sents)
    if n <= size:
        return np.arange(n, dtype=np.int64)
    rel = lexical_relevance(sents, query, lists)
    top = np.argsort(-rel, kind="stable")[: 2 * size // 3]
    top = top[rel[top] > 0]
    spread = np.linspace(0, n - 1, size - top.size).astype(np.int64)
    return np.unique(np.concatenate([top.astype(np.int64), spread]))


def _capped(text: str, spans: list[tuple[int, int]], budget: int) -> list[tuple[int, int]]:
    """The spans, each longer than :data:`UNIT_SHARE` of the budget (at four characters a token) cut
    at line breaks into pieces within it, and a line still longer at a space (or anywhere): a unit
    the selection can afford, and a piece ``retrieve_dropped`` can page back."""
    cap = max(int(4 * UNIT_SHARE * budget), 80)
    out: list[tuple[int, int]] = []
    for a, b in spans:
        if b - a <= cap:
            out.append((a, b))
            continue
        start = a
        while b - start > cap:
            cut = text.rfind("\n", start + 1, start + cap + 1)
            if cut <= start:
                cut = text.rfind(" ", start + cap // 2, start + cap + 1)
            if cut <= start:
                cut = start + cap
            piece = text[start:cut].strip()
            if piece:
                lead = start + len(text[start:cut]) - len(text[start:cut].lstrip())
                out.append((lead, lead + len(piece)))
            start = cut
        piece = text[start:b].strip()
        if piece:
            lead = start + len(text[start:b]) - len(text[start:b].lstrip())
            out.append((lead, lead + len(piece)))
    return out


def _shrink_prose(
    text: str, budget: int, count, query: str, store, before: int, token_counter, tool: str | None = None
) -> Shrunk | None:
    spans = split_sentences(text, wrapped=wrapped_prose(text.splitlines()))
    if len(spans) < 2:  # one sentence, or none: not prose
        return None
    spans = _capped(text, spans, budget)
    n = len(spans)
    sents = [text[a:b] for a, b in spans]
    pieces = json_strings(sents)
    akey = array_key(pieces) if store is not None else None

    def render(idx: np.ndarray) -> tuple[str, int]:
        parts: list[str] = []
        prev = -2
        for i in idx.tolist():
            if parts:
                parts.append(text[spans[prev][1] : spans[i][0]] if i == prev + 1 else " … ")
            parts.append(sents[i])
            prev = i
        key = _crush_key(akey, idx) if akey is not None else None
        body = "".join(parts)
        out = ""
        for ranges in (True, False):
            out = (
                body
                + ("\n" if body else "")
                + records_marker(n, idx, key, what="sentences", ranges=ranges, tool=tool)
            )
            t = count(out)
            if t <= budget:
                break
        return out, t

    b = budget - count(records_marker(n, [], "0" * 16, what="sentences", ranges=False, tool=tool)) - 2
    idx = np.empty(0, np.int64)
    out, t = render(idx)
    lists = word_lists(sents)
    # All sentences, or for a long text the question's best and a spread: at least PROSE_POOL, and
    # twice as many as fill the budget at the text's mean sentence, so a large budget is filled.
    size = max(PROSE_POOL, int(np.ceil(2 * budget * n / max(before, 1))))
    pool = _pool(sents, query, lists, size)
    # a sentence without a word (a heading's underline, a rule, a row of box drawing) says nothing
    # alone: it cost no redundancy and was taken before sentences that did (triggers.txt's "--------")
    worded = pool[[bool(lists[i]) for i in pool.tolist()]]
    pool = worded if worded.size else pool
    sub = [sents[i] for i in pool.tolist()]
    # TF-IDF over the pool and the question, hashed: once, for every retry.
    vectors = hashed_tfidf([*(lists[i] for i in pool.tolist()), *word_lists([query])], PROSE_DIM)
    costs = count_tokens(sub, token_counter)
    for _ in range(8):
        if b <= 0:
            break
        with warnings.catch_warnings():  # a query no sentence shares a word with: the text's own order
            warnings.filterwarnings("ignore", "select_texts: ", UserWarning)
            sel = select_texts(sub, vectors[-1], b, embeddings=vectors[:-1], costs=costs,
                               token_counter=token_counter, order="original", separator=" … ")  # fmt: skip
        cand = np.sort(pool[np.asarray(sel.indices, dtype=np.int64)])
        o, tt = render(cand)
        if tt <= budget:
            idx, out, t = cand, o, tt
            break
        b -= tt - budget
    if t > budget:
        return None
    key = store.put(pieces, kept=idx) if store is not None else None
    return Shrunk(out, "prose", t, before, key, int(idx.size), n, "sentences")


#: A first line that opens with a bracketed tag and goes on in words: ``[    0.000000] Linux ...``
#: (dmesg), ``[INFO] Building ...`` (Maven), ``[Sun Nov 29 ...] [error] ...`` (Apache): text.
_TAGGED = re.compile(r"\[[^\]\n]*\][ \t]*[^\s,\]\}:]")


def looks_like_json(text: str | bytes) -> bool:
    """Whether ``text`` opens as JSON does (``[`` or ``{``), and not as a log line of a bracketed tag
    and words: what does not parse is then JSON with a mistake, or cut, not text.

    Parameters
    ----------
    text : str or bytes
        The text (its first 4,096 characters are read).

    Returns
    -------
    bool
        True when it opens as JSON.

    Examples
    --------
    >>> looks_like_json('[{"id": 1}, {"id": 2'), looks_like_json("[    0.000000] Linux version 6.1")
    (True, False)
    """
    head = (text.decode("utf-8", "replace") if isinstance(text, bytes) else text).lstrip()[:4096]
    return head[:1] in ("[", "{") and _TAGGED.match(head) is None


def shrink_text(
    text: str,
    budget: int,
    *,
    query: str = "",
    mode: str = "auto",
    token_counter: object = None,
    store: CrushStore | str | os.PathLike | None = None,
    hint: str = "",
    tool: str | None = None,
) -> Shrunk:
    """``text`` within ``budget`` tokens by its shape (see the module docs).

    Parameters
    ----------
    text : str
        A tool result's text.
    budget : int
        The most tokens the returned text may take, markers included.
    query : str
        What the call asked for (:func:`call_query`).
    mode : str
        One of :data:`MODES`.
    token_counter : name, TokenCounter or callable, optional
        Counts ``budget`` (default ``"estimate"``).
    store : CrushStore or path, optional
        Where what is left out goes (its key is in the text; ``CrushStore.retrieve(key)`` gives it
        back).
    hint : str
        The tool's configured query hint: records matching it are kept first (records are crushed by
        time and errors, not by the call's arguments, which are mostly paths and counts).
    tool : str, optional
        The tool that gives back what was left out, which the marker line of text names
        (``scwo mcp proxy``: ``"retrieve_dropped"``); None (the default): the marker gives the
        store key alone.  JSON's marker is an object that holds the key either way.

    Returns
    -------
    Shrunk
        The text within ``budget`` and what was done.

    Raises
    ------
    BudgetTooSmall
        When ``text`` is a JSON array or object that does not fit as JSON even with every array in
        it crushed to its marker (the message names the budget that holds it).

    Examples
    --------
    >>> import json
    >>> rows = json.dumps([{"id": i, "level": "ERROR" if i == 7 else "INFO"} for i in range(300)])
    >>> s = shrink_text(rows, 200)
    >>> s.form, s.tokens <= 200, '"ERROR"' in s.text
    ('crushed', True, True)
    >>> shrink_text("short", 200).form
    'whole'
    """
    MODES.lookup(mode)
    token_counter = as_token_counter(token_counter)  # once: every count below is vectorised over texts
    count = _counter(token_counter)
    before = count(text)
    if before <= budget or mode == "off":
        return Shrunk(text, "whole", before, before)
    if budget < MIN_BUDGET:
        raise ValueError(f"budget must be at least {MIN_BUDGET} tokens to hold a marker; got {budget}.")
    if store is not None and not isinstance(store, CrushStore):
        store = CrushStore(store)  # a path
    if mode in ("auto", "json"):
        try:
            got = _shrink_json(text, budget, count, query, store, before, token_counter)
        except (ValueError, TypeError) as exc:  # too much around its largest array: its arrays one by one
            log.info("JSON result not crushed by its largest array (%s); crushing its arrays in turn", exc)
            got = _shrink_nested(text, budget, count, query, store, before, token_counter)
        else:
            if got is not None and got.form == "crushed" and got.kept == 0:
                # every item over the budget (botocore's endpoints: 8 partitions of 10,000+ tokens
                # each, the marker alone at 1,000 tokens): the collections inside them, in turn
                try:
                    got = _shrink_nested(text, budget, count, query, store, before, token_counter) or got
                except (ValueError, TypeError) as exc:
                    log.info("JSON result not crushed inside its items (%s); its marker alone", exc)
        if got is not None:
            return got
    if mode in ("auto", "diff"):
        diff = split_diff(text)
        if diff is not None:
            try:
                fit = fit_diff(diff, budget, token_counter=token_counter, store=store, query=query, tool=tool)
            except ValueError as exc:  # not even its marker fits: as records or pieces, below
                log.info("diff not shrunk as a diff (%s); shrinking it as text", exc)
            else:
                return Shrunk(fit.text, "diff", fit.tokens, before, fit.key, len(fit.kept), fit.n, "hunks")
    if mode in ("auto", "records", "diff"):
        recs = split_records(text)
        if recs is not None:
            fit = fit_records(recs, budget, token_counter=token_counter, store=store, query=hint, tool=tool)
            return Shrunk(fit.text, "records", fit.tokens, before, fit.key, len(fit.kept), fit.n, "records")
    if mode == "prose" or (mode in ("auto", "json") and not looks_like_json(text)):
        # (JSON that does not parse, cut by its tool: its whole lines, never fragments spliced with " … ")
        try:
            got = _shrink_prose(text, budget, count, query or "text", store, before, token_counter, tool)
        except ValueError as exc:
            log.info("prose selection failed (%s); shrinking the text by pieces", exc)
            got = None
        if got is not None:
            return got
    fit = fit_records(
        chunk_records(text), budget, token_counter=token_counter, store=store, query=hint, what="pieces",
        tool=tool,
    )  # fmt: skip
    return Shrunk(fit.text, "pieces", fit.tokens, before, fit.key, len(fit.kept), fit.n, "pieces")
