"""More question sets for the quality-at-budget benchmark, from sources of other kinds (issue 43).

Each set is in the format of the bundled ones (``data/quality/*.json.gz``, read by
:func:`scwo_np.datasets.load_questions`): real questions with known answers, each with the 50
paragraphs all-MiniLM-L6-v2 retrieved for it from every paragraph of a documentation set, and
the paragraphs of its answer (retrieved or not), with the fixed ``split`` of
``scwo_evals.sentences``.  They stay in the source tree (``scwo_evals/data/quality/``), for
tuning a default by leave-one-source-out; ``scwo_evals/README.md`` lists source and licence:

* ``git``: gitfaq(7)'s questions and the Git user manual's section titles, over every
  paragraph of Git's documentation (Debian ``git-doc``, AsciiDoc); GPL-2.0.
* ``sqlalchemy-faq``: the SQLAlchemy 1.4 FAQ's questions over every paragraph of the SQLAlchemy
  documentation (``python-sqlalchemy-doc``, Sphinx HTML); MIT.
* ``sqlite-faq``: the SQLite FAQ's questions over every paragraph of the SQLite documentation
  (``sqlite3-doc``, hand-written HTML); public domain.
* ``manpages``: "How do I <what the NAME line says>?" for man pages of sections 2, 3 and 7
  (gold: the first two paragraphs of DESCRIPTION), over every paragraph of sections 2, 3, 5
  and 7 of the Linux man-pages (``manpages``, ``manpages-dev``); the man-pages licences.

``scwo_evals/doc_pools.py`` builds the pools, ``tools/build_data/build_quality.py --evals``
the files.

Examples
--------
>>> from scwo_evals.quality_sets import EVAL_SETS, load
>>> qs = load("sqlite-faq")
>>> qs.kind, len(qs.candidates[0]), qs.licence
('faq', 50, 'public domain (SQLite)')
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from scwo_np.datasets import QuestionSet, _question_set

DATA = Path(__file__).resolve().parent / "data" / "quality"

#: The evaluation sets (each one source, of its own kind).
EVAL_SETS: tuple[str, ...] = ("git", "sqlalchemy-faq", "sqlite-faq", "manpages")


def load(name: str) -> QuestionSet:
    """The evaluation set ``name`` (one of :data:`EVAL_SETS`) as a :class:`~scwo_np.datasets.QuestionSet`."""
    if name not in EVAL_SETS:
        raise ValueError(f"name must be one of {', '.join(EVAL_SETS)}; got {name!r}")
    return _question_set(json.loads(gzip.decompress((DATA / f"{name}.json.gz").read_bytes())))
