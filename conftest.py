"""The test legs: which tests need what, so the default run is the fast unit leg.

``python -m pytest`` (README line 2) runs the unit leg: the core's tests and
doctests, with nothing installed beyond the core, pytest and hypothesis.  The
other legs are chosen by marker, and ``.ci/run`` runs each with what it needs:

* ``integration`` — needs an optional extra (MiniLM and torch, LangChain,
  LlamaIndex, pyarrow and Dask, tiktoken, vaderSentiment, a peer library);
* ``notebook`` — a notebook, executed by nbmake (``--nbmake notebooks``);
* ``system`` — builds or installs the package, runs the asv tool, a browser, or
  shell scripts of the project;
* ``slow`` — minutes of real-size work (the regression gate's timings).

Whole files and folders get their marker from ``LEGS`` below (and are not even
imported when the marker expression leaves them out, so a missing extra is never
an import error of the unit leg); single tests carry ``@pytest.mark.<leg>``.

With ``SCWO_NP_REQUIRE_EXTRAS=1`` (set by ``.ci/run`` for the integration leg)
``pytest.importorskip`` fails instead of skipping: an extra that did not install
is an error there, never a quiet skip.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest
from _pytest.mark.expression import Expression

ROOT = Path(__file__).resolve().parent

# Haystack reports usage to its telemetry service unless told not to: never from the tests.
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")

#: Files and folders whose every test belongs to one leg (paths relative to the repository).
LEGS = {
    "tests/integrations": "integration",
    "tests/rerank": "integration",
    "tests/embed/test_minilm.py": "integration",
    "tests/test_bad_input_extras.py": "integration",
    "scwo_np/integrations": "integration",  # doctests import LangChain / LlamaIndex
    "scwo_np/rerank": "integration",  # doctests read and write Parquet
    "scwo_np/embed/_minilm.py": "integration",
    "tests/mcp_server": "integration",
    "scwo_np/mcp_server": "integration",  # imports the mcp SDK
    "scwo_np/bench/_mcp.py": "integration",  # its doctest runs the mcp SDK
    "notebooks": "notebook",
    "tests/test_install.py": "system",
    "tests/test_wheel.py": "system",
    "tests/test_asv_history.py": "system",
    "tests/test_asv_benchmarks.py": "system",
    "tests/test_ci_scripts.py": "system",
    "tests/test_gate.py": "slow",
}
MARKERS = ("integration", "notebook", "system", "slow")


def _leg(path: Path) -> str | None:
    try:
        rel = path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return None
    for prefix, leg in LEGS.items():
        if rel == prefix or rel.startswith(prefix + "/"):
            return leg
    return None


def _selected(config: pytest.Config, leg: str) -> bool:
    expr = config.getoption("markexpr", "")
    return not expr or Expression.compile(expr).evaluate(lambda name: name == leg)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    leg = _leg(collection_path)
    if leg is not None and not _selected(config, leg):
        return True
    return None


#: Doctests that need an extra, by their item name.
DOCTEST_LEGS = {
    "scwo_np.tokens.TiktokenCounter": "integration",
    "scwo_np.tokens.TiktokenCounter.count": "integration",
    "scwo_np.tokens.WordPieceCounter": "integration",
    "scwo_np.tokens.WordPieceCounter.count": "integration",
    "scwo_np.bench._plot.plot_quality": "integration",  # draws with matplotlib (the notebooks extra)
}


@pytest.hookimpl(tryfirst=True)  # before the mark plugin deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        leg = _leg(Path(str(item.path))) or DOCTEST_LEGS.get(item.name)
        if leg is not None:
            item.add_marker(leg)


if os.environ.get("SCWO_NP_REQUIRE_EXTRAS") == "1":

    def _require(modname: str, minversion: str | None = None, reason: str | None = None, **_: object):
        """``pytest.importorskip`` that raises: in the integration leg every extra is installed."""
        return importlib.import_module(modname)

    pytest.importorskip = _require
