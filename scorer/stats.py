"""Statistics: Wilson intervals, exact McNemar, paired bootstraps, Cronbach's alpha."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Z95 = 1.959963984540054


def preload():
    """scipy.stats, imported on first use: it takes 0.4 s and only comparisons need it (the scorer imports it
    while its workers score runs)."""
    from scipy import stats

    return stats


def wilson(k: float, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Wilson score interval for k successes out of n (None when n == 0); k may be an expected count (a sum of
    partial credits)."""
    if n <= 0:
        return None
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value: binomial test of b discordant pairs out of b + c at p = 1/2."""
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    tail = preload().binom.cdf(k, n, 0.5)
    return float(min(1.0, 2.0 * tail))


def _percentile_ci(values: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    lo, hi = np.percentile(values, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
    return float(lo), float(hi)


def paired_bootstrap(
    a: npt.ArrayLike, b: npt.ArrayLike, *, resamples: int = 10000, seed: int = 0, chunk: int = 1000
) -> dict:
    """Percentile 95% interval of mean(b) - mean(a), resampling items (paired)."""
    d = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    n = d.size
    if n == 0:
        return {"diff": None, "ci95": None, "resamples": resamples, "seed": seed}
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    for start in range(0, resamples, chunk):
        m = min(chunk, resamples - start)
        idx = rng.integers(0, n, size=(m, n))
        means[start : start + m] = d[idx].mean(axis=1)
    return {"diff": float(d.mean()), "ci95": _percentile_ci(means), "resamples": resamples, "seed": seed}


def cluster_bootstrap(
    a: npt.ArrayLike, b: npt.ArrayLike, clusters: Sequence, *, resamples: int = 10000, seed: int = 0, chunk: int = 1000
) -> dict:
    """Percentile 95% interval of mean(b) - mean(a), resampling whole clusters of items."""
    d = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    if d.size == 0:
        return {"diff": None, "ci95": None, "resamples": resamples, "seed": seed, "n_clusters": 0}
    keys: dict = {}
    cid = np.array([keys.setdefault(c, len(keys)) for c in clusters])
    k = len(keys)
    sums = np.bincount(cid, weights=d, minlength=k)
    sizes = np.bincount(cid, minlength=k).astype(np.float64)
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    for start in range(0, resamples, chunk):
        m = min(chunk, resamples - start)
        idx = rng.integers(0, k, size=(m, k))
        means[start : start + m] = sums[idx].sum(axis=1) / sizes[idx].sum(axis=1)
    return {
        "diff": float(d.mean()),
        "ci95": _percentile_ci(means),
        "resamples": resamples,
        "seed": seed,
        "n_clusters": k,
    }


def cronbach_alpha(matrix) -> float | None:
    """Cronbach's alpha of an items x runs matrix (items are the test's items, runs its respondents).

    alpha = k/(k-1) * (1 - sum of item variances / variance of run totals), with k items and
    sample variances (ddof=1) taken across runs. None when it is undefined (k < 2, fewer than
    two runs, or run totals that do not vary).
    """
    x = np.asarray(matrix, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] < 2:
        return None
    k = x.shape[0]
    item_var = x.var(axis=1, ddof=1).sum()
    total_var = x.sum(axis=0).var(ddof=1)
    if total_var == 0:
        return None
    return float(k / (k - 1) * (1 - item_var / total_var))


def item_total_correlations(matrix) -> list[float | None]:
    """Corrected item-total correlation per item: Pearson r between the item and the run totals without it."""
    x = np.asarray(matrix, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] < 3:
        return [None] * (x.shape[0] if x.ndim == 2 else 0)
    totals = x.sum(axis=0)
    out: list[float | None] = []
    for row in x:
        rest = totals - row
        if row.std() == 0 or rest.std() == 0:
            out.append(None)
        else:
            out.append(float(np.corrcoef(row, rest)[0, 1]))
    return out


def mean_std(values: Sequence[float | None]) -> dict:
    vals = [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if not vals:
        return {"n": 0, "mean": None, "std": None}
    arr = np.asarray(vals)
    return {"n": len(vals), "mean": float(arr.mean()), "std": float(arr.std(ddof=1)) if len(vals) > 1 else None}
