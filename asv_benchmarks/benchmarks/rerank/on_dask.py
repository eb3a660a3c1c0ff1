"""Benchmarks for scwo_np.rerank._on_dask: the Parquet job on a local Dask cluster.

Targets (issue 14): two one-thread workers >= 1.6x one worker's throughput on
the same job; one worker <= 1.3x the in-process path's time.  The output is a
directory of parts written by the workers (the way to run large jobs); the
single-file output, written by the client, is tracked beside it.  On a
machine with two cores the client, the scheduler and both workers share them.
"""

import itertools
import os
import shutil

from ..common import Benchmark, best_time
from .parquet import BUDGET, issue_file, scratch


class RerankOnCluster(Benchmark):
    """``rerank_parquet(..., client=)`` on LocalClusters of one and two one-thread workers."""

    timeout = 1800
    repeat = (1, 1, 60.0)
    number = 1

    def setup_cache(self):
        return issue_file()

    def setup(self, cache):
        import distributed

        self.dir = scratch()
        self.runs = itertools.count()
        self.clusters = {}
        for n in (1, 2):
            cluster = distributed.LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0"
            )
            self.clusters[n] = (cluster, distributed.Client(cluster, set_as_default=False))

    def teardown(self, cache):
        for cluster, client in self.clusters.values():
            client.close()
            cluster.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def _run(self, cache, workers, into="parts"):
        from scwo_np.rerank import rerank_parquet

        path, q = cache
        client = None if workers == 0 else self.clusters[workers][1]

        def once():
            if into == "file":
                dst = os.path.join(self.dir, "out.parquet")
            else:  # a new directory each time (a directory output must not exist yet)
                dst = os.path.join(self.dir, f"parts{next(self.runs)}") + "/"
            rerank_parquet(path, dst, BUDGET, queries=q, client=client)

        return best_time(once, 2)

    def track_speedup_two_workers_over_one(self, cache):
        """One worker's time over two workers' (directory output; target >= 1.6)."""
        return self._run(cache, 1) / self._run(cache, 2)

    track_speedup_two_workers_over_one.unit = "x one worker"

    def track_speedup_two_workers_over_one_single_file(self, cache):
        """As above, with one output file written by the client."""
        return self._run(cache, 1, "file") / self._run(cache, 2, "file")

    track_speedup_two_workers_over_one_single_file.unit = "x one worker"

    def track_one_worker_over_in_process(self, cache):
        """One worker's time over the in-process path's (target <= 1.3)."""
        return self._run(cache, 1) / self._run(cache, 0)

    track_one_worker_over_in_process.unit = "x in-process"

    def track_one_worker_over_in_process_single_file(self, cache):
        """As above, with one output file written by the client (which then works beside the worker)."""
        return self._run(cache, 1, "file") / self._run(cache, 0, "file")

    track_one_worker_over_in_process_single_file.unit = "x in-process"
