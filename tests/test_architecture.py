"""The package map of CONTRIBUTING.md, enforced: who may import whom, and module sizes.

Capabilities stand apart: they share the core (top-level private modules,
``validation``, ``text``, ``datasets``) and the pipelines (``optimize``) may
use ``select`` and ``dedup``.  Nothing in the library imports the CLI.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "scwo_np"

#: Capability -> the capabilities it may import (besides the core).
ALLOWED = {
    "select": {"embed"},  # select_texts embeds its texts
    "dedup": {"embed"},  # cosine dedup can embed its texts
    "anchor": set(),
    "hsca": {"select", "embed"},  # the context is budgeted MMR over the turns, optionally embedded
    "embed": set(),
    "optimize": {"select", "dedup", "embed"},
    "rerank": {"select"},
    # anchor: the tool-output middleware crushes JSON; hsca: the history middleware surfaces its context
    "shrink": {"select", "anchor"},  # a tool output by its shape: JSON and records crushed, prose selected
    "integrations": {"select", "dedup", "embed", "anchor", "hsca", "shrink"},
    "mcp_server": {
        "select",
        "dedup",
        "anchor",
        "hsca",
        "embed",
        "shrink",
    },  # the tools are those capabilities
    # benchmarks and evaluation use every capability (mcp_server lazily: the mcp extra); none uses them
    "bench": {
        "select",
        "dedup",
        "anchor",
        "hsca",
        "embed",
        "optimize",
        "rerank",
        "shrink",
        "integrations",
        "mcp_server",
    },
    "cli": {
        "select",
        "dedup",
        "anchor",
        "hsca",
        "embed",
        "optimize",
        "rerank",
        "shrink",
        "mcp_server",
        "bench",
    },
    "core": set(),
}
CAPABILITIES = {
    "select", "dedup", "anchor", "hsca", "embed", "optimize", "rerank", "shrink", "integrations", "mcp_server",
    "bench", "cli",
}  # fmt: skip


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


def _docstring_lines(tree: ast.AST) -> int:
    """Lines taken by the docstrings of a module, its classes and functions."""
    n = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                if isinstance(body[0].value.value, str):
                    n += body[0].end_lineno - body[0].lineno + 1
    return n


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PKG)))
def test_no_module_over_about_600_lines(path):
    """Code, not documentation: numpydoc sections with examples do not make a module too big."""
    text = path.read_text(encoding="utf-8")
    n = len(text.splitlines()) - _docstring_lines(ast.parse(text))
    assert n <= 650, f"{path.relative_to(PKG)} has {n} lines besides its docstrings; split it by algorithm"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PKG.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph() -> dict[str, set[str]]:
    """Module -> the scwo_np modules it imports, anywhere in it (inside functions too).

    ``from package import name`` counts as an import of the submodule when ``name``
    is one, else of the package.  A module importing its own package (the facade
    that re-exports it) is left out: that is how every ``__init__`` works.
    """
    mods = {_module_name(p): p for p in MODULES}
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, path in mods.items():
        pkg = m if path.name == "__init__.py" else m.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = pkg.rsplit(".", node.level - 1)[0] if node.level > 1 else pkg
                    base = f"{up}.{node.module}" if node.module else up
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for t in targets:
                while t not in mods and "." in t:
                    t = t.rsplit(".", 1)[0]
                if t in mods and t != m and not m.startswith(t + "."):
                    graph[m].add(t)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_no_import_cycles_counting_imports_inside_functions():
    cycles = _cycles(_import_graph())
    assert not cycles, "import cycles (break them; an import inside a function counts): " + "; ".join(
        " <-> ".join(c) for c in cycles
    )


def test_the_cycle_check_sees_a_cycle_through_a_function_level_import():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


#: Public modules inside capability packages: importing them imports their framework.
PUBLIC_MODULES = {"integrations/haystack.py", "integrations/langchain.py", "integrations/llamaindex.py"}


def test_implementation_modules_are_private():
    """As in scikit-learn: a package's ``__init__`` is its surface, the modules behind it are ``_``-named."""
    public = [
        p.relative_to(PKG).as_posix()
        for p in sorted(PKG.glob("*/*.py"))
        if p.parts[-2] in CAPABILITIES and not p.name.startswith("_")
    ]
    assert sorted(public) == sorted(PUBLIC_MODULES)


def _user_facing_code() -> list[tuple[str, str]]:
    root = PKG.parent
    out = [("README.md", (root / "README.md").read_text(encoding="utf-8"))]
    for nb in sorted((root / "notebooks").glob("*.ipynb")):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        out.append((nb.name, "\n".join("".join(c["source"]) for c in cells)))
    for src in sorted((root / "notebooks" / "src").glob("make_*.py")):
        out.append((src.name, src.read_text(encoding="utf-8")))
    for page in sorted((root / "docs").rglob("*.md")):  # the site's guides (their code runs at build)
        if "_build" not in page.parts and page.name != "developer.md":  # developers read the insides
            out.append((page.relative_to(root).as_posix(), page.read_text(encoding="utf-8")))
    return out


@pytest.mark.parametrize(
    "name, text", _user_facing_code(), ids=lambda x: x if x.endswith(("md", "ipynb", "py")) else ""
)
def test_user_facing_code_uses_only_the_public_surface(name, text):
    """README, notebooks and the site's pages show what users may rely on: no private module or name."""
    private = re.findall(
        r"scwo_np(?:\.\w+)*\._(?!_)\w+|from scwo_np(?:\.\w+)* import [^\n]*\b_(?!_)\w+", text
    )
    assert not private, f"{name} uses private names: {private}"


def _map_sections() -> dict[str, str]:
    """CONTRIBUTING.md's map, cut by package: ``""`` for the core's lines, ``"select"`` and so on."""
    text = (PKG.parent / "CONTRIBUTING.md").read_text(encoding="utf-8")
    block = text.split("## The map", 1)[1].split("```", 2)[1]
    sections: dict[str, str] = {"": ""}
    current: str | None = ""
    for line in block.splitlines():
        head = re.match(r"^  (\w+)/", line)
        if head:
            current = head.group(1)
        elif re.match(r"^\S", line) and not line.startswith("scwo_np/"):
            current = None  # data/, tools/ ...: outside the package
        if current is not None:
            sections[current] = sections.get(current, "") + line + "\n"
    return sections


def test_the_map_names_every_module():
    sections = _map_sections()
    missing = []
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG)
        if path.stem in ("__init__", "__main__") or "bundled" in rel.parts:
            continue
        where = rel.parts[0] if len(rel.parts) > 1 else ""
        if not re.search(rf"(?<!\w){re.escape(path.stem)}(?!\w)", sections.get(where, "")):
            missing.append(str(rel))
    assert not missing, f"CONTRIBUTING.md's map does not name {missing}: add each where it belongs."


#: The MMR kernel path, top to bottom (select/_driver.py's module docs); ``_config`` holds flags only.
KERNEL_PATH = ["scwo_np.select._driver", "scwo_np.select._heap", "scwo_np._dot"]


def test_the_mmr_kernel_path_is_three_modules_and_calls_only_go_down():
    """Driver -> heap, dot; heap and dot import neither of the others; every MMR entry point
    (the wrappers, batch, the strategies' preparation) reaches the kernels through the driver."""
    graph = _import_graph()
    flags = {"scwo_np._config"}
    for k, mod in enumerate(KERNEL_PATH):
        below = set(KERNEL_PATH[k + 1 :])
        imported = graph[mod] - flags
        assert imported <= below, f"{mod} imports {sorted(imported - below)}: the kernel path only goes down"
    assert graph["scwo_np.select._driver"] - flags == {"scwo_np.select._heap", "scwo_np._dot"}
    assert not [m for m in graph if m.split(".")[-1] in ("_first_pass", "_lazy_heap")]
    for user in ("scwo_np.select._mmr", "scwo_np.select._batch"):
        assert "scwo_np.select._driver" in graph[user] and "scwo_np.select._heap" not in graph[user]


def test_the_wheel_lists_every_package():
    """pyproject's explicit package list names every package (a new one left out installs from a
    checkout, where the tests run, and is missing from the wheel README line 1 installs)."""
    import tomllib

    listed = set(tomllib.loads((PKG.parent / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(PKG.parent).parts) for p in PKG.rglob("__init__.py")}
    assert found - listed == set(), (
        f"add {sorted(found - listed)} to [tool.setuptools] packages in pyproject.toml"
    )


def test_importing_the_package_leaves_the_environment_as_it_was():
    """threadpoolctl, imported at the top of the LSA module, set KMP_DUPLICATE_LIB_OK=True in
    os.environ, which every process a user's program starts inherits (the MCP proxy's upstream
    server did; a new user's trial): nothing is set by importing scwo_np and its CLI."""
    code = (
        "import os; before = dict(os.environ)\n"
        "import scwo_np, scwo_np.cli, scwo_np.embed, scwo_np.select, scwo_np.shrink, scwo_np.hsca\n"
        "print(sorted(set(os.environ.items()) ^ set(before.items())))"
    )
    env = {k: v for k, v in os.environ.items() if k != "KMP_DUPLICATE_LIB_OK"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
