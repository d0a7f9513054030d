"""The paper's analyses of a panel of runs (its Section 4 and Appendix E), from the runs' summaries alone.

``panel_entry`` keeps of one run's summary what the panel needs (so twenty runs
of 1,011 items stay small in memory); ``build_panel`` turns the entries into
the panel document (panel.json), table by table. Definitions: docs/scoring.md,
"A panel of runs". A table whose inputs are missing is present with a
``missing`` sentence saying what it needs, never with invented numbers.
"""

from __future__ import annotations

import json
from collections import Counter
from fractions import Fraction
from typing import Any, NotRequired, TypedDict

from agenthop.scorer import stats
from agenthop.scorer.audit import CONTACTS
from agenthop.scorer.comparisons import multi_run
from agenthop.scorer.document import participants
from agenthop.scorer.gold import CELLS
from agenthop.scorer.logs import TOOLS
from agenthop.scorer.panel_closed_book import closed_book_accuracy, closed_book_by_exposure, label_groups
from agenthop.scorer.panel_external import external_correlations
from agenthop.scorer.panel_runs import model_key, split_runs
from agenthop.scorer.panel_strata import closed_book_strata
from agenthop.scorer.panel_trajectories import panel_bigrams, transitions, trigrams_by_tier
from agenthop.scorer.results import SCORER_VERSION, SUMMARY_SCHEMA_VERSION, slim
from agenthop.scorer.trajectory import AFTER_NONGOLD

PANEL_SCHEMA_VERSION = 2

#: What a run is, for the main table (full) and the ablation table (closed_book -> no_search -> full).
ROLES = ("full", "closed_book", "no_search", "read_first", "other_ablation")
#: Main-table columns where higher is better (the ones tier leaders and the panel best are marked in).
QUALITY = (
    "accuracy",
    "paper_recall_st",
    "paper_recall_mt",
    "section_recall_st",
    "section_recall_mt",
    "conversion_st",
    "conversion_mt",
)
#: The paper's Table 2 columns, in its order (failure ratios: share of items ended by each cap), then additions.
MAIN_COLUMNS = (
    "paper_recall_st",
    "paper_recall_mt",
    "section_recall_st",
    "section_recall_mt",
    "conversion_st",
    "conversion_mt",
    "calls_per_turn",
    "mean_tokens",
    "mean_turns",
    "mean_budget",
    "pct_token_cap",
    "pct_turn_cap",
    "pct_budget",
    "accuracy",
)
#: Columns the paper's Table 2 does not have, kept after its own.
MAIN_ADDITIONS = ("section_recall", "non_submission")
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
#: Item-row fields added after summary schema 2 was first written; older summaries lack them (None).
NEW_ITEM_KEYS = ("venue", "seed_year", "gold_citations", "label_match")
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


def people_tier(summary: dict) -> str | None:
    """'people' for a run of people's attempts on /play (the panel then sets them beside the model tiers)."""
    return "people" if participants(summary) else None


def panel_entry(summary: dict, label: dict | None = None) -> dict:
    """What the panel keeps of one run's summary. ``label``: tier/model/role given for it (a --tiers file)."""
    label = label or {}
    manifest = summary["run"].get("manifest") or {}
    items = {
        r["item_id"]: {**{k: r[k] for k in ITEM_KEYS}, **{k: r.get(k) for k in NEW_ITEM_KEYS}}
        for r in summary["item_results"]
    }
    by_type = summary["metrics"]["by_type"]
    sessions = summary["sessions"]
    return {
        "name": summary["run"]["name"],
        "tier": label.get("tier") or manifest.get("tier") or manifest.get("family") or people_tier(summary),
        "family": label.get("family") or manifest.get("family"),
        "model": label.get("model") or summary["run"].get("model"),
        "role": label.get("role") or role_of(summary),
        "agent": manifest.get("agent"),
        "replicate_of": summary["run"].get("replicate_of") or manifest.get("replicate_of"),
        "caps": sorted((c["value"] for c in sessions["caps"]), key=json.dumps),
        "disabled_tools": sorted((d["value"] for d in sessions["disabled_tools"]), key=json.dumps),
        "search": sorted((x["value"] for x in sessions["search"]), key=json.dumps),
        "n": summary["items"]["n"],
        "headline": {
            **summary["headline"],
            "section_recall_st": by_type.get("ST", {}).get("section_recall"),
            "section_recall_mt": by_type.get("MT", {}).get("section_recall"),
            "non_submission": summary["resources"]["pct_no_submission"],
        },
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


def family_order(rows: list[dict]) -> list[dict]:
    """The paper's Table 2 order: tiers in the order given; inside a tier, families by their best accuracy, best
    first; inside a family, runs by accuracy, best first. Unmeasured accuracy goes last; ties keep the order given.
    A run without a family is a family of its own."""
    tiers = list(dict.fromkeys(r["tier"] for r in rows))

    def acc(r):
        return -1.0 if r["accuracy"] is None else r["accuracy"]

    best: dict[tuple, float] = {}
    for r in rows:
        key = (r["tier"], r["family_key"])
        best[key] = max(best.get(key, -1.0), acc(r))
    first_seen: dict[tuple, int] = {}
    for i, r in enumerate(rows):
        first_seen.setdefault((r["tier"], r["family_key"]), i)
    position = {id(r): i for i, r in enumerate(rows)}
    return sorted(
        rows,
        key=lambda r: (
            tiers.index(r["tier"]),
            -best[(r["tier"], r["family_key"])],
            first_seen[(r["tier"], r["family_key"])],
            -acc(r),
            position[id(r)],
        ),
    )


def _rank(rows: list[dict], r: dict) -> int | None:
    if r["accuracy"] is None:
        return None
    return 1 + sum(1 for o in rows if o["accuracy"] is not None and o["accuracy"] > r["accuracy"])


def mt_conversion_walk(run0: list[dict], top: int = 6) -> list[dict]:
    """The paper's Table 12, top panel: adjacent pairs among the ``top`` highest multi-target conversions, each an
    exact McNemar test on the multi-target items both runs recalled."""
    ranked = sorted(
        (e for e in run0 if e["headline"]["conversion_mt"] is not None), key=lambda e: -e["headline"]["conversion_mt"]
    )[:top]
    out = []
    for a, b in zip(ranked, ranked[1:]):
        test = {"qtype": "MT", "higher": a["name"], "lower": b["name"], **conversion_test(a, b, "MT")}
        test["higher_only"], test["lower_only"] = test.pop("leader_only"), test.pop("runner_up_only")
        out.append(test)
    return out


def main_table(full: list[dict], set_aside: list[dict] | None = None) -> dict:
    """The paper's Table 2 over each model's Run 0 and the runs set aside as no replicate of it (``full``)."""
    aside = {x["run"]: x for x in set_aside or []}
    tiers: dict[str, list[dict]] = {}
    for e in full:
        tiers.setdefault(e["tier"] or UNTIERED, []).append(e)
    rows = [
        {
            "run": e["name"],
            "tier": e["tier"] or UNTIERED,
            "family": e.get("family"),
            "family_key": e.get("family") or f"run:{e['name']}",
            "model": e["model"],
            "run0": e["name"] not in aside,
            "n": e["n"],
            **{c: e["headline"].get(c) for c in MAIN_COLUMNS + MAIN_ADDITIONS},
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
        # The paper highlights each tier's leader; with one group its leader is the panel best, marked above.
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
    rows = family_order(rows)
    for r in rows:
        tier_rows = [o for o in rows if o["tier"] == r["tier"]]
        family_rows = [o for o in tier_rows if o["family_key"] == r["family_key"]]
        r["rank"] = _rank(tier_rows, r)
        r["family_rank"] = _rank(family_rows, r)
        r["tied_with"] = [o["run"] for o in tier_rows if o is not r and o["accuracy"] == r["accuracy"]]
    for r in rows:
        del r["family_key"]
    return {
        "tiers": order,
        "columns": list(MAIN_COLUMNS),
        "additions": list(MAIN_ADDITIONS),
        "rows": rows,
        "conversion_tests": tests,
        "mt_conversion_walk": mt_conversion_walk(full),
        "alpha": ALPHA,
        "set_aside": set_aside or [],
        "order": "tiers in the order given; inside a tier, families by their best accuracy, best first; inside a "
        "family, runs by accuracy, best first (a run without a family is a family of its own); ties keep the "
        "order given",
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
        a, b = (
            (cells[easiest]["accuracy"], cells[hardest]["accuracy"])
            if easiest is not None and hardest is not None  # both are there when any cell is
            else (None, None)
        )
        st1, mt2 = cells["ST-d1"]["accuracy"], cells["MT-d2"]["accuracy"]
        rows.append(
            {
                "run": e["name"],
                "cells": cells,
                # The paper's column is always ST-d1 - MT-d2; the drop between the panel's easiest and hardest
                # cells is an addition.
                "drop": st1 - mt2 if st1 is not None and mt2 is not None else None,
                "drop_easiest_hardest": a - b if a is not None and b is not None else None,
            }
        )
    return {
        "cells": list(CELLS),
        "pooled_accuracy": pooled,
        "easiest": easiest,
        "hardest": hardest,
        "easiest_tied": easiest_tied if len(easiest_tied) > 1 else [],
        "hardest_tied": hardest_tied if len(hardest_tied) > 1 else [],
        "tie_rule": "cells of equal pooled accuracy: the first in the order ST-d1, ST-d2, MT-d1, MT-d2",
        "drop_cells": ["ST-d1", "MT-d2"],
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


class ContactRow(TypedDict):
    """One evidence-contact row: counts first, then the rates computed from them."""

    n: int
    correct: int
    closed_book_n: int
    closed_book_correct: int
    share: NotRequired[float | None]
    accuracy: NotRequired[float | None]
    closed_book_accuracy: NotRequired[float | None]


def contact(full: list[dict], partners: dict[str, dict]) -> dict:
    """Evidence contact pooled over the full-tool runs' observed items, with closed-book accuracy on the same
    (model, item) pairs when a closed-book run of the model is in the panel."""
    rows: dict[str, ContactRow] = {
        c: {"n": 0, "correct": 0, "closed_book_n": 0, "closed_book_correct": 0} for c in CONTACTS
    }
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
        missing: list[str] = []
        row: dict[str, Any] = {
            "model": model,
            **{r: runs[r]["name"] if r in runs else None for r in ("closed_book", "no_search", "full")},
            "accuracy": {r: runs[r]["overall"]["accuracy"] for r in runs},
            "missing": missing,
        }
        for key, a, b in (("tools", "closed_book", "no_search"), ("search", "no_search", "full")):
            if a in runs and b in runs:
                row[f"lift_{key}"] = _paired(runs[a], runs[b], seed, resamples)
            else:
                row[f"lift_{key}"] = None
                need = " and ".join(r.replace("_", "-") for r in (a, b) if r not in runs)
                missing.append(
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


#: The paper's Table 17 metrics (tokens in thousands), then the project's additions.
REPLICATE_COLUMNS = ("accuracy", "section_recall", "conversion", "tokens_k")
REPLICATE_ADDITIONS = ("paper_recall_st", "paper_recall_mt", "conversion_st", "conversion_mt", "non_submission")


def _replicate_values(e: dict) -> dict:
    tokens = e["headline"]["mean_tokens"]
    return {
        "accuracy": e["overall"]["accuracy"],
        "section_recall": e["overall"]["section_recall"],
        "conversion": e["overall"]["conversion"],
        "tokens_k": None if tokens is None else tokens / 1000,
        **{c: e["headline"][c] for c in REPLICATE_ADDITIONS},
    }


def spread(values: list[float | None]) -> dict:
    """Mean, population standard deviation and range (max - min), the paper's; the sample sd (n - 1) is an
    addition. Undefined (None) without values; the sds also with one value (a spread needs two)."""
    vals = [v for v in values if v is not None]
    if not vals:
        return {"n": 0, "mean": None, "std": None, "range": None, "sample_std": None, "min": None, "max": None}
    mean = sum(vals) / len(vals)
    several = len(vals) > 1
    return {
        "n": len(vals),
        "mean": mean,
        "std": (sum((v - mean) ** 2 for v in vals) / len(vals)) ** 0.5 if several else None,
        "range": max(vals) - min(vals) if several else None,
        "sample_std": stats.mean_std(vals)["std"],
        "min": min(vals),
        "max": max(vals),
    }


def replicates(split: dict) -> dict:
    """The paper's Table 17: each model with replicates of its Run 0 (same items, caps and protocol; others are set
    aside with the reason), one row per run (Run 0 first), then mean, population sd and range of each metric."""
    models = []
    for run0 in split["run0"]:
        reps = split["replicates"].get(model_key(run0), [])
        if not reps:
            continue
        runs = [run0, *reps]
        rows = [
            {"run": e["name"], "label": f"Run {i}", "n": e["n"], **_replicate_values(e)} for i, e in enumerate(runs)
        ]
        models.append(
            {
                "model": model_key(run0),
                "rows": rows,
                "spread": {c: spread([r[c] for r in rows]) for c in REPLICATE_COLUMNS + REPLICATE_ADDITIONS},
            }
        )
    out = {
        "columns": list(REPLICATE_COLUMNS),
        "additions": list(REPLICATE_ADDITIONS),
        "models": models,
        "set_aside": split["set_aside"],
    }
    if not models:
        out["missing"] = (
            "per-replicate rows need two or more full-tool runs of one model (the same model name in run.json or the "
            "tiers file) on the same items with the same caps and protocol"
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
    external: dict | None = None,
) -> dict:
    """The panel document (panel.json) from the runs' entries (``panel_entry``), in the order given.

    ``external``: panel_external.read_external's scores (or a plain model -> {benchmark: score}), for Table 16.
    Each model's Run 0 (panel_runs.split_runs) is the run of the model that Table 2 and every per-run table show,
    beside any run of the model that is no replicate of it; its checked replicates appear in Table 17 only.
    """
    full = [e for e in entries if e["role"] == "full"]
    split = split_runs(full)
    run0 = split["run0"]
    # A full-tool run that is no replicate of its model's Run 0 (other caps, items or protocol) is a configuration
    # of its own: it keeps its row in Table 2 and the per-run tables; the per-model tables (16, 18, 19) use Run 0.
    aside = {x["run"] for x in split["set_aside"]}
    table2_runs = [e for e in full if any(e is x for x in run0) or e["name"] in aside]
    partners = closed_book_partners(entries)
    main = main_table(table2_runs, split["set_aside"])
    order = {r["run"]: i for i, r in enumerate(main["rows"])}
    shown = sorted(table2_runs, key=lambda e: order[e["name"]])  # per-run tables in Table 2's order
    run0_shown = [e for e in shown if e["name"] not in aside]
    tier_of = {r["run"]: r["tier"] for r in main["rows"]}
    bigram_rows = bigrams(shown)
    trigram_table = trigrams(shown)
    for r in trigram_table["rows"]:
        r["tier"] = tier_of[r["run"]]
    trigram_table["rows"] = trigrams_by_tier(trigram_table["rows"], main["tiers"])
    panel = {
        "schema_version": PANEL_SCHEMA_VERSION,
        "summary_schema_version": SUMMARY_SCHEMA_VERSION,
        "scorer_version": SCORER_VERSION,
        "corpus": corpus,
        "runs": [
            {
                "run": e["name"],
                "tier": e["tier"],
                "family": e.get("family"),
                "model": e["model"],
                "role": e["role"],
                "n": e["n"],
                "run0": any(e is x for x in run0),
            }
            for e in entries
        ],
        "main_table": main,
        "stopping": stopping(shown),
        "cell_accuracy": cell_accuracy(shown),
        "ablation": ablation(entries, seed, resamples),
        "difficulty": difficulty(shown),
        "bigrams": {**bigram_rows, "panel": panel_bigrams(bigram_rows["rows"], len(shown))},
        "trigrams": trigram_table,
        "non_submission": non_submission(entries),
        "label_groups": label_groups(shown, partners),
        "contact": contact(shown, partners),
        "after_wrong_paper": after_wrong_paper(shown),
        "accuracy_vs_recall": accuracy_vs_recall(shown),
        "transitions": transitions(shown),
        "robustness": robustness(shown),
        "replicates": replicates(split),
        "closed_book": closed_book_accuracy(entries, run0_shown, main["tiers"]),
        "closed_book_strata": closed_book_strata(entries, run0_shown, main["tiers"]),
        "closed_book_by_exposure": closed_book_by_exposure(shown, partners),
        "external": external_correlations(run0_shown, external, main["tiers"]),
    }
    if not full:
        panel["missing"] = "no full-tool run: the main table and the per-run analyses need at least one"
    return panel


__all__ = ["PANEL_SCHEMA_VERSION", "ROLES", "build_panel", "panel_entry", "role_of"]
