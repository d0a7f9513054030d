"""Sessions: one agent attempt at one item (or an explore session), its budget, and its metered calls.

Every call goes through ``Session.call``, which applies SPEC 4.2's rules in one
place: refuse calls on an ended session, refuse unknown/disabled tools and bad
arguments at no cost, reject calls the budget cannot pay for (two in a row end
the session), charge executed calls whatever they found, write the checkpoint
record durably, and only then hand back the result.
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass, field

from pydantic import ValidationError

from agenthop.server.checkpoint import CheckpointLog
from agenthop.server.search import PARAMETERS as SEARCH_PARAMETERS
from agenthop.server.tools import TOOLS, Scope, ToolOutput

META_TURN = "agenthop/turn"
META_TOKENS = "agenthop/tokens"
META_FORCED = "agenthop/forced"
REJECTIONS_TO_END = 2


@dataclass(frozen=True)
class Caps:
    """Per-session limits; None means unlimited."""

    budget: int | None = 30
    max_turns: int | None = 20
    max_tokens: int | None = 200_000

    def as_dict(self) -> dict:
        return {"budget": self.budget, "max_turns": self.max_turns, "max_tokens": self.max_tokens}


@dataclass
class CallResult:
    """What the agent gets back: text (with status line), structured content, and whether it is an error."""

    text: str
    data: dict
    is_error: bool


def _int_or_none(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def meta_counts(meta: dict) -> tuple[int | None, int | None]:
    """(turn, cumulative tokens) from a request's _meta; None for whatever the client did not send properly."""
    return _int_or_none(meta.get(META_TURN)), _int_or_none(meta.get(META_TOKENS))


def _clip(text: str, limit: int = 100) -> str:
    """Hostile names (a 1 MB tool name or argument key) are not echoed back in full."""
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def budget_spent_notice(*, explore: bool) -> str:
    """Appended after a result once the budget is spent: bracketed, so it cannot be read as part of the paper."""
    if explore:
        return "[Budget spent: calls that cost points will be rejected from now on.]"
    return "[Budget spent: you must call submit_answer now with your best answer.]"


def budget_rejection(tool: str, cost: int, remaining: int, *, ends_session: bool, explore: bool) -> str:
    text = f"Rejected: {tool} costs {cost} point(s) and only {remaining} remain. Nothing was charged."
    if ends_session:
        return text + " This is the second budget-rejected call in a row, so the session has ended (budget); submit_answer is no longer accepted."
    if explore:
        return text + " Only free calls (think) can still run; another rejected call in a row ends the session."
    return text + " Call submit_answer now with your best answer; another rejected call in a row ends the session."


def _validation_message(tool: str, exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = _clip(".".join(str(p) for p in err["loc"])) or "arguments"
        parts.append(f"{where}: {err['msg']}")
    return f"Invalid arguments for {tool}: " + "; ".join(parts) + ". Nothing was charged; call it again with valid arguments."


@dataclass
class Session:
    session_id: str
    scope: Scope
    log: CheckpointLog
    caps: Caps
    run: str | None = None
    disabled_tools: frozenset[str] = frozenset()
    client: dict = field(default_factory=dict)
    transport: str = "http"
    spent: int = 0
    rejections_in_a_row: int = 0
    termination: str | None = None
    answer: str | None = None
    _seq: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def item_id(self) -> str | None:
        return self.scope.item_id

    @property
    def ended(self) -> bool:
        return self.termination is not None

    @property
    def remaining(self) -> int | None:
        return None if self.caps.budget is None else self.caps.budget - self.spent

    def enabled_tools(self) -> list[str]:
        """Tools this session offers: all but the disabled ones, and no submit_answer in explore mode."""
        return [name for name in TOOLS if name not in self.disabled_tools
                and not (name == "submit_answer" and self.item_id is None)]

    # --- records ----------------------------------------------------------------

    def _write(self, kind: str, **fields) -> None:
        """Write the next record; the sequence number advances only once it is on disk."""
        self.log.write({"kind": kind, "run": self.run, "session_id": self.session_id, "item_id": self.item_id,
                        "seq": self._seq, "time": time.time(), **fields})
        self._seq += 1

    def start(self) -> None:
        with self._lock:
            self._write(
                "session_start",
                mode="explore" if self.item_id is None else "item",
                caps=self.caps.as_dict(),
                disabled_tools=sorted(self.disabled_tools),
                client=self.client,
                transport=self.transport,
                corpus=self.scope.corpus.identity,
                search=SEARCH_PARAMETERS,
            )

    def end(self, termination: str, reason: str | None = None) -> bool:
        """End the session from outside (runner caps, errors). False if it had already ended."""
        with self._lock:
            if self.ended:
                return False
            self._end(termination, reason)
            return True

    def _end(self, termination: str, reason: str | None = None, answer: str | None = None) -> None:
        self._write("session_end", termination=termination, answer=answer, budget_used=self.spent, reason=reason)
        self.termination, self.answer = termination, answer

    # --- calls ------------------------------------------------------------------

    def status_line(self, turn: int | None, tokens: int | None) -> str:
        parts = []
        if turn is not None:
            parts.append(f"Turn: {turn}")
        if tokens is not None:
            parts.append(f"Tokens used: {tokens:,}")
        if self.caps.budget is None:
            parts.append(f"Budget used: {self.spent} (no limit)")
        else:
            parts.append(f"Budget used: {self.spent}/{self.caps.budget} ({self.remaining} left)")
        return "[" + " | ".join(parts) + "]"

    def call(self, tool_name: str, arguments: object, meta: dict | None = None) -> CallResult:
        meta = meta or {}
        turn, tokens = meta_counts(meta)
        with self._lock:
            started = time.perf_counter()
            before = self.spent
            tool = TOOLS.get(tool_name)
            output, executed = self._dispatch(tool_name, tool, arguments)
            cost = tool.cost if executed else 0
            latency_ms = (time.perf_counter() - started) * 1000
            after = before + cost
            remaining = None if self.caps.budget is None else self.caps.budget - after

            text = output.text
            if executed and output.answer is None and remaining is not None and remaining <= 0:
                text += "\n\n" + budget_spent_notice(explore=self.item_id is None)
            # Durable first: the session's state changes only once its record is on disk.
            self._write(
                "call", tool=tool_name, arguments=arguments if isinstance(arguments, dict) else {"_raw": repr(arguments)},
                turn=turn, tokens=tokens, forced=meta.get(META_FORCED) is True,
                outcome=output.outcome, executed=executed, cost=cost, budget_before=before, budget_after=after,
                latency_ms=round(latency_ms, 3), exposed=output.exposed, delivered=output.delivered,
                output_chars=len(text), message=None if output.outcome == "ok" else output.text,
            )
            self.spent = after
            if output.outcome == "budget_rejected":
                self.rejections_in_a_row += 1
            elif executed:
                self.rejections_in_a_row = 0
            if output.answer is not None:
                self._end("answer", answer=output.answer)
            elif self.rejections_in_a_row >= REJECTIONS_TO_END and not self.ended:
                self._end("budget", "two budget-rejected calls in a row")
            data = {**output.data, **self.status(tool_name, output.outcome, cost, turn, tokens)}
            return CallResult(f"{text}\n\n{self.status_line(turn, tokens)}", data, output.outcome != "ok")

    def status(self, tool_name: str, outcome: str, cost: int, turn: int | None, tokens: int | None) -> dict:
        """The status keys every result's structured content carries."""
        return {"tool": _clip(tool_name), "outcome": outcome, "cost": cost, "budget_used": self.spent,
                "budget_total": self.caps.budget, "budget_remaining": self.remaining, "turn": turn, "tokens": tokens,
                "session_ended": self.ended}

    def _dispatch(self, name: str, tool, arguments: object) -> tuple[ToolOutput, bool]:
        """Run the call if the rules allow; return its output and whether it was executed (charged)."""
        if self.ended:
            why = "an answer was submitted" if self.termination == "answer" else f"it ended ({self.termination})"
            return ToolOutput("session_ended", f"This session is over: {why}. No further calls are accepted.",
                              {"error": "session ended"}), False
        if name not in self.enabled_tools():
            if tool is None:
                what = "does not exist"
            elif name in self.disabled_tools:
                what = "is disabled in this session"
            else:
                what = "is not offered in explore mode (there is no question to answer)"
            known = ", ".join(self.enabled_tools())
            return ToolOutput("invalid", f"Tool '{_clip(name)}' {what}. Available tools: {known}.", {"error": f"tool {what}"}), False
        try:
            args = tool.args.model_validate(arguments)
        except ValidationError as exc:
            return ToolOutput("invalid", _validation_message(name, exc), {"error": "invalid arguments"}), False
        if self.remaining is not None and tool.cost > self.remaining:
            text = budget_rejection(name, tool.cost, self.remaining, ends_session=self.rejections_in_a_row + 1 >= REJECTIONS_TO_END,
                                    explore=self.item_id is None)
            return ToolOutput("budget_rejected", text, {"error": "insufficient budget"}), False
        return tool.run(self.scope, args), True


class SessionRegistry:
    """The live sessions of one server process, keyed by unguessable IDs."""

    def __init__(self, log: CheckpointLog, defaults: Caps):
        self.log = log
        self.defaults = defaults
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def create(self, scope: Scope, *, run: str | None = None, caps: Caps | None = None,
               disabled_tools: frozenset[str] = frozenset(), client: dict | None = None,
               transport: str = "http", session_id: str | None = None) -> Session:
        session = Session(
            session_id=session_id or secrets.token_urlsafe(24), scope=scope, log=self.log,
            caps=caps or self.defaults, run=run, disabled_tools=disabled_tools, client=client or {}, transport=transport,
        )
        session.start()
        with self._lock:
            self._sessions[session.session_id] = session
        return session

    def log_sessionless_call(self, session_id: str | None, tool: str, arguments: object, message: str) -> None:
        """Record a call refused because it named no session, or an unknown one (no run label: no run owns it)."""
        self.log.write({
            "kind": "call", "run": None, "session_id": session_id[:200] if session_id else None, "item_id": None,
            "seq": None, "time": time.time(), "tool": tool, "arguments": arguments if isinstance(arguments, dict) else {},
            "turn": None, "tokens": None, "forced": False, "outcome": "invalid", "executed": False, "cost": 0,
            "budget_before": None, "budget_after": None, "latency_ms": 0.0, "exposed": [], "delivered": None,
            "output_chars": len(message), "message": message,
        })

    def get(self, session_id: str) -> Session | None:
        with self._lock:
            return self._sessions.get(session_id)

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)
