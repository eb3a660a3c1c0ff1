"""Build HSCA's domain lexicons from WordNet's topic domains (offline, permissive sources only).

Sources (Debian packages; install once with ``apt-get install wordnet-base
hunspell-en-us dict-jargon``; nothing is downloaded at run time, the derived
``domain_lexicons.json`` is committed and shipped in the MIT wheel):

* ``wordnet-base`` — WordNet 3.0 (``/usr/share/wordnet``), WordNet 3.0 licence
  (Princeton University; permissive, BSD-like);
* ``hunspell-en-us`` — SCOWL's American English word list
  (``/usr/share/hunspell/en_US.dic``), SCOWL licence (permissive, MIT-like);
* ``dict-jargon`` — the Jargon File 4.4.7 head words, public domain.

Until issue 31 the lexicons also took GCIDE's subject-labelled head words
(GPL-3.0+), FOLDOC's head words (GFDL) and OpenMedSpel's medical spelling list
(GPL-3+); those are gone, replaced by WordNet hyponym trees and the Jargon File
(the HSCA figures before and after are in ``data/README.md``).

Each HSCA domain is mapped to WordNet topic synsets (pointer ``;c``, "domain
of synset - TOPIC").  Those synsets are split once, deterministically:

* held out (the evaluation material): both ends of up to 60 bridge pairs per
  domain, then every third remaining synset;
* training (the lexicon): every single-word lemma of the other synsets, plus
  the words of their definitions that are specific to the domain (at least
  ``GLOSS_MIN_COUNT`` definitions, ``GLOSS_LIFT`` times more frequent than in
  WordNet's definitions outside every topic, and more frequent there than in
  any other domain); plus the single-word hyponyms (and instances) of the
  domain's root senses (``DOMAIN_ROOTS``: "drug", "disease", "legal_document",
  "elementary_particle", ...) that are rare in WordNet's general definitions,
  never descending into a held-out synset; minus stop words and words that land
  in two domains;
* for legal and medical (``SENSE_ROOTED``, issue 42) also the root senses' hyponyms
  and the words one derivation or pertainym pointer away from them ("prosecute",
  "adjudicate") that WordNet's general definitions use often, when at least
  ``ROOTED_SHARE`` of the word's senses (SemCor-weighted, else by synset count) are
  the domain's and SemCor tags it fewer than ``SEMCOR_EVERYDAY`` times ("kidney",
  "diabetes", "pregnancy", "legislature", "forfeiture" come in; "head", "hand", "eye" stay out;
  alcoholic drinks, ``EXCLUDE_ROOTS``, are not drugs here): the everyday words of
  patient leaflets, clinical notes, court opinions and contracts;
* specificity: a WordNet word that SemCor (``cntlist.rev`` of
  ``wordnet-base``) tags at least ``SEMCOR_MIN`` times is kept only when the
  domain's senses make up ``SENSE_SHARE`` of its uses ("use", "case" and
  "party" have legal senses, but ordinary prose uses them otherwise);
* gap words, matched by layer 2 only as written or inflected: the Jargon File's
  head words and the technical root senses' hyponyms rare in WordNet's general
  definitions, for technical prose; and the medical root senses' hyponyms that
  the general English list of ``hunspell-en-us`` lacks (with its inflections),
  for medical ("metoprolol", "hyperlipidemia");
* ``_common``: the general English words (``hunspell-en-us``) that share a
  Snowball stem with a lexicon word without inflecting it ("right" and
  "rights", "done" and "donee"); layer 2 lets them borrow that word's domain
  only when they are longer than it.

So no evaluation sentence contributed a word to the lexicons that score it; no
word of the real documents of evals 6 and 7 did either.
``conversational`` has no WordNet topic; its words stay in
``scwo_np/hsca/_layer2.py``.

Outputs (all committed; only the lexicons are installed, as ``scwo_np.bundled/hsca``):

* ``domain_lexicons.json`` — the training lexicons;
* ``glosses.json`` — up to 400 held-out definition sentences per domain,
  "<lemma> is <WordNet definition>." (evals 1-3);
* ``bridges.json`` — per domain, held-out pairs of definitions of two
  WordNet-related synsets (hypernym, derivation, part, ...) that share no
  content word, without their head words (eval 5).

Usage: ``python tools/build_data/build_hsca_data.py``
"""

import json
import re
import sys
from pathlib import Path

import snowballstemmer

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from scwo_np.hsca._layer2 import _bases, inflects  # noqa: E402

WORDNET = Path("/usr/share/wordnet")
OUT = ROOT / "data" / "hsca" / "domain_lexicons.json"

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
    "a an the of to in on for and or but is are was were be been it its this that with as by at from "
    "would could might".split()
)


GLOSSES = ROOT / "scwo_evals" / "data" / "hsca" / "glosses.json"
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


#: A gap word joins only if its Snowball stem occurs in fewer of WordNet's general
#: definitions than this (so "takes", "doors" do not bring "take", "door" in).
GAP_MAX_BACKGROUND = 20


#: A WordNet lemma joins a domain's lexicon only when that domain's senses account for at least
#: this share of the lemma's tagged uses in SemCor (``cntlist.rev``), so a word whose legal sense
#: is rare ("use", "case", "party" in "a party of four") does not make ordinary prose legal ...
SENSE_SHARE = 0.25
#: ... among lemmas SemCor tags at least this often.  Rarer ones are kept: a lower bar took
#: too many of the words WordNet's own definitions use, and eval 5 fell below its criterion.
SEMCOR_MIN = 100
_SS_TYPE = {"1": "noun", "2": "verb", "3": "adj", "4": "adv", "5": "adj"}


def sense_counts():
    """{lemma: [(synset key, SemCor tag count), ...]} over every sense of every part of speech."""
    offsets = {}
    for pos in ("noun", "verb", "adj", "adv"):
        for line in (WORDNET / f"index.{pos}").read_text(encoding="latin-1").splitlines():
            if line.startswith(" "):
                continue
            f = line.split()
            n_syn = int(f[2])
            offsets[(f[0], pos)] = f[-n_syn:]
    out = {}
    for line in (WORDNET / "cntlist.rev").read_text(encoding="latin-1").splitlines():
        key, num, cnt = line.split()
        lemma, _, rest = key.partition("%")
        pos = _SS_TYPE[rest[0]]
        offs = offsets.get((lemma, pos))
        if offs and int(num) <= len(offs):
            out.setdefault(lemma, []).append(((pos, offs[int(num) - 1]), int(cnt)))
    return out


def specific_lemma(lemma, members, counts):
    """Whether ``lemma``'s senses in ``members`` are a large enough share of its SemCor uses."""
    senses = counts.get(lemma, [])
    total = sum(c for _, c in senses)
    if total < SEMCOR_MIN:
        return True
    return sum(c for k, c in senses if k in members) >= SENSE_SHARE * total


JARGON = Path("/usr/share/dictd/jargon.index")


def jargon_heads():
    """The one-word head words of the Jargon File (Debian ``dict-jargon``, public domain), lower case.

    Computing has moved on since WordNet 3.0 (2006): "kernel" in its computing sense,
    "hacker", "daemon", "grep" are Jargon File entries.  Without ``dict-jargon``
    installed this returns nothing.
    """
    if not JARGON.exists():
        return set()
    heads = set()
    for line in JARGON.read_text(encoding="utf-8", errors="replace").splitlines():
        word = line.split("\t")[0]
        if re.fullmatch(r"[A-Za-z][a-z]+|[A-Z]+", word) and not word.startswith("00"):
            heads.add(word.lower())
    return heads


#: WordNet noun senses (lemma, sense number) under which every hyponym and instance is of the
#: domain: a second source of lexicon words beside the topic synsets (where the copyleft
#: GCIDE's subject-labelled head words used to be), and the medical and technical gap words
#: ("metoprolol", "hyperlipidemia", "pericardium"; "compiler", "spreadsheet").
DOMAIN_ROOTS = {
    "physics": [("physical_phenomenon", 1), ("force", 2), ("energy", 1), ("elementary_particle", 1),
                ("radiation", 1), ("wave", 3), ("physical_property", 1)],
    "mathematics": [("mathematical_relation", 1), ("number", 2), ("plane_figure", 1), ("statistic", 1),
                    ("equation", 1), ("function", 1)],
    "legal": [("legal_document", 1), ("crime", 1), ("court", 1), ("legal_proceeding", 1), ("lawyer", 1),
              ("contract", 1), ("law", 2), ("litigant", 1), ("judge", 1), ("judicial_decision", 1),
              ("legislative_act", 1), ("legal_right", 1), ("due_process", 1), ("court_order", 1),
              ("legal_status", 1), ("legislature", 1), ("proceeding", 1),
              ("legal_code", 1), ("offense", 3), ("evidence", 3), ("trial", 4), ("penalty", 2)],
    "medical": [("drug", 1), ("medication", 1), ("disease", 1), ("disorder", 1), ("symptom", 1),
                ("injury", 1), ("body_part", 1), ("organ", 1), ("tissue", 1), ("medical_procedure", 1),
                ("pathogen", 1), ("bacteria", 1), ("virus", 1), ("medical_practitioner", 1),
                ("medical_instrument", 1), ("vitamin", 1), ("hormone", 1), ("enzyme", 1), ("antibody", 1),
                ("blood_vessel", 1), ("bone", 1), ("muscle", 1), ("nerve", 1), ("gland", 1),
                ("medical_care", 1), ("pathology", 1), ("medicine", 2), ("pill", 2), ("dose", 1),
                ("ill_health", 1), ("illness", 1), ("pathological_state", 1), ("pregnancy", 1),
                ("health_professional", 1), ("patient", 1), ("hospital", 1), ("therapy", 1),
                ("side_effect", 1), ("pain", 1), ("internal_organ", 1), ("infection", 1)],
    "poetry": [("poem", 1), ("verse_form", 1), ("meter", 3), ("rhyme", 1)],
    "narrative": [("fiction", 1), ("story", 2)],
    "technical_prose": [("computer", 1), ("software", 1), ("computer_program", 1),
                        ("programming_language", 1), ("data_structure", 1), ("computer_network", 1),
                        ("operating_system", 1), ("computer_file", 1), ("algorithm", 1),
                        ("computer_code", 1), ("database", 1), ("peripheral", 1), ("computer_memory", 1)],
    "philosophical": [("philosophy", 2), ("doctrine", 1)],
    "historical": [("historic_period", 1), ("war", 1), ("era", 1)],
}  # fmt: skip


def hyponym_words(synsets, roots, held_out):
    """Single-word lemmas of every hyponym and instance (transitively) of ``roots``.

    Synsets held out for the evaluations (and everything below them) are skipped, so
    no evaluation sentence's head word comes in this way.
    """
    index = {}
    for line in (WORDNET / "index.noun").read_text(encoding="latin-1").splitlines():
        if not line.startswith(" "):
            f = line.split()
            index[f[0]] = f[-int(f[2]) :]
    stack = [("noun", index[lemma][k - 1]) for lemma, k in roots if lemma in index and k <= len(index[lemma])]
    skip = {("noun", index[lemma][k - 1]) for lemma, k in EXCLUDE_ROOTS}
    seen, words = set(), set()
    while stack:
        key = stack.pop()
        if key in seen or key in held_out or key in skip or key not in synsets:
            continue
        seen.add(key)
        lemmas, ptrs, _ = synsets[key]
        words.update(w for w in lemmas if re.fullmatch(r"[a-z]+", w))
        stack.extend(("noun", off) for sym, off, p in ptrs if sym in ("~", "~i") and p == "n")
    return words, seen


def derived_synsets(synsets, keys, held_out, code):
    """The synsets one derivation (``+``) or pertainym (``\\``) pointer away from ``keys``
    ("prosecute" of "prosecution", "adjudicate" of "adjudication"), held-out ones left out."""
    out = set()
    for key in keys:
        for sym, off, p in synsets[key][1]:
            other = (code.get(p, p), off)
            if sym in ("+", "\\") and other not in held_out and other in synsets:
                out.add(other)
    return out - set(keys)


def sense_share(lemma, keys, senses, counts):
    """The share of ``lemma``'s uses that are senses in ``keys``: by SemCor's tag counts when it
    tags the lemma at least ``SEMCOR_MIN`` times, else by its number of WordNet synsets."""
    tagged = counts.get(lemma, [])
    total = sum(c for _, c in tagged)
    if total >= SEMCOR_MIN:
        return sum(c for k, c in tagged if k in keys) / total
    own = senses.get(lemma, ())
    return sum(k in keys for k in own) / max(len(own), 1)


#: Domains whose root-sense hyponyms (and the words derived from them) join the lexicon even
#: when WordNet's general definitions use them often ("kidney", "diabetes", "tablet";
#: "legislature", "magistrate"), provided most of the word's senses are the domain's
#: (``ROOTED_SHARE``): these are the everyday words of patient leaflets, health news, court
#: opinions and contracts, which WordNet's topic labels alone miss.
SENSE_ROOTED = ("legal", "medical")
ROOTED_SHARE = 0.6
#: ... and provided SemCor tags the word fewer times than this: "head", "hand", "eye", "arm"
#: are body parts, but everyday words first.
SEMCOR_EVERYDAY = 50
#: Subtrees of the roots that are not the domain's (alcoholic drinks are drugs to WordNet).
EXCLUDE_ROOTS = [("alcohol", 1)]


HUNSPELL_EN = Path("/usr/share/hunspell/en_US.dic")


def general_english():
    """The words of Debian ``hunspell-en-us`` (its general American English list), lower case."""
    if not HUNSPELL_EN.exists():
        return set()
    return {
        w.split("/")[0].lower() for w in HUNSPELL_EN.read_text(encoding="utf-8", errors="replace").split()[1:]
    }


def _split(members, pairs):
    """Held-out synsets: both ends of the first bridge pairs, then every third other one."""
    test = set()
    for a, b in pairs[:BRIDGES_PER_DOMAIN]:
        test.update((a, b))
    rest = [k for k in sorted(members) if k not in test]
    test.update(rest[::3])
    return test


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
    members = {}
    for domain, names in TOPICS.items():
        topics = {k for name in names for k in by_lemma.get(name, [])}
        members[domain] = {
            key
            for key, (_, ptrs, _) in synsets.items()
            if any(sym == ";c" and (code.get(p, p), off) in topics for sym, off, p in ptrs)
        }
    semcor = sense_counts()
    general = general_english()
    lemma_words, gloss_counts, glosses, bridges, held_out = {}, {}, {}, {}, set()
    for domain in TOPICS:
        pairs = bridge_pairs(synsets, members[domain], code)
        test = _split(members[domain], pairs)
        held_out |= test
        train = sorted(members[domain] - test)
        lemma_words[domain] = {re.sub(r"\(.*\)$", "", w) for k in train for w in synsets[k][0]}
        gloss_counts[domain] = {}
        for k in train:
            for w in _content(_definition(synsets[k][2])):
                gloss_counts[domain][w] = gloss_counts[domain].get(w, 0) + 1
        glosses[domain] = []
        for key in sorted(test):
            lemmas, _, gloss = synsets[key]
            definition = _definition(gloss)
            if len(definition.split()) >= 6:
                head = lemmas[0].replace("_", " ")
                glosses[domain].append(f"{head[:1].upper()}{head[1:]} is {definition}.")
        bridges[domain] = [
            [f"{d[:1].upper()}{d[1:]}." for d in (_definition(synsets[a][2]), _definition(synsets[b][2]))]
            for a, b in pairs[:BRIDGES_PER_DOMAIN]
        ]
    # Background: definitions of every synset outside all topics, for word specificity.
    in_topics = set().union(*members.values())
    background, n_background = {}, 0
    for key, (_, _, gloss) in synsets.items():
        if key not in in_topics:
            n_background += 1
            for w in _content(_definition(gloss)):
                background[w] = background.get(w, 0) + 1
    # A second, independent source: the head words of GCIDE's subject-labelled senses.  (Their
    # 1913 definition words were tried as well: more multi-domain tags, eval 5 fell from 71% to 65%.)
    # A second, independent source: the single-word hyponyms of each domain's root senses that
    # are rare in WordNet's general definitions ("action" does not become legal).
    rooted, domain_keys = {}, {d: set(ks) for d, ks in members.items()}
    senses = {}
    for key, (lemmas, _, _) in synsets.items():
        for w in lemmas:
            senses.setdefault(re.sub(r"\(.*\)$", "", w), []).append(key)
    for domain, roots in DOMAIN_ROOTS.items():
        words, keys = hyponym_words(synsets, roots, held_out)
        rooted[domain] = words
        lemma_words[domain] |= {w for w in words if background.get(w, 0) < GAP_MAX_BACKGROUND}
        if domain in SENSE_ROOTED:
            derived = derived_synsets(synsets, keys, held_out, code)
            keys = keys | derived
            words = words | {w for k in derived for w in synsets[k][0] if re.fullmatch(r"[a-z]+", w)}
            domain_keys[domain] |= keys
            extra = {
                w
                for w in words
                if sense_share(w, domain_keys[domain], senses, semcor) >= ROOTED_SHARE
                and sum(c for _, c in semcor.get(w, ())) < SEMCOR_EVERYDAY
            }
            lemma_words[domain] |= extra
    n_defs = {
        d: len(members[d]) - len(_split(members[d], bridge_pairs(synsets, members[d], code))) for d in TOPICS
    }
    lexicons = {}
    for domain, counts in gloss_counts.items():
        n_domain = max(1, n_defs[domain])
        specific = {
            w
            for w, c in counts.items()
            if c >= GLOSS_MIN_COUNT
            and c / n_domain >= GLOSS_LIFT * (background.get(w, 0) + 1) / n_background
            and all(c > other.get(w, 0) for d, other in gloss_counts.items() if d != domain)
        }
        words = lemma_words[domain] | specific
        lexicons[domain] = {
            w
            for w in words
            if w.isalpha() and len(w) > 2 and w not in STOP and specific_lemma(w, domain_keys[domain], semcor)
        }
    counts = {}
    for ws in lexicons.values():
        for w in ws:
            counts[w] = counts.get(w, 0) + 1
    out = {d: {w for w in ws if counts[w] == 1} for d, ws in lexicons.items()}
    # FOLDOC's head words fill the gaps of technical_prose, the medical spelling list those of
    # medical: a word another domain already claims ("disclaimer", "dose", "binary") stays there.
    # A head word is judged by its Snowball stem's count in the general definitions, so that
    # "takes", "doors" and "formes" do not bring "take", "door" and "form" in with them.
    stemmer = snowballstemmer.stemmer("english")
    by_stem = {}
    for w, c in background.items():
        x = stemmer.stemWord(w)
        by_stem[x] = by_stem.get(x, 0) + c
    gap = {
        "technical_prose": {
            w
            for w in jargon_heads() | rooted["technical_prose"]
            if by_stem.get(stemmer.stemWord(w), 0) < GAP_MAX_BACKGROUND
            and w not in counts
            and len(w) > 2
            and w not in STOP
        },
        "medical": {
            w
            for w in rooted["medical"]
            if w not in counts and w not in STOP and len(w) > 3 and not any(b in general for b in _bases(w))
        },
    }
    # General English words that share a Snowball stem with a lexicon word without inflecting
    # it ("right" / "rights", "done" / "donee", "person" / "personable"): layer 2 lets them
    # borrow that word's domain only when they are longer than it (a derived form).
    stems = {}
    for ws in out.values():
        for w in ws:
            stems.setdefault(stemmer.stemWord(w), set()).add(w)
    known = set().union(*out.values(), *gap.values())
    out = {d: sorted(ws) for d, ws in out.items()}
    # Kept apart: layer 2 matches these only as written or inflected (stemming 60,000 words
    # at first use took 3 s).
    out["_gap"] = {d: sorted(ws) for d, ws in gap.items()}
    out["_common"] = sorted(
        g
        for g in general_english()
        if g.isalpha()
        and g not in known
        and not all(inflects(g, w) for w in stems.get(stemmer.stemWord(g), {g}))
    )
    OUT.write_text(json.dumps(out, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print({d: len(v) for d, v in out.items()}, "->", OUT)
    picked = {d: g[:GLOSSES_PER_DOMAIN] for d, g in glosses.items()}
    GLOSSES.write_text(json.dumps(picked, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print({d: len(v) for d, v in picked.items()}, "->", GLOSSES)
    BRIDGES.write_text(json.dumps(bridges, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print({d: len(v) for d, v in bridges.items()}, "->", BRIDGES)


#: A definition word joins a domain's lexicon when it occurs in at least this many
#: of the domain's training definitions, ...
GLOSS_MIN_COUNT = 3
#: ... at least this many times more often (per definition) than in WordNet's
#: definitions outside every topic, and more often than in any other domain.
GLOSS_LIFT = 8.0


BRIDGES = ROOT / "scwo_evals" / "data" / "hsca" / "bridges.json"
#: WordNet pointers that make two synsets semantically related (hypernym, hyponym,
#: instance links, derivation, "see also", similar-to, attribute, member/part meronymy).
RELATED_POINTERS = {"@", "~", "@i", "~i", "+", "^", "&", "=", "#m", "#p", "%m", "%p"}
BRIDGES_PER_DOMAIN = 60


def _definition(gloss):
    definition = gloss.split(";")[0].split('"')[0].strip()
    return re.sub(r"^\([^)]*\)\s*", "", definition)


def _content(text):
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 2 and w not in STOP}


def bridge_pairs(synsets, members, code):
    """Eval 5 material: pairs of WordNet-related synsets filed under one domain.

    Two synsets linked by a ``RELATED_POINTERS`` pointer, both in ``members``,
    whose definitions have at least 6 words each and share no content word:
    one semantic thread, different surface tokens.  Returned as key pairs.
    """
    pairs, seen = [], set()
    for key in sorted(members):
        for sym, off, p in synsets[key][1]:
            other = (code.get(p, p), off)
            if sym not in RELATED_POINTERS or other not in members or other == key:
                continue
            pair = tuple(sorted((key, other)))
            if pair in seen:
                continue
            seen.add(pair)
            a, b = _definition(synsets[pair[0]][2]), _definition(synsets[pair[1]][2])
            if min(len(a.split()), len(b.split())) < 6 or _content(a) & _content(b):
                continue
            pairs.append(pair)
    return pairs


if __name__ == "__main__":
    main()
