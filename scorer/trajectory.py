"""Trajectory analysis: tool transitions, bigrams and trigrams, stopping and recovery behaviour.

A trajectory is the item's calls naming one of the seven tools, in session order
(``seq``), executed or refused, except calls refused because the session had
already ended (``session_ended``).
"""

from __future__ import annotations

from collections import Counter

from agenthop.scorer.items import ItemOutcome
from agenthop.scorer.logs import NAV_TOOLS, TOOLS, Call

ST_STOP = ("submit_immediately", "think_then_submit", "read_more", "no_submit")
MT_FAIL = ("no_gold_reached", "premature_commit", "explored", "stayed", "all_gold_reached")
AFTER_NONGOLD = ("recover", "stay", "think", "renavigate", "submit", "end")


def trajectory(item: ItemOutcome) -> list[Call]:
    return [c for c in item.calls if c.tool in TOOLS and c.outcome != "session_ended"]


def _delivered_gold(call: Call, gold: set[str]) -> bool:
    return call.tool == "read_section" and call.outcome == "ok" and call.delivered is not None \
        and call.delivered.paper_id in gold


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
    out = []
    for bg, n_with in seen.items():
        c_with = sum(1 for s, ok in zip(sets, correct) if ok and bg in s)
        n_wo = n - n_with
        acc_with = c_with / n_with
        acc_wo = (total_correct - c_with) / n_wo if n_wo else None
        out.append({
            "bigram": [bg[0], bg[1]],
            "n_with": n_with, "accuracy_with": acc_with,
            "n_without": n_wo, "accuracy_without": acc_wo,
            "difference": acc_with - acc_wo if acc_wo is not None else None,
        })
    out.sort(key=lambda r: (-(abs(r["difference"]) if r["difference"] is not None else -1), r["bigram"]))
    return out


def trigram_stats(trajs: list[list[str]], top: int = 5) -> dict:
    counts = Counter(tuple(tr[i:i + 3]) for tr in trajs for i in range(len(tr) - 2))
    total = sum(counts.values())
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    rows = [{"trigram": list(k), "count": v, "share": v / total} for k, v in ranked[:top]]
    return {"total": total, "most_frequent": rows[0] if rows else None, "top": rows}


def st_stopping(item: ItemOutcome) -> str | None:
    """After the first delivered gold read of an ST item: what came next (None if gold was never delivered)."""
    gold = set(item.gold.gold_paper_ids)
    tr = trajectory(item)
    first = next((i for i, c in enumerate(tr) if _delivered_gold(c, gold)), None)
    if first is None:
        return None
    rest = [c.tool for c in tr[first + 1:]]
    if not rest:
        return "no_submit"
    if rest[0] == "submit_answer":
        return "submit_immediately"
    for tool in rest:
        if tool == "think":
            continue
        if tool == "submit_answer":
            return "think_then_submit"
        return "read_more"
    return "no_submit"


def mt_failure(item: ItemOutcome) -> str | None:
    """Category of a wrong, observed MT item (None for other items). See docs/scoring.md."""
    if item.gold.qtype != "MT" or not item.observed or item.correct:
        return None
    gold = set(item.gold.gold_paper_ids)
    tr = trajectory(item)
    reached = {c.delivered.paper_id for c in tr if _delivered_gold(c, gold)}
    if not reached:
        return "no_gold_reached"
    if reached >= gold:
        return "all_gold_reached"
    submitted = any(c.tool == "submit_answer" and c.outcome == "ok" for c in tr) or item.termination == "answer"
    if submitted:
        return "premature_commit"
    first = next(i for i, c in enumerate(tr) if _delivered_gold(c, gold))
    reached_so_far: set[str] = set()
    for c in tr[: first + 1]:
        if _delivered_gold(c, gold):
            reached_so_far.add(c.delivered.paper_id)
    for c in tr[first + 1:]:
        if _delivered_gold(c, gold):
            reached_so_far.add(c.delivered.paper_id)
        if c.tool in ("search_papers", "get_references"):
            return "explored"
        if c.tool in ("get_paper_info", "list_sections", "read_section") and c.paper_id not in reached_so_far:
            return "explored"
    return "stayed"


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
    out = {"n": n, "categories": {}}
    for cat in order:
        hits = [ok for v, ok in pairs if v == cat]
        out["categories"][cat] = {
            "n": len(hits),
            "share": len(hits) / n if n else None,
            "accuracy": sum(hits) / len(hits) if hits else None,
        }
    return out


def _without_accuracy(table: dict) -> dict:
    for row in table["categories"].values():
        row.pop("accuracy", None)
    return table


def analyze(items: list[ItemOutcome]) -> dict:
    observed = [it for it in items if it.observed]
    trajs = [[c.tool for c in trajectory(it)] for it in observed]
    correct = [it.correct for it in observed]
    st = [it for it in observed if it.gold.qtype == "ST"]
    after = Counter(kind for it in observed for kind in after_nongold_reads(it))
    n_after = sum(after.values())
    mt_wrong = [it for it in observed if it.gold.qtype == "MT" and not it.correct]
    return {
        "n_items": len(observed),
        "transitions": transition_matrix(trajs),
        "bigrams": bigram_accuracy(trajs, correct),
        "trigrams": trigram_stats(trajs),
        "st_stopping": categorical([st_stopping(it) for it in st], [it.correct for it in st], ST_STOP),
        "mt_failures": _without_accuracy(categorical([mt_failure(it) for it in mt_wrong], [False] * len(mt_wrong), MT_FAIL)),
        "after_nongold_read": {
            "n": n_after,
            "categories": {k: {"n": after.get(k, 0), "share": after.get(k, 0) / n_after if n_after else None}
                           for k in AFTER_NONGOLD},
        },
    }
