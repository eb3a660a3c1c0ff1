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
* ``lsof-faq``: lsof's FAQ's questions over every paragraph of that FAQ (``lsof``, plain text):
  a FAQ over itself, as the Debian FAQ of :data:`FINAL_SETS` is; Purdue's lsof licence.
* ``sed-faq``: the sed FAQ's questions over every paragraph of that FAQ (``sed``, plain text);
  shipped with GNU sed, no notice of its own.

``scwo_evals/doc_pools.py`` builds the pools, ``tools/build_data/build_quality.py --evals``
the files.

:data:`FINAL_SETS` are three more, in the same format, kept apart as the final held-out check
of issue 43: measured once with the shipped default, never tuned on (no setting may be chosen
on them; ``scwo_evals.relevance``'s sources leave them out).  Their pools are built by
``scwo_evals/faq_pools.py``:

* ``debian-faq``: the Debian FAQ's questions over every paragraph of the Debian FAQ
  (``debian-faq``, plain text); verbatim copies under SPI's notice.
* ``perlfaq``: perlfaq1-9's questions over every paragraph of every Perl pod (``perl-doc``,
  POD); GPL or Artistic.
* ``r-faq``: the R FAQ's questions over every paragraph of the R FAQ and the R manuals
  (``r-doc-html``, Texinfo HTML); GPL-2.0+ (the FAQ), R Core's verbatim notice (the manuals).

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
EVAL_SETS: tuple[str, ...] = ("git", "sqlalchemy-faq", "sqlite-faq", "manpages", "lsof-faq", "sed-faq")
#: The final held-out sets (issue 43): measured with the shipped default only, never tuned on.
FINAL_SETS: tuple[str, ...] = ("debian-faq", "perlfaq", "r-faq")


def load(name: str) -> QuestionSet:
    """The evaluation set ``name`` (one of :data:`EVAL_SETS` or :data:`FINAL_SETS`) as a
    :class:`~scwo_np.datasets.QuestionSet`."""
    if name not in EVAL_SETS + FINAL_SETS:
        raise ValueError(f"name must be one of {', '.join(EVAL_SETS + FINAL_SETS)}; got {name!r}")
    return _question_set(json.loads(gzip.decompress((DATA / f"{name}.json.gz").read_bytes())))
