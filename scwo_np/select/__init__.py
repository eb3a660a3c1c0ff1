"""Selection (the SCWO specification): budgeted MMR and its baselines.

- :mod:`~scwo_np.select.mmr` — :func:`mmr_select` (exact, lazy heap, auto) and
  :func:`mmr_select_multi`; its kernels live in ``_first_pass`` and ``_lazy_heap``;
- :mod:`~scwo_np.select.batch` — :func:`select_batch`, many sets in one call;
- :mod:`~scwo_np.select.baselines` — :func:`truncate`, :func:`topk_relevance`,
  :func:`coverage` (the spec's quality metric);
- :mod:`~scwo_np.select.texts` — :func:`select_texts`: from texts and a question
  (embedder, token counter, layout) to :func:`mmr_select`;
- :mod:`~scwo_np.select.bench` — the ``scwo bench`` tables.
"""

from .baselines import coverage, topk_relevance, truncate
from .batch import BatchSelection, select_batch
from .mmr import METHODS, mmr_select, mmr_select_multi
from .texts import ORDERS, TextSelection, arrange, select_texts

__all__ = [
    "METHODS",
    "ORDERS",
    "BatchSelection",
    "TextSelection",
    "arrange",
    "coverage",
    "mmr_select",
    "mmr_select_multi",
    "select_batch",
    "select_texts",
    "topk_relevance",
    "truncate",
]
