"""Shared by the notebook builders: collect cells, execute them, write the notebook with outputs."""

import subprocess
import sys
from pathlib import Path

import nbformat as nbf
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parent.parent


class Builder:
    """``md``/``code`` append cells; ``write(name)`` executes them in ``notebooks/``, saves, formats."""

    def __init__(self):
        self.cells = []

    def md(self, text):
        self.cells.append(nbf.v4.new_markdown_cell(text))

    def code(self, text):
        self.cells.append(nbf.v4.new_code_cell(text))

    def write(self, name):
        nb = nbf.v4.new_notebook(
            cells=self.cells,
            metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        )
        NotebookClient(
            nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}
        ).execute()
        nbf.write(nb, NOTEBOOKS / name)
        # The cells' code in the project's style (ruff is in the test extra), as `ruff format --check` wants.
        subprocess.run([sys.executable, "-m", "ruff", "format", "-q", str(NOTEBOOKS / name)], check=False)
        print("written", NOTEBOOKS / name)
