"""Per-item scores (accuracy, paper and section recall, resources) and their aggregation by group."""

from __future__ import annotations

from collections import Counter

from agenthop.scorer import audit
from agenthop.scorer.gold import CELLS, LETTERS, Gold
from agenthop.scorer.items import ItemOutcome
from agenthop.scorer.logs import Call
from agenthop.scorer.stats import wilson
from agenthop.scorer.trajectory import trajectory
from agenthop.server.sections import label_headers, label_matches_section

BUDGET_BANDS = ((0, 5), (6, 10), (11, 15), (16, 20), (21, 25), (26, 30), (31, None))


def delivered_reads(it: ItemOutcome) -> list[Call]:
    """Every read_section call that executed with outcome ok and delivered text, in call order."""
    return [
        c for c in it.calls if c.tool == "read_section" and c.executed and c.outcome == "ok" and c.delivered is not None
    ]


def gold_reads(it: ItemOutcome, gold: Gold) -> list[tuple[Call, bool]]:
    """Each delivered read of a gold paper, in call order, and whether it hit a ``direct`` recall label.

    A read hits when one of its paper's direct labels matches the delivered section
    (``label_matches_section``: the header, or a subsection header verbatim in its text).
    A gold paper without an arXiv ID in the gold row takes the one its first delivered read names.
    """
    g = it.gold
    first_arxiv: dict[str, str | None] = {}
    out = []
    for c in delivered_reads(it):
        d = c.delivered_section
        pid = d.paper_id
        if pid not in g.gold_paper_ids:
            continue
        first_arxiv.setdefault(pid, d.arxiv_id)
        arxiv = g.gold_arxiv(pid) or first_arxiv[pid]
        d_arxiv = d.arxiv_id or arxiv
        hit = any(
            label_matches_section(
                lab.section, d.header, gold.section_text(d_arxiv, d.section_index), gold.section_headers(d_arxiv)
            )
            for lab in g.direct_labels(arxiv)
        )
        out.append((c, hit))
    return out


def label_match(it: ItemOutcome, gold: Gold) -> str:
    """How the item's delivered gold reads met a ``direct`` label (the paper's Table 11 groups): ``header`` when a
    read section's header is the label, else ``content`` when a subsection label stood verbatim inside the read
    section (its parent), else ``none``."""
    kinds = set()
    for c, hit in gold_reads(it, gold):
        if not hit:
            continue
        d = c.delivered_section
        arxiv = it.gold.gold_arxiv(d.paper_id) or d.arxiv_id
        headers = list(gold.section_headers(d.arxiv_id or arxiv))
        headers = headers if d.header in headers else [*headers, d.header]
        for lab in it.gold.direct_labels(arxiv):
            if label_matches_section(
                lab.section, d.header, gold.section_text(d.arxiv_id or arxiv, d.section_index), headers
            ):
                kinds.add("header" if label_headers(lab.section, headers) else "content")
    return "header" if "header" in kinds else "content" if kinds else "none"


def recall(it: ItemOutcome, gold: Gold) -> tuple[int, int, list[str], list[str]]:
    """(paper recall, section recall, gold papers delivered, gold papers with a direct-label hit)."""
    reads = gold_reads(it, gold)
    reached = {c.delivered_section.paper_id for c, _ in reads}
    direct_hit = {c.delivered_section.paper_id for c, hit in reads if hit}
    n_gold = len(it.gold.gold_paper_ids)
    paper = int(n_gold > 0 and len(reached) == n_gold)
    section = int(n_gold > 0 and len(direct_hit) == n_gold)
    return paper, section, sorted(reached), sorted(direct_hit)


def turn_source(items: list[ItemOutcome]) -> str | None:
    """Where calls per turn can be measured: runner turn records, else checkpoint ``turn`` fields, else None."""
    if any(it.turn_records for it in items):
        return "runner"
    if any(c.turn is not None for it in items for c in it.calls):
        return "checkpoint"
    return None


def item_row(it: ItemOutcome, gold: Gold, cpt_source: str | None) -> dict:
    g = it.gold
    paper, section, reached, hit = recall(it, gold)
    tokens, tokens_src = it.tokens()
    turns, turns_src = it.turns()
    n_calls, n_turns, n_empty = it.call_turns(cpt_source)
    exposures = audit.first_exposures(it) if it.observed else []
    return {
        "item_id": it.item_id,
        "qtype": g.qtype,
        "depth": g.depth,
        "cell": g.cell,
        "reasoning_type": g.reasoning_type,
        "venue": g.venue,
        "consensus_tier": g.consensus_tier,
        "cognitive_skill": g.cognitive_skill,
        "seed_year": g.seed_year,
        "gold_citations": None if g.gold_citations is None else max(g.gold_citations.values(), default=None),
        "observed": it.observed,
        "session_id": it.session.session_id if it.session else None,
        "n_sessions": it.n_sessions,
        "answer": it.answer,
        "correct_letter": g.correct_letter,
        "correct": int(it.correct),
        "termination": it.termination,
        "paper_recall": paper,
        "section_recall": section,
        "gold_papers": list(g.gold_paper_ids),
        "gold_delivered": reached,
        "gold_direct_hit": hit,
        "label_match": label_match(it, gold) if it.observed else None,
        "audit": audit.audit_category(it),
        "contact": audit.contact(it),
        "exposures": exposures,
        "tokens": tokens,
        "tokens_source": tokens_src,
        "turns": turns,
        "turns_source": turns_src,
        "budget": it.budget(),
        "cost_usd": it.cost_usd(),
        "tool_calls": n_calls,
        "assistant_turns": n_turns,
        "turns_with_calls": n_turns - n_empty,
        "turns_without_calls": n_empty,
        "n_calls_logged": len(it.calls),
        "trajectory": [c.tool for c in trajectory(it)],
    }


def _mean(values) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def _rate(k: int, n: int) -> float | None:
    return k / n if n else None


def group_metrics(rows: list[dict], cpt_source: str | None) -> dict:
    n = len(rows)
    correct = sum(r["correct"] for r in rows)
    recalled = [r for r in rows if r["paper_recall"]]
    calls = sum(r["tool_calls"] for r in rows)
    turns = sum(r["assistant_turns"] for r in rows)
    ci = wilson(correct, n)
    return {
        "n": n,
        "n_observed": sum(1 for r in rows if r["observed"]),
        "correct": correct,
        "accuracy": _rate(correct, n),
        "accuracy_ci95": list(ci) if ci else None,
        "paper_recall": _rate(len(recalled), n),
        "paper_recall_n": len(recalled),
        "section_recall": _rate(sum(r["section_recall"] for r in rows), n),
        "section_recall_n": sum(r["section_recall"] for r in rows),
        "conversion": _rate(sum(r["correct"] for r in recalled), len(recalled)),
        "conversion_n": len(recalled),
        "conversion_correct": sum(r["correct"] for r in recalled),
        "calls_per_turn": (calls / turns if turns else None) if cpt_source else None,
        "mean_tokens": _mean(r["tokens"] for r in rows),
        "mean_turns": _mean(r["turns"] for r in rows),
        "mean_budget": _mean(r["budget"] for r in rows),
        "audit": {c: sum(1 for r in rows if r["audit"] == c) for c in audit.CATEGORIES},
    }


#: The group of items whose optional field is empty (the importer stores "" and unknown values as NULL).
UNKNOWN = "unknown"


def by(rows: list[dict], key: str, cpt_source: str | None, order: tuple = ()) -> dict:
    """Metrics per value of ``key``: the values of ``order`` first, then the others sorted, "unknown" last.

    Every item is in exactly one group: an empty value is "unknown", never dropped.
    """
    groups: dict = {}
    for r in rows:
        value = r[key]
        groups.setdefault(UNKNOWN if value is None or value == "" else str(value), []).append(r)
    keys = [k for k in order if k in groups and k != UNKNOWN]
    keys += sorted(k for k in groups if k not in keys and k != UNKNOWN)
    keys += [UNKNOWN] if UNKNOWN in groups else []
    return {k: group_metrics(groups[k], cpt_source) for k in keys}


def breakdowns(rows: list[dict], cpt_source: str | None) -> dict:
    return {
        "overall": group_metrics(rows, cpt_source),
        "by_type": by(rows, "qtype", cpt_source, ("ST", "MT")),
        "by_cell": {c: group_metrics([r for r in rows if r["cell"] == c], cpt_source) for c in CELLS},
        "by_reasoning_type": by(rows, "reasoning_type", cpt_source),
        "by_venue": by(rows, "venue", cpt_source),
        "by_consensus_tier": by(rows, "consensus_tier", cpt_source, ("gold", "silver", "bronze")),
        "by_cognitive_skill": by(rows, "cognitive_skill", cpt_source),
    }


def calls_per_turn(rows: list[dict], cpt_source: str | None) -> dict:
    """Tool calls the model emitted / assistant turns (SPEC 7), pooled; turns without calls are in the denominator."""
    calls = sum(r["tool_calls"] for r in rows)
    turns = sum(r["assistant_turns"] for r in rows)
    measured = bool(cpt_source and turns)
    return {
        "measured": measured,
        "source": cpt_source,
        "value": calls / turns if measured else None,
        "tool_calls": calls if cpt_source else None,
        "assistant_turns": turns if cpt_source else None,
        "turns_with_calls": sum(r["turns_with_calls"] for r in rows) if cpt_source else None,
        "turns_without_calls": sum(r["turns_without_calls"] for r in rows) if cpt_source else None,
    }


def resources(rows: list[dict]) -> dict:
    n = len(rows)
    term = Counter(r["termination"] for r in rows)
    obs = [r for r in rows if r["observed"]]

    def dist(key):
        vals = sorted(r[key] for r in obs if r[key] is not None)
        if not vals:
            return {"measured": False, "n": 0, "mean": None, "median": None, "max": None, "sources": []}
        m = len(vals)
        return {
            "measured": True,
            "n": m,
            "mean": sum(vals) / m,
            "median": (vals[(m - 1) // 2] + vals[m // 2]) / 2,
            "max": vals[-1],
            "sources": sorted({r.get(key + "_source") for r in obs if r.get(key + "_source")}),
        }

    budget = dist("budget")
    budget.pop("sources")
    return {
        "tokens": dist("tokens"),
        "turns": dist("turns"),
        "budget": budget,
        "termination_counts": dict(sorted(term.items())),
        "pct_token_cap": _rate(term.get("token_limit", 0), n),
        "pct_turn_cap": _rate(term.get("max_turns", 0), n),
        "pct_budget": _rate(term.get("budget", 0), n),
        "pct_no_submission": _rate(sum(1 for r in rows if r["answer"] is None), n),
    }


def failure_attribution(items: list[ItemOutcome]) -> dict:
    wrong = [it for it in items if not it.correct]
    counts: Counter = Counter()
    for it in wrong:
        idx = it.predicted_index
        if idx is None or not (0 <= idx < max(it.gold.n_options, 1)):
            counts["no_answer"] += 1
            continue
        kinds = it.gold.distractor_types
        kind = kinds[idx] if kinds and idx < len(kinds) and kinds[idx] else "unknown"
        counts[kind] += 1
    n = len(wrong)
    # same_paper (right paper, wrong passage) is listed whenever the run's items have such a distractor.
    offered = {k for it in items for k in (it.gold.distractor_types or [])}
    order = [
        "seed_only",
        "wrong_paper",
        *(["same_paper"] if "same_paper" in offered else []),
        "no_context",
        "unknown",
        "no_answer",
    ]
    keys = order + sorted(k for k in counts if k not in order)
    return {
        "n_wrong": n,
        "counts": {k: counts.get(k, 0) for k in keys},
        "rates": {k: _rate(counts.get(k, 0), n) for k in keys},
    }


def position_bias(items: list[ItemOutcome]) -> dict:
    pred = Counter(it.answer if it.answer in set(LETTERS) else "none" for it in items)
    corr = Counter(it.gold.correct_letter for it in items)
    acc = {}
    for letter in LETTERS:
        group = [it for it in items if it.gold.correct_letter == letter]
        acc[letter] = {"n": len(group), "accuracy": _rate(sum(it.correct for it in group), len(group))}
    return {
        "predicted_distribution": {k: pred.get(k, 0) for k in list(LETTERS) + ["none"]},
        "correct_distribution": {k: corr.get(k, 0) for k in LETTERS},
        "accuracy_by_correct_position": acc,
    }


def budget_views(rows: list[dict]) -> dict:
    n_correct = sum(r["correct"] for r in rows)
    obs = [r for r in rows if r["observed"]]
    points = sum(r["budget"] or 0 for r in obs)
    token_vals = [r["tokens"] for r in obs if r["tokens"] is not None]
    tokens_measured = bool(obs) and len(token_vals) == len(obs)
    usd = [r["cost_usd"] for r in obs if r["cost_usd"] is not None]
    usd_measured = bool(obs) and len(usd) == len(obs)
    bands: dict = {}
    for lo, hi in BUDGET_BANDS:
        name = f"{lo}+" if hi is None else f"{lo}-{hi}"
        group = [r for r in obs if r["budget"] is not None and r["budget"] >= lo and (hi is None or r["budget"] <= hi)]
        bands[name] = {"n": len(group), "accuracy": _rate(sum(r["correct"] for r in group), len(group))}
    return {
        "points_total": points,
        "points_per_correct": points / n_correct if n_correct else None,
        "tokens_total": sum(token_vals) if tokens_measured else None,
        "tokens_per_correct": (sum(token_vals) / n_correct if n_correct else None) if tokens_measured else None,
        "usd_total": sum(usd) if usd_measured else None,
        "usd_per_correct": (sum(usd) / n_correct if n_correct else None) if usd_measured else None,
        "accuracy_by_budget_band": bands,
    }
