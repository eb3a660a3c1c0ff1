"""HSCA self-tuning (section 4): the engine tunes its own shallow parameters from its hit history.

:class:`Tuner` records which chunks later contributed to a query hit and which
did not, then, on :meth:`~Tuner.tune`:

* **co-occurrence window** — the window (among ``WINDOWS``, at most one step
  from the current one) whose layer-1 scores best separate hit from non-hit
  chunks (ROC AUC; ties keep the current window);
* **coherence threshold** — moved at most ``0.05`` towards the midpoint of the
  median coherence of hit and non-hit chunks, clipped to ``[0.5, 0.9]``;
* **nuance weights** — per flag, ``1 +`` (hit rate with the flag - overall
  hit rate), clipped to ``[0.5, 1.5]``; :meth:`HSCAEngine.relevant_snapshots`
  multiplies a chunk's weight by its flags' weights;
* **domain weights** (layer 2; ours) — when hits are recorded with the domain
  the query was about (``record(chunk, True, domain="legal")``: a knowledge-base
  namespace, a tool, a user's topic), one factor per domain on its lexicon score,
  fitted so that the recorded hits' labels are likely under the weighted scores
  (a convex softmax fit, see ``Tuner._fit_domain_weights``); each tune moves a
  factor towards that fit by at most ``DOMAIN_STEP`` and keeps it in
  ``DOMAIN_RANGE``; domains never seen as a label keep their weight;
* **domain words** (layer 2; ours) — from the same labelled hits, the stems no
  lexicon knows that occur in at least ``WORD_MIN_TEXTS`` distinct hit texts of
  one domain and in at most ``1 - WORD_PURITY`` of their labelled texts
  elsewhere join that domain (``HSCAEngine.domain_words``), at most
  ``WORDS_PER_TUNE`` new ones per tune, most frequent first; a learned word
  that stops qualifying is dropped.

Domain weights and words are the levers that move eval 1: window and threshold
barely change snapshot fidelity (see ``scwo_evals.hsca.eval3_self_improvement`` in the source tree).
The weights are a calibration that one or two tunes settle; the words keep
growing with the history.

Every step is bounded, a pure function of the recorded history (so
deterministic), and reversible: :meth:`~Tuner.revert` restores the parameters
from before the last :meth:`~Tuner.tune`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._engine import HSCAEngine
from ._layer1 import relational_weights
from ._layer2 import DOMAIN_LEXICONS, content_stems, domain_scores
from ._types import WeightedChunk

__all__ = [
    "DOMAIN_RANGE",
    "DOMAIN_STEP",
    "Tuner",
    "WINDOWS",
    "WORD_MIN_TEXTS",
    "WORD_PURITY",
    "WORDS_PER_TUNE",
]

#: Candidate co-occurrence windows.
WINDOWS = (3, 4, 5, 6, 7, 8)
#: Bounds of a learned domain weight, and the largest factor one tune may move it by.
DOMAIN_RANGE = (0.5, 2.0)
DOMAIN_STEP = 1.1
#: L2 pull of the log domain weights towards 0 (weight 1) in their fit.
DOMAIN_L2 = 0.01
#: A stem no lexicon knows joins a domain when it occurs in at least this many distinct
#: hit texts labelled with the domain, ...
WORD_MIN_TEXTS = 3
#: ... in at least this share of all the distinct labelled hit texts that contain it, ...
WORD_PURITY = 0.8
#: ... and at most this many new words join per tune (the most frequent first).
WORDS_PER_TUNE = 100
_DOMAINS = tuple(DOMAIN_LEXICONS)


def auc(pos, neg) -> float:
    """P(a random ``pos`` score > a random ``neg`` score), ties counting one half (ROC AUC).

    Examples
    --------
    >>> auc([0.9, 0.8], [0.1, 0.8])
    0.875
    """
    pos = np.asarray(pos, dtype=np.float64).ravel()
    neg = np.asarray(neg, dtype=np.float64).ravel()
    if pos.size == 0 or neg.size == 0:
        raise ValueError("auc needs at least one score on each side.")
    # Mann-Whitney U from average ranks: O(n log n) instead of comparing every pair.
    from scipy.stats import rankdata  # (here: scipy.stats took 0.5 s of importing scwo_np.hsca)

    ranks = rankdata(np.concatenate([pos, neg]))
    u = ranks[: pos.size].sum() - pos.size * (pos.size + 1) / 2
    return float(u / (pos.size * neg.size))


def _auc(pos: np.ndarray, neg: np.ndarray) -> float:
    """Probability that a random hit scores above a random non-hit (ties count half)."""
    return auc(pos, neg) if pos.size and neg.size else 0.5


@dataclass
class Tuner:
    """Hit history and the parameter updates it justifies (see the module documentation).

    Made empty (``Tuner()``) and filled by :meth:`record`; the fields hold what was recorded.

    Parameters
    ----------
    texts : list of str
        Each recorded chunk's text.
    hits : list of bool
        Whether it contributed to a downstream hit.
    coherence : list of float
        Its coherence score.
    flags : list of list of str
        Its nuance flags.
    domains : list of str or None
        The domain the query was about, when given.

    Examples
    --------
    >>> eng = HSCAEngine()
    >>> tuner = Tuner()
    >>> chunk = eng.ingest_turn("The court ruled that the contract was void.")
    >>> tuner.record(chunk, True, domain="legal")
    >>> len(tuner), tuner.hits
    (1, [True])
    """

    texts: list[str] = field(default_factory=list)
    hits: list[bool] = field(default_factory=list)
    coherence: list[float] = field(default_factory=list)
    flags: list[list[str]] = field(default_factory=list)
    domains: list[str | None] = field(default_factory=list)
    _undo: list[tuple[int, float, dict, dict, dict]] = field(default_factory=list, init=False, repr=False)
    _stems: list[frozenset[str]] = field(default_factory=list, init=False, repr=False)

    def record(self, chunk: WeightedChunk, hit: bool, *, domain: str | None = None) -> None:
        """Record whether ``chunk`` contributed to a downstream query hit.

        ``domain``, optional, is the domain the query was about; hits recorded
        with it teach the layer-2 domain weights and words.

        Parameters
        ----------
        chunk : WeightedChunk
            A chunk the engine made.
        hit : bool
            Whether it contributed to a downstream hit.
        domain : str, optional
            The domain the query was about.

        Returns
        -------
        None
            The record is added to the history.

        Examples
        --------
        >>> from scwo_np.hsca import HSCAEngine, Tuner
        >>> tuner = Tuner()
        >>> tuner.record(HSCAEngine().ingest_turn("The court ruled."), True, domain="legal")
        >>> tuner.domains
        ['legal']
        """
        if not isinstance(chunk, WeightedChunk):
            raise TypeError(f"chunk must be a WeightedChunk (from the engine); got {type(chunk).__name__}.")
        if not isinstance(hit, bool | np.bool_):
            raise TypeError(f"hit must be True or False; got {hit!r}.")
        if domain is not None and domain not in DOMAIN_LEXICONS:
            raise ValueError(f"domain must be one of {sorted(DOMAIN_LEXICONS)} or None; got {domain!r}.")
        self.texts.append(chunk.text)
        self.hits.append(bool(hit))
        self.coherence.append(chunk.coherence_score)
        self.flags.append(list(chunk.nuance_flags))
        self.domains.append(domain)
        self._stems.append(frozenset(content_stems(chunk.text)) if hit and domain else frozenset())

    def __len__(self) -> int:
        return len(self.hits)

    def tune(self, engine: HSCAEngine) -> dict:
        """Update ``engine``'s window, threshold, nuance weights, domain weights and words.

        Returns the new values.

        Parameters
        ----------
        engine : HSCAEngine
            The engine to update.

        Returns
        -------
        dict
            The new parameter values.

        Examples
        --------
        >>> from scwo_np.hsca import HSCAEngine, Tuner
        >>> eng, tuner = HSCAEngine(), Tuner()
        >>> for i in range(4):
        ...     tuner.record(eng.ingest_turn(f"The court ruled on contract {i}."), i % 2 == 0)
        >>> sorted(tuner.tune(eng))[:3]
        ['cooccurrence_window', 'domain_weights', 'domain_words']
        """
        if not isinstance(engine, HSCAEngine):
            raise TypeError(f"engine must be an HSCAEngine; got {type(engine).__name__}.")
        self._undo.append(
            (
                engine.cooccurrence_window,
                engine.snapshot_coherence_threshold,
                dict(engine.nuance_weights),
                dict(engine.domain_weights),
                dict(engine.domain_words),
            )
        )
        hits = np.asarray(self.hits, dtype=bool)
        labelled = [i for i, (h, d) in enumerate(zip(self.hits, self.domains, strict=True)) if h and d]
        if labelled:
            engine.domain_words = self._learn_words(labelled, engine.domain_words)
            engine.domain_weights = self._fit_domain_weights(
                labelled, engine.domain_weights, engine.domain_words
            )
        if hits.all() or not hits.any():
            return self._current(engine)  # no contrast to learn the rest from
        current = engine.cooccurrence_window
        candidates = [w for w in WINDOWS if abs(w - current) <= 1] or [current]
        best, best_auc = current, -1.0
        for w in sorted(candidates, key=lambda w: (abs(w - current), w)):
            s = relational_weights(self.texts, window=w).scores
            auc = _auc(s[hits], s[~hits])
            if auc > best_auc + 1e-12:
                best, best_auc = w, auc
        engine.cooccurrence_window = best
        coh = np.asarray(self.coherence)
        target = float(np.clip((np.median(coh[hits]) + np.median(coh[~hits])) / 2, 0.5, 0.9))
        t = engine.snapshot_coherence_threshold
        engine.snapshot_coherence_threshold = float(np.clip(target, t - 0.05, t + 0.05))
        base = hits.mean()
        weights = {}
        for flag in sorted({f for fl in self.flags for f in fl}):
            has = np.array([flag in fl for fl in self.flags])
            weights[flag] = float(np.clip(1.0 + (hits[has].mean() - base), 0.5, 1.5))
        engine.nuance_weights = weights
        return self._current(engine)

    def _learn_words(self, rows: list[int], current: dict[str, str]) -> dict[str, str]:
        """The learned domain words after one bounded step (see the module documentation)."""
        seen: set[tuple[str, str]] = set()
        count: dict[str, dict[str, int]] = {}
        for i in rows:
            key = (self.texts[i], self.domains[i])
            if key in seen:  # a text recorded again adds no evidence
                continue
            seen.add(key)
            for x in self._stems[i]:
                by = count.setdefault(x, {})
                by[self.domains[i]] = by.get(self.domains[i], 0) + 1
        qualified: dict[str, tuple[str, int]] = {}
        for x, by in count.items():
            d, c = min(by.items(), key=lambda kv: (-kv[1], kv[0]))
            if c >= WORD_MIN_TEXTS and c >= WORD_PURITY * sum(by.values()):
                qualified[x] = (d, c)
        words = {x: d for x, d in current.items() if qualified.get(x, ("", 0))[0] == d}
        new = sorted((x for x in qualified if x not in words), key=lambda x: (-qualified[x][1], x))
        words.update((x, qualified[x][0]) for x in new[:WORDS_PER_TUNE])
        return dict(sorted(words.items()))

    def _fit_domain_weights(
        self, rows: list[int], current: dict[str, float], words: dict[str, str]
    ) -> dict[str, float]:
        """One bounded step from ``current`` towards the best domain weights for the labelled hits.

        The best weights maximise the mean log-likelihood of the labels under
        ``P(d | chunk) ∝ (score_d + 0.01) * w_d`` with a small L2 pull of
        ``log w`` towards 0 (a convex problem: one optimum, found by gradient
        ascent from 0, deterministic).  Only domains that occur as labels move,
        and their log weights keep mean 0 (softmax is blind to a common factor,
        which would otherwise shift every score against the tagging threshold).
        """
        cache: dict[str, np.ndarray] = {}
        for i in rows:
            if self.texts[i] not in cache:
                scores = domain_scores(self.texts[i], None, words)
                cache[self.texts[i]] = np.array([scores[d] for d in _DOMAINS])
        S = np.stack([cache[self.texts[i]] for i in rows])
        y = np.array([_DOMAINS.index(self.domains[i]) for i in rows])
        free = np.zeros(len(_DOMAINS), dtype=bool)
        free[np.unique(y)] = True
        L = np.log(S + 0.01)
        onehot = np.zeros_like(L)
        onehot[np.arange(len(y)), y] = 1.0
        target_mean = onehot.mean(0)
        b = np.zeros(len(_DOMAINS))
        for _ in range(300):
            z = L + b
            z -= z.max(1, keepdims=True)
            p = np.exp(z)
            p /= p.sum(1, keepdims=True)
            grad = target_mean - p.mean(0) - DOMAIN_L2 * b
            b = np.where(free, b + 2.0 * grad, b)
            b[free] -= b[free].mean()  # only relative calibration: the overall scale stays
        lo, hi = np.log(DOMAIN_RANGE[0]), np.log(DOMAIN_RANGE[1])
        start = np.log([current.get(d, 1.0) for d in _DOMAINS])
        step = np.clip(b - start, -np.log(DOMAIN_STEP), np.log(DOMAIN_STEP))
        logw = np.where(free, np.clip(start + step, lo, hi), start)
        return {d: float(np.exp(v)) for d, v in zip(_DOMAINS, logw, strict=True) if abs(v) > 1e-9}

    def revert(self, engine: HSCAEngine) -> dict:
        """Restore ``engine``'s parameters from before the last :meth:`tune`.

        Parameters
        ----------
        engine : HSCAEngine
            The engine last tuned.

        Returns
        -------
        dict
            The restored parameter values.

        Examples
        --------
        >>> from scwo_np.hsca import HSCAEngine, Tuner
        >>> eng, tuner = HSCAEngine(), Tuner()
        >>> tuner.record(eng.ingest_turn("The court ruled on the contract."), True)
        >>> before = eng.cooccurrence_window
        >>> _ = tuner.tune(eng)
        >>> tuner.revert(eng)["cooccurrence_window"] == before
        True
        """
        if not isinstance(engine, HSCAEngine):
            raise TypeError(f"engine must be an HSCAEngine; got {type(engine).__name__}.")
        if not self._undo:
            raise ValueError("nothing to revert: tune() has not been called.")
        (
            engine.cooccurrence_window,
            engine.snapshot_coherence_threshold,
            engine.nuance_weights,
            engine.domain_weights,
            engine.domain_words,
        ) = self._undo.pop()
        return self._current(engine)

    @staticmethod
    def _current(engine: HSCAEngine) -> dict:
        return {
            "cooccurrence_window": engine.cooccurrence_window,
            "snapshot_coherence_threshold": engine.snapshot_coherence_threshold,
            "nuance_weights": dict(engine.nuance_weights),
            "domain_weights": dict(engine.domain_weights),
            "domain_words": dict(engine.domain_words),
        }
