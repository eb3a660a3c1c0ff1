"""Sphinx configuration of the scwo_np documentation (``python -m sphinx -W --keep-going -b html docs docs/_build/html``).

Two things are generated at build time, into folders git ignores:

- ``api/<package>.rst``: one page per public package, listing every name of its ``__all__``
  (autosummary then writes one page per name); a name missing from ``__all__`` is missing
  from the reference, and one in ``__all__`` cannot be left out;
- ``gallery/*.ipynb``: copies of ``notebooks/*.ipynb``, executed by myst-nb during the build,
  so that the figures on the site are the ones today's code draws.

The user-guide pages are MyST-NB text notebooks: their code cells run during the build, so an
example that stops working fails the build. Nothing is fetched from a CDN (the theme ships
its assets; MathJax and the widget scripts are turned off).
"""

from __future__ import annotations

import importlib
import inspect
import os
import shutil
import sys
from datetime import date
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS))
os.environ.setdefault("PYTHONWARNINGS", "ignore::DeprecationWarning")

import scwo_np  # noqa: E402

project = "scwo_np"
author = "scwo_np developers"
copyright = f"{date.today().year}, {author} (MIT licence)"  # noqa: A001 - Sphinx's name
version = release = scwo_np.__version__ if hasattr(scwo_np, "__version__") else "0.1.0"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_nb",
]

exclude_patterns = ["_build", "**.ipynb_checkpoints", "jupyter_execute"]
templates_path = ["_templates"]
html_static_path = ["_static"]
html_css_files = ["scwo.css"]

# --- The public surface: the packages whose __all__ the reference lists -------------------

#: (module, title, one line) in the order of the reference.
PACKAGES = [
    ("scwo_np", "scwo_np", "The top level: selection from arrays and from text."),
    ("scwo_np.select", "scwo_np.select", "Budgeted MMR, its strategies, batches and text."),
    ("scwo_np.dedup", "scwo_np.dedup", "Near-duplicate detection: Jaccard, MinHash, cosine, sequence."),
    ("scwo_np.optimize", "scwo_np.optimize", "The KB Labs and MoRAG context optimizers."),
    ("scwo_np.anchor", "scwo_np.anchor", "Dynamic anchoring of large JSON arrays (SmartCrusher)."),
    ("scwo_np.hsca", "scwo_np.hsca", "HSCA: the four-layer text pipeline and its snapshot store."),
    ("scwo_np.rerank", "scwo_np.rerank", "Batch reranking of Parquet and Arrow tables, with Dask."),
    ("scwo_np.embed", "scwo_np.embed", "Embedders (LSA, MiniLM) and the embedding cache."),
    ("scwo_np.tokens", "scwo_np.tokens", "Token counters."),
    ("scwo_np.text", "scwo_np.text", "Ragged text arrays."),
    ("scwo_np.datasets", "scwo_np.datasets", "The bundled sample data."),
    ("scwo_np.validation", "scwo_np.validation", "The argument checks every public function uses."),
    ("scwo_np.integrations.langchain", "scwo_np.integrations.langchain", "LangChain components."),
    ("scwo_np.integrations.llamaindex", "scwo_np.integrations.llamaindex", "LlamaIndex components."),
    ("scwo_np.cli", "scwo_np.cli", "The ``scwo`` command line, from Python."),
]


def _kind(obj: object) -> str:
    if inspect.isclass(obj):
        return "class"
    if callable(obj):
        return "function"
    return "data"


def canonical_homes() -> dict[int, str]:
    """Each public object's one documented home: of the packages exporting it, the one its
    ``__module__`` lives in, else the deepest (``scwo_np.select`` over ``scwo_np``)."""
    homes: dict[int, list[str]] = {}
    objects = {}
    for modname, _, _ in PACKAGES:
        mod = importlib.import_module(modname)
        for name in mod.__all__:
            obj = getattr(mod, name)
            objects[id(obj)] = obj
            homes.setdefault(id(obj), []).append(modname)
    out = {}
    for key, mods in homes.items():
        where = getattr(objects[key], "__module__", "") or ""
        inside = [m for m in mods if where == m or where.startswith(m + ".")]
        pool = inside or mods
        out[key] = max(pool, key=lambda m: (m.count("."), -mods.index(m)))
    return out


def write_api_pages() -> None:
    """``api/<package>.rst`` for every package: its ``__all__``, grouped by kind, each name
    autosummarised on its home page and linked from the other packages that export it."""
    out = DOCS / "api"
    shutil.rmtree(out / "generated", ignore_errors=True)
    out.mkdir(exist_ok=True)
    for old in out.glob("scwo_np*.rst"):
        old.unlink()
    homes = canonical_homes()
    for modname, title, line in PACKAGES:
        mod = importlib.import_module(modname)
        groups: dict[str, list[str]] = {"class": [], "function": [], "data": []}
        elsewhere: list[tuple[str, str]] = []
        for name in mod.__all__:
            obj = getattr(mod, name)
            home = homes[id(obj)]
            if home == modname:
                groups[_kind(obj)].append(name)
            else:
                elsewhere.append((name, home))
        text = [title, "=" * len(title), "", f".. automodule:: {modname}", "   :no-members:", "", line, ""]
        for kind, heading in (
            ("function", "Functions"),
            ("class", "Classes"),
            ("data", "Names and registries"),
        ):
            if not groups[kind]:
                continue
            template = {"class": "class.rst", "function": "function.rst", "data": "data.rst"}[kind]
            text += [heading, "-" * len(heading), "", f".. currentmodule:: {modname}", "",
                     ".. autosummary::", "   :toctree: generated", f"   :template: {template}", ""]  # fmt: skip
            text += [f"   {n}" for n in sorted(groups[kind], key=str.lower)] + [""]
        if elsewhere:
            heading = "Also exported here"
            text += [
                heading,
                "-" * len(heading),
                "",
                f"These names of ``{modname}`` are documented where they live:",
                "",
            ]
            text += [
                f"- :py:obj:`{n} <{home}.{n}>` (``{home}.{n}``)"
                for n, home in sorted(elsewhere, key=lambda x: x[0].lower())
            ]
            text += [""]
        (out / f"{modname}.rst").write_text("\n".join(text), encoding="utf-8")


def copy_gallery() -> None:
    """The notebooks, copied beside the gallery's index (executed by the build)."""
    gallery = DOCS / "gallery"
    for old in gallery.glob("*.ipynb"):
        old.unlink()
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        shutil.copy2(nb, gallery / nb.name)


write_api_pages()
copy_gallery()

autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"  # the numpydoc sections say the types
numpydoc_show_class_members = False  # the class template lists them
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks = {"PR01", "PR02", "RT01", "EX01", "GL08", "SS01"}
# Methods, properties and dataclass fields are documented on their class page; the checks
# above hold for every public function and class of the packages' __all__.
numpydoc_validation_exclude = {
    r"\.__\w+__$",
    r"\.[A-Z]\w*\.[a-z_]\w*$",
    r"\.[A-Z][A-Z0-9_]*$",  # registries and constants (data, documented by their comment)
    # Signatures that are not theirs: Enum's functional API, typing.Protocol's (*args, **kwargs).
    r"^scwo_np\.hsca\.(DomainTag|NuanceFlag)$",
    r"^scwo_np\.embed\.Embedder$",
}

intersphinx_mapping = {}  # offline: no inventory is fetched
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

# --- myst-nb: run every notebook and text notebook during the build -----------------------
nb_execution_mode = "force"
nb_execution_timeout = 900
nb_execution_raise_on_error = (
    False  # a failing cell is a warning: -W fails the build, --keep-going lists them all
)
nb_execution_show_tb = True
nb_ipywidgets_js = {}  # no widget scripts from a CDN
nb_merge_streams = True
suppress_warnings = ["mystnb.unknown_mime_type"]

# MathJax (a CDN script) is added only to pages with maths, and no page has any;
# tests/test_docs.py fails on any page that loads a script or a style sheet from elsewhere.

html_theme = "pydata_sphinx_theme"
html_title = "scwo_np"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 7,
    "icon_links": [],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
    "secondary_sidebar_items": ["page-toc"],
    "navbar_end": ["theme-switcher"],
}
html_show_sourcelink = False
html_last_updated_fmt = None
