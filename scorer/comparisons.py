"""Comparisons: two runs on the same items, and many runs (reliability, replicates)."""

from __future__ import annotations

from itertools import combinations

import numpy as np

from agenthop.scorer import stats
from agenthop.scorer.audit import CATEGORIES
from agenthop.scorer.results import SCORER_VERSION, SUMMARY_SCHEMA_VERSION
from agenthop.scorer.summary import HEADLINE_KEYS

COMPARISON_SCHEMA_VERSION = 1


def _items(summary: dict) -> dict[str, dict]:
    return {r["item_id"]: r for r in summary["item_results"]}


def compare_pair(a: dict, b: dict, *, seed: int = 0, resamples: int = 10000) -> dict:
    """Paired comparison of run B against run A on the items both runs have."""
    ia, ib = _items(a), _items(b)
    common = [i for i in ia if i in ib]
    ca = np.array([ia[i]["correct"] for i in common], dtype=int)
    cb = np.array([ib[i]["correct"] for i in common], dtype=int)
    gains = int(((cb == 1) & (ca == 0)).sum())
    losses = int(((cb == 0) & (ca == 1)).sum())
    clusters = [tuple(sorted(ia[i]["gold_papers"])) for i in common]
    table = {ra: {rb: 0 for rb in CATEGORIES} for ra in CATEGORIES}
    for i in common:
        table[ia[i]["audit"]][ib[i]["audit"]] += 1
    n = len(common)
    return {
        "schema_version": COMPARISON_SCHEMA_VERSION,
        "scorer_version": SCORER_VERSION,
        "run_a": a["run"]["name"],
        "run_b": b["run"]["name"],
        "n_common": n,
        "only_in_a": sorted(set(ia) - set(ib)),
        "only_in_b": sorted(set(ib) - set(ia)),
        "accuracy_a": float(ca.mean()) if n else None,
        "accuracy_b": float(cb.mean()) if n else None,
        "difference": float(cb.mean() - ca.mean()) if n else None,
        "both_correct": int(((ca == 1) & (cb == 1)).sum()),
        "both_wrong": int(((ca == 0) & (cb == 0)).sum()),
        "gains": gains,
        "losses": losses,
        "mcnemar_exact_p": stats.mcnemar_exact(gains, losses),
        "bootstrap_items": stats.paired_bootstrap(ca, cb, resamples=resamples, seed=seed),
        "bootstrap_clusters": stats.cluster_bootstrap(ca, cb, clusters, resamples=resamples, seed=seed),
        "cluster_definition": "items sharing the same set of gold paper IDs",
        "audit_transitions": {"rows": "run_a", "columns": "run_b", "table": table},
    }


def flat_metrics(summary: dict) -> dict[str, float | None]:
    """Every scalar metric of a summary, flattened (headline plus per-type and per-cell rates)."""
    out = dict(summary["headline"])
    for group in ("by_type", "by_cell"):
        for key, m in summary["metrics"][group].items():
            for metric in ("accuracy", "paper_recall", "section_recall", "conversion"):
                out[f"{key}.{metric}"] = m.get(metric)
    out["exposure.share_inspected"] = summary["exposure"]["share_inspected"]
    for cat, share in summary["audit"]["shares"].items():
        out[f"audit.{cat}"] = share
    return out


def replicate_groups(summaries: list[dict], all_replicates: bool) -> dict[str, list[int]]:
    if all_replicates:
        return {"all runs": list(range(len(summaries)))} if len(summaries) > 1 else {}
    groups: dict[str, list[int]] = {}
    for n, s in enumerate(summaries):
        root = s["run"].get("replicate_of") or s["run"]["name"]
        groups.setdefault(root, []).append(n)
    return {k: v for k, v in groups.items() if len(v) > 1}


def multi_run(summaries: list[dict], *, all_replicates: bool = False) -> dict:
    names = [s["run"]["name"] for s in summaries]
    rows = [
        {
            "run": s["run"]["name"],
            "n": s["items"]["n"],
            "paper_recall": s["metrics"]["overall"]["paper_recall"],
            **{k: s["headline"][k] for k in HEADLINE_KEYS},
        }
        for s in summaries
    ]
    maps = [_items(s) for s in summaries]
    common = [i for i in maps[0] if all(i in m for m in maps[1:])] if maps else []
    matrix = np.array([[m[i]["correct"] for m in maps] for i in common], dtype=float).reshape(len(common), len(maps))
    itc = stats.item_total_correlations(matrix) if len(common) else []
    itc_vals = [v for v in itc if v is not None]
    lowest = sorted(((v, i) for v, i in zip(itc, common) if v is not None))[:10]
    pairs = []
    for x, y in combinations(range(len(summaries)), 2):
        a = np.array([maps[x][i]["correct"] for i in common])
        b = np.array([maps[y][i]["correct"] for i in common])
        g, l_ = int(((b == 1) & (a == 0)).sum()), int(((b == 0) & (a == 1)).sum())
        pairs.append(
            {
                "run_a": names[x],
                "run_b": names[y],
                "difference": float(b.mean() - a.mean()) if len(common) else None,
                "gains": g,
                "losses": l_,
                "mcnemar_exact_p": stats.mcnemar_exact(g, l_),
            }
        )
    groups = replicate_groups(summaries, all_replicates)
    replicates = {}
    for root, idx in groups.items():
        flats = [flat_metrics(summaries[n]) for n in idx]
        keys = list(flats[0])
        replicates[root] = {
            "runs": [names[n] for n in idx],
            "metrics": {k: stats.mean_std([f.get(k) for f in flats]) for k in keys},
        }
    return {
        "schema_version": COMPARISON_SCHEMA_VERSION,
        "summary_schema_version": SUMMARY_SCHEMA_VERSION,
        "scorer_version": SCORER_VERSION,
        "runs": rows,
        "reliability": {
            "n_items": len(common),
            "n_runs": len(maps),
            "cronbach_alpha": stats.cronbach_alpha(matrix) if len(common) else None,
            "item_total_correlation": {
                "n_defined": len(itc_vals),
                "mean": float(np.mean(itc_vals)) if itc_vals else None,
                "median": float(np.median(itc_vals)) if itc_vals else None,
                "n_negative": sum(1 for v in itc_vals if v < 0),
                "lowest": [{"item_id": i, "r": v} for v, i in lowest],
                "per_item": dict(zip(common, itc)),
            },
        },
        "pairwise": pairs,
        "replicates": replicates,
    }
