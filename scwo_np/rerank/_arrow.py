"""Arrow columns to the arrays the selection kernels take, without copying where the layout allows.

A candidates table is long format, one row per candidate: ``query_id``,
``chunk_id``, ``embedding`` (a fixed-size list of float32 or float64),
``tokens`` (integers) and any other columns, which are passed through.
Fixed-size lists keep their values in one contiguous buffer, so the
embeddings become an ``(n, d)`` NumPy view of it: nothing is copied unless
the column is split into several chunks (then it is concatenated once).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..validation import MAX_COST

__all__ = ["batch_module", "embedding_matrix", "query_codes", "require_columns", "token_counts", "pyarrow"]


def batch_module(name: str):
    """Import ``name`` from the ``batch`` extra, or an ImportError that says which extra to install."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:  # pragma: no cover - the batch extra is installed in CI
        raise ImportError(
            f"batch reranking needs {name.split('.')[0]}: pip install 'scwo_np[batch]' (pyarrow, dask, distributed)."
        ) from None


def pyarrow():
    """The ``pyarrow`` module (see :func:`batch_module`)."""
    return batch_module("pyarrow")


def require_columns(table: Any, names: list[str], *, what: str) -> None:
    """Raise a ValueError naming the missing columns and the ones there are."""
    have = list(getattr(table, "column_names", None) or table.names)  # a Table or a Schema
    missing = [c for c in names if c not in have]
    if missing:
        raise ValueError(
            f"{what} has no column {', '.join(map(repr, missing))}; it has {have}. "
            "Rename the columns, or pass the names (query_col=, embedding_col=, tokens_col=)."
        )


def query_codes(qids: Any, column: str = "query_id", first_row: int = 0) -> tuple[NDArray[np.int64], Any]:
    """``(codes, ids)``: the query ids numbered by first appearance, and the ids in that order.

    Nulls are an error naming the first null row (a candidate without a query), counted from
    ``first_row`` (the first row's number in its file).
    """
    pa = pyarrow()
    if qids.null_count:
        row = int(np.flatnonzero(np.asarray(qids.is_null()))[0])
        raise ValueError(
            f"candidates: {column} is null at row {row + first_row}; every candidate needs its query's id."
        )
    if pa.types.is_dictionary(qids.type):  # its dictionary is not in order of appearance
        qids = qids.cast(qids.type.value_type)
    enc = qids.dictionary_encode()
    enc = enc.combine_chunks() if hasattr(enc, "combine_chunks") else enc
    return np.asarray(enc.indices, dtype=np.int64), enc.dictionary


def _describe_row(table: Any, row: int, id_cols: tuple[str, ...], first_row: int = 0) -> str:
    parts = [f"row {row + first_row}"]
    for c in id_cols:
        if c in table.column_names:
            parts.append(f"{c} {table.column(c)[row].as_py()!r}")
    return ", ".join(parts)


def embedding_matrix(
    table: Any, column: str, *, what: str, id_cols: tuple[str, ...] = (), first_row: int = 0
) -> NDArray[np.floating]:
    """The ``(n, d)`` embeddings of ``table[column]``: a view of the Arrow buffer when possible.

    Fixed-size lists of float32/float64 (the recommended type) need no copy
    when the column is one chunk; variable-size lists are accepted when every
    row has the same length (and copied).  Nulls are an error naming the row (its number in the
    file: the table's first row is ``first_row``).
    """
    pa = pyarrow()
    col = table.column(column)
    n = table.num_rows
    if col.null_count:
        row = int(np.flatnonzero(np.asarray(col.is_null()))[0])
        raise ValueError(
            f"{what}: {column} is null at {_describe_row(table, row, id_cols, first_row)}; every row needs one."
        )
    arr = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    t = arr.type
    if pa.types.is_fixed_size_list(t):
        d = t.list_size
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        lengths = np.asarray(arr.value_lengths())
        if n and np.any(lengths != lengths[0]):
            row = int(np.flatnonzero(lengths != lengths[0])[0])
            raise ValueError(
                f"{what}: {column} has {lengths[row]} values at {_describe_row(table, row, id_cols, first_row)} "
                f"but {lengths[0]} at row {first_row}; every embedding needs the same width."
            )
        d = int(lengths[0]) if n else 0
    else:
        raise TypeError(
            f"{what}: {column} must be a list of floats (fixed_size_list<float32>[d] is best); got {t}."
        )
    vt = t.value_type
    if not (pa.types.is_float32(vt) or pa.types.is_float64(vt) or pa.types.is_float16(vt)):
        raise TypeError(f"{what}: {column} must hold float32 or float64 values; got {vt}.")
    flat = arr.flatten()  # respects slicing; zero-copy for fixed-size lists
    if flat.null_count:
        raise ValueError(
            f"{what}: {column} has null values inside an embedding; replace them or drop the row."
        )
    values = flat.to_numpy(zero_copy_only=False)
    if values.dtype == np.float16:
        values = values.astype(np.float32)
    if d == 0:
        return values.reshape(n, 0)
    return values.reshape(n, d)


def token_counts(
    table: Any, column: str, *, what: str, id_cols: tuple[str, ...] = (), first_row: int = 0
) -> NDArray[np.int64]:
    """``table[column]`` as int64 token counts; nulls, negatives and huge values name the row (its
    number in the file: the table's first row is ``first_row``)."""
    pa = pyarrow()
    col = table.column(column)
    if not (pa.types.is_integer(col.type)):
        raise TypeError(f"{what}: {column} must hold integer token counts; got {col.type}.")
    if col.null_count:
        row = int(np.flatnonzero(np.asarray(col.is_null()))[0])
        raise ValueError(
            f"{what}: {column} is null at {_describe_row(table, row, id_cols, first_row)}; count its tokens."
        )
    c = col.to_numpy()
    if c.size:
        bad = (c < 0) | (c > MAX_COST)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"{what}: {column} = {int(c[row])} at {_describe_row(table, row, id_cols, first_row)}; token "
                f"counts must be in [0, {MAX_COST}]."
            )
    return np.ascontiguousarray(c, dtype=np.int64)
