"""The paper's Table 16: each model's scores on external benchmarks beside its AgentHop accuracy, and the Spearman
correlation of each benchmark with that accuracy.

``read_external`` reads a CSV of external scores (a ``model`` column, then one column per benchmark, kept in the
file's order; an empty cell, ``-`` or ``—`` is a score not known; a score may end in ``*`` (a proxy from a sibling
checkpoint) or ``†`` (a context-managed variant), marks kept for the grid). ``external_correlations`` lays out the
grid (models grouped by tier and ranked by accuracy, the accuracy being the Table 2 run's) and gives, per benchmark,
Spearman's rho with its n, the paper's figures; Pearson's r, two-sided p and 95% intervals (Fisher's z; for rho the
variance 1.06 / (n - 3) of Fieller, Hartley and Pearson) are additions. Definitions: docs/scoring.md.
"""

from __future__ import annotations

import csv
import itertools
import math
from pathlib import Path
from typing import Any

from agenthop.scorer import stats
from agenthop.scorer.errors import ScorerError

#: Variance of atanh(rho) for Spearman's rho (Fieller, Hartley and Pearson 1957), times 1 / (n - 3).
SPEARMAN_VARIANCE = 1.06


def _bad(path, what: str) -> ScorerError:
    return ScorerError("{external} file {path}: {what}", "external", path=path, what=what)


#: Marks a score can carry, as the paper's Table 16 prints them (``∗`` is accepted for ``*``).
MARKS = {"*": "proxy", "∗": "proxy", "†": "context_managed"}
#: Cells that mean "no score known" besides an empty one.
UNKNOWN = ("-", "—", "–")


def read_external(path: str | Path) -> dict:
    """{"benchmarks": [in the file's order], "scores": model -> {benchmark: score}, "marks": model -> {benchmark:
    proxy | context_managed}}. Refuses a file without a ``model`` column, a repeated model or a cell that is not a
    number (with at most one mark), naming the line and column."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise _bad(path, f"cannot be read ({exc}).") from exc
    reader = csv.DictReader(text.splitlines())
    header = reader.fieldnames or []
    if "model" not in header or len(header) < 2:
        raise _bad(
            path,
            "the CSV header must name a 'model' column and at least one benchmark column "
            "(model,benchmark_a,benchmark_b,...).",
        )
    benchmarks = [b for b in header if b != "model"]
    scores: dict[str, dict[str, float]] = {}
    marks: dict[str, dict[str, str]] = {}
    for line, row in enumerate(reader, start=2):
        model = (row.get("model") or "").strip()
        if not model:
            raise _bad(path, f"line {line}: empty model name.")
        if model in scores:
            raise _bad(path, f"line {line}: model {model!r} is listed twice.")
        values, marked = {}, {}
        for bench in benchmarks:
            cell = (row.get(bench) or "").strip()
            if not cell or cell in UNKNOWN:
                continue
            number = cell[:-1].strip() if cell[-1] in MARKS else cell
            try:
                value = float(number)
            except ValueError:
                raise _bad(
                    path,
                    f"line {line}, column {bench!r}: {cell!r} is not a number (a score may end in * for a proxy or "
                    "† for a context-managed variant; leave the cell empty for an unknown score).",
                ) from None
            if not math.isfinite(value):
                raise _bad(path, f"line {line}, column {bench!r}: {cell!r} is not a finite number.")
            values[bench] = value
            if cell[-1] in MARKS:
                marked[bench] = MARKS[cell[-1]]
        scores[model] = values
        marks[model] = marked
    return {"benchmarks": benchmarks, "scores": scores, "marks": marks}


#: Up to this many models, Spearman's p is exact (every permutation); above, scipy's t approximation.
EXACT_SPEARMAN_MAX_N = 8


def _ranks(xs: list[float]) -> list[float]:
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    ranks = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def _pearson(xs: list[float], ys: list[float]) -> float:
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    return sxy / math.sqrt(sum((x - mx) ** 2 for x in xs) * sum((y - my) ** 2 for y in ys))


def spearman_exact_p(xs: list[float], ys: list[float]) -> float:
    """Two-sided permutation p of Spearman's rho: the share of the n! orderings of y whose |rho| is at least the
    observed one (ties take average ranks)."""
    rx, ry = _ranks(xs), _ranks(ys)
    observed = abs(_pearson(rx, ry))
    hits = total = 0
    for perm in itertools.permutations(ry):
        total += 1
        hits += abs(_pearson(rx, list(perm))) >= observed - 1e-12
    return hits / total


def _interval(r: float, n: int, variance: float) -> list[float] | None:
    if n < 4 or math.isnan(r):
        return None
    if abs(r) >= 1.0:
        return None  # atanh(+-1) is infinite: Fisher's z gives no interval
    half = stats.Z95 * math.sqrt(variance / (n - 3))
    z = math.atanh(r)
    return [math.tanh(z - half), math.tanh(z + half)]


def correlation(xs: list[float], ys: list[float]) -> dict:
    """Spearman's rho and Pearson's r of paired values, with two-sided p and 95% intervals (None where undefined)."""
    n = len(xs)
    out: dict[str, Any] = {
        "n": n,
        "spearman": None,
        "spearman_p": None,
        "spearman_ci95": None,
        "pearson": None,
        "pearson_p": None,
        "pearson_ci95": None,
    }
    if n < 3:
        out["missing"] = f"a correlation needs three or more models with both scores, got {n}"
        return out
    if len(set(xs)) < 2 or len(set(ys)) < 2:
        out["missing"] = "one of the two score lists is constant, so no correlation is defined"
        return out
    sp = stats.preload().spearmanr(xs, ys)
    pe = stats.preload().pearsonr(xs, ys)
    rho, r = float(sp.statistic), float(pe.statistic)
    exact = n <= EXACT_SPEARMAN_MAX_N
    out.update(
        spearman=rho,
        spearman_p=spearman_exact_p(xs, ys) if exact else float(sp.pvalue),
        spearman_p_method="exact permutation" if exact else "t approximation (scipy)",
        spearman_ci95=_interval(rho, n, SPEARMAN_VARIANCE),
        pearson=r,
        pearson_p=float(pe.pvalue),
        pearson_ci95=_interval(r, n, 1.0),
    )
    if n < 4:
        out["note"] = "intervals need four or more models"
    elif abs(rho) >= 1.0 or abs(r) >= 1.0:
        out["note"] = "no interval where the coefficient is +-1 (Fisher's z is infinite)"
    return out


def external_correlations(run0: list[dict], external: dict | None, tiers: list[str] | None = None) -> dict:
    """The grid and the correlations over the Run 0s (``run0``: the runs Table 2 shows, one per model)."""
    if external is None:
        return {
            "missing": "the correlation with external benchmarks needs a CSV of external scores per model "
            "(agenthop-scorer panel --external FILE: a model column, then one column per benchmark)"
        }
    if "benchmarks" not in external:  # a plain model -> {benchmark: score} mapping
        external = {
            "benchmarks": list(dict.fromkeys(b for v in external.values() for b in v)),
            "scores": external,
            "marks": {},
        }
    scores, marks = external["scores"], external["marks"]
    tiers = tiers or []
    table2 = {e["model"]: e for e in run0 if e["model"] and e["overall"]["accuracy"] is not None}
    accuracy = {
        m: {"accuracy": e["overall"]["accuracy"], "run": e["name"], "tier": e["tier"]} for m, e in table2.items()
    }
    rows = []
    for bench in external["benchmarks"]:
        models = [m for m in accuracy if bench in scores.get(m, {})]
        xs = [scores[m][bench] for m in models]
        ys = [accuracy[m]["accuracy"] for m in models]
        rows.append(
            {
                "benchmark": bench,
                "models": models,
                "proxies": sum(1 for m in models if marks.get(m, {}).get(bench) == "proxy"),
                **correlation(xs, ys),
            }
        )
    position = {m: i for i, m in enumerate(accuracy)}
    ordered = sorted(
        accuracy,
        key=lambda m: (
            tiers.index(accuracy[m]["tier"] or "all runs") if (accuracy[m]["tier"] or "all runs") in tiers else 0,
            -accuracy[m]["accuracy"],
            position[m],
        ),
    )
    grid = [
        {
            "model": m,
            "tier": accuracy[m]["tier"] or "all runs",
            "run": accuracy[m]["run"],
            "accuracy": accuracy[m]["accuracy"],
            "scores": {b: scores.get(m, {}).get(b) for b in external["benchmarks"]},
            "marks": {b: marks.get(m, {}).get(b) for b in external["benchmarks"] if marks.get(m, {}).get(b)},
        }
        for m in ordered
    ]
    return {
        "benchmarks": list(external["benchmarks"]),
        "grid": grid,
        "rows": rows,
        "accuracy": accuracy,
        "unmatched": sorted(set(scores) - set(accuracy)),
        "without_scores": sorted(m for m in accuracy if not scores.get(m)),
    }
