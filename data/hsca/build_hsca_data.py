"""Build HSCA's domain lexicons from WordNet's topic domains (offline).

Source: Debian's ``wordnet-base`` (WordNet 3.0 database files under
``/usr/share/wordnet``; licence: WordNet 3.0 licence, Princeton University,
permissive).  Install it once with ``apt-get install wordnet-base``; nothing
is downloaded at run time, the derived ``domain_lexicons.json`` is committed.

Each HSCA domain is mapped to WordNet topic synsets (pointer ``;c``, "domain
of synset - TOPIC"); the lexicon is every single-word lemma of a synset
filed under those topics, minus stop words and words that land in more than
one domain.  ``conversational`` has no WordNet topic; its words stay in
``scwo_np/hsca/layer2.py``.

It also writes ``glosses.json``: up to 400 real definition sentences per domain
("<lemma> is <WordNet definition>."), the material of the evaluation sets.

Usage: ``python data/hsca/build_hsca_data.py``
"""

import json
import re
from pathlib import Path

WORDNET = Path("/usr/share/wordnet")
OUT = Path(__file__).resolve().parent / "domain_lexicons.json"

TOPICS = {
    "physics": ["physics", "natural_philosophy", "nuclear_physics", "atomic_physics", "optics", "mechanics",
                "electromagnetism", "thermodynamics", "quantum_physics", "astronomy"],
    "mathematics": ["mathematics", "math", "geometry", "arithmetic", "algebra", "calculus", "statistics",
                    "trigonometry", "logic"],
    "legal": ["law", "jurisprudence", "criminal_law", "civil_law", "international_law"],
    "medical": ["medicine", "medical_specialty", "surgery", "pathology", "pharmacology", "psychiatry",
                "immunology", "cardiology", "oncology", "neurology", "obstetrics"],
    "poetry": ["poetry", "prosody", "poesy", "verse"],
    "narrative": ["literature", "fiction", "fable", "folklore", "mythology", "drama"],
    "technical_prose": ["computer_science", "computing", "engineering", "electronics", "programming"],
    "philosophical": ["philosophy", "ethics", "metaphysics", "epistemology", "theology", "logic"],
    "historical": ["history", "archeology", "archaeology", "antiquity"],
}  # fmt: skip

STOP = set(
    "a an the of to in on for and or but is are was were be been it its this that with as by at from".split()
)


GLOSSES = Path(__file__).resolve().parent / "glosses.json"
GLOSSES_PER_DOMAIN = 400


def parse(pos):
    """{offset: (lemmas, pointers, gloss)} of one WordNet data file."""
    out = {}
    for line in (WORDNET / f"data.{pos}").read_text(encoding="latin-1").splitlines():
        if line.startswith(" "):
            continue
        left, _, gloss = line.partition(" | ")
        head = left.split()
        offset, n = head[0], int(head[3], 16)
        words = [head[4 + 2 * k].lower() for k in range(n)]
        k = 4 + 2 * n
        p_cnt = int(head[k])
        ptrs = [(head[k + 1 + 4 * j], head[k + 2 + 4 * j], head[k + 3 + 4 * j]) for j in range(p_cnt)]
        out[(pos, offset)] = (words, ptrs, gloss.strip())
    return out


def main():
    synsets = {}
    for pos in ("noun", "verb", "adj", "adv"):
        synsets.update(parse(pos))
    code = {"n": "noun", "v": "verb", "a": "adj", "s": "adj", "r": "adv"}
    by_lemma = {}
    for key, (words, _, _) in synsets.items():
        if key[0] == "noun":
            for w in words:
                by_lemma.setdefault(re.sub(r"\(.*\)$", "", w), []).append(key)
    lexicons = {}
    glosses = {}
    for domain, names in TOPICS.items():
        topics = {k for name in names for k in by_lemma.get(name, [])}
        words = set()
        glosses[domain] = []
        for (_, _), (lemmas, ptrs, gloss) in synsets.items():
            if any(sym == ";c" and (code.get(p, p), off) in topics for sym, off, p in ptrs):
                words.update(re.sub(r"\(.*\)$", "", w) for w in lemmas)
                definition = gloss.split(";")[0].split('"')[0].strip()
                definition = re.sub(r"^\([^)]*\)\s*", "", definition)  # drop "(physics)": no free label
                if len(definition.split()) >= 6:
                    head = lemmas[0].replace("_", " ")
                    glosses[domain].append(f"{head[:1].upper()}{head[1:]} is {definition}.")
        lexicons[domain] = {w for w in words if w.isalpha() and len(w) > 2 and w not in STOP}
    counts = {}
    for ws in lexicons.values():
        for w in ws:
            counts[w] = counts.get(w, 0) + 1
    out = {d: sorted(w for w in ws if counts[w] == 1) for d, ws in lexicons.items()}
    OUT.write_text(json.dumps(out, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print({d: len(v) for d, v in out.items()}, "->", OUT)
    # Real sentences per domain (WordNet definitions, in file order, the first GLOSSES_PER_DOMAIN).
    picked = {d: g[:GLOSSES_PER_DOMAIN] for d, g in glosses.items()}
    GLOSSES.write_text(json.dumps(picked, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print({d: len(v) for d, v in picked.items()}, "->", GLOSSES)


if __name__ == "__main__":
    main()
