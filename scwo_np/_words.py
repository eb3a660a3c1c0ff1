"""Words: the one word pattern, the one search-term pattern and the one stop-word list.

Read them through :mod:`scwo_np.text` (this module is private so that the sentence
splitter, which needs :data:`WORD`, can sit below ``text`` without an import cycle).
"""

from __future__ import annotations

import re

__all__ = ["STOPWORDS", "TERM", "WORD"]

#: A word of prose: a run of letters, with one inner apostrophe ("don't", "o’clock").
#: Digits and ``_`` end a word and are not part of one, so "3.14" and "x_1" hold no
#: digit-bearing words.  HSCA's layers, its engine and the sentence units use it.
WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")

#: A search term in data: a run of letters, digits and ``_`` (``\w+``), so "500",
#: "user_id" and "v2" are terms.  Queries over records need them: a status code or an id
#: is what is asked for.  JSON retrieval (:mod:`scwo_np.anchor`) and the quality
#: benchmark's answer 3-grams use it.
TERM = re.compile(r"\w+")

#: English function words (lower case): they co-occur with everything, so they carry no
#: topic.  HSCA layer 1 leaves them out of its content words (its scores are pinned by
#: ``tests/golden``), layer 2 out of its domain shares, the engine out of its topic-shift
#: stems; JSON retrieval drops them from a query (except the few that name a record's
#: state, ``anchor._keep``).
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below between
    both but by can could did do does doing down during each few for from further had has have having he her here
    hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of
    off on once only or other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up very was we were what
    when where which while who whom why will with would you your yours yourself yourselves also may might must
    shall one two us upon yet via per""".split()
)
