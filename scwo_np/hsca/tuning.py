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
  multiplies a chunk's weight by its flags' weights.

Every step is bounded, a pure function of the recorded history (so
deterministic), and reversible: :meth:`~Tuner.revert` restores the parameters
from before the last :meth:`~Tuner.tune`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .engine import HSCAEngine
from .layer1 import relational_weights
from .types import WeightedChunk

__all__ = ["Tuner", "WINDOWS"]

#: Candidate co-occurrence windows.
WINDOWS = (3, 4, 5, 6, 7, 8)


def _auc(pos: np.ndarray, neg: np.ndarray) -> float:
    """Probability that a random hit scores above a random non-hit (ties count half)."""
    if pos.size == 0 or neg.size == 0:
        return 0.5
    greater = (pos[:, None] > neg[None, :]).mean()
    equal = (pos[:, None] == neg[None, :]).mean()
    return float(greater + 0.5 * equal)


@dataclass
class Tuner:
    """Hit history and the parameter updates it justifies (see the module documentation)."""

    texts: list[str] = field(default_factory=list)
    hits: list[bool] = field(default_factory=list)
    coherence: list[float] = field(default_factory=list)
    flags: list[list[str]] = field(default_factory=list)
    _undo: list[tuple[int, float, dict]] = field(default_factory=list)

    def record(self, chunk: WeightedChunk, hit: bool) -> None:
        """Record whether ``chunk`` contributed to a downstream query hit."""
        self.texts.append(chunk.text)
        self.hits.append(bool(hit))
        self.coherence.append(chunk.coherence_score)
        self.flags.append(list(chunk.nuance_flags))

    def __len__(self) -> int:
        return len(self.hits)

    def tune(self, engine: HSCAEngine) -> dict:
        """Update ``engine``'s window, threshold and nuance weights; returns the new values."""
        self._undo.append(
            (engine.cooccurrence_window, engine.snapshot_coherence_threshold, dict(engine.nuance_weights))
        )
        hits = np.asarray(self.hits, dtype=bool)
        if hits.all() or not hits.any():
            return self._current(engine)  # no contrast to learn from
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

    def revert(self, engine: HSCAEngine) -> dict:
        """Restore ``engine``'s parameters from before the last :meth:`tune`."""
        if not self._undo:
            raise ValueError("nothing to revert: tune() has not been called.")
        engine.cooccurrence_window, engine.snapshot_coherence_threshold, engine.nuance_weights = (
            self._undo.pop()
        )
        return self._current(engine)

    @staticmethod
    def _current(engine: HSCAEngine) -> dict:
        return {
            "cooccurrence_window": engine.cooccurrence_window,
            "snapshot_coherence_threshold": engine.snapshot_coherence_threshold,
            "nuance_weights": dict(engine.nuance_weights),
        }
