"""``select``: one entry point for every selection strategy, dispatched by name.

``select_by_strategy(embeddings, query, costs, budget, strategy=...)`` returns chunk indices
in pick order, never over the budget.  Each strategy keeps its own options
(passed through by keyword; an unknown one is a ``TypeError`` naming it):

``"mmr"``
    Budgeted Maximal Marginal Relevance, :func:`~scwo_np.select.mmr_select`
    (``lam``, ``method``, ``cost_aware``, ...); ``select_by_strategy(..., strategy="mmr")``
    is ``mmr_select(...)``.
``"msd"``
    Budgeted max-sum diversity (pyversity's definition): relevance plus the
    summed cosine distance to the picks, :func:`~scwo_np.select.msd_select`
    (``lam``, ``cost_exponent``).
``"dpp"``
    Budgeted greedy MAP of a determinantal point process whose quality follows
    relevance, :func:`~scwo_np.select.dpp_select` (``lam``, ``scale``,
    ``cost_exponent``), lazy and exact.
``"ssd"``
    Budgeted sliding spectrum decomposition (pyversity's definition, no window
    sliding), :func:`~scwo_np.select.ssd_select` (``lam``, ``gamma``,
    ``cost_exponent``), lazy and exact.
``"cover"``
    Relevance plus a concave coverage of the candidates (pyversity's ``cover``),
    :func:`~scwo_np.select.cover_select` (``lam``, ``gamma``,
    ``cost_exponent``): submodular, lazy and exact.
``"facility_location"``
    Budgeted greedy of relevance-weighted coverage of the candidates (Lin &
    Bilmes 2011), :func:`~scwo_np.select.facility_location_select`
    (``lam``, ``cost_exponent``): monotone submodular, lazy and exact, with the
    ``1 - 1/e`` and budgeted ``(1 - 1/e) / 2`` guarantees.
``"xquad"``
    Budgeted xQuAD (pyversity's definition): relevance plus the coverage of the
    query's aspects, :func:`~scwo_np.select.xquad_select` (``lam``, ``aspects``,
    ``aspect_weights``, ``cost_exponent``): submodular, lazy and exact.
``"rxquad"``
    xQuAD with the aspects' weights inferred from relevance (pyversity's RxQuAD),
    :func:`~scwo_np.select.rxquad_select` (``lam``, ``aspects``, ``cost_exponent``).
``"gist"``
    Budgeted GIST (Fahrbach et al. 2025): relevance sum plus the max-min distance
    of the picks, by greedy independent sets over distance thresholds,
    :func:`~scwo_np.select.gist_select` (``lam``, ``eps``, ``cost_exponent``).
``"knapsack"``
    The exact optimum of total relevance under the budget,
    :func:`~scwo_np.select.knapsack_select` (``max_cells``): the bound
    every greedy can be compared with at ``lam = 1``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._registry import Registry
from ._cover import cover_select
from ._dpp import dpp_select
from ._facility import facility_location_select
from ._gist import gist_select
from ._knapsack import knapsack_select
from ._mmr import mmr_select, mmr_select_multi
from ._msd import msd_select
from ._ssd import ssd_select
from ._xquad import rxquad_select, xquad_select

__all__ = ["STRATEGIES", "select_by_strategy"]

_IMPLS = {
    "mmr": mmr_select,
    "msd": msd_select,
    "dpp": dpp_select,
    "ssd": ssd_select,
    "cover": cover_select,
    "facility_location": facility_location_select,
    "xquad": xquad_select,
    "rxquad": rxquad_select,
    "gist": gist_select,
    "knapsack": knapsack_select,
}

#: Registry of selection strategies (``strategy=``): name -> selection function; tests
#: parametrise over it.
STRATEGIES: Registry = Registry("strategy", _IMPLS)


def select_by_strategy(
    embeddings: ArrayLike,
    query: ArrayLike,
    costs: ArrayLike,
    budget: int,
    *,
    strategy: str = "mmr",
    **options: Any,
) -> NDArray[np.int64] | tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Chunks to put into the context, by the named strategy, within ``budget`` tokens.

    Parameters
    ----------
    embeddings, query, costs, budget
        As in :func:`~scwo_np.select.mmr_select`; ``query`` of shape ``(m, d)`` is
        several queries (relevance: the weighted mean of the cosines; ``weights=``
        among the options), for every strategy (MMR's is
        :func:`~scwo_np.select.mmr_select_multi`).
    strategy : {"mmr", "msd", "dpp", "ssd", "cover", "facility_location", "xquad", "rxquad", "gist", "knapsack"}
        See the module docs.
    **options
        The strategy's own keyword arguments.

    Returns
    -------
    indices : ndarray of int64
        Selected chunk indices, in pick order; their costs sum to at most ``budget``.
    gains : ndarray of float64
        Each pick's gain when it was picked; only with ``return_gains=True``.

    Examples
    --------
    >>> import numpy as np
    >>> import scwo_np
    >>> E = np.array([[1.0, 0.0], [0.95, 0.31], [0.9, 0.44], [0.0, 1.0]])
    >>> scwo_np.select_by_strategy(E, [1.0, 0.0], [300, 150, 150, 10], 300, strategy="mmr", lam=1.0)
    array([0])
    >>> scwo_np.select_by_strategy(E, [1.0, 0.0], [300, 150, 150, 10], 300, strategy="knapsack")
    array([1, 2])
    """
    impl = STRATEGIES.lookup(strategy)
    if strategy == "mmr" and np.ndim(query) == 2:
        return mmr_select_multi(embeddings, query, costs, budget, **options)
    return impl(embeddings, query, costs, budget, **options)
