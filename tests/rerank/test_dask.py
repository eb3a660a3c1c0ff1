"""Batch reranking on real Dask clusters: identical to the in-process path, no shuffle, no lost sets."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

from retrieved_sets import emb, make  # noqa: E402

from scwo_np.cli._main import main  # noqa: E402
from scwo_np.rerank import rerank_parquet, rerank_table, sample_sets  # noqa: E402
from scwo_np.rerank._on_dask import plan_spans, rerank_dask, rerank_parquet_on_cluster  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


@pytest.fixture(scope="module")
def sets():
    return sample_sets(20)


def _graph_names(ddf) -> set[str]:
    names = set()
    for k in dict(ddf.__dask_graph__()):
        name = k[0] if isinstance(k, tuple) else k
        names.add(str(name))
    return names


def test_cluster_result_equals_in_process_bit_for_bit_and_has_no_shuffle(tmp_path, client, sets):
    cands, queries = sets
    pq.write_table(cands, tmp_path / "c.parquet", row_group_size=100)  # row groups end on set boundaries
    ddf = dd.read_parquet(tmp_path / "c.parquet", split_row_groups=True)
    assert ddf.npartitions > 1
    out = rerank_dask(ddf, queries, 500)
    assert not any("shuffle" in n or "rearrange" in n or "repartition" in n for n in _graph_names(out))
    got = out.compute()
    want = rerank_table(cands, queries, 500).to_pandas()
    assert list(got.columns) == list(want.columns)
    assert got["chunk_id"].tolist() == want["chunk_id"].tolist()
    assert got["rank"].tolist() == want["rank"].tolist()
    np.testing.assert_array_equal(got["gain"].to_numpy(), want["gain"].to_numpy())  # bit for bit
    assert client.run(lambda: 1)  # both workers answered


def test_a_set_straddling_two_partitions_is_refused(tmp_path, sets):
    cands, queries = sets
    pq.write_table(cands, tmp_path / "c.parquet", row_group_size=30)  # sets of 20: some split
    ddf = dd.read_parquet(tmp_path / "c.parquet", split_row_groups=True)
    with pytest.raises(ValueError, match="has rows in partitions .* a set must not straddle"):
        rerank_dask(ddf, queries, 500)


def test_embeddings_turned_into_strings_by_dask_are_explained(sets):
    cands, queries = sets
    ddf = dd.from_pandas(cands.to_pandas(), npartitions=2)  # convert-string is on by default
    with pytest.raises(TypeError, match="convert-string"):
        rerank_dask(ddf, queries, 500)


RAGGED = [1, 40, 0, 3, 17, 1, 90, 5, 0, 12, 2, 33]  # a set of 90 spans many row groups below


@pytest.mark.parametrize(
    "group, per_task, batch",
    [(1, 1, 1), (7, 20, 5), (37, 100, 64), (1000, 10**6, 1000), (16, 1, 3)],
)
def test_parquet_on_the_cluster_writes_what_the_process_writes(tmp_path, client, group, per_task, batch):
    t, qt, _, _ = make(RAGGED, seed=group)
    pq.write_table(t, tmp_path / "c.parquet", row_group_size=group)
    spans = plan_spans(str(tmp_path / "c.parquet"), "query_id", per_task)
    assert spans[0][0] == 0 and spans[-1][1] == t.num_rows  # the spans tile the file
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:], strict=False))
    here = rerank_parquet(
        tmp_path / "c.parquet", tmp_path / "here.parquet", 60, queries=qt, keep_all=group == 7
    )
    there = rerank_parquet_on_cluster(
        client, tmp_path / "c.parquet", tmp_path / "there.parquet", 60, queries=qt, keep_all=group == 7,
        batch_rows=batch, rows_per_task=per_task,
    )  # fmt: skip
    assert there == here
    assert pq.read_table(tmp_path / "there.parquet").equals(pq.read_table(tmp_path / "here.parquet"))


def test_cluster_path_refuses_bad_files_and_leaves_no_output(tmp_path, client):
    t, qt, _, _ = make([3, 3, 3])
    pq.write_table(t.take(pa.array([0, 1, 3, 4, 2, 5, 6, 7, 8])), tmp_path / "c.parquet", row_group_size=2)
    with pytest.raises(ValueError, match="not clustered by query_id"):
        rerank_parquet(tmp_path / "c.parquet", tmp_path / "o.parquet", 10, queries=qt, client=client)
    E = np.ones((t.num_rows, 6), np.float32)
    E[7, 2] = np.nan
    pq.write_table(t.set_column(2, "embedding", emb(E)), tmp_path / "n.parquet", row_group_size=2)
    with pytest.raises(
        ValueError,
        match=r"query_id 'q2', chunk_id 'c2_1' \(row 7\): its embedding is zero, NaN",  # (its task's 1)
    ):
        rerank_parquet_on_cluster(
            client, tmp_path / "n.parquet", tmp_path / "o.parquet", 10, queries=qt, rows_per_task=2
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.parquet", "n.parquet"]


def _start(args, env):
    return subprocess.Popen(
        [sys.executable, "-m", *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )


@pytest.fixture
def bare_cluster(tmp_path):
    """A scheduler and two worker processes without nannies (a killed worker stays dead), as in production."""
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    sfile = str(tmp_path / "scheduler.json")
    procs = [_start(["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                     "--scheduler-file", sfile], env)]  # fmt: skip
    try:
        addr, deadline = None, time.monotonic() + 60
        while addr is None and time.monotonic() < deadline:  # the scheduler writes its address when up
            try:
                with open(sfile) as fh:
                    addr = json.load(fh)["address"]
            except (OSError, ValueError, KeyError):
                time.sleep(0.1)
        for _ in range(2):
            procs.append(_start(["distributed.cli.dask_worker", "--scheduler-file", sfile, "--nthreads", "1",
                                 "--no-nanny", "--no-dashboard"], env))  # fmt: skip
        with distributed.Client(addr, timeout=60) as c:
            c.wait_for_workers(2, timeout=60)
            yield addr, c, procs
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


@pytest.mark.parametrize("into", ["one file", "a directory of parts"])
def test_a_worker_killed_mid_job_loses_and_duplicates_no_set(tmp_path, bare_cluster, into):
    addr, c, procs = bare_cluster
    t, qt, _, _ = make([int(k) for k in np.random.default_rng(1).integers(0, 60, 150)], d=32, seed=1)
    pq.write_table(t, tmp_path / "c.parquet", row_group_size=50)
    pq.write_table(qt, tmp_path / "q.parquet")
    here = rerank_parquet(tmp_path / "c.parquet", tmp_path / "here.parquet", 200, queries=qt)
    want = pq.read_table(tmp_path / "here.parquet")

    # the command line against a running scheduler writes the same rows
    argv = ["rerank", str(tmp_path / "c.parquet"), "--queries", str(tmp_path / "q.parquet"), "--budget", "200",
            "--scheduler", addr, "-q", "-o", str(tmp_path / "cli.parquet")]  # fmt: skip
    assert main(argv) == 0
    assert pq.read_table(tmp_path / "cli.parquet").equals(want)

    pids = c.run(os.getpid)  # worker address -> process id
    killed = []

    def kill_a_busy_worker(sets, rows):
        if killed:
            return
        busy = [w for w, tasks in c.processing().items() if tasks]
        victim = busy[0] if busy else next(iter(pids))
        os.kill(pids[victim], signal.SIGKILL)
        killed.append((victim, sets))

    dst = str(tmp_path / "there.parquet") if into == "one file" else f"{tmp_path}/there/"
    got = rerank_parquet_on_cluster(
        c, tmp_path / "c.parquet", dst, 200, queries=qt, rows_per_task=50, batch_rows=16,
        progress=kill_a_busy_worker,
    )  # fmt: skip
    victim, sets_at_kill = killed[0]
    assert sets_at_kill < here["sets"]  # killed mid-job, with sets still to do
    deadline = time.monotonic() + 30
    while victim in c.scheduler_info()["workers"] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert list(c.scheduler_info()["workers"]) != [] and victim not in c.scheduler_info()["workers"]
    assert sum(p.poll() is not None for p in procs) == 1  # one worker dead; the job finished on the other
    assert got == here
    if into != "one file":
        assert all(n.startswith("part-") for n in os.listdir(dst))  # no half-written try left
    out = pq.read_table(dst)
    assert out.num_rows == want.num_rows and out.equals(want)  # nothing lost, nothing twice


def test_the_workers_option_starts_a_local_cluster(tmp_path, capsys):
    cands, queries = sample_sets(10)
    pq.write_table(cands, tmp_path / "c.parquet", row_group_size=40)
    pq.write_table(queries, tmp_path / "q.parquet")
    argv = ["rerank", str(tmp_path / "c.parquet"), "--queries", str(tmp_path / "q.parquet"), "--budget", "300",
            "--workers", "1", "-o", str(tmp_path / "o.parquet")]  # fmt: skip
    assert main(argv) == 0
    assert capsys.readouterr().err.startswith("scwo rerank: 32 sets, 320 candidates")
    assert pq.read_table(tmp_path / "o.parquet").equals(rerank_table(cands, queries, 300))


@pytest.mark.parametrize("rows_per_task", [1, 10**6])
def test_a_directory_output_holds_the_same_rows_written_by_the_workers(tmp_path, client, rows_per_task):
    t, qt, _, _ = make(RAGGED, seed=4)
    pq.write_table(t, tmp_path / "c.parquet", row_group_size=9)
    want = rerank_table(t, qt, 60)
    there = rerank_parquet_on_cluster(
        client, tmp_path / "c.parquet", f"{tmp_path}/parts/", 60, queries=qt, rows_per_task=rows_per_task
    )
    names = sorted(os.listdir(tmp_path / "parts"))
    assert names[0] == "part-00000.parquet" and all(
        n.startswith("part-") and n.endswith(".parquet") for n in names
    )
    assert (len(names) > 5) == (rows_per_task == 1)
    assert pq.read_table(tmp_path / "parts").equals(want) and there["kept"] == want.num_rows
    rerank_parquet(tmp_path / "c.parquet", f"{tmp_path}/here/", 60, queries=qt)  # in process: one part
    assert os.listdir(tmp_path / "here") == ["part-00000.parquet"]
    assert pq.read_table(tmp_path / "here").equals(want)
    with pytest.raises(FileExistsError, match="not empty"):
        rerank_parquet(tmp_path / "c.parquet", tmp_path / "here", 60, queries=qt)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.parquet", "here", "parts"]  # no temporary left


@pytest.mark.parametrize("into", ["one file", "a directory of parts"])
def test_a_task_the_scheduler_forgets_is_run_again(tmp_path, client, into):
    # What a worker dying between finishing a task and handing over its result looks like
    # to the client (FutureCancelledError: "already forgotten"), made on purpose: cancel
    # tasks of the job while it runs.  Every set must still come out once, in order.
    t, qt, _, _ = make(RAGGED, seed=5)
    pq.write_table(t, tmp_path / "c.parquet", row_group_size=7)
    rerank_parquet(tmp_path / "c.parquet", tmp_path / "here.parquet", 60, queries=qt)
    cancelled = []

    def cancel_some(sets, rows):
        if len(cancelled) < 2:
            keys = [k for k in client.futures if str(k).startswith("_rerank_span")]
            if keys:
                client.cancel([distributed.Future(keys[-1], client)])
                cancelled.append(keys[-1])

    dst = str(tmp_path / "there.parquet") if into == "one file" else f"{tmp_path}/there/"
    rerank_parquet_on_cluster(
        client,
        tmp_path / "c.parquet",
        dst,
        60,
        queries=qt,
        rows_per_task=7,
        batch_rows=7,
        progress=cancel_some,
    )
    assert cancelled
    assert pq.read_table(dst).equals(pq.read_table(tmp_path / "here.parquet"))
