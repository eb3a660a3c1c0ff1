"""Compile the common entry points once, so their kernels land in the JIT cache.

``setup.py`` runs this at wheel build time with ``SCWO_NP_CACHE_DIR`` pointing
at a scratch folder, and ships what it wrote as ``scwo_np/_jit_seed/`` (see
``_config``): a fresh install then loads these kernels instead of compiling
them on first use.  It can also be run by hand to fill a user's cache ahead of
time (``python -m scwo_np._warmup``), e.g. when building a container image.

Only the argument types the public wrappers produce are compiled: float32 and
float64 embeddings, int64 costs, the serial and the threaded paths.
"""

from __future__ import annotations

import sys
import time


def _selection() -> None:
    import numpy as np

    from . import _dot, coverage, mmr_select, mmr_select_multi, select_batch, topk_relevance, truncate

    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        E = rng.standard_normal((300, 16)).astype(dtype)
        c = rng.integers(1, 50, 300)
        for method in ("lazy", "exact"):
            mmr_select(E, E[0], c, 400, method=method, return_gains=True)
            mmr_select(E, E[0], c, 400, method=method, cost_aware=True)
            mmr_select(E, E[0], c, 400, method=method, lam=1.0)
        mmr_select_multi(E, E[:2], c, 400)
        select_batch(E.reshape(3, 100, 16), E[:3], c.reshape(3, 100), 200, lengths=[100, 60, 1])
        select_batch(E, E[:3], c, 200, offsets=[0, 100, 250, 300])
        topk_relevance(E, E[0], c, 400)
        coverage(E[:5], E[0])
        # The threaded first pass (above _dot.PARALLEL_MIN_ELEMENTS elements), on a small matrix.
        saved, _dot.PARALLEL_MIN_ELEMENTS = _dot.PARALLEL_MIN_ELEMENTS, 0
        try:
            big = rng.standard_normal((4096, 64)).astype(dtype)
            mmr_select(big, big[0], np.full(4096, 10), 300)
            mmr_select(big, big[-1], np.full(4096, 10), 300)
        finally:
            _dot.PARALLEL_MIN_ELEMENTS = saved
    truncate(c, 400)


def _text() -> None:
    import numpy as np

    from .anchor import crush
    from .dedup import deduplicate
    from .optimize import ContextChunk, KBContextOptimizer, MoragContextOptimizer, diversify

    words = "the quick brown fox jumps over the lazy dog while seven wizards quietly judge boxing".split()
    rng = np.random.default_rng(0)
    texts = [" ".join(rng.choice(words, 20)) for _ in range(40)]
    texts += texts[:5]
    for method in ("jaccard", "sequence", "minhash"):
        deduplicate(texts, method=method)
    deduplicate(texts, grouping="components")  # the union-find kernels (greedy is the default)
    E = rng.standard_normal((45, 16))
    deduplicate(embeddings=E, method="cosine")
    deduplicate(embeddings=E.astype(np.float32), method="cosine")
    diversify(texts, sources=[f"f{i % 4}" for i in range(45)])
    diversify(sources=[f"f{i % 4}" for i in range(45)], embeddings=E)
    items = [{"id": i, "status": "error" if i % 17 == 0 else "ok", "ms": float(i % 7)} for i in range(200)]
    crush(items, 10, query="latest errors")
    matches = [
        {"chunkId": str(i), "text": t, "score": 1.0 / (i + 1), "path": f"f{i % 4}"}
        for i, t in enumerate(texts)
    ]
    KBContextOptimizer().optimize(matches, {"budget": 200, "adaptive_selection": True})
    chunks = [ContextChunk(str(i), t, 0.5, "d", [], []) for i, t in enumerate(texts)]
    MoragContextOptimizer(budget=300, response_reserve=0).optimize(chunks, "fox")


def _hsca() -> None:
    from .hsca import HSCAEngine

    engine = HSCAEngine()
    for text in (
        "The court ruled that the contract was void. The judge cited the statute. Counsel appealed.",
        "The patient was given a dose of insulin. The doctor checked her blood sugar again. It fell.",
    ):
        engine.ingest_turn(text)


STEPS = {"selection": _selection, "text": _text, "hsca": _hsca}


def run(steps: list[str] | None = None, *, verbose: bool = False) -> dict[str, float]:
    """Run the warm-up steps (all by default); returns the seconds each took.

    A step that fails (an optional dependency missing, say) is skipped: the
    warm-up only saves time, it never decides what works.
    """
    times = {}
    for name in steps or list(STEPS):
        t0 = time.perf_counter()
        try:
            STEPS[name]()
        except Exception as exc:  # noqa: BLE001 - see the docstring
            if verbose:
                sys.stderr.write(f"scwo_np warm-up: {name} skipped ({type(exc).__name__}: {exc})\n")
            continue
        times[name] = time.perf_counter() - t0
        if verbose:
            sys.stderr.write(f"scwo_np warm-up: {name} compiled in {times[name]:.1f} s\n")
    return times


if __name__ == "__main__":  # pragma: no cover
    run(sys.argv[1:] or None, verbose=True)
