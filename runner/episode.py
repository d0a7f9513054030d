"""One attempt at one item: turn and token counters, metered tool calls with ``_meta``, turn records.

Every agent (raw, sdk, baseline) drives its session through an Episode, so
``_meta``, the read-first gate, answer/ended tracking and the per-turn records
of runner.jsonl are the same for all of them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from agenthop.runner.readfirst import ReadFirstGate
from agenthop.runner.records import RecordWriter
from agenthop.runner.session import SessionInfo, ToolResult
from agenthop.server.caps import Caps
from agenthop.server.log import Turn
from agenthop.server.sessions import META_FORCED, META_TOKENS, META_TURN

Issue = Callable[[str, dict, dict], Awaitable[ToolResult]]


class TokenLimitReached(Exception):
    """The cumulative token count passed the cap (raised from SDK hooks)."""


class SessionOver(Exception):
    """The server ended the session (answer or budget); stop the agent."""


def _readable(call: Mapping[str, Any]) -> Mapping[str, Any]:
    """A tool call as emitted; JSON-string arguments that parse to an object are stored as that object."""
    args = call.get("arguments")
    if isinstance(args, str):
        try:
            parsed = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict):
            call = {**call, "arguments": parsed}
    return call


class Episode:
    def __init__(
        self,
        *,
        run: str,
        item_id: str,
        attempt: int,
        session: SessionInfo,
        caps: Caps,
        writer: RecordWriter,
        issue: Issue,
        gate: ReadFirstGate | None = None,
    ):
        self.run = run
        self.item_id = item_id
        self.attempt = attempt
        self.session = session
        self.caps = caps
        self.writer = writer
        self.issue = issue
        self.gate = gate
        self.turn = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.cached_tokens = 0
        self.cumulative = 0
        self.budget_used = 0
        self.budget_remaining: int | None = caps.budget
        self.answer: str | None = None
        self.ended = False
        self.tool_calls = 0
        self.forced_calls = 0
        self.started = time.time()
        self._pending: dict | None = None

    @property
    def session_id(self) -> str:
        return self.session.session_id

    # --- turns ------------------------------------------------------------------

    def start_turn(
        self,
        *,
        prompt_tokens: int,
        completion_tokens: int,
        cached_tokens: int,
        tool_calls: Sequence[Mapping[str, Any]],  # each {id, name, arguments}
        latency_ms: float,
        retries: int = 0,
        transient_errors: list[str] | None = None,
        error: str | None = None,
    ) -> None:
        """Count one model response and open its turn record.

        The record stays open so that later notes (errors, read-first substitutions) land in it; it is
        written at the next turn, at the end of the attempt, or as soon as the server ends the session,
        so the turn holding ``submit_answer`` reaches runner.jsonl right after the server acknowledged it.
        """
        self.flush_turn()
        self.turn += 1
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        self.cached_tokens += cached_tokens
        self.cumulative += prompt_tokens + completion_tokens
        self._pending = {
            "kind": "turn",
            "run": self.run,
            "item_id": self.item_id,
            "session_id": self.session_id,
            "attempt": self.attempt,
            "turn": self.turn,
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "cached_tokens": cached_tokens,
            "cumulative_tokens": self.cumulative,
            "tool_calls": [_readable(c) for c in tool_calls],
            "latency_ms": round(latency_ms, 1),
            "retries": retries,
            "error": error,
            "time": time.time(),
        }
        if transient_errors:
            self._pending["transient_errors"] = transient_errors

    def note_error(self, message: str) -> None:
        if self._pending is not None:
            prev = self._pending.get("error")
            self._pending["error"] = f"{prev}; {message}" if prev else message

    def flush_turn(self) -> None:
        if self._pending is not None:
            self.writer.write(Turn.model_validate(self._pending))
            self._pending = None

    @property
    def over_tokens(self) -> bool:
        return self.caps.max_tokens is not None and self.cumulative > self.caps.max_tokens

    # --- tool calls -------------------------------------------------------------

    def meta(self, forced: bool = False) -> dict:
        meta = {META_TURN: self.turn, META_TOKENS: self.cumulative}
        if forced:
            meta[META_FORCED] = True
        return meta

    async def call(
        self, name: str, args: dict, *, forced: bool = False, meta: dict | None = None, flush_on_end: bool = True
    ) -> ToolResult:
        """Issue one call to the server as is (no gate). When the call ends the session, the open turn
        record is written at once (unless ``flush_on_end`` is false: the caller still has notes to add)."""
        meta = dict(meta) if meta else self.meta(forced)
        if forced:
            meta[META_FORCED] = True
        result = await self.issue(name, args, meta)
        self.tool_calls += 1
        self.forced_calls += forced
        sc = result.structured
        if isinstance(sc.get("budget_used"), int):
            self.budget_used = sc["budget_used"]
            self.budget_remaining = sc.get("budget_remaining")
        if name == "submit_answer" and result.outcome == "ok":
            self.answer = sc.get("answer") or args.get("answer")
        if result.ended:
            self.ended = True
        if self.gate is not None:
            self.gate.observe(name, args, sc)
        if self.ended and flush_on_end:
            self.flush_turn()
        return result

    async def tool(self, name: str, args: dict, meta: dict | None = None) -> ToolResult:
        """A call the agent asked for: goes through the read-first gate when it is on."""
        if self.gate is None or self.ended:
            return await self.call(name, args, meta=meta)
        paper = self.gate.decide(name, args, self.budget_remaining)
        if paper is None:
            return await self.call(name, args, meta=meta)
        return await self._substitute(name, args, paper)

    async def _substitute(self, name: str, args: dict, paper: str) -> ToolResult:
        listing = await self.call("list_sections", {"paper_id": paper}, forced=True, flush_on_end=False)
        assert self.gate is not None  # only the read-first gate substitutes calls
        done: list[dict[str, Any]] = [
            {"name": "list_sections", "arguments": {"paper_id": paper}, "outcome": listing.outcome}
        ]
        parts = [listing.text]
        final = listing
        best = self.gate.best_section(listing.structured.get("sections") or []) if listing.outcome == "ok" else None
        if best is not None and not self.ended:
            read_args = {"paper_id": paper, "section": best.get("alias") or best.get("header")}
            read = await self.call("read_section", read_args, forced=True, flush_on_end=False)
            done.append({"name": "read_section", "arguments": read_args, "outcome": read.outcome})
            parts.append(read.text)
            final = read
        if self._pending is not None:
            self._pending.setdefault("forced", []).append(
                {"replaced": {"name": name, "arguments": args}, "calls": done}
            )
        if self.ended:
            self.flush_turn()
        header = (
            f"[read-first gate] Your call {name}({json.dumps(args, ensure_ascii=False)}) was not executed. "
            f"After a search or reference list, the harness first inspects the top-ranked unread candidate with text "
            f"({paper}); here is what that showed:"
        )
        return ToolResult(
            text=header + "\n\n" + "\n\n".join(parts), structured=dict(final.structured), is_error=False, raw=None
        )
