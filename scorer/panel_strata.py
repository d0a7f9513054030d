"""The paper's Table 19: zero-tool (closed-book) accuracy by stratum, one column per tier.

Strata: rank-based quartiles of the items' citation counts (the construction-time count recorded in the release,
the maximum over the item's gold papers), the seed paper's year, and the venue. Items: every item of the panel's
closed-book runs. A tier's cell: the right answers over the item-runs of that tier's closed-book runs in the
stratum (with every model on the same items, the mean of the models' accuracies). Definitions: docs/scoring.md.
"""

from __future__ import annotations

UNTIERED = "all runs"


def quartiles(items: list[tuple[str, int]]) -> dict[str, int]:
    """Item -> quartile 1..4 by rank: items sorted by count (ties in the order given) get ranks r = 1..n and
    quartile floor(4 r / (n + 1)) + 1, which splits the paper's 1,011 samples 252 / 253 / 253 / 253 as its
    Table 19 does; equal counts can fall in two quartiles (its Q3 and Q4 both hold 1,554)."""
    ranked = sorted(range(len(items)), key=lambda i: (items[i][1], i))
    n = len(items)
    return {items[i][0]: 4 * (r + 1) // (n + 1) + 1 for r, i in enumerate(ranked)}


def _tier_of(cb: dict, table2: dict[str, dict]) -> str:
    full = table2.get(cb["model"])
    return (full["tier"] if full is not None else cb["tier"]) or UNTIERED


def closed_book_strata(entries: list[dict], run0: list[dict], tiers: list[str]) -> dict:
    closed = [e for e in entries if e["role"] == "closed_book"]
    if not closed:
        return {
            "missing": "closed-book accuracy by stratum needs closed-book runs (agenthop-runner --closed-book, or "
            "role closed_book in the tiers file)"
        }
    table2 = {e["model"]: e for e in run0 if e["model"]}
    tier_of = {cb["name"]: _tier_of(cb, table2) for cb in closed}
    columns = [t for t in tiers if t in tier_of.values()] + sorted(set(tier_of.values()) - set(tiers))
    items: dict[str, dict] = {}
    for cb in closed:
        for iid, r in cb["items"].items():
            items.setdefault(iid, r)

    def cells(ids: set[str]) -> dict:
        out = {}
        for tier in columns:
            n = k = 0
            for cb in closed:
                if tier_of[cb["name"]] != tier:
                    continue
                for iid in ids & set(cb["items"]):
                    n += 1
                    k += cb["items"][iid]["correct"]
            out[tier] = {"n": n, "correct": k, "accuracy": k / n if n else None}
        return out

    axes = {}
    counted = [(iid, r["gold_citations"]) for iid, r in items.items() if r.get("gold_citations") is not None]
    if counted:
        q = quartiles(counted)
        rows = []
        for k in range(1, 5):
            ids = {iid for iid, qk in q.items() if qk == k}
            counts = [n for iid, n in counted if iid in ids]
            rows.append(
                {
                    "stratum": f"Q{k}",
                    "low": min(counts) if counts else None,
                    "high": max(counts) if counts else None,
                    "n": len(ids),
                    "cells": cells(ids),
                }
            )
        axes["citations"] = rows
    years = sorted({r["seed_year"] for r in items.values() if r.get("seed_year") is not None})
    axes["year"] = [
        {"stratum": str(y), "n": len(ids), "cells": cells(ids)}
        for y in years
        for ids in [{iid for iid, r in items.items() if r.get("seed_year") == y}]
    ]
    venues = sorted({r["venue"] for r in items.values() if r.get("venue")}, key=str.casefold)
    axes["venue"] = [
        {"stratum": v, "n": len(ids), "cells": cells(ids)}
        for v in venues
        for ids in [{iid for iid, r in items.items() if r.get("venue") == v}]
    ]
    out = {
        "tiers": columns,
        "n_items": len(items),
        "axes": axes,
        "closed_book_runs": [{"run": cb["name"], "model": cb["model"], "tier": tier_of[cb["name"]]} for cb in closed],
    }
    if not counted:
        out["citations_missing"] = (
            "the release records no citation counts (qa/full.jsonl's gold_citation_counts, which agenthop-construct "
            "writes), so the items cannot be put in citation quartiles"
        )
    elif len(counted) < len(items):
        out["citations_partial"] = f"{len(items) - len(counted)} of {len(items)} items have no recorded count"
    unknown_year = sum(1 for r in items.values() if r.get("seed_year") is None)
    if unknown_year:
        out["year_unknown"] = unknown_year
    unknown_venue = sum(1 for r in items.values() if not r.get("venue"))
    if unknown_venue:
        out["venue_unknown"] = unknown_venue
    return out
