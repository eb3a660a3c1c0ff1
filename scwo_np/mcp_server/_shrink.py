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
from ..anchor._records import MIN_BUDGET, split_records
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
    apart = _blocks_apart(blocks, budget, count, query, mode, token_counter, store, hint)
    if apart is not None:
        return apart(result)
    s = shrink_text(
        text,
        budget,
        query=query,
        mode=mode,
        token_counter=token_counter,
        store=store,
        hint=hint,
        tool=RETRIEVE,
    )
    meta = s.meta(budget)
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


def _one_text(blocks) -> bool:
    """Whether text blocks read as one text: of one shape and, as records, the records of each
    together (pages of one log; a Debian changelog beside dpkg's log is "lines" too, but joined to
    it, it was one record glued to the log's last line)."""
    shapes = {_shape(b.text) for b in blocks}
    if len(shapes) > 1:
        return False
    if shapes & {"json", "diff", "prose"}:
        return True
    apart = sum(len(split_records(b.text) or ()) for b in blocks)
    together = split_records("\n".join(b.text for b in blocks))
    return together is not None and len(together) >= apart - (len(blocks) - 1)


def _blocks_apart(blocks, budget, count, query, mode, token_counter, store, hint):
    """For 2 to :data:`MAX_BLOCKS` text blocks of different shapes: a function giving the result with each block within
    its share of ``budget`` (shares by water-filling: a block under an equal share whole, the others
    sharing the rest), or None when one block, or a share under :data:`MIN_BUDGET`, asks for one text."""
    if not 1 < len(blocks) <= MAX_BLOCKS or _one_text(blocks):
        return None
    sizes = [count(b.text) for b in blocks]
    shares = water_fill(sizes, budget)
    if any(sh < size and sh < MIN_BUDGET for sh, size in zip(shares, sizes, strict=True)):
        return None
    done = {
        id(b): shrink_text(
            b.text,
            sh,
            query=query,
            mode=mode,
            token_counter=token_counter,
            store=store,
            hint=hint,
            tool=RETRIEVE,
        )
        for b, sh, size in zip(blocks, shares, sizes, strict=True)
        if size > sh
    }
    metas = [
        done[id(b)].meta(sh) if id(b) in done else {"form": "whole", "tokens": size, "budget": sh}
        for b, sh, size in zip(blocks, shares, sizes, strict=True)
    ]

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
