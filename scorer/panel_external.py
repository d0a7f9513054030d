"""The paper's Table 16: how each model's accuracy in the panel correlates with its scores on external benchmarks.

``read_external`` reads a CSV of external scores (a ``model`` column, then one column per benchmark; an empty cell
is a score not known); ``external_correlations`` pairs each benchmark's scores with the accuracy of the same model
in the panel (the mean over its full-tool runs) and reports Spearman's rho and Pearson's r with 95% intervals
(Fisher's z; for rho with Fieller, Hartley and Pearson's variance 1.06 / (n - 3)). Definitions: docs/scoring.md.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

from agenthop.scorer import stats
from agenthop.scorer.errors import ScorerError

#: Variance of atanh(rho) for Spearman's rho (Fieller, Hartley and Pearson 1957), times 1 / (n - 3).
SPEARMAN_VARIANCE = 1.06


def _bad(path, what: str) -> ScorerError:
    return ScorerError("{external} file {path}: {what}", "external", path=path, what=what)


def read_external(path: str | Path) -> dict[str, dict[str, float]]:
    """Model -> {benchmark: score}. Refuses a file without a ``model`` column, a repeated model or a cell that is
    not a number, naming the line and column."""
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
    scores: dict[str, dict[str, float]] = {}
    for line, row in enumerate(reader, start=2):
        model = (row.get("model") or "").strip()
        if not model:
            raise _bad(path, f"line {line}: empty model name.")
        if model in scores:
            raise _bad(path, f"line {line}: model {model!r} is listed twice.")
        values = {}
        for bench in header:
            if bench == "model":
                continue
            cell = (row.get(bench) or "").strip()
            if not cell:
                continue
            try:
                value = float(cell)
            except ValueError:
                raise _bad(
                    path,
                    f"line {line}, column {bench!r}: {cell!r} is not a number "
                    "(leave the cell empty for an unknown score).",
                ) from None
            if not math.isfinite(value):
                raise _bad(path, f"line {line}, column {bench!r}: {cell!r} is not a finite number.")
            values[bench] = value
        scores[model] = values
    return scores


def _interval(r: float, n: int, variance: float) -> list[float] | None:
    if n < 4 or math.isnan(r):
        return None
    if abs(r) >= 1.0:
        return [r, r]
    half = stats.Z95 * math.sqrt(variance / (n - 3))
    z = math.atanh(r)
    return [math.tanh(z - half), math.tanh(z + half)]


def correlation(xs: list[float], ys: list[float]) -> dict:
    """Spearman's rho and Pearson's r of paired values, with two-sided p and 95% intervals (None where undefined)."""
    n = len(xs)
    out = {
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
    out.update(
        spearman=rho,
        spearman_p=float(sp.pvalue),
        spearman_ci95=_interval(rho, n, SPEARMAN_VARIANCE),
        pearson=r,
        pearson_p=float(pe.pvalue),
        pearson_ci95=_interval(r, n, 1.0),
    )
    if n < 4:
        out["note"] = "intervals need four or more models"
    return out


def model_accuracy(full: list[dict]) -> dict[str, dict]:
    """Model -> its accuracy in the panel: the mean over its full-tool runs (and which runs)."""
    groups: dict[str, list[dict]] = {}
    for e in full:
        if e["model"] and e["overall"]["accuracy"] is not None:
            groups.setdefault(e["model"], []).append(e)
    return {
        m: {"accuracy": sum(e["overall"]["accuracy"] for e in runs) / len(runs), "runs": [e["name"] for e in runs]}
        for m, runs in groups.items()
    }


def external_correlations(full: list[dict], scores: dict[str, dict[str, float]] | None) -> dict:
    if scores is None:
        return {
            "missing": "the correlation with external benchmarks needs a CSV of external scores per model "
            "(agenthop-scorer panel --external FILE: a model column, then one column per benchmark)"
        }
    accuracy = model_accuracy(full)
    benchmarks = sorted({b for values in scores.values() for b in values})
    rows = []
    for bench in benchmarks:
        models = [m for m in accuracy if bench in scores.get(m, {})]
        xs = [scores[m][bench] for m in models]
        ys = [accuracy[m]["accuracy"] for m in models]
        rows.append({"benchmark": bench, "models": models, **correlation(xs, ys)})
    return {
        "rows": rows,
        "accuracy": accuracy,
        "unmatched": sorted(set(scores) - set(accuracy)),
        "without_scores": sorted(m for m in accuracy if not scores.get(m)),
    }
