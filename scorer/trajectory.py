"""Trajectory analysis: tool transitions, bigrams and trigrams, stopping and recovery behaviour.

A trajectory is the item's calls naming one of the seven tools, in session order
(``seq``), executed or refused, except calls refused because the session had
already ended (``session_ended``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from agenthop.scorer.items import ItemOutcome
from agenthop.scorer.logs import NAV_TOOLS, TOOLS, Call

#: The categories of the paper's three stopping scopes (its Table 9; SPEC 7), in its order.
MT_FAIL = ("zero_gold", "prem", "explored", "stayed")
AFTER_GOLD = ("imm", "thnk", "read", "rest")
STOP_LABELS = {
    "zero_gold": "0-Gold",
    "prem": "Prem",
    "explored": "Explored",
    "stayed": "Stayed",
    "imm": "Imm",
    "thnk": "Thnk",
    "read": "Read",
    "rest": "rest (navigation without reading; residual)",
}
SCOPES = {"mt_fail": MT_FAIL, "st": AFTER_GOLD, "mt_both": AFTER_GOLD}
SCOPE_LABELS = {
    "mt_fail": "MT-fail: multi-target items whose paper recall failed",
    "st": "ST: single-target items whose gold paper was read; action after that read",
    "mt_both": "MT-both: multi-target items with every gold paper read; action after the read completing the set",
}
AFTER_NONGOLD = ("recover", "stay", "think", "renavigate", "submit", "end")


def trajectory(item: ItemOutcome) -> list[Call]:
    return [c for c in item.calls if c.tool in TOOLS and c.outcome != "session_ended"]


def _delivered_gold(call: Call, gold: set[str]) -> bool:
    return (
        call.tool == "read_section"
        and call.outcome == "ok"
        and call.delivered is not None
        and call.delivered.paper_id in gold
    )


def transition_matrix(trajs: list[list[str]]) -> dict:
    idx = {t: i for i, t in enumerate(TOOLS)}
    counts = [[0] * len(TOOLS) for _ in TOOLS]
    for tr in trajs:
        for a, b in zip(tr, tr[1:]):
            counts[idx[a]][idx[b]] += 1
    probs = []
    for row in counts:
        s = sum(row)
        probs.append([v / s if s else 0.0 for v in row])
    return {"tools": list(TOOLS), "counts": counts, "row_normalised": probs}


def bigram_accuracy(trajs: list[list[str]], correct: list[bool]) -> list[dict]:
    """For each bigram seen: accuracy of items whose trajectory contains it vs those that do not."""
    sets = [set(zip(tr, tr[1:])) for tr in trajs]
    n = len(trajs)
    total_correct = sum(correct)
    seen = Counter(bg for s in sets for bg in s)
    out: list[dict[str, Any]] = []
    for bg, n_with in seen.items():
        c_with = sum(1 for s, ok in zip(sets, correct) if ok and bg in s)
        n_wo = n - n_with
        acc_with = c_with / n_with
        acc_wo = (total_correct - c_with) / n_wo if n_wo else None
        out.append(
            {
                "bigram": [bg[0], bg[1]],
                "n_with": n_with,
                "accuracy_with": acc_with,
                "n_without": n_wo,
                "accuracy_without": acc_wo,
                "difference": acc_with - acc_wo if acc_wo is not None else None,
            }
        )
    out.sort(key=lambda r: (-(abs(r["difference"]) if r["difference"] is not None else -1), r["bigram"]))
    return out


def trigram_stats(trajs: list[list[str]], top: int = 5) -> dict:
    counts = Counter(tuple(tr[i : i + 3]) for tr in trajs for i in range(len(tr) - 2))
    total = sum(counts.values())
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    rows = [{"trigram": list(k), "count": v, "share": v / total} for k, v in ranked[:top]]
    return {"total": total, "most_frequent": rows[0] if rows else None, "top": rows}


def _delivered_gold_index(tr: list[Call], gold: set[str], complete: bool) -> int | None:
    """Index in ``tr`` of the first delivered gold read (``complete``: of the read that completed the gold set)."""
    reached: set[str] = set()
    for i, c in enumerate(tr):
        if _delivered_gold(c, gold):
            reached.add(c.delivered_section.paper_id)
            if not complete or reached >= gold:
                return i
    return None


def after_gold(rest: list[Call]) -> str:
    """What the calls after a gold read did: Imm, Thnk, Read or the residual (SPEC 7, Table 9).

    imm: the next call is submit_answer; thnk: one or more think calls, then submit_answer;
    read: a read_section call before any submission (or with none); rest: anything else
    (navigation without reading, or the session ended without a submission or a further read).
    """
    tools = [c.tool for c in rest]
    before_submit = tools[: tools.index("submit_answer")] if "submit_answer" in tools else tools
    if "read_section" in before_submit:
        return "read"
    if "submit_answer" not in tools:
        return "rest"
    if not before_submit:
        return "imm"
    return "thnk" if all(t == "think" for t in before_submit) else "rest"


def st_stopping(item: ItemOutcome) -> str | None:
    """ST scope: after the first delivered read of the gold paper, what came next (None if it was never read)."""
    if item.gold.qtype != "ST" or not item.observed:
        return None
    tr = trajectory(item)
    i = _delivered_gold_index(tr, set(item.gold.gold_paper_ids), complete=False)
    return None if i is None else after_gold(tr[i + 1 :])


def mt_both_stopping(item: ItemOutcome) -> str | None:
    """MT-both scope: after the read that completed the gold set, what came next (None unless every gold was read)."""
    gold = set(item.gold.gold_paper_ids)
    if item.gold.qtype != "MT" or not item.observed or not gold:
        return None
    tr = trajectory(item)
    i = _delivered_gold_index(tr, gold, complete=True)
    return None if i is None else after_gold(tr[i + 1 :])


def mt_fail(item: ItemOutcome) -> str | None:
    """MT-fail scope: the category of an observed MT item whose paper recall failed, whatever its answer.

    zero_gold: no gold paper delivered. After the first delivered gold read, with P the gold
    papers delivered so far: prem (no further read or navigation call: only think or
    submit_answer, or nothing); explored (a search_papers or get_references call, or
    get_paper_info / list_sections / read_section naming a paper outside P); stayed (the
    further read and navigation calls all name papers in P).
    """
    gold = set(item.gold.gold_paper_ids)
    if item.gold.qtype != "MT" or not item.observed or not gold:
        return None
    tr = trajectory(item)
    if {c.delivered_section.paper_id for c in tr if _delivered_gold(c, gold)} >= gold:
        return None  # every gold paper delivered: paper recall succeeded
    first = _delivered_gold_index(tr, gold, complete=False)
    if first is None:
        return "zero_gold"
    reached = {tr[first].delivered_section.paper_id}  # with two gold papers, reaching the other one would be recall
    moved = False
    for c in tr[first + 1 :]:
        if c.tool in ("think", "submit_answer"):
            continue
        moved = True
        if c.tool in ("search_papers", "get_references") or c.paper_id not in reached:
            return "explored"
    return "stayed" if moved else "prem"


def after_nongold_reads(item: ItemOutcome) -> list[str]:
    """For each delivered read of a non-gold paper, the kind of the next call."""
    gold = set(item.gold.gold_paper_ids)
    tr = trajectory(item)
    out = []
    for i, c in enumerate(tr):
        if not (c.tool == "read_section" and c.outcome == "ok" and c.delivered is not None):
            continue
        if c.delivered.paper_id in gold:
            continue
        nxt = tr[i + 1] if i + 1 < len(tr) else None
        if nxt is None:
            out.append("end")
        elif nxt.tool == "read_section":
            out.append("recover" if nxt.paper_id in gold else "stay")
        elif nxt.tool == "think":
            out.append("think")
        elif nxt.tool in NAV_TOOLS:
            out.append("renavigate")
        else:
            out.append("submit")
    return out


def categorical(values: list[str | None], correct: list[bool], order: tuple[str, ...]) -> dict:
    """Counts, shares and accuracy of each category over the items that have one."""
    pairs = [(v, ok) for v, ok in zip(values, correct) if v is not None]
    n = len(pairs)
    categories: dict[str, dict] = {}
    out = {"n": n, "categories": categories}
    for cat in order:
        hits = [ok for v, ok in pairs if v == cat]
        categories[cat] = {
            "n": len(hits),
            "share": len(hits) / n if n else None,
            "accuracy": sum(hits) / len(hits) if hits else None,
        }
    return out


def stopping(items: list[ItemOutcome]) -> dict:
    """The paper's three stopping scopes over observed items, each with counts, shares and accuracy (an addition)."""
    fns = {"mt_fail": mt_fail, "st": st_stopping, "mt_both": mt_both_stopping}
    return {
        scope: categorical([fn(it) for it in items], [it.correct for it in items], SCOPES[scope])
        for scope, fn in fns.items()
    }


def analyze(items: list[ItemOutcome]) -> dict:
    observed = [it for it in items if it.observed]
    trajs = [[c.tool for c in trajectory(it)] for it in observed]
    correct = [it.correct for it in observed]
    after = Counter(kind for it in observed for kind in after_nongold_reads(it))
    n_after = sum(after.values())
    return {
        "n_items": len(observed),
        "transitions": transition_matrix(trajs),
        "bigrams": bigram_accuracy(trajs, correct),
        "trigrams": trigram_stats(trajs),
        "stopping": stopping(observed),
        "after_nongold_read": {
            "n": n_after,
            "categories": {
                k: {"n": after.get(k, 0), "share": after.get(k, 0) / n_after if n_after else None}
                for k in AFTER_NONGOLD
            },
        },
    }
