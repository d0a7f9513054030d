"""The paper's analyses of a panel of runs (its Section 4 and Appendix E), from the runs' summaries alone.

``panel_entry`` keeps of one run's summary what the panel needs (so twenty runs
of 1,011 items stay small in memory); ``build_panel`` turns the entries into
the panel document (panel.json), table by table. Definitions: docs/scoring.md,
"A panel of runs". A table whose inputs are missing is present with a
``missing`` sentence saying what it needs, never with invented numbers.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

from agenthop.scorer import stats
from agenthop.scorer.audit import CONTACTS
from agenthop.scorer.comparisons import multi_run
from agenthop.scorer.gold import CELLS
from agenthop.scorer.logs import TOOLS
from agenthop.scorer.panel_closed_book import closed_book_accuracy, closed_book_by_exposure
from agenthop.scorer.panel_external import external_correlations
from agenthop.scorer.results import SCORER_VERSION, SUMMARY_SCHEMA_VERSION, slim
from agenthop.scorer.trajectory import AFTER_NONGOLD, transition_matrix

PANEL_SCHEMA_VERSION = 1

#: What a run is, for the main table (full) and the ablation table (closed_book -> no_search -> full).
ROLES = ("full", "closed_book", "no_search", "read_first", "other_ablation")
#: Main-table columns where higher is better (the ones tier leaders and the panel best are marked in).
QUALITY = ("accuracy", "paper_recall_st", "paper_recall_mt", "section_recall", "conversion_st", "conversion_mt")
MAIN_COLUMNS = QUALITY + ("calls_per_turn", "mean_tokens", "mean_turns", "mean_budget", "non_submission")
#: Terminations a non-submitted item can have, in the order of the paper's Table 15 (caps first).
NON_SUBMISSION = (
    "token_limit",
    "max_turns",
    "budget",
    "empty_response",
    "error",
    "abandoned",
    "unobservable",
    "answer",
)
BIGRAM_CANDIDATES = len(TOOLS) ** 2
ALPHA = 0.05
ITEM_KEYS = (
    "qtype",
    "cell",
    "consensus_tier",
    "correct",
    "paper_recall",
    "observed",
    "answer",
    "termination",
    "contact",
    "trajectory",
    "gold_papers",
)
UNTIERED = "all runs"


def role_of(summary: dict) -> str:
    """full, closed_book, no_search, read_first or other_ablation, from run.json (else the sessions' disabled tools)."""
    manifest = summary["run"].get("manifest") or {}
    abl = manifest.get("ablations") or {}
    disabled = set(abl.get("disabled_tools") or manifest.get("disabled_tools") or [])
    if not manifest:
        for entry in summary["sessions"]["disabled_tools"]:
            disabled |= set(entry["value"] or [])
    if abl.get("closed_book"):
        return "closed_book"
    if disabled == {"search_papers"}:
        return "no_search"
    if disabled:
        return "other_ablation"
    return "read_first" if abl.get("read_first") else "full"


def panel_entry(summary: dict, label: dict | None = None) -> dict:
    """What the panel keeps of one run's summary. ``label``: tier/model/role given for it (a --tiers file)."""
    label = label or {}
    manifest = summary["run"].get("manifest") or {}
    items = {r["item_id"]: {k: r[k] for k in ITEM_KEYS} for r in summary["item_results"]}
    return {
        "name": summary["run"]["name"],
        "tier": label.get("tier") or manifest.get("tier") or manifest.get("family"),
        "model": label.get("model") or summary["run"].get("model"),
        "role": label.get("role") or role_of(summary),
        "n": summary["items"]["n"],
        "headline": {**summary["headline"], "non_submission": summary["resources"]["pct_no_submission"]},
        "overall": summary["metrics"]["overall"],
        "by_cell": summary["metrics"]["by_cell"],
        "stopping": summary["trajectory"]["stopping"],
        "after_nongold_read": summary["trajectory"]["after_nongold_read"],
        "trigrams": summary["trajectory"]["trigrams"],
        "robustness": slim(summary),
        "items": items,
    }


def _common(entries: list[dict]) -> list[str]:
    """Item IDs every entry has, in the first entry's order."""
    if not entries:
        return []
    rest = [set(e["items"]) for e in entries[1:]]
    return [i for i in entries[0]["items"] if all(i in s for s in rest)]


def _rate(k: int, n: int) -> float | None:
    return k / n if n else None


# -- main table (Table 2) ---------------------------------------------------------------------------------


def _best(rows: list[dict], col: str) -> set[str]:
    vals = [r[col] for r in rows if r[col] is not None]
    if not vals:
        return set()
    top = max(vals)
    return {r["run"] for r in rows if r[col] is not None and r[col] == top}


def conversion_test(a: dict, b: dict, qtype: str) -> dict:
    """Exact McNemar of correctness on the items of ``qtype`` both runs recalled (paper recall 1)."""
    common = [
        i
        for i, r in a["items"].items()
        if r["qtype"] == qtype and r["paper_recall"] and i in b["items"] and b["items"][i]["paper_recall"]
    ]
    only_a = sum(1 for i in common if a["items"][i]["correct"] and not b["items"][i]["correct"])
    only_b = sum(1 for i in common if b["items"][i]["correct"] and not a["items"][i]["correct"])
    return {
        "n_common_recalled": len(common),
        "leader_only": only_a,
        "runner_up_only": only_b,
        "mcnemar_exact_p": stats.mcnemar_exact(only_a, only_b),
    }


def main_table(full: list[dict]) -> dict:
    tiers: dict[str, list[dict]] = {}
    for e in full:
        tiers.setdefault(e["tier"] or UNTIERED, []).append(e)
    rows = [
        {
            "run": e["name"],
            "tier": e["tier"] or UNTIERED,
            "model": e["model"],
            "n": e["n"],
            **{c: e["headline"][c] for c in MAIN_COLUMNS},
            "marks": {},
        }
        for e in full
    ]
    by_run = {r["run"]: r for r in rows}
    for col in QUALITY:
        if col.startswith("conversion"):
            continue  # conversion is marked only where a paired test separates leader and runner-up, below
        for run in _best(rows, col):
            by_run[run]["marks"].setdefault(col, []).append("panel_best")
    tests = []
    for tier, members in tiers.items():
        tier_rows = [by_run[e["name"]] for e in members]
        # A tier of one run is led by that run (the paper marks the best of every family); with one group, its
        # leader is the panel best, marked above.
        for col in QUALITY if len(tiers) > 1 else ():
            if col.startswith("conversion"):
                continue
            for run in _best(tier_rows, col):
                by_run[run]["marks"].setdefault(col, []).insert(0, "tier_leader")
        if len(members) < 2:
            continue  # conversion needs a runner-up to test against
        for qtype in ("ST", "MT"):
            col = f"conversion_{qtype.lower()}"
            ranked = sorted((e for e in members if e["headline"][col] is not None), key=lambda e: -e["headline"][col])
            if len(ranked) < 2:
                continue
            leader, runner_up = ranked[0], ranked[1]
            test = {
                "tier": tier,
                "qtype": qtype,
                "leader": leader["name"],
                "runner_up": runner_up["name"],
                **conversion_test(leader, runner_up, qtype),
            }
            test["separates"] = test["mcnemar_exact_p"] < ALPHA
            tests.append(test)
            if test["separates"]:
                by_run[leader["name"]]["marks"].setdefault(col, []).append("tier_leader")
    order = list(tiers)
    # Tiers in the order given; within a tier, by accuracy, best first (unmeasured last), ties in the order given.
    rows.sort(key=lambda r: (order.index(r["tier"]), r["accuracy"] is None, -(r["accuracy"] or 0)))
    for tier in order:
        tier_rows = [r for r in rows if r["tier"] == tier]
        for r in tier_rows:
            same = [o["run"] for o in tier_rows if o is not r and o["accuracy"] == r["accuracy"]]
            r["rank"] = (
                1
                + sum(
                    1
                    for o in tier_rows
                    if o["accuracy"] is not None and r["accuracy"] is not None and o["accuracy"] > r["accuracy"]
                )
                if r["accuracy"] is not None
                else None
            )
            r["tied_with"] = same
    return {
        "tiers": order,
        "rows": rows,
        "conversion_tests": tests,
        "alpha": ALPHA,
        "order": "tiers in the order given; rows by accuracy within each tier, best first; ties share a rank",
    }


# -- per-run tables -------------------------------------------------------------------------------------


def cell_accuracy(full: list[dict]) -> dict:
    """Accuracy per type x depth cell with Wilson half-widths, and each run's drop from the easiest to the hardest
    cell (easiest and hardest by accuracy pooled over the panel's full-tool runs)."""
    pooled = {}
    for c in CELLS:
        n = sum(e["by_cell"][c]["n"] for e in full)
        pooled[c] = _rate(sum(e["by_cell"][c]["correct"] for e in full), n)
    present = [c for c in CELLS if pooled[c] is not None]
    exact = {
        c: Fraction(sum(e["by_cell"][c]["correct"] for e in full), sum(e["by_cell"][c]["n"] for e in full))
        for c in present
    }
    # Ties (equal pooled accuracy, compared as exact fractions) go to the first cell in CELLS order, and are stated.
    easiest_tied = [c for c in present if exact[c] == max(exact.values())] if present else []
    hardest_tied = [c for c in present if exact[c] == min(exact.values())] if present else []
    easiest = easiest_tied[0] if present else None
    hardest = hardest_tied[0] if present else None
    rows = []
    for e in full:
        cells = {}
        for c in CELLS:
            m = e["by_cell"][c]
            ci = m["accuracy_ci95"]
            cells[c] = {"n": m["n"], "accuracy": m["accuracy"], "half_width": (ci[1] - ci[0]) / 2 if ci else None}
        a, b = (cells[easiest]["accuracy"], cells[hardest]["accuracy"]) if present else (None, None)
        rows.append({"run": e["name"], "cells": cells, "drop": a - b if a is not None and b is not None else None})
    return {
        "cells": list(CELLS),
        "pooled_accuracy": pooled,
        "easiest": easiest,
        "hardest": hardest,
        "easiest_tied": easiest_tied if len(easiest_tied) > 1 else [],
        "hardest_tied": hardest_tied if len(hardest_tied) > 1 else [],
        "tie_rule": "cells of equal pooled accuracy: the first in the order ST-d1, ST-d2, MT-d1, MT-d2",
        "rows": rows,
    }


def stopping(entries: list[dict]) -> dict:
    return {"rows": [{"run": e["name"], **e["stopping"]} for e in entries]}


def after_wrong_paper(entries: list[dict]) -> dict:
    return {"categories": list(AFTER_NONGOLD), "rows": [{"run": e["name"], **e["after_nongold_read"]} for e in entries]}


def bigram_tests(entry: dict) -> list[dict]:
    """Per bigram seen: accuracy with and without it, Fisher's exact p and its Bonferroni correction over 7 x 7."""
    fisher = stats.preload().fisher_exact
    obs = [r for r in entry["items"].values() if r["observed"]]
    sets = [set(zip(r["trajectory"], r["trajectory"][1:])) for r in obs]
    total_correct = sum(r["correct"] for r in obs)
    out = []
    for bg in sorted({bg for s in sets for bg in s}, key=lambda b: (TOOLS.index(b[0]), TOOLS.index(b[1]))):
        n_with = sum(1 for s in sets if bg in s)
        c_with = sum(r["correct"] for r, s in zip(obs, sets) if bg in s)
        n_wo, c_wo = len(obs) - n_with, total_correct - c_with
        p = float(fisher([[c_with, n_with - c_with], [c_wo, n_wo - c_wo]])[1])
        acc_wo = _rate(c_wo, n_wo)
        out.append(
            {
                "bigram": list(bg),
                "n_with": n_with,
                "correct_with": c_with,
                "n_without": n_wo,
                "correct_without": c_wo,
                "difference": c_with / n_with - acc_wo if acc_wo is not None else None,
                "fisher_p": p,
                "p_bonferroni": min(1.0, p * BIGRAM_CANDIDATES),
                "significant": p * BIGRAM_CANDIDATES < ALPHA,
            }
        )
    return out


def bigrams(full: list[dict]) -> dict:
    return {
        "candidates": BIGRAM_CANDIDATES,
        "alpha": ALPHA,
        "test": "two-sided Fisher exact, Bonferroni x 49",
        "rows": [{"run": e["name"], "bigrams": bigram_tests(e)} for e in full],
    }


def trigrams(full: list[dict]) -> dict:
    rows = []
    for e in full:
        tg = e["trigrams"]
        top = tg["most_frequent"]
        rows.append(
            {
                "run": e["name"],
                "total": tg["total"],
                "top": top["trigram"] if top else None,
                "top_count": top["count"] if top else 0,
                "concentration": top["share"] if top else None,
                "top5_share": _rate(sum(t["count"] for t in tg["top"]), tg["total"]),
            }
        )
    return {"rows": rows}


def non_submission(entries: list[dict]) -> dict:
    rows = []
    for e in entries:
        items = list(e["items"].values())
        counts = Counter(r["termination"] for r in items if r["answer"] is None)
        n = len(items)
        rows.append(
            {
                "run": e["name"],
                "n": n,
                "non_submitted": sum(counts.values()),
                "share": _rate(sum(counts.values()), n),
                "by_termination": {
                    t: {"n": counts.get(t, 0), "share": _rate(counts.get(t, 0), n)}
                    for t in NON_SUBMISSION
                    if counts.get(t) or t in NON_SUBMISSION[:3]
                },
            }
        )
    return {"terminations": list(NON_SUBMISSION), "rows": rows}


# -- pooled tables ------------------------------------------------------------------------------------------


def closed_book_partners(entries: list[dict]) -> dict[str, dict]:
    """Model name -> its closed-book run (the first given)."""
    out: dict[str, dict] = {}
    for e in entries:
        if e["role"] == "closed_book" and e["model"]:
            out.setdefault(e["model"], e)
    return out


def contact(full: list[dict], partners: dict[str, dict]) -> dict:
    """Evidence contact pooled over the full-tool runs' observed items, with closed-book accuracy on the same
    (model, item) pairs when a closed-book run of the model is in the panel."""
    rows = {c: {"n": 0, "correct": 0, "closed_book_n": 0, "closed_book_correct": 0} for c in CONTACTS}
    for e in full:
        cb = partners.get(e["model"])
        for iid, r in e["items"].items():
            if r["contact"] is None:
                continue
            row = rows[r["contact"]]
            row["n"] += 1
            row["correct"] += r["correct"]
            if cb is not None and iid in cb["items"]:
                row["closed_book_n"] += 1
                row["closed_book_correct"] += cb["items"][iid]["correct"]
    total = sum(r["n"] for r in rows.values())
    for r in rows.values():
        r["share"] = _rate(r["n"], total)
        r["accuracy"] = _rate(r["correct"], r["n"])
        r["closed_book_accuracy"] = _rate(r["closed_book_correct"], r["closed_book_n"])
    out = {"n": total, "runs": len(full), "rows": rows}
    without = sorted({e["model"] or e["name"] for e in full if e["model"] not in partners})
    if without:
        out["missing"] = (
            "closed-book accuracy needs a closed-book run of the same model (run.json ablations, or "
            f"role closed_book in the tiers file) for: {', '.join(without)}"
        )
    return out


def difficulty(full: list[dict]) -> dict:
    """Items by how many full-tool runs answered them, in thirds of the number of runs, by cell and by tier."""
    common = _common(full)
    n_runs = len(full)
    if n_runs < 2 or not common:
        return {
            "n_runs": n_runs,
            "n_items": len(common),
            "missing": "item difficulty needs two or more full-tool runs sharing items",
        }
    first = full[0]["items"]
    coverage = {i: sum(e["items"][i]["correct"] for e in full) for i in common}

    def band(k: int) -> str:
        return "low" if 3 * k < n_runs else "high" if 3 * k > 2 * n_runs else "mid"

    def table(key: str, order) -> dict:
        groups: dict = {}
        for i in common:
            g = first[i][key] or "unknown"
            groups.setdefault(g, Counter())[band(coverage[i])] += 1
        keys = [k for k in order if k in groups] + sorted(k for k in groups if k not in order)
        return {k: {b: groups[k].get(b, 0) for b in ("low", "mid", "high")} for k in keys}

    hist = Counter(coverage.values())
    return {
        "n_runs": n_runs,
        "n_items": len(common),
        "bands": {
            "low": f"answered by fewer than a third of the {n_runs} runs",
            "mid": "the rest",
            "high": "answered by more than two thirds of them",
        },
        "by_cell": table("cell", CELLS),
        "by_tier": table("consensus_tier", ("gold", "silver", "bronze")),
        "histogram": [hist.get(k, 0) for k in range(n_runs + 1)],
        "per_item": coverage,
    }


def transitions(full: list[dict]) -> dict:
    return {
        "tools": list(TOOLS),
        "rows": [
            {"run": e["name"], **transition_matrix([r["trajectory"] for r in e["items"].values() if r["observed"]])}
            for e in full
        ],
    }


def accuracy_vs_recall(full: list[dict]) -> dict:
    return {
        "rows": [
            {"run": e["name"], "paper_recall": e["overall"]["paper_recall"], "accuracy": e["overall"]["accuracy"]}
            for e in full
        ]
    }


def _paired(a: dict, b: dict, seed: int, resamples: int) -> dict:
    """b - a on the items both runs have: accuracies, gains/losses, exact McNemar, paired bootstrap."""
    common = [i for i in a["items"] if i in b["items"]]
    ca = [a["items"][i]["correct"] for i in common]
    cb = [b["items"][i]["correct"] for i in common]
    gains = sum(1 for x, y in zip(ca, cb) if y and not x)
    losses = sum(1 for x, y in zip(ca, cb) if x and not y)
    boot = stats.paired_bootstrap(ca, cb, resamples=resamples, seed=seed)
    return {
        "from": a["name"],
        "to": b["name"],
        "n_common": len(common),
        "accuracy_from": _rate(sum(ca), len(ca)),
        "accuracy_to": _rate(sum(cb), len(cb)),
        "lift": boot["diff"],
        "gains": gains,
        "losses": losses,
        "mcnemar_exact_p": stats.mcnemar_exact(gains, losses),
        "bootstrap_ci95": boot["ci95"],
    }


def ablation(entries: list[dict], seed: int = 0, resamples: int = 10000) -> dict:
    """Per model with ablation runs: closed-book -> no-search (lift from tools) -> full (further lift from search)."""
    models: dict[str, dict[str, dict]] = {}
    for e in entries:
        if e["role"] in ("closed_book", "no_search", "full") and e["model"]:
            models.setdefault(e["model"], {}).setdefault(e["role"], e)
    rows = []
    for model, runs in models.items():
        if set(runs) == {"full"}:
            continue
        row = {
            "model": model,
            **{r: runs[r]["name"] if r in runs else None for r in ("closed_book", "no_search", "full")},
            "accuracy": {r: runs[r]["overall"]["accuracy"] for r in runs},
            "missing": [],
        }
        for key, a, b in (("tools", "closed_book", "no_search"), ("search", "no_search", "full")):
            if a in runs and b in runs:
                row[f"lift_{key}"] = _paired(runs[a], runs[b], seed, resamples)
            else:
                row[f"lift_{key}"] = None
                need = " and ".join(r.replace("_", "-") for r in (a, b) if r not in runs)
                row["missing"].append(
                    f"the lift from {'tools' if key == 'tools' else 'keyword search'} needs a {need} run of {model}"
                )
        rows.append(row)
    out = {"rows": rows, "seed": seed, "resamples": resamples}
    if not rows:
        out["missing"] = (
            "the ablation table needs closed-book and no-search runs of a model beside its full-tool run "
            "(agenthop-runner --closed-book, --disable-tools search_papers), with the same model name"
        )
    return out


#: The columns of the per-replicate table (the paper's Table 17): the main table's quality columns and non-submission.
REPLICATE_COLUMNS = QUALITY + ("non_submission",)


def replicates(full: list[dict]) -> dict:
    """Models with two or more full-tool runs: one row per run (replicate), then mean, standard deviation (n - 1)
    and range of each column over the model's runs."""
    groups: dict[str, list[dict]] = {}
    for e in full:
        if e["model"]:
            groups.setdefault(e["model"], []).append(e)
    models = []
    for model, runs in groups.items():
        if len(runs) < 2:
            continue
        rows = [{"run": e["name"], "n": e["n"], **{c: e["headline"][c] for c in REPLICATE_COLUMNS}} for e in runs]
        spread = {}
        for c in REPLICATE_COLUMNS:
            values = [r[c] for r in rows if r[c] is not None]
            spread[c] = {
                **stats.mean_std(values),
                "min": min(values) if values else None,
                "max": max(values) if values else None,
            }
        models.append({"model": model, "rows": rows, "spread": spread})
    out = {"columns": list(REPLICATE_COLUMNS), "models": models}
    if not models:
        out["missing"] = (
            "per-replicate rows need two or more full-tool runs of one model (the same model name in "
            "run.json or the tiers file)"
        )
    return out


def robustness(full: list[dict]) -> dict | None:
    return multi_run([e["robustness"] for e in full]) if len(full) > 1 else None


def build_panel(
    entries: list[dict],
    corpus: dict,
    *,
    seed: int = 0,
    resamples: int = 10000,
    external: dict[str, dict[str, float]] | None = None,
) -> dict:
    """The panel document (panel.json) from the runs' entries (``panel_entry``), in the order given.

    ``external``: model -> {benchmark: score} (panel_external.read_external), for the correlation table.
    """
    full = [e for e in entries if e["role"] == "full"]
    partners = closed_book_partners(entries)
    panel = {
        "schema_version": PANEL_SCHEMA_VERSION,
        "summary_schema_version": SUMMARY_SCHEMA_VERSION,
        "scorer_version": SCORER_VERSION,
        "corpus": corpus,
        "runs": [
            {"run": e["name"], "tier": e["tier"], "model": e["model"], "role": e["role"], "n": e["n"]} for e in entries
        ],
        "main_table": main_table(full),
        "stopping": stopping(full),
        "cell_accuracy": cell_accuracy(full),
        "ablation": ablation(entries, seed, resamples),
        "difficulty": difficulty(full),
        "bigrams": bigrams(full),
        "trigrams": trigrams(full),
        "non_submission": non_submission(entries),
        "contact": contact(full, partners),
        "after_wrong_paper": after_wrong_paper(full),
        "accuracy_vs_recall": accuracy_vs_recall(full),
        "transitions": transitions(full),
        "robustness": robustness(full),
        "replicates": replicates(full),
        "closed_book": closed_book_accuracy(entries, full),
        "closed_book_by_exposure": closed_book_by_exposure(full, partners),
        "external": external_correlations(full, external),
    }
    if not full:
        panel["missing"] = "no full-tool run: the main table and the per-run analyses need at least one"
    return panel


__all__ = ["PANEL_SCHEMA_VERSION", "ROLES", "build_panel", "panel_entry", "role_of"]
