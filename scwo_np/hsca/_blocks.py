"""The context's text: a turn's kept text, its citation, and the cited blocks (or runs) they make.

:meth:`HSCAEngine.context <scwo_np.hsca.HSCAEngine.context>` renders what it keeps of each turn as
a block headed by the turn's citation, ``[turn 12, snapshot 3] sentence. sentence.``, the blocks in
conversation order separated by :data:`SEPARATOR`.  When the budget holds the whole conversation
(:func:`~scwo_np.hsca._context.whole_talk`), consecutive turns make one *run* under one citation,
``[turns 1-6] first turn`` then the next turns, each after :data:`SEPARATOR` as in the conversation
itself: a citation per turn cost more than the one citation the context may add to the
conversation, and whole turns went to pay for them (a six-turn question-and-answer talk from the
Debian FAQ, 265 tokens, at a budget of 2,000 came back without its first or its third turn; by the
cl100k counter and without a query, without its third and fifth).  Each turn of a run keeps its own
piece (:class:`~scwo_np.hsca.ContextPiece`: its turn, snapshot, spans and citation), so a caller
can still map every sentence to its turn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ._types import ContextPiece, citation

__all__ = [
    "ELISION",
    "ELISION_LINES",
    "SEPARATOR",
    "FILE_UNITS",
    "citation",
    "fenced_lines",
    "file_lines",
    "join_blocks",
    "kept_text",
    "line_spans",
    "run_citation",
]

#: What joins two kept units of one turn that were not adjacent in it.
ELISION = " … "

#: What joins two kept lines of an excerpt that were not adjacent in its turn.
ELISION_LINES = "\n…\n"

#: What separates the blocks of the context, and the turns of a run (as in the conversation).
SEPARATOR = "\n\n"


def line_spans(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """The non-blank lines of ``text[a:b]`` as spans of ``text``, without their line breaks and the
    white space at their ends (what an excerpt of a large unit keeps).

    Examples
    --------
    >>> text = "x" + chr(10) + "  if a:" + chr(10) * 2 + "    b" + chr(10)
    >>> [text[a:b] for a, b in line_spans(text, 0, len(text))]
    ['x', 'if a:', 'b']
    """
    out, start = [], a
    for line in text[a:b].split("\n"):
        stripped = line.strip()
        if stripped:
            lead = len(line) - len(line.lstrip())
            out.append((start + lead, start + lead + len(stripped)))
        start += len(line) + 1
    return out


def run_citation(first: int, last: int) -> str:
    """The citation of a run of consecutive turns: ``"turns 1-6"`` (a run of one turn is cited by
    :func:`citation`).  No snapshot: it must cost no more than the one citation the context may add
    to the conversation (``"[turn 9999, snapshot 9999] "``), and a run may span several."""
    return f"turns {first}-{last}"


def kept_text(text: str, spans: list[tuple[int, int]], *, lines: bool = False) -> str:
    """The kept spans of ``text`` in order: adjacent ones with the text between them (white
    space), the others joined by :data:`ELISION` (with ``lines``, the lines of a pasted file or an
    excerpt, by :data:`ELISION_LINES`, each line that starts one with its indentation, so code
    keeps its lines and its shape).

    Examples
    --------
    >>> nl = chr(10)
    >>> text = "a = 1" + nl + "b = 2" + nl + "  c = 3"
    >>> kept_text(text, [(0, 5), (14, 19)]), kept_text(text, [(0, 5), (14, 19)], lines=True).split(nl)
    ('a = 1 … c = 3', ['a = 1', '…', '  c = 3'])
    """
    out: list[str] = []
    for k, (a, b) in enumerate(spans):
        if lines and not text[(head := text.rfind("\n", 0, a) + 1) : a].strip():
            a = head if not k or head >= spans[k - 1][1] else a  # (its indentation)
        if k:
            gap = text[spans[k - 1][1] : a]
            out.append(gap if not gap.strip() else ELISION_LINES if lines else ELISION)
        out.append(text[a:b])
    return "".join(out)


def join_blocks(blocks: Sequence[tuple[int, str, str]], *, runs: bool = False) -> str:
    """The context's text of ``blocks``, each ``(turn, its citation, its kept text)`` in turn order:
    ``[citation] text`` per block, separated by :data:`SEPARATOR`; with ``runs``, consecutive turns
    make one block, ``[turns 3-5] text`` with their texts separated by :data:`SEPARATOR` too.

    Examples
    --------
    >>> blocks = [(1, "turn 1", "Hi."), (2, "turn 2", "Hello."), (4, "turn 4", "Bye.")]
    >>> join_blocks(blocks)
    '[turn 1] Hi.\\n\\n[turn 2] Hello.\\n\\n[turn 4] Bye.'
    >>> join_blocks(blocks, runs=True)
    '[turns 1-2] Hi.\\n\\nHello.\\n\\n[turn 4] Bye.'
    """
    heads: list[list] = []  # [first turn, last turn, its citation, texts]
    for turn, cite, text in blocks:
        if runs and heads and heads[-1][1] == turn - 1:
            heads[-1][1] = turn
            heads[-1][3].append(text)
        else:
            heads.append([turn, turn, cite, [text]])
    return SEPARATOR.join(
        f"[{cite if a == b else run_citation(a, b)}] {SEPARATOR.join(texts)}" for a, b, cite, texts in heads
    )


def as_pieces(
    picks: dict[int, dict[int, float]],
    reasons: dict[int, str],
    turn_text: Callable[[int], str],
    turn_meta: Callable[[int], tuple[str, str | None, int | None]],
    index: Any,
    extra: dict[int, tuple[list[tuple[int, int]], float]] | None = None,
) -> list[ContextPiece]:
    """The kept units, turn by turn in conversation order, as pieces; ``extra`` adds to a turn the
    lines of an excerpt (their spans and the excerpted unit's relevance), which flags its piece.
    The kept lines of a pasted file (:func:`file_lines`, :func:`fenced_lines`) or of an excerpt are
    joined as lines (:func:`kept_text`)."""
    extra = extra or {}
    out = []
    for t in sorted(set(picks) | set(extra)):
        spans = sorted([index.unit_span[u] for u in picks.get(t, {})] + list(extra.get(t, ((), 0.0))[0]))
        text = turn_text(t)
        chunk_id, snapshot_id, snapshot = turn_meta(t)
        score = max([*picks.get(t, {}).values(), *([extra[t][1]] if t in extra else [])], default=0.0)
        out.append(
            ContextPiece(
                t + 1,
                chunk_id,
                snapshot_id,
                snapshot,
                spans,
                kept_text(text, spans, lines=t in extra or any(index.unit_line[u] for u in picks.get(t, {}))),
                score,
                reasons[t],
                t in extra,
            )
        )
    return out


#: The fewest units of a turn that is a pasted file when they are whole lines (:func:`file_lines`).
FILE_UNITS = 8


def file_lines(text: str, units: list[tuple[int, int]]) -> list[bool]:
    """Whether each unit is lines of a pasted file: a turn of at least :data:`FILE_UNITS` units,
    eight in ten of them whole lines (a config file, code, a listing), not sentences that begin
    and end inside lines."""
    if len(units) < FILE_UNITS:
        return [False] * len(units)
    whole = [
        not text[text.rfind("\n", 0, a) + 1 : a].strip() and not text[b : _line_end(text, b)].strip()
        for a, b in units
    ]
    return whole if sum(whole) >= 0.8 * len(units) else [False] * len(units)


def fenced_lines(text: str, units: list[tuple[int, int]]) -> tuple[list[tuple[int, int]], list[bool]]:
    """``units`` with each fenced code block of at least :data:`FILE_UNITS` lines (a file pasted
    between ```` ``` ```` or ``~~~`` fences) cut into its lines, fences included, and whether each
    unit is such a line.  The splitter keeps a fenced block whole, with the sentence that announces
    it ("Here's my ssh config:"): one unit for a whole file, which a context could only excerpt in
    the room its other picks left (of ten questions on four pasted config and source files, the
    answer line was in 133 of 190 contexts fenced, against 166 pasted bare, and came and went as
    the budget grew).

    Examples
    --------
    >>> nl = chr(10)
    >>> text = "My config:" + nl + "```" + nl + nl.join(f"k{i} = {i}" for i in range(8)) + nl + "```"
    >>> units, line = fenced_lines(text, [(0, len(text))])
    >>> [text[a:b] for a, b in units][:3], line[:3], len(units)
    (['My config:', '```', 'k0 = 0'], [False, True, True], 11)
    """
    out: list[tuple[int, int]] = []
    line: list[bool] = []

    def plain(a: int, b: int) -> None:  # the unit's text outside its fences, white space trimmed
        if body := text[a:b].strip():
            start = a + text[a:b].index(body[0])
            out.append((start, start + len(body)))
            line.append(False)

    for a, b in units:
        fences = _fences(text, a, b)
        if not fences:
            out.append((a, b))
            line.append(False)
            continue
        for fa, fb in fences:
            plain(a, fa)
            spans = line_spans(text, fa, fb)
            out.extend(spans)
            line.extend([True] * len(spans))
            a = fb
        plain(a, b)
    return out, line


def _fences(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """The spans of ``text[a:b]``'s fenced blocks, opening fence line to closing fence line, that
    hold at least :data:`FILE_UNITS` non-blank lines."""
    out: list[tuple[int, int]] = []
    opened: tuple[int, str] | None = None  # where the open fence starts, and its marks
    inner = 0
    pos = a
    while pos < b:
        end = min(_line_end(text, pos), b)
        body = text[pos:end].strip()
        if opened is None:
            if body.startswith(("```", "~~~")):
                opened, inner = (pos, body[: len(body) - len(body.lstrip(body[0]))]), 0
        elif body.startswith(opened[1]) and not body.strip(opened[1][0]):  # the closing fence
            if inner >= FILE_UNITS:
                out.append((opened[0], end))
            opened = None
        elif body:
            inner += 1
        pos = end + 1
    return out


def _line_end(text: str, at: int) -> int:
    end = text.find("\n", at)
    return len(text) if end < 0 else end
