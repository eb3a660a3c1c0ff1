"""Random retrieved sets as Arrow tables, for the rerank tests (candidates, queries and their arrays)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa


def emb(M):
    M = np.asarray(M)
    return pa.FixedSizeListArray.from_arrays(pa.array(M.ravel()), M.shape[1] if M.ndim == 2 else 0)


def make(sizes, d=6, seed=0, dtype=np.float32, dup_ids=False, ints=False):
    """Candidates and queries tables for sets of the given sizes (0 = a query with no candidates)."""
    rng = np.random.default_rng(seed)
    qids, cids, toks, E, Q = [], [], [], [], []
    for qi, n in enumerate(sizes):
        q = rng.integers(-2, 3, d) if ints else rng.standard_normal(d)
        if not np.any(q):
            q[0] = 1
        Q.append(q)
        for j in range(n):
            qids.append(f"q{qi}")
            cids.append("dup" if dup_ids else f"c{qi}_{j}")
            toks.append(int(rng.integers(0, 9)))
            e = rng.integers(-2, 3, d) if ints else rng.standard_normal(d)
            if not np.any(e):
                e[0] = 1
            E.append(e)
    E = np.array(E, dtype=dtype).reshape(len(qids), d)
    Q = np.array(Q, dtype=dtype).reshape(len(sizes), d)
    t = pa.table({"query_id": pa.array(qids, pa.string()), "chunk_id": pa.array(cids, pa.string()), "embedding": emb(E), "tokens": pa.array(toks, pa.int64()),
                  "text": pa.array([f"text {i}" for i in range(len(qids))], pa.string())})  # fmt: skip
    qt = pa.table({"query_id": [f"q{i}" for i in range(len(sizes))], "embedding": emb(Q)})
    return t, qt, E, Q
