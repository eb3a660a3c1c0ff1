"""Build HSCA's background word-association model and its real-text evaluation set (offline).

Layer 1 asks, for every pair of adjacent words in a chunk, whether real English
puts those two words next to each other more often than chance.  The answer
comes from a background corpus counted once here and shipped as a compact
sparse table; nothing is downloaded or counted at run time.

Background corpus (Debian packages; install once with
``apt-get install dict-jargon wordnet-base python3-doc``), permissive sources only,
so that the statistics ship in the MIT wheel:

* ``dict-jargon`` — the Jargon File 4.4.7, public domain;
* ``wordnet-base`` — WordNet 3.0 definitions, WordNet 3.0 licence (permissive);
* ``python3-doc`` — the reST sources of the Python documentation, PSF-2.0.

Until issue 31 it also counted GCIDE (GPL-3.0+) and FOLDOC (GFDL-1.1+): 9.1 M
words then, 2.9 M now (``data/README.md`` has the HSCA figures before and after).

Kept out of the background, so that no evaluation text was counted: the 32
modules of the bundled Python-docs sample (eval 4 and the demo), every WordNet
definition used by evals 1-3 and 5 (``glosses.json``, ``bridges.json``), and
every source of the real-text set below.

Counting: text is cut exactly as :func:`scwo_np.hsca._layer1.runs` cuts it at run
time (paragraphs, sentences, and runs of words between commas, colons and
sentence ends; lower case).  Every ordered pair of adjacent words in a run is
counted.  A pair ``(a, b)`` is an *association* when it was seen at least
``MIN_COUNT`` times and its pointwise mutual information is positive:
``count(a, b) * N > count(a) * count(b)`` (``N`` word tokens).  Only the set of
associations is shipped (``background.npz``: the words, then CSR rows of
follower ids), not counts or text.

Real-text set (``scwo_evals/data/hsca/real_texts.jsonl``, evaluation only, not in the wheel), real English no one here wrote and that
no background source contains, 50-300 words each:

* ``fortunes`` — the fortune cookie files (quotations, anecdotes, poems, jokes,
  short essays), Debian ``fortunes`` / ``fortunes-min``; the collection is
  distributed under the BSD licence of fortune-mod, individual quotations are
  short excerpts of their authors' works;
* ``dict-devil`` — Ambrose Bierce, *The Devil's Dictionary* (1911), public domain;
* ``/usr/share/common-licenses`` (``base-files``) — paragraphs of the licence
  texts (legal prose); the licences allow verbatim copies.

Each text carries its source file as ``category`` and a fixed ``split``: one
third (by a hash of the text) is ``held_out`` and is never used to choose any
constant of layer 1 or coherence; the rest is ``tune``.

Usage: ``python tools/build_data/build_background.py``
"""

import glob
import gzip
import hashlib
import json
import pathlib
import re
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "data" / "hsca"  # installed with the package
EVAL = ROOT / "scwo_evals" / "data" / "hsca"  # evaluation material, source tree only
sys.path.insert(0, str(ROOT))

from scwo_np.hsca._layer1 import runs  # noqa: E402

#: A pair must be seen this often to count as an association.
MIN_COUNT = 2
DICTD = pathlib.Path("/usr/share/dictd")
PYDOC = pathlib.Path("/usr/share/doc/python3-doc/html/_sources")
WORDNET = pathlib.Path("/usr/share/wordnet")
FORTUNES = pathlib.Path("/usr/share/games/fortunes")
LICENSES = pathlib.Path("/usr/share/common-licenses")


def _dict(name: str) -> str:
    return gzip.open(DICTD / f"{name}.dict.dz", "rt", encoding="utf-8", errors="replace").read()


def _held_out_glosses() -> set[str]:
    """WordNet definitions the evals use, normalised for comparison."""
    out: set[str] = set()
    glosses = json.loads((EVAL / "glosses.json").read_text())
    for items in glosses.values():
        for s in items:
            out.add(_norm(s.split(" is ", 1)[-1]))
    bridges = json.loads((EVAL / "bridges.json").read_text())
    for pairs in bridges.values():
        for pair in pairs:
            out.update(_norm(s) for s in pair)
    return out


def _norm(s: str) -> str:
    return " ".join(re.findall(r"[a-z]+", s.lower()))


def background_texts():
    """``(source, text)`` of every background document."""
    for name in ("jargon",):
        yield name, re.sub(r"[{}\[\]<>|*`=_#]", " ", _dict(name))
    sample = {
        json.loads(line)["source"].split("/")[-1]
        for line in (ROOT / "data" / "pydoc_sample.jsonl").read_text().splitlines()
    }
    for p in sorted(glob.glob(str(PYDOC / "**" / "*.txt"), recursive=True)):
        if pathlib.Path(p).name.removesuffix(".txt") in sample:
            continue
        yield "python3-doc", re.sub(r"[`*=_#|]", " ", pathlib.Path(p).read_text(errors="replace"))
    held = _held_out_glosses()
    for pos in ("noun", "verb", "adj", "adv"):
        defs = []
        for line in (WORDNET / f"data.{pos}").read_text(errors="replace").splitlines():
            if line.startswith("  ") or "| " not in line:
                continue
            gloss = line.split("| ", 1)[1]
            for part in gloss.split(";"):
                if _norm(part.strip().strip('"')) in held:
                    break
            else:
                defs.append(gloss)
        yield "wordnet", "\n\n".join(defs)


def count(vocab: dict[str, int]) -> tuple[np.ndarray, np.ndarray, int]:
    """Word counts and ordered adjacent-pair keys ``a * 2**32 + b`` of the background."""
    ids: list[int] = []
    for _, text in background_texts():
        for _, _, run in runs(text):
            ids.append(-1)  # a run boundary: no pair crosses it
            for w in run:
                i = vocab.get(w)
                if i is None:
                    i = vocab[w] = len(vocab)
                ids.append(i)
    a = np.asarray(ids, np.int64)
    words = a[a >= 0]
    uni = np.bincount(words, minlength=len(vocab))
    left, right = a[:-1], a[1:]
    ok = (left >= 0) & (right >= 0)
    keys = (left[ok] << 32) | right[ok]
    return uni, keys, int(words.shape[0])


def associations(uni: np.ndarray, keys: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(a, b)`` of every pair seen ``MIN_COUNT`` times with positive PMI."""
    u, c = np.unique(keys, return_counts=True)
    a = u >> 32
    b = u & 0xFFFFFFFF
    keep = (c >= MIN_COUNT) & (c.astype(np.float64) * n > uni[a].astype(np.float64) * uni[b])
    return a[keep], b[keep]


def build_model(out: pathlib.Path) -> dict:
    vocab: dict[str, int] = {}
    uni, keys, n = count(vocab)
    a, b = associations(uni, keys, n)
    # Keep only the words that take part in an association, renumbered by frequency.
    used = np.unique(np.concatenate([a, b]))
    order = used[np.argsort(-uni[used], kind="stable")]
    new = np.full(len(vocab), -1, np.int64)
    new[order] = np.arange(order.shape[0])
    words = np.array(list(vocab), dtype=object)[order]
    a, b = new[a], new[b]
    srt = np.lexsort((b, a))
    a, b = a[srt], b[srt]
    indptr = np.zeros(order.shape[0] + 1, np.int64)
    np.add.at(indptr, a + 1, 1)
    indptr = np.cumsum(indptr).astype(np.int32)
    blob = "\n".join(words.tolist()).encode("utf-8")
    np.savez_compressed(out, words=np.frombuffer(blob, np.uint8), indptr=indptr, indices=b.astype(np.int32))
    return {"tokens": n, "vocabulary": len(vocab), "words kept": int(order.shape[0]),
            "associations": int(a.shape[0])}  # fmt: skip


def fortunes():
    for p in sorted(FORTUNES.iterdir()):
        if "." in p.name or p.is_symlink() or p.is_dir() or p.name == "ascii-art":  # pictures, not prose
            continue
        for item in p.read_text(encoding="utf-8", errors="replace").split("\n%\n"):
            yield "fortunes", p.name, item.strip()


def devil():
    raw = _dict("devil")
    for entry in re.split(r"\n\n(?=[A-Z][A-Z'\- ]+, [a-z]+\.)", raw)[1:]:
        yield "dict-devil", "devil", re.sub(r"^[A-Z][A-Z'\- ]+, [a-z.]+\s+", "", entry).strip()


def licences():
    for p in sorted(LICENSES.iterdir()):
        if p.is_symlink():
            continue
        for para in re.split(r"\n\s*\n", p.read_text(errors="replace")):
            if sum(ch.isalpha() for ch in para) > 0.7 * len(para):
                yield "common-licenses", p.name, para.strip()


def build_real_texts(out: pathlib.Path) -> dict:
    seen: set[str] = set()
    rows = []
    for gen in (fortunes(), devil(), licences()):
        for source, category, text in gen:
            if not 50 <= len(text.split()) <= 300 or text in seen:
                continue
            seen.add(text)
            h = int(hashlib.sha1(text.encode("utf-8")).hexdigest(), 16)
            rows.append({"source": source, "category": category,
                         "split": "held_out" if h % 3 == 0 else "tune", "text": text})  # fmt: skip
    with out.open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    return {"texts": len(rows), "held_out": sum(r["split"] == "held_out" for r in rows)}


def main() -> None:
    print("background:", build_model(SHIPPED / "background.npz"))
    print("real texts:", build_real_texts(EVAL / "real_texts.jsonl"))


if __name__ == "__main__":
    main()
