"""compare_strategies (issue 19): the metrics, on a set small enough to check by hand, and on the FAQ."""

import numpy as np
import pytest

from scwo_np.bench import DEFAULT_STRATEGIES, compare_strategies
from scwo_np.datasets import load_faq


def test_the_metrics_by_hand():
    # Query along x; chunks 0 and 1 nearly copies of each other along x, chunk 2 along y (the gold one).
    E = np.array([[1.0, 0.0], [0.99, 0.05], [0.6, 0.8]])
    rows = compare_strategies(
        E, [50, 50, 50], [[1.0, 0.1]], [[2]], budgets=[100],
        strategies={"top-k": {"lam": 1.0}, "mmr": {"lam": 0.3}}, candidates=3,
    )  # fmt: skip
    top, mmr = rows
    assert top["answer_recall"] == 0.0 and top["gold_fraction"] == 0.0  # the two copies fill the budget
    assert mmr["answer_recall"] == 1.0 and mmr["gold_fraction"] == 0.5  # a copy and the different one
    assert top["redundancy"] > 0.99 > mmr["redundancy"] and top["fill"] == mmr["fill"] == 1.0
    assert top["n"] == 1 and mmr["coverage"] > 0


def test_bad_gold_is_named():
    E = np.eye(3)
    with pytest.raises(ValueError, match="one list of chunk ids per query"):
        compare_strategies(E, [1, 1, 1], E[:2], [[0]])
    with pytest.raises(ValueError, match="outside 0..2"):
        compare_strategies(E, [1, 1, 1], E[:1], [[3]])


@pytest.mark.volume
def test_every_default_strategy_runs_on_the_faq_and_stays_in_range():
    f = load_faq()
    held = [i for i, s in enumerate(f.split) if s == "held_out"][:20]
    rows = compare_strategies(
        f.embeddings, f.costs, f.query_embeddings[held], [f.gold[i] for i in held], budgets=[200, 400]
    )
    assert len(rows) == 2 * len(DEFAULT_STRATEGIES)
    for r in rows:
        for k in ("answer_recall", "gold_fraction", "redundancy", "fill"):
            assert 0.0 <= r[k] <= 1.0
        assert r["fill"] > 0.8  # 50 candidates always fill most of the budget
    recall = {(r["strategy"], r["budget"]): r["answer_recall"] for r in rows}
    assert recall[("top-k", 400)] >= recall[("top-k", 200)]
