"""Batch reranking of retrieved sets: Arrow tables and Parquet files in and out.

- :func:`rerank_table` — an Arrow table of candidates (one row per
  candidate, long format) cut per query to a token budget with MMR;
- :func:`rerank_parquet` — the same over a Parquet file, streamed batch by
  batch, so memory is bounded by the largest batch, not by the file;
- :func:`rerank_dask` — a Dask dataframe of candidates, lazily, one task per
  partition (each set within one partition), no shuffle;
- :func:`sample_sets` — retrieved sets built from the bundled sample.

Needs the ``batch`` extra (``pip install 'scwo_np[batch]'``: pyarrow, dask,
distributed).
"""

from ._job import rerank_parquet
from ._on_dask import rerank_dask
from ._parquet import RerankSummary
from ._sample import sample_sets
from ._table import rerank_table

__all__ = [
    "RerankSummary",
    "rerank_dask",
    "rerank_parquet",
    "rerank_table",
    "sample_sets",
]
