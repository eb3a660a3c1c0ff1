"""Selection (the SCWO specification): budgeted MMR and its baselines.

- :mod:`~scwo_np.select.front` — :func:`select`, every strategy by name
  (``STRATEGIES``); the package itself is callable: ``scwo_np.select_by_strategy(E, q,
  costs, budget, strategy="knapsack")`` is :func:`select`;
- :mod:`~scwo_np.select.mmr` — :func:`mmr_select` (exact, lazy heap, auto) and
  :func:`mmr_select_multi`; its kernels live in ``_first_pass`` and ``_lazy_heap``;
- :mod:`~scwo_np.select.knapsack` — :func:`knapsack_select`, the exact optimum
  of total relevance under the budget;
- :mod:`~scwo_np.select.dpp` — :func:`dpp_select`, budgeted DPP greedy MAP with
  a lazy heap;
- :mod:`~scwo_np.select.msd` — :func:`msd_select`, budgeted max-sum diversity;
- :mod:`~scwo_np.select.ssd` — :func:`ssd_select`, budgeted sliding spectrum
  decomposition with a lazy heap;
- :mod:`~scwo_np.select.cover` — :func:`cover_select`, relevance plus concave
  coverage (pyversity's cover), lazy greedy;
- :mod:`~scwo_np.select.facility` — :func:`facility_location_select`, budgeted
  relevance-weighted coverage (submodular, lazy greedy);
- :mod:`~scwo_np.select.quality` — :func:`compare_strategies`: which strategy
  puts the answer into the context, on questions with known answers;
- :mod:`~scwo_np.select.batch` — :func:`select_batch`, many sets in one call;
- :mod:`~scwo_np.select.baselines` — :func:`truncate`, :func:`topk_relevance`,
  :func:`coverage` (the spec's quality metric);
- :mod:`~scwo_np.select.texts` — :func:`select_texts`: from texts and a question
  (embedder, token counter, layout) to :func:`mmr_select`;
- :mod:`~scwo_np.select.bench` — the ``scwo bench`` tables.
"""

from .baselines import coverage, topk_relevance, truncate
from .batch import BatchSelection, select_batch
from .cover import cover_select
from .dpp import dpp_select
from .facility import facility_location_select
from .front import STRATEGIES, select_by_strategy
from .ground import cluster_ground
from .knapsack import knapsack_select
from .mmr import METHODS, mmr_select, mmr_select_multi
from .msd import msd_select
from .quality import DEFAULT_STRATEGIES, compare_strategies
from .ssd import ssd_select
from .texts import ORDERS, TextSelection, arrange, select_texts

__all__ = [
    "cluster_ground",
    "DEFAULT_STRATEGIES",
    "METHODS",
    "ORDERS",
    "STRATEGIES",
    "BatchSelection",
    "TextSelection",
    "arrange",
    "compare_strategies",
    "cover_select",
    "coverage",
    "dpp_select",
    "facility_location_select",
    "knapsack_select",
    "mmr_select",
    "mmr_select_multi",
    "msd_select",
    "select_by_strategy",
    "select_batch",
    "select_texts",
    "ssd_select",
    "topk_relevance",
    "truncate",
]
