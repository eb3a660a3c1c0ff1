"""HSCA Layer 2: domain tags from rule-based lexicons, and a coherence score in [0, 1].

Domains: each of the spec's 10 topical domains has a lexicon (``DOMAIN_LEXICONS``:
a short core list plus the lemmas WordNet files under the domain's topics);
a chunk's score for a domain is the share of its content words found in that
lexicon, as written or by their English Snowball (Porter2) stem, and every
domain at or above ``DOMAIN_THRESHOLD`` is tagged (several may be).
``cross_domain`` is added when two tagged domains are not related
(``RELATED`` lists the pairs that are); nothing tagged gives ``unclassified``.
An optional model hook (any callable ``text -> list[str]``) can replace the
lexicons; it is wrapped so that any failure, or an answer outside the
vocabulary, returns ``["unclassified"]`` and never raises.

Coherence is the product of the spec's four heuristics, each mapped to [0, 1]
(sentence length as it is, the other three through their geometric mean), a
*wordness* factor and a *word-order* factor:

* sentence length — 8 to 30 words is ideal, shorter or longer decays (so
  fragments score low);
* pronoun antecedents — third-person pronouns need an earlier content word;
* punctuation per word — between 0.03 and 0.4 is ideal; none or a flood decays;
* clause depth — more than 4 clause marks (commas, semicolons, subordinators)
  per sentence decays; simple sentences are fine;
* wordness — real English prose is about 40% function words; text with far
  fewer (gibberish, keyword lists) is scaled down towards 0;
* word order — layer 1 (:func:`order_factor`): real words in random order
  (word salad) have few neighbour links and score 0.

So gibberish and word salad score near 0, fragments low, complete prose high;
it is not a quality judgment.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Callable, Mapping
from functools import lru_cache
from importlib import resources

import snowballstemmer

from ..validation import check_text, check_unit_interval
from .layer1 import STOPWORDS, relational_weights
from .types import DomainTag

__all__ = [
    "DOMAIN_LEXICONS",
    "DOMAIN_THRESHOLD",
    "RELATED",
    "coherence",
    "order_factor",
    "content_stems",
    "domain_scores",
    "domain_tags",
    "stem",
]

_CORE: dict[str, frozenset[str]] = {
    k: frozenset(v.split())
    for k, v in {
        "physics": "energy mass force velocity acceleration momentum quantum particle particles photon electron "
        "field fields gravity gravitational relativity wave waves frequency thermodynamics entropy atom atoms "
        "nucleus radiation magnetic electric charge spin orbit physics physicist joule newton friction inertia",
        "mathematics": "theorem proof lemma equation equations integral derivative function functions matrix vector "
        "prime primes number numbers set sets algebra geometry topology polynomial infinite infinity axiom "
        "calculus probability variable variables sum product mathematics mathematician proves converges",
        "legal": "court law laws statute contract contracts plaintiff defendant liability clause clauses shall "
        "hereby agreement jurisdiction tort judge jury appeal regulation regulations rights breach party parties "
        "legal lawful unlawful attorney counsel verdict ruling section pursuant herein",
        "medical": "patient patients disease diseases symptom symptoms diagnosis treatment therapy clinical dose "
        "drug drugs infection virus bacteria surgery chronic acute blood heart cancer medical medicine physician "
        "doctor hospital health healthcare vaccine immune syndrome prescription",
        "poetry": "verse verses stanza rhyme sonnet poem poems poet poetry moon heart soul night dream dreams "
        "whisper sorrow tears sky stars bloom petal rose longing silent silence tender breath",
        "narrative": "once upon story stories told walked ran said looked journey village forest king queen "
        "hero tale tales rabbit fox hare tortoise wolf princess castle adventure traveller home returned",
        "technical_prose": "function functions module modules code install configure configuration server api "
        "database file files parameter parameters default return returns object objects class method methods "
        "software system systems data algorithm compile runtime interface library version",
        "conversational": "hey hi hello thanks thank okay ok yeah yes sure lol please gonna wanna guess really "
        "anyway maybe cool great sorry",
        "philosophical": "truth knowledge being existence ethics moral morality virtue reason mind consciousness "
        "meaning metaphysics epistemology argument premise justice wisdom free will soul nature belief beliefs "
        "philosopher philosophy lesson fable",
        "historical": "century centuries war wars empire king kingdom revolution ancient medieval dynasty treaty "
        "battle colonial historian history era reign independence republic emperor period historical",
    }.items()
}


def _with_wordnet(core: dict[str, frozenset[str]]) -> dict[str, frozenset[str]]:
    """The core word lists plus the lemmas WordNet files under each domain's topics.

    ``data/hsca/domain_lexicons.json`` is built offline from Debian's
    ``wordnet-base`` by ``data/hsca/build_hsca_data.py`` and installed with the
    package; a WordNet word already in another domain's core list is left out.
    """
    try:
        text = (
            resources.files("scwo_np.bundled")
            .joinpath("hsca/domain_lexicons.json")
            .read_text(encoding="utf-8")
        )
        extra = json.loads(text)
    except (
        FileNotFoundError,
        ModuleNotFoundError,
        json.JSONDecodeError,
    ):  # pragma: no cover - a broken install
        return dict(core)
    taken = {w: d for d, ws in core.items() for w in ws}
    return {d: ws | {w for w in extra.get(d, []) if taken.get(w, d) == d} for d, ws in core.items()}


#: Domain lexicons: a short core list per domain plus WordNet's topic lemmas.
DOMAIN_LEXICONS: dict[str, frozenset[str]] = _with_wordnet(_CORE)

#: Domain pairs that are "non-trivially related": tagging both is not cross-domain.
RELATED = {
    frozenset(p)
    for p in [
        ("physics", "mathematics"),
        ("poetry", "narrative"),
        ("philosophical", "narrative"),
        ("legal", "historical"),
        ("technical_prose", "mathematics"),
        ("medical", "technical_prose"),
    ]
}

#: Share of a chunk's content words that must belong to a domain's lexicon to tag it.
DOMAIN_THRESHOLD = 0.06

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
_SENT = re.compile(r"(?<=[.!?])\s+|\n+(?=\s*[^\s\w]*[A-Z])")
_PRONOUN = re.compile(r"\b(he|she|it|they|him|her|them|his|its|their|this|these|those)\b", re.I)
_CLAUSE = re.compile(r"[,;:]|\b(which|that|because|although|while|whereas|if|when|unless|since)\b", re.I)
_PUNCT = re.compile(r"[^\w\s]")
_VALID = {t.value for t in DomainTag}


_STEMMERS = threading.local()  # Snowball stemmers keep state between calls: one per thread.


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """The English Snowball (Porter2) stem, so "courts", "courted" and "court" match one entry.

    Examples
    --------
    >>> [stem(w) for w in ("courts", "proceedings", "calculations", "calculate", "glass", "is")]
    ['court', 'proceed', 'calcul', 'calcul', 'glass', 'is']
    """
    stemmer = getattr(_STEMMERS, "english", None)
    if stemmer is None:
        stemmer = _STEMMERS.english = snowballstemmer.stemmer("english")
    return stemmer.stemWord(word)


@lru_cache(maxsize=1)
def _indices() -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    """(word -> domains whose lexicon holds it, stem -> the one domain whose lexicon has it).

    A stem shared by two domains' lexicons ("ruling" in legal, "rule" in
    mathematics) decides nothing and is left out.  Built on first use (stemming
    the lexicons takes about 0.1 s), not at import.
    """
    exact: dict[str, frozenset[str]] = {}
    by_stem: dict[str, set[str]] = {}
    for d, lex in DOMAIN_LEXICONS.items():
        for w in lex:
            exact[w] = exact.get(w, frozenset()) | {d}
            by_stem.setdefault(stem(w), set()).add(d)
    return exact, {x: frozenset(ds) for x, ds in by_stem.items() if len(ds) == 1}


_NONE: frozenset[str] = frozenset()


@lru_cache(maxsize=1 << 16)
def _word_domains(word: str) -> frozenset[str]:
    """The domains of one lowercase word: its lexicon entries as written, else its stem's."""
    exact, by_stem = _indices()
    return exact.get(word) or by_stem.get(stem(word), _NONE)


def content_stems(text: str) -> set[str]:
    """The Snowball stems (3 letters or more) of the words of ``text`` that no domain lexicon knows.

    What :class:`~scwo_np.hsca.tuning.Tuner` may learn as new domain words.

    Examples
    --------
    >>> sorted(content_stems("The court heard the epitope evidence."))
    ['epitop', 'heard']
    """
    stems = {stem(w) for w in _WORD.findall(text.lower()) if w not in STOPWORDS and not _word_domains(w)}
    return {x for x in stems if len(x) >= 3}


def domain_scores(
    text: str, weights: Mapping[str, float] | None = None, words: Mapping[str, str] | None = None
) -> dict[str, float]:
    """Share of content words in each domain lexicon (as written, else by Snowball stem).

    ``weights`` (domain -> factor, 1 where missing) calibrates domains against
    each other; ``words`` (stem -> domain) adds words to the lexicons, for
    words no lexicon knows.  :class:`~scwo_np.hsca.tuning.Tuner` learns both
    from hit history.

    Examples
    --------
    >>> text = "The epitope binds."
    >>> domain_scores(text)["medical"], domain_scores(text, words={"epitop": "medical"})["medical"]
    (0.0, 0.5)
    """
    text = check_text(text)
    tokens = [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]
    counts = dict.fromkeys(DOMAIN_LEXICONS, 0)
    for w in tokens:
        ds = _word_domains(w)
        if ds:
            for d in ds:
                counts[d] += 1
        elif words:
            d = words.get(stem(w))
            if d in counts:
                counts[d] += 1
    n = max(len(tokens), 1)
    if weights:
        return {d: c / n * weights.get(d, 1.0) for d, c in counts.items()}
    return {d: c / n for d, c in counts.items()}


def domain_tags(
    text: str,
    model: Callable[[str], list[str]] | None = None,
    weights: Mapping[str, float] | None = None,
    words: Mapping[str, str] | None = None,
) -> list[str]:
    """Domain tags of ``text`` (rule-based with optional ``weights`` and learned ``words``, or
    ``model`` wrapped to fail closed).

    Examples
    --------
    >>> domain_tags("The court ruled that the contract clause was unlawful.")
    ['legal']
    >>> domain_tags("The patient's symptoms followed the gravitational wave frequency.")
    ['physics', 'medical', 'cross_domain']
    >>> domain_tags("zzz qqq")
    ['unclassified']
    >>> domain_tags("anything", model=lambda t: 1 / 0)
    ['unclassified']
    """
    text = check_text(text)
    if model is not None:
        try:
            tags = list(model(text))
            if tags and all(isinstance(t, str) and t in _VALID for t in tags):
                return tags
        except Exception:  # noqa: BLE001 - the spec: a failing model must never raise
            pass
        return [DomainTag.UNCLASSIFIED.value]
    scores = domain_scores(text, weights, words)
    tags = [d for d, s in scores.items() if s >= DOMAIN_THRESHOLD]
    if not tags:
        return [DomainTag.UNCLASSIFIED.value]
    if any(frozenset((a, b)) not in RELATED for i, a in enumerate(tags) for b in tags[i + 1 :]):
        tags.append(DomainTag.CROSS_DOMAIN.value)
    return tags


def _band(x: float, lo: float, hi: float, soft: float) -> float:
    """1 inside [lo, hi], decaying smoothly (log scale) outside, never below 0.05.

    The floor keeps one bad signal from zeroing the geometric mean: a fragment
    without punctuation is incoherent-ish, not gibberish (wordness decides that).
    """
    if x <= 0:
        return 0.05
    if x < lo:
        return max(0.05, math.exp(-((math.log(lo / x) / soft) ** 2)))
    if x > hi:
        return max(0.05, math.exp(-((math.log(x / hi) / soft) ** 2)))
    return 1.0


#: Layer-1 scores between which word order goes from "shuffled" to "real" (coherence's order factor).
#: On the tuning half of ``real_texts.jsonl``, nine in ten shuffled texts score below 0.23 and nine in
#: ten genuine ones above 0.38.
ORDER_LOW, ORDER_HIGH = 0.2, 0.35


def order_factor(layer1: float) -> float:
    """Coherence's word-order factor: 0 at or below :data:`ORDER_LOW`, 1 at or above :data:`ORDER_HIGH`, linear between."""
    return min(1.0, max(0.0, (layer1 - ORDER_LOW) / (ORDER_HIGH - ORDER_LOW)))


def coherence(text: str, *, layer1: float | None = None) -> float:
    """Coherence in [0, 1] (see the module documentation).

    ``layer1`` is the text's layer-1 score when the caller already has it
    (computed here otherwise); it supplies the word-order factor.

    Examples
    --------
    >>> prose = ("The committee met on Monday to review the budget. It approved the plan, "
    ...          "although two members asked for more detail on the costs.")
    >>> salad = ("Members plan the more the two budget. Review on it approved monday the asked. "
    ...          "Met to committee costs detail for although on the.")
    >>> round(coherence(prose), 2) > 0.8, coherence(salad) < 0.3, coherence("qwx zrt plk vbn mmq") < 0.1
    (True, True, True)
    """
    text = check_text(text)
    words = _WORD.findall(text)
    if not words:
        return 0.0
    sentences = [s for s in _SENT.split(text.strip()) if _WORD.search(s)]
    n_sent = max(len(sentences), 1)
    length = _band(len(words) / n_sent, 8, 30, 0.8)
    punct = _band(len(_PUNCT.findall(text)) / len(words), 0.03, 0.4, 1.2)
    clauses = _band(max(len(_CLAUSE.findall(text)) / n_sent, 1e-3), 1e-3, 4.0, 1.5)
    # Pronouns need an antecedent: some content word earlier in the chunk.
    resolved, total = 0, 0
    lowered = [w.lower() for w in words]
    seen_content = False
    for w in lowered:
        if _PRONOUN.fullmatch(w):
            total += 1
            resolved += seen_content
        elif w not in STOPWORDS and len(w) > 2:
            seen_content = True
    pronouns = 1.0 if total == 0 else 0.5 + 0.5 * resolved / total
    function_share = sum(w in STOPWORDS for w in lowered) / len(lowered)
    wordness = min(1.0, function_share / 0.25) if len(lowered) >= 4 else 0.5
    if layer1 is None:
        layer1 = float(relational_weights([text]).scores[0])
    else:
        layer1 = check_unit_interval(layer1, name="layer1", meaning="the text's layer-1 score")
    score = (punct * clauses * pronouns) ** (1 / 3) * length * wordness * order_factor(layer1)
    return float(min(max(score, 0.0), 1.0))
