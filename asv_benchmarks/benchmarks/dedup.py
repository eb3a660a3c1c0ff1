"""Benchmarks for scwo_np.dedup, with the issue's targets as ratios measured in one run."""

import itertools
import time
from difflib import SequenceMatcher

import numpy as np

from scwo_np.dedup import deduplicate, jaccard_pairs, minhash_pairs
from scwo_np.text import word_sets

from .common import Benchmark, best_time, extra_peak_bytes, need, sizes
from .datasets import embeddings_with_copies, pydoc_paragraphs, word_corpus


def _naive_jaccard_pairs(texts, t):
    """The ADR's pairwise loop over every pair (Python sets)."""
    sets = [{w for w in x.lower().split() if len(w) > 2} for x in texts]
    out = []
    for i, j in itertools.combinations(range(len(sets)), 2):
        u = sets[i] | sets[j]
        if u and len(sets[i] & sets[j]) / len(u) >= t:
            out.append((i, j))
    return out


class Jaccard(Benchmark):
    """Word-set Jaccard at 0.9 on ~200-word chunks (target: 10,000 in <= 1 s)."""

    params = sizes(1_000, 10_000)
    param_names = ["n"]

    def setup(self, n):
        self.texts = word_corpus(n)
        deduplicate(self.texts[:100])

    def time_dedup(self, n):
        deduplicate(self.texts)


class JaccardVsNaive(Benchmark):
    """Speed-up over the naive pairwise loop, same pairs, over n (target >= 50x at 2,000)."""

    params = sizes(250, 500, 1_000, 2_000)
    param_names = ["n"]
    number = 1
    repeat = 1

    def setup(self, n):
        self.texts = word_corpus(n, seed=1)
        deduplicate(self.texts[:100])

    def track_speedup_vs_naive_loop(self, n):
        t = time.perf_counter()
        want = _naive_jaccard_pairs(self.texts, 0.9)
        naive = time.perf_counter() - t
        t = time.perf_counter()
        a, b, _ = jaccard_pairs(word_sets(self.texts)[0], 0.9)
        ours = time.perf_counter() - t
        assert list(zip(a.tolist(), b.tolist(), strict=True)) == want
        return naive / ours

    track_speedup_vs_naive_loop.unit = "x"


class Sequence(Benchmark):
    """MoRAG's difflib similarity on n real paragraphs (target >= 20x all-pairs difflib at 500)."""

    params = sizes(100, 250, 500)
    param_names = ["n"]
    number = 1
    repeat = 1

    def setup(self, n):
        self.texts = pydoc_paragraphs()[0][:n]
        deduplicate(self.texts[:20], method="sequence")

    def time_dedup(self, n):
        deduplicate(self.texts, method="sequence")

    def track_speedup_vs_all_pairs_difflib(self, n):
        """All-pairs difflib extrapolated from 3,000 random pairs (the full loop takes minutes)."""
        low = [t.lower() for t in self.texts]
        pairs = list(itertools.combinations(range(len(low)), 2))
        rng = np.random.default_rng(0)
        sample = [pairs[k] for k in rng.choice(len(pairs), min(3000, len(pairs)), replace=False)]
        t = time.perf_counter()
        for i, j in sample:
            SequenceMatcher(None, low[j], low[i]).ratio()
        difflib_all = (time.perf_counter() - t) / len(sample) * len(pairs)
        return difflib_all / best_time(lambda: deduplicate(self.texts, method="sequence"), 3)

    track_speedup_vs_all_pairs_difflib.unit = "x"


class Cosine(Benchmark):
    """Cosine at 0.9 on n x 384 float32 with 10% noisy copies (target: 100,000 in <= 10 s, <= 500 MB)."""

    params = sizes(10_000, 100_000)
    param_names = ["n"]
    number = 1
    repeat = 1

    def setup(self, n):
        self.E = embeddings_with_copies(n)
        deduplicate(embeddings=self.E[:3000], method="cosine")

    def time_dedup(self, n):
        deduplicate(embeddings=self.E, method="cosine")

    def track_extra_memory_mb(self, n):
        return extra_peak_bytes(lambda: deduplicate(embeddings=self.E, method="cosine")) / 1e6

    track_extra_memory_mb.unit = "MB"


class CosineFloor(Benchmark):
    """Cosine dedup over its floor, one Gram matrix ``E @ E.T`` of the same rows, over n.

    All pairs must be looked at, so one dense product is what any exact method
    pays at least; the ratio says how close the blocked kernel (which never
    holds the n x n matrix) comes to it.
    """

    params = sizes(1_000, 3_000, 10_000)
    param_names = ["n"]
    number = 1
    repeat = 1

    def setup(self, n):
        self.E = embeddings_with_copies(n)
        deduplicate(embeddings=self.E[:500], method="cosine")

    def track_time_over_gram(self, n):
        reps = 5 if n <= 3_000 else 2
        ours = best_time(lambda: deduplicate(embeddings=self.E, method="cosine"), reps)
        return ours / best_time(lambda: self.E @ self.E.T, reps)

    track_time_over_gram.unit = "x E@E.T"


class MinHash(Benchmark):
    """MinHash LSH on n short texts against datasketch, recall against exact Jaccard (t = 0.9)."""

    params = sizes(10_000, 100_000)
    param_names = ["n"]
    number = 1
    repeat = 1
    timeout = 1200

    def setup(self, n):
        self.texts = word_corpus(n, words=(10, 30), seed=2, vocab=50_000)
        self.sets = word_sets(self.texts)[0]
        a, b, _ = jaccard_pairs(self.sets, 0.9)
        self.truth = set(zip(a.tolist(), b.tolist(), strict=True))
        minhash_pairs(word_sets(self.texts[:200])[0], 0.9)

    def _ours(self):
        t = time.perf_counter()
        a, b, _ = minhash_pairs(word_sets(self.texts)[0], 0.9)
        return time.perf_counter() - t, set(zip(a.tolist(), b.tolist(), strict=True))

    def _datasketch(self):
        from datasketch import MinHash as DSMinHash
        from datasketch import MinHashLSH

        t = time.perf_counter()
        lsh = MinHashLSH(threshold=0.9, num_perm=128)
        words = [sorted({w for w in x.lower().split() if len(w) > 2}) for x in self.texts]
        hashes = []
        for i, ws in enumerate(words):
            m = DSMinHash(num_perm=128)
            m.update_batch([w.encode() for w in ws])
            hashes.append(m)
            lsh.insert(i, m)
        found = set()
        for i, m in enumerate(hashes):
            for j in lsh.query(m):
                if j > i:
                    a, b = set(words[i]), set(words[j])
                    if len(a & b) / len(a | b) >= 0.9:
                        found.add((i, j))
        return time.perf_counter() - t, found

    def track_speedup_vs_datasketch(self, n):
        return self._datasketch()[0] / self._ours()[0]

    track_speedup_vs_datasketch.unit = "x"
    track_speedup_vs_datasketch.setup = lambda *_: need("datasketch")

    def track_recall_ours(self, n):
        return len(self._ours()[1] & self.truth) / max(len(self.truth), 1)

    def track_recall_datasketch(self, n):
        return len(self._datasketch()[1] & self.truth) / max(len(self.truth), 1)

    track_recall_datasketch.setup = lambda *_: need("datasketch")


class Grouping(Benchmark):
    """Greedy (the default) against connected components, on the same pairs: cosine at 0.9 on
    n x 384 float32 with 10% noisy copies, and Jaccard at 0.5 on ~200-word chunks (many pairs)."""

    params = (sizes(2_000, 20_000), ["greedy", "components"])
    param_names = ["n", "grouping"]

    def setup(self, n, grouping):
        self.E = embeddings_with_copies(n)
        self.texts = word_corpus(min(n, 5_000))
        deduplicate(embeddings=self.E[:500], method="cosine", grouping=grouping)
        deduplicate(self.texts[:100], threshold=0.5, grouping=grouping)

    def time_cosine(self, n, grouping):
        deduplicate(embeddings=self.E, method="cosine", grouping=grouping)

    def time_jaccard(self, n, grouping):
        deduplicate(self.texts, threshold=0.5, grouping=grouping)
