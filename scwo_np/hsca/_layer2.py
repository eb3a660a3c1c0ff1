"""HSCA Layer 2: domain tags from rule-based lexicons, and a coherence score in [0, 1].

Domains: each of the spec's 10 topical domains has a lexicon (``DOMAIN_LEXICONS``:
a short core list, the lemmas WordNet files under the domain's topics, the
hyponyms of its root senses (for legal and medical also the words derived from
them), and for technical prose the Jargon File's head words; built offline by
``tools/build_data/build_hsca_data.py``; the optional ``scwo-np-gpl-data`` package
swaps in lexicons that also count GCIDE, FOLDOC and a medical spelling list).
A chunk's score for a domain is the share of its content words found in that
lexicon, as written, inflected ("rights" of "right", "studied" of "study") or
through their Snowball stem ("legislation" of "legislate"; but a common word that
is only the shorter root of a lexicon word, "right" of "rights" or "person" of
"personable", does not count), and every domain at or above
``DOMAIN_THRESHOLD`` is tagged (several may be).  Poetry is also told by its
form (:func:`verse_form`): a text in verse (form :data:`VERSE_FULL` or more) scores the threshold for
``poetry`` whatever its words, so poems are tagged and lectures about poems need
the lexicon; fields, lists and code lines are not verse.  Error messages,
tracebacks and error logs are told by their form too (:func:`error_form`): they
score the threshold for ``technical_prose`` and never count as ``legal`` or
``poetry``, whatever their words ("bar", "release", "process" are law words).
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
from collections.abc import Callable, Mapping
from functools import lru_cache

from ..text import STOPWORDS, WORD, stem
from ..text import words as words_of  # domain_scores has an argument named words
from ..validation import check_nonnegative_float, check_text, check_unit_interval
from ._data import data_file
from ._layer1 import relational_weights
from ._types import DomainTag

__all__ = [
    "DOMAIN_LEXICONS",
    "DOMAIN_THRESHOLD",
    "RELATED",
    "coherence",
    "order_factor",
    "content_stems",
    "domain_scores",
    "domain_tags",
    "error_form",
    "stem",
    "verse_form",
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
        "legal lawful unlawful attorney counsel verdict ruling section pursuant herein license licence licensed "
        "licensee licensor warranty warranties liable damages copyright permission notwithstanding thereof "
        "whereas indemnify infringement patent obligations entitled provisions",
        "medical": "patient patients disease diseases symptom symptoms diagnosis treatment therapy clinical dose "
        "drug drugs infection virus bacteria surgery chronic acute blood heart cancer medical medicine physician "
        "doctor hospital health healthcare vaccine immune syndrome prescription plasma serum tissue cells "
        "protein enzyme antibody antigen receptor hormone insulin tumor tumour lesion lesions biopsy",
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


def _lexicon_data() -> dict:
    """``domain_lexicons.json`` as installed (``{}`` on a broken install), from :mod:`._data`."""
    try:
        text = data_file("domain_lexicons.json").read_text(encoding="utf-8")
        return json.loads(text)
    except (FileNotFoundError, ModuleNotFoundError, json.JSONDecodeError):  # pragma: no cover
        return {}


def _with_wordnet(core: dict[str, frozenset[str]], extra: dict) -> dict[str, frozenset[str]]:
    """The core word lists plus the built lexicons ``extra`` (WordNet's topic lemmas and the
    other sources of ``tools/build_data/build_hsca_data.py``); a built word already in another
    domain's core list is left out."""
    taken = {w: d for d, ws in core.items() for w in ws}
    return {d: ws | {w for w in extra.get(d, []) if taken.get(w, d) == d} for d, ws in core.items()}


def _gap_words(extra: dict) -> dict[str, frozenset[str]]:
    """Words filling the gaps of WordNet: FOLDOC head words (technical prose) and the
    ``hunspell-en-med`` word list (medical).  They match as written or inflected only."""
    return {d: frozenset(ws) for d, ws in extra.get("_gap", {}).items()}


_DATA = _lexicon_data()
#: General English words that share a Snowball stem with a lexicon word they do not
#: inflect ("right" for "rights"): they borrow its domain only when longer than it.
_COMMON = frozenset(_DATA.get("_common", ()))


_STEMMED = _with_wordnet(_CORE, _DATA)
_GAP = _gap_words(_DATA)
_GAP_OF = {w: frozenset((d,)) for d, ws in _GAP.items() for w in ws}
del _DATA
#: Domain lexicons: a short core list per domain, WordNet's topic lemmas, GCIDE's labelled
#: head words, and the gap words (:func:`_gap_words`).
DOMAIN_LEXICONS: dict[str, frozenset[str]] = {d: ws | _GAP.get(d, frozenset()) for d, ws in _STEMMED.items()}

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

# Coherence's sentence length counts every sentence mark followed by white space (and a line
# break before a capital), also before a lower-case word: text cut into pieces ("The committee
# met. review the.") must read as short sentences.  ``scwo_np.text.split_sentences`` keeps such
# pieces together, as it must for "e.g. the" in a text it cuts for selection; with it, the
# median coherence of the fragments of eval 6 went from 0.205 to 1.0.  So this is a count of
# sentence marks, not a second sentence splitter: nothing is cut or kept by it.
_SENT = re.compile(r"(?<=[.!?])\s+|\n+(?=\s*[^\s\w]*[A-Z])")
_PRONOUN = re.compile(r"\b(he|she|it|they|him|her|them|his|its|their|this|these|those)\b", re.I)
_PRONOUNS = frozenset("he she it they him her them his its their this these those".split())
_CLAUSE = re.compile(r"[,;:]|\b(which|that|because|although|while|whereas|if|when|unless|since)\b", re.I)
_PUNCT = re.compile(r"[^\w\s]")
_VALID = {t.value for t in DomainTag}


#: Endings that make an inflected form of a word ("rights", "using", "studied").
_INFLECTIONS = frozenset({"s", "es", "ed", "d", "ing", "ings", "er", "ers"})


def inflects(word: str, base: str) -> bool:
    """Whether ``word`` is ``base`` itself or ``base`` plus an inflectional ending.

    Snowball stems also join derived words of another meaning ("several" and
    "sever", "important" and "import", "personable" and "person"), so a
    common word only borrows the domains of a lexicon word it inflects.

    Examples
    --------
    >>> inflects("rights", "right"), inflects("using", "use"), inflects("studies", "study")
    (True, True, True)
    >>> inflects("several", "sever"), inflects("important", "import"), inflects("right", "rights")
    (False, False, False)
    """
    if word == base:
        return True
    bases = [base, base + base[-1:]]
    if base.endswith("e"):
        bases.append(base[:-1])
    if base.endswith("y"):
        bases.append(base[:-1] + "i")
    return any(word.startswith(x) and word[len(x) :] in _INFLECTIONS for x in bases)


def _bases(word: str) -> list[str]:
    """``word`` and the words it may inflect (regular endings undone)."""
    out = [word]
    for end in _INFLECTIONS:
        if word.endswith(end) and len(word) > len(end) + 2:
            b = word[: -len(end)]
            out += [b, b + "e"]
            if b.endswith("i"):
                out.append(b[:-1] + "y")
            if len(b) > 3 and b[-1] == b[-2]:
                out.append(b[:-1])
    return out


def _common(word: str) -> bool:
    """Whether ``word`` is a common English word or an inflection of one (SemCor, WordNet)."""
    return any(b in _COMMON for b in _bases(word))


@lru_cache(maxsize=1)
def _indices() -> tuple[dict[str, frozenset[str]], dict[str, tuple[str, tuple[str, ...]]]]:
    """(word -> domains whose lexicon holds it, stem -> (its one domain, the lexicon words with it)).

    A stem shared by two domains' lexicons ("ruling" in legal, "rule" in
    mathematics) decides nothing and is left out.  Built on first use (stemming
    the lexicons takes about 0.1 s), not at import.
    """
    exact: dict[str, frozenset[str]] = {}
    by_stem: dict[str, dict[str, list[str]]] = {}
    for d, lex in DOMAIN_LEXICONS.items():
        for w in lex:
            exact[w] = exact.get(w, frozenset()) | {d}
    for d, lex in _STEMMED.items():
        for w in lex:
            by_stem.setdefault(stem(w), {}).setdefault(d, []).append(w)
    return exact, {
        x: (next(iter(ds)), tuple(sorted(*ds.values()))) for x, ds in by_stem.items() if len(ds) == 1
    }


_NONE: frozenset[str] = frozenset()


@lru_cache(maxsize=1 << 16)
def _word_domains(word: str) -> frozenset[str]:
    """The domains of one lowercase word: its lexicon entries as written, else those of the
    lexicon words of its Snowball stem (for a common word, only if it inflects or extends one)."""
    exact, by_stem = _indices()
    hit = exact.get(word)
    if hit:
        return hit
    for base in _bases(word)[1:]:  # an inflected gap word ("metoprolols")
        hit = _GAP_OF.get(base)
        if hit and inflects(word, base):
            return hit
    entry = by_stem.get(stem(word))
    if entry is None:
        return _NONE
    # A common English word that is only the shorter root of a lexicon word does not share its
    # domain ("right" of "rights", "done" of "donee", "person" of "personable").
    if not _common(word) or any(inflects(word, w) or len(word) > len(w) for w in entry[1]):
        return frozenset((entry[0],))
    return _NONE


def content_stems(text: str) -> set[str]:
    """The Snowball stems (3 letters or more) of the words of ``text`` that no domain lexicon knows.

    What :class:`~scwo_np.hsca.Tuner` may learn as new domain words.

    Examples
    --------
    >>> sorted(content_stems("The court heard the marmalade evidence."))
    ['heard', 'marmalad']
    """
    stems = {stem(w) for w in words_of(text, stopwords=False) if not _word_domains(w)}
    return {x for x in stems if len(x) >= 3}


#: Verse form (:func:`verse_form`): at least this many lines, ...
VERSE_MIN_LINES = 4
#: ... this share of them starting with a capital, ...
VERSE_CAPITALS = 0.8
#: ... and this share broken before the text's width (the next word would have fit), or this
#: share ending in a rhyme with one of the three lines before or after them ...
VERSE_EARLY, VERSE_RHYME = 0.6, 0.2
#: ... in lines of at most this many words (median; none counts as verse above three more).
#: All chosen on the tuning half of the real-text set.
VERSE_WORDS = 11

_ATTRIBUTION = re.compile(r"^(--|—|\(chorus\)$)", re.I)
_RHYME = re.compile(r"[aeiouy]+[^aeiouy]*$")


def _rhyme_key(word: str) -> str | None:
    """The spelling of a word's last syllable ("hard" and "boulevard" share ``ard``)."""
    w = "".join(ch for ch in word.lower() if "a" <= ch <= "z")
    if len(w) < 2:
        return None
    m = _RHYME.search(w)
    k = m.group(0) if m else w
    return k if len(k) >= 2 else w[-2:]


def _rhymes(ends: list[str]) -> int:
    """How many line ends rhyme with a different word within three lines."""
    keys = [_rhyme_key(e) for e in ends]
    count = 0
    for i, k in enumerate(keys):
        near = range(max(0, i - 3), min(len(ends), i + 4))
        count += bool(k) and any(j != i and keys[j] == k and ends[j] != ends[i] for j in near)
    return count


#: Lines that are fields, list items, options, code or markup, not verse ("Name: John",
#: "CC: headache", "- item", "1. step", "(a) clause", "# heading", "--verbose", "x = f(y)",
#: "| table |"): a text where at least
#: ``VERSE_FORM_LINES`` of the lines are such is a form, a list or a note, not a poem.
_FORM_LINE = re.compile(
    r"^\s*(?:[A-Za-z][\w /&().'-]{0,30}:(?:\s|$)|[-*+•#|>]\s|#|\d+[.)]\s|\([a-z0-9]{1,4}\)\s|[A-Z][A-Z0-9 /&-]{2,}$|-{1,2}\w)|[{}<>=|\\$_]|\w\("
)
VERSE_FORM_LINES = 0.3
#: A text whose :func:`verse_form` is at least this scores the tagging threshold for poetry.
VERSE_FULL = 0.85


def verse_form(text: str) -> float:
    r"""How fully ``text`` has the shape of verse, in [0, 1]; 1 means verse.

    Poetry is recognised by its form, not by words about poetry: at least
    :data:`VERSE_MIN_LINES` lines, most starting with a capital, lines broken
    before the text's width (in wrapped prose the next word would not have
    fitted) or ending in rhymes, and short lines.  Attribution lines
    ("-- Author") are not counted.  Text on one line scores 0: its form is lost.

    Parameters
    ----------
    text : str
        The text.

    Returns
    -------
    float
        In [0, 1]; 1 means the text has the form of verse.

    Examples
    --------
    >>> poem = "\n".join([
    ...     "In Xanadu did Kubla Khan", "A stately pleasure dome decree:",
    ...     "Where Alph, the sacred river, ran", "Through caverns measureless to man",
    ...     "Down to a sunless sea."])
    >>> verse_form(poem), verse_form(poem.replace("\n", " "))
    (1.0, 0.0)
    """
    text = check_text(text)
    if text.count("\n") + text.count("\r") < VERSE_MIN_LINES - 1:  # most chunks: one line
        return 0.0
    lines = [ln.strip() for ln in text.splitlines()]
    lines = [ln for ln in lines if not _ATTRIBUTION.match(ln)]
    body = [ln for ln in lines if ln]
    if len(body) < VERSE_MIN_LINES:
        return 0.0
    width = max(len(ln) for ln in body)
    pairs = early = 0
    for a, b in zip(lines, lines[1:], strict=False):
        if a and b:
            pairs += 1
            early += len(a) + 1 + len(b.split()[0]) <= width
    forms = sum(_FORM_LINE.search(ln) is not None for ln in body) / len(body)
    if forms >= VERSE_FORM_LINES:
        return 0.0
    caps = sum(next((ch for ch in ln if ch.isalpha()), "").isupper() for ln in body)
    ends = [(WORD.findall(ln) or [""])[-1].lower() for ln in body]
    words_per_line = sorted(len(ln.split()) for ln in body)[len(body) // 2]
    shape = min(1.0, max(early / max(pairs, 1) / VERSE_EARLY, _rhymes(ends) / len(body) / VERSE_RHYME))
    short = min(1.0, max(0.0, (VERSE_WORDS + 3 - words_per_line) / 3))
    return min(1.0, caps / len(body) / VERSE_CAPITALS) * shape * short


#: Lines of machine output that tell an error or a log record: a traceback's header and
#: frames, ``Error:``/``Exception:`` lines, ``file:line:col:`` diagnostics, ``error:`` /
#: ``fatal:`` / ``warning:`` / ``ERROR`` marks, exit statuses, errno texts and time-stamped
#: log lines.  A line is one when it starts with ``_ERROR_START`` or holds ``_ERROR_ANY``
#: (:func:`_error_line`): the start pattern is tried once per line, not at every position.
_ERROR_START = re.compile(
    r"\s*(?:Traceback \(most recent call last\)|File \"[^\"]+\", line \d+|During handling of the above)"
    r"|\s*(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning|Failure|Fault)\b(?::|$)"
    r"|\s*[\w./+-]+:\d+(?::\d+)?:|[a-z][\w.+-]*: (?:\*\*\*|[^\s:]+: )"
    r"|\s*\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d|\s*[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d"
    r"|\s*(?:\d+ \| |\| +\^|\s*\^~+)"
)
_ERROR_ANY = re.compile(
    r"\b(?:error|fatal(?: error)?|warning|panic|exception|errno)\s*(?::|\])"
    r"|\b(?:ENOENT|EACCES|EPERM|EEXIST|ENOTDIR|EISDIR|EAGAIN|ECONNREFUSED|ETIMEDOUT|EPIPE|ENOSPC|EINVAL)\b"
    r"|(?:\[|\b)(?:ERROR|FATAL|CRITICAL|WARN(?:ING)?|SEVERE)(?:\]|:|\s+\[)"
    r"|\bexit (?:status|code) -?\d+|\breturned (?:non-zero )?exit status"
    r"|No such file or directory|Permission denied|command not found|Segmentation fault|core dumped"
    r"|[Uu]ndefined reference to|cannot find -l|Connection refused|Operation not permitted"
    r"|unrecognized option|invalid (?:option|argument)|missing (?:file )?operand|Try '[^']+ --help'"
)
#: What every ``_ERROR_START`` or ``_ERROR_ANY`` match holds: a literal of each alternative, or
#: one of the small patterns of ``_ERROR_HINT`` (``file:12:``, ``tool: what: ``, ``12:34``).
#: Checked first, since most prose holds none (``tests/hsca/test_hsca_domain_genres.py`` checks
#: the claim).
_ERROR_WORDS = (
    "Traceback", 'File "', "During handling", "Error", "Exception", "Exit", "Interrupt", "Warning",
    "Failure", "Fault", "error", "fatal", "warning", "panic", "exception", "errno", "ENOENT", "EACCES",
    "EPERM", "EEXIST", "ENOTDIR", "EISDIR", "EAGAIN", "ECONNREFUSED", "ETIMEDOUT", "EPIPE", "ENOSPC",
    "EINVAL", "ERROR", "FATAL", "CRITICAL", "WARN", "SEVERE", "exit ", "No such file", "Permission denied",
    "command not found", "Segmentation fault", "core dumped", "ndefined reference to", "cannot find -l",
    "Connection refused", "Operation not permitted", "unrecognized option", "invalid ", "operand",
    "Try '", "^", " | ",
)  # fmt: skip
_ERROR_HINT = re.compile(r":\d|: (?:\*\*\*|[^\s:]+: )|\d\d:\d\d")


def _may_be_error(text: str) -> bool:
    return any(w in text for w in _ERROR_WORDS) or _ERROR_HINT.search(text) is not None


def _error_line(line: str) -> bool:
    """Whether one line (no line break in it) is a machine diagnostic or a log record."""
    return _ERROR_START.match(line) is not None or (
        _may_be_error(line) and _ERROR_ANY.search(line) is not None
    )


#: A text whose lines are at least this share error or log lines is an error message (score 1).
ERROR_LINES = 0.3


def error_form(text: str) -> float:
    r"""How fully ``text`` has the form of an error message, traceback or error log, in [0, 1].

    The share of its non-empty lines that are machine diagnostics (see ``_ERROR_START``:
    tracebacks, ``file:line:`` messages, ``error:``/``fatal:`` marks, exit statuses, errno
    texts, option errors, time-stamped log records), scaled so that :data:`ERROR_LINES` of
    them gives 1; a long line counts as its sentences, so prose that mentions one error
    scores little.
    Layer 2 tags such text ``technical_prose`` and never ``legal`` or ``poetry``: a linker's
    "cannot find -lfoo" is neither a contract nor a poem, whatever its words.

    Parameters
    ----------
    text : str
        The text.

    Returns
    -------
    float
        In [0, 1]; 1 means the text reads as an error message or an error log.

    Examples
    --------
    >>> error_form("/usr/bin/ld: cannot find -lfoo: No such file or directory\n"
    ...            "collect2: error: ld returned 1 exit status")
    1.0
    >>> error_form("The court held that the clause was void.")
    0.0
    """
    text = check_text(text)
    if not _may_be_error(text):  # most text: no diagnostic
        return 0.0
    lines = [ln for ln in text.splitlines() if ln.strip()]
    hits = sum(_error_line(ln) for ln in lines)
    if not hits:
        return 0.0
    # A long line of prose counts as its sentences: one "error:" in a paragraph is not a log.
    units = sum(max(1, len(_SENT.split(ln.strip()))) for ln in lines)
    return min(1.0, hits / units / ERROR_LINES)


def domain_scores(
    text: str, weights: Mapping[str, float] | None = None, words: Mapping[str, str] | None = None
) -> dict[str, float]:
    """Share of content words in each domain lexicon (as written, else by Snowball stem).

    ``weights`` (domain -> factor, 1 where missing) calibrates domains against
    each other; ``words`` (stem -> domain) adds words to the lexicons, for
    words no lexicon knows.  :class:`~scwo_np.hsca.Tuner` learns both
    from hit history.

    Parameters
    ----------
    text : str
        The text.
    weights : mapping of str to float, optional
        Domain -> factor (1 where missing), calibrating the domains against each other.
    words : mapping of str to str, optional
        Stem -> domain: words added to the lexicons.

    Returns
    -------
    dict of str to float
        Each domain's share of the text's content words.

    Examples
    --------
    >>> text = "The marmalade binds."
    >>> domain_scores(text)["medical"], domain_scores(text, words={"marmalad": "medical"})["medical"]
    (0.0, 0.5)
    """
    text = check_text(text)
    tokens = words_of(text, stopwords=False)
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
    out = {d: c / n for d, c in counts.items()}
    # Poems are told by their form: verse scores at least the tagging threshold.
    out["poetry"] = max(out["poetry"], DOMAIN_THRESHOLD * min(1.0, verse_form(text) / VERSE_FULL))
    # Error messages, tracebacks and error logs are technical, never legal nor poetry.
    err = error_form(text)
    if err:
        out["technical_prose"] = max(out["technical_prose"], DOMAIN_THRESHOLD * err)
        out["legal"] *= 1.0 - err
        out["poetry"] *= 1.0 - err
    if weights:
        w = _check_weights(weights)
        return {d: v * w.get(d, 1.0) for d, v in out.items()}
    return out


def _check_weights(weights: object) -> dict[str, float]:
    """``weights`` as domain -> finite factor >= 0 (a NaN or negative factor would silently
    drop the domain's tag)."""
    if not isinstance(weights, Mapping):
        raise TypeError(f"weights must map domain names to factors; got {type(weights).__name__}.")
    return {str(d): check_nonnegative_float(v, name=f"weights[{d!r}]") for d, v in weights.items()}


def domain_tags(
    text: str,
    model: Callable[[str], list[str]] | None = None,
    weights: Mapping[str, float] | None = None,
    words: Mapping[str, str] | None = None,
) -> list[str]:
    """Domain tags of ``text`` (rule-based with optional ``weights`` and learned ``words``, or
    ``model`` wrapped to fail closed).

    Parameters
    ----------
    text : str
        The text.
    model : callable, optional
        ``text -> list of tags``; its errors and unknown tags are dropped (fails closed).
    weights : mapping of str to float, optional
        Domain -> factor (1 where missing), calibrating the domains against each other.
    words : mapping of str to str, optional
        Stem -> domain: words added to the lexicons.

    Returns
    -------
    list of str
        :class:`DomainTag` values; ``["unclassified"]`` when no domain is strong enough.

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
    return _tags(domain_scores(text, weights, words))


def _tags(scores: Mapping[str, float]) -> list[str]:
    """The rule-based tags of a text from its :func:`domain_scores`."""
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

    Parameters
    ----------
    text : str
        The text.
    layer1 : float, optional
        The text's layer-1 score, when already known.

    Returns
    -------
    float
        Coherence in [0, 1].

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
    words = WORD.findall(text)
    if not words:
        return 0.0
    n_sent = max(sum(WORD.search(s) is not None for s in _SENT.split(text.strip())), 1)
    length = _band(len(words) / n_sent, 8, 30, 0.8)
    punct = _band(len(_PUNCT.findall(text)) / len(words), 0.03, 0.4, 1.2)
    clauses = _band(max(len(_CLAUSE.findall(text)) / n_sent, 1e-3), 1e-3, 4.0, 1.5)
    # Pronouns need an antecedent: some content word earlier in the chunk.
    resolved, total, function = 0, 0, 0
    seen_content = False
    for w in words:
        w = w.lower()
        stop = w in STOPWORDS
        function += stop
        if w in _PRONOUNS if w.isascii() else _PRONOUN.fullmatch(w):  # re.I also folds "ſ", "K"
            total += 1
            resolved += seen_content
        elif not stop and len(w) > 2:
            seen_content = True
    pronouns = 1.0 if total == 0 else 0.5 + 0.5 * resolved / total
    wordness = min(1.0, function / len(words) / 0.25) if len(words) >= 4 else 0.5
    if layer1 is None:
        layer1 = float(relational_weights([text]).scores[0])
    else:
        layer1 = check_unit_interval(layer1, name="layer1", meaning="the text's layer-1 score")
    score = (punct * clauses * pronouns) ** (1 / 3) * length * wordness * order_factor(layer1)
    return float(min(max(score, 0.0), 1.0))
