"""The paper's Tables 18 and 19: closed-book accuracy over the whole panel, and by exposure stratum.

Table 18: per closed-book run, its accuracy with a Wilson 95% interval (and by question type), beside the full-tool
accuracy of the same model on the same items; a pooled row over every closed-book run. Table 19: per full-tool run
with a closed-book run of its model, the closed-book accuracy on the items its full-tool run left in each evidence
stratum (gold paper inspected, exposed but not inspected, neither: the audit's contact). Definitions: docs/scoring.md.
"""

from __future__ import annotations

from agenthop.scorer import stats
from agenthop.scorer.audit import CONTACTS


def _acc(k: int, n: int) -> dict:
    return {"n": n, "correct": k, "accuracy": k / n if n else None, "ci95": list(stats.wilson(k, n) or []) or None}


def _first_full(full: list[dict]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for e in full:
        if e["model"]:
            out.setdefault(e["model"], e)
    return out


def closed_book_accuracy(entries: list[dict], full: list[dict]) -> dict:
    closed = [e for e in entries if e["role"] == "closed_book"]
    if not closed:
        return {
            "rows": [],
            "missing": "closed-book accuracy needs closed-book runs (agenthop-runner --closed-book, or "
            "role closed_book in the tiers file)",
        }
    partners = _first_full(full)
    rows, pooled_k, pooled_n = [], 0, 0
    for cb in closed:
        items = list(cb["items"].values())
        k = sum(r["correct"] for r in items)
        pooled_k, pooled_n = pooled_k + k, pooled_n + len(items)
        by_type = {
            q: _acc(sum(r["correct"] for r in items if r["qtype"] == q), sum(1 for r in items if r["qtype"] == q))
            for q in ("ST", "MT")
        }
        row = {
            "run": cb["name"],
            "model": cb["model"],
            **_acc(k, len(items)),
            "by_type": by_type,
            "full_run": None,
            "n_common": 0,
            "closed_book_on_common": None,
            "full_on_common": None,
            "lift": None,
        }
        full_run = partners.get(cb["model"])
        if full_run is not None:
            common = [i for i in cb["items"] if i in full_run["items"]]
            if common:
                a = sum(cb["items"][i]["correct"] for i in common) / len(common)
                b = sum(full_run["items"][i]["correct"] for i in common) / len(common)
                row.update(
                    full_run=full_run["name"],
                    n_common=len(common),
                    closed_book_on_common=a,
                    full_on_common=b,
                    lift=b - a,
                )
        rows.append(row)
    return {"rows": rows, "pooled": _acc(pooled_k, pooled_n), "chance": 0.25}


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
