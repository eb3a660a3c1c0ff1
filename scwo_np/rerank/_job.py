"""``rerank_parquet``: the Parquet job, here (streamed, :mod:`scwo_np.rerank._parquet`) or on a
Dask cluster (:mod:`scwo_np.rerank._on_dask`); both modules below it, neither importing this one.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from .._parallel import read_ahead
from ._on_dask import rerank_parquet_on_cluster
from ._parquet import RerankSummary, atomic_writer, output_schema, prepare, stream

__all__ = ["rerank_parquet"]


def rerank_parquet(
    src: str | os.PathLike,
    dst: str | os.PathLike,
    budget: int,
    *,
    queries: Any | None = None,
    batch_rows: int | None = None,
    lam: float | str = 0.7,
    cost_aware: bool = False,
    cost_exponent: float = 0.25,
    keep_all: bool = False,
    query_col: str = "query_id",
    embedding_col: str = "embedding",
    tokens_col: str = "tokens",
    query_embedding_col: str = "query_embedding",
    progress: Callable[[int, int], None] | None = None,
    client: Any | None = None,
) -> RerankSummary:
    """Rerank the candidates in Parquet file ``src`` into Parquet file ``dst``.

    Parameters
    ----------
    src, dst : path
        Candidates in (the schema of :func:`~scwo_np.rerank.rerank_table`),
        selected rows out (all input columns plus ``rank`` and ``gain``),
        sets in the order of the file.  A ``dst`` ending with a slash (or
        an empty directory) is written as a directory of part files
        (``part-00000.parquet``...; ``pq.read_table(dst)`` reads them back
        in order): on a cluster each task writes its own part.
    budget : int
        Token budget of every set.
    queries : pyarrow.Table, path or None
        The queries (``query_id``, ``embedding``), as a table or a Parquet
        file; None when the candidates carry ``query_embedding``.
    batch_rows : int, optional
        Rows read per batch.  Memory holds a few batches (one read ahead,
        one reranked, the writer's) plus the largest set; the default is the
        rows that take 16 MB, all their columns uncompressed (10,922 at d = 384
        float32 and little else; fewer beside a long text).
    progress : callable, optional
        Called as ``progress(sets_done, rows_done)`` as the work advances.
    client : distributed.Client, optional
        Run on this Dask cluster instead of in this process: one task per
        span of row groups, read by the workers from ``src`` (a path they
        can all read), the results written in file order (here, or by the
        workers into a directory ``dst``).  The output holds the same rows
        bit for bit.
    lam, cost_aware, cost_exponent
        As in :func:`~scwo_np.mmr_select`.
    keep_all : bool, default False
        Every row with a boolean ``selected`` column, instead of the selected rows only.
    query_col, embedding_col, tokens_col, query_embedding_col : str
        The names of the columns that hold the set's id, the candidate's embedding, its token
        count and (optionally) the query's embedding (defaults ``query_id``, ``embedding``,
        ``tokens``, ``query_embedding``).

    Returns
    -------
    RerankSummary
        Counts of sets, candidates, kept rows, tokens offered and kept.

    Examples
    --------
    >>> import os, tempfile
    >>> import pyarrow.parquet as pq
    >>> from scwo_np.rerank import sample_sets
    >>> cands, queries = sample_sets(5)
    >>> folder = tempfile.mkdtemp()
    >>> pq.write_table(cands, os.path.join(folder, "sets.parquet"))
    >>> summary = rerank_parquet(os.path.join(folder, "sets.parquet"), os.path.join(folder, "picked.parquet"),
    ...                          300, queries=queries)
    >>> summary["sets"], summary["candidates"], pq.read_table(os.path.join(folder, "picked.parquet")).num_rows == summary["kept"]
    (32, 160, True)
    """
    if client is not None:
        return rerank_parquet_on_cluster(
            client, src, dst, budget, queries=queries, batch_rows=batch_rows, lam=lam, cost_aware=cost_aware,
            cost_exponent=cost_exponent, keep_all=keep_all, query_col=query_col, embedding_col=embedding_col,
            tokens_col=tokens_col, query_embedding_col=query_embedding_col, progress=progress,
        )  # fmt: skip
    import pyarrow.parquet as pq

    src, dst = os.fspath(src), os.fspath(dst)
    schema, queries, budget, batch_rows = prepare(
        src, queries, budget, batch_rows, query_col, embedding_col, tokens_col
    )
    kw = dict(
        lam=lam, cost_aware=cost_aware, cost_exponent=cost_exponent, keep_all=keep_all, query_col=query_col,
        embedding_col=embedding_col, tokens_col=tokens_col, query_embedding_col=query_embedding_col,
    )  # fmt: skip
    summary = RerankSummary()
    # pre_buffer=False with a small buffer: pyarrow's default pre-buffering reads
    # ahead the whole file (memory grew with it); one batch is read ahead instead.
    reader = pq.ParquetFile(src, pre_buffer=False, buffer_size=1 << 20)
    with atomic_writer(dst, output_schema(schema, keep_all)) as writer:
        batches = read_ahead(reader.iter_batches(batch_size=batch_rows))
        for out in stream(batches, queries, budget, kw, summary):
            writer.write_table(out)
            if progress is not None:
                progress(summary["sets"], summary["candidates"])
    return summary
