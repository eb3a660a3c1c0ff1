"""Retrieved sets built from the bundled sample, as the tables :func:`~scwo_np.rerank.rerank_table` takes."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dot
from ..datasets import load_sample
from ..validation import check_int
from ._arrow import pyarrow

__all__ = ["sample_sets"]


def sample_sets(top_k: int = 50, *, query_embedding_column: bool = False) -> tuple[Any, Any]:
    """``(candidates, queries)``: each bundled query's ``top_k`` most relevant bundled chunks.

    ``candidates`` is long format, clustered by ``query_id`` (ranked by
    cosine within each set, as a retriever returns them): ``query_id``,
    ``chunk_id``, ``embedding`` (fixed-size list of float32), ``tokens``,
    ``source``, ``text``, ``score``; with ``query_embedding_column`` also
    each row's query embedding (then no queries table is needed).
    ``queries`` has ``query_id``, ``embedding`` and ``text``.

    Parameters
    ----------
    top_k : int
        Candidates per query.
    query_embedding_column : bool
        Add each row's query embedding as a ``query_embedding`` column.

    Returns
    -------
    candidates : pyarrow.Table
        One row per candidate, clustered by ``query_id``.
    queries : pyarrow.Table
        One row per query.

    Examples
    --------
    >>> cands, queries = sample_sets(5)
    >>> cands.num_rows, queries.num_rows, cands.column_names[:4]
    (160, 32, ['query_id', 'chunk_id', 'embedding', 'tokens'])
    """
    pa = pyarrow()
    k = check_int(top_k, name="top_k", low=1)
    s = load_sample()
    E = s.embeddings
    Q = s.query_embeddings
    S = np.stack([_dot.query_cosines(E, q)[0] for q in Q])  # the cosine selection ranks by
    k = min(k, E.shape[0])
    top = np.argsort(-S, axis=1, kind="stable")[:, :k]
    rows = top.ravel()
    qidx = np.repeat(np.arange(Q.shape[0]), k)
    d = E.shape[1]
    cols = {
        "query_id": pa.array([f"q{i:02d}" for i in qidx]),
        "chunk_id": pa.array(rows.astype(np.int64)),
        "embedding": pa.FixedSizeListArray.from_arrays(pa.array(np.ascontiguousarray(E[rows]).ravel()), d),
        "tokens": pa.array(s.costs[rows]),
        "source": pa.array([s.sources[i] for i in rows]),
        "text": pa.array([s.texts[i] for i in rows]),
        "score": pa.array(S[qidx, rows]),
    }
    if query_embedding_column:
        cols["query_embedding"] = pa.FixedSizeListArray.from_arrays(
            pa.array(np.ascontiguousarray(Q[qidx]).ravel()), d
        )
    queries = pa.table({
        "query_id": pa.array([f"q{i:02d}" for i in range(Q.shape[0])]),
        "embedding": pa.FixedSizeListArray.from_arrays(pa.array(np.ascontiguousarray(Q).ravel()), d),
        "text": pa.array(s.queries),
    })  # fmt: skip
    return pa.table(cols), queries
