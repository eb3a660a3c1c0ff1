"""The pools of the final held-out question sets (issue 43): the Debian FAQ, perlfaq over every
Perl pod, and the R FAQ over the R manuals.  These three sources were kept out of every setting
chosen for ``select_texts`` (``scwo_evals/README.md``); they are measured once, never tuned on.

    apt-get install debian-faq perl-doc r-doc-html
    python tools/build_data/build_quality.py --evals --sets debian-faq,perlfaq,r-faq

Each builder returns ``(paragraphs, questions)`` as those of ``scwo_evals.doc_pools`` do: every
paragraph of the documentation, cut as ``tools/build_data/build_faq_eval.py`` cuts the Python
FAQ's (markup reduced to text, code joined to the paragraph before it, paragraphs under 25 words
merged with the next one of the same section, cut at 220 words; titles are not paragraphs), and
the questions (titles ending in "?"), each with the paragraph ids of the paragraphs under it as
gold and the fixed ``split`` of ``sentences._question``.

* ``debian-faq``: the Debian GNU/Linux FAQ's questions over every paragraph of the FAQ itself
  (Debian ``debian-faq``, the plain-text edition), parsed by
  ``tools/build_data/build_hsca_context.py``'s own parser (the turns of its ``hsca_context`` set).
  Verbatim copies and modified versions under the same notice (SPI).
* ``perlfaq``: the ``=head2`` titles ending in "?" of perlfaq1-9 over every paragraph of every
  ``.pod`` of Debian's ``perl-doc`` (``/usr/share/perl/5.36.0/pod``: perlfunc, perlop, perlre,
  the perldelta files, the FAQ's own answers...), but the two indexes that repeat every
  question: ``perltoc.pod`` (the table of contents of all pods) and the lists of questions of
  ``perlfaq.pod`` (its "THE QUESTIONS" part).  More than :data:`MAX_QUESTIONS` questions: the
  first by the SHA-1 of their text, as for the man pages.  The same terms as Perl (GPL-1.0+ or
  Artistic).
* ``r-faq``: the R FAQ's questions (section titles ending in "?", their numbers dropped) over
  every paragraph of the R FAQ and the R manuals shipped by Debian's ``r-doc-html`` (R-intro,
  R-lang, R-data, R-admin, R-exts, R-ints; Texinfo HTML), leaving out the navigation lines, the
  tables of contents, the menus of each section (``section-toc``: they list the sub-section
  titles) and the indexes.  The R FAQ GPL-2.0+, the manuals the R Core Team's permission notice
  (verbatim copies).

Nothing here is installed.
"""

from __future__ import annotations

import hashlib
import html
import re
from pathlib import Path

from scwo_evals.doc_pools import _append, _Blocks, _builders, _need
from scwo_evals.sentences import _question

POD = Path("/usr/share/perl/5.36.0/pod")
R_MANUAL = Path("/usr/share/doc/r-doc-html/manual")
R_MANUALS = ("R-FAQ", "R-intro", "R-lang", "R-data", "R-admin", "R-exts", "R-ints")
MAX_QUESTIONS = 300  # at most, the first by a hash of their text (as doc_pools.MAN_QUESTIONS)


def _first_by_hash(questions: list[dict], k: int = MAX_QUESTIONS) -> list[dict]:
    """At most ``k`` questions, the first by the SHA-1 of their text, in document order."""
    if len(questions) <= k:
        return questions
    kept = sorted(questions, key=lambda q: hashlib.sha1(q["text"].encode()).hexdigest())[:k]
    return sorted(kept, key=lambda q: q["gold"][0])


# -- plain text: the Debian FAQ ----------------------------------------------------------------


def debian_faq_pool() -> tuple[list[str], list[dict]]:
    """Every paragraph of the Debian FAQ; its questions (titles ending in "?")."""
    hc, _ = _builders()
    _need(Path("/usr/share/doc/debian/FAQ/debian-faq.en.txt.gz"), "debian-faq")
    texts: list[str] = []
    questions: list[dict] = []
    _append(texts, questions, *hc.debian_faq())
    return texts, _first_by_hash(questions)


# -- POD: perlfaq over the Perl pods -----------------------------------------------------------

_CODE = re.compile(r"([A-Z])<(<+\s)?")


def pod_text(text: str) -> str:
    """POD formatting codes reduced to their text: ``C<x>``, ``B<< x >>`` -> x, ``L<text|name>`` ->
    text, ``L<name/"section">`` -> "section" in name, ``E<gt>`` -> >, ``X<>`` and ``Z<>`` dropped."""
    out: list[str] = []
    stack: list[tuple[str, str, int]] = []  # (code, closing delimiter, where its text starts in out)
    i = 0
    while i < len(text):
        m = _CODE.match(text, i)
        if m:
            close = ">" * (len(m.group(2)) - 1) if m.group(2) else ">"
            if m.group(2):
                close = " " + close
            stack.append((m.group(1), close, len(out)))
            i = m.end()
            continue
        if stack and text.startswith(stack[-1][1], i):
            code, close, start = stack.pop()
            inner = "".join(out[start:]).strip() if close.startswith(" ") else "".join(out[start:])
            del out[start:]
            out.append(_pod_code(code, inner))
            i += len(close)
            continue
        out.append(text[i])
        i += 1
    return re.sub(r"\s+", " ", "".join(out)).strip()


def _pod_code(code: str, inner: str) -> str:
    if code in "XZ":
        return ""
    if code == "E":
        if inner.isdigit() or inner[:2] in ("0x", "0X"):
            return chr(int(inner, 0))
        return {"lt": "<", "gt": ">", "verbar": "|", "sol": "/"}.get(inner, html.unescape(f"&{inner};"))
    if code == "L":
        if "|" in inner:
            return inner.split("|", 1)[0]
        if "/" in inner and not re.match(r"\w+://", inner):
            name, section = inner.split("/", 1)
            return f"{section} in {name}" if name else section
        return inner
    return inner  # C, B, I, F, S


def pod_sections(text: str) -> list[tuple[int, str, list[str]]]:
    """``(level, title, paragraphs)`` of a POD document: ``=headN`` starts a section (titles are not
    paragraphs), ``=item`` text is a paragraph (its bullet or number dropped), a verbatim (indented)
    paragraph joins the one before it, ``=for`` paragraphs, ``=begin``/``=end`` blocks and text
    after ``=cut`` are skipped; paragraphs merged and cut by ``build_faq_eval.merge_and_cut``."""
    _, faq = _builders()
    sections: list[tuple[int, str, list[str]]] = [(0, "", [])]
    blocks = re.split(r"\n[ \t]*\n", text.replace("\r\n", "\n"))
    begin: str | None = None
    cut = False
    for block in blocks:
        if not block.strip():
            continue
        command = re.match(r"=([a-zA-Z]\w*)\s*(.*)", block, re.S)
        if begin is not None:
            if command and command.group(1) == "end":
                begin = None
            continue
        if command:
            name, rest = command.group(1), command.group(2)
            cut = name == "cut"
            if name.startswith("head") and name[4:].isdigit():
                sections.append((int(name[4:]), pod_text(rest), []))
            elif name == "begin":
                begin = rest
            elif name == "item":
                item = re.sub(r"^(?:\*|\d+\.?)(?:\s+|$)", "", rest.strip())
                if item.strip():
                    sections[-1][2].append(pod_text(item))
            continue  # =over, =back, =for, =pod, =encoding, =cut
        if cut:
            continue
        paras = sections[-1][2]
        if block[:1] in (" ", "\t"):  # verbatim: code, part of the paragraph before it
            code = re.sub(r"\s+", " ", block).strip()
            if paras:
                paras[-1] += " " + code
            else:
                paras.append(code)
        else:
            text_ = pod_text(block)
            if text_ and not re.fullmatch(r"[\W_]+", text_):
                paras.append(text_)
    return [(lvl, t, faq.merge_and_cut(ps)) for lvl, t, ps in sections]


def perlfaq_pool() -> tuple[list[str], list[dict]]:
    """Every paragraph of every Perl pod (but the indexes of questions); perlfaq1-9's questions."""
    _need(POD / "perlfaq4.pod", "perl-doc")
    texts: list[str] = []
    questions: list[dict] = []
    for path in sorted(POD.glob("*.pod")):
        if path.name == "perltoc.pod":  # the table of contents of every pod: every question verbatim
            continue
        listing = False
        faq_page = re.fullmatch(r"perlfaq[1-9]\.pod", path.name)
        for level, title, paras in pod_sections(path.read_text(encoding="utf-8", errors="replace")):
            if path.name == "perlfaq.pod" and level == 1:
                listing = title == "THE QUESTIONS"  # the lists of every question of perlfaq1-9
            if listing:
                continue
            ids = list(range(len(texts), len(texts) + len(paras)))
            texts += paras
            if faq_page and level == 2 and title.endswith("?") and ids:
                questions.append(_question(title, ids))
    return texts, _first_by_hash(questions)


# -- Texinfo HTML: the R FAQ over the R manuals ------------------------------------------------

_TEXINFO_SKIP = [
    re.compile(r'<div class="header">.*?</div>', re.S),  # Next/Previous/Up lines
    re.compile(r'<div class="(?:short)?contents">.*?</div>', re.S),  # tables of contents
    re.compile(r'<ul class="section-toc">.*?</ul>', re.S),  # each section's menu of sub-sections
    re.compile(r'<table[^>]*class="index-\w+"[^>]*>.*?</table>', re.S),  # indexes
    re.compile(r'<table[^>]*class="(?:index-)?letters-header[^"]*"[^>]*>.*?</table>', re.S),
]
_NUMBER = re.compile(r"^(?:Appendix\s+)?(?:[A-Z]|\d+)(?:\.\d+)*\s+")


class _TitledBlocks(_Blocks):
    """``_Blocks`` that keeps each section's title (the heading's text)."""

    def __init__(self):
        super().__init__()
        self.titles: list[str] = [""]
        self._title: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._title = []
        super().handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6") and self._heading:
            self.titles.append(re.sub(r"\s+", " ", "".join(self._title)).strip())
        super().handle_endtag(tag)

    def handle_data(self, data):
        if self._heading and not self._skipping():
            self._title.append(data)
        super().handle_data(data)


def texinfo_sections(path: Path) -> list[tuple[str, list[str]]]:
    """``(title without its number, paragraphs)`` of a one-page Texinfo HTML manual."""
    _, faq = _builders()
    page = path.read_text(encoding="utf-8", errors="replace")
    for rx in _TEXINFO_SKIP:
        page = rx.sub("", page)
    parser = _TitledBlocks()
    parser.feed(page)
    parser.close()
    pairs = zip(parser.titles, parser.sections, strict=True)
    return [(_NUMBER.sub("", t), faq.merge_and_cut(ps)) for t, ps in pairs]


def r_faq_pool() -> tuple[list[str], list[dict]]:
    """Every paragraph of the R FAQ and the R manuals; the R FAQ's questions."""
    _need(R_MANUAL / "R-FAQ.html", "r-doc-html")
    texts: list[str] = []
    questions: list[dict] = []
    for name in R_MANUALS:
        for title, paras in texinfo_sections(R_MANUAL / f"{name}.html"):
            ids = list(range(len(texts), len(texts) + len(paras)))
            texts += paras
            if name == "R-FAQ" and title.endswith("?") and ids:
                questions.append(_question(title, ids))
    return texts, _first_by_hash(questions)
