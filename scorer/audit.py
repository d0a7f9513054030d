"""Exposure/inspection audit: was a gold paper shown to the agent, and did it read it?

* Inspected: a ``read_section`` call on a gold paper was *executed* (outcome ok,
  not_found, no_text or ambiguous), whether or not it delivered text.
* Exposed: a gold paper ID appeared in the ``exposed`` list of some call
  (search hits, reference lists).

Each item falls in exactly one category, checked in this order: unobservable,
correct, incorrect_inspected, incorrect_exposed, incorrect_neither.
"""

from __future__ import annotations

from typing import TypedDict

from agenthop.scorer.items import ItemOutcome
from agenthop.scorer.logs import EXECUTED_OUTCOMES, Call

CATEGORIES = ("correct", "incorrect_inspected", "incorrect_exposed", "incorrect_neither", "unobservable")
CATEGORY_LABELS = {
    "correct": "Correct",
    "incorrect_inspected": "Incorrect, target inspected",
    "incorrect_exposed": "Incorrect, target exposed but not inspected",
    "incorrect_neither": "Incorrect, neither",
    "unobservable": "Unobservable (no log)",
}
RANK_BANDS = ("1-5", "6-20", "21-50", "51+")


def rank_band(rank: int) -> str:
    if rank <= 5:
        return "1-5"
    if rank <= 20:
        return "6-20"
    if rank <= 50:
        return "21-50"
    return "51+"


def is_inspection(c: Call) -> bool:
    """An executed read_section call: what "inspected" means, whether or not it delivered text."""
    return c.tool == "read_section" and c.executed and c.outcome in EXECUTED_OUTCOMES


def inspected_papers(item: ItemOutcome) -> set[str]:
    """Paper IDs named by an executed read_section call."""
    return {c.paper_id for c in item.calls if is_inspection(c) and c.paper_id}


def exposed_papers(item: ItemOutcome) -> set[str]:
    out: set[str] = set()
    for c in item.calls:
        out.update(e.paper_id for e in c.exposed)
    return out


def audit_category(item: ItemOutcome) -> str:
    if not item.observed:
        return "unobservable"
    if item.correct:
        return "correct"
    found = contact(item)
    assert found is not None  # observed, checked above
    return "incorrect_" + found


CONTACTS = ("inspected", "exposed", "neither")


def contact(item: ItemOutcome) -> str | None:
    """Evidence contact whatever the answer: a gold paper inspected, else exposed, else neither (None: no log)."""
    if not item.observed:
        return None
    gold = set(item.gold.gold_paper_ids)
    if gold & inspected_papers(item):
        return "inspected"
    return "exposed" if gold & exposed_papers(item) else "neither"


def first_exposures(item: ItemOutcome) -> list[dict]:
    """Per gold paper: the call (seq), rank and tool of its first exposure, and whether an executed read followed."""
    out = []
    for pid in item.gold.gold_paper_ids:
        first = None
        for c in item.calls:
            for e in c.exposed:
                if e.paper_id == pid:
                    first = (c.number, e.rank, c.tool)
                    break
            if first:
                break
        if first is None:
            out.append(
                {"paper_id": pid, "exposed": False, "seq": None, "rank": None, "tool": None, "inspected_later": False}
            )
            continue
        seq, rank, tool = first
        later = any(is_inspection(c) and c.paper_id == pid and c.number > seq for c in item.calls)
        out.append(
            {
                "paper_id": pid,
                "exposed": True,
                "seq": seq,
                "rank": rank,
                "tool": tool,
                "band": rank_band(rank),
                "inspected_later": later,
            }
        )
    return out


class _Band(TypedDict):
    exposed: int
    inspected_later: int
    share_inspected: float | None


def summarize_exposure(per_item: list[list[dict]]) -> dict:
    """Aggregate first exposures of gold papers over observed items."""
    bands: dict[str, _Band] = {b: {"exposed": 0, "inspected_later": 0, "share_inspected": None} for b in RANK_BANDS}
    ranks: list[int] = []
    by_tool: dict[str, int] = {}
    n_targets = 0
    never = 0
    for entries in per_item:
        for e in entries:
            n_targets += 1
            if not e["exposed"]:
                never += 1
                continue
            ranks.append(e["rank"])
            by_tool[e["tool"]] = by_tool.get(e["tool"], 0) + 1
            b = bands[e["band"]]
            b["exposed"] += 1
            b["inspected_later"] += int(e["inspected_later"])
    for b in bands.values():
        if b["exposed"]:
            b["share_inspected"] = b["inspected_later"] / b["exposed"]
    ranks.sort()
    total_exposed = len(ranks)
    total_later = sum(b["inspected_later"] for b in bands.values())
    return {
        "gold_targets": n_targets,
        "exposed": total_exposed,
        "never_exposed": never,
        "inspected_later": total_later,
        "share_inspected": total_later / total_exposed if total_exposed else None,
        "first_rank_mean": sum(ranks) / total_exposed if total_exposed else None,
        "first_rank_median": (ranks[(total_exposed - 1) // 2] + ranks[total_exposed // 2]) / 2
        if total_exposed
        else None,
        "first_exposed_by_tool": dict(sorted(by_tool.items())),
        "by_rank_band": bands,
    }


def audit_counts(categories: list[str]) -> dict:
    n = len(categories)
    counts = {c: categories.count(c) for c in CATEGORIES}
    return {"n": n, "counts": counts, "shares": {c: (counts[c] / n if n else None) for c in CATEGORIES}}
