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
"""

from __future__ import annotations

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


def build(name: str, embedder) -> dict:
    from scwo_evals import sentences

    source_set, kind, source, licence = SETS[name]
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


def main() -> None:
    sys.path.insert(0, str(ROOT))
    from scwo_np.embed import MiniLMEmbedder

    emb = MiniLMEmbedder()
    OUT.mkdir(parents=True, exist_ok=True)
    for name in SETS:
        data = json.dumps(build(name, emb), ensure_ascii=False, separators=(",", ":")).encode()
        with (
            open(OUT / f"{name}.json.gz", "wb") as raw,
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as f,
        ):
            f.write(data)
        print(f"{name}: {len(data):,} bytes of JSON", file=sys.stderr)


if __name__ == "__main__":
    main()
