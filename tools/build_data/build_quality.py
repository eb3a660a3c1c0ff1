"""Build the question sets of the quality-at-budget benchmark (``scwo bench --quality``), offline.

    apt-get install python3-doc python-django-doc
    pip install -e ".[embed]"
    python tools/build_data/build_quality.py      # writes data/quality/*.json.gz

Each set is real questions with known answers over a real documentation pool, as
``scwo_evals.sentences`` builds them (see its docstring): the pool is every paragraph of
the Python documentation (16,003 paragraphs, plus the glossary's definitions as their own
paragraphs) or of the Django documentation (12,572).  A retriever (all-MiniLM-L6-v2
cosine) hands each question its 50 nearest paragraphs; the file keeps those retrieved
sets, the gold paragraphs (retrieved or not) and nothing else of the pool, so the
benchmark measures selection on what a retriever really returns without carrying 16,000
paragraphs or any vector.  A rebuild gives the same bytes.

* ``python-faq``: the Python FAQ's 175 questions (its own section titles), gold = the
  paragraphs of the answer.  PSF-2.0.
* ``django-faq``: the Django FAQ's 44 questions, the same way.  BSD-3-Clause.
* ``python-glossary``: 34 comparison questions, "What is the difference between X and
  Y?", for the pairs of Python glossary terms whose definitions cite each other; gold =
  both definitions (two parts).  PSF-2.0.
* ``python-overview``: "Give an overview of json: JSON encoder and decoder." for each
  library page of 4 to 12 sections; gold = the first paragraph of every section (as many
  parts as sections; the question names none of them).  PSF-2.0.

Every question keeps the fixed ``split`` of ``scwo_evals.sentences`` (a hash of its text).

``--evals`` builds the evaluation sets of issue 43 instead, the same way, into
``scwo_evals/data/quality/`` (source tree only, never in the wheel; read by
``scwo_evals.quality_sets``), from the pools of ``scwo_evals/doc_pools.py``::

    apt-get install git-doc python-sqlalchemy-doc sqlite3-doc manpages manpages-dev wordnet-base lsof sed
    python tools/build_data/build_quality.py --evals        # or --evals --sets git,manpages

* ``git``: gitfaq(7)'s questions and the Git user manual's section titles over every paragraph
  of git-doc's AsciiDoc sources.  GPL-2.0.
* ``sqlalchemy-faq``: the SQLAlchemy 1.4 FAQ over every paragraph of its documentation.  MIT.
* ``sqlite-faq``: the SQLite FAQ over every paragraph of its documentation.  Public domain.
* ``manpages``: "How do I ...?" from the NAME lines of man pages of sections 2, 3 and 7 over
  every paragraph of sections 2, 3, 5 and 7 of the Linux man-pages.  Their licences.
* ``lsof-faq``, ``sed-faq``: the questions of lsof's FAQ and of the sed FAQ, each over every
  paragraph of that FAQ itself (plain text): FAQs over themselves, as the Debian FAQ is.

The final held-out sets (issue 43; ``scwo_evals/faq_pools.py``), built the same way and only
measured, never tuned on::

    apt-get install debian-faq perl-doc r-doc-html
    python tools/build_data/build_quality.py --evals --sets debian-faq,perlfaq,r-faq

* ``debian-faq``: the Debian FAQ's questions over every paragraph of the Debian FAQ.
* ``perlfaq``: perlfaq1-9's questions over every paragraph of the Perl pods.  GPL/Artistic.
* ``r-faq``: the R FAQ's questions over every paragraph of the R FAQ and the R manuals.  GPL-2.0+.

Embedding the four pools (about 63,000 paragraphs) takes a while on a small CPU the first time;
the vectors stay in the cache of ``scwo_evals.sentences``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "data" / "quality"
CANDIDATES = 50

#: file name -> (scwo_evals set, kind of question, source, licence)
SETS = {
    "python-faq": (
        "python-docs",
        "faq",
        "Python 3.11 documentation (Debian python3-doc): the FAQ's questions over every paragraph",
        "PSF-2.0",
    ),
    "django-faq": (
        "django-docs",
        "faq",
        "Django 3.2 documentation (Debian python-django-doc): the FAQ's questions over every paragraph",
        "BSD-3-Clause",
    ),
    "python-glossary": (
        "python-glossary",
        "comparison",
        "Python 3.11 documentation (python3-doc): pairs of glossary terms that cite each other",
        "PSF-2.0",
    ),
    "python-overview": (
        "python-overview",
        "overview",
        "Python 3.11 documentation (python3-doc): library pages of 4 to 12 sections",
        "PSF-2.0",
    ),
}


EVAL_OUT = ROOT / "scwo_evals" / "data" / "quality"

#: The evaluation sets (``--evals``), each its own pool of ``scwo_evals.sentences``.
EVAL_SETS = {
    "git": (
        "git",
        "faq",
        "Git 2.39 documentation (Debian git-doc, the AsciiDoc sources of every man page, guide, howto "
        "and technical document): gitfaq(7)'s questions and the user manual's section titles of two "
        "words or more over every paragraph",
        "GPL-2.0 (Git's documentation)",
    ),
    "sqlalchemy-faq": (
        "sqlalchemy-faq",
        "faq",
        "SQLAlchemy 1.4 documentation (Debian python-sqlalchemy-doc, Sphinx HTML): the FAQ's questions "
        "over every paragraph",
        "MIT",
    ),
    "sqlite-faq": (
        "sqlite-faq",
        "faq",
        "SQLite 3.40 documentation (Debian sqlite3-doc, hand-written HTML): the FAQ's questions over "
        "every paragraph",
        "public domain (SQLite)",
    ),
    "manpages": (
        "manpages",
        "faq",
        "Linux man-pages 6.03 (Debian manpages, manpages-dev), rendered by man: 'How do I <the NAME "
        "line's description>?' for pages of sections 2, 3 and 7 whose description is a verb phrase, "
        "gold = the first two paragraphs of DESCRIPTION, over every paragraph of sections 2, 3, 5 "
        "and 7 but the NAME lines",
        "Linux man-pages licences (mostly the 'verbatim' licence; each page states its own)",
    ),
    "lsof-faq": (
        "lsof-faq",
        "faq",
        "lsof 4.95 FAQ (Debian lsof, /usr/share/doc/lsof/00FAQ.gz, plain text): its questions (titles "
        "ending in '?', 290 of them) over every paragraph of the FAQ",
        "(c) Purdue Research Foundation, the Purdue licence (use, alter and redistribute freely, credit "
        "to the authors and Purdue, altered versions marked, the notice kept); evaluation data only",
    ),
    "sed-faq": (
        "sed-faq",
        "faq",
        "The sed FAQ, version 015 (Debian sed 4.9, /usr/share/doc/sed/sedfaq.txt.gz, plain text): its "
        "questions (titles ending in '?') over every paragraph of the FAQ",
        "distributed with GNU sed (GPL-3.0-or-later) with no notice of its own; (c) Eric Pement; "
        "evaluation data only",
    ),
    # The final held-out sets (scwo_evals/faq_pools.py): measured once, never tuned on.
    "debian-faq": (
        "debian-faq",
        "faq",
        "The Debian GNU/Linux FAQ 11.0 (Debian debian-faq 11.1, debian-faq.en.txt.gz, plain text): its "
        "questions (titles ending in '?') over every paragraph of the FAQ",
        "verbatim copies and modified versions under the same notice (c) 1996-2021 Software in the "
        "Public Interest",
    ),
    "perlfaq": (
        "perlfaq",
        "faq",
        "Perl 5.36 documentation (Debian perl-doc, /usr/share/perl/5.36.0/pod, POD): perlfaq1-9's "
        "=head2 titles ending in '?' (300 of its 303 =head2 titles) over every paragraph of every pod "
        "but perltoc and perlfaq's lists of questions",
        "the same terms as Perl itself: GPL-1.0-or-later or Artistic-1.0 (perlfaq's code examples "
        "public domain); evaluation data only",
    ),
    "r-faq": (
        "r-faq",
        "faq",
        "R 4.2.2 manuals (Debian r-doc-html, Texinfo HTML): the R FAQ's questions (section titles "
        "ending in '?') over every paragraph of the R FAQ, R-intro, R-lang, R-data, R-admin, R-exts "
        "and R-ints",
        "the R FAQ: GPL-2.0-or-later; the manuals: the R Core Team's permission notice (verbatim "
        "copies, and modified versions under the same notice); evaluation data only",
    ),
}


def build(name: str, embedder, table: dict = SETS) -> dict:
    from scwo_evals import sentences

    source_set, kind, source, licence = table[name]
    texts, questions, E, Q, cache = sentences.load(embedder, source_set)
    cache.close()
    En = E / np.linalg.norm(E, axis=1, keepdims=True)
    picked = [np.argsort(-(En @ (qv / np.linalg.norm(qv))), kind="stable")[:CANDIDATES].tolist() for qv in Q]
    keep = sorted({i for top in picked for i in top} | {i for q in questions for i in q["gold"]})
    local = {g: k for k, g in enumerate(keep)}
    return {
        "name": name,
        "kind": kind,
        "source": source,
        "licence": licence,
        "retriever": f"all-MiniLM-L6-v2 cosine, the {CANDIDATES} nearest of {len(texts):,} paragraphs",
        "paragraphs": [texts[i] for i in keep],
        "questions": [
            {
                "text": q["text"],
                "split": q["split"],
                "candidates": [local[i] for i in top],
                "gold": [local[i] for i in q["gold"]],
            }
            for q, top in zip(questions, picked, strict=True)
        ],
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--evals", action="store_true", help="the evaluation sets, into scwo_evals/data/quality/")
    p.add_argument("--sets", help="comma-separated names (default: every set of the group)")
    args = p.parse_args(argv)
    table, out = (EVAL_SETS, EVAL_OUT) if args.evals else (SETS, OUT)
    names = args.sets.split(",") if args.sets else list(table)
    for name in names:
        if name not in table:
            p.error(f"--sets: unknown set {name!r}; choose from {', '.join(table)}")
    sys.path.insert(0, str(ROOT))
    from scwo_np.embed import MiniLMEmbedder

    emb = MiniLMEmbedder()
    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        data = json.dumps(build(name, emb, table), ensure_ascii=False, separators=(",", ":")).encode()
        with (
            open(out / f"{name}.json.gz", "wb") as raw,
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as f,
        ):
            f.write(data)
        print(f"{name}: {len(data):,} bytes of JSON", file=sys.stderr)


if __name__ == "__main__":
    main()
