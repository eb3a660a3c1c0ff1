"""The pools of the evaluation question sets of other kinds (issue 43): AsciiDoc, Sphinx HTML,
hand-written HTML, man pages and plain-text FAQs, each every paragraph of one documentation set.

    apt-get install git-doc python-sqlalchemy-doc sqlite3-doc manpages manpages-dev wordnet-base lsof sed
    python -m scwo_evals.sentences --sets git   # or sqlalchemy-faq, sqlite-faq, manpages, lsof-faq, sed-faq

Each builder returns ``(paragraphs, questions)`` as the pools of ``scwo_evals.sentences`` do:
every paragraph of the documentation, cut as ``tools/build_data/build_faq_eval.py`` cuts the
Python FAQ's (markup reduced to text, code joined to the paragraph before it, paragraphs under
25 words merged with the next one of the same section, cut at 220 words), and the questions,
each with the paragraph ids of its answer and the fixed ``split`` of ``sentences._question``.
The FAQs are parsed by ``tools/build_data/build_hsca_context.py``'s own parsers, so their
paragraphs are the turns of the ``hsca_context`` sets.

* ``git``: gitfaq(7)'s questions and the Git user manual's section titles of two words or more
  (as ``build_hsca_context`` asks them) over every ``.txt`` (AsciiDoc) file of Debian's
  ``git-doc``: the man pages of every command, the guides, the user manual, the howtos and the
  technical documents, each file once (``include::`` is not expanded: the fragments it names
  are files of their own; the ``config/*.txt`` fragments of git-config(1) are not shipped).
  GPL-2.0.
* ``sqlalchemy-faq``: the SQLAlchemy 1.4 FAQ's questions (its section titles ending in "?")
  over every page of Debian's ``python-sqlalchemy-doc`` (Sphinx HTML; the source listings of
  ``_modules/``, the index and the search page left out, as for Django).  MIT.
* ``sqlite-faq``: the SQLite FAQ's questions over every page of Debian's ``sqlite3-doc``
  (hand-written HTML), leaving out what repeats other pages or holds no prose: the release
  notes of ``releaselog/`` (``changes.html`` holds them all), ``capi3ref.html`` (the pages of
  ``c3ref/`` in one), ``requirements.html`` (excerpts of the other pages), the syntax diagrams (``syntax/``, ``syntaxdiagrams.html``) and the
  indexes (``keyword_index.html``, ``sitemap.html``, ``doclist.html``, ``doc_*_crossref.html``, the
  ``*list.html`` of ``c3ref/`` and ``session/``).  Public domain.
* ``manpages``: one question per man page of sections 2, 3 and 7 of Debian's ``manpages``
  and ``manpages-dev`` whose NAME line's description is a verb phrase ("open, openat, creat -
  open and possibly create a file" -> "How do I open and possibly create a file?"); gold = the
  first two paragraphs of its DESCRIPTION (one when it has one).  The pool is every paragraph
  of every page of sections 2, 3, 5 and 7 of those packages (pages that only include another,
  ``.so`` and symbolic links, once), rendered by ``man`` at a width of 1,000 columns, without
  the NAME paragraphs (so no question is in the pool verbatim).  See :func:`manpages_pool` for
  the rule.  Linux man-pages licences (mostly "verbatim"; each page states its own).
* ``lsof-faq``, ``sed-faq``: the questions (titles ending in "?") of lsof's FAQ
  (``/usr/share/doc/lsof/00FAQ.gz``) and of the sed FAQ (``sedfaq.txt.gz`` of ``sed``), each over
  every paragraph of that FAQ itself (:func:`plain_faq_sections`): a FAQ over itself, the kind of
  the final Debian FAQ set, where the retrieved paragraphs are all answers to some question.
  lsof's Purdue licence; the sed FAQ ships with GNU sed with no notice of its own.

Nothing here is installed.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

from scwo_evals.sentences import ROOT, _question

DOC = Path("/usr/share/doc")
GIT = DOC / "git-doc"
SQLALCHEMY = DOC / "python-sqlalchemy-doc" / "html"
SQLITE = DOC / "sqlite3"
WORDNET = Path("/usr/share/wordnet")
MAN_PACKAGES = ("manpages", "manpages-dev")
MAN_QUESTIONS = 300  # at most, the first by a hash of their text


def _builders():
    """``tools/build_data/build_hsca_context.py`` (the FAQ parsers) and ``build_faq_eval.py`` (the cut)."""
    sys.path.insert(0, str(ROOT / "tools" / "build_data"))
    import build_faq_eval
    import build_hsca_context

    return build_hsca_context, build_faq_eval


def _need(path: Path, package: str) -> None:
    if not path.exists():
        raise SystemExit(f"no {path}: apt-get install {package}")


def _append(texts: list[str], questions: list[dict], turns: list[str], asked: list[dict]) -> None:
    """Add a document's paragraphs to the pool and its questions, their gold moved to pool ids."""
    base = len(texts)
    texts += turns
    questions += [_question(q["text"], [base + i for i in q["gold"]]) for q in asked]


def _merged(questions: list[dict]) -> list[dict]:
    """A question asked twice (the Git manual has two sections "Creating a new repository") asked
    once, its answer both sections' paragraphs."""
    out: dict[str, dict] = {}
    for q in questions:
        if q["text"] in out:
            out[q["text"]]["gold"] = sorted(set(out[q["text"]]["gold"]) | set(q["gold"]))
        else:
            out[q["text"]] = q
    return list(out.values())


# -- AsciiDoc: git-doc -----------------------------------------------------------------------

_ATTRS = {"litdd": "--", "caret": "^", "tilde": "~", "startsb": "[", "endsb": "]", "plus": "+",
          "empty": "", "sp": " ", "nbsp": " ", "apostrophe": "'", "backtick": "`", "vbar": "|"}  # fmt: skip
_ATTR = re.compile(r"\{(" + "|".join(_ATTRS) + r")\}")
_DIRECTIVE = re.compile(r"^(?:(?:include|ifdef|ifndef|ifeval|endif)::|:[\w-]+:(?:\s|$)|//(?!/))")
_OPEN_BLOCK = re.compile(r"^(?:--|={4,}|\*{4,}|_{4,}|\|={3,})$")  # open, example, sidebar, quote, table
_LISTING = re.compile(r"^(?:-{4,}|\.{4,})$")
_ONE_LINE_TITLE = re.compile(r"^(={1,5})\s+(\S.*?)(?:\s+=+)?$")
_UNDERLINE = re.compile(r"^([-=~^+])\1+$")
_TERM = re.compile(r"^(\S.*?)(?::{2,4}|;;)$")


def _adoc_sections(text: str) -> list[tuple[str, list[str]]]:
    """``(title, paragraphs)`` of an AsciiDoc document: both kinds of titles, directives, comments
    and block delimiters dropped (listings kept for ``build_hsca_context._adoc_paragraphs``)."""
    hc, _ = _builders()
    lines = [_ATTR.sub(lambda m: _ATTRS[m.group(1)], x.rstrip()) for x in text.splitlines()]
    sections: list[tuple[str, list[str]]] = [("", [])]
    comment = listing = False
    i = 0
    while i < len(lines):
        line, nxt = lines[i], lines[i + 1] if i + 1 < len(lines) else ""
        before = lines[i - 1] if i else ""
        i += 1
        if re.fullmatch(r"/{4,}", line):
            comment = not comment
        elif comment:
            continue
        elif listing:
            listing = not _LISTING.match(line)
            sections[-1][1].append(line)
        elif (m := _ONE_LINE_TITLE.match(line)) and not nxt.strip():
            sections.append((m.group(2), []))
        elif (
            line[:1].isalnum()
            and _UNDERLINE.match(nxt)
            and abs(len(nxt) - len(line)) <= 2
            and (not before.strip() or before.startswith("["))
        ):
            sections.append((line.strip(), []))
            i += 1
        elif _DIRECTIVE.match(line):
            continue
        elif _OPEN_BLOCK.match(line):
            sections[-1][1].append("")
        else:
            listing = bool(_LISTING.match(line))
            line = _TERM.sub(r"\1:", line)  # a term of a definition list
            sections[-1][1].append(line)
    return [(hc._adoc_clean(t), hc._adoc_paragraphs(body)) for t, body in sections]


def git_pool() -> tuple[list[str], list[dict]]:
    """Every paragraph of git-doc's AsciiDoc sources; gitfaq's and the user manual's questions."""
    hc, _ = _builders()
    _need(GIT, "git-doc")
    texts: list[str] = []
    questions: list[dict] = []
    for path in sorted(GIT.rglob("*.txt")):
        rel = path.relative_to(GIT).as_posix()
        if rel == "gitfaq.txt":
            turns, asked = hc.gitfaq()
        elif rel == "user-manual.txt":
            turns, asked = hc.git_manual()
            for q in asked:  # "==== update script ====": the closing delimiter is not the title's
                q["text"] = re.sub(r"\s+=+$", "", q["text"])
        else:
            text = path.read_text(encoding="utf-8", errors="replace")
            turns, asked = [p for _, ps in _adoc_sections(text) for p in ps], []
        _append(texts, questions, turns, asked)
    return texts, _merged(questions)


# -- Sphinx HTML: python-sqlalchemy-doc --------------------------------------------------------


def sqlalchemy_pool() -> tuple[list[str], list[dict]]:
    """Every paragraph of the SQLAlchemy docs; the FAQ's questions (titles ending in "?")."""
    hc, _ = _builders()
    _need(SQLALCHEMY, "python-sqlalchemy-doc")
    texts: list[str] = []
    questions: list[dict] = []
    for path in sorted(SQLALCHEMY.rglob("*.html")):
        rel = path.relative_to(SQLALCHEMY).as_posix()
        if rel.startswith(("_", "genindex", "py-modindex", "search")) or "/_" in rel:
            continue
        for title, paras in hc._html_sections(path):
            ids = list(range(len(texts), len(texts) + len(paras)))
            texts += paras
            if rel.startswith("faq/") and title.endswith("?") and ids:
                questions.append(_question(title, ids))
    return texts, questions


# -- hand-written HTML: sqlite3-doc ------------------------------------------------------------

_BLOCK = {"p", "div", "li", "ul", "ol", "dl", "dt", "dd", "tr", "table", "blockquote", "center", "hr", "form"}
_HEADING = {"h1", "h2", "h3", "h4", "h5", "h6"}
_HIDDEN = {"script", "style", "svg", "title", "button"}


class _Blocks(HTMLParser):
    """``[paragraphs]`` per section of hand-written HTML: a heading starts a section, a block
    element ends a paragraph, ``<pre>`` joins the paragraph before it; scripts, SVG and the
    ``nosearch`` divisions (SQLite's menus, tables of contents and page titles) are skipped, and
    so are buttons and each page's "This page last modified on" line."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.sections: list[list[str]] = [[]]
        self._buf: list[str] = []
        self._divs: list[bool] = []  # per open <div>: skipped?
        self._hidden = 0
        self._heading = self._pre = False

    def _skipping(self) -> bool:
        return self._hidden > 0 or any(self._divs)

    def _flush(self):
        text = re.sub(r"\s+", " ", "".join(self._buf)).strip()
        self._buf = []
        if not text or re.fullmatch(r"[\W_]+", text) or text.startswith("This page last modified on"):
            return
        paras = self.sections[-1]
        if self._pre and paras:
            paras[-1] += " " + text
        else:
            paras.append(text)

    def handle_starttag(self, tag, attrs):
        if tag in _HIDDEN:
            self._hidden += 1
        elif tag in _HEADING:
            self._flush()
            self.sections.append([])
            self._heading = True
        elif tag == "pre":
            self._flush()
            self._pre = True
        elif tag in _BLOCK:
            self._flush()
            if tag == "div":
                self._divs.append("nosearch" in (dict(attrs).get("class") or "").split())
        elif tag in ("td", "th", "br"):
            self._buf.append(" ")

    def handle_endtag(self, tag):
        if tag in _HIDDEN:
            self._hidden = max(0, self._hidden - 1)
        elif tag in _HEADING:
            self._buf, self._heading = [], False  # titles are not paragraphs
        elif tag == "pre":
            self._flush()
            self._pre = False
        elif tag in _BLOCK:
            self._flush()
            if tag == "div" and self._divs:
                self._divs.pop()

    def handle_data(self, data):
        if not self._heading and not self._skipping():
            self._buf.append(data)

    def close(self):
        super().close()
        self._flush()


_SQLITE_SKIP = re.compile(
    r"^(?:releaselog/|syntax/|search|capi3ref\.html|requirements\.html|syntaxdiagrams\.html|keyword_index\.html"
    r"|sitemap\.html|doclist\.html|doc_\w+_crossref\.html|(?:c3ref|session)/(?:func|obj|const)list\.html)"
)


def sqlite_pool() -> tuple[list[str], list[dict]]:
    """Every paragraph of the SQLite docs (those of ``faq.html`` as the FAQ's parser cuts them)."""
    hc, faq = _builders()
    _need(SQLITE / "faq.html", "sqlite3-doc")
    texts: list[str] = []
    questions: list[dict] = []
    for path in sorted(SQLITE.rglob("*.html")):
        rel = path.relative_to(SQLITE).as_posix()
        if rel == "faq.html":
            _append(texts, questions, *hc.sqlite_faq())
        elif not _SQLITE_SKIP.match(rel):
            parser = _Blocks()
            parser.feed(path.read_text(encoding="utf-8", errors="replace"))
            parser.close()
            texts += [p for paras in parser.sections for p in faq.merge_and_cut(paras)]
    return texts, questions


# -- man pages: manpages, manpages-dev ---------------------------------------------------------

_CODE, _END = "@@code@@", "@@end@@"  # markers put around no-fill blocks before rendering


def _man_pages(sections: str = "2357") -> list[Path]:
    """The pages of ``sections`` that the packages ship as files of their own (no links, no ``.so``)."""
    out = subprocess.run(["dpkg", "-L", *MAN_PACKAGES], capture_output=True, text=True, check=True).stdout
    pages = []
    for line in sorted(set(out.splitlines())):
        p = Path(line)
        if (
            re.fullmatch(rf"/usr/share/man/man[{sections}]/[^/]+\.gz", line)
            and p.is_file()
            and not p.is_symlink()
        ):
            head = gzip.decompress(p.read_bytes())[:300].decode("latin-1")
            if not re.search(r"^\.so\s", head, re.M):
                pages.append(p)
    return pages


def _render(path: Path) -> str:
    """The page as ``man`` prints it at 1,000 columns, with markers around its no-fill blocks."""
    src = gzip.decompress(path.read_bytes()).decode("utf-8", errors="replace")
    src = re.sub(r"^(\.(?:EX|nf)\b.*)$", rf"\1\n\\&{_CODE}", src, flags=re.M)
    src = re.sub(r"^(\.(?:EE|fi)\b.*)$", rf"\\&{_END}\n\1", src, flags=re.M)
    env = {**os.environ, "MANWIDTH": "1000", "MAN_KEEP_FORMATTING": "", "LC_ALL": "C.UTF-8"}
    out = subprocess.run(
        ["man", "-l", "-P", "cat", "-"], input=src, capture_output=True, text=True, env=env, check=False
    ).stdout
    return re.sub(r".\x08", "", out)


def _man_sections(rendered: str) -> list[tuple[str, list[str]]]:
    """``(heading, paragraphs)`` of a rendered page: headings at column 0 (sub-headings at 3 start a
    section of their own, titled ``HEADING/sub``), blank lines end paragraphs, no-fill blocks
    (code, tables) join the paragraph before them; the running header and footer dropped."""
    lines = rendered.splitlines()
    filled = [k for k, x in enumerate(lines) if x.strip()]
    drop = {filled[0], filled[-1]} if len(filled) >= 2 else set()
    sections: list[tuple[str, list[str]]] = [("", [])]
    block: list[str] = []
    code = False
    top = ""

    def close():
        text = re.sub(r"\s+", " ", " ".join(block)).strip()
        block.clear()
        if not text or re.fullmatch(r"[\W_]+", text):
            return
        paras = sections[-1][1]
        if code and paras:
            paras[-1] += " " + text
        else:
            paras.append(text)

    for k, x in enumerate(lines):
        if k in drop:
            continue
        s = x.strip()
        if s == _CODE:
            close()
            code = True
        elif s == _END:
            close()
            code = False
        elif not s:
            close()
        elif not code and not x.startswith(" "):
            close()
            top = s
            sections.append((top, []))
        elif not code and re.match(r"^ {3}\S", x):
            close()
            sections.append((f"{top}/{s}", []))
        else:
            block.append(s)
    close()
    return sections


def _wordnet() -> tuple[dict[str, int], dict[str, int], frozenset[str]]:
    """WordNet 3.0's verbs (how often SemCor tags each one a verb), how often SemCor tags each
    verb a noun or an adjective, and the nouns."""
    _need(WORDNET / "index.verb", "wordnet-base")
    counts: dict[str, dict[str, int]] = {}
    for pos in ("verb", "noun", "adj"):
        d = counts.setdefault(pos, {})
        for line in (WORDNET / f"index.{pos}").read_text(encoding="utf-8").splitlines():
            if line.startswith(" "):
                continue
            f = line.split()
            d[f[0]] = int(f[5 + int(f[3])])  # tagsense_cnt, after the pointer symbols
    other = {w: max(counts["noun"].get(w, 0), counts["adj"].get(w, 0)) for w in counts["verb"]}
    return counts["verb"], other, frozenset(counts["noun"])


_OBJECT = {"a", "an", "the", "and", "or", "to", "for", "whether", "if", "up", "down", "out", "off",
           "back", "all", "into", "from", "with", "on", "in"}  # fmt: skip


def man_question(
    description: str, wordnet: tuple[dict[str, int], dict[str, int], frozenset[str]]
) -> str | None:
    """The question "How do I <description>?" when a NAME line's description is a verb phrase, else None.

    A verb phrase: three words or more; its first word (lower case, the part before a "/") is a
    WordNet verb that either SemCor tags as a verb more often than as a noun and an adjective
    together, or is followed by an article, "and", "or" or a particle ("open a directory",
    "open and possibly create a file"); its second word is not "of" and neither its second
    nor its last word is a plural noun, nor is its last word "function" (noun phrases: "count
    of bytes", "file block counts", "log gamma function").
    """
    verbs, other, nouns = wordnet  # from _wordnet()
    d = description.strip().rstrip(".").strip()
    words = d.split()
    if len(words) < 3:
        return None
    w = words[0].lower().split("/")[0]
    if w not in verbs or not (words[1].lower() in _OBJECT or verbs[w] > other.get(w, 0)):
        return None

    def plural(word: str) -> bool:
        word = word.lower().strip(".,()")
        return (
            word.endswith("s")
            and not word.endswith("ss")
            and (word[:-1] in nouns or word.endswith("es") and word[:-2] in nouns)
        )

    if words[1].lower() == "of" or plural(words[1]) or plural(words[-1]) or words[-1].lower() == "function":
        return None
    if not words[0][1:2].isupper():  # "Copy a range" -> "copy a range"; "POSIX" stays
        d = d[0].lower() + d[1:]
    return f"How do I {d}?"


def manpages_pool() -> tuple[list[str], list[dict]]:
    """Every paragraph of sections 2, 3, 5 and 7 (NAME left out), and one question per page of
    sections 2, 3 and 7 whose description asks (:func:`man_question`); gold = the first two
    paragraphs of its DESCRIPTION.  A description shared by several pages asks nothing (its
    answer would be ambiguous); at most ``MAN_QUESTIONS`` questions, the first by the SHA-1 of
    their text."""
    _need(Path("/usr/share/man/man2"), "manpages-dev")
    wordnet = _wordnet()
    _, faq = _builders()
    texts: list[str] = []
    asked: dict[str, list[list[int]]] = {}
    pages = _man_pages()
    for n, path in enumerate(pages):
        if sys.stderr.isatty():
            print(f"\rrendering man pages: {n + 1}/{len(pages)}", end="", file=sys.stderr)
        description: str | None = None
        gold: list[int] = []
        for title, paras in _man_sections(_render(path)):
            paras = faq.merge_and_cut(paras)
            if title == "NAME":
                if paras and " - " in paras[0]:
                    description = paras[0].split(" - ", 1)[1]
                continue
            if title.split("/")[0] == "DESCRIPTION" and len(gold) < 2:
                gold += list(range(len(texts), len(texts) + len(paras)))[: 2 - len(gold)]
            texts += paras
        section = path.parent.name[3:]
        if description and gold and section in "237":
            q = man_question(description, wordnet)
            if q:
                asked.setdefault(q, []).append(gold)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    unique = sorted((q for q, golds in asked.items() if len(golds) == 1),
                    key=lambda q: hashlib.sha1(q.encode()).hexdigest())[:MAN_QUESTIONS]  # fmt: skip
    questions = [_question(q, asked[q][0]) for q in sorted(unique, key=lambda q: asked[q][0][0])]
    return texts, questions


# -- plain-text FAQs over themselves: lsof's and sed's ---------------------------------------

_FAQ_TITLE = re.compile(r"^(\d+(?:\.\d+)*)\.?[\t ]+(\S.*)$")


def plain_faq_sections(lines: list[str], start: int) -> list[tuple[str, list[str]]]:
    """``(title, paragraphs)`` of a numbered plain-text FAQ from line ``start`` (past its table of
    contents): a title is a number at column 0 and its text, wrapped over the lines that follow
    it up to a blank one; a paragraph is the lines up to a blank one, its white space joined; a
    paragraph indented deeper than the section's first (a command, an example) is joined to the
    paragraph before it, as the Debian FAQ's parser joins its examples."""
    sections: list[tuple[str, list[str]]] = []
    block: list[str] = []
    base: list[int] = []  # the indent of the section's first paragraph

    def close() -> None:
        if block and sections:
            text = re.sub(r"\s+", " ", " ".join(block)).strip()
            indent = len(block[0]) - len(block[0].lstrip())
            if text and not re.fullmatch(r"[\W_]+", text):
                if not base:
                    base.append(indent)
                if indent > base[0] and sections[-1][1]:
                    sections[-1][1][-1] += " " + text
                else:
                    sections[-1][1].append(text)
        block.clear()

    i = start
    while i < len(lines):
        line = lines[i].expandtabs(8).rstrip()
        m = _FAQ_TITLE.match(line)
        if m:
            close()
            title = [m.group(2)]
            while i + 1 < len(lines) and lines[i + 1].strip():
                i += 1
                title.append(lines[i].strip())
            sections.append((" ".join(title), []))
            base.clear()
        elif not line.strip():
            close()
        else:
            block.append(line)
        i += 1
    close()
    return sections


def _plain_faq_pool(path: Path, package: str, first_title: str) -> tuple[list[str], list[dict]]:
    """Every paragraph of a plain-text FAQ, from the second ``first_title`` line on (the first is
    in its table of contents); its questions (titles ending in "?"), at most ``MAN_QUESTIONS``,
    the first by the SHA-1 of their text."""
    hc, faq = _builders()
    _need(path, package)
    lines = gzip.decompress(path.read_bytes()).decode("utf-8", errors="replace").splitlines()
    start = [k for k, line in enumerate(lines) if line.expandtabs(8).rstrip() == first_title][1]
    sections = plain_faq_sections(lines, start)
    texts: list[str] = []
    questions: list[dict] = []
    _append(texts, questions, *hc._session([(t, faq.merge_and_cut(ps)) for t, ps in sections]))
    questions = _merged(questions)
    if len(questions) > MAN_QUESTIONS:
        kept = sorted(questions, key=lambda q: hashlib.sha1(q["text"].encode()).hexdigest())[:MAN_QUESTIONS]
        questions = sorted(kept, key=lambda q: q["gold"][0])
    return texts, questions


def lsof_faq_pool() -> tuple[list[str], list[dict]]:
    """Every paragraph of lsof's FAQ (``/usr/share/doc/lsof/00FAQ.gz``); its questions."""
    return _plain_faq_pool(DOC / "lsof" / "00FAQ.gz", "lsof", "1.0     General Concepts")


def sed_faq_pool() -> tuple[list[str], list[dict]]:
    """Every paragraph of the sed FAQ (``/usr/share/doc/sed/sedfaq.txt.gz``); its questions."""
    return _plain_faq_pool(DOC / "sed" / "sedfaq.txt.gz", "sed", "1. GENERAL INFORMATION")
