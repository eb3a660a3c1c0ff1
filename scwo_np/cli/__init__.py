"""The ``scwo`` command line: ``select``, ``dedup``, ``optimize``, ``crush``, ``hsca``, ``demo``, ``sample``, ``bench``.

One private module per command group, each adding its own sub-commands to the parser
that :func:`build_parser` makes; :func:`main` runs one command.
Library code never imports this package.
"""

from ._main import build_parser, main

__all__ = ["build_parser", "main"]
