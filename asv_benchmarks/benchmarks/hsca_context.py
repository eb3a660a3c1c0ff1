"""Benchmarks for HSCA's budgeted context (issue 42): latency, ingest speed, and whether it holds the answer.

Targets: ``HSCAEngine.context(query, budget)`` over a session of 600 turns <= 20 ms, besides
embedding the query (here the engine has no embedder: the query goes through the map alone);
``ingest_turn`` no slower than before the context existed (``track_ingest_turns_per_second``
runs on every commit, so asv's history shows before and after); at 400 tokens the context holds
a sentence of the answer for >= 60% of the questions and >= 3x a recency buffer of the same
size (``Quality``, on the bundled Python FAQ as one session of 503 turns; top-k turns by LSA
beside them).

The sessions are real turns: the bundled Python FAQ's answer paragraphs, then the bundled
library sample's chunks (``scwo_np.datasets``), the first ``turns`` of them.  Commits without
``HSCAEngine.context`` skip the context benchmarks.
"""

import time

from scwo_np.datasets import load_faq, load_sample
from scwo_np.hsca import HSCAEngine

from .common import Benchmark, sizes


def _session(n):
    return (load_faq().texts + load_sample().texts)[:n]


def _has_context():
    if not hasattr(HSCAEngine, "context"):
        raise NotImplementedError("HSCAEngine.context is not in this version")


class Context(Benchmark):
    """One ``context(query, 400)`` call over a session of ``turns`` turns (the FAQ's questions in turn)."""

    params = sizes(150, 600, 2400)
    param_names = ["turns"]
    number = 1
    repeat = (5, 50, 20.0)

    def setup(self, turns):
        _has_context()
        self.engine = HSCAEngine()
        for t in _session(turns):
            self.engine.ingest_turn(t)
        self.queries = load_faq().questions
        self.k = 0
        self.engine.context(self.queries[0], 400)  # warm-up

    def time_context(self, turns):
        self.k = (self.k + 1) % len(self.queries)
        self.engine.context(self.queries[self.k], 400)

    def track_context_median_ms(self, turns):
        """The median over every FAQ question, in one run (the target is the 600-turn value)."""
        times = []
        for q in self.queries:
            t0 = time.perf_counter()
            self.engine.context(q, 400)
            times.append(time.perf_counter() - t0)
        times.sort()
        return 1e3 * times[len(times) // 2]

    track_context_median_ms.unit = "ms"


class Ingest(Benchmark):
    """``ingest_turn`` over 600 real turns into a fresh engine."""

    number = 1
    repeat = 1

    def setup(self):
        self.turns = _session(600)
        engine = HSCAEngine()
        for t in self.turns[:20]:  # warm-up: the JIT, the background table
            engine.ingest_turn(t)

    def track_ingest_turns_per_second(self):
        best = float("inf")
        for _ in range(3):
            engine = HSCAEngine()
            t0 = time.perf_counter()
            for t in self.turns:
                engine.ingest_turn(t)
            best = min(best, time.perf_counter() - t0)
        return len(self.turns) / best

    track_ingest_turns_per_second.unit = "turns/s"


class Quality(Benchmark):
    """Hit rate at 400 tokens on the Python FAQ as one session: HSCA, recency, top-k turns (LSA)."""

    number = 1
    repeat = 1
    timeout = 900

    def setup(self):
        _has_context()
        try:
            from scwo_np.bench._hsca import _evaluate, _Memo
        except ImportError:
            raise NotImplementedError("scwo_np.bench._hsca is not in this version") from None
        from scwo_np.embed import as_embedder

        faq = load_faq()
        engine = HSCAEngine()
        for t in faq.texts:
            engine.ingest_turn(t)
        emb = _Memo(as_embedder("lsa", [*faq.texts, *faq.questions]))
        rows = _evaluate(
            faq.texts,
            faq.questions,
            faq.gold,
            budgets=[400],
            embedder=emb,
            token_counter="estimate",
            engine=engine,
            methods=("hsca", "recency", "top-k turns"),
        )
        self.hit = {r["method"]: r["hit"] for r in rows}
        self.over = sum(r["over"] for r in rows)
        self.n = rows[0]["n"]

    def track_hit_hsca_400(self):
        return self.hit["hsca"]

    track_hit_hsca_400.unit = "share"

    def track_hit_recency_400(self):
        return self.hit["recency"]

    track_hit_recency_400.unit = "share"

    def track_hit_top_k_turns_400(self):
        return self.hit["top-k turns"]

    track_hit_top_k_turns_400.unit = "share"

    def track_hsca_over_recency_400(self):
        """HSCA's hit rate over the recency buffer's (target >= 3); a recency of 0 counts as one hit."""
        return self.hit["hsca"] / max(self.hit["recency"], 1 / self.n)

    track_hsca_over_recency_400.unit = "x"

    def track_contexts_over_budget(self):
        """Contexts over the budget, every method (must be 0)."""
        return self.over

    track_contexts_over_budget.unit = "contexts"
