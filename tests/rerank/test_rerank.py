"""Batch reranking through Arrow and Parquet: exactly mmr_select on every set, streamed or not."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from retrieved_sets import emb as _emb  # noqa: E402
from retrieved_sets import make  # noqa: E402

from scwo_np import mmr_select  # noqa: E402
from scwo_np.rerank import rerank_parquet, rerank_table  # noqa: E402


def expected(t, E, Q, budget, **kw):
    """Per set, in order of first appearance: mmr_select's picks as (row, rank, gain)."""
    qids = np.array(t.column("query_id").to_pylist())
    costs = t.column("tokens").to_numpy()
    out = []
    for q in dict.fromkeys(qids.tolist()):
        rows = np.flatnonzero(qids == q)
        p, g = mmr_select(E[rows], Q[int(q[1:])], costs[rows], budget, return_gains=True, **kw)
        out += [(int(rows[i]), r, float(gi)) for r, (i, gi) in enumerate(zip(p, g, strict=True))]
    return out


def got(out, t):
    row_of = {c: i for i, c in enumerate(t.column("text").to_pylist())}
    return [
        (row_of[x], r, g)
        for x, r, g in zip(out.column("text").to_pylist(), out.column("rank").to_pylist(),
                           out.column("gain").to_pylist(), strict=True)
    ]  # fmt: skip


sizes = st.lists(st.integers(0, 12) | st.integers(10, 40), min_size=1, max_size=6)


@settings(max_examples=40, deadline=None)
@given(sizes=sizes, seed=st.integers(0, 10**6), budget=st.integers(0, 30), lam=st.sampled_from([0.0, 0.5, 0.7, 1.0, "auto"]),
       ints=st.booleans(), shuffle=st.booleans(), cost_aware=st.booleans())  # fmt: skip
def test_table_equals_mmr_select_on_every_set(sizes, seed, budget, lam, ints, shuffle, cost_aware):
    t, qt, E, Q = make(sizes, seed=seed, ints=ints)
    if shuffle and t.num_rows:  # sets interleaved: still grouped by query id, candidates in order
        perm = np.random.default_rng(seed).permutation(t.num_rows)
        t, E = t.take(pa.array(perm)), E[perm]
    out = rerank_table(t, qt, budget, lam=lam, cost_aware=cost_aware)
    assert got(out, t) == expected(t, E, Q, budget, lam=lam, cost_aware=cost_aware)
    assert out.column_names == t.column_names + ["rank", "gain"]


@settings(max_examples=25, deadline=None)
@given(sizes=sizes, seed=st.integers(0, 10**6), batch=st.integers(1, 20), group=st.integers(1, 20))
def test_parquet_stream_equals_the_table_whatever_the_batches(tmp_path_factory, sizes, seed, batch, group):
    t, qt, E, Q = make(sizes, seed=seed)
    d = tmp_path_factory.mktemp("pq")
    pq.write_table(t, d / "c.parquet", row_group_size=group)
    s = rerank_parquet(d / "c.parquet", d / "o.parquet", 15, queries=qt, batch_rows=batch)
    out = pq.read_table(d / "o.parquet")
    assert out.equals(rerank_table(t, qt, 15))
    assert (
        s["sets"] == sum(1 for n in sizes if n)
        and s["candidates"] == t.num_rows
        and s["kept"] == out.num_rows
    )


def test_large_ragged_sets_float64_and_duplicate_chunk_ids(tmp_path):
    t, qt, E, Q = make([1, 1000, 0, 37, 250], d=16, dtype=np.float64, dup_ids=True)
    out = rerank_table(t, qt, 40)
    assert got(out, t) == expected(t, E, Q, 40)
    pq.write_table(t, tmp_path / "c.parquet", row_group_size=300)
    rerank_parquet(tmp_path / "c.parquet", tmp_path / "o.parquet", 40, queries=tmp_path / "q.parquet"
                   if pq.write_table(qt, tmp_path / "q.parquet") is None else None, batch_rows=128)  # fmt: skip
    assert pq.read_table(tmp_path / "o.parquet").equals(out)


def test_keep_all_and_query_embedding_column():
    t, qt, E, Q = make([4, 6], seed=3)
    ka = rerank_table(t, qt, 10, keep_all=True)
    sel = ka.column("selected").to_pylist()
    picked = [r for r, _, _ in expected(t, E, Q, 10)]
    assert [i for i, s in enumerate(sel) if s] == sorted(picked)
    assert ka.column("rank").null_count == t.num_rows - len(picked)
    qe = _emb(Q[[int(q[1:]) for q in t.column("query_id").to_pylist()]])
    inline = rerank_table(t.append_column("query_embedding", qe), None, 10)
    assert got(inline, t) == expected(t, E, Q, 10)


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda t, q: (t.drop_columns(["tokens"]), q), "no column 'tokens'"),
        (lambda t, q: (t, q.slice(1)), "query_id 'q0' has candidates but no row in the queries table"),
        (lambda t, q: (t, q.set_column(1, "embedding", _emb(np.ones((q.num_rows, 3))))), "width 3"),
        (lambda t, q: (t.set_column(3, "tokens", pa.array([-1] + [1] * (t.num_rows - 1))), q),
         r"tokens = -1 at row 0, query_id 'q0', chunk_id 'c0_0'"),
        (lambda t, q: (t.set_column(2, "embedding", _emb(np.r_[np.full((1, 6), np.nan), np.ones((t.num_rows - 1, 6))])), q),
         r"query_id 'q0', chunk_id 'c0_0' \(row 0\): its embedding is zero, NaN or inf"),
        (lambda t, q: (t.set_column(2, "embedding", pa.array([[1.0, 2.0]] * t.num_rows)), q), "candidates' embeddings have 2"),
    ],
)  # fmt: skip
def test_bad_input_names_the_row_or_query(change, match):
    t, qt, _, _ = make([3, 2])
    t, qt = change(t, qt)
    with pytest.raises((ValueError, TypeError), match=match):
        rerank_table(t, qt, 10)


def test_unclustered_parquet_is_an_error_and_leaves_no_output(tmp_path):
    t, qt, _, _ = make([3, 3, 3])
    order = [0, 1, 3, 4, 2, 5, 6, 7, 8]  # q0's last row comes after q1's first
    pq.write_table(t.take(pa.array(order)), tmp_path / "c.parquet")
    with pytest.raises(ValueError, match="not clustered by query_id"):
        rerank_parquet(tmp_path / "c.parquet", tmp_path / "o.parquet", 10, queries=qt, batch_rows=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.parquet"]


def test_an_output_folder_that_is_not_there_is_named_as_given(tmp_path):
    """It was reported under the temporary file's name ('.o.parquet.pnvk6lf6.tmp')."""
    t, qt, _, _ = make([3, 3])
    pq.write_table(t, tmp_path / "c.parquet")
    for out in ("nodir/o.parquet", "nodir/parts/"):
        with pytest.raises(FileNotFoundError, match=r"no folder .*nodir.* create it first") as err:
            rerank_parquet(tmp_path / "c.parquet", tmp_path / out, 10, queries=qt)
        assert ".tmp" not in str(err.value)


def test_null_query_ids_name_the_row_on_both_paths(tmp_path):
    t, qt, _, _ = make([2, 2])
    t = t.set_column(0, "query_id", pa.array(["q0", "q0", None, "q1"], pa.string()))
    with pytest.raises(ValueError, match="query_id is null at row 2"):
        rerank_table(t, qt, 10)
    pq.write_table(t, tmp_path / "c.parquet")
    with pytest.raises(ValueError, match="query_id is null at row 2"):
        rerank_parquet(tmp_path / "c.parquet", tmp_path / "o.parquet", 10, queries=qt)
    assert not (tmp_path / "o.parquet").exists()


def test_dictionary_typed_query_ids_keep_the_order_of_appearance(tmp_path):
    t, qt, _, _ = make([3, 2, 4], seed=5)
    plain = rerank_table(t, qt, 12)
    ids = pa.DictionaryArray.from_arrays(
        pa.array([2, 2, 2, 0, 0, 1, 1, 1, 1], pa.int32()), ["q1", "q2", "q0"]
    )
    dict_t = t.set_column(0, "query_id", ids)  # its dictionary lists the ids in another order
    out = rerank_table(dict_t, qt, 12)
    assert out.column("text").to_pylist() == plain.column("text").to_pylist()
    pq.write_table(dict_t, tmp_path / "c.parquet")
    rerank_parquet(tmp_path / "c.parquet", tmp_path / "o.parquet", 12, queries=qt, batch_rows=4)
    assert (
        pq.read_table(tmp_path / "o.parquet").column("text").to_pylist() == plain.column("text").to_pylist()
    )


def test_the_summary_counts_the_sets_lam_auto_called_broad(tmp_path):
    from scwo_np.select import AUTO_BROAD, auto_lam

    t, qt, E, Q = make([40, 40, 12, 0, 30], d=64, seed=5)
    qids = t.column("query_id").to_pylist()
    rows = [i for i, q in enumerate(qids) if q == "q0"]
    E[rows[:4]] = Q[0] + 0.01 * np.arange(1, 5)[:, None]  # set q0: its top tenth stands out -> broad
    t = t.set_column(t.column_names.index("embedding"), "embedding", _emb(E))
    pq.write_table(t, tmp_path / "c.parquet")
    s = rerank_parquet(
        tmp_path / "c.parquet", tmp_path / "o.parquet", 20, queries=qt, lam="auto", batch_rows=50
    )
    want = 0
    for b in range(len(Q)):
        r = [i for i, q in enumerate(qids) if q == f"q{b}"]
        if r:
            X = E[r].astype(float)
            rel = X @ Q[b] / (np.linalg.norm(X, axis=1) * np.linalg.norm(Q[b]))
            want += auto_lam(rel) == AUTO_BROAD
    assert want >= 1 and s["broad_sets"] == want
    assert rerank_parquet(tmp_path / "c.parquet", tmp_path / "p.parquet", 20, queries=qt)["broad_sets"] == 0


_AT_17 = {  # a bad value at row 17 of 30 (query q5, its 3rd candidate)
    "negative tokens": (lambda t: t.set_column(3, "tokens", pa.array([1] * 17 + [-1] + [1] * 12)),
                        r"tokens = -1 at row 17, query_id 'q5', chunk_id 'c5_2'"),
    "null tokens": (lambda t: t.set_column(3, "tokens", pa.array([1] * 17 + [None] + [1] * 12, pa.int64())),
                    r"tokens is null at row 17, query_id 'q5'"),
    "zero embedding": (lambda t: t.set_column(2, "embedding", _emb(np.r_[np.ones((17, 6)), np.zeros((1, 6)), np.ones((12, 6))])),
                       r"query_id 'q5', chunk_id 'c5_2' \(row 17\): its embedding is zero"),
    "null query id": (lambda t: t.set_column(0, "query_id", pa.array(t.column("query_id").to_pylist()[:17] + [None] + t.column("query_id").to_pylist()[18:])),
                      r"query_id is null at row 17;"),
}  # fmt: skip


@pytest.mark.parametrize("what", list(_AT_17))
def test_a_bad_row_is_named_by_its_number_in_the_file_whatever_the_batches(tmp_path, what):
    """The streaming path counted rows from the start of its batch: row 150,001 of a 211k-row file was
    "row 8009", or "row 22" with batch_rows=5000 (a new user's trial)."""
    change, says = _AT_17[what]
    t, qt, _, _ = make([3] * 10)
    t = change(t)
    with pytest.raises(ValueError, match=says):
        rerank_table(t, qt, 10)
    pq.write_table(t, tmp_path / "c.parquet", row_group_size=4)
    for batch_rows in (2, 4, 7, 16, 100):
        with pytest.raises(ValueError, match=says):
            rerank_parquet(
                tmp_path / "c.parquet", tmp_path / "o.parquet", 10, queries=qt, batch_rows=batch_rows
            )


def test_not_clustered_and_a_repeated_query_name_the_query(tmp_path):
    t, qt, _, _ = make([3, 3, 3])
    pq.write_table(t.take(pa.array([0, 1, 3, 4, 2, 5, 6, 7, 8])), tmp_path / "c.parquet")
    with pytest.raises(ValueError, match="not clustered by query_id: the rows of 'q0' appear in two places"):
        rerank_parquet(tmp_path / "c.parquet", tmp_path / "o.parquet", 10, queries=qt)
    with pytest.raises(ValueError, match=r"queries: query_id repeats an id \('q1'\)"):
        rerank_table(t, pa.concat_tables([qt, qt.slice(1, 1)]), 10)


def test_scwo_rerank_refuses_its_input_as_output_and_a_full_folder(tmp_path):
    """-o FILE naming the input replaced 211,203 rows by their 31,383 picks, status 0; a folder that
    is not empty was status 1 (a usage error, found before any work, is 2)."""
    from scwo_np.cli import main

    t, qt, _, _ = make([3, 3])
    src, queries = tmp_path / "c.parquet", tmp_path / "q.parquet"
    pq.write_table(t, src)
    pq.write_table(qt, queries)
    before = src.read_bytes()
    assert main(["rerank", str(src), "--queries", str(queries), "--budget", "10", "-o", str(src)]) == 2
    assert src.read_bytes() == before
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    assert (
        main(["rerank", str(src), "--queries", str(queries), "--budget", "10", "-o", f"{tmp_path}/full/"])
        == 2
    )


@pytest.mark.parametrize("output", ["o.parquet", "parts/"])
def test_scwo_rerank_stopped_by_sigterm_leaves_nothing_behind(tmp_path, output):
    """Killed by SIGTERM (timeout, a batch scheduler), it left its temporary files (73 MB, hidden by a
    leading dot) and exited -15; now it cleans up as on Ctrl-C, status 143 (128 + 15)."""
    rng = np.random.default_rng(0)
    n, d = 400_000, 8  # about 6 s at --batch-rows 200: the signal comes while it writes
    t = pa.table({
        "query_id": pa.array(np.repeat(np.arange(n // 40), 40)),
        "embedding": pa.FixedSizeListArray.from_arrays(pa.array(rng.standard_normal(n * d).astype(np.float32)), d),
        "tokens": pa.array(rng.integers(10, 200, n)),
    })  # fmt: skip
    q = pa.table({
        "query_id": pa.array(np.arange(n // 40)),
        "embedding": pa.FixedSizeListArray.from_arrays(pa.array(rng.standard_normal(n // 40 * d).astype(np.float32)), d),
    })  # fmt: skip
    pq.write_table(t, tmp_path / "c.parquet")
    pq.write_table(q, tmp_path / "q.parquet")
    out = tmp_path / "out"
    out.mkdir()
    cmd = [sys.executable, "-m", "scwo_np.cli", "rerank", str(tmp_path / "c.parquet"), "--queries",
           str(tmp_path / "q.parquet"), "--budget", "300", "-o", str(out / output), "-q", "--batch-rows", "200"]  # fmt: skip
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not any(out.rglob("*")) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)  # until it has begun to write
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert list(out.rglob("*")) == [] and "Traceback" not in err


def test_default_batches_count_every_column_of_a_row(tmp_path):
    """Batches were sized by the embeddings alone: beside a 32 KB page of text per row, a run took
    1.5 GB (0.56 GB with --batch-rows 1000); now the default batch holds 16 MB of whole rows."""
    t, qt, _, _ = make([40] * 100)  # 4,000 rows
    page = "Permission is hereby granted, free of charge, to any person obtaining a copy. " * 256  # 20 KB
    pages = pa.array([f"{i}: {page}" for i in range(t.num_rows)])  # (distinct: no dictionary)
    pq.write_table(t.append_column("page", pages), tmp_path / "c.parquet")
    calls = []
    rerank_parquet(
        tmp_path / "c.parquet", tmp_path / "o.parquet", 100, queries=qt, progress=lambda s, r: calls.append(r)
    )
    assert calls[-1] == 4000 and len(calls) >= 3  # 1,024 rows a batch (one batch of all 4,000 before)
    assert pq.read_table(tmp_path / "o.parquet").equals(
        rerank_table(pq.read_table(tmp_path / "c.parquet"), qt, 100)
    )
