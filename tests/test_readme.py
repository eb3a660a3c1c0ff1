"""Every code block in the README runs as pasted.

The Python blocks run in order in one namespace (a reader pastes them into one
session); the ``bash`` blocks after the first (the install lines, which
``.ci/run`` runs verbatim) run line by line, in order, in one scratch folder;
a line fails the test on a non-zero status or a traceback.  Both run in a
scratch working directory, so whatever the examples write lands there.
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
        'python -m pip install -e ".[test]" && python -m pytest',
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
