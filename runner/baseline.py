"""The offline baseline: a deterministic agent with no model and no API key.

It reads the task from the ``research_task`` prompt and works from the tools'
structured results, and from the text content for the text of a section read
(structured content carries a section's identity, not its text). Strategy (docs/runner.md, "baseline"):

1. ``get_references`` of the seed, then ``search_papers`` with the question's content words (top 10);
2. rank the candidates that have text by the overlap of the question's words with their citation
   context (weight 2), title and abstract, plus a bonus for the search rank and for being a
   reference of the seed;
3. candidate by candidate, best first: ``list_sections``, then ``read_section`` of at most two
   sections, ordered by how well their header fits the kind of evidence the question asks for
   (results / setup and hyperparameters / data / introduction and motivation, judged from the
   question's and the options' wording; headers such as references or conclusion are demoted),
   plus the header's overlap with the question; a read that adds a part to the best-covered
   option moves on to the next candidate;
4. stop once some option has every part (multi-target options are ``part; part``) stated verbatim
   in the text read, when the budget (or the turn cap, which keeps one turn for the answer) cannot
   pay for another read, or when the candidates run out;
5. choose the option whose parts were found in the best-ranked papers (parts that appear in the
   seed's citation contexts count against an option; token overlap breaks ties); submit.

One action is one turn (``_meta`` carries the turn; tokens are 0).
"""

from __future__ import annotations

from agenthop.runner.config import RunSettings
from agenthop.runner.episode import Episode
from agenthop.runner.session import McpSession, ToolResult
from agenthop.server.tools import TOOLS, section_body
from agenthop.textmatch import (
    LETTERS,
    contains_phrase,
    content_words,
    header_score,
    normalise,
    overlap,
    parse_task,
    reasoning_cue,
    tokens,
)


class Baseline:
    def __init__(self, ep: Episode, enabled: set[str], task: dict, max_turns: int | None):
        self.ep = ep
        self.enabled = enabled
        self.task = task
        self.max_turns = max_turns
        self.question = task["question"]
        self.qwords = content_words(self.question)
        self.cue = reasoning_cue(self.question, " ".join(task["options"]))
        # Multi-target options join one fact per target with "; ".
        self.parts = [[p.strip() for p in o.split("; ") if p.strip()] or [o] for o in task["options"]]
        self.n_parts = max(len(p) for p in self.parts)
        self.cands: dict[str, dict] = {}
        self.listed: dict[str, list[dict]] = {}  # paper -> sections not read yet, best first
        self.found: dict[str, float] = {}  # option part -> weight of the best paper stating it
        self.seed_text = ""
        self.n = 0

    # --- actions ----------------------------------------------------------------

    def can(self, name: str) -> bool:
        if name not in self.enabled or self.ep.ended:
            return False
        if self.max_turns is not None and self.ep.turn >= self.max_turns - 1 and name != "submit_answer":
            return False  # keep the last turn for submit_answer
        remaining = self.ep.budget_remaining
        return remaining is None or remaining >= TOOLS[name].cost

    async def act(self, name: str, args: dict) -> ToolResult:
        self.n += 1
        self.ep.start_turn(
            prompt_tokens=0,
            completion_tokens=0,
            cached_tokens=0,
            tool_calls=[{"id": f"baseline_{self.n}", "name": name, "arguments": args}],
            latency_ms=0.0,
        )
        return await self.ep.tool(name, args)

    # --- candidates -------------------------------------------------------------

    def add(self, row: dict, source: str, context: str = "") -> None:
        pid = str(row.get("paper_id"))
        if pid == self.task["seed"]:
            return
        c = self.cands.setdefault(
            pid,
            {
                "paper_id": pid,
                "title": "",
                "abstract": "",
                "context": "",
                "has_text": False,
                "ref": False,
                "search_rank": None,
            },
        )
        c["title"] = row.get("title") or c["title"]
        c["abstract"] = row.get("abstract") or c["abstract"]
        c["context"] = " ".join(x for x in (c["context"], context or "") if x)
        c["has_text"] = c["has_text"] or bool(row.get("has_text"))
        if source == "ref":
            c["ref"] = True
        elif c["search_rank"] is None:
            c["search_rank"] = int(row.get("rank") or 99)

    def score(self, c: dict) -> float:
        words = self.qwords
        return (
            2.0 * overlap(words, c["context"])
            + overlap(words, c["title"])
            + overlap(words, c["abstract"])
            + (1.0 / c["search_rank"] if c["search_rank"] else 0.0)
            + (0.3 if c["ref"] else 0.0)
        )

    def ranked(self) -> list[dict]:
        pool = [c for c in self.cands.values() if c["has_text"]]
        return sorted(pool, key=lambda c: (-self.score(c), c["paper_id"]))

    # --- evidence ---------------------------------------------------------------

    def note_text(self, paper: str, text_norm: str) -> None:
        order = [c["paper_id"] for c in self.ranked()]
        weight = 1.0 / (1 + order.index(paper)) if paper in order else 0.2
        for parts in self.parts:
            for part in parts:
                if contains_phrase(text_norm, part):
                    self.found[part] = max(self.found.get(part, 0.0), weight)

    def option_score(self, i: int) -> float:
        score = 0.0
        for part in self.parts[i]:
            if self.seed_text and contains_phrase(self.seed_text, part):
                score -= 3.0
            score += self.found.get(part, 0.0)
        return score

    def complete(self) -> bool:
        """Some option has every part stated in a paper read (not the seed)."""
        return any(all(p in self.found for p in parts) for parts in self.parts)

    def choose(self) -> int:
        scored = []
        for i in range(len(self.parts)):
            tok = max((overlap(set(tokens(p)), " ".join(self.found)) for p in self.parts[i]), default=0.0)
            scored.append((self.option_score(i), 0.01 * tok, -i))
        return -max(scored)[2]

    async def read_next(self, paper: str) -> bool:
        """Read the best unread section of ``paper`` (listing it first). False if nothing left to read."""
        if paper not in self.listed:
            if not self.can("list_sections"):
                return False
            listing = await self.act("list_sections", {"paper_id": paper})
            sections = listing.structured.get("sections") or [] if listing.outcome == "ok" else []
            self.listed[paper] = sorted(
                sections, key=lambda s: (-header_score(s.get("header", ""), self.question, self.cue), sections.index(s))
            )
        if not self.listed[paper] or not self.can("read_section"):
            return False
        best = self.listed[paper].pop(0)
        read = await self.act("read_section", {"paper_id": paper, "section": best.get("alias") or best.get("header")})
        body = section_body(read.text) if read.outcome == "ok" else None
        if body:
            self.note_text(paper, normalise(body))
        return True

    def targets_found(self) -> int:
        best = 0
        for parts in self.parts:
            best = max(best, sum(1 for p in parts if p in self.found))
        return best

    async def run(self) -> None:
        seed = self.task["seed"]
        if self.can("get_references"):
            res = await self.act("get_references", {"paper_id": seed})
            for row in res.structured.get("references") or []:
                if row.get("context"):
                    self.seed_text += " " + normalise(row["context"])
                self.add(row, "ref", row.get("context") or "")
        if self.can("search_papers") and self.qwords:
            res = await self.act("search_papers", {"query": " ".join(self.qwords[:24]), "top_k": 10})
            for row in res.structured.get("results") or []:
                self.add(row, "search")
        ranked = [c["paper_id"] for c in self.ranked()]
        # Two reads per candidate at most, best candidates first; stop once an option is fully supported.
        reads: dict[str, int] = {}
        for paper in ranked:
            while not self.ep.ended and not self.complete() and reads.get(paper, 0) < 2:
                before = self.targets_found()
                if not await self.read_next(paper):
                    break
                reads[paper] = reads.get(paper, 0) + 1
                if self.targets_found() > before:
                    break  # this paper gave its fact: move on to the next target
            if self.ep.ended or self.complete() or not self.can("read_section"):
                break
        if self.ep.ended:
            return
        choice = self.choose()
        if "submit_answer" in self.enabled:
            self.n += 1
            self.ep.start_turn(
                prompt_tokens=0,
                completion_tokens=0,
                cached_tokens=0,
                tool_calls=[
                    {"id": f"baseline_{self.n}", "name": "submit_answer", "arguments": {"answer": LETTERS[choice]}}
                ],
                latency_ms=0.0,
            )
            await self.ep.tool(
                "submit_answer",
                {"answer": LETTERS[choice], "reasoning": "offline baseline: the option stated in the text read"},
            )


async def run_baseline(ep: Episode, mcp: McpSession, settings: RunSettings) -> str | None:
    task = parse_task(await mcp.task_prompt())
    enabled = {t.name for t in await mcp.list_tools()}
    max_turns = 1 if settings.closed_book else settings.caps.max_turns
    agent = Baseline(ep, enabled, task, max_turns)
    await agent.run()
    if ep.ended:
        return None
    return "max_turns"
