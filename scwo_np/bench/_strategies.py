"""Which strategy puts the answer into the context: strategies compared on questions with known answers.

:func:`compare_strategies` retrieves the top candidates of each question from a
pool of chunks (cosine, as a retriever would), lets every strategy choose among
them under each budget, and reports per strategy and budget, averaged over the
questions:

``answer_recall``
    Share of questions for which at least one gold chunk was selected: the
    answer is in the context.
``gold_fraction``
    Share of the selected chunks that are gold (how much of the context is
    the answer).
``coverage``
    The SCWO specification's quality score of the selection
    (:func:`~scwo_np.select.coverage`).
``redundancy``
    Mean cosine similarity between two selected chunks (0 for one chunk).
``fill``
    Selected tokens over the budget.

The bundled Python FAQ (:func:`~scwo_np.datasets.load_faq`) is one such
collection of questions; ``README.md`` reports the comparison on it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .. import _dot
from .._registry import Registry
from ..select import coverage, select_by_strategy
from ..validation import (
    check_budget,
    check_costs,
    check_embeddings,
    check_int,
    check_queries,
    check_row_norms,
)

__all__ = ["DEFAULT_STRATEGIES", "compare_strategies"]

#: Name -> keyword arguments of :func:`~scwo_np.select.select_by_strategy` (top-k is MMR at ``lam = 1``).
DEFAULT_STRATEGIES: Registry[dict[str, Any]] = Registry(
    "strategies",
    {
        "top-k": {"strategy": "mmr", "lam": 1.0},
        "mmr (lam 0.7)": {"strategy": "mmr", "lam": 0.7},
        "mmr (lam 0.5)": {"strategy": "mmr", "lam": 0.5},
        "mmr cost-aware (r 0.25)": {"strategy": "mmr", "lam": 0.7, "cost_aware": True, "cost_exponent": 0.25},
        "mmr cost-aware (r 0.5)": {"strategy": "mmr", "lam": 0.7, "cost_aware": True, "cost_exponent": 0.5},
        "mmr cost-aware (r 1)": {"strategy": "mmr", "lam": 0.7, "cost_aware": True, "cost_exponent": 1.0},
        "msd (lam 0.7)": {"strategy": "msd", "lam": 0.7},
        "dpp (lam 0.7)": {"strategy": "dpp", "lam": 0.7},
        "dpp (lam 0.3)": {"strategy": "dpp", "lam": 0.3},
        "ssd (lam 0.7)": {"strategy": "ssd", "lam": 0.7},
        "ssd (lam 0.5)": {"strategy": "ssd", "lam": 0.5},
        "cover (lam 0.5)": {"strategy": "cover", "lam": 0.5},
        "facility location (lam 0.5)": {"strategy": "facility_location", "lam": 0.5},
        "facility location (lam 0.9)": {"strategy": "facility_location", "lam": 0.9},
        "xquad (lam 0.5)": {"strategy": "xquad", "lam": 0.5},
        "rxquad (lam 0.5)": {"strategy": "rxquad", "lam": 0.5},
        "gist (lam 0.7)": {"strategy": "gist", "lam": 0.7},
        "knapsack": {"strategy": "knapsack"},
    },
)


def compare_strategies(
    embeddings: ArrayLike,
    costs: ArrayLike,
    queries: ArrayLike,
    gold: Sequence[Sequence[int]],
    *,
    budgets: Sequence[int] = (200, 400, 800),
    strategies: Mapping[str, Mapping[str, Any]] | None = None,
    candidates: int = 50,
) -> list[dict[str, Any]]:
    """One row per (strategy, budget): the metrics of the module docs, averaged over the questions.

    Parameters
    ----------
    embeddings : array_like, shape (n, d)
        The pool of chunks.
    costs : array_like of int, shape (n,)
        Their token counts.
    queries : array_like, shape (m, d)
        One embedding per question.
    gold : sequence of m sequences of int
        The chunks (row numbers of ``embeddings``) that answer each question.
    budgets : sequence of int
        The token budgets to compare at.
    strategies : mapping, optional
        Name -> keyword arguments of :func:`~scwo_np.select.select_by_strategy`
        (default :data:`DEFAULT_STRATEGIES`).
    candidates : int
        How many chunks the retriever hands over per question (by cosine).

    Returns
    -------
    list of dict
        One row per strategy and budget: ``strategy``, ``budget``, each metric averaged over
        the questions (``answer_recall``, ``fill``, ...) and ``n``, the number of questions.

    Examples
    --------
    >>> import numpy as np
    >>> E = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]])
    >>> rows = compare_strategies(E, [50, 50, 50], [[1.0, 0.05]], [[1]], budgets=[100],
    ...                           strategies={"top-k": {"lam": 1.0}}, candidates=3)
    >>> rows[0]["answer_recall"], rows[0]["fill"]
    (1.0, 1.0)
    """
    E = check_embeddings(embeddings)
    n = E.shape[0]
    costs = check_costs(costs, n)
    Q = check_queries(queries, E.shape[1], dtype=E.dtype, name="queries")
    if len(gold) != Q.shape[0]:
        raise ValueError(f"gold must hold one list of chunk ids per query ({Q.shape[0]}); got {len(gold)}.")
    gold_sets = [{int(g) for g in gs} for gs in gold]
    if any(g < 0 or g >= n for gs in gold_sets for g in gs):
        raise ValueError(f"gold holds a chunk id outside 0..{n - 1}.")
    candidates = check_int(candidates, name="candidates", low=1)
    strategies = DEFAULT_STRATEGIES if strategies is None else strategies
    budgets = [check_budget(b) for b in budgets]
    nrm = np.sqrt(np.einsum("ij,ij->i", E, E, dtype=np.float64))
    check_row_norms(nrm, E)  # every chunk of the pool, not only those retrieved
    unit = E / nrm[:, None].astype(E.dtype)
    rows = []
    for name, options in strategies.items():
        for budget in budgets:
            acc = {
                "answer_recall": 0.0,
                "gold_fraction": 0.0,
                "coverage": 0.0,
                "redundancy": 0.0,
                "fill": 0.0,
            }
            for q, gs in zip(Q, gold_sets, strict=True):
                rel = _dot.query_cosines(E, q)[0]  # the relevance mmr_select ranks by
                cand = np.argsort(-rel, kind="stable")[:candidates]
                idx = cand[
                    select_by_strategy(np.ascontiguousarray(E[cand]), q, costs[cand], budget, **options)
                ]
                picked = idx.tolist()
                acc["answer_recall"] += bool(gs.intersection(picked))
                acc["gold_fraction"] += sum(i in gs for i in picked) / len(picked) if picked else 0.0
                acc["coverage"] += coverage(E[idx], q) if picked else 0.0
                if len(picked) > 1:
                    sims = unit[idx] @ unit[idx].T
                    acc["redundancy"] += float(sims[np.triu_indices(len(picked), 1)].mean())
                acc["fill"] += float(costs[idx].sum()) / budget if budget else 0.0
            m = Q.shape[0]
            rows.append(
                {"strategy": name, "budget": int(budget), **{k: v / m for k, v in acc.items()}, "n": m}
            )
    return rows
