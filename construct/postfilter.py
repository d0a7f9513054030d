"""Stage 8a, the post-filter: labels must resolve against the paper's headers by the scorer's rule; no parser-collapsed sections.

A label resolves when ``agenthop.server.sections.label_is_resolvable`` says so:
the same rule the importer checks and the scorer credits by. A candidate with an
unresolved label, or a target without a direct label, is dropped and listed in
``OUT/repair.jsonl`` with the headers it could name, for an auditor to repoint
on the review page (the next run then keeps it). A candidate whose seed, bridge or
target holds a section longer than ``max_section_chars`` is dropped (the
published 99.9th percentile: such sections are parser collapses).

Then each blank is asked once per release: of the candidates that blank the same target's sentence
(target, evidence sentence), the one with the smallest content-derived item ID is kept and the others are dropped
(``repeated_blank``). Two items on one blank give each other away (the option both offer is the gold: 61% on the
explore release before this rule) and are not independent observations.

With ``one_item_per_target``, each target paper serves at most one item: of the candidates whose targets
overlap, the one with the smallest item ID is kept and the others are dropped (``target_taken``). An agent
that answered one item has read its target; a second item on the same paper, later in the run or in another
agent's memory, no longer sends it anywhere new, which wastes the headroom a research question needs.
"""

from __future__ import annotations

from agenthop.construct.release_out import item_id
from agenthop.server.sections import label_is_resolvable


def check(view, cand: dict, max_chars: int) -> tuple[dict | None, dict | None]:
    """(drop, repair entry) for one candidate; (None, None) when it passes."""
    path = [cand["seed"], *([cand["bridge"]] if cand["bridge"] else []), *cand["targets"]]
    on_path = set(path)
    unresolved = []
    for label in cand["labels"]:
        sections = view.sections(label["paper_id"]) if label["paper_id"] in on_path else ()
        headers = [sec.header for sec in sections]
        if not sections or not label_is_resolvable(label["section"], headers, (sec.text for sec in sections)):
            unresolved.append({"label": label, "headers": headers})
    lacking = [
        t
        for t in cand["targets"]
        if not any(lab["paper_id"] == t and lab["relevance"] == "direct" for lab in cand["labels"])
    ]
    if unresolved or lacking:
        detail = "; ".join(
            [f"{u['label']['section']!r} names no section of {u['label']['paper_id']}" for u in unresolved]
            + [f"no direct label on {t}" for t in lacking]
        )
        repair = {"candidate": cand["id"], "unresolved": unresolved, "targets_without_direct_label": lacking}
        return {"reason": "label_unresolved", "detail": detail}, repair
    for pid in path:
        longest = max((len(sec.text) for sec in view.sections(pid)), default=0)
        if longest > max_chars:
            return {
                "reason": "section_too_long",
                "detail": f"{pid}: a section of {longest} characters > {max_chars}",
            }, None
    return None, None


def blanks(cand: dict) -> set[tuple[str, str]]:
    """What an item asks: (target, evidence sentence) per target."""
    return set(zip(cand["targets"], cand.get("evidence", [])))


def repeated_blanks(cands: list[dict]) -> dict[int, dict]:
    """{index: drop} for every candidate whose blank a candidate with a smaller item ID already asks."""
    asked: dict[tuple[str, str], str] = {}
    drops = {}
    for i in sorted(range(len(cands)), key=lambda i: item_id(cands[i])):
        first = next((asked[b] for b in sorted(blanks(cands[i])) if b in asked), None)
        if first is not None:
            drops[i] = {"reason": "repeated_blank", "detail": f"{first} asks the same blank (target and sentence)"}
            continue
        asked.update({b: item_id(cands[i]) for b in blanks(cands[i])})
    return drops


def taken_targets(cands: list[dict]) -> dict[int, dict]:
    """{index: drop} for every candidate one of whose targets a candidate with a smaller item ID already serves."""
    served: dict[str, str] = {}
    drops = {}
    for i in sorted(range(len(cands)), key=lambda i: item_id(cands[i])):
        first = next((served[t] for t in sorted(cands[i]["targets"]) if t in served), None)
        if first is not None:
            drops[i] = {"reason": "target_taken", "detail": f"{first} already serves this target paper"}
            continue
        served.update({t: item_id(cands[i]) for t in cands[i]["targets"]})
    return drops


def run_postfilter(
    view, cands: list[dict], max_chars: int, one_item_per_target: bool = False
) -> tuple[list[dict], list[dict]]:
    out, repairs = [], []
    for cand in cands:
        drop, repair = check(view, cand, max_chars)
        out.append({**cand, "drop": drop} if drop else cand)
        if repair:
            repairs.append(repair)
    kept = [i for i, c in enumerate(out) if "drop" not in c]
    for j, drop in repeated_blanks([out[i] for i in kept]).items():
        out[kept[j]] = {**out[kept[j]], "drop": drop}
    if one_item_per_target:
        kept = [i for i, c in enumerate(out) if "drop" not in c]
        for j, drop in taken_targets([out[i] for i in kept]).items():
            out[kept[j]] = {**out[kept[j]], "drop": drop}
    return out, repairs
