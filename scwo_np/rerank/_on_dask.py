"""Batch reranking on Dask: the in-process path mapped over partitions that hold whole sets.

Two entry points.  :func:`rerank_parquet_on_cluster` (what ``rerank_parquet(...,
client=)`` and ``scwo rerank --workers/--scheduler`` run) plans spans of
row groups from the ``query_id`` column alone, has the workers read and
rerank them with the streaming path, and writes their outputs in file
order: no dataframe, no pandas, no shuffle, and the same rows bit for bit.
:func:`rerank_dask` is for data already in a ``dask.dataframe``.

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

import concurrent.futures
import contextlib
import os
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import numba
import numpy as np

from ..validation import check_budget
from ._arrow import batch_module, pyarrow, query_codes
from ._parquet import (
    RerankSummary,
    atomic_dataset,
    atomic_writer,
    check_runs,
    is_dataset_target,
    output_schema,
    part_name,
    prepare,
    stream,
    writer_options,
)  # fmt: skip
from ._table import rerank_table

#: How often one span is run again after the worker holding its finished result died.
MAX_RESUBMITS = 3

#: What ``Future.result()`` raises for a task the scheduler forgot (``distributed``'s
#: ``FutureCancelledError`` is one).
_CANCELLED = concurrent.futures.CancelledError

__all__ = ["rerank_dask", "rerank_parquet_on_cluster", "check_clustered"]


@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    """Numba on one thread inside a task: Dask runs the tasks side by side (the setting is per thread)."""
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(before)


def _partition(df, queries, budget, kw):
    """Rerank one pandas partition (whole sets) through Arrow; back to pandas."""
    pa = pyarrow()
    table = pa.Table.from_pandas(df, preserve_index=False)
    with _one_thread():
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
    lam: float | str = 0.7,
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
    dask.dataframe.DataFrame
        Lazy: the selected rows with ``rank`` and ``gain``; ``.compute()``
        or ``.to_parquet()`` runs it on the current scheduler (a
        ``distributed.Client``, or threads).

    Examples
    --------
    >>> import os, tempfile
    >>> import dask.dataframe as dd
    >>> import pyarrow.parquet as pq
    >>> from scwo_np.rerank import sample_sets
    >>> cands, queries = sample_sets(5)
    >>> path = os.path.join(tempfile.mkdtemp(), "sets.parquet")
    >>> pq.write_table(cands, path, row_group_size=5 * 8)  # eight whole sets per row group
    >>> picked = rerank_dask(dd.read_parquet(path, split_row_groups=True), queries, budget=300).compute()
    >>> picked["query_id"].nunique(), bool((picked.groupby("query_id")["tokens"].sum() <= 300).all())
    (32, True)
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


def plan_spans(src: str, query_col: str, rows_per_task: int) -> list[tuple[int, int, int]]:
    """Spans ``(first_row, end_row, first_row_group)`` of whole sets, about ``rows_per_task`` rows each.

    Reads only the ``query_id`` column.  Spans are cut at row-group
    boundaries, then moved to the next set start, so a set belongs to the
    span where it starts and every row to exactly one span.  Raises the
    streaming path's error if the file is not clustered by ``query_id``.
    """
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(src, pre_buffer=False, buffer_size=1 << 20)
    md = pf.metadata
    group_rows = np.array([md.row_group(g).num_rows for g in range(md.num_row_groups)], dtype=np.int64)
    group_start = np.concatenate([[0], np.cumsum(group_rows)])
    total = int(group_start[-1])
    starts, finished, pos, last = [], set(), 0, None
    for batch in pf.iter_batches(batch_size=1 << 20, columns=[query_col]):
        codes, ids = query_codes(batch.column(0), query_col)
        if codes.size == 0:
            continue
        first = ids[0].as_py()
        if first == last:  # the previous batch's last set goes on: not a new run
            finished.discard(first)
        run, run_ids = check_runs(codes, ids, finished, query_col)
        if first == last:
            run = run[1:]
        starts.append(run + pos)
        last = run_ids[-1].as_py()
        pos += batch.num_rows
    set_start = np.concatenate(starts + [np.array([total], dtype=np.int64)])
    # cut after whole row groups once a span holds rows_per_task rows; move each cut to a set start
    cuts, acc = [0], 0
    for g, n in enumerate(group_rows):
        acc += int(n)
        if acc >= rows_per_task and g + 1 < len(group_rows):
            cuts.append(int(group_start[g + 1]))
            acc = 0
    cuts.append(total)
    bounds = set_start[np.searchsorted(set_start, cuts)]
    spans = []
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        if b > a:
            group = int(np.searchsorted(group_start, a, side="right") - 1)
            spans.append((int(a), int(b), group))
    return spans


def _span_batches(src: str, a: int, b: int, group: int, batch_rows: int) -> Iterator[Any]:
    """Record batches of rows ``[a, b)``, reading from row group ``group`` (which holds row ``a``) on."""
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(src, pre_buffer=False, buffer_size=1 << 20)
    md = pf.metadata
    pos = sum(md.row_group(g).num_rows for g in range(group))
    # use_threads=False: a task keeps to its worker thread, as Numba does (see _one_thread)
    batches = pf.iter_batches(
        batch_size=batch_rows, row_groups=range(group, md.num_row_groups), use_threads=False
    )
    for batch in batches:
        lo, hi = max(a - pos, 0), min(b - pos, batch.num_rows)
        if hi > lo:
            yield batch.slice(lo, hi - lo)
        pos += batch.num_rows
        if pos >= b:
            return


def _rerank_span(src, span, queries, budget, kw, batch_rows, schema, part=None):
    """One task: rerank the sets in rows ``[a, b)`` of ``src``.

    Returns ``(output table, summary)``, or ``(None, summary)`` after
    writing the output to the file ``part`` (under a unique temporary name,
    then renamed: a task run twice, or a half-written try, leaves one whole part).
    """
    pa = pyarrow()
    import pyarrow.parquet as pq

    summary = RerankSummary()
    with _one_thread():
        outs = list(stream(_span_batches(src, *span, batch_rows), queries, budget, kw, summary, span[0]))
    out = pa.concat_tables(outs) if outs else schema.empty_table()
    if part is None:
        return out, summary
    folder, name = os.path.split(part)  # a leading dot: readers skip it if a killed try leaves it behind
    tmp = os.path.join(folder, f".{name}.{uuid.uuid4().hex}.tmp")
    pq.write_table(out, tmp, **writer_options(schema))
    os.replace(tmp, part)
    return None, summary


def rerank_parquet_on_cluster(
    client: Any,
    src: str | os.PathLike,
    dst: str | os.PathLike,
    budget: int,
    *,
    queries: Any | None = None,
    batch_rows: int | None = None,
    rows_per_task: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    **options: Any,
) -> RerankSummary:
    """:func:`~scwo_np.rerank.rerank_parquet` on a Dask cluster: the same rows out, bit for bit.

    The client reads the ``query_id`` column, checks that the file is
    clustered and cuts it into spans of whole sets along row groups (a
    file written as one row group is one task: write row groups of some
    tens of thousands of rows).  Each span is a task: its worker reads the
    rows from ``src`` (so ``src`` must be a path every worker can read) and
    reranks them with the in-process streaming path, Numba on one thread.
    Results come back and are written to ``dst`` here in file order
    (under a temporary name, renamed at the end); or, when ``dst`` is a
    directory (ends with a slash), each worker writes its span's part file
    into it and only counts come back, so the client does no I/O (the
    usual way for large jobs; the directory is renamed into place at the
    end).  Two tasks per worker thread are in flight; results are taken as
    they finish, so a slow task does not idle the other workers, and with
    one output file at most four per thread are held here.  A worker that
    dies mid-job loses nothing: Dask runs its tasks again elsewhere, and
    each span is written once, in order.

    Parameters
    ----------
    client : distributed.Client
        The cluster (``distributed.Client(LocalCluster(...))`` or
        ``Client("tcp://scheduler:8786")``).
    rows_per_task : int, optional
        Rows per task (rounded up to whole row groups); default: enough for
        eight tasks per worker thread, at least ``batch_rows``.

    Other parameters are as in :func:`~scwo_np.rerank.rerank_parquet`.
    """
    pa = pyarrow()
    distributed = batch_module("distributed")
    src, dst = os.path.abspath(os.fspath(src)), os.fspath(dst)
    query_col = options.get("query_col", "query_id")
    kw = dict(
        lam=0.7, cost_aware=False, cost_exponent=0.25, keep_all=False, query_col="query_id",
        embedding_col="embedding", tokens_col="tokens", query_embedding_col="query_embedding",
    )  # fmt: skip
    unknown = set(options) - set(kw)
    if unknown:
        raise TypeError(f"rerank_parquet_on_cluster got unexpected options {sorted(unknown)}.")
    kw.update(options)
    schema, queries, budget, batch_rows = prepare(
        src, queries, budget, batch_rows, query_col, kw["embedding_col"], kw["tokens_col"]
    )
    out_schema = output_schema(schema, kw["keep_all"])
    threads = max(sum(client.nthreads().values()), 1)
    import pyarrow.parquet as pq

    if rows_per_task is None:
        rows_per_task = max(batch_rows, -(-pq.ParquetFile(src).metadata.num_rows // (8 * threads)))
    spans = plan_spans(src, query_col, rows_per_task)
    q = client.scatter(queries, broadcast=True, hash=False) if isinstance(queries, pa.Table) else queries
    summary = RerankSummary()
    todo = enumerate(spans)
    pending: dict = {}  # future -> span number, for the tasks in flight

    def run(folder: str | None, writer: Any = None) -> None:
        """Keep ``2 * threads`` tasks in flight, taking results as they finish, in any order.

        Results are written (or counted) in span order; ones that finish
        early wait in ``done``.  With one output file, at most
        ``4 * threads`` outputs are held here at a time, in flight or waiting.
        """
        done: dict = {}
        retries: dict = {}
        ready = distributed.as_completed(loop=client.loop)
        cap = 4 * threads if writer is not None else len(spans) + 1
        nxt = 0

        def launch(i: int) -> None:
            part = None if folder is None else os.path.join(folder, part_name(i))
            fut = client.submit(
                _rerank_span, src, spans[i], q, budget, kw, batch_rows, out_schema, part, pure=False
            )
            pending[fut] = i
            ready.add(fut)

        def submit() -> None:
            while len(pending) < 2 * threads and len(pending) + len(done) < cap:
                i, span = next(todo, (None, None))
                if span is None:
                    return
                launch(i)

        submit()
        for fut in ready:
            i = pending.pop(fut)
            try:
                done[i] = fut.result()
            except _CANCELLED:
                # The worker holding a finished result died before it was fetched, and the
                # scheduler forgot the task: run the span again (its part file, if any, is
                # rewritten atomically).  Anything else (an error, KilledWorker) propagates.
                retries[i] = retries.get(i, 0) + 1
                if retries[i] > MAX_RESUBMITS:
                    raise
                launch(i)
                continue
            while nxt in done:
                out, counts = done.pop(nxt)
                nxt += 1
                if writer is not None:
                    writer.write_table(out)
                summary.add(counts)
                if progress is not None:
                    progress(summary["sets"], summary["candidates"])
            submit()

    try:
        if is_dataset_target(dst):  # the workers write the parts: nothing comes back but counts
            with atomic_dataset(dst) as folder:
                if not spans:  # still a readable dataset: one empty part with the schema
                    pq.write_table(
                        out_schema.empty_table(),
                        os.path.join(folder, part_name(0)),
                        **writer_options(out_schema),
                    )
                run(folder)
                for name in os.listdir(folder):  # what tries on workers that died left behind
                    if name.startswith(".") and name.endswith(".tmp"):
                        os.remove(os.path.join(folder, name))
        else:
            with atomic_writer(dst, out_schema) as writer:
                run(None, writer)
    finally:
        if pending:  # an error: stop the tasks still queued or running
            client.cancel(list(pending))
    return summary
