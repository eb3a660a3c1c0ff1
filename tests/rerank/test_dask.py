"""Batch reranking on a real Dask LocalCluster: identical to the in-process path, no shuffle."""

from __future__ import annotations

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

from scwo_np.rerank import rerank_table, sample_sets  # noqa: E402
from scwo_np.rerank.on_dask import rerank_dask  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
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
