"""Benchmarks and evaluation: what ``scwo bench`` measures, as functions.

Selection's speed and quality, and the other capabilities' costs, measured in one run against
the baselines timed beside them (see :doc:`/benchmarks`):

- :func:`run_bench` and :func:`format_table` — the SCWO specification's benchmark table
  (``scwo bench``; ``scwo bench --write-figures FILE`` keeps one full run as the JSON the
  README's and the docs' headline figures are generated from);
- :func:`quality_at_budget` and :func:`format_quality` — how much of the known answer each
  method of ``QUALITY_METHODS`` puts into the context, for text, chunks or sentences, on the
  bundled question sets or on your own (``scwo bench --quality``, ``--set FILE.jsonl``);
- :func:`read_questions` — your own question set, a JSONL file, read and checked;
- :func:`plot_quality` — those rows drawn: hit against budget, one panel per set (matplotlib,
  the ``notebooks`` extra; ``scwo bench --quality --plot FILE.png``);
- :func:`compare_strategies` — which selection strategy (``DEFAULT_STRATEGIES``) puts the answer
  into the context, on questions with known answers, from arrays;
- :func:`hsca_bench` and :func:`format_hsca` — HSCA's budgeted context against a recency buffer
  and top-k on the bundled Python FAQ as one long session: the share of questions whose context
  holds a sentence of the answer, the context latency over 600 turns
  and ingest speed (``scwo bench --hsca``);
- :func:`crush_bench` — ``crush_json`` to a token ceiling on log records, beside headroom's
  SmartCrusher when it is installed (``scwo bench --crush``);
- :func:`mcp_latency` — a ``select_context`` round trip over stdio against the selection alone
  (``scwo bench --mcp``; needs the ``mcp`` extra, imported when it runs).

This package uses the library; no library package uses it (only the ``scwo`` command line).
"""

from ._at_budget import QUALITY_METHODS, SPLITS, format_quality, quality_at_budget
from ._crush import crush_bench
from ._hsca import format_hsca, hsca_bench
from ._mcp import mcp_latency
from ._plot import plot_quality
from ._sets import read_questions
from ._strategies import DEFAULT_STRATEGIES, compare_strategies
from ._table import format_table, run_bench

__all__ = [
    "DEFAULT_STRATEGIES",
    "QUALITY_METHODS",
    "SPLITS",
    "compare_strategies",
    "crush_bench",
    "format_hsca",
    "format_quality",
    "format_table",
    "hsca_bench",
    "mcp_latency",
    "plot_quality",
    "quality_at_budget",
    "read_questions",
    "run_bench",
]
