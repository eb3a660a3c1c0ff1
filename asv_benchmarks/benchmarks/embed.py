"""The embedding cache (``scwo_np.embed``): reading vectors that are already cached.

Target (issue 16): the hit path at >= 50,000 texts/s (d = 384, float32, an on-disk
SQLite file in WAL mode).  Misses are the embedder's own time and are not measured here.
"""

import os
import shutil
import tempfile

import numpy as np

from .common import Benchmark, best_time, sizes


def _random_model(texts):
    return np.random.default_rng(len(texts)).standard_normal((len(texts), 384))


_random_model.name = "asv-random-384"


class CacheHits(Benchmark):
    """``EmbeddingCache.embed`` on texts that are all in the cache."""

    params = sizes(1_000, 20_000)
    param_names = ["n"]

    def setup(self, n):
        from scwo_np.embed import EmbeddingCache

        self.dir = tempfile.mkdtemp()
        self.texts = [f"chunk {i}: " + "some words of a retrieved passage " * 5 for i in range(n)]
        self.cache = EmbeddingCache(os.path.join(self.dir, "cache.sqlite"))
        self.cache.embed(_random_model, self.texts, batch_size=1_000)

    def teardown(self, n):
        self.cache.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def time_hits(self, n):
        self.cache.embed(_random_model, self.texts)

    def track_hits_per_second(self, n):
        return n / best_time(lambda: self.cache.embed(_random_model, self.texts), repeat=3)

    track_hits_per_second.unit = "texts/s"
