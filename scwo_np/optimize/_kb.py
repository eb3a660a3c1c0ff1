"""KB Labs ADR-0022's ``ContextOptimizer``: dedup, diversify, adaptive selection, top-k.

``optimize(matches, options)`` takes search matches as dicts and the ADR's
options (its JSON keys in snake_case, with its defaults; the ADR's camelCase
keys are read too, see :data:`KB_CAMEL_CASE`) and returns the
selected matches plus a report of every removal and why.  Each step is an
array function: :func:`~scwo_np.deduplicate` (word-set Jaccard, 0.9, greedy:
a match is dropped only against a kept one; ``dedup_grouping:
"components"`` for connected components),
:func:`~scwo_np.optimize.diversify` (3 per file, diversity 0.3),
:func:`~scwo_np.optimize.fit_budget` (``mode="stop"``, as the ADR's "stops when
budget reached") or, with embeddings, budgeted MMR
(:func:`~scwo_np.mmr_select`), and :func:`~scwo_np.optimize.top_k`.

A match is a dict with ``text`` (or ``content``), ``score``, and optionally
``id``, a source (``path``, ``file`` or ``source``), a token count
(``tokens``) and an ``embedding``; a ``{"chunk": {...}, "score": s}`` shape
(KB Labs' ``VectorSearchMatch``) is accepted too.
"""

from __future__ import annotations

import logging
import math
import numbers
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import _dot
from .._registry import Registry
from ..dedup import DEDUP_GROUPINGS, deduplicate
from ..embed import EMBEDDERS, as_embedder, embed_texts, embedder_name
from ..select import mmr_select
from ..text import word_sets
from ..tokens import as_token_counter, count_tokens, estimate_tokens
from ..validation import (
    DEPRECATED_SINCE,
    REMOVAL_IN,
    RenamedWarning,
    check_budget,
    check_embeddings,
    check_lam,
    check_query,
    check_text,
    check_token_count,
    check_unit_interval,
)
from ._budget import best_first, fit_budget
from ._diversify import REASONS, diversify

__all__ = ["KB_CAMEL_CASE", "KB_DEFAULTS", "KB_SELECTIONS", "KBContextOptimizer", "KBResult", "Removal"]

log = logging.getLogger(__name__)

#: The ADR's configuration keys, in snake_case, and its defaults, plus ``selection`` (ours):
#: ``"auto"`` uses budgeted MMR when every match has an embedding and
#: ``query_embedding`` is given, ``"sort"`` the ADR's score order, ``"mmr"``
#: insists on MMR; ``lam`` is MMR's relevance weight (or ``"auto"``, see :func:`~scwo_np.select.auto_lam`).
#: The ADR's own camelCase keys (:data:`KB_CAMEL_CASE`) are read too: in the ADR's whole JSON
#: document as they are, and as flat options with a ``DeprecationWarning`` until 0.3.
KB_DEFAULTS: dict[str, Any] = {
    "deduplication": True,
    "dedup_threshold": 0.9,
    "dedup_grouping": "greedy",
    "diversification": True,
    "diversity_threshold": 0.3,
    "max_per_source": 3,
    "adaptive_selection": False,
    "avg_tokens_per_chunk": 200,
    "budget": None,
    "max_chunks": None,
    "selection": "auto",
    "query_embedding": None,
    "lam": 0.7,
}


#: The option ``selection``: how the budget step picks -> what it does.
KB_SELECTIONS: Registry[str] = Registry(
    "option selection",
    {
        "auto": "budgeted MMR when every match has an embedding and query_embedding is given, else sort",
        "sort": "the ADR's order: best score first until the budget",
        "mmr": "budgeted MMR; an error without the embeddings",
    },
)

#: The ADR's camelCase option keys -> the snake_case keys of :data:`KB_DEFAULTS` (named as the
#: library's arguments: ``dedup_threshold`` and ``dedup_grouping`` as MoRAG's, ``max_per_source``
#: and ``diversity_threshold`` as :func:`~scwo_np.optimize.diversify`'s, ``budget``, ``lam``).
KB_CAMEL_CASE: dict[str, str] = {
    "deduplicationThreshold": "dedup_threshold",
    "deduplicationGrouping": "dedup_grouping",
    "diversityThreshold": "diversity_threshold",
    "maxChunksPerFile": "max_per_source",
    "adaptiveSelection": "adaptive_selection",
    "avgTokensPerChunk": "avg_tokens_per_chunk",
    "tokenBudget": "budget",
    "maxChunks": "max_chunks",
    "queryEmbedding": "query_embedding",
    "lambda": "lam",
}


def _snake_case(options: dict, *, warn: bool) -> dict:
    """``options`` with the ADR's camelCase keys renamed (warned unless they come from its JSON document)."""
    old = [k for k in options if k in KB_CAMEL_CASE]
    if not old:
        return options
    both = [k for k in old if KB_CAMEL_CASE[k] in options]
    if both:
        k = both[0]
        raise ValueError(
            f"option {KB_CAMEL_CASE[k]} is given twice, also as its old name {k}; give {KB_CAMEL_CASE[k]} only."
        )
    if warn:
        pairs = ", ".join(f"{k} -> {KB_CAMEL_CASE[k]}" for k in old)
        warnings.warn(
            f"KBContextOptimizer options were renamed to snake_case in {DEPRECATED_SINCE} ({pairs}); the "
            f"camelCase names stop working in {REMOVAL_IN} (the ADR's whole JSON document is still read as it is).",
            RenamedWarning,
            stacklevel=4,
        )
    return {KB_CAMEL_CASE.get(k, k): v for k, v in options.items()}


@dataclass(frozen=True)
class Removal:
    """One match removed by a step: its input index and id, the step, why.

    Parameters
    ----------
    index : int
        The match's position in the input.
    id : object
        Its id.
    step : str
        The step that removed it (``"deduplication"``, ``"diversity"``, ``"token_budget"``...).
    reason : str
        Why, in words.
    detail : dict
        The numbers behind it (the chunk it duplicates, the similarity...).

    Examples
    --------
    >>> Removal(1, "b", "deduplication", "duplicate of a (similarity 1.00)").step
    'deduplication'
    """

    index: int
    id: Any
    step: str
    reason: str
    detail: dict = field(default_factory=dict)


@dataclass
class KBResult:
    """Selected matches (original dicts, in rank order), their indices, and the removals.

    Parameters
    ----------
    chunks : list of dict
        The selected matches, the input dicts themselves, in rank order.
    indices : ndarray of int64
        Their positions in the input.
    removed : list of Removal
        Every match left out, at which step and why.
    options : dict
        The options used, defaults filled in.

    Examples
    --------
    >>> res = KBContextOptimizer().optimize([{"id": "a", "text": "open a file", "score": 0.9}])
    >>> [m["id"] for m in res.chunks], res.indices, res.removed
    (['a'], array([0]), [])
    """

    chunks: list[dict]
    indices: NDArray[np.int64]
    removed: list[Removal]
    options: dict

    def removed_by(self, step: str) -> list[Removal]:
        """The removals made by one step (``deduplication``, ``diversity``, ...).

        Parameters
        ----------
        step : str
            The step's name.

        Returns
        -------
        list of Removal
            Its removals, in input order.

        Examples
        --------
        >>> res = KBResult([], [], [Removal(0, "a", "deduplication", "duplicate of b")], {})
        >>> [r.id for r in res.removed_by("deduplication")], res.removed_by("diversity")
        (['a'], [])
        """
        return [r for r in self.removed if r.step == step]


def _field(m: Mapping, *names: str, default: Any = None) -> Any:
    for src in (m, m.get("chunk") if isinstance(m.get("chunk"), Mapping) else {}):
        for name in names:
            if name in src:
                return src[name]
    return default


def _checked_embedder(embedder: object) -> object:
    """A name ("lsa", "minilm"; LSA is fitted per call on the texts at hand) or a callable."""
    if isinstance(embedder, str):
        if embedder not in EMBEDDERS:
            as_embedder(embedder)  # the ValueError that lists the names
        return embedder
    embedder_name(embedder)
    return embedder


class KBContextOptimizer:
    """The ADR's pipeline; stateless, so one instance can serve every request.

    Parameters
    ----------
    embedder : str or callable, optional
        Embeds chunks that carry no embedding (and the query), so the budget step runs budgeted
        MMR: ``"lsa"``, ``"minilm"`` or a callable ``texts -> (n, d) array``.
    token_counter : str, TokenCounter or callable, optional
        Counts chunk tokens (see :func:`~scwo_np.tokens.as_token_counter`). Default: the ADR's ~4 characters per token.

    Examples
    --------
    >>> matches = [
    ...     {"id": "a", "text": "parse the config file and validate keys", "path": "cfg.py", "score": 0.9},
    ...     {"id": "b", "text": "Parse the config file and validate keys", "path": "cfg.py", "score": 0.8},
    ...     {"id": "c", "text": "open a socket and listen for clients", "path": "net.py", "score": 0.7},
    ... ]
    >>> res = KBContextOptimizer().optimize(matches, {"max_chunks": 5})
    >>> [m["id"] for m in res.chunks], [(r.id, r.step, r.reason) for r in res.removed]
    (['a', 'c'], [('b', 'deduplication', 'duplicate of a (similarity 1.00)')])
    """

    def __init__(self, *, embedder: object = None, token_counter: object = None):
        #: Embeds matches that carry no ``embedding`` (and ``query=``): a callable or "lsa"/"minilm".
        self.embedder = embedder if embedder is None else _checked_embedder(embedder)
        #: Counts the tokens of matches that carry no ``tokens`` (default: the ADR's ~4 chars/token).
        self.token_counter = None if token_counter is None else as_token_counter(token_counter)

    def optimize(
        self, matches: Sequence[Mapping], options: Mapping | None = None, *, query: str | None = None
    ) -> KBResult:
        """Run the ADR's steps on ``matches`` and say what was removed and why.

        Parameters
        ----------
        matches : sequence of dict
            Search matches: ``text`` (or ``content``), ``score``, and
            optionally ``id``, a source (``path``/``file``/``source``),
            ``tokens`` and ``embedding``; KB Labs' ``{"chunk": {...},
            "score": s}`` shape works too.  Nothing is modified.
        options : dict, optional
            The ADR's options (see :data:`KB_DEFAULTS`), flat or as the
            ADR's whole JSON configuration.  Unknown keys are an error.
        query : str, optional
            The question as text, for an optimizer made with an
            ``embedder``: it is embedded as ``query_embedding`` (when that
            option is not given), and every match without an ``embedding``
            is embedded too, so the budget step runs budgeted MMR.

        Returns
        -------
        KBResult
            ``chunks`` (the selected match dicts in rank order),
            ``indices`` (their positions in ``matches``), ``removed`` (one
            :class:`Removal` per dropped match: step, reason, details) and
            the resolved ``options``.

        Notes
        -----
        Steps, each optional: deduplication (best-scored first, a match is
        dropped when its word-set Jaccard with a kept match reaches the
        threshold; option ``dedup_grouping``, ``"greedy"`` or
        ``"components"``), diversification (at most
        ``max_per_source`` per source, no two above ``diversity_threshold``
        similar), the token budget (budgeted MMR when embeddings and
        ``query_embedding`` are given, else best-first until the budget,
        with ``adaptive_selection``), and ``max_chunks``.  Ranking uses
        ``score``; when no match has one, matches are ranked by cosine
        similarity of their ``embedding`` to ``query_embedding`` if both are
        given, and otherwise a warning says that every score counts as 0
        (input order decides).  A match's tokens are its ``tokens`` (or
        ``token_count``), else its text's estimate; ``avg_tokens_per_chunk``
        is the cost of a match with neither (the ADR's fallback).  The
        source that ``max_per_source`` caps is ``path``, else ``file``, else
        ``source``; a match with none of them is not capped (a warning says so
        when ``max_per_source`` is given and no match has one).

        Examples
        --------
        >>> from scwo_np.optimize import KBContextOptimizer
        >>> matches = [{"id": "a", "text": "parse the config file", "path": "cfg.py", "score": 0.9},
        ...            {"id": "b", "text": "parse the config file", "path": "cfg.py", "score": 0.8}]
        >>> res = KBContextOptimizer().optimize(matches, {"max_chunks": 5})
        >>> [m["id"] for m in res.chunks], [r.step for r in res.removed_by("deduplication")]
        (['a'], ['deduplication'])
        """
        opts = self.options(options)
        if isinstance(matches, str | bytes | Mapping) or not isinstance(matches, Iterable):
            raise TypeError(f"matches must be a list of match dicts; got {type(matches).__name__}.")
        matches = list(matches)
        n = len(matches)
        for i, m in enumerate(matches):
            if not isinstance(m, Mapping):
                raise TypeError(f"matches[{i}] is {type(m).__name__}; each match must be a dict.")
        texts = [_field(m, "text", "content") for m in matches]
        for i, t in enumerate(texts):
            if t is None:
                raise ValueError(f"matches[{i}] has no text; give each match a 'text' or 'content' string.")
            check_text(t, name=f"matches[{i}] text")
        ids = [_field(m, "id", default=i) for i, m in enumerate(matches)]
        if len(set(map(repr, ids))) != n:
            raise ValueError("match ids must be unique; give every match its own 'id'.")
        embs = [_field(m, "embedding") for m in matches]
        if query is not None:
            if not isinstance(query, str) or not query.strip():
                raise TypeError(f"query must be the question as a non-empty str; got {query!r}.")
            if self.embedder is None:
                raise ValueError(
                    "query= needs an embedder: KBContextOptimizer(embedder=...); or pass query_embedding."
                )
            embs, q = self._embed(texts, embs, query, opts)
            opts = {**opts, "query_embedding": q}
        scores = self._scores(matches, opts, embs)
        sources = [_field(m, "path", "file", "source") for m in matches]
        asked = isinstance(options, Mapping) and ("max_per_source" in options or "maxPerSource" in options)
        if (
            asked
            and opts["max_per_source"] is not None
            and opts["diversification"]
            and n
            and all(x is None for x in sources)
        ):
            warnings.warn(
                f"option max_per_source={opts['max_per_source']} is not applied: no match has a 'path', 'file' "
                "or 'source' field (the source it caps); name each match's file in one of them.",
                UserWarning,
                stacklevel=2,
            )
        sets = word_sets(texts)[0] if (opts["deduplication"] or opts["diversification"]) and n else None
        removed: list[Removal] = []
        alive = best_first(scores, n)  # indices still in play, best first

        if opts["deduplication"] and n:
            d = deduplicate(
                texts, threshold=opts["dedup_threshold"], scores=scores, sets=sets,
                grouping=opts["dedup_grouping"],
            )  # fmt: skip
            why = {
                int(x): (int(k), float(s))
                for x, k, s in zip(d.dropped, d.duplicate_of, d.similarity, strict=True)
            }
            for i in alive.tolist():
                if i in why:
                    k, s = why[i]
                    removed.append(
                        Removal(i, ids[i], "deduplication", f"duplicate of {ids[k]} (similarity {s:.2f})",
                                {"duplicate_of": k, "similarity": s})
                    )  # fmt: skip
            alive = alive[~np.isin(alive, d.dropped)]

        if opts["diversification"] and alive.size:
            sub = alive.tolist()
            r = diversify(
                [texts[i] for i in sub], sources=[sources[i] for i in sub], scores=scores[sub],
                max_per_source=opts["max_per_source"], diversity_threshold=opts["diversity_threshold"],
                sets=sets.take(np.asarray(sub, dtype=np.int64)),
            )  # fmt: skip
            for x, code, j, s in zip(r.dropped, r.reason, r.similar_to, r.similarity, strict=True):
                i = sub[x]
                if REASONS[code] == "source_cap":
                    msg, det = f"more than {opts['max_per_source']} chunks from {sources[i]!r}", {}
                else:
                    msg = f"too similar to {ids[sub[j]]} (similarity {s:.2f})"
                    det = {"similar_to": sub[j], "similarity": float(s)}
                removed.append(Removal(i, ids[i], "diversification", msg, det))
            alive = np.asarray([sub[x] for x in r.keep], dtype=np.int64)

        budget = opts["budget"]
        if budget is not None and alive.size:
            sub = alive.tolist()
            costs = self._costs([matches[i] for i in sub], [texts[i] for i in sub], opts, sub)
            use_mmr = self._use_mmr(embs, sub, opts)
            if use_mmr:
                E = np.array([embs[i] for i in sub], dtype=np.float64)
                pick = mmr_select(E, opts["query_embedding"], costs, budget, lam=opts["lam"])
                step = "mmr_selection"
            elif opts["adaptive_selection"]:
                pick = fit_budget(costs, budget, scores=scores[sub], mode="stop")
                step = "adaptive_selection"
            else:
                pick = None
                how = (
                    "selection='sort' takes the ADR's order, which applies it only with adaptive_selection=true"
                    if opts["selection"] == "sort"
                    else "the ADR applies it only with adaptive_selection=true (or, with an embedding on "
                    "every match and a query_embedding, by MMR)"
                )
                warnings.warn(
                    f"option budget={budget} is not applied: {how}; set adaptive_selection to cut to the budget.",
                    UserWarning,
                    stacklevel=2,
                )
            if pick is not None:
                chosen = set(pick.tolist())
                why = self._why_left_out(step, costs, scores[sub], pick, budget, [ids[i] for i in sub])
                for x, i in enumerate(sub):
                    if x not in chosen:
                        removed.append(Removal(i, ids[i], step, why(x), {"tokens": int(costs[x])}))
                if not pick.size:
                    if step == "adaptive_selection":
                        first = int(costs[int(np.argmax(scores[sub]))])
                        msg = f"the first chunk by score takes {first} tokens; the ADR's adaptive selection stops there"
                    else:
                        msg = f"the smallest takes {int(costs.min())} tokens"
                    warnings.warn(
                        f"no chunk kept within the token budget of {budget}: {msg}.",
                        UserWarning,
                        stacklevel=2,
                    )
                alive = np.asarray([sub[x] for x in pick.tolist()], dtype=np.int64)

        if opts["max_chunks"] is not None and alive.size > opts["max_chunks"]:
            for i in alive[opts["max_chunks"] :].tolist():
                removed.append(Removal(i, ids[i], "top_k", f"beyond max_chunks={opts['max_chunks']}"))
            alive = alive[: opts["max_chunks"]]

        for r in removed:
            log.debug("removed %s at %s: %s", r.id, r.step, r.reason)
        return KBResult([matches[i] for i in alive.tolist()], alive, removed, opts)

    @staticmethod
    def _why_left_out(step, costs, scores, pick, budget, ids):
        """``x -> reason`` for the chunks the budget step left out: with adaptive selection, the
        chunk that did not fit and those after it, which the ADR's rule never looked at."""
        order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
        chosen = set(pick.tolist())
        stopper = next((int(x) for x in order.tolist() if x not in chosen), None)
        used = int(sum(int(costs[x]) for x in chosen))

        def why(x: int) -> str:
            if step != "adaptive_selection":
                return f"not picked by MMR within the token budget of {budget}"
            if x == stopper:
                return f"{int(costs[x])} tokens did not fit in the {budget - used} left of the token budget of {budget}"
            return (
                f"after {ids[stopper]} ({int(costs[stopper])} tokens) did not fit in the token budget of {budget}: "
                "the ADR's adaptive selection stops at the first chunk that does not fit"
            )

        return why

    async def optimize_async(
        self, matches: Sequence[Mapping], options: Mapping | None = None, *, query: str | None = None
    ) -> KBResult:
        """:meth:`optimize` for ``await`` call sites (the work itself is a few milliseconds).

        Parameters
        ----------
        matches : sequence of dict
            As in :meth:`optimize`.
        options : dict, optional
            As in :meth:`optimize`.
        query : str, optional
            As in :meth:`optimize` (the question, for an optimizer built with an ``embedder``).

        Returns
        -------
        KBResult
            As :meth:`optimize`.

        Examples
        --------
        >>> from scwo_np.optimize import KBContextOptimizer
        >>> matches = [{"id": "a", "text": "parse the config file", "path": "cfg.py", "score": 0.9},
        ...            {"id": "b", "text": "parse the config file", "path": "cfg.py", "score": 0.8}]
        >>> import asyncio
        >>> [m["id"] for m in asyncio.run(KBContextOptimizer().optimize_async(matches)).chunks]
        ['a']
        """
        return self.optimize(matches, options, query=query)

    @staticmethod
    def options(options: Mapping | None) -> dict:
        """The ADR's options with defaults filled in and checked (unknown keys are an error).

        Accepts the flat option keys or the ADR's whole JSON document
        (``knowledge.engines[0].options.search.optimization``).

        Parameters
        ----------
        options : dict or None
            Flat option keys, or the ADR's whole JSON document.

        Returns
        -------
        dict
            Every option, defaults filled in.

        Examples
        --------
        >>> KBContextOptimizer.options({"max_chunks": 5})["max_chunks"], KBContextOptimizer.options(None)["max_chunks"]
        (5, None)
        """
        if options is not None and not isinstance(options, Mapping):
            raise TypeError(f"options must be a dict of the ADR's options; got {type(options).__name__}.")
        options = dict(options or {})
        if "knowledge" in options:
            try:
                options = dict(options["knowledge"]["engines"][0]["options"]["search"]["optimization"])
            except (KeyError, IndexError, TypeError):
                raise ValueError(
                    "a 'knowledge' config must hold knowledge.engines[0].options.search.optimization"
                ) from None
            options = _snake_case(options, warn=False)  # the ADR's own file: its spelling
        else:
            options = _snake_case(options, warn=True)
        unknown = set(options) - set(KB_DEFAULTS)
        if unknown:
            raise ValueError(f"unknown option(s) {sorted(unknown)}; known: {sorted(KB_DEFAULTS)}.")
        opts = {**KB_DEFAULTS, **options}
        for k in ("deduplication", "diversification", "adaptive_selection"):
            if not isinstance(opts[k], bool):
                raise TypeError(f"option {k} must be true or false; got {opts[k]!r}.")
        for k in ("dedup_threshold", "diversity_threshold"):
            opts[k] = check_unit_interval(opts[k], name=f"option {k}")
        opts["lam"] = check_lam(opts["lam"], name="option lam", auto=True)
        try:
            DEDUP_GROUPINGS.lookup(opts["dedup_grouping"])
        except (ValueError, TypeError) as exc:
            raise type(exc)(f"option dedup_{exc}") from None
        for k in ("max_per_source", "max_chunks", "avg_tokens_per_chunk"):
            v = opts[k]
            if v is not None and (
                isinstance(v, bool) or not isinstance(v, int) or v < (0 if k == "max_chunks" else 1)
            ):
                kind = "an integer >= 0" if k == "max_chunks" else "a positive integer"
                raise ValueError(f"option {k} must be {kind} or null; got {v!r}.")
        if opts["budget"] is not None:
            opts["budget"] = check_budget(opts["budget"], name="option budget")
        KB_SELECTIONS.lookup(opts["selection"])
        return opts

    def _embed(self, texts: list[str], embs: list, query: str, opts: Mapping) -> tuple[list, Any]:
        """Vectors for the matches that have none, and the query's, from ``self.embedder``."""
        todo = [i for i, e in enumerate(embs) if e is None]
        emb = as_embedder(self.embedder, [texts[i] for i in todo] + [query])
        need_q = opts["query_embedding"] is None
        V = embed_texts(emb, [texts[i] for i in todo] + ([query] if need_q else []))
        out = list(embs)
        for k, i in enumerate(todo):
            out[i] = V[k]
        return out, (V[-1] if need_q else opts["query_embedding"])

    def _costs(self, matches: list, texts: list[str], opts: Mapping, where: list[int]) -> NDArray[np.int64]:
        """Each match's ``tokens``, else its count by ``token_counter`` (else the ADR's estimate).

        A given count must be a whole number (3.7 tokens is refused, never truncated);
        ``where`` holds the matches' input indices, for the error.
        """
        have = [_field(m, "tokens", "token_count") for m in matches]
        for k, v in enumerate(have):
            if v is not None:
                check_token_count(v, name=f"matches[{where[k]}] tokens")
        out = [self._tokens(m, t, opts) for m, t in zip(matches, texts, strict=True)]
        if self.token_counter is not None:
            todo = [k for k, v in enumerate(have) if v is None and texts[k]]
            counted = count_tokens([texts[k] for k in todo], self.token_counter)
            for k, c in zip(todo, counted.tolist(), strict=True):
                out[k] = c
        return np.array(out, dtype=np.int64)

    @staticmethod
    def _scores(matches: list, opts: Mapping, embs: list) -> NDArray[np.float64]:
        """Each match's score; by the query when none has one (see :meth:`optimize`)."""
        raw = [_field(m, "score") for m in matches]
        for i, v in enumerate(raw):
            if v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Real)):
                raise TypeError(f"matches[{i}] has score {v!r}; a score must be a number.")
            if v is not None and not math.isfinite(v):
                raise ValueError(f"matches[{i}] has a NaN or inf score; pass a finite score.")
        missing = sum(v is None for v in raw)
        if missing == 0:
            return np.array(raw, dtype=np.float64)
        q = opts["query_embedding"]
        if missing == len(matches) and q is not None and all(e is not None for e in embs):
            E = check_embeddings(embs, name="match embeddings")
            qv = check_query(q, E.shape[1], name="query_embedding")
            cos, norms = _dot.query_cosines(E, qv)  # the cosine mmr_select ranks by, bit for bit
            if not np.all(np.isfinite(norms) & (norms > 0)):
                raise ValueError("every match embedding must be finite and non-zero to rank by the query.")
            return cos
        warnings.warn(
            f"{missing} of {len(matches)} matches have no 'score'; they count as 0, so input order decides "
            "among them. Give every match a score, or give every match an 'embedding' and pass "
            "query_embedding to rank by the query.",
            stacklevel=3,
        )
        return np.array([0.0 if v is None else v for v in raw], dtype=np.float64)

    @staticmethod
    def _tokens(match: Mapping, text: str, opts: Mapping) -> int:
        t = _field(match, "tokens", "token_count")
        if t is not None:
            return int(t)  # checked whole by _costs
        if text:
            return int(estimate_tokens([text], rounding="ceil")[0])  # the ADR's ~4 chars a token
        return opts["avg_tokens_per_chunk"]

    @staticmethod
    def _use_mmr(embs, sub, opts) -> bool:
        have = opts["query_embedding"] is not None and all(embs[i] is not None for i in sub)
        if opts["selection"] == "mmr" and not have:
            raise ValueError("selection='mmr' needs query_embedding and an 'embedding' on every match.")
        return opts["selection"] == "mmr" or (opts["selection"] == "auto" and have)
