import os
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

sys.path.insert(0, os.path.dirname(__file__))

from legs import NOJIT, NOJIT_STEP  # noqa: E402

# MiniLM's vectors go to the user's embedding cache by default: the tests (and the servers and
# commands they start, which inherit the environment) use a fresh file of their own, not the
# user's, so a test run neither reads stale vectors nor fills the user's cache.
if "SCWO_NP_EMBEDDING_CACHE" not in os.environ:
    import tempfile

    os.environ["SCWO_NP_EMBEDDING_CACHE"] = os.path.join(
        tempfile.mkdtemp(prefix="scwo-tests-"), "embeddings.sqlite"
    )

settings.register_profile(
    "ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
settings.register_profile("dev", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# The no-JIT leg (.ci/run): every kernel as plain Python, for coverage of its lines, not for volume.
settings.register_profile(
    "nojit", max_examples=20, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def nojit_step() -> int:
    """1, or 8 in the no-JIT leg: the stride through a real data set's cases (see ``legs.py``)."""
    return NOJIT_STEP


def pytest_collection_modifyitems(config, items):
    """The no-JIT leg skips the tests marked ``volume`` (see ``legs.py``)."""
    if not NOJIT:
        return
    skip = pytest.mark.skip(
        reason="volume: the JIT legs run it; the no-JIT leg covers its paths at small sizes"
    )
    for item in items:
        if item.get_closest_marker("volume"):
            item.add_marker(skip)


@st.composite
def selection_problems(draw, max_n=12, max_d=9, allow_empty=True):
    """Random (E, q, costs, budget, lam) with ties, duplicates and negatives.

    Embeddings are either small integers (exact ties, duplicate rows) or
    floats, in float32 or float64; zero rows are replaced (they are invalid).
    """
    n = draw(st.integers(0 if allow_empty else 1, max_n))
    d = draw(st.integers(1, max_d))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    if draw(st.booleans()):
        E = draw(hnp.arrays(np.int8, (n, d), elements=st.integers(-2, 2))).astype(dtype)
    else:
        E = draw(hnp.arrays(dtype, (n, d), elements=st.floats(-3, 3, width=32)))
    if n >= 2 and draw(st.booleans()):
        E[draw(st.integers(1, n - 1))] = E[0]
    E[np.sqrt((E.astype(np.float64) ** 2).sum(axis=1)) < 1e-12] = 1.0  # zero/tiny rows are invalid
    q = draw(hnp.arrays(np.float64, d, elements=st.floats(-3, 3)))
    if np.sqrt((q**2).sum()) < 1e-12:
        q[0] = 1.0
    costs = draw(hnp.arrays(np.int64, n, elements=st.integers(0, 6)))
    budget = draw(st.integers(0, 25))
    lam = draw(st.sampled_from([0.0, 0.3, 0.5, 0.7, 1.0]) | st.floats(0, 1))
    return E, q, costs, budget, lam


@st.composite
def tiled_problems(draw):
    """(E, q, costs, budget) at sizes where 4 x 4 tiles, their edges and 16-lane blocks all occur."""
    n = draw(st.integers(1, 30))
    d = draw(st.integers(1, 40))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    E = rng.standard_normal((n, d)).astype(dtype)
    if n > 3 and draw(st.booleans()):
        E[n - 2] = E[1]
    q = E.mean(axis=0) + 0.1 if draw(st.booleans()) else rng.standard_normal(d)  # most relevance > 0, or half
    costs = rng.integers(1, 7, n)
    return E, q, costs, int(draw(st.integers(0, 40)))


@pytest.fixture
def no_fused_path(monkeypatch):
    """Send every selection through the validating path, not the fused kernel."""
    import scwo_np.select._mmr

    monkeypatch.setattr(scwo_np.select._mmr, "_fast", lambda *args: None)


@pytest.fixture
def small_pool(monkeypatch):
    """Shrink the lazy heap's candidate pool so refills are exercised."""
    import scwo_np.select._mmr

    monkeypatch.setattr(scwo_np.select._mmr, "POOL", 2)


@pytest.fixture
def tiny_blocks(monkeypatch):
    """Two-row blocks, a two-chunk pool and the threaded path even for tiny inputs.

    Exercises the speculative first pass (stale candidates, re-read blocks,
    workers publishing their best to each other) and pool refills on inputs
    small enough for the plain-Python reference.
    """
    import scwo_np._dot
    import scwo_np.select._mmr

    monkeypatch.setattr(scwo_np.select._mmr, "BLOCK", 2)
    monkeypatch.setattr(scwo_np.select._mmr, "POOL", 2)
    monkeypatch.setattr(scwo_np._dot, "PARALLEL_MIN_ELEMENTS", 0)
