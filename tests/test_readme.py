"""Every code block in the README runs as pasted.

The Python blocks run in order in one namespace (a reader pastes them into one
session); the ``bash`` blocks after the first (the install lines, which
``.ci/run`` runs verbatim) run line by line, in order, in one scratch folder;
a line fails the test on a non-zero status or a traceback.  Both run in a
scratch working directory, so whatever the examples write lands there.  The
other command lines (the ``text`` blocks: the install lines with extras and the
docs build) must be lines of ``.ci/run``, verbatim and in the README's order:
a command that only a test reads can break on a fresh clone unseen.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.S | re.M)


def _blocks(lang: str) -> list[str]:
    return [body for kind, body in BLOCK.findall(README.read_text(encoding="utf-8")) if kind == lang]


def test_readme_opens_with_the_two_command_lines():
    first = BLOCK.search(README.read_text(encoding="utf-8"))
    assert first and first.group(1) == "bash"
    lines = first.group(2).strip().splitlines()
    assert lines == [
        "python -m pip install . && scwo demo",
        'python -m pip install -e ".[test]" && python -m pytest -n 2',
    ]


@pytest.mark.integration
def test_python_blocks_run_in_order(tmp_path, monkeypatch):
    blocks = _blocks("python")
    assert blocks, "the README has no Python examples"
    monkeypatch.chdir(tmp_path)
    ns: dict = {"__name__": "__readme__"}
    for k, code in enumerate(blocks):
        try:
            exec(compile(code, f"README.md python block {k + 1}", "exec"), ns)
        except Exception as exc:  # noqa: BLE001 - say which block
            pytest.fail(f"README python block {k + 1} failed: {type(exc).__name__}: {exc}\n{code}")


@pytest.mark.system
def test_shell_blocks_run_in_order(tmp_path):
    blocks = _blocks("bash")[1:]
    assert blocks, "the README has no command-line examples"
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    for k, code in enumerate(blocks):
        for line in code.strip().splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            r = subprocess.run(
                ["bash", "-c", "set -e\n" + line],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            where = f"README bash block {k + 2}: {line}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
            assert r.returncode == 0, where
            assert "Traceback" not in r.stderr, where  # also where a pipe closed early (| head)


def test_ci_runs_the_two_lines_verbatim_first_in_order():
    ci = [ln.strip() for ln in (README.parent / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    lines = BLOCK.search(README.read_text(encoding="utf-8")).group(2).strip().splitlines()
    at = [ci.index(ln) for ln in lines]  # a ValueError names a line that .ci/run does not run verbatim
    assert at == sorted(at)
    before = [ln for ln in ci[: at[0]] if ln and not ln.startswith("#")]
    assert not any("pip install" in ln or "pytest" in ln for ln in before), before


def _command_lines(body: str) -> list[str]:
    """The lines of a block that are commands (not blank, not a comment), as written."""
    return [ln.rstrip() for ln in body.strip().splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


def test_ci_runs_every_other_command_line_of_the_readme_verbatim():
    """Every line of the README's ``text`` blocks is a line of ``.ci/run`` (the comment too), in order.

    The first ``bash`` block is checked above, the other ``bash`` blocks run in
    ``test_shell_blocks_run_in_order`` (the system leg), the ``python`` blocks in
    ``test_python_blocks_run_in_order``; this covers the rest, among them the docs build
    (``pip install -e ".[docs]"`` then Sphinx ``-W``), which the ``ci`` extra alone would hide.
    """
    ci = [ln.strip() for ln in (README.parent / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    blocks = [_command_lines(body) for body in _blocks("text")]
    assert any(any("sphinx" in ln for ln in b) for b in blocks), (
        "the README's docs command is not in a text block"
    )
    for lines in blocks:
        missing = [ln for ln in lines if ln not in ci]
        assert not missing, f".ci/run does not run these README lines verbatim: {missing}"
        at = [ci.index(ln) for ln in lines]
        assert at == sorted(at), f".ci/run runs these README lines out of order: {lines}"


def test_ci_builds_the_docs_in_a_fresh_venv_of_their_own():
    """The README's docs lines run in a venv made just before them, from nothing, so that the
    ``docs`` extra alone must bring what the executed pages import."""
    ci = [ln.strip() for ln in (README.parent / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    docs = next(_command_lines(b) for b in _blocks("text") if "sphinx" in b)
    install = ci.index(docs[0])
    made = [k for k, ln in enumerate(ci[:install]) if ln.startswith("python3 -m venv ")]
    assert made, "no venv is made before the README's docs lines"
    venv = ci[made[-1]].split()[-1]
    between = ci[made[-1] + 1 : install]
    assert f". {venv}/bin/activate" in between, between
    assert not any("pip install" in ln for ln in between), between
    assert ci[install : install + len(docs)] == docs, "the README's docs lines run one after the other"


def _capabilities(text: str) -> list[tuple[str, str]]:
    """(capability, guide page) of each row of the capability table."""
    rows = re.findall(r"^\| ([a-zA-Z][^|]*?) \| [^|]+ \| \[[^]]+\]\((?:docs/)?([^)]+)\) \|$", text, re.M)
    return [(name, page) for name, page in rows if name != "capability"]


def test_the_index_lists_the_readmes_capabilities():
    """The site's front page and the README draw the same capability table (names and guides)."""
    readme = _capabilities(README.read_text(encoding="utf-8"))
    index = _capabilities((README.parent / "docs" / "index.md").read_text(encoding="utf-8"))
    assert len(readme) >= 9, readme
    assert index == readme
    for _, page in index:
        assert (README.parent / "docs" / page).is_file(), page
