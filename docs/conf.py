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

from apipages import write_api_pages  # noqa: E402 - docs/ is on sys.path above


def copy_gallery() -> None:
    """The notebooks, copied beside the gallery's index (executed by the build)."""
    gallery = DOCS / "gallery"
    for old in gallery.glob("*.ipynb"):
        old.unlink()
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        shutil.copy2(nb, gallery / nb.name)


write_api_pages(DOCS / "api")
copy_gallery()

autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"  # the numpydoc sections say the types
numpydoc_show_class_members = False  # the class template lists them
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks = {"PR01", "PR02", "RT01", "EX01", "GL08", "SS01"}
# Every public function, class and method of the packages' __all__ is checked; left out are dunder
# methods, data (registries and constants, documented by their comments) and two signatures that
# are not the classes' own.
numpydoc_validation_exclude = {
    r"\.__\w+__$",
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
nb_render_markdown_format = "myst"  # Markdown outputs (the quality tables) render as MyST, with tables
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
