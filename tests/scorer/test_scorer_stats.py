"""The scorer's statistics against independent computations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest

from agenthop.scorer import stats


def test_wilson_known_values():
    lo, hi = stats.wilson(8, 10)
    assert lo == pytest.approx(0.4902, abs=1e-4) and hi == pytest.approx(0.9433, abs=1e-4)
    lo, hi = stats.wilson(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    assert stats.wilson(0, 0) is None


def test_wilson_matches_closed_form():
    k, n, z = 37, 91, 1.959963984540054
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert stats.wilson(k, n) == pytest.approx((centre - half, centre + half))


@pytest.mark.parametrize("b,c", [(0, 0), (1, 0), (5, 1), (3, 12), (20, 20), (40, 23), (0, 9)])
def test_mcnemar_exact_matches_scipy_binomtest(b, c):
    expected = 1.0 if b + c == 0 else binomtest(min(b, c), b + c, 0.5, alternative="two-sided").pvalue
    assert stats.mcnemar_exact(b, c) == pytest.approx(expected, rel=1e-12)


def _pair(n=200, seed=1):
    rng = np.random.default_rng(seed)
    a = (rng.random(n) < 0.5).astype(int)
    b = (rng.random(n) < 0.6).astype(int)
    return a, b


def test_paired_bootstrap_reproducible_by_seed():
    a, b = _pair()
    r1 = stats.paired_bootstrap(a, b, resamples=2000, seed=7)
    r2 = stats.paired_bootstrap(a, b, resamples=2000, seed=7)
    r3 = stats.paired_bootstrap(a, b, resamples=2000, seed=8)
    assert r1 == r2 and r1["ci95"] != r3["ci95"]
    assert r1["diff"] == pytest.approx(b.mean() - a.mean())
    lo, hi = r1["ci95"]
    assert lo < r1["diff"] < hi
    # Close to the normal approximation of the paired difference.
    d = b - a
    se = d.std(ddof=1) / math.sqrt(len(d))
    assert lo == pytest.approx(d.mean() - 1.96 * se, abs=0.02)
    assert hi == pytest.approx(d.mean() + 1.96 * se, abs=0.02)


def test_paired_bootstrap_chunking_does_not_change_result():
    a, b = _pair()
    assert stats.paired_bootstrap(a, b, resamples=3000, seed=3, chunk=1000) == stats.paired_bootstrap(
        a, b, resamples=3000, seed=3, chunk=700
    )


def test_cluster_bootstrap_with_singletons_equals_item_bootstrap():
    a, b = _pair()
    items = stats.paired_bootstrap(a, b, resamples=1000, seed=5)
    clusters = stats.cluster_bootstrap(a, b, list(range(len(a))), resamples=1000, seed=5)
    assert clusters["ci95"] == pytest.approx(items["ci95"])
    assert clusters["n_clusters"] == len(a)


def test_cluster_bootstrap_is_wider_for_correlated_clusters():
    # Items come in clusters of 10 that are all right or all wrong together.
    rng = np.random.default_rng(0)
    ca = np.repeat((rng.random(30) < 0.5).astype(int), 10)
    cb = np.repeat((rng.random(30) < 0.5).astype(int), 10)
    keys = np.repeat(np.arange(30), 10)
    it = stats.paired_bootstrap(ca, cb, resamples=2000, seed=0)["ci95"]
    cl = stats.cluster_bootstrap(ca, cb, keys, resamples=2000, seed=0)
    assert cl["n_clusters"] == 30
    assert (cl["ci95"][1] - cl["ci95"][0]) > 2 * (it[1] - it[0])
    assert stats.cluster_bootstrap(ca, cb, keys, resamples=2000, seed=0) == cl


def test_cronbach_alpha_known_value():
    # 3 items x 4 runs. Run totals 3, 2, 1, 0 (variance 5/3); item variances 1/3, 1/4, 1/4 (sum 5/6);
    # alpha = 3/2 * (1 - (5/6) / (5/3)) = 0.75.
    m = [[1, 1, 0, 0], [1, 1, 1, 0], [1, 0, 0, 0]]
    assert stats.cronbach_alpha(m) == pytest.approx(0.75)
    assert stats.cronbach_alpha([[1, 0, 1, 0]] * 5) == pytest.approx(1.0)
    assert stats.cronbach_alpha([[1, 1, 1]] * 4) is None  # totals do not vary
    assert stats.cronbach_alpha([[1, 0]]) is None  # one item


def test_corrected_item_total_correlations():
    m = [[1, 1, 0, 0], [1, 1, 1, 0], [1, 0, 0, 0]]
    r = stats.item_total_correlations(m)
    # item 1 vs the rest's totals [2, 1, 1, 0]: r = 1 / sqrt(2)
    assert r[0] == pytest.approx(1 / math.sqrt(2))
    assert r[1] == pytest.approx(np.corrcoef([1, 1, 1, 0], [2, 1, 0, 0])[0, 1])
    assert stats.item_total_correlations([[1, 1, 1, 1], [1, 0, 1, 0]])[0] is None  # constant item


def test_mean_std():
    assert stats.mean_std([0.5, 0.7, None]) == {
        "n": 2,
        "mean": pytest.approx(0.6),
        "std": pytest.approx(math.sqrt(0.02)),
    }
    assert stats.mean_std([None]) == {"n": 0, "mean": None, "std": None}
