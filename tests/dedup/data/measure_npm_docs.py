"""Measure dedup on npm's own docs (Node ecosystem): paragraphs of /usr/lib/node_modules/npm/docs/content/**/*.md.

Halves by a hash of the file name (tune / held out), 500 random paragraphs (>= 80 characters) each; run
with PYTHONPATH at the checkout.  Nothing is committed from these files (npm is Artistic-2.0)."""

import glob
import hashlib
import re
from difflib import SequenceMatcher

import numpy as np

from scwo_np.dedup import DEDUP_METHODS, deduplicate
from scwo_np.embed import as_embedder, embed_texts


def main():
    rows = []
    for p in sorted(glob.glob("/usr/lib/node_modules/npm/docs/content/**/*.md", recursive=True)):
        txt = open(p, encoding="utf-8").read()
        for para in re.split(r"\n\s*\n", txt):
            para = para.strip()
            if len(para) >= 80:
                rows.append((p.split("/content/")[1], para))

    # Disjoint halves by file: tune (even hash) vs held out (odd hash).
    def half(f):
        return "held_out" if hashlib.sha256(f.encode()).digest()[0] & 1 else "tune"

    def words(t):
        return {w for w in t.lower().split() if len(w) > 2}

    def jac(a, b):
        u = words(a) | words(b)
        return len(words(a) & words(b)) / len(u) if u else 0.0

    rng = np.random.default_rng(0)
    for sp in ["tune", "held_out"]:
        part = [r for r in rows if half(r[0]) == sp]
        part = [part[i] for i in sorted(rng.choice(len(part), min(500, len(part)), replace=False))]
        texts = [p for _, p in part]
        src = [f for f, _ in part]
        E = embed_texts(as_embedder("lsa", texts), texts)
        nE = E / np.linalg.norm(E, axis=1, keepdims=True)
        for m in DEDUP_METHODS:
            for t in [DEDUP_METHODS[m]] + ([0.5] if m in ("jaccard", "minhash") else []):
                for g in ["components", "greedy"]:
                    kw = {"embeddings": E} if m == "cosine" else {"texts": texts}
                    r = deduplicate(method=m, threshold=t, grouping=g, **kw)
                    below = 0
                    for d, k in zip(r.dropped.tolist(), r.duplicate_of.tolist(), strict=True):
                        lo, hi = min(d, k), max(d, k)
                        if texts[d] == texts[k]:
                            continue
                        if m == "sequence":
                            s = SequenceMatcher(None, texts[hi].lower(), texts[lo].lower()).ratio()
                        elif m == "cosine":
                            s = float(nE[lo] @ nE[hi])
                        else:
                            s = jac(texts[lo], texts[hi])
                        below += s < t - 1e-9
                    grp = {}
                    for d, k in zip(r.dropped.tolist(), r.duplicate_of.tolist(), strict=True):
                        grp.setdefault(k, {src[k]}).add(src[d])
                    print(
                        f"{sp:9} n={len(texts)} {m:9} {t:.1f} {g:11} dropped={len(r.dropped):4} below={below:3} largest_files={max(map(len, grp.values()), default=1)}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
