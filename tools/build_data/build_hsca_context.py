"""Build the long-interaction question sets of HSCA's budgeted context (issue 42), offline.

    apt-get install python3-doc python-django-doc debian-faq git-doc sqlite3-doc python-sqlalchemy-doc
    python tools/build_data/build_hsca_context.py      # writes scwo_evals/data/hsca_context/*.json.gz

The recipe of issue 42: a FAQ's (or a manual's) answer paragraphs, in document order and
without their titles, are the turns of one session; its questions, asked afterwards, are the
section titles, each with the turns of its section as the gold answer (0-based turn indices).
A context answers a question when it holds, verbatim, a sentence of the gold turns
(``scwo_evals.hsca_context`` says which sentences count).  Paragraphs are cut as
``build_faq_eval.py`` cuts the Python FAQ's (reST roles reduced to their text, a literal
block joined to the paragraph before it, paragraphs under 25 words merged with the next one
of the same section, cut at 220 words), so the Python FAQ's session is exactly the bundled
``data/faq_eval.jsonl``.  Sections that are not questions stay in as turns (distractors).

Each source has a fixed ``role``, set before anything was measured: ``tune`` (the engine's
settings may be chosen on it) or ``held_out`` (reported only).  The kinds differ on purpose:
reST, Sphinx HTML, a plain-text FAQ, AsciiDoc, hand-written HTML.

No embedding, no network; a rebuild gives the same bytes (gzip with mtime 0).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "scwo_evals" / "data" / "hsca_context"
sys.path.insert(0, str(ROOT / "tools" / "build_data"))
sys.path.insert(0, str(ROOT))

import build_faq_eval as faq  # noqa: E402

DOC = Path("/usr/share/doc")


def _session(sections: list[tuple[str, list[str]]], *, question=lambda t: t.endswith("?")):
    """Turns (every section's paragraphs, in order) and questions (titles that ask, with their turns)."""
    turns: list[str] = []
    questions: list[dict] = []
    for title, paras in sections:
        ids = []
        for p in paras:
            ids.append(len(turns))
            turns.append(p)
        title = re.sub(r"\s+", " ", title).strip()
        if ids and question(title):
            questions.append({"text": title, "gold": ids})
    return turns, questions


# -- reST: the Python FAQ ---------------------------------------------------------------------


def python_faq():
    turns, questions = [], []
    chunks, qs = faq.build()  # the bundled set's own builder: the same turns, in the same order
    turns = [c["text"] for c in chunks]
    questions = [{"text": q["text"], "gold": q["gold"]} for q in qs]
    return turns, questions


# -- Sphinx HTML: the Django and SQLAlchemy FAQs -------------------------------------------------


def _html_sections(path: Path) -> list[tuple[str, list[str]]]:
    from scwo_evals.sentences import _Sections

    class Sections(_Sections):
        def handle_starttag(self, tag, attrs):
            if tag == "section":  # newer Sphinx themes: <section> instead of <div class="section">
                self._on = True
            if tag == "div" and dict(attrs).get("id") in ("docs-bottom-navigation", "docs-copyright"):
                self._on = False  # SQLAlchemy's footer
                return
            super().handle_starttag(tag, attrs)

    parser = Sections()
    html = path.read_text(encoding="utf-8", errors="replace")
    # the local table of contents at the top of a page (SQLAlchemy's) repeats the titles as <p>
    parser.feed(re.sub(r'<div class="contents[^"]*"[^>]*>.*?</div>', "", html, flags=re.S))
    return [(t, faq.merge_and_cut(ps)) for t, ps in parser.sections]


def _sphinx_faq(folder: Path, pages: list[str]):
    if not folder.is_dir():
        raise SystemExit(f"no {folder}: see this script's docstring for the packages")
    sections = [s for page in pages for s in _html_sections(folder / f"{page}.html")]
    return _session(sections)


def django_faq():
    pages = ["general", "install", "usage", "help", "models", "admin", "contributing", "troubleshooting"]
    return _sphinx_faq(DOC / "python-django-doc" / "html" / "faq", pages)


def sqlalchemy_faq():
    pages = [
        "installation",
        "connections",
        "metadata_schema",
        "sqlexpressions",
        "ormconfiguration",
        "performance",
        "sessions",
        "thirdparty",
    ]
    return _sphinx_faq(DOC / "python-sqlalchemy-doc" / "html" / "faq", pages)


# -- plain text: the Debian FAQ ----------------------------------------------------------------

_NUMBERED = re.compile(r"^(?:Chapter\s)?(\d+(?:\.\d+)*)\.\s+(\S.*)$")


def debian_faq():
    path = DOC / "debian" / "FAQ" / "debian-faq.en.txt.gz"
    if not path.is_file():
        raise SystemExit(f"no {path}: apt-get install debian-faq")
    lines = gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"Chapter\s1\.\s", line))
    sections: list[tuple[str, list[str]]] = []
    block: list[str] = []

    def close():
        if block and sections:
            text = re.sub(r"\s+", " ", " ".join(block)).strip()
            if text and not re.fullmatch(r"[\W_]+", text):
                if block[0].startswith("        ") and sections[-1][1]:  # a deeper indent: an example
                    sections[-1][1][-1] += " " + text
                else:
                    sections[-1][1].append(text)
        block.clear()

    i = start
    while i < len(lines):
        line = lines[i]
        m = _NUMBERED.match(line)
        if m:  # a title at column 0, perhaps wrapped over more lines at column 0
            close()
            title = [m.group(2)]
            while i + 1 < len(lines) and lines[i + 1][:1].strip():
                i += 1
                title.append(lines[i].strip())
            sections.append((" ".join(title), []))
        elif not line.strip() or line.lstrip().startswith("* ") or set(line.strip()) == {"-"}:
            close()  # a blank line, a new bullet or a rule starts a new paragraph
            if line.strip() and set(line.strip()) != {"-"}:
                block.append(line)
        else:
            block.append(line)
        i += 1
    close()
    return _session([(t, faq.merge_and_cut(ps)) for t, ps in sections])


# -- AsciiDoc: gitfaq(7) and the Git user manual ------------------------------------------------

_ADOC_LINK = re.compile(r"linkgit:([\w-]+)\[(\d)\]")
_XREF = re.compile(r"<<([\w-]+)(?:,\s*([^>]*))?>>")


def _adoc_clean(text: str) -> str:
    text = _ADOC_LINK.sub(r"\1(\2)", text)
    text = _XREF.sub(lambda m: m.group(2) or m.group(1).replace("-", " "), text)
    text = text.replace("`", "").replace("'", "'")
    return re.sub(r"\s+", " ", text).strip()


def _adoc_paragraphs(lines: list[str]) -> list[str]:
    """Paragraphs of AsciiDoc body lines: ``+`` continuations split, listings joined to the paragraph before."""
    paras: list[str] = []
    block: list[str] = []
    listing = False

    def close(attach: bool = False):
        text = _adoc_clean(" ".join(block))
        if text and not re.fullmatch(r"[\W_]+", text):
            if attach and paras:
                paras[-1] += " " + text
            else:
                paras.append(text)
        block.clear()

    for line in lines:
        if re.fullmatch(r"-{4,}|\.{4,}", line.strip()):
            if listing:
                close(attach=True)
            else:
                close()
            listing = not listing
            continue
        if listing:
            block.append(line)
        elif not line.strip() or line.strip() == "+":
            close()
        elif line.startswith("[[") or line.startswith("[") and line.rstrip().endswith("]"):
            continue  # anchors and block attributes
        else:
            block.append(line)
    close()
    return faq.merge_and_cut(paras)


def gitfaq():
    path = DOC / "git-doc" / "gitfaq.txt"
    if not path.is_file():
        raise SystemExit(f"no {path}: apt-get install git-doc")
    lines = path.read_text(encoding="utf-8").splitlines()
    body = lines[lines.index("DESCRIPTION") :]
    sections: list[tuple[str, list[str]]] = []
    cur: list[str] = []
    title = "DESCRIPTION"
    i = 0
    while i < len(body):
        line = body[i]
        nxt = body[i + 1] if i + 1 < len(body) else ""
        if line.endswith("::") and not line.startswith((" ", "\t")):  # a question of the list
            sections.append((title, _adoc_paragraphs(cur)))
            title, cur = line[:-2], []
        elif line.strip() and re.fullmatch(r"-{3,}", nxt.strip()) and len(nxt.strip()) == len(line.strip()):
            sections.append((title, _adoc_paragraphs(cur)))  # a heading (Configuration, ...)
            title, cur = line.strip(), []
            i += 1
        else:
            cur.append(line)
        i += 1
    sections.append((title, _adoc_paragraphs(cur)))
    sections = [(t, ps) for t, ps in sections if t not in ("GIT", "SEE ALSO")]
    return _session([(_adoc_clean(t), ps) for t, ps in sections])


def git_manual():
    path = DOC / "git-doc" / "user-manual.txt"
    if not path.is_file():
        raise SystemExit(f"no {path}: apt-get install git-doc")
    lines = path.read_text(encoding="utf-8").splitlines()
    sections: list[tuple[str, list[str]]] = []
    title, cur = "", []
    for line in lines:
        m = re.match(r"^(={1,5}) (\S.*)$", line)
        if m:
            sections.append((title, _adoc_paragraphs(cur)))
            title, cur = m.group(2).strip(), []
        else:
            cur.append(line)
    sections.append((title, _adoc_paragraphs(cur)))
    # A manual: every section title of two words or more is a question ("How to get a Git
    # repository", "Creating tags", "Understanding history: What is a branch?").
    asks = lambda t: len(t.split()) >= 2  # noqa: E731
    return _session([(_adoc_clean(t), ps) for t, ps in sections], question=asks)


# -- hand-written HTML: the SQLite FAQ ----------------------------------------------------------


class _SqliteFaq(HTMLParser):
    """Each ``<p><b>(n) question</b></p>`` and the paragraphs of the blockquote after it."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.sections: list[tuple[str, list[str]]] = []
        self._buf: list[str] = []
        self._bold = False
        self._quote = 0
        self._pre = False

    def _flush(self):
        text = re.sub(r"\s+", " ", "".join(self._buf)).strip()
        self._buf = []
        if not text or not self.sections:
            return
        paras = self.sections[-1][1]
        if self._pre and paras:
            paras[-1] += " " + text
        else:
            paras.append(text)

    def handle_starttag(self, tag, attrs):
        if tag == "b" and not self._quote:
            self._bold, self._buf = True, []
        elif tag == "blockquote":
            if self._quote:
                self._flush()
            self._quote += 1
        elif tag == "p" and self._quote:
            self._flush()
        elif tag == "pre" and self._quote:
            self._flush()
            self._pre = True

    def handle_endtag(self, tag):
        if tag == "b" and self._bold:
            title = re.sub(r"^\(\d+\)\s*", "", re.sub(r"\s+", " ", "".join(self._buf)).strip())
            self.sections.append((title, []))
            self._bold, self._buf = False, []
        elif tag == "blockquote" and self._quote:
            self._flush()
            self._quote -= 1
        elif tag == "p" and self._quote:
            self._flush()
        elif tag == "pre" and self._pre:
            self._flush()
            self._pre = False

    def handle_data(self, data):
        if self._bold or self._quote:
            self._buf.append(data)


def sqlite_faq():
    path = DOC / "sqlite3" / "faq.html"
    if not path.is_file():
        raise SystemExit(f"no {path}: apt-get install sqlite3-doc")
    parser = _SqliteFaq()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    return _session([(t, faq.merge_and_cut(ps)) for t, ps in parser.sections], question=lambda t: True)


#: name -> (builder, role, kind, source, licence).  Roles were fixed before any measurement.
SOURCES = {
    "python-faq": (
        python_faq,
        "tune",
        "reST (Sphinx sources)",
        "the Python FAQ, 8 documents in order (Debian python3-doc, _sources/faq/*.rst.txt)",
        "PSF-2.0",
    ),
    "django-faq": (
        django_faq,
        "tune",
        "Sphinx HTML",
        "the Django 3.2 FAQ, 8 pages in the order of its index (Debian python-django-doc, html/faq/)",
        "BSD-3-Clause",
    ),
    "debian-faq": (
        debian_faq,
        "tune",
        "plain text",
        "The Debian GNU/Linux FAQ 11.0 (Debian debian-faq, debian-faq.en.txt.gz)",
        "Debian FAQ licence (verbatim and modified copies allowed with its notice; see scwo_evals/README.md)",
    ),
    "git-manual": (
        git_manual,
        "held_out",
        "AsciiDoc manual",
        "the Git user manual (Debian git-doc, user-manual.txt); questions: its section titles of 2+ words",
        "GPL-2.0 (Git's documentation)",
    ),
    "gitfaq": (
        gitfaq,
        "held_out",
        "AsciiDoc FAQ (definition list)",
        "gitfaq(7) (Debian git-doc, gitfaq.txt)",
        "GPL-2.0 (Git's documentation)",
    ),
    "sqlite-faq": (
        sqlite_faq,
        "held_out",
        "hand-written HTML",
        "the SQLite FAQ (Debian sqlite3-doc, faq.html)",
        "public domain (SQLite)",
    ),
    "sqlalchemy-faq": (
        sqlalchemy_faq,
        "held_out",
        "Sphinx HTML (HTML5 sections)",
        "the SQLAlchemy 1.4 FAQ, 8 pages in the order of its index (Debian python-sqlalchemy-doc, html/faq/)",
        "MIT",
    ),
}


def build(name: str) -> dict:
    builder, role, kind, source, licence = SOURCES[name]
    turns, questions = builder()
    return {
        "name": name,
        "role": role,
        "kind": kind,
        "source": source,
        "licence": licence,
        "turns": turns,
        "questions": questions,
    }


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name in SOURCES:
        data = build(name)
        raw = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
        with (
            open(OUT / f"{name}.json.gz", "wb") as fh,
            gzip.GzipFile(filename="", mode="wb", fileobj=fh, mtime=0, compresslevel=9) as f,
        ):
            f.write(raw)
        digest = hashlib.sha256(raw).hexdigest()[:12]
        print(
            f"{name} ({data['role']}): {len(data['turns'])} turns, {len(data['questions'])} questions,"
            f" {len(raw):,} bytes of JSON, sha256 {digest}",
            file=sys.stderr,
        )


if __name__ == "__main__":
    main()
