"""What ``scwo mcp proxy`` does to one ``CallToolResult``: its text within a budget.

:func:`shrink_result` applies :func:`scwo_np.shrink.shrink_text` (a text within a token budget by
its shape: JSON, a diff, records, prose) to a result's text blocks: a result whose text blocks
fit comes back as the very same object; an error result's text is held to the budget like any
other's; text blocks of different shapes are each shrunk within their share of the budget.
"""

from __future__ import annotations

import json
from typing import Any

from ..anchor import CrushStore
from ..anchor._diff import split_diff
from ..anchor._records import MIN_BUDGET, record_kind, split_records
from ..anchor._timeline import water_fill
from ..shrink import LOSSLESS_FORMS, Shrunk, shrink_text
from ..shrink._text import _counter, _read_json

__all__ = ["RETRIEVE", "shrink_result"]

#: The proxy's own tool that gives back what a shrunk result left out (the markers name it).
RETRIEVE = "retrieve_dropped"


def shrink_result(
    result: Any,
    budget: int,
    *,
    query: str = "",
    mode: str = "auto",
    token_counter: object = None,
    store: CrushStore | None = None,
    hint: str = "",
) -> tuple[Any, Shrunk | None]:
    """A ``CallToolResult`` whose text blocks fit ``budget``, and what was done (None: nothing).

    A result whose text blocks together fit, and ``mode="off"``, give back the same object.
    Otherwise (an error result too: a tool error whose text is a whole log is still read by the
    model, so it is held to the budget, and stays an error) the text blocks become one, within ``budget`` (:func:`shrink_text`),
    the other blocks (images, resources) stay as they are, and the structured content, which
    no longer matches the text, becomes the crushed JSON when the text was that JSON, and is
    dropped otherwise, with a note in ``_meta["scwo_np/proxy"]``.
    """
    from mcp_types import TextContent

    if mode == "off":
        return result, None
    blocks = [c for c in result.content if isinstance(c, TextContent)]
    if not blocks:
        return result, None
    text = blocks[0].text if len(blocks) == 1 else "\n".join(b.text for b in blocks)
    count = _counter(token_counter)
    if count(text) <= budget:
        return result, None
    kw = dict(query=query, mode=mode, token_counter=token_counter, store=store, hint=hint, tool=RETRIEVE)
    apart = _blocks_apart(blocks, budget, count, kw)
    if apart is not None:
        return apart(result)
    files = _files_apart(text, budget, count, kw) if len(blocks) == 1 else None
    s = files[0] if files is not None else shrink_text(text, budget, **kw)
    meta = s.meta(budget)
    if files is not None:
        meta["parts"] = files[1]
    structured = result.structured_content
    if structured is not None:
        structured = _consistent(text, structured, s)
        meta["structured_content"] = (
            "kept: the crushed JSON of the text" if structured is not None else
            f"dropped: it no longer matched the text, which is whole, in a shorter form ({s.form})"
            if s.form in LOSSLESS_FORMS else
            "dropped: it no longer matched the text; the text says what was left out and the key that gives it back"
        )  # fmt: skip
    content, placed = [], False
    for c in result.content:
        if isinstance(c, TextContent):
            if not placed:
                content.append(TextContent(type="text", text=s.text, annotations=c.annotations))
                placed = True
        else:
            content.append(c)
    out = result.model_copy(
        update={
            "content": content,
            "structured_content": structured,
            "meta": {**(result.meta or {}), "scwo_np/proxy": meta},
        }
    )
    return out, s


#: Text blocks of different shapes, up to this many, are shrunk each within its share of the budget
#: (a log and a document in one result: merged, the document was one "record" of the log's, dropped
#: with no word of it); blocks of one shape (a log in pages) and more blocks (an SDK server's list
#: result: one block per item) are one text, crushed as one.
MAX_BLOCKS = 8


def _shape(text: str) -> str:
    """What :func:`shrink_text` would read ``text`` as, roughly: JSON, a diff, records of a shape, or prose."""
    if _read_json(text) is not None:
        return "json"
    if split_diff(text) is not None:
        return "diff"
    recs = split_records(text)
    return "prose" if recs is None else recs.shape


def _one_text(texts: list[str]) -> bool:
    """Whether texts (a result's text blocks) read as one text: of one shape and, as records, the
    records of each together (pages of one log; a Debian changelog beside dpkg's log is "lines" too,
    but joined to it, it was one record glued to the log's last line)."""
    shapes = {_shape(t) for t in texts}
    if len(shapes) > 1:
        return False
    if shapes & {"json", "diff", "prose"}:
        return True
    each = [split_records(t) for t in texts]
    if len({record_kind(r) for r in each if r is not None}) > 1:  # a log beside a changelog: both "lines"
        return False
    apart = sum(len(r or ()) for r in each)
    together = split_records("\n".join(texts))
    return together is not None and len(together) >= apart - (len(texts) - 1)


def _apart(texts: list[str], budget: int, count, kw: dict) -> tuple[list, list[dict], list[int]] | None:
    """Each of ``texts`` within its share of ``budget`` (shares by water-filling: a text under an
    equal share whole, the others sharing the rest): its :class:`Shrunk` (None: whole), its meta,
    its size; None when a share under :data:`MIN_BUDGET` asks for one text."""
    sizes = [count(t) for t in texts]
    shares = water_fill(sizes, budget)
    if any(sh < size and sh < MIN_BUDGET for sh, size in zip(shares, sizes, strict=True)):
        return None
    done = [
        shrink_text(t, sh, **kw) if size > sh else None
        for t, sh, size in zip(texts, shares, sizes, strict=True)
    ]
    metas = [
        d.meta(sh) if d is not None else {"form": "whole", "tokens": size, "budget": sh}
        for d, sh, size in zip(done, shares, sizes, strict=True)
    ]
    return done, metas, sizes


#: The reference filesystem server's ``read_multiple_files``: each file as ``PATH:``, a line break
#: and its text, the files separated by a line ``---``.
_FILE_SEP = "\n---\n"


def _files_apart(text: str, budget: int, count, kw: dict) -> tuple[Shrunk, list[dict]] | None:
    """Files of different shapes in one text, each ``PATH:`` on its own line and the files separated
    by ``---`` lines (the reference filesystem server's ``read_multiple_files``): each file's text
    within its share, its header and the separators kept, and each file's meta; None when ``text``
    is not such files or they read as one text.  Read as one text, a log beside a document was
    prose: the log's newest lines and both paths were lost."""
    parts = text.split(_FILE_SEP)
    heads = [p.split("\n", 1) for p in parts]
    if not 1 < len(parts) <= MAX_BLOCKS or any(
        len(h) < 2 or not h[0].endswith(":") or len(h[0]) > 300 or not h[0].strip(": ") for h in heads
    ):
        return None
    bodies = [h[1] for h in heads]
    if _one_text(bodies):
        return None
    room = budget - count(_FILE_SEP.join(f"{h[0]}\n" for h in heads))  # the paths and separators
    for _ in range(4):  # a counter whose counts do not add up: less room by the overflow
        got = _apart(bodies, room, count, kw) if room > 0 else None
        if got is None:
            return None
        done, metas, sizes = got
        out = _FILE_SEP.join(
            f"{h[0]}\n{d.text if d is not None else b}" for h, b, d in zip(heads, bodies, done, strict=True)
        )
        if (tokens := count(out)) <= budget:
            return Shrunk(out, "files", tokens, count(text)), metas
        room -= tokens - budget
    return None


def _blocks_apart(blocks, budget, count, kw):
    """For 2 to :data:`MAX_BLOCKS` text blocks of different shapes: a function giving the result with
    each block within its share of ``budget`` (:func:`_apart`), or None when one block, or a share
    under :data:`MIN_BUDGET`, asks for one text."""
    if not 1 < len(blocks) <= MAX_BLOCKS or _one_text([b.text for b in blocks]):
        return None
    got = _apart([b.text for b in blocks], budget, count, kw)
    if got is None:
        return None
    shrunk, metas, sizes = got
    done = {id(b): d for b, d in zip(blocks, shrunk, strict=True) if d is not None}

    def apply(result):
        content = [
            c.model_copy(update={"text": done[id(c)].text}) if id(c) in done else c for c in result.content
        ]
        meta = {
            "form": "blocks",
            "tokens": sum(m["tokens"] for m in metas),
            "tokens_before": sum(sizes),
            "budget": budget,
            "blocks": metas,
        }
        if result.structured_content is not None:
            meta["structured_content"] = (
                "dropped: it no longer matched the text blocks; each says what was left out"
            )
        out = result.model_copy(
            update={
                "content": content,
                "structured_content": None,
                "meta": {**(result.meta or {}), "scwo_np/proxy": meta},
            }
        )
        texts = [done[id(b)].text if id(b) in done else b.text for b in blocks]
        return out, Shrunk("\n".join(texts), "blocks", meta["tokens"], meta["tokens_before"])

    return apply


def _consistent(text: str, structured: Any, s: Shrunk) -> dict | None:
    """The structured content for the shrunk text: its JSON when the text was the structured content
    as JSON and is still a JSON object; None (dropped) otherwise."""
    try:
        if json.loads(text) != structured:
            return None
        value = json.loads(s.text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None
