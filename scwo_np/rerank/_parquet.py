"""Rerank a Parquet file of retrieved sets, streamed: memory bounded by a batch, not by the file.

The file is read record batch by record batch, the next batch on a thread
while this one is reranked.  A set whose rows continue into the next batch
is held back and completed there, so sets split across row groups are
handled exactly.  The file must be *clustered* by ``query_id`` (each
query's rows contiguous, which is how such files are normally written: sort
or group by query before writing); a query id that reappears after its set
ended is an error that says so, since streaming cannot regroup it.  Output
is written under a temporary name beside ``dst`` and renamed at the end: on
any error there is no half-written file.  With ``client=`` the same job
runs on a Dask cluster (:mod:`scwo_np.rerank._on_dask`) and writes the same
file.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from ..select import AUTO_BROAD
from ..validation import check_budget, check_int
from ._arrow import pyarrow, query_codes, require_columns
from ._table import _rerank, check_output_columns

__all__ = ["RerankSummary"]

#: Bytes of rows (all their columns, uncompressed) per batch when ``batch_rows`` is not given.
BATCH_BYTES = 1 << 24


class RerankSummary(dict):
    """What :func:`rerank_parquet` did: ``sets``, ``candidates``, ``kept``, ``tokens_offered``, ``tokens_kept``,
    and ``broad_sets``: the sets for which ``lam="auto"`` chose the broad value (0.9; 0 for a fixed ``lam``).

    Parameters
    ----------
    **counts : int
        Any of the six counts (0 where missing).

    Examples
    --------
    >>> s = RerankSummary(sets=2, kept=3)
    >>> s.add(RerankSummary(sets=1, kept=2, tokens_kept=40))
    >>> s
    {'sets': 3, 'candidates': 0, 'kept': 5, 'tokens_offered': 0, 'tokens_kept': 40, 'broad_sets': 0}
    """

    def __init__(self, **counts: int) -> None:
        keys = ("sets", "candidates", "kept", "tokens_offered", "tokens_kept", "broad_sets")
        super().__init__({k: int(counts.get(k, 0)) for k in keys})

    def add(self, other: dict) -> None:
        """Add another summary's counts to this one.

        Parameters
        ----------
        other : dict
            Another summary (of a part of the job).

        Returns
        -------
        None
            The counts are added in place.

        Examples
        --------
        >>> total = RerankSummary()
        >>> total.add(RerankSummary(sets=2, kept=7))
        >>> total["sets"], total["kept"]
        (2, 7)
        """
        for k in self:
            self[k] += other[k]


def prepare(src, queries, budget, batch_rows, query_col, embedding_col, tokens_col) -> tuple:
    """Checks shared by both runners: ``(schema, queries table, budget, batch_rows)``.

    Reads ``src``'s schema only; loads ``queries`` when it is a path.
    """
    pa = pyarrow()
    import pyarrow.parquet as pq

    budget = check_budget(budget)
    if batch_rows is not None:
        batch_rows = check_int(batch_rows, name="batch_rows", low=1, high=2**31 - 1, clamp=True)
    if queries is not None and not isinstance(queries, pa.Table):
        try:
            queries = pq.read_table(os.fspath(queries))
        except FileNotFoundError:
            raise FileNotFoundError(f"queries file {os.fspath(queries)!r} does not exist.") from None
        except (pa.ArrowInvalid, OSError) as exc:
            raise ValueError(
                f"queries file {os.fspath(queries)!r} is not a readable Parquet file: {exc}"
            ) from None
    try:
        schema = pq.read_schema(src)
    except FileNotFoundError:
        raise FileNotFoundError(f"candidates file {src!r} does not exist.") from None
    except (pa.ArrowInvalid, OSError) as exc:
        raise ValueError(f"{src!r} is not a readable Parquet file: {exc}") from None
    require_columns(schema, [query_col, embedding_col, tokens_col], what="candidates")
    check_output_columns(schema.names)
    if batch_rows is None:
        batch_rows = _default_batch_rows(schema.field(embedding_col).type, _row_bytes(src))
    return schema, queries, budget, batch_rows


def _row_bytes(src: Any) -> int:
    """A row's uncompressed bytes, all columns, by the file's metadata (0 when it does not say)."""
    import pyarrow.parquet as pq

    try:
        md = pq.ParquetFile(src).metadata
    except (OSError, ValueError):
        return 0
    size = sum(md.row_group(g).total_byte_size for g in range(md.num_row_groups))
    return size // md.num_rows if md.num_rows else 0


def writer_options(schema: Any) -> dict:
    """ParquetWriter options for an output: no dictionary encoding of float or float-list columns.

    Embeddings never repeat, and every row group starts a new dictionary:
    with pyarrow's default (dictionary for every column) writing the
    selected rows batch by batch took 5.5x as long as without it.
    """
    pa = pyarrow()

    def floats(t: Any) -> bool:
        if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            t = t.value_type
        return pa.types.is_floating(t)

    return {"use_dictionary": [f.name for f in schema if not floats(f.type)]}


def is_dataset_target(dst: str) -> bool:
    """True when ``dst`` names a directory of part files: it ends with a slash or is a directory."""
    return dst.endswith(("/", os.sep)) or os.path.isdir(dst)


def part_name(i: int) -> str:
    """The ``i``-th part file of a dataset output (zero-padded: name order is file order)."""
    return f"part-{i:05d}.parquet"


def _check_folder(folder: str, dst: str) -> None:
    """The output's folder exists: else an error naming the output as given (not the temporary file)."""
    if not os.path.isdir(folder):
        raise FileNotFoundError(2, f"no folder {folder!r} to write the output into; create it first", dst)


@contextlib.contextmanager
def atomic_dataset(dst: str) -> Iterator[str]:
    """A temporary directory beside ``dst`` to fill with part files, renamed to ``dst`` only on success.

    ``dst`` must not exist or be an empty directory (it is replaced).
    """
    path = os.path.abspath(dst.rstrip("/" + os.sep) or dst)
    if os.path.isdir(path) and os.listdir(path):
        raise FileExistsError(f"output directory {dst!r} is not empty; give a new or an empty directory.")
    _check_folder(os.path.dirname(path), dst)
    tmp = tempfile.mkdtemp(dir=os.path.dirname(path), prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    try:
        yield tmp
        if os.path.isdir(path):
            os.rmdir(path)
        os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


@contextlib.contextmanager
def atomic_writer(dst: str, schema: Any) -> Iterator[Any]:
    """A ParquetWriter on a temporary file beside ``dst``, renamed to ``dst`` only on success.

    When ``dst`` is a directory (see :func:`is_dataset_target`) the file is
    its one part, ``part-00000.parquet``.
    """
    import pyarrow.parquet as pq

    if is_dataset_target(dst):
        with (
            atomic_dataset(dst) as folder,
            pq.ParquetWriter(os.path.join(folder, part_name(0)), schema, **writer_options(schema)) as w,
        ):
            yield w
        return
    folder = os.path.dirname(os.path.abspath(dst))
    _check_folder(folder, dst)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(dst)}.", suffix=".tmp")
    os.close(fd)
    try:
        with pq.ParquetWriter(tmp, schema, **writer_options(schema)) as writer:
            yield writer
        os.replace(tmp, dst)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def stream(
    batches: Iterable[Any], queries, budget, kw, summary: RerankSummary, first_row: int = 0
) -> Iterator[Any]:
    """Rerank clustered record batches set by set; yield each batch's output as soon as its sets are whole.

    The last set of a batch is held back until a batch starts with another
    query id (or the batches end); only that set is concatenated, the
    complete sets are reranked as a slice of their batch.  ``summary`` is
    updated before each output is yielded.  Errors name rows by their number
    in the file, whose first batch starts at row ``first_row``.
    """
    pa = pyarrow()
    query_col = kw["query_col"]
    finished: set = set()
    carry, carry_row = None, 0  # the rows of the last set seen, which may go on in the next batch
    row = first_row  # the file's number of the current part's first row
    for batch in batches:
        part = pa.Table.from_batches([batch]) if isinstance(batch, pa.RecordBatch) else batch
        if part.num_rows == 0:
            continue
        codes, ids = query_codes(part.column(query_col), query_col, row)
        if carry is not None:
            if ids[0].as_py() == carry.column(query_col)[0].as_py():
                starts = run_starts(codes)
                head = int(starts[1]) if starts.size > 1 else part.num_rows
                carry = pa.concat_tables([carry, part.slice(0, head)])
                if head == part.num_rows:
                    row += head
                    continue
                part = part.slice(head)
                row += head
                codes, ids = query_codes(part.column(query_col), query_col, row)
            yield _rerank_part(
                carry,
                *query_codes(carry.column(query_col)),
                queries,
                budget,
                kw,
                summary,
                finished,
                carry_row,
            )
            carry = None
        cut = int(run_starts(codes)[-1])
        if cut:
            yield _rerank_part(
                part.slice(0, cut), codes[:cut], ids, queries, budget, kw, summary, finished, row
            )
        carry, carry_row = part.slice(cut), row + cut
        row += part.num_rows
    if carry is not None:
        yield _rerank_part(
            carry, *query_codes(carry.column(query_col)), queries, budget, kw, summary, finished, carry_row
        )


def run_starts(codes: np.ndarray) -> np.ndarray:
    """Indices where a new run of equal codes starts (including 0)."""
    if codes.size == 0:
        return codes[:0]
    return np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])


def check_runs(codes: np.ndarray, ids: Any, finished: set, query_col: str) -> tuple[np.ndarray, Any]:
    """``(starts, ids)`` of the runs of equal query ids, checked to be one run per id.

    ``codes`` number the ids by first appearance (``ids`` the dictionary,
    which may run past these rows' own ids); the rows are clustered exactly
    when every run brings a new code and no id is in ``finished`` (the ids
    of sets already done), which is then updated.
    """
    starts = run_starts(codes)
    if starts.size and int(codes.max()) + 1 != starts.size:
        run_codes = codes[starts]
        seen = np.zeros(int(codes.max()) + 1, dtype=bool)
        for c in run_codes.tolist():  # the first query whose rows start a second run
            if seen[c]:
                break
            seen[c] = True
        raise ValueError(
            f"candidates are not clustered by {query_col}: the rows of {ids[c].as_py()!r} appear in two places. "
            f"Sort or group the file by {query_col} before reranking it."
        )
    ids = ids.slice(0, starts.size)
    run_ids = ids.to_pylist()
    again = finished.intersection(run_ids)
    if again:
        raise ValueError(
            f"candidates are not clustered by {query_col}: {sorted(map(repr, again))[0]} appears again after its "
            f"set ended. Sort or group the file by {query_col} before reranking it."
        )
    finished.update(run_ids)
    return starts, ids


def _default_batch_rows(emb_type: Any, row_bytes: int = 0) -> int:
    """Rows that take about :data:`BATCH_BYTES`, by their embedding or, when more, by all their
    columns (``row_bytes``: a 32 KB page of text beside each embedding took 1.5 GB with batches
    sized by the embeddings alone); at least 1,024 rows."""
    try:
        width = emb_type.list_size * emb_type.value_type.bit_width // 8
    except (AttributeError, ValueError):  # a variable-size list: assume d = 1,024 float32
        width = 4096
    return max(1024, BATCH_BYTES // max(width, row_bytes, 1))


def _rerank_part(part, codes, ids, queries, budget, kw, summary, finished, first_row=0) -> Any:
    """Rerank the complete, clustered sets in ``part`` (its first row is the file's ``first_row``);
    count them into ``summary``."""
    starts, ids = check_runs(codes, ids, finished, kw["query_col"])
    offsets = np.append(starts, part.num_rows).astype(np.int64)
    lams: list = []
    out = _rerank(part, queries, budget, (None, offsets, ids), lams=lams, first_row=first_row, **kw)
    if kw["lam"] == "auto":
        summary["broad_sets"] += sum(int(np.count_nonzero(x == AUTO_BROAD)) for x in lams)
    tokens_col = kw["tokens_col"]
    tokens = part.column(tokens_col).to_numpy()
    summary["sets"] += len(ids)
    summary["candidates"] += part.num_rows
    summary["tokens_offered"] += int(tokens.sum())
    if kw["keep_all"]:
        sel = out.column("selected").to_numpy(zero_copy_only=False)
        summary["kept"] += int(sel.sum())
        summary["tokens_kept"] += int(tokens[sel].sum())
    else:
        summary["kept"] += out.num_rows
        summary["tokens_kept"] += int(out.column(tokens_col).to_numpy().sum())
    return out


def output_schema(schema: Any, keep_all: bool) -> Any:
    """The output's schema: the input's columns, then ``selected`` (with ``keep_all``), ``rank`` and ``gain``."""
    pa = pyarrow()
    if keep_all:
        schema = schema.append(pa.field("selected", pa.bool_()))
    return schema.append(pa.field("rank", pa.int64())).append(pa.field("gain", pa.float64()))
