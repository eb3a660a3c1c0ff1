"""The ``scwo`` command line: ``select``, ``dedup``, ``optimize``, ``crush``, ``hsca``, ``demo``, ``sample``, ``bench``.

One module per command group; :mod:`~scwo_np.cli.main` builds the parser.
Library code never imports this package.
"""

from .main import build_parser, main

__all__ = ["build_parser", "main"]
