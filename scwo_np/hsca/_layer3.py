"""HSCA Layer 3: nuance flags.

Deterministic (patterns, whole words): ``hedged``, ``absolute``,
``rhetorical_question``, ``instructional``.  Emotional tone from the VADER
lexicon (the ``vaderSentiment`` package, in the ``text`` extra; it ships its
lexicon, nothing is downloaded): ``emotional_tone_positive``/``negative``
at a mean sentence compound score of +-0.35, ``emotional_tone_urgent`` for urgency words or
repeated exclamations, else ``emotional_tone_neutral``.  Without VADER the tone
flags are omitted, not set to neutral.

``metaphor``, ``sarcasm``, ``analogy`` and ``narrative_thread`` come only from
an optional model callable (``text -> iterable of those names``) and carry the
``_model`` suffix; with no model, or when it fails, they are omitted: omission
means "unknown", which is not "false".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache

from ..text import split_sentences
from ..validation import check_text
from ._types import NuanceFlag

__all__ = ["nuance_flags", "MODEL_FLAGS"]

MODEL_FLAGS = ("metaphor", "sarcasm", "analogy", "narrative_thread")

_HEDGED = re.compile(
    r"\b(may|might|could|perhaps|possibly|probably|likely|unlikely|seems?|appears?|suggests?|arguably|"
    r"somewhat|approximately|roughly|in some cases|to some extent|it is possible)\b",
    re.I,
)
_ABSOLUTE = re.compile(
    r"\b(always|never|all|every|none|nobody|no one|everyone|everything|nothing|entirely|completely|"
    r"undeniably|certainly|without exception|in every case)\b",
    re.I,
)
_RHETORICAL = re.compile(
    r"\b(isn'?t it|aren'?t they|don'?t you|doesn'?t it|wouldn'?t you|who would|who could|who cares|"
    r"why would anyone|how could (?:anyone|we|you)|what'?s the point|is it any wonder|need i say|"
    r"who doesn'?t|can anyone)\b[^?]*\?",
    re.I,
)
_ANSWERED = re.compile(
    r"\?\s+(of course|obviously|clearly|no[,.!]|yes[,.!]|nobody|not at all|because)\b", re.I
)
_IMPERATIVE = re.compile(
    r"(^|[.!?:]\s+|\n\s*(?:\d+[.)]\s*|[-*]\s*)?)(use|run|click|install|set|add|open|close|make sure|be sure|"
    r"do not|don'?t|remember to|avoid|check|select|enter|type|press|call|create|remove|delete|save|follow|"
    r"go to|see|note that|ensure|try|start|stop|restart|configure)\b",
    re.I,
)
_YOU_SHOULD = re.compile(r"\byou (should|must|need to|have to|can)\b|\bstep \d+\b", re.I)
_URGENT = re.compile(
    r"\b(urgent|urgently|immediately|asap|emergency|hurry|right now|critical|at once)\b", re.I
)

#: A literal each match of a pattern holds, lower case (checked before the pattern, on the lower-cased
#: text: most text holds none of them, and a pattern tried at every position is what layer 3 cost).
_KEYS = {
    _HEDGED: ("may", "might", "could", "perhaps", "possibly", "probably", "likely", "seem", "appear",
              "suggest", "arguably", "somewhat", "approximately", "roughly", "in some cases",
              "to some extent", "it is possible"),
    _ABSOLUTE: ("always", "never", "all", "every", "none", "nobody", "no one", "nothing", "entirely",
                "completely", "undeniably", "certainly", "without exception"),
    _RHETORICAL: ("?",),
    _YOU_SHOULD: ("you ", "step "),
    _URGENT: ("urgent", "immediately", "asap", "emergency", "hurry", "right now", "critical", "at once"),
}  # fmt: skip
#: The only characters besides ASCII letters that ``re.I`` matches to an ASCII letter ("İ", "ı" to
#: i, the Kelvin sign to k, long s to s): a text with one is searched without the literal check.
_FOLDS = ("\u0130", "\u0131", "\u212a", "\u017f")


def _has(pattern: re.Pattern, text: str, low: str | None) -> bool:
    """``pattern.search(text)``, after the literal check of ``_KEYS`` on ``low`` (the lower-cased
    text; None skips the check)."""
    keys = _KEYS.get(pattern)
    if low is not None and keys and not any(k in low for k in keys):
        return False
    return pattern.search(text) is not None


@lru_cache(maxsize=1)
def _vader():
    try:
        from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer
    except ImportError:  # pragma: no cover - the optional ``text`` extra
        return None
    return SentimentIntensityAnalyzer()


def nuance_flags(text: str, model: Callable[[str], Iterable[str]] | None = None) -> list[str]:
    """Nuance flags of ``text`` (see the module documentation).

    Parameters
    ----------
    text : str
        The text.
    model : callable, optional
        ``text -> iterable of flags``; what it returns is added with a ``_model`` suffix.

    Returns
    -------
    list of str
        :class:`NuanceFlag` values.

    Examples
    --------
    >>> nuance_flags("This may help in some cases.")[:1]
    ['hedged']
    >>> "instructional" in nuance_flags("Install the package, then run the tests.")
    True
    >>> "rhetorical_question" in nuance_flags("Who would ever trust that? Nobody.")
    True
    >>> nuance_flags("It was a storm in a teacup.", model=lambda t: ["metaphor"])[-1]
    'metaphor_model'
    """
    return _nuance_flags(check_text(text), model)


def _nuance_flags(
    text: str, model: Callable[[str], Iterable[str]] | None, sentences: list[tuple[int, int]] | None = None
) -> list[str]:
    """:func:`nuance_flags` of a checked ``text``; ``sentences`` is ``split_sentences(text)`` when
    the caller has it."""
    flags = []
    low = None if any(c in text for c in _FOLDS) else text.lower()
    if _has(_HEDGED, text, low):
        flags.append(NuanceFlag.HEDGED.value)
    if _has(_ABSOLUTE, text, low):
        flags.append(NuanceFlag.ABSOLUTE.value)
    if _has(_RHETORICAL, text, low) or _ANSWERED.search(text):
        flags.append(NuanceFlag.RHETORICAL_QUESTION.value)
    if _IMPERATIVE.search(text) or _has(_YOU_SHOULD, text, low):
        flags.append(NuanceFlag.INSTRUCTIONAL.value)
    vader = _vader()
    if vader is not None and text.strip():
        if _has(_URGENT, text, low) or text.count("!") >= 3:
            flags.append(NuanceFlag.EMOTIONAL_TONE_URGENT.value)
        # Per sentence, then the mean: VADER's own advice for paragraphs, and it keeps
        # VADER's per-word look-backs short (one call on a long text is quadratic-ish).
        head = text[:20000]
        if sentences is None or len(text) > len(head):
            sentences = split_sentences(head)
        sentences = [head[a:b] for a, b in sentences] or [head]
        compound = sum(vader.polarity_scores(x)["compound"] for x in sentences) / len(sentences)
        if compound >= 0.35:
            flags.append(NuanceFlag.EMOTIONAL_TONE_POSITIVE.value)
        elif compound <= -0.35:
            flags.append(NuanceFlag.EMOTIONAL_TONE_NEGATIVE.value)
        elif NuanceFlag.EMOTIONAL_TONE_URGENT.value not in flags:
            flags.append(NuanceFlag.EMOTIONAL_TONE_NEUTRAL.value)
    if model is not None:
        try:
            found = {str(f) for f in model(text)}
        except Exception:  # noqa: BLE001 - a failing model leaves the model flags unknown
            found = set()
        flags += [f"{name}_model" for name in MODEL_FLAGS if name in found]
    return flags
