"""The API reference covers every public module (issue 41).

A public module is one whose dotted name has no part starting with ``_``. Each is either a page
of the reference (``PACKAGES`` in ``docs/apipages.py``, which writes ``docs/api/<module>.rst``
from its ``__all__`` at build time, listed in the toctree of ``docs/api/index.rst``) or a plain
container of public modules that exports nothing itself (``scwo_np.integrations``). The modules
with a page are not imported here (some need an extra); a module without one is, to show that it
exports nothing.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import re
import sys
from pathlib import Path

import scwo_np

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

#: Public by name, but not Python API: the data files the wheel ships (read through scwo_np.datasets).
NOT_API = {"scwo_np.bundled"}


def _packages() -> list[str]:
    sys.path.insert(0, str(DOCS))
    try:
        apipages = importlib.import_module("apipages")
    finally:
        sys.path.remove(str(DOCS))
    return [name for name, _, _ in apipages.PACKAGES]


def _public_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(scwo_np.__path__, "scwo_np.", onerror=lambda name: None):
        if not any(part.startswith("_") for part in info.name.split(".")) and info.name not in NOT_API:
            names.append(info.name)
    return sorted(names)


def test_the_walk_finds_the_public_modules():
    found = _public_modules()
    assert {"scwo_np.select", "scwo_np.text", "scwo_np.integrations.langchain"} <= set(found), found
    assert not [m for m in found if "._" in m], found


def test_every_public_module_has_a_page_or_exports_nothing():
    pages = set(_packages())
    missing = []
    for name in _public_modules():
        if name in pages:
            continue
        # Not a page: it must be a container (a package of public modules) exporting nothing.
        spec = importlib.util.find_spec(name)
        module = importlib.import_module(name)
        exported = [n for n in getattr(module, "__all__", ()) if not n.startswith("_")]
        if exported or spec is None or spec.submodule_search_locations is None:
            missing.append(name)
    assert not missing, (
        f"public modules missing from the API reference: {missing}; add each to PACKAGES in "
        "docs/apipages.py and to the toctree of docs/api/index.rst"
    )


def test_every_page_is_a_public_module_in_the_toctree_once():
    packages = _packages()
    assert len(packages) == len(set(packages)), packages
    public = set(_public_modules()) | {"scwo_np"}
    assert not [p for p in packages if p not in public], "PACKAGES names a module that is not public"
    index = (DOCS / "api" / "index.rst").read_text(encoding="utf-8")
    toctree = re.findall(r"^   (scwo_np[\w.]*)$", index, re.M)
    assert toctree == packages, "docs/api/index.rst's toctree must list PACKAGES, in their order"


def test_the_notebooks_have_one_number_each():
    """The gallery's notebooks are numbered 01, 02, ... once each (two were both 06)."""
    numbers = [p.name.split("_", 1)[0] for p in sorted((ROOT / "notebooks").glob("*.ipynb"))]
    assert numbers == [f"{k:02d}" for k in range(1, len(numbers) + 1)], numbers
