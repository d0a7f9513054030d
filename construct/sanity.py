"""Stage 6, the structural sanity check: the six codes of the published pipeline, the first that applies retires the item.

The neighbourhood is the one the release will hold: the seed, its first 30
references and theirs (``agenthop.corpus.release.MAX_REFS``), so a chain
through a later reference fails here rather than in the importer.
"""

from __future__ import annotations

from agenthop.corpus.release import MAX_REFS

CODES = (
    "SEED_NO_REFS",
    "BRIDGE_MISSING",
    "NO_BRIDGE_PATH",
    "TERMINAL_GHOST",
    "TERMINAL_NO_CONTENT",
    "TARGET_GHOST",
    "TARGET_NO_CONTENT",
)


def window(view, pid: str) -> list[str]:
    """The references of ``pid`` the release keeps (its first 30): chains, siblings and this check all use this window."""
    return [c for c, _ in view.references(pid)[:MAX_REFS]]


def problem(view, cand: dict) -> str | None:
    seed_refs = window(view, cand["seed"])
    if not seed_refs:
        return "SEED_NO_REFS"
    if cand["bridge"] and cand["bridge"] not in seed_refs:
        return "BRIDGE_MISSING"
    via_refs = window(view, cand["bridge"]) if cand["bridge"] else seed_refs
    if any(t not in via_refs for t in cand["targets"]):
        return "NO_BRIDGE_PATH"
    prefix = "TERMINAL" if len(cand["targets"]) == 1 else "TARGET"
    for t in cand["targets"]:
        paper = view.papers.get(t)
        if paper is None or not paper.title.strip():
            return f"{prefix}_GHOST"
        if not view.sections(t):
            return f"{prefix}_NO_CONTENT"
    return None


def run_sanity(view, cands: list[dict]) -> list[dict]:
    out = []
    for cand in cands:
        code = problem(view, cand)
        out.append({**cand, "drop": {"reason": code, "detail": ""}} if code else cand)
    return out
