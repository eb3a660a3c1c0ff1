"""scwo_np: decide what goes into an LLM's context window, on NumPy arrays.

The selection core (budgeted MMR, from the SCWO specification):

- :func:`mmr_select` — one query, one candidate set;
- :func:`select_by_strategy` — every strategy by name
  (:data:`~scwo_np.select.STRATEGIES`: ``"mmr"``, ``"msd"``, ``"dpp"``, ``"ssd"``, ``"cover"``, ``"facility_location"``,
  ``"xquad"``, ``"rxquad"``, ``"gist"``, ``"knapsack"``, the exact optimum);
- :func:`mmr_select_multi` — several queries at once;
- :func:`select_batch` — many (query, candidate set) problems in one call;
- :func:`select_texts` — from texts and a query (embedder, token counter,
  layout of the result) to :func:`mmr_select`;
- :func:`truncate`, :func:`topk_relevance`, :func:`coverage` — the baselines
  and the quality metric of the specification.

Beside it: :mod:`scwo_np.dedup` (near-duplicates by Jaccard, difflib ratio,
cosine or MinHash; its function :func:`deduplicate` is also here), :mod:`scwo_np.optimize` (the KB Labs and MoRAG context optimizers,
with the ADR's steps :func:`~scwo_np.optimize.diversify` and
:func:`~scwo_np.optimize.fit_budget`), :mod:`scwo_np.anchor` (SmartCrusher's
dynamic anchoring of JSON arrays), :mod:`scwo_np.hsca` (the HSCA engine),
:mod:`scwo_np.embed` (embedders and their cache), :mod:`scwo_np.rerank` (batch
reranking of Arrow tables, Parquet files and Dask dataframes),
:mod:`scwo_np.integrations` (LangChain, LlamaIndex), :mod:`scwo_np.tokens` (token
counters) and :mod:`scwo_np.text` (the one tokenizer).  Each package's
``__init__`` is its public surface; modules whose names start with ``_`` are
private and may change without notice.
"""

__version__ = "0.2.0"  # before the imports: _config reads it to name the JIT cache folder

from .datasets import load_sample
from .dedup import deduplicate
from .select import (
    MMR_METHODS,
    STRATEGIES,
    BatchSelection,
    coverage,
    mmr_select,
    mmr_select_multi,
    select_batch,
    select_by_strategy,
    select_texts,
    topk_relevance,
    truncate,
)

__all__ = [
    "MMR_METHODS",
    "STRATEGIES",
    "BatchSelection",
    "coverage",
    "deduplicate",
    "load_sample",
    "mmr_select",
    "mmr_select_multi",
    "select_batch",
    "select_by_strategy",
    "select_texts",
    "topk_relevance",
    "truncate",
]

from .validation import renamed_attributes  # noqa: E402

#: Old public names -> new (see docs/user_guide/migration.md); each warns until 0.3.
__getattr__ = renamed_attributes(__name__, {"METHODS": "MMR_METHODS"})
