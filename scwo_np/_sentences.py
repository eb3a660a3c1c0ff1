"""Sentences and the units a sentence-level selection keeps: a rule-based splitter, no data.

:func:`split_sentences` cuts a text into character spans, one per sentence (or per line, list
item or code block); :func:`sentence_units` glues each span that cannot stand alone to the
one before it, so that a selection of units never keeps "It does." without what "it" is.

The splitter, in order:

1. **Blocks.** Fenced code (```` ``` ```` or ``~~~`` to the closing fence), doctest lines
   (``>>>`` and the lines after them up to a blank line) and indented lines after a blank
   line or a line ending in ``::`` (reStructuredText's literal blocks) are code: one span
   each, never split.  Indented lines after a blank line that read as prose (eight words or
   more, a sentence's end, under 3% brackets and operators: a man page's paragraphs) are
   prose, unless a ``::`` announced them; a block not announced ends before such a paragraph.
2. **Paragraphs.** Lines up to a blank line. A paragraph whose lines start with list markers
   (``-``, ``*``, ``+``, ``•``, ``1.``, ``1)``, ``a)``) gives one span per item (an item's
   indented continuation lines included). A paragraph of short lines that mostly end without
   a sentence mark (log lines, verse, tables, lists without markers) gives one span per line,
   unless it is running text hard-wrapped at a width (its lines filled near the widest, half of
   them going on in lower case: a README, a plain-text spec), which is cut at its sentence marks.
3. **Prose.** Everything else is cut after ``.``, ``!``, ``?`` or ``…`` (and any closing
   quotes or brackets) followed by white space and then anything but a lower-case letter,
   except after an abbreviation (``e.g.``, ``Dr.``, ``vs.``, ``Fig.``, ``et al.``... and any
   word with an inner dot, ``U.S.``), after a single capital (an initial, ``J. Smith``), and
   inside an inline code span (````...````), and after a list's label alone (``b.``, ``aa.``,
   ``iv.``, ``12.``: bash's NEWS numbers its items so).  Decimals (``3.14``) and version
   numbers never qualify, as no white space follows their dot.

A unit glues a span to the one before it (in the same text) when the span

* starts with a word that points back: a pronoun or demonstrative (``It``, ``This``,
  ``They``, ``Such``...), a connective (``However``, ``Also``, ``Therefore``, ``But``,
  ``For example``...);
* follows a span that ends with ``:`` (it is what was announced: a list, a code block);
* follows a heading of hard-wrapped text (a man page's section or option name alone on its line:
  ``-amin n`` over its option's text), which would mean nothing on its own;
* is a list item after a list item (it continues the list);
* continues a doctest (starts with ``...`` or ``>>>`` after a span holding ``>>>``).

The rules are English; a text in another language is still cut at its sentence marks, and
its units are its sentences.
"""

from __future__ import annotations

import re
from itertools import islice

from .validation import check_text

__all__ = ["ABBREVIATIONS", "DEPENDENT_STARTS", "FUNCTION_WORDS", "sentence_units", "split_sentences"]

#: English function words (lower case): :data:`scwo_np.text.STOPWORDS`, the one list (here, where
#: the splitter reads them too: text imports this module).
FUNCTION_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below between
    both but by can could did do does doing down during each few for from further had has have having he her here
    hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of
    off on once only or other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up very was we were what
    when where which while who whom why will with would you your yours yourself yourselves also may might must
    shall one two us upon yet via per""".split()
)

#: Words (lower case, without their final dot) after which a dot does not end a sentence.
ABBREVIATIONS = frozenset(
    """
    mr mrs ms dr prof sr jr st mt vs v cf e.g i.e viz al fig figs eq eqs no nos vol vols pp p
    approx ca ch sec secs ref refs resp incl dept est ed eds rev gen col lt sgt capt cmdr gov
    sen rep min max avg std var ver op cit ibid jan feb mar apr jun jul aug sep sept oct nov dec
    mon tue wed thu fri sat sun ft in lb lbs oz kg km cm mm hr hrs sq dist div
    """.split()
)

#: First words (lower case) of a sentence that needs the one before it.
DEPENDENT_STARTS = frozenset(
    """
    it its this that these those they them their theirs he him his she her hers such
    however but and or nor so then thus therefore hence also moreover furthermore otherwise
    instead yet still nevertheless nonetheless consequently accordingly likewise similarly
    meanwhile besides additionally alternatively conversely finally lastly here both either
    neither another other others latter former
    """.split()
)

#: Two-word openings that need the sentence before them.
DEPENDENT_PAIRS = frozenset(
    {
        ("for", "example"), ("for", "instance"), ("in", "addition"), ("in", "contrast"),
        ("in", "particular"), ("in", "this"), ("in", "that"), ("in", "such"), ("as", "such"),
        ("as", "a"), ("on", "the"), ("that", "is"), ("to", "do"), ("in", "other"),
        ("in", "which"), ("the", "latter"), ("the", "former"), ("the", "same"),
    }
)  # fmt: skip

_FENCE = re.compile(r"^\s*(```|~~~)")
_BULLET = re.compile(r"^\s*(?:[-*+•‣◦]|\d{1,3}[.)]|[a-z][.)]|\(\w{1,3}\))\s+\S")
# A sentence mark, its closing quotes or brackets (group 1 ends there: the cut), and the white space.
_END = re.compile(r"([.!?…]+[\"'”’)\]}»]*)\s+")
# The leading tokens of a span, for the rule "starts with a word that points back": words of
# scwo_np.text.WORD, but also numbers, footnote marks and hyphen runs, which block the rule
# ("(2) This is exact", "PEP 420 also ..." do not glue), and contractions whole ("It's" is not
# "it").  Measured on the bundled question sets (scwo bench --quality, both halves): with
# text.WORD, 25 span starts of ~11,000 paragraphs glue differently and held-out hits drop by
# one question in two places; reading "It's" as "it" too, 169 do and the Django held-out hit
# at 200 tokens drops from 0.458 to 0.375.  So units keep this definition.
_LEAD = re.compile(r"[\w'’-]+")
#: A list's label alone ("b.", "aa.", "aaa.", "iv.", "2)", "(c)"): not a sentence, the start of its
#: item's first one (bash's NEWS and CHANGES label items "a." to "zzzz."; cut off, labels filled contexts).
_LABEL = re.compile(r"\(?(?:\d{1,3}|[a-z]{1,2}|([a-z])\1{2,4}|[ivxlc]{1,6}|[A-Z])[.)]")
_LINE_END_MARK = (".", "!", "?", ":", ";", "…", '"', "”", "'", "’", ")")


def split_sentences(text: str, *, wrapped: bool | None = None) -> list[tuple[int, int]]:
    r"""Character spans of the sentences (or lines, list items, code blocks) of ``text``.

    Parameters
    ----------
    text : str
        Any text.
    wrapped : bool, optional
        Read ``text`` as hard-wrapped prose (a man page, a plain-text manual): every paragraph
        (its lines up to a blank line) is running text, cut at its sentence marks only, whatever
        its indentation and line lengths (which ``False`` reads as code or as a list of lines).
        By default (``None``), when nine in ten of its non-blank lines (two or more) are
        indented by three spaces or more: a man page as ``man -P cat`` prints it, or a piece of one.

    Returns
    -------
    list of (int, int)
        ``(start, end)`` of each span, in order, without surrounding white space; spans do not
        overlap, and everything outside them is white space.

    Examples
    --------
    >>> t = "Dr. Smith paid $3.50, i.e. less. It rose to 4.2% in the U.S. today! Why? See `a. B`."
    >>> [t[a:b] for a, b in split_sentences(t)]
    ['Dr. Smith paid $3.50, i.e. less.', 'It rose to 4.2% in the U.S. today!', 'Why?', 'See `a. B`.']
    >>> t = "Steps:\n- install it\n- run it\n\n```\nx = 1.\nY = 2\n```"
    >>> [t[a:b] for a, b in split_sentences(t)]
    ['Steps:', '- install it', '- run it', '```\nx = 1.\nY = 2\n```']
    >>> t = "       Bash is an sh-compatible command language\n       interpreter. It reads commands\n       from files."
    >>> [t[a:b] for a, b in split_sentences(t, wrapped=True)]
    ['Bash is an sh-compatible command language\n       interpreter.', 'It reads commands\n       from files.']
    """
    text = check_text(text)
    if wrapped is not None and not isinstance(wrapped, bool):
        raise TypeError(f"wrapped must be True, False or None; got {type(wrapped).__name__} {wrapped!r}.")
    return [(a, b) for a, b, _ in _segments(text, wrapped)]


def _wrapped_segments(text: str) -> list[tuple[int, int, str]]:
    """Hard-wrapped text's spans: each paragraph, cut where a line is indented less than the one
    before (a man page's next option or variable after the text of the last, which may start in
    lower case: ``comment-begin``) or follows a heading (:func:`_heading`: a section's name, or an
    option's name at column 0 once its paragraph was stripped), is prose cut at its sentence marks;
    lines at column 0 are otherwise running text; a piece of three lines or
    more that ends no sentence and whose lines are short (40 characters on average: a list of
    names) is a span per line."""
    out: list[tuple[int, int, str]] = []
    for p, q in _paragraphs(text):
        lines = _lines(text[p:q])
        pieces, start, heads = [], 0, set()
        for k in range(1, len(lines)):
            a, b = lines[k]
            before = text[p + lines[k - 1][0] : p + lines[k - 1][1]]
            now = text[p + a : p + b]
            indent = len(before) - len(before.lstrip())
            # after a heading: a line at column 0 that starts its piece; or a dedent
            heading = not indent and start == k - 1 and _heading(before, now)
            if heading or len(now) - len(now.lstrip()) < indent:
                if heading:
                    heads.add(len(pieces))
                pieces.append(lines[start:k])
                start = k
        pieces.append(lines[start:])
        for i, piece in enumerate(pieces):
            a, b = p + piece[0][0], p + piece[-1][1]
            if i in heads:  # one line: a unit with the sentence after it (units_and_sentences)
                out.append((*_trim(text, a, b), "heading"))
                continue
            bodies = [text[p + x : p + y].strip() for x, y in piece]
            listed = len(piece) >= 3 and sum(map(len, bodies)) <= 40 * len(piece)
            if listed and not _SENTENCE_END.search(text, a, b):
                out += [(p + x + len(t) - len(t.lstrip()), p + y, "line") for (x, y), t in
                        zip(piece, (text[p + x : p + y] for x, y in piece), strict=True)]  # fmt: skip
            else:
                out += [(x, y, "prose") for x, y in _prose(text, a, b)]
    return out


def _heading(line: str, after: str) -> bool:
    """Whether a line at column 0 is a heading of the lines after it (a man page's section name, or
    an option's name once its paragraph was stripped): 40 characters or fewer, or shorter than 3/4
    of the next line's text.  A longer one is the first line of a paragraph whose indent was
    stripped, its sentence going on."""
    n = len(line.strip())
    return n <= 40 or n < 0.75 * len(after.strip())


def _indented_throughout(text: str) -> bool:
    """Whether nine in ten of the text's non-blank lines (two or more) are indented (by three spaces
    or more, or a tab; a diffstat's and a Debian field's one space are not): a man page as
    ``man -P cat`` prints it (its sections' names alone at column 0) or a piece of one.  Read with
    the rules for unwrapped text, its option lists were one code block (ls(1): 3,441 characters)
    and its paragraphs a span per line, cut mid-sentence (359 cuts on 14 pages)."""
    body = [line for line in text.splitlines() if line.strip()]
    if len(body) < 2:
        return False
    indented = [line.startswith(("   ", "\t")) for line in body]
    if sum(indented) >= 0.9 * len(body):
        return True
    # A piece of a man page whose first line lost its indent (a paragraph split off and stripped:
    # "-amin n" over its option's text): the lines after it indented, and reading as prose.
    if indented[0] or sum(indented[1:]) < 0.9 * (len(body) - 1):
        return False
    lines = _lines(text)
    first = next(i for i, (a, b) in enumerate(lines) if text[a:b].strip())
    return _indented_prose(text, lines, first + 1)


def _paragraphs(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each run of non-blank lines."""
    out: list[tuple[int, int]] = []
    start = end = -1
    for a, b in _lines(text):
        if text[a:b].strip():
            if start < 0:
                start = a
            end = b
        elif start >= 0:
            out.append((start, end))
            start = -1
    if start >= 0:
        out.append((start, end))
    return out


def sentence_units(text: str) -> list[tuple[int, int]]:
    """Spans of the units a sentence-level selection keeps or drops whole (see the module).

    Parameters
    ----------
    text : str
        Any text.

    Returns
    -------
    list of (int, int)
        ``(start, end)`` of each unit: one or more consecutive sentences of ``text``.

    Examples
    --------
    >>> t = "Lists are mutable. They can grow. Tuples are not. However, they hash. Use sets for speed."
    >>> [t[a:b] for a, b in sentence_units(t)]
    ['Lists are mutable. They can grow.', 'Tuples are not. However, they hash.', 'Use sets for speed.']
    """
    return units_and_sentences(check_text(text))[0]


def units_and_sentences(text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]], list[int]]:
    """``(units, sentences, first)``: :func:`sentence_units`, :func:`split_sentences`, and the
    index of each unit's first sentence (a unit is the sentences from it to the next unit's)."""
    units: list[list[int]] = []
    sentences: list[tuple[int, int]] = []
    first: list[int] = []
    prev: tuple[str, str] | None = None
    for start, end, kind in _segments(text):
        piece = text[start:end]
        if units and _needs_previous(piece, kind, prev):
            units[-1][1] = end
        else:
            units.append([start, end])
            first.append(len(sentences))
        sentences.append((start, end))
        prev = (piece, kind)
    return [(a, b) for a, b in units], sentences, first


def _segments(text: str, wrapped: bool | None = None) -> list[tuple[int, int, str]]:
    """Every span with its kind: ``prose``, ``item`` (a list item's first sentence), ``more``
    (a list item's later sentences), ``line``, ``code`` or ``heading`` (a man page's section or
    option name); with ``wrapped`` (by default when :func:`_indented_throughout`), every
    paragraph's sentences, as prose."""
    if wrapped or (wrapped is None and _indented_throughout(text)):
        return _wrapped_segments(text)
    out: list[tuple[int, int, str]] = []
    for start, end, kind in _blocks(text):
        if kind in ("prose", "item"):
            for k, (a, b) in enumerate(_prose(text, start, end)):
                out.append((a, b, "more" if kind == "item" and k else kind))
        elif piece := _trim(text, start, end):
            out.append((*piece, kind))
    return out


def _needs_previous(piece: str, kind: str, prev: tuple[str, str] | None) -> bool:
    if prev is None:
        return False
    before, before_kind = prev
    if before_kind == "heading" or before.rstrip().endswith(":"):
        return True
    if kind == "item" and before_kind in ("item", "more"):  # the list goes on
        return True
    head = piece.lstrip()
    if head.startswith(("...", ">>>")) and ">>>" in before:
        return True
    words = [w.lower() for w in _LEAD.findall(head[:80])[:2]]
    if not words:
        return False
    return words[0] in DEPENDENT_STARTS or (len(words) == 2 and (words[0], words[1]) in DEPENDENT_PAIRS)


def _lines(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every line, without its line break."""
    out, pos = [], 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        out.append((pos, pos + len(body)))
        pos += len(line)
    return out


def _trim(text: str, start: int, end: int) -> tuple[int, int] | None:
    piece = text[start:end]
    body = piece.strip()
    if not body:
        return None
    a = start + len(piece) - len(piece.lstrip())
    return a, a + len(body)


def _blocks(text: str) -> list[tuple[int, int, str]]:
    """Code blocks, list items, lines and prose paragraphs, in order: ``(start, end, kind)``."""
    if "\n" not in text and "\r" not in text:  # one line (most retrieved chunks): no block structure
        head = text.lstrip()
        if not head:
            return []
        if head.startswith(">>>") or _FENCE.match(text):
            return [(0, len(text), "code")]
        return [(0, len(text), "item" if _BULLET.match(text) else "prose")]
    lines = _lines(text)
    out: list[tuple[int, int, str]] = []
    para: list[tuple[int, int]] = []

    def flush():
        if para:
            out.extend(_paragraph(text, para))
            para.clear()

    i, n = 0, len(lines)
    after_blank = True
    literal_next = False  # the previous paragraph line ended with "::"
    while i < n:
        a, b = lines[i]
        line = text[a:b]
        stripped = line.strip()
        if not stripped:
            flush()
            after_blank = True
            i += 1
            continue
        if _FENCE.match(line):  # a fenced block, to its closing fence (or the end)
            flush()
            fence = _FENCE.match(line).group(1)
            j = i + 1
            while j < n and not text[lines[j][0] : lines[j][1]].strip().startswith(fence):
                j += 1
            end = lines[min(j, n - 1)][1]
            out.append((a, end, "code"))
            i, after_blank, literal_next = j + 1, False, False
            continue
        indented = line[:1] in (" ", "\t") and (len(line) - len(line.lstrip())) >= 4
        announced = literal_next or (after_blank and not _indented_prose(text, lines, i))
        if stripped.startswith(">>>") or (indented and announced and not para):
            flush()
            j = i + 1
            while j < n:
                nxt = text[lines[j][0] : lines[j][1]]
                if not nxt.strip():
                    if stripped.startswith(">>>"):
                        break
                    # a literal block may hold blank lines: it goes on while lines stay indented
                    k = j
                    while k < n and not text[lines[k][0] : lines[k][1]].strip():
                        k += 1
                    if k < n and text[lines[k][0] : lines[k][1]][:1] in (" ", "\t"):
                        if not literal_next and _indented_prose(text, lines, k):
                            break  # not a literal block (none was announced): prose follows
                        j = k
                        continue
                    break
                if not stripped.startswith(">>>") and nxt[:1] not in (" ", "\t"):
                    break
                j += 1
            out.append((a, lines[j - 1][1], "code"))
            i, after_blank, literal_next = j, False, False
            continue
        para.append((a, b))
        literal_next = stripped.endswith("::")
        after_blank = False
        i += 1
    flush()
    return out


_WORDISH = re.compile(r"[^\W\d_]{2,}")  # a word, roughly: two letters or more
#: What code has and prose rarely does: brackets, operators, shell and template marks.
_CODE_MARKS = frozenset("{}[]()=<>;$#|\\`")


def _indented_prose(text: str, lines: list[tuple[int, int]], i: int) -> bool:
    """Whether the indented lines from ``lines[i]`` to the next blank line read as prose, not code:
    eight words or more, a sentence's end among them, and code's marks under 3% of their
    characters.  A man page (``man -P cat``) indents all its text by 7 and its options' text by
    14: read as code, ``grep(1)``'s option list was one block of 15,883 characters, never cut."""
    body: list[str] = []
    for k in range(i, len(lines)):  # (not lines[i:], a copy of the rest at every call)
        line = text[lines[k][0] : lines[k][1]].strip()
        if not line:
            break
        body.append(line)
    joined = " ".join(body)
    if sum(map(joined.count, _CODE_MARKS)) >= 0.03 * len(joined):  # 15 scans in C, not a step a character
        return False
    return (
        _SENTENCE_END.search(joined) is not None
        and next(islice(_WORDISH.finditer(joined), 7, None), None) is not None
    )


def _paragraph(text: str, lines: list[tuple[int, int]]) -> list[tuple[int, int, str]]:
    """A paragraph's list items, lines, or its prose (one span to be cut into sentences)."""
    bodies = [text[a:b] for a, b in lines]
    if any(_BULLET.match(x) for x in bodies):
        items: list[list[int]] = []
        for (a, b), body in zip(lines, bodies, strict=True):
            if _BULLET.match(body) or not items:
                items.append([a, b])
            else:  # a continuation of the item (or of the text before the first item)
                items[-1][1] = b
        return [(a, b, "item" if _BULLET.match(text[a:b]) else "prose") for a, b in items]
    if len(lines) >= 3:
        short = sum(len(x.strip()) <= 80 for x in bodies)
        unmarked = sum(not x.rstrip().endswith(_LINE_END_MARK) for x in bodies)
        if short >= 0.8 * len(lines) and unmarked >= 0.6 * len(lines) and not _filled(bodies):
            if _running(bodies):
                return [(lines[0][0], lines[-1][1], "prose")]
            first = bodies[0].strip()
            if (
                not first.endswith(_LINE_END_MARK)
                and bodies[1].strip()[:1].isupper()
                and _running(bodies[1:])
            ):
                return [(*lines[0], "heading"), (lines[1][0], lines[-1][1], "prose")]  # a name over its text
            return _wrapped_runs(lines, bodies)
    return [(lines[0][0], lines[-1][1], "prose")]


def _wrapped_runs(lines: list[tuple[int, int]], bodies: list[str]) -> list[tuple[int, int, str]]:
    """A paragraph of lines, each a span of its own, but for runs of lines at one indent that are
    running text wrapped at a width: a run is one span of prose. A Debian control file's or
    copyright file's description indented under its ``Key: value`` lines; a README's paragraph
    under its heading and underline. A run ends at a line shorter than three quarters of the
    widest (a paragraph's last line, a heading, Debian's ``" ."``)."""
    out: list[tuple[int, int, str]] = []
    i, n = 0, len(lines)
    while i < n:
        indent = len(bodies[i]) - len(bodies[i].lstrip())
        j = i + 1
        while j < n and bodies[j].strip() and len(bodies[j]) - len(bodies[j].lstrip()) == indent:
            j += 1
        width = max(len(x.strip()) for x in bodies[i:j])
        k = i
        while k < j:  # the run's pieces, each ending at a short line
            m = k
            while m < j - 1 and len(bodies[m].strip()) >= 0.75 * width:
                m += 1
            if m - k >= 2 and m - k + 1 < n and _filled(bodies[k : m + 1]) and _broke(bodies[k : m + 1]):
                out.append((lines[k][0], lines[m][1], "prose"))
            else:
                out.extend((a, b, "line") for a, b in lines[k : m + 1])
            k = m + 1
        i = j
    return out


_PLAIN_WORD = re.compile(r"[a-z]+[,;:.]?(?:\s|$)")
_RULER = re.compile(r"([-=~^*+_])\1{2,}$")


def _running(bodies: list[str]) -> bool:
    """Whether short lines are sentences wrapped at no set width (an option's text whose spaces
    were squeezed: "--color" over "Colorize the output. The default is" and "auto when stdout is a
    terminal."): a sentence ends among them, half the lines after one that ends without a mark
    go on with a word in lower case, all lines at one indent, and three words in ten are function
    words (a list of commands and their summaries, a process table, log lines have few)."""
    body = [x.strip() for x in bodies]
    joined = " ".join(body)
    if not _SENTENCE_END.search(joined) or any(_RULER.match(x) or x.startswith("#") for x in body):
        return False  # (a heading's underline or a Markdown heading: a title over a paragraph)
    if not body[0].endswith(_LINE_END_MARK) and body[1][:1].isupper():
        return False  # a title or a name over its text (_paragraph reads it so)
    # one indent: a field's value, code, a list's or a dated entry's next lines are indented more
    # than their first (a man page's paragraph, stripped, is read as wrapped: _indented_throughout)
    if len({len(x) - len(x.lstrip()) for x in bodies}) > 1:
        return False
    goes_on = [
        bool(_PLAIN_WORD.match(body[k + 1]))
        for k in range(len(body) - 1)
        if body[k] and not body[k].endswith(_LINE_END_MARK)
    ]
    if not goes_on or sum(goes_on) < 0.5 * len(goes_on):
        return False
    words = [w.strip(".,;:!?()\"'").lower() for w in joined.split()]
    return sum(w in FUNCTION_WORDS for w in words) >= 0.3 * len(words)


def _broke(bodies: list[str]) -> bool:
    """Whether lines were broken where the next word no longer fitted (seven breaks in ten) in text
    that ends a sentence somewhere: the width a text was wrapped at, not a list of items of about
    one length (a changelog's "top: ..." lines, a diffstat, a list of paths)."""
    body = [x.strip() for x in bodies]
    if not _SENTENCE_END.search("\n".join(body)) or any("\t" in x or " | " in x for x in body):
        return False  # prose ends a sentence somewhere; lists and diffstats of items do not
    width = max(map(len, body))
    broke = [len(a) + 1 + len(b.split()[0]) > width for a, b in zip(body, body[1:], strict=False) if b]
    return bool(broke) and sum(broke) >= 0.7 * len(broke)


#: A sentence's end in running text: a word's last letter (or a closing bracket or quote), then
#: a sentence mark, then a space or the line's end (not ".hpp", not "1.0.2").
_SENTENCE_END = re.compile(r"[A-Za-z)\]'\"’”][.!?](?=\s|$)", re.M)


#: What a wrapped sentence's next line may start with besides a lower-case letter: a quote or an
#: opening bracket (not a digit or "[": log lines start with their time).
_GOES_ON = "‘'\"“(<`"


def _filled(bodies: list[str]) -> bool:
    """Whether a paragraph's lines are running text hard-wrapped at a width (a README, a plain-text
    spec): its lines but the last reach near the widest (seven in ten at 3/4 of it or more, the
    widest 40 characters or more), and half the lines after one that ends without a sentence mark
    go on in lower case (a sentence continued; verse and logs start their lines otherwise)."""
    body = [x.strip() for x in bodies]
    width = max(map(len, body))
    if width < 40:
        return False
    filled = sum(len(x) >= 0.75 * width for x in body[:-1])
    goes_on = [
        nxt[:1].islower() or nxt[:1] in _GOES_ON
        for x, nxt in zip(body, body[1:], strict=False)
        if not x.endswith(_LINE_END_MARK)
    ]
    return filled >= 0.7 * (len(body) - 1) and len(goes_on) > 0 and sum(goes_on) >= 0.5 * len(goes_on)


def _code_mask(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Inline code spans (between backticks) in ``text[start:end]``."""
    out, pos = [], start
    while True:
        a = text.find("`", pos, end)
        if a < 0:
            return out
        run = 1
        while a + run < end and text[a + run] == "`":
            run += 1
        b = text.find("`" * run, a + run, end)
        if b < 0:
            return out
        out.append((a, b + run))
        pos = b + run


def _prose(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Sentences of ``text[start:end]``."""
    code = _code_mask(text, start, end) if text.find("`", start, end) >= 0 else []
    spans = []
    s = start
    j = 0  # the first code span that does not end before the mark (marks come in order)
    for m in _END.finditer(text, start, end):
        cut = m.end(1)
        if code:
            at = m.start()
            while j < len(code) and code[j][1] <= at:
                j += 1
            if j < len(code) and code[j][0] < at:  # inside inline code
                continue
        nxt = m.end()  # after the white space
        if nxt >= end:
            break
        if text[nxt].islower():
            continue
        if text[m.start()] == "." and m.group(1).rstrip("\"'”’)]}»") == ".":
            w = m.start()
            while w > s and not text[w - 1].isspace():
                w -= 1
            word = text[w : m.start()].lstrip("(\"'“‘[")
            if _abbreviation(word):
                continue
        piece = _trim(text, s, cut)
        if piece and _LABEL.fullmatch(text[piece[0] : piece[1]]):  # "b. There is a new option."
            continue
        if piece:
            spans.append(piece)
        s = cut
    piece = _trim(text, s, end)
    if piece:
        spans.append(piece)
    return spans


def _abbreviation(word: str) -> bool:
    low = word.lower()
    if low in ABBREVIATIONS:
        return True
    if len(word) == 1 and word.isalpha() and word.isupper():  # an initial: "J. Smith"
        return True
    return "." in word and all(part.isalpha() and len(part) <= 3 for part in word.split("."))
