"""Selection (the SCWO specification): budgeted MMR, other strategies and the baselines.

- :func:`mmr_select` (exact, lazy heap, auto: ``MMR_METHODS``) and
  :func:`mmr_select_multi` (several queries), :func:`mmr_with_relevance` (relevance given per
  item, not a cosine to one query);
- :func:`select_by_strategy` — every strategy by name (``STRATEGIES``):
  :func:`mmr_select`, :func:`msd_select` (budgeted max-sum diversity),
  :func:`dpp_select` (budgeted DPP greedy MAP, lazy heap), :func:`ssd_select`
  (budgeted sliding spectrum decomposition, lazy heap), :func:`cover_select`
  (relevance plus concave coverage, pyversity's cover), :func:`facility_location_select`
  (relevance-weighted coverage, submodular), :func:`xquad_select` and
  :func:`rxquad_select` (coverage of the query's aspects, pyversity's xQuAD and RxQuAD),
  :func:`gist_select` (relevance plus the max-min distance, GIST) and :func:`knapsack_select` (the exact
  optimum of total relevance under the budget); :func:`cluster_ground` makes the
  ground sets of the coverage strategies;
- ``lam="auto"`` — MMR's trade-off chosen per question (:func:`auto_lam`, :func:`query_kind`);
- :func:`select_batch` — many (query, candidate set) problems in one call;
- :func:`select_texts` — from texts and a question (embedder, token counter, layout
  ``ORDERS`` by :func:`arrange`) to :func:`mmr_select`;
- :func:`truncate`, :func:`topk_relevance`, :func:`coverage` — the spec's baselines
  and quality metric.

The benchmarks and the evaluation (``compare_strategies``, ``quality_at_budget``,
``run_bench`` and their tables) moved to :mod:`scwo_np.bench` in 0.2; their old names here
still work until 0.3, with a ``DeprecationWarning``.
"""

from ..validation import renamed_attributes
from ._auto import AUTO_BROAD, AUTO_LOOKUP, auto_lam, query_kind
from ._baselines import coverage, topk_relevance, truncate
from ._batch import BatchSelection, select_batch
from ._cover import cover_select
from ._dpp import dpp_select
from ._facility import facility_location_select
from ._front import STRATEGIES, select_by_strategy
from ._gist import gist_select
from ._ground import cluster_ground
from ._knapsack import knapsack_select
from ._mmr import MMR_METHODS, mmr_select, mmr_select_multi, mmr_with_relevance
from ._msd import msd_select
from ._ssd import ssd_select
from ._texts import GRANULARITIES, ORDERS, TextSelection, arrange, select_texts
from ._xquad import rxquad_select, xquad_select

__all__ = [
    "AUTO_BROAD",
    "AUTO_LOOKUP",
    "cluster_ground",
    "MMR_METHODS",
    "GRANULARITIES",
    "ORDERS",
    "STRATEGIES",
    "BatchSelection",
    "TextSelection",
    "arrange",
    "auto_lam",
    "cover_select",
    "coverage",
    "dpp_select",
    "facility_location_select",
    "gist_select",
    "knapsack_select",
    "mmr_select",
    "mmr_select_multi",
    "mmr_with_relevance",
    "msd_select",
    "query_kind",
    "rxquad_select",
    "select_by_strategy",
    "select_batch",
    "select_texts",
    "ssd_select",
    "topk_relevance",
    "truncate",
    "xquad_select",
]

#: Old public names of this package -> their new names (``"module:name"`` for a name that moved:
#: the benchmarks and the evaluation moved to scwo_np.bench in 0.2).
__getattr__ = renamed_attributes(
    __name__,
    {
        "METHODS": "MMR_METHODS",
        "question_kind": "query_kind",
        **{
            name: f"scwo_np.bench:{name}"
            for name in (
                "DEFAULT_STRATEGIES",
                "QUALITY_METHODS",
                "compare_strategies",
                "format_quality",
                "format_table",
                "quality_at_budget",
                "run_bench",
            )
        },
    },
)
