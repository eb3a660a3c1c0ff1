"""Selection (the SCWO specification): budgeted MMR, other strategies and the baselines.

- :func:`mmr_select` (exact, lazy heap, auto: ``MMR_METHODS``) and
  :func:`mmr_select_multi` (several queries);
- :func:`select_by_strategy` — every strategy by name (``STRATEGIES``):
  :func:`mmr_select`, :func:`msd_select` (budgeted max-sum diversity),
  :func:`dpp_select` (budgeted DPP greedy MAP, lazy heap), :func:`ssd_select`
  (budgeted sliding spectrum decomposition, lazy heap), :func:`cover_select`
  (relevance plus concave coverage, pyversity's cover), :func:`facility_location_select`
  (relevance-weighted coverage, submodular) and :func:`knapsack_select` (the exact
  optimum of total relevance under the budget); :func:`cluster_ground` makes the
  ground sets of the coverage strategies;
- ``lam="auto"`` — MMR's trade-off chosen per question (:func:`auto_lam`, :func:`query_kind`);
- :func:`select_batch` — many (query, candidate set) problems in one call;
- :func:`select_texts` — from texts and a question (embedder, token counter, layout
  ``ORDERS`` by :func:`arrange`) to :func:`mmr_select`;
- :func:`compare_strategies` — which strategy puts the answer into the context, on
  questions with known answers (``DEFAULT_STRATEGIES``); :func:`quality_at_budget` and
  :func:`format_quality` — the same for text, chunks or sentences, on the bundled question
  sets (``QUALITY_METHODS``, ``scwo bench --quality``);
- :func:`truncate`, :func:`topk_relevance`, :func:`coverage` — the spec's baselines
  and quality metric; :func:`run_bench` and :func:`format_table` — its benchmark
  table (``scwo bench``).
"""

from ..validation import renamed_attributes
from ._at_budget import QUALITY_METHODS, format_quality, quality_at_budget
from ._auto import AUTO_BROAD, AUTO_LOOKUP, auto_lam, query_kind
from ._baselines import coverage, topk_relevance, truncate
from ._batch import BatchSelection, select_batch
from ._bench import format_table, run_bench
from ._cover import cover_select
from ._dpp import dpp_select
from ._facility import facility_location_select
from ._front import STRATEGIES, select_by_strategy
from ._ground import cluster_ground
from ._knapsack import knapsack_select
from ._mmr import MMR_METHODS, mmr_select, mmr_select_multi
from ._msd import msd_select
from ._quality import DEFAULT_STRATEGIES, compare_strategies
from ._ssd import ssd_select
from ._texts import GRANULARITIES, ORDERS, TextSelection, arrange, select_texts

__all__ = [
    "AUTO_BROAD",
    "AUTO_LOOKUP",
    "cluster_ground",
    "DEFAULT_STRATEGIES",
    "MMR_METHODS",
    "GRANULARITIES",
    "ORDERS",
    "QUALITY_METHODS",
    "STRATEGIES",
    "BatchSelection",
    "TextSelection",
    "arrange",
    "auto_lam",
    "compare_strategies",
    "cover_select",
    "coverage",
    "dpp_select",
    "facility_location_select",
    "format_quality",
    "format_table",
    "knapsack_select",
    "mmr_select",
    "mmr_select_multi",
    "msd_select",
    "quality_at_budget",
    "query_kind",
    "run_bench",
    "select_by_strategy",
    "select_batch",
    "select_texts",
    "ssd_select",
    "topk_relevance",
    "truncate",
]

#: Old public names of this package -> their new names (``"module:name"`` for a name that moved).
__getattr__ = renamed_attributes(__name__, {"METHODS": "MMR_METHODS", "question_kind": "query_kind"})
