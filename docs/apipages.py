"""The API reference's pages: every public package's ``__all__``, each object documented once.

Used by ``conf.py`` (which writes the pages at build time) and by ``tests/test_docs.py``
(which checks that every public name has its page in the built site).
"""

from __future__ import annotations

import importlib
import inspect
import shutil
from pathlib import Path

# --- The public surface: the packages whose __all__ the reference lists -------------------

#: (module, title, one line) in the order of the reference.
PACKAGES = [
    ("scwo_np", "scwo_np", "The top level: selection from arrays and from text."),
    ("scwo_np.select", "scwo_np.select", "Budgeted MMR, its strategies, batches and text."),
    ("scwo_np.dedup", "scwo_np.dedup", "Near-duplicate detection: Jaccard, MinHash, cosine, sequence."),
    ("scwo_np.optimize", "scwo_np.optimize", "The KB Labs and MoRAG context optimizers."),
    ("scwo_np.anchor", "scwo_np.anchor", "Dynamic anchoring of large JSON arrays (SmartCrusher)."),
    ("scwo_np.shrink", "scwo_np.shrink", "Any tool output (JSON, diffs, logs, prose) within a token budget."),
    ("scwo_np.hsca", "scwo_np.hsca", "HSCA: the four-layer text pipeline and its snapshot store."),
    ("scwo_np.rerank", "scwo_np.rerank", "Batch reranking of Parquet and Arrow tables, with Dask."),
    ("scwo_np.embed", "scwo_np.embed", "Embedders (LSA, MiniLM) and the embedding cache."),
    ("scwo_np.tokens", "scwo_np.tokens", "Token counters."),
    ("scwo_np.text", "scwo_np.text", "Words, stop words, stems, sentences, ragged arrays."),
    ("scwo_np.datasets", "scwo_np.datasets", "The bundled sample data."),
    ("scwo_np.validation", "scwo_np.validation", "The argument checks every public function uses."),
    ("scwo_np.integrations.langchain", "scwo_np.integrations.langchain", "LangChain components."),
    ("scwo_np.integrations.llamaindex", "scwo_np.integrations.llamaindex", "LlamaIndex components."),
    ("scwo_np.integrations.haystack", "scwo_np.integrations.haystack", "Haystack components."),
    ("scwo_np.mcp_server", "scwo_np.mcp_server", "The MCP server ``scwo mcp``: its tools and limits."),
    ("scwo_np.bench", "scwo_np.bench", "Benchmarks and evaluation: what ``scwo bench`` measures."),
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


def write_api_pages(out: Path) -> None:
    """``api/<package>.rst`` for every package: its ``__all__``, grouped by kind, each name
    autosummarised on its home page and linked from the other packages that export it."""
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
