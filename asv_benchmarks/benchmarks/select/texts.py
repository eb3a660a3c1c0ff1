"""``select_texts`` on texts whose vectors are already in the embedding cache.

Target (issue 16): on 1,000 cached texts, ``select_texts`` takes at most 2x the
work it is built from: the cache reads (texts and question) plus ``mmr_select``
on the arrays.  The texts and vectors are the bundled sample's (real Python-docs
chunks, all-MiniLM-L6-v2, d = 384); every vector is a cache hit, so the model is
never loaded.
"""

import os
import shutil
import tempfile

from ..common import Benchmark, best_time, sizes


class SelectTexts(Benchmark):
    params = sizes(100, 1_000)
    param_names = ["n"]

    def setup(self, n):
        from scwo_np import load_sample, mmr_select, select_texts
        from scwo_np.embed import EmbeddingCache, MiniLMEmbedder

        s = load_sample()
        self.texts, self.q = list(s.texts[:n]), s.queries[0]
        self.dir = tempfile.mkdtemp()
        self.cache = EmbeddingCache(os.path.join(self.dir, "cache.sqlite"))
        emb = MiniLMEmbedder()  # only its name is used: everything below is a cache hit
        self.cache.put(emb.name, self.texts, s.embeddings[:n])
        self.cache.put(emb.name, [self.q], s.query_embeddings[:1])
        self.costs = s.costs[:n]
        cache, texts, q, costs = self.cache, self.texts, self.q, self.costs

        def ours():
            # lexical=0: the embedding's relevance alone, so the call is mmr_select on the arrays
            # (the question's words cost what select.relevance measures)
            return select_texts(texts, q, 2000, embedder=emb, cache=cache, costs=costs, lexical=0.0)

        def parts():
            E = cache.embed(emb, texts)
            return mmr_select(E, cache.embed(emb, [q])[0], costs, 2000)

        self.ours, self.parts = ours, parts
        assert (ours().indices == parts()).all()

    def teardown(self, n):
        self.cache.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def time_select_texts(self, n):
        self.ours()

    def time_cache_reads_plus_mmr_select(self, n):
        self.parts()

    def track_ratio_to_its_parts(self, n):
        return best_time(self.ours, repeat=9) / best_time(self.parts, repeat=9)

    track_ratio_to_its_parts.unit = "x"


class SentenceGranularity:
    """``select_texts(..., granularity="sentence")`` on 50 real retrieved paragraphs, less its embedder.

    Target (issue 34): with 50 retrieved chunks of about 100 tokens and an embedder whose vectors
    are at hand, everything but the embedder (splitting, scoring, selection, layout) takes at most
    2 ms.  The chunks are the bundled FAQ's 50 nearest a question (real text); the embedder is a
    dictionary of precomputed vectors, and the time spent in it is taken out.  ``lam="auto"``
    adds the rule (one pass over the relevances) to the same work.
    """

    timeout = 120
    params = [0.7, "auto"]
    param_names = ["lam"]

    def setup(self, lam):
        import time

        import numpy as np

        from scwo_np.datasets import load_faq
        from scwo_np.embed import LSAEmbedder
        from scwo_np.select import select_texts
        from scwo_np.text import split_sentences

        f = load_faq()
        q = f.query_embeddings[0]
        top = np.argsort(-(f.embeddings @ q), kind="stable")[:50]
        texts = [f.texts[i] for i in top]
        lsa = LSAEmbedder(list(f.texts), dim=128)
        pieces = list(
            dict.fromkeys(texts + [t[a:b] for t in texts for a, b in split_sentences(t)] + [f.questions[0]])
        )
        vectors = dict(zip(pieces, lsa(pieces), strict=True))
        spent = [0.0]

        def embedder(batch):
            t = time.perf_counter()
            out = np.array([vectors[x] for x in batch])
            spent[0] += time.perf_counter() - t
            return out

        embedder.name = "precomputed"

        def run():
            spent[0] = 0.0
            t = time.perf_counter()
            select_texts(texts, f.questions[0], 400, embedder=embedder, granularity="sentence", lam=lam)
            return time.perf_counter() - t - spent[0]

        def chunks():
            return select_texts(texts, f.questions[0], 400, embedder=embedder, lam=lam)

        self.run, self.chunks = run, chunks
        run()

    def track_ms_besides_the_embedder(self, lam):
        return 1e3 * min(self.run() for _ in range(15))

    track_ms_besides_the_embedder.unit = "ms"

    def time_select_texts_sentences(self, lam):
        self.run()

    def time_select_texts_chunks(self, lam):
        self.chunks()
