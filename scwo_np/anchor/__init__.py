"""Dynamic anchoring for large JSON arrays (SmartCrusher): keep the items an LLM will need.

:func:`crush` shrinks a list of JSON objects (a tool output: search results,
logs, a time series, database rows) to at most ``max_items`` items and returns
the sorted indices of the kept ones; :func:`crush_json` does the same on JSON
text.  The items become columns once (per field: factorised codes, a numeric
array, a missing mask) and every score is computed over columns.

What is kept, in this order of priority:

1. **Always** — items matching the query's terms (ids, names, values; terms
   matching more than half of the items are ignored; at most half the
   budget), errors (a status/level field saying error, failed, critical…, or
   a non-empty error field) and numeric anomalies (robust z-score above 3.5
   on any numeric field, on a log scale for right-skewed non-negative
   fields), in that order.  When they alone exceed the budget the most severe
   are kept and the report says how many were dropped.
2. **Position anchors** (the plan's ideas 1–5) — a size-proportional number of
   slots split into front/back/middle by the data's pattern, shifted by the
   query's intent (whole words: "latest", "first", "all"…) or replaced by
   learned position weights; front and back slots take the most informative
   items of a window three times their size (rare values, unusual fields,
   length), middle slots are sampled by category, numeric variance or even
   spacing (idea 6).
3. **Fill** — the remaining slots at evenly spaced quantiles of a position
   density built from the same front/middle/back weights, so "latest" moves
   the fill to the back too.

Identical items are counted once: a slot never goes to a copy of an item
already kept.  Where the plan is silent or inconsistent, see
:class:`AnchorConfig` and the README.

Around it: :func:`read_document` takes tool outputs as tools emit them (an
array, an object holding one, JSON Lines, concatenated values);
``max_items="auto"`` chooses the size from the data (:func:`auto_size`, on
:func:`information_curve`); ``protect=`` keeps matching items first; the omission
marker (:func:`omission_marker`)
says what was dropped and :class:`CrushStore` gives it back (only what the crush
dropped, filtered by ``where`` with the :data:`OPERATORS`, ranked by a ``query``,
in pages (:class:`Page`) within a token ceiling); and
:func:`lossless_encode` drops nothing, writing the array in columnar form that
:func:`lossless_decode` turns back into exactly the input.
"""

from ._auto import BIASES, auto_size, information_curve
from ._columns import Columns, columns
from ._config import ANCHOR_STRATEGIES, PATTERNS, PROTECT_OVERFLOWS, AnchorConfig, AnchorWeights, CrushReport
from ._crush import crush
from ._inputs import Document, read_document
from ._json import crush_json
from ._learning import BUCKETS, PositionLearner, PositionRetrievalPattern, classify_position
from ._lossless import COLUMNAR_KEY, lossless_decode, lossless_encode
from ._marker import MARKER_KEY, is_marker, omission_marker
from ._patterns import anchor_budget, detect_pattern, query_intents
from ._retrieval import OPERATORS
from ._store import CrushStore, Page, array_key

__all__ = [
    "ANCHOR_STRATEGIES",
    "BIASES",
    "BUCKETS",
    "COLUMNAR_KEY",
    "MARKER_KEY",
    "OPERATORS",
    "PATTERNS",
    "PROTECT_OVERFLOWS",
    "AnchorConfig",
    "AnchorWeights",
    "Columns",
    "CrushReport",
    "CrushStore",
    "Document",
    "Page",
    "PositionLearner",
    "PositionRetrievalPattern",
    "anchor_budget",
    "array_key",
    "auto_size",
    "classify_position",
    "columns",
    "crush",
    "crush_json",
    "detect_pattern",
    "information_curve",
    "is_marker",
    "lossless_decode",
    "lossless_encode",
    "omission_marker",
    "query_intents",
    "read_document",
]
