"""Batch reranking of retrieved sets: Arrow tables and Parquet files in and out.

- :func:`rerank_table` — an Arrow table of candidates (one row per
  candidate, long format) cut per query to a token budget with MMR;
- :func:`rerank_parquet` — the same over a Parquet file, streamed batch by
  batch, so memory is bounded by the largest batch, not by the file.

Needs the ``batch`` extra (``pip install 'scwo_np[batch]'``: pyarrow, dask,
distributed).
"""

from .parquet import rerank_parquet
from .table import rerank_table

__all__ = ["rerank_parquet", "rerank_table"]
