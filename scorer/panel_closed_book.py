"""The paper's Tables 11, 18 and 19: evidence groups of recall-credited trajectories with the zero-tool column,
zero-tool against full-tool accuracy per model, and zero-tool accuracy by citation quartile, seed year and venue.

Table 11: the Run 0s' recall-credited items grouped by how a direct label was met (header match; labelled content
inside its parent section; none), with conversion and the same model's closed-book accuracy on the same items.
Table 18: per model, its closed-book accuracy, its Table 2 accuracy and the difference, grouped by tier and ranked by
full-tool accuracy. Table 19: closed-book accuracy per tier in strata of the items (rank-based quartiles of the
construction-time citation count, the maximum over an item's gold papers; the seed paper's year; the venue).
Additions: Wilson intervals, accuracy by question type, the lift on common items, a pooled row, and closed-book
accuracy by the full-tool run's evidence contact. Definitions: docs/scoring.md.
"""

from __future__ import annotations

from typing import Any

from agenthop.scorer import stats
from agenthop.scorer.audit import CONTACTS

UNTIERED = "all runs"


def _acc(k: int, n: int) -> dict:
    return {"n": n, "correct": k, "accuracy": k / n if n else None, "ci95": list(stats.wilson(k, n) or []) or None}


def closed_book_accuracy(entries: list[dict], run0: list[dict], tiers: list[str]) -> dict:
    """Table 18 over the models with a closed-book run and a Run 0 (``run0``, the runs Table 2 shows)."""
    closed = [e for e in entries if e["role"] == "closed_book"]
    if not closed:
        return {
            "rows": [],
            "missing": "closed-book accuracy needs closed-book runs (agenthop-runner --closed-book, or "
            "role closed_book in the tiers file)",
        }
    table2 = {e["model"]: e for e in run0 if e["model"]}
    rows, unpaired, pooled_k, pooled_n, seen = [], [], 0, 0, set()
    for cb in closed:
        items = list(cb["items"].values())
        k = sum(r["correct"] for r in items)
        pooled_k, pooled_n = pooled_k + k, pooled_n + len(items)
        by_type = {
            q: _acc(sum(r["correct"] for r in items if r["qtype"] == q), sum(1 for r in items if r["qtype"] == q))
            for q in ("ST", "MT")
        }
        row = {"run": cb["name"], "model": cb["model"], **_acc(k, len(items)), "by_type": by_type}
        full_run = table2.get(cb["model"])
        if full_run is None or cb["model"] in seen:
            unpaired.append(
                {
                    **row,
                    "reason": "a second closed-book run of the model (the first is used)"
                    if cb["model"] in seen
                    else "no full-tool run of the model in Table 2",
                }
            )
            continue
        seen.add(cb["model"])
        common = [i for i in cb["items"] if i in full_run["items"]]
        full_acc = full_run["overall"]["accuracy"]
        row.update(
            tier=full_run["tier"] or UNTIERED,
            full_run=full_run["name"],
            zero=row["accuracy"],
            full=full_acc,
            delta=None if full_acc is None or row["accuracy"] is None else full_acc - row["accuracy"],
            same_items=set(cb["items"]) == set(full_run["items"]),
            n_common=len(common),
            closed_book_on_common=sum(cb["items"][i]["correct"] for i in common) / len(common) if common else None,
            full_on_common=sum(full_run["items"][i]["correct"] for i in common) / len(common) if common else None,
        )
        row["lift_on_common"] = row["full_on_common"] - row["closed_book_on_common"] if common else None
        rows.append(row)
    position = {r["run"]: i for i, r in enumerate(rows)}
    rows.sort(
        key=lambda r: (
            tiers.index(r["tier"]) if r["tier"] in tiers else len(tiers),
            r["full"] is None,
            -(r["full"] or 0),
            position[r["run"]],
        )
    )
    return {"rows": rows, "unpaired": unpaired, "pooled": _acc(pooled_k, pooled_n), "chance": 0.25}


#: Table 11's groups of recall-credited trajectories, in the paper's order (the item rows' ``label_match``).
LABEL_GROUPS = ("header", "content", "none")


def label_groups(run0: list[dict], partners: dict[str, dict]) -> dict:
    """Table 11 over the Run 0s' recall-credited items (paper recall 1): each group's item-runs, share, conversion
    (right answers among them) and the same model's closed-book accuracy on the same items."""
    rows: dict[str, dict[str, Any]] = {
        g: {"n": 0, "correct": 0, "closed_book_n": 0, "closed_book_correct": 0} for g in LABEL_GROUPS
    }
    unknown = 0
    for e in run0:
        cb = partners.get(e["model"])
        for iid, r in e["items"].items():
            if not (r["observed"] and r["paper_recall"]):
                continue
            if r.get("label_match") not in rows:
                unknown += 1  # a summary written before the scorer recorded the match
                continue
            row = rows[r["label_match"]]
            row["n"] += 1
            row["correct"] += r["correct"]
            if cb is not None and iid in cb["items"]:
                row["closed_book_n"] += 1
                row["closed_book_correct"] += cb["items"][iid]["correct"]
    total = sum(r["n"] for r in rows.values())
    for r in rows.values():
        r["share"] = r["n"] / total if total else None
        r["conversion"] = r["correct"] / r["n"] if r["n"] else None
        r["closed_book_accuracy"] = r["closed_book_correct"] / r["closed_book_n"] if r["closed_book_n"] else None
    out = {"n": total, "runs": len(run0), "groups": list(LABEL_GROUPS), "rows": rows}
    if unknown:
        out["unmatched"] = unknown
    without = sorted({e["model"] or e["name"] for e in run0 if e["model"] not in partners})
    if without:
        out["missing"] = (
            "the zero-tool column needs a closed-book run of the same model (run.json ablations, or role "
            f"closed_book in the tiers file) for: {', '.join(without)}"
        )
    return out


def closed_book_by_exposure(full: list[dict], partners: dict[str, dict]) -> dict:
    rows = []
    for e in full:
        cb = partners.get(e["model"])
        if cb is None:
            continue
        strata = {}
        for stratum in CONTACTS:
            ids = [i for i, r in e["items"].items() if r["contact"] == stratum and i in cb["items"]]
            strata[stratum] = {
                "closed_book": _acc(sum(cb["items"][i]["correct"] for i in ids), len(ids)),
                "full": _acc(sum(e["items"][i]["correct"] for i in ids), len(ids)),
            }
        rows.append({"run": e["name"], "model": e["model"], "closed_book_run": cb["name"], "strata": strata})
    out = {"strata": list(CONTACTS), "rows": rows}
    if not rows:
        out["missing"] = (
            "closed-book accuracy by exposure stratum needs a closed-book run of the same model as a "
            "full-tool run (matched by model name)"
        )
    return out
