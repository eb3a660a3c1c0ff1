"""The outputs whose every bit must be the same on every platform (x86-64, aarch64, ...).

``python -m tests.golden.cases`` writes them to ``tests/golden/golden.npz`` (run it on
x86-64 after a change that is meant to move bits, and commit the file);
``tests/test_golden.py`` recomputes them and compares integer bit patterns, in the normal
suite and under ``.ci/aarch64``.  Inputs are seeded and small; they include ties,
duplicate rows, negative similarities and budgets that bind.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

GOLDEN = Path(__file__).resolve().parent / "golden.npz"
SEEDS = (0, 1, 2)
DTYPES = ("float32", "float64")


def _data(seed: int, dtype: str, n: int = 160, d: int = 24):
    rng = np.random.default_rng(seed)
    E = rng.standard_normal((n, d))
    E[n // 2 : n // 2 + 5] = E[:5]  # exact duplicate rows: ties everywhere they meet
    E[-3:] = -E[:3]  # negative similarities
    q = rng.standard_normal(d)
    costs = rng.integers(1, 40, n)
    return E.astype(dtype), q.astype(dtype), costs


def cases() -> dict[str, np.ndarray]:
    """Every golden output, by name."""
    from scwo_np import load_sample, mmr_select, select_batch
    from scwo_np._dot import dots, dots_norms
    from scwo_np.dedup import cosine_pairs
    from scwo_np.hsca import relational_weights

    out: dict[str, np.ndarray] = {}
    for seed in SEEDS:
        for dt in DTYPES:
            E, q, costs = _data(seed, dt)
            key = f"s{seed}_{dt}"
            for method in ("exact", "lazy", "auto"):
                for lam in (0.3, 0.7, 1.0):
                    idx, gains = mmr_select(E, q, costs, 600, lam=lam, method=method, return_gains=True)
                    out[f"mmr_{method}_l{lam}_{key}_idx"] = idx
                    out[f"mmr_{method}_l{lam}_{key}_gains"] = gains
            idx, gains = mmr_select(E, q, costs, 600, cost_aware=True, return_gains=True)
            out[f"mmr_costaware_{key}_idx"], out[f"mmr_costaware_{key}_gains"] = idx, gains
            out[f"dots_{key}"] = dots(E, q)
            dd, nn = dots_norms(E, q)
            out[f"dots_norms_{key}_d"], out[f"dots_norms_{key}_n"] = dd, nn
            B = 6
            Eb = E[: B * 25].reshape(B, 25, -1)
            Qb = np.stack([E[k * 25] + q for k in range(B)]).astype(dt)
            r = select_batch(Eb, Qb, costs[: B * 25].reshape(B, 25), 150, lam=0.7)
            out[f"batch_{key}_idx"], out[f"batch_{key}_off"], out[f"batch_{key}_gains"] = r
            near = np.concatenate([E, E[:20] + np.asarray(0.01, dt) * E[20:40]]).astype(dt)
            i, j, s = cosine_pairs(near, 0.95)
            out[f"cospairs_{key}_i"], out[f"cospairs_{key}_j"], out[f"cospairs_{key}_s"] = i, j, s
    texts = list(load_sample().texts[:40])
    l1 = relational_weights(texts)
    out["layer1_scores"], out["layer1_sentences"] = l1.scores, l1.sentence_scores
    out["layer1_diversity"] = l1.diversity
    return out


def bits(a: np.ndarray) -> np.ndarray:
    """An array's exact bits as unsigned integers (floats), or the array itself (integers, bools)."""
    a = np.ascontiguousarray(a)
    if a.dtype.kind == "f":
        return a.view({4: np.uint32, 8: np.uint64}[a.dtype.itemsize])
    return a


if __name__ == "__main__":
    got = cases()
    np.savez_compressed(
        GOLDEN,
        **{k: bits(v) for k, v in got.items()},
        **{f"{k}__dtype": np.array(str(v.dtype)) for k, v in got.items()},
    )
    print(f"wrote {len(got)} arrays to {GOLDEN}")
