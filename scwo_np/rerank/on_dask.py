"""Batch reranking on Dask: the in-process path mapped over partitions that hold whole sets.

Each partition is reranked by :func:`~scwo_np.rerank.rerank_table`, so the
result of every set is bit for bit what the in-process path gives.  A set
must not straddle two partitions: data written clustered by ``query_id``
(the normal way to write retrieved sets, and what ``dd.read_parquet`` of a
clustered file gives when row groups end on set boundaries) is used as it
is, with ``map_partitions`` and no shuffle.  When a query id shows up in two
partitions this raises and says how to fix the data (a shuffle would also
reorder the candidates inside a set, and the order decides ties), rather
than regrouping millions of sets behind the user's back.
"""

from __future__ import annotations

from typing import Any

from ..validation import check_budget
from .arrow import batch_module, pyarrow
from .table import rerank_table

__all__ = ["rerank_dask", "check_clustered"]


def _partition(df, queries, budget, kw):
    """Rerank one pandas partition (whole sets) through Arrow; back to pandas."""
    pa = pyarrow()
    table = pa.Table.from_pandas(df, preserve_index=False)
    return rerank_table(table, queries, budget, **kw).to_pandas()


def check_clustered(ddf: Any, query_col: str = "query_id") -> None:
    """Raise a ValueError if some query id has rows in two partitions (reads only that column)."""
    import pandas as pd

    ids = (
        ddf[query_col]
        .map_partitions(lambda s: pd.Series([pd.unique(s).tolist()], dtype=object), meta=(query_col, object))
        .compute()
    )
    seen: dict = {}
    for part, values in enumerate(ids):
        for v in values:
            if v in seen and seen[v] != part:
                raise ValueError(
                    f"query_id {v!r} has rows in partitions {seen[v]} and {part}: a set must not straddle two "
                    f"partitions. Write the data clustered by {query_col} with row groups ending on set boundaries "
                    f"(or repartition by {query_col} yourself, keeping each set's candidate order)."
                )
            seen[v] = part


def rerank_dask(
    ddf: Any,
    queries: Any | None,
    budget: int,
    *,
    check: bool = True,
    lam: float = 0.7,
    cost_aware: bool = False,
    cost_exponent: float = 0.25,
    keep_all: bool = False,
    query_col: str = "query_id",
    embedding_col: str = "embedding",
    tokens_col: str = "tokens",
    query_embedding_col: str = "query_embedding",
) -> Any:
    """Rerank a Dask dataframe of candidates, lazily: one task per partition, no shuffle.

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
        Candidates as in :func:`~scwo_np.rerank.rerank_table` (``embedding``
        as arrays, the way ``dd.read_parquet`` reads a list column), each
        set within one partition.
    queries : pyarrow.Table or None
        The queries table (sent to every task), or None for a
        ``query_embedding`` column.
    budget : int
        Token budget of every set.
    check : bool, default True
        Check first (reading only ``query_id``) that no set straddles two
        partitions; False skips that pass for data known to be clustered.

    Other parameters are as in :func:`~scwo_np.rerank.rerank_table`.

    Returns
    -------
    dask.dataframe.DataFrame
        Lazy: the selected rows with ``rank`` and ``gain``; ``.compute()``
        or ``.to_parquet()`` runs it on the current scheduler (a
        ``distributed.Client``, or threads).
    """
    dd = batch_module("dask.dataframe")
    if not isinstance(ddf, dd.DataFrame):
        raise TypeError(
            f"ddf must be a dask DataFrame; got {type(ddf).__name__} (rerank_table takes Arrow tables)."
        )
    budget = check_budget(budget)
    for col in (embedding_col, query_embedding_col):
        if col in ddf.columns and str(ddf[col].dtype).startswith(("string", "str")):
            raise TypeError(
                f"ddf: {col} holds strings, not arrays: dask's dataframe.convert-string turned the embeddings "
                "into text (dd.from_pandas does this). Read the data with dd.read_parquet, or build it under "
                "dask.config.set({'dataframe.convert-string': False})."
            )
    if check:
        check_clustered(ddf, query_col)
    kw = dict(
        lam=lam, cost_aware=cost_aware, cost_exponent=cost_exponent, keep_all=keep_all, query_col=query_col,
        embedding_col=embedding_col, tokens_col=tokens_col, query_embedding_col=query_embedding_col,
    )  # fmt: skip
    meta = _partition(ddf._meta, queries, budget, kw)
    return ddf.map_partitions(_partition, queries, budget, kw, meta=meta, align_dataframes=False)
