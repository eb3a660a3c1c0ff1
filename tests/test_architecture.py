"""The package map of CONTRIBUTING.md, enforced: who may import whom, and module sizes.

Capabilities stand apart: they share the core (top-level private modules,
``validation``, ``text``, ``datasets``) and the pipelines (``optimize``) may
use ``select`` and ``dedup``.  Nothing in the library imports the CLI.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "scwo_np"

#: Capability -> the capabilities it may import (besides the core).
ALLOWED = {
    "select": {"embed"},  # select_texts embeds its texts
    "dedup": {"embed"},  # cosine dedup can embed its texts
    "anchor": set(),
    "hsca": set(),
    "embed": set(),
    "optimize": {"select", "dedup", "embed"},
    "rerank": {"select"},
    "integrations": {"select", "dedup", "embed"},
    "cli": {"select", "dedup", "anchor", "hsca", "embed", "optimize", "rerank"},
    "core": set(),
}
CAPABILITIES = {"select", "dedup", "anchor", "hsca", "embed", "optimize", "rerank", "integrations", "cli"}


def _capability(path: Path) -> str:
    rel = path.relative_to(PKG).parts
    return rel[0] if len(rel) > 1 and rel[0] in CAPABILITIES else "core"


def _imported_capabilities(path: Path) -> set[str]:
    """The ``scwo_np`` capabilities a module imports (absolute or relative)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = path.relative_to(PKG).with_suffix("").parts  # e.g. ("select", "mmr")
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(here[: len(here) - node.level])
                mod = base + (node.module.split(".") if node.module else [])
                targets = [mod + [a.name] for a in node.names] if not node.module else [mod]
            elif node.module and node.module.split(".")[0] == "scwo_np":
                targets = [node.module.split(".")[1:]]
            else:
                continue
        elif isinstance(node, ast.Import):
            targets = [a.name.split(".")[1:] for a in node.names if a.name.split(".")[0] == "scwo_np"]
        else:
            continue
        for t in targets:
            if t and t[0] in CAPABILITIES:
                out.add(t[0])
    return out


MODULES = sorted(p for p in PKG.rglob("*.py") if "_jit_seed" not in p.parts)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PKG)))
def test_imports_follow_the_map(path):
    cap = _capability(path)
    if path.relative_to(PKG).parts in (("__init__.py",), ("_warmup.py",)):
        return  # the top-level re-exports and the build-time warm-up
    bad = _imported_capabilities(path) - ALLOWED[cap] - {cap}
    assert not bad, f"{path.relative_to(PKG)} ({cap}) imports {sorted(bad)}; see the map in CONTRIBUTING.md"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PKG)))
def test_no_module_over_about_600_lines(path):
    n = len(path.read_text(encoding="utf-8").splitlines())
    assert n <= 650, f"{path.relative_to(PKG)} has {n} lines; split it by algorithm"
