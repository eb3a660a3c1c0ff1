"""Benchmarks for scwo_np.optimize: both pipelines on 200 retrieved chunks (target <= 5 ms)."""

import re

import numpy as np

from scwo_np.optimize import ContextChunk, KBContextOptimizer, MoragContextOptimizer

from .common import Benchmark
from .datasets import pydoc_paragraphs


class Pipelines(Benchmark):
    def setup(self):
        texts, sources = pydoc_paragraphs(200, edited=20)
        scores = np.random.default_rng(0).uniform(0.2, 1.0, len(texts))
        self.matches = [
            {"id": i, "text": t, "path": s, "score": float(x)}
            for i, (t, s, x) in enumerate(zip(texts, sources, scores, strict=True))
        ]
        role = re.compile(r":(?:func|class|mod|meth):`~?([\w.]+)`")
        self.chunks = [
            ContextChunk(str(i), t, float(x), s, sorted(set(role.findall(t)))[:8], [])
            for i, (t, s, x) in enumerate(zip(texts, sources, scores, strict=True))
        ]
        self.kb = KBContextOptimizer()
        self.morag = MoragContextOptimizer()
        self.options = {"budget": 3000, "adaptive_selection": True, "max_chunks": 20}
        self.time_kb()
        self.time_morag()

    def time_kb(self):
        self.kb.optimize(self.matches, self.options)

    def time_morag(self):
        self.morag.optimize(self.chunks, "how do I encode JSON")
