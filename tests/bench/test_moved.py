"""The benchmarks moved to ``scwo_np.bench`` in 0.2; their old paths warn and forward until 0.3."""

from __future__ import annotations

import importlib

import pytest

import scwo_np.bench

#: The eight public names that moved (0.2): mcp_latency from scwo_np.mcp_server, the rest from
#: scwo_np.select; crush_bench was private in scwo_np.anchor; SPLITS, hsca_bench and format_hsca are new,
#: and so are read_questions and plot_quality (issue 43).
NEW = {"crush_bench", "SPLITS", "hsca_bench", "format_hsca", "read_questions", "plot_quality"}
MOVED = sorted(set(scwo_np.bench.__all__) - NEW)
OLD = {
    "scwo_np.select": [n for n in MOVED if n != "mcp_latency"],
    "scwo_np.mcp_server": ["mcp_latency"],
}
CASES = [(mod, name) for mod, names in OLD.items() for name in names]


@pytest.mark.parametrize("module, name", CASES)
def test_an_old_path_warns_naming_the_new_one_and_gives_the_same_object(module, name):
    if module == "scwo_np.mcp_server":
        pytest.importorskip("mcp")
    mod = importlib.import_module(module)
    with pytest.warns(
        DeprecationWarning, match=rf"{module}\.{name}'? moved to '?scwo_np\.bench\.{name}'? in 0\.2"
    ):
        old = getattr(mod, name)
    assert old is getattr(scwo_np.bench, name)
    assert name not in mod.__all__ and name in scwo_np.bench.__all__


def test_eight_names_moved():
    assert len(MOVED) == 8


def test_from_import_of_an_old_name_works_with_a_warning():
    with pytest.warns(DeprecationWarning, match="scwo_np.bench.quality_at_budget"):
        from scwo_np.select import quality_at_budget
    assert quality_at_budget is scwo_np.bench.quality_at_budget


def test_other_names_are_still_missing():
    import scwo_np.select

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        scwo_np.select.nope  # noqa: B018
    assert not hasattr(scwo_np.select, "_bench")


def test_the_bench_package_imports_without_the_mcp_extra_and_nothing_imports_it():
    """scwo_np.bench imports mcp only inside mcp_latency; no library package imports scwo_np.bench."""
    import subprocess
    import sys

    code = (
        "import sys, scwo_np, scwo_np.select, scwo_np.anchor, scwo_np.dedup, scwo_np.optimize; "
        "assert 'scwo_np.bench' not in sys.modules; import scwo_np.bench; assert 'mcp' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
