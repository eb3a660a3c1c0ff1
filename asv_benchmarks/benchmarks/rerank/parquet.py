"""Benchmarks for scwo_np.rerank._parquet: a Parquet file of retrieved sets reranked, streamed.

The job of issue 14: 10,000 sets x 100 candidates x d = 384 (1M rows, 1.5 GB of
float32; 1,000 sets with ``SCWO_BENCH_PROFILE=fast``), a 2,000-token budget.
Targets: total time <= 2x (reading the same file + ``select_batch`` on the
loaded arrays); peak memory <= 25% of the file's in-memory size.
"""

import os
import shutil
import tempfile

import numpy as np

from ..common import Benchmark, best_time, first_run_extra_peak_bytes
from ..datasets import RERANK_SHAPE, retrieved_sets_parquet

BUDGET = 2000


def scratch():
    """A temporary directory for this benchmark's files, and a JIT warm-up on a small file in it."""
    from scwo_np.rerank import rerank_parquet

    folder = tempfile.mkdtemp(prefix="scwo-bench-")
    src = os.path.join(folder, "warm.parquet")
    q = retrieved_sets_parquet(src, 4, 10, 8)
    rerank_parquet(src, os.path.join(folder, "warm_out.parquet"), BUDGET, queries=q)
    return folder


def loaded_arrays(path, queries):
    """The file's arrays in memory, as ``select_batch`` takes them: ``(E, Q, costs, offsets)``."""
    import pyarrow.parquet as pq

    from scwo_np.rerank._arrow import embedding_matrix

    t = pq.read_table(path)
    E = embedding_matrix(t, "embedding", what="candidates")
    qid = t.column("query_id").to_numpy()
    offsets = np.r_[0, np.flatnonzero(np.diff(qid)) + 1, len(qid)].astype(np.int64)
    return E, embedding_matrix(queries, "embedding", what="queries"), t.column("tokens").to_numpy(), offsets


def floor_seconds(path, queries, repeat=2):
    """The issue's floor: a Parquet read of the file plus ``select_batch`` on the already-loaded arrays."""
    import pyarrow.parquet as pq

    from scwo_np.select import select_batch

    read = best_time(lambda: pq.read_table(path), repeat)
    E, Q, costs, offsets = loaded_arrays(path, queries)
    return read + best_time(lambda: select_batch(E, Q, costs, BUDGET, offsets=offsets), repeat)


def issue_file():
    """Write the issue's file (``RERANK_SHAPE``) here: ``(its absolute path, the queries table)``."""
    q = retrieved_sets_parquet("sets.parquet", *RERANK_SHAPE)
    return os.path.abspath("sets.parquet"), q


class RerankParquet(Benchmark):
    """``rerank_parquet`` on the issue's file, against reading it and ``select_batch``."""

    timeout = 1200
    repeat = (1, 3, 60.0)
    number = 1

    def setup_cache(self):
        sets, k, d = RERANK_SHAPE
        return (*issue_file(), sets * k * d * 4)

    def setup(self, cache):
        self.dir = scratch()
        self.out = os.path.join(self.dir, "out.parquet")

    def teardown(self, cache):
        shutil.rmtree(self.dir, ignore_errors=True)

    def time_rerank_parquet(self, cache):
        from scwo_np.rerank import rerank_parquet

        path, q, _ = cache
        rerank_parquet(path, self.out, BUDGET, queries=q)

    def time_read_table(self, cache):
        import pyarrow.parquet as pq

        pq.read_table(cache[0])

    def track_time_over_read_plus_select_batch(self, cache):
        """Total time over (Parquet read of the same file + ``select_batch``), same run (target <= 2x)."""
        from scwo_np.rerank import rerank_parquet

        path, q, _ = cache
        ours = best_time(lambda: rerank_parquet(path, self.out, BUDGET, queries=q), 2)
        return ours / floor_seconds(path, q)

    track_time_over_read_plus_select_batch.unit = "x (read + select_batch)"

    def track_peak_memory_share_of_file(self, cache):
        """Peak memory ``rerank_parquet`` adds, over the embeddings' in-memory size (target <= 0.25).

        Meant for the regular profile's 1.5 GB: the peak is a few 16 MB
        batches and the writer's buffers (about 0.2 GB) whatever the file,
        so on the fast profile's 0.15 GB it is above 1.
        """
        from scwo_np.rerank import rerank_parquet

        path, q, nbytes = cache
        return first_run_extra_peak_bytes(lambda: rerank_parquet(path, self.out, BUDGET, queries=q)) / nbytes

    track_peak_memory_share_of_file.unit = "x file in memory"

    def track_sets_per_second(self, cache):
        """Sets per second, in-process (the README's figure)."""
        from scwo_np.rerank import rerank_parquet

        path, q, _ = cache
        return RERANK_SHAPE[0] / best_time(lambda: rerank_parquet(path, self.out, BUDGET, queries=q), 2)

    track_sets_per_second.unit = "sets/s"


class ArrowToNumpy(Benchmark):
    """The Arrow -> NumPy conversion of one batch, against selecting that batch (a view: near 0)."""

    def setup(self):
        import pyarrow.parquet as pq

        self.dir = scratch()
        sets, k, d = RERANK_SHAPE
        path = os.path.join(self.dir, "batch.parquet")
        retrieved_sets_parquet(path, max(1, 10_922 // k), k, d)
        self.batch = next(pq.ParquetFile(path).iter_batches(batch_size=10_922))

    def teardown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def _convert(self):
        import pyarrow as pa

        from scwo_np.rerank._arrow import embedding_matrix, token_counts

        t = pa.Table.from_batches([self.batch])
        return embedding_matrix(t, "embedding", what="c"), token_counts(t, "tokens", what="c")

    def track_conversion_over_selection(self):
        """Time to turn a batch's columns into arrays over ``select_batch`` on them, same run."""
        from scwo_np.select import select_batch

        E, costs = self._convert()
        k = RERANK_SHAPE[1]
        offsets = np.arange(0, E.shape[0] + 1, k, dtype=np.int64)
        Q = np.random.default_rng(1).standard_normal((offsets.size - 1, E.shape[1])).astype(np.float32)
        convert = best_time(self._convert, 20)
        select = best_time(lambda: select_batch(E, Q, costs, BUDGET, offsets=offsets), 20)
        return convert / select

    track_conversion_over_selection.unit = "x selection"
