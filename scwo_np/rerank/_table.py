"""Rerank an Arrow table of retrieved sets: every query's candidates cut to a token budget by MMR.

A *set* is every row of the candidates table with the same ``query_id``;
its candidates keep their order of appearance, and the picks are exactly
``mmr_select(set_embeddings, query_embedding, set_tokens, budget, ...)``
(the sets are solved together by :func:`~scwo_np.select.select_batch`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..select import select_batch
from ..validation import check_budget
from ._arrow import embedding_matrix, pyarrow, query_codes, require_columns, token_counts

__all__ = ["rerank_table"]


def _sets(qids: Any, column: str = "query_id") -> tuple[NDArray[np.int64], NDArray[np.int64], Any]:
    """``(order, offsets, ids)``: rows grouped by query id, sets in order of first appearance.

    ``order`` is None when the rows are already clustered (each id's rows
    contiguous), the usual case, so nothing is reordered.
    """
    codes, ids = query_codes(qids, column)
    counts = np.bincount(codes, minlength=len(ids))
    offsets = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    # dictionary_encode numbers ids by first appearance, so clustered input has non-decreasing codes
    clustered = codes.size == 0 or bool(np.all(codes[1:] >= codes[:-1]))
    order = None if clustered else np.argsort(codes, kind="stable")
    return order, offsets, ids


def _query_matrix(queries: Any, ids: Any, embedding_col: str, query_col: str, d: int) -> NDArray[np.floating]:
    """The query embedding of every set, from the queries table (one row per query id)."""
    pa = pyarrow()
    import pyarrow.compute as pc

    require_columns(queries, [query_col, embedding_col], what="queries")
    qids = queries.column(query_col)
    if qids.type != ids.type:
        try:
            qids = qids.cast(ids.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise TypeError(
                f"queries: {query_col} is {queries.column(query_col).type} but the candidates' is {ids.type}."
            ) from None
    if pc.count_distinct(qids).as_py() != len(qids):
        counts = pc.value_counts(qids)
        again = counts.field("values")[int(np.flatnonzero(np.asarray(counts.field("counts")) > 1)[0])].as_py()
        raise ValueError(f"queries: {query_col} repeats an id ({again!r}); give each query one row.")
    pos = np.asarray(pc.index_in(ids, value_set=qids.combine_chunks()).fill_null(-1), dtype=np.int64)
    if np.any(pos < 0):
        missing = ids[int(np.flatnonzero(pos < 0)[0])].as_py()
        raise ValueError(
            f"query_id {missing!r} has candidates but no row in the queries table; add its embedding."
        )
    Qall = embedding_matrix(queries, embedding_col, what="queries", id_cols=(query_col,))
    if Qall.shape[1] != d:
        raise ValueError(
            f"queries: {embedding_col} has width {Qall.shape[1]} but the candidates' embeddings have {d}; "
            "embed both with the same model."
        )
    return Qall[pos]


def rerank_table(
    table: Any,
    queries: Any | None,
    budget: int,
    *,
    lam: float | str = 0.7,
    cost_aware: bool = False,
    cost_exponent: float = 0.25,
    keep_all: bool = False,
    query_col: str = "query_id",
    embedding_col: str = "embedding",
    tokens_col: str = "tokens",
    query_embedding_col: str = "query_embedding",
) -> Any:
    """Cut every retrieved set in ``table`` to ``budget`` tokens with budgeted MMR.

    Parameters
    ----------
    table : pyarrow.Table
        Candidates, one row per candidate: ``query_id``, ``embedding``
        (fixed-size list of float32 or float64), ``tokens`` (integers), and
        any other columns (``chunk_id``, ``text``...), passed through as they are.
    queries : pyarrow.Table or None
        One row per query: ``query_id`` and ``embedding``.  ``None`` when the
        candidates carry a ``query_embedding`` column (the same on every row
        of a set; the set's first row is used).
    budget : int
        Token budget of every set.
    lam, cost_aware, cost_exponent
        As in :func:`~scwo_np.mmr_select`.
    keep_all : bool, default False
        Return every row with a boolean ``selected`` column (``rank`` and
        ``gain`` null where not selected) instead of the selected rows only.
    query_col, embedding_col, tokens_col, query_embedding_col : str
        The names of the columns that hold the set's id, the candidate's embedding, its token
        count and (optionally) the query's embedding (defaults ``query_id``, ``embedding``,
        ``tokens``, ``query_embedding``).

    Returns
    -------
    pyarrow.Table
        The selected rows with all their columns plus ``rank`` (pick order
        within the set, from 0) and ``gain`` (the MMR score at the pick);
        sets in order of their first row, picks in pick order.  With
        ``keep_all`` the rows stay in input order.

    Examples
    --------
    >>> import pyarrow as pa
    >>> emb = pa.FixedSizeListArray.from_arrays(pa.array([1, 0, 0.9, 0.1, 0, 1], pa.float32()), 2)
    >>> t = pa.table({"query_id": ["q", "q", "q"], "chunk_id": ["a", "b", "c"], "embedding": emb,
    ...               "tokens": [10, 10, 10]})
    >>> q = pa.table({"query_id": ["q"],
    ...               "embedding": pa.FixedSizeListArray.from_arrays(pa.array([1, 0.5], pa.float32()), 2)})
    >>> rerank_table(t, q, budget=20, lam=0.5).select(["chunk_id", "rank"]).to_pydict()
    {'chunk_id': ['b', 'c'], 'rank': [0, 1]}
    """
    pa = pyarrow()
    if not isinstance(table, pa.Table):
        raise TypeError(
            f"table must be a pyarrow.Table; got {type(table).__name__} (pa.Table.from_pandas converts)."
        )
    budget = check_budget(budget)
    require_columns(table, [query_col, embedding_col, tokens_col], what="candidates")
    check_output_columns(table.column_names)
    if table.num_rows == 0:  # nothing to select; the output still has every column
        out = table.append_column("selected", pa.array([], pa.bool_())) if keep_all else table
        return out.append_column("rank", pa.array([], pa.int64())).append_column(
            "gain", pa.array([], pa.float64())
        )
    opts = dict(
        lam=lam, cost_aware=cost_aware, cost_exponent=cost_exponent, keep_all=keep_all, query_col=query_col,
        embedding_col=embedding_col, tokens_col=tokens_col, query_embedding_col=query_embedding_col,
    )  # fmt: skip
    return _rerank(table, queries, budget, _sets(table.column(query_col), query_col), **opts)


def _rerank(
    table, queries, budget, sets, *, lam, cost_aware, cost_exponent, keep_all, query_col, embedding_col, tokens_col,
    query_embedding_col, lams=None, first_row=0,
):  # fmt: skip
    """:func:`rerank_table` after its checks, given the sets ``(order, offsets, ids)``; errors name
    rows by their number in the file, the table's first being ``first_row``.

    The streaming path calls it with the sets it has already found, so the
    query ids are encoded once per batch, not twice; a list ``lams`` receives
    the sets' lam (:attr:`~scwo_np.select.BatchSelection.lams`).
    """
    pa = pyarrow()
    ids_cols = (query_col, "chunk_id")
    E = embedding_matrix(table, embedding_col, what="candidates", id_cols=ids_cols, first_row=first_row)
    costs = token_counts(table, tokens_col, what="candidates", id_cols=ids_cols, first_row=first_row)
    order, offsets, ids = sets
    if order is not None:  # interleaved sets: gather each set's rows together (one copy)
        E, costs = np.ascontiguousarray(E[order]), costs[order]
    rows = np.arange(table.num_rows, dtype=np.int64) if order is None else order
    if queries is not None:
        Q = _query_matrix(queries, ids, embedding_col, query_col, E.shape[1])
    else:
        if query_embedding_col not in table.column_names:
            raise ValueError(
                f"candidates have no {query_embedding_col!r} column and no queries table was given; pass the "
                "queries (queries=, or scwo rerank --queries Q.parquet) or add a query_embedding column."
            )
        QE = embedding_matrix(
            table, query_embedding_col, what="candidates", id_cols=ids_cols, first_row=first_row
        )
        Q = QE[rows[offsets[:-1]]] if len(ids) else np.zeros((0, E.shape[1]), E.dtype)
    try:
        res = select_batch(
            E, Q, costs, budget, offsets=offsets, lam=lam, cost_aware=cost_aware, cost_exponent=cost_exponent
        )
    except ValueError as exc:
        raise ValueError(_locate(exc, E, Q, rows, offsets, ids, table, first_row)) from None
    if lams is not None:
        lams.append(res.lams)
    picked = rows[offsets[:-1].repeat(np.diff(res.offsets)) + res.indices]
    rank = np.arange(picked.size, dtype=np.int64) - np.repeat(res.offsets[:-1], np.diff(res.offsets))
    if not keep_all:
        out = table.take(pa.array(picked))
        return out.append_column("rank", pa.array(rank)).append_column("gain", pa.array(res.gains))
    n = table.num_rows
    sel = np.zeros(n, dtype=bool)
    sel[picked] = True
    full_rank = np.zeros(n, dtype=np.int64)
    full_gain = np.zeros(n)
    full_rank[picked] = rank
    full_gain[picked] = res.gains
    out = table.append_column("selected", pa.array(sel))
    out = out.append_column("rank", pa.array(full_rank, mask=~sel))
    return out.append_column("gain", pa.array(full_gain, mask=~sel))


def check_output_columns(names: list[str]) -> None:
    """The output adds ``rank``, ``gain`` (and ``selected``): the input must not have them already."""
    for c in ("rank", "gain", "selected"):
        if c in names:
            raise ValueError(f"candidates already have a {c!r} column; rename it (the output adds its own).")


def _locate(exc: ValueError, E, Q, rows, offsets, ids, table, first_row: int = 0) -> str:
    """The selection's error, with the query id and row it is about (found only after a failure)."""
    msg = str(exc)
    bad_q = ~np.isfinite(Q).all(axis=1) | ~np.any(Q, axis=1)
    if bad_q.any():
        b = int(np.flatnonzero(bad_q)[0])
        return f"query_id {ids[b].as_py()!r}: its query embedding is zero, NaN or inf ({msg})"
    bad = ~np.isfinite(E).all(axis=1) | ~np.any(E, axis=1)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        b = int(np.searchsorted(offsets, k, side="right") - 1)
        row = int(rows[k])
        chunk = table.column("chunk_id")[row].as_py() if "chunk_id" in table.column_names else None
        what = f"chunk_id {chunk!r} " if chunk is not None else ""
        return (
            f"query_id {ids[b].as_py()!r}, {what}(row {row + first_row}): its embedding is zero, NaN or inf; "
            "drop or re-embed that candidate."
        )
    return msg
