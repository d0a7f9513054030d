"""The read-first gate (ablation ``--read-first``).

After every search_papers or get_references result, the agent's next action
must be an inspection (list_sections, read_section or get_paper_info) of a
paper from that result list. If it is not, the runner does not execute it:
it lists the sections of the top-ranked candidate that has text and has not
been read yet, reads its most relevant section, and hands that back as the
tool output of the agent's call. Decisions (documented in docs/runner.md):

- ``think`` is not an action: the gate stays armed and judges the next call;
- ``submit_answer`` is never replaced (the gate disarms);
- no substitution when no listed paper has unread text, or when the budget
  left cannot pay for list_sections + read_section (1 + 5 points).
"""

from __future__ import annotations

from agenthop.server.tools import TOOLS
from agenthop.textmatch import header_score, reasoning_cue

INSPECTIONS = frozenset({"list_sections", "read_section", "get_paper_info"})
LISTINGS = frozenset({"search_papers", "get_references"})
FORCED_COST = TOOLS["list_sections"].cost + TOOLS["read_section"].cost


class ReadFirstGate:
    def __init__(self, question: str = ""):
        self.question = question
        self.cue = reasoning_cue(question)
        self.listed: list[dict] | None = None  # the last result list, in rank order, while armed
        self.read: set[str] = set()  # papers with a delivered read_section

    def observe(self, name: str, args: dict, structured: dict) -> None:
        """Update the gate after an executed call (by the agent or the gate)."""
        outcome = structured.get("outcome")
        if name == "read_section" and outcome == "ok":
            self.read.add(str(args.get("paper_id")))
        if name in LISTINGS and outcome == "ok":
            rows = structured.get("results") if name == "search_papers" else structured.get("references")
            rows = sorted(rows or [], key=lambda r: r.get("rank") or 0)
            self.listed = rows or None

    def decide(self, name: str, args: dict, budget_remaining: int | None) -> str | None:
        """None: let the call through. Otherwise the paper ID to inspect instead of it."""
        if self.listed is None or name == "think":
            return None
        listed, self.listed = self.listed, None  # one decision per listing
        if name == "submit_answer":
            return None
        if name in INSPECTIONS and str(args.get("paper_id")) in {str(r.get("paper_id")) for r in listed}:
            return None
        if budget_remaining is not None and budget_remaining < FORCED_COST:
            return None
        for row in listed:
            if row.get("has_text") and str(row.get("paper_id")) not in self.read:
                return str(row["paper_id"])
        return None

    def best_section(self, sections: list[dict]) -> dict | None:
        if not sections:
            return None
        return max(
            sections, key=lambda s: (header_score(s.get("header", ""), self.question, self.cue), -sections.index(s))
        )
