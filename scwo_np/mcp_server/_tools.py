"""What each MCP tool does, as plain functions of plain values (the server wraps them).

Every function checks its arguments through the library's validation and raises
``ValueError``/``TypeError`` naming the argument and the fix; the server turns those into
MCP tool errors.  Nothing here knows about the protocol, so the tests can call these
directly as well as through the SDK's client.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..anchor import CrushStore, read_document
from ..anchor._json import fit_tokens
from ..dedup import DEDUP_METHODS, dedup
from ..embed import EMBEDDERS, as_embedder, embed_texts
from ..hsca import HSCAEngine, SnapshotStore
from ..select import GRANULARITIES, ORDERS, STRATEGIES, select_by_strategy, select_texts
from ..tokens import COUNTERS, as_token_counter, count_tokens
from ..validation import check_budget, check_int, check_method, check_texts

__all__ = ["Limits", "Tools"]

_FILE_SUFFIXES = (".sqlite", ".sqlite3", ".db")


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
        self._engines: dict[str, HSCAEngine] = {}
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
        question: str,
        budget: int,
        strategy: str = "mmr",
        lam: float | str = 0.7,
        granularity: str = "chunk",
        order: str = "pick",
        embedder: str = "lsa",
        counter: str = "estimate",
    ) -> dict[str, Any]:
        """The texts to put into the context for ``question`` within ``budget`` tokens."""
        texts = check_texts(texts, name="texts", nonempty=True)
        self._count("texts", len(texts))
        self._size("texts", texts, question)
        if not isinstance(question, str) or not question.strip():
            raise ValueError("question must be a non-empty string: the question the context is for.")
        budget = check_budget(budget)
        strategy = check_method(strategy, list(STRATEGIES), name="strategy")
        check_method(granularity, list(GRANULARITIES), name="granularity")
        check_method(order, list(ORDERS), name="order")
        check_method(embedder, list(EMBEDDERS), name="embedder")
        check_method(counter, list(COUNTERS), name="counter")
        if strategy == "mmr" or granularity == "sentence":
            if strategy != "mmr":
                raise ValueError("granularity='sentence' selects with MMR; use strategy='mmr' with it.")
            sel = select_texts(texts, question, budget, embedder=embedder, token_counter=counter, lam=lam,
                               granularity=granularity, order=order)  # fmt: skip
            return {
                "indices": sel.indices.tolist(),
                "texts": list(sel.texts),
                "tokens": sel.tokens.tolist(),
                "total_tokens": sel.total_tokens,
            }
        emb = as_embedder(embedder, [*texts, question])
        E = embed_texts(emb, [*texts, question])
        costs = count_tokens(texts, counter)
        idx = select_by_strategy(E[:-1], E[-1], costs, budget, strategy=strategy, lam=lam)
        return {
            "indices": idx.tolist(),
            "texts": [texts[i] for i in idx.tolist()],
            "tokens": costs[idx].tolist(),
            "total_tokens": int(costs[idx].sum()),
        }

    def dedup_texts(
        self, texts: list[str], method: str = "jaccard", threshold: float | None = None
    ) -> dict[str, Any]:
        """Near-duplicates among ``texts``: which are kept, which dropped and as a copy of which."""
        texts = check_texts(texts, name="texts")
        self._count("texts", len(texts))
        self._size("texts", texts)
        method = check_method(method, list(DEDUP_METHODS), name="method")
        r = dedup(texts, method=method, threshold=threshold)
        return {
            "kept": r.keep.tolist(),
            "dropped": [
                {"index": int(i), "duplicate_of": int(j), "similarity": round(float(s), 6)}
                for i, j, s in zip(
                    r.dropped.tolist(), r.duplicate_of.tolist(), r.similarity.tolist(), strict=True
                )
            ],
        }

    def crush_json(
        self,
        json_text: str,
        max_tokens: int | None = None,
        max_items: int | None = None,
        query: str | None = None,
        counter: str = "estimate",
    ) -> dict[str, Any]:
        """A JSON tool output cut to ``max_tokens`` tokens and/or ``max_items`` items; dropped items stored."""
        if not isinstance(json_text, str):
            raise TypeError(f"json must be JSON text (a string); got {type(json_text).__name__}.")
        self._size("json", json_text)
        if max_tokens is None and max_items is None:
            raise ValueError("give max_tokens, max_items or both: the size to cut the JSON to.")
        check_method(counter, list(COUNTERS), name="counter")
        doc = read_document(json_text)
        self._count("json", len(doc.items))
        kw = {"query": query or ""}
        if max_items is not None:
            max_items = check_int(max_items, name="max_items", low=1)
        if max_tokens is None:  # items only: the same search, with no token ceiling
            max_tokens = 2**62
        max_tokens = check_int(max_tokens, name="max_tokens", low=1)
        res = fit_tokens(doc, max_tokens, token_counter=counter, max_items=max_items, store=self.crush_store,
                         lossless=max_items is None, **kw)  # fmt: skip
        return {"json": res.text, "kept": len(res.kept), "dropped": res.dropped, "key": res.key}

    def retrieve_dropped(
        self,
        key: str,
        start: int | None = None,
        stop: int | None = None,
        where: dict[str, Any] | None = None,
        max_tokens: int | None = None,
        counter: str = "estimate",
    ) -> dict[str, Any]:
        """Items of a crushed array, whole and never crushed again: a slice, a field filter, a page."""
        if not isinstance(key, str) or not key:
            raise ValueError("key must be the key a crush_json result (or its marker) gave.")
        if where is not None and not isinstance(where, dict):
            raise TypeError('where must be an object of field -> value conditions, like {"level": "ERROR"}.')
        for name, v in (("start", start), ("stop", stop)):
            if v is not None:
                check_int(v, name=name, low=-(2**62))
        try:
            items, where_at = self.crush_store.retrieve(
                key, start=start, stop=stop, where=where, with_positions=True
            )
        except KeyError:
            raise ValueError(
                f"key {key!r} is unknown or expired in this server's store; crush the JSON again to get a new key."
            ) from None
        fit = len(items)
        if max_tokens is not None:
            max_tokens = check_int(max_tokens, name="max_tokens", low=1)
            texts = [json.dumps(x, ensure_ascii=False) for x in items]
            costs = count_tokens(texts, as_token_counter(counter)) + 1 if texts else np.zeros(0, np.int64)
            fit = int(np.searchsorted(np.cumsum(costs) + 2, max_tokens, side="right"))  # "[" and "]"
            if fit == 0 and items:
                raise ValueError(
                    f"the first matching item alone takes {int(costs[0]) + 1} tokens, above max_tokens={max_tokens}; "
                    "raise max_tokens (retrieved items are never cut)."
                )
        # next_start: where the next page begins (pass it as start, with the same stop and where)
        next_start = where_at[fit] if fit < len(items) else None
        return {"items": items[:fit], "remaining": len(items) - fit, "next_start": next_start}

    def count_tokens(self, texts: list[str], counter: str | None = None) -> dict[str, Any]:
        """Tokens of each text by ``counter`` (default the estimate, 4 characters a token)."""
        texts = check_texts(texts, name="texts")
        self._count("texts", len(texts))
        self._size("texts", texts)
        if counter is not None:
            check_method(counter, list(COUNTERS), name="counter")
        return {"tokens": count_tokens(texts, counter or "estimate").tolist()}

    def hsca_ingest(self, session: str, text: str) -> dict[str, Any]:
        """One conversation turn into ``session``'s HSCA engine; new snapshots committed to the store."""
        self._check_session(session)
        if not isinstance(text, str) or not text.strip():
            raise ValueError("text must be a non-empty string: the conversation turn.")
        self._size("text", text)
        with self._lock:
            eng = self._engines.setdefault(session, HSCAEngine())
            before = len(eng.get_macro_context())
            chunk = eng.ingest_turn(text)
            snaps = eng.get_macro_context()
            new = snaps[before:]
            if new:
                self.snapshots.save(session, new)  # committed before the answer is sent
        return {
            "chunk_id": chunk.chunk_id,
            "domain_tags": list(chunk.domain_tags),
            "nuance_flags": list(chunk.nuance_flags),
            # as the store (and hsca_context) names them: "<session>/<id>"
            "committed_snapshots": [SnapshotStore._ns(session, s.snapshot_id) for s in new],
            "buffered_turns": len(eng.buffer),
        }

    def hsca_context(self, session: str, last: int | None = None) -> dict[str, Any]:
        """``session``'s committed snapshots (the last ``last``) and the turns since the last one."""
        self._check_session(session)
        if last is not None:
            last = check_int(last, name="last", low=1)
        stored = self.snapshots.load(session)
        if last is not None:
            stored = stored[-last:]
        eng = self._engines.get(session)
        return {
            "snapshots": [s.to_dict() for s in stored],
            "buffered_turns": [c.text for c in eng.buffer] if eng is not None else [],
        }

    @staticmethod
    def _check_session(session: object) -> None:
        if not isinstance(session, str) or not session or "/" in session or len(session) > 200:
            raise ValueError("session must be a non-empty name of at most 200 characters, without '/'.")
