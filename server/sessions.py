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


def _clip(text: str, limit: int = 100) -> str:
    """Hostile names (a 1 MB tool name or argument key) are not echoed back in full."""
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


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
        return [name for name in TOOLS if name not in self.disabled_tools]

    # --- records ----------------------------------------------------------------

    def _record(self, kind: str, **fields) -> dict:
        record = {"kind": kind, "run": self.run, "session_id": self.session_id, "item_id": self.item_id,
                  "seq": self._seq, "time": time.time(), **fields}
        self._seq += 1
        return record

    def start(self) -> None:
        with self._lock:
            self.log.write(self._record(
                "session_start",
                mode="explore" if self.item_id is None else "item",
                caps=self.caps.as_dict(),
                disabled_tools=sorted(self.disabled_tools),
                client=self.client,
                transport=self.transport,
                corpus=self.scope.corpus.identity,
                search=SEARCH_PARAMETERS,
            ))

    def end(self, termination: str, reason: str | None = None) -> bool:
        """End the session from outside (runner caps, errors). False if it had already ended."""
        with self._lock:
            if self.ended:
                return False
            self._end(termination, reason)
            return True

    def _end(self, termination: str, reason: str | None = None) -> None:
        self.termination = termination
        self.log.write(self._record("session_end", termination=termination, answer=self.answer,
                                    budget_used=self.spent, reason=reason))

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
        turn, tokens = _int_or_none(meta.get(META_TURN)), _int_or_none(meta.get(META_TOKENS))
        with self._lock:
            started = time.perf_counter()
            before = self.spent
            tool = TOOLS.get(tool_name)
            output, executed = self._dispatch(tool_name, tool, arguments)
            cost = tool.cost if executed else 0
            self.spent += cost
            if output.outcome == "budget_rejected":
                self.rejections_in_a_row += 1
            elif executed:
                self.rejections_in_a_row = 0
            latency_ms = (time.perf_counter() - started) * 1000

            text = output.text
            if executed and output.answer is None and self.remaining is not None and self.remaining <= 0:
                text += "\nYour budget is spent. You must call submit_answer now with your best answer."
            data = {
                **output.data,
                "tool": _clip(tool_name), "outcome": output.outcome, "cost": cost,
                "budget_used": self.spent, "budget_total": self.caps.budget, "budget_remaining": self.remaining,
                "turn": turn, "tokens": tokens,
            }
            self.log.write(self._record(
                "call", tool=tool_name, arguments=arguments if isinstance(arguments, dict) else {"_raw": repr(arguments)},
                turn=turn, tokens=tokens, forced=meta.get(META_FORCED) is True,
                outcome=output.outcome, executed=executed, cost=cost, budget_before=before, budget_after=self.spent,
                latency_ms=round(latency_ms, 3), exposed=output.exposed, delivered=output.delivered,
                output_chars=len(text), message=None if output.outcome == "ok" else output.text,
            ))
            if output.answer is not None:
                self.answer = output.answer
                self._end("answer")
            elif self.rejections_in_a_row >= REJECTIONS_TO_END and not self.ended:
                self._end("budget", "two budget-rejected calls in a row")
            data["session_ended"] = self.ended
            return CallResult(f"{text}\n\n{self.status_line(turn, tokens)}", data, output.outcome != "ok")

    def _dispatch(self, name: str, tool, arguments: object) -> tuple[ToolOutput, bool]:
        """Run the call if the rules allow; return its output and whether it was executed (charged)."""
        if self.ended:
            why = "an answer was submitted" if self.termination == "answer" else f"it ended ({self.termination})"
            return ToolOutput("session_ended", f"This session is over: {why}. No further calls are accepted.",
                              {"error": "session ended"}), False
        if tool is None or name in self.disabled_tools:
            known = ", ".join(self.enabled_tools())
            what = "is disabled in this session" if tool else "does not exist"
            return ToolOutput("invalid", f"Tool '{_clip(name)}' {what}. Available tools: {known}.", {"error": f"tool {what}"}), False
        try:
            args = tool.args.model_validate(arguments)
        except ValidationError as exc:
            return ToolOutput("invalid", _validation_message(name, exc), {"error": "invalid arguments"}), False
        if self.remaining is not None and tool.cost > self.remaining:
            text = (f"Rejected: {name} costs {tool.cost} point(s) and only {self.remaining} remain. "
                    "Nothing was charged. Call submit_answer now with your best answer.")
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

    def get(self, session_id: str) -> Session | None:
        with self._lock:
            return self._sessions.get(session_id)

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)
