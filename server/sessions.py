"""Sessions: one agent attempt at one item (or an explore session), its budget, and its metered calls.

Every call goes through ``Session.call``, which applies SPEC 4.2's rules in one
place: refuse calls on an ended session, refuse unknown/disabled tools and bad
arguments at no cost, reject calls the budget cannot pay for (two in a row end
the session), charge executed calls whatever they found, write the checkpoint
record durably, and only then hand back the result. A call whose record cannot
be written (a locked or full log) is refused instead: nothing changes and
nothing is charged, so no call ever takes effect unlogged.

What a call can store is bounded unless it is a valid call of a known session
(whose size the tools' own limits bound): the arguments of a call with no
session, an unknown session, an unknown tool or invalid arguments are clipped,
and the record says so (``arguments_altered``).

The registry keeps in memory only the LIVE_KEPT most recently used live
sessions and the ENDED_KEPT most recently ended ones, so nobody can grow the
process by creating sessions and abandoning them. A session that left memory is
rebuilt from its log records when a request names it: an ended one from any
process, a live one only if this process minted its ID (a live session of
another process sharing the log is not ours to write to).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import secrets
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import ValidationError

from agenthop.server.caps import Caps
from agenthop.server.corpus_watch import CorpusWatch
from agenthop.server.explore.tools import EXPLORE_ONLY, tool_for
from agenthop.server.log import jsontext
from agenthop.server.log.checkpoint import CheckpointLog, LogError
from agenthop.server.log.records import (
    Answer,
    ArgumentsAltered,
    CallRecord,
    Delivered,
    Exposed,
    SessionEnd,
    SessionStart,
    Termination,
    Transport,
)
from agenthop.server.log.records import Caps as RecordCaps
from agenthop.server.search import PARAMETERS as SEARCH_PARAMETERS
from agenthop.server.tools import TOOLS, Scope, ToolOutput

log = logging.getLogger("agenthop.server")

META_TURN = "agenthop/turn"
META_TOKENS = "agenthop/tokens"
META_FORCED = "agenthop/forced"
REJECTIONS_TO_END = 2
ENDED_KEPT = 256  # ended sessions kept in memory; older ones are answered from the log
LIVE_KEPT = 1024  # live sessions kept in memory, least recently used out first; they come back from the log
CORPUS_FREE_TOOLS = frozenset({"think", "submit_answer"})  # they still work when the corpus has failed
# Bounds on what a call that is not a valid call of a known session can store.
STORED_ARGS_CHARS = 2_000  # arguments up to this size (as JSON) are stored whole
CLIP_STRING, CLIP_ENTRIES, CLIP_DEPTH = 200, 20, 4
CLIP_NAME = 200  # tool names and session IDs
MAX_NESTING = 64  # deeper arguments are never stored as sent


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
        return (
            text
            + " This is the second budget-rejected call in a row, so the session has ended (budget); submit_answer is no longer accepted."
        )
    if explore:
        return text + " Only free calls (think) can still run; another rejected call in a row ends the session."
    return text + " Call submit_answer now with your best answer; another rejected call in a row ends the session."


def _validation_message(tool: str, exc: ValidationError, accepted: list[str]) -> str:
    parts = []
    errors = exc.errors()
    # Keys that are not parameters, named together with the ones that are: small models copy the schema's own words
    # (required, title, type, maxLength) into their arguments, and need to know which keys to drop.
    unknown = [_clip(str(err["loc"][0])) for err in errors if err["type"] == "extra_forbidden" and len(err["loc"]) == 1]
    if unknown:
        named = ", ".join("'" + k + "'" for k in unknown)
        parts.append(
            f"unknown argument{'s' if len(unknown) > 1 else ''} {named} "
            f"({tool} takes only {', '.join(accepted) or 'no arguments'}; leave the others out)"
        )
    for err in errors:
        where = _clip(".".join(str(p) for p in err["loc"])) or "arguments"
        if err["type"] == "extra_forbidden" and len(err["loc"]) == 1:
            continue
        if err["type"] == "string_unicode":  # pydantic's wording ("unable to parse raw data") hides the cause
            parts.append(
                f"{where}: contains a lone UTF-16 surrogate (half of a surrogate pair, e.g. a broken emoji); "
                "send valid Unicode text"
            )
        else:
            parts.append(f"{where}: {err['msg']}")
    return (
        f"Invalid arguments for {tool}: "
        + "; ".join(parts)
        + ". Nothing was charged; call it again with valid arguments."
    )


def _nesting(value, limit: int) -> int:
    """How deeply lists and objects nest in value, counted up to limit + 1 (without recursion)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list | tuple) and depth <= limit:
            deepest = max(deepest, depth + 1)
            stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def _json_chars(value) -> int | None:
    if _nesting(value, MAX_NESTING) > MAX_NESTING:
        return None  # too deep to serialise safely: always clipped
    try:
        return len(json.dumps(value, ensure_ascii=False, allow_nan=True))
    except (RecursionError, ValueError, TypeError):
        return None


def _clipped(value, depth: int = 0):
    if isinstance(value, str):
        return value[:CLIP_STRING]
    if isinstance(value, dict):
        if depth >= CLIP_DEPTH:
            return {}
        return {str(k)[:CLIP_STRING]: _clipped(v, depth + 1) for k, v in list(value.items())[:CLIP_ENTRIES]}
    if isinstance(value, list | tuple):
        if depth >= CLIP_DEPTH:
            return []
        return [_clipped(v, depth + 1) for v in value[:CLIP_ENTRIES]]
    return value


def stored_arguments(arguments: object, whole: bool) -> tuple[dict, ArgumentsAltered | None]:
    """What a call record stores as ``arguments``, and how it differs from what was sent (None: not at all).

    ``whole``: the call is a valid call of a known session, stored as sent. Otherwise arguments
    longer than STORED_ARGS_CHARS as JSON are clipped. NaN and Infinity become strings either way.
    """
    value = arguments if isinstance(arguments, dict) else {"_raw": repr(arguments)}
    chars = _json_chars(value)
    clip = not whole and (chars is None or chars > STORED_ARGS_CHARS)
    if clip:
        value = _clipped(value)
    value, non_finite = jsontext.finite(value)
    if not clip and not non_finite:
        return value, None
    return value, ArgumentsAltered(clipped=clip, json_chars=chars, non_finite=non_finite)


@dataclass
class Session:
    session_id: str
    scope: Scope
    log: CheckpointLog
    caps: Caps
    run: str | None = None
    disabled_tools: frozenset[str] = frozenset()
    client: dict = field(default_factory=dict)
    transport: Transport = "http"
    spent: int = 0
    rejections_in_a_row: int = 0
    termination: Termination | None = None
    answer: Answer | None = None
    corpus_watch: CorpusWatch | None = None
    on_end: Callable[[Session], None] | None = None  # the registry's hook: ended sessions leave the live set
    retired: bool = False  # dropped from memory: a request must look the session up again (from the log)
    attached: dict = field(default_factory=dict)  # what a front end keeps with the session (/play: its turn counter)
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
        """Tools this session offers: all but the disabled ones; in explore mode no submit_answer, and the explore-only
        tools (explore/tools.py) after the others."""
        names = [
            name
            for name in TOOLS
            if name not in self.disabled_tools and not (name == "submit_answer" and self.item_id is None)
        ]
        if self.item_id is None:
            names += [name for name in EXPLORE_ONLY if name not in self.disabled_tools]
        return names

    def state(self) -> dict:
        """What GET /sessions/{id} answers."""
        return {
            "session_id": self.session_id,
            "item": self.item_id,
            "run": self.run,
            "caps": self.caps.as_dict(),
            "budget_used": self.spent,
            "ended": self.ended,
            "termination": self.termination,
            "answer": self.answer,
        }

    # --- records ----------------------------------------------------------------

    def _fields(self, seq: int) -> dict:
        return {
            "run": self.run,
            "session_id": self.session_id,
            "item_id": self.item_id,
            "seq": seq,
            "time": time.time(),
        }

    def _end_record(
        self, seq: int, termination: Termination, reason: str | None, answer: Answer | None, spent: int
    ) -> SessionEnd:
        return SessionEnd(**self._fields(seq), termination=termination, answer=answer, budget_used=spent, reason=reason)

    def _outside_end_record(self, termination: str, reason: str | None) -> SessionEnd:
        """The end record for ``end``, whose termination comes from outside as a plain string: the model validates it
        (ValidationError if it is not a Termination), as it validates every field."""
        return SessionEnd.model_validate(
            {
                **self._fields(self._seq),
                "termination": termination,
                "answer": None,
                "budget_used": self.spent,
                "reason": reason,
            }
        )

    def _write(self, *records) -> None:
        """Write records in one transaction; the sequence number advances only once they are on disk."""
        self.log.write_all(list(records))
        self._seq += len(records)

    def start(self) -> None:
        with self._lock:
            self._write(
                SessionStart(
                    **self._fields(self._seq),
                    mode="explore" if self.item_id is None else "item",
                    caps=RecordCaps.model_validate(self.caps.as_dict()),
                    disabled_tools=sorted(self.disabled_tools),
                    client=jsontext.finite(self.client)[0],
                    transport=self.transport,
                    corpus=self.scope.corpus.identity,
                    search=SEARCH_PARAMETERS,
                )
            )

    def end(self, termination: str, reason: str | None = None) -> bool:
        """End the session from outside (runner caps, errors). False if it had already ended.

        Raises LogError when the end cannot be logged; the session then stays open. Raises SessionRetired when
        this object has left memory (the log may hold newer records than it knows): look the session up again.
        """
        with self._lock:
            if self.retired:
                raise SessionRetired(self.session_id)
            if self.ended:
                return False
            end = self._outside_end_record(termination, reason)
            self._write(end)
            self._ended(end.termination, None)
            return True

    def _ended(self, termination: Termination, answer: Answer | None) -> None:
        self.termination, self.answer = termination, answer
        if self.on_end is not None:
            self.on_end(self)

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
            if self.retired:
                raise SessionRetired(self.session_id)
            started = time.perf_counter()
            before = self.spent
            tool = tool_for(tool_name, explore=self.item_id is None)
            output, executed, valid = self._dispatch(tool_name, tool, arguments)
            cost = 0
            if executed:
                assert tool is not None  # _dispatch runs only a tool it found
                cost = tool.cost
            latency_ms = (time.perf_counter() - started) * 1000
            after = before + cost
            remaining = None if self.caps.budget is None else self.caps.budget - after

            text, notice = output.text, None
            if executed and output.answer is None and remaining is not None and remaining <= 0:
                notice = budget_spent_notice(explore=self.item_id is None)
                text += "\n\n" + notice
            if output.outcome == "budget_rejected":
                rejections = self.rejections_in_a_row + 1
            else:  # an executed call resets the count; a refused one leaves it
                rejections = 0 if executed else self.rejections_in_a_row
            end = None
            if output.answer is not None:
                end = self._end_record(self._seq + 1, "answer", None, output.answer, after)
            elif rejections >= REJECTIONS_TO_END and not self.ended:
                end = self._end_record(self._seq + 1, "budget", "two budget-rejected calls in a row", None, after)
            stored, altered = stored_arguments(arguments, whole=valid)
            record = CallRecord(
                **self._fields(self._seq),
                tool=tool_name if valid else tool_name[:CLIP_NAME],
                arguments=stored,
                arguments_altered=altered,
                turn=turn,
                tokens=tokens,
                forced=meta.get(META_FORCED) is True,
                outcome=output.outcome,
                executed=executed,
                cost=cost,
                budget_before=before,
                budget_after=after,
                latency_ms=round(latency_ms, 3),
                exposed=[Exposed.model_validate(e) for e in output.exposed],
                delivered=Delivered.model_validate(output.delivered) if output.delivered is not None else None,
                output_chars=len(text),
                message=None if output.outcome == "ok" else output.text,
            )
            # Durable first: the call and the end it causes are written together, and the session's state
            # changes only once they are on disk. If they cannot be written, the call did not happen.
            try:
                self._write(record, *([end] if end is not None else []))
            except LogError as exc:
                log.error("call %s in session %s refused: %s", tool_name[:CLIP_NAME], self.session_id[:8], exc)
                return self._unlogged(tool_name, exc, turn, tokens)
            self.spent = after
            self.rejections_in_a_row = rejections
            if end is not None:
                self._ended(end.termination, end.answer)
            data = {**output.data, **self.status(tool_name, output.outcome, cost, turn, tokens)}
            if notice is not None:
                data["notice"] = notice
            return CallResult(f"{text}\n\n{self.status_line(turn, tokens)}", data, output.outcome != "ok")

    def _unlogged(self, tool_name: str, exc: LogError, turn: int | None, tokens: int | None) -> CallResult:
        text = (
            f"The server could not record this call, so it was not carried out and nothing was charged: {exc}. "
            "Call it again in a moment; if this persists, the server's operator must free the log."
        )
        data = {"error": "log unavailable", **self.status(tool_name, "log_unavailable", 0, turn, tokens)}
        return CallResult(f"{text}\n\n{self.status_line(turn, tokens)}", data, True)

    def status(self, tool_name: str, outcome: str, cost: int, turn: int | None, tokens: int | None) -> dict:
        """The status keys every result's structured content carries."""
        return {
            "tool": _clip(tool_name),
            "outcome": outcome,
            "cost": cost,
            "budget_used": self.spent,
            "budget_total": self.caps.budget,
            "budget_remaining": self.remaining,
            "turn": turn,
            "tokens": tokens,
            "session_ended": self.ended,
            "status_line": self.status_line(turn, tokens),
        }

    def _dispatch(self, name: str, tool, arguments: object) -> tuple[ToolOutput, bool, bool]:
        """Run the call if the rules allow: its output, whether it was executed (charged), and whether its arguments are valid."""
        args = None
        if tool is not None and name in self.enabled_tools():
            try:
                args = tool.args.model_validate(arguments)
            except ValidationError as exc:
                invalid = exc
        valid = args is not None
        if self.ended:
            why = "an answer was submitted" if self.termination == "answer" else f"it ended ({self.termination})"
            return (
                ToolOutput(
                    "session_ended",
                    f"This session is over: {why}. No further calls are accepted.",
                    {"error": "session ended"},
                ),
                False,
                valid,
            )
        if name not in self.enabled_tools():
            if tool is None:
                what = "does not exist"
            elif name in self.disabled_tools:
                what = "is disabled in this session"
            else:
                what = "is not offered in explore mode (there is no question to answer)"
            known = ", ".join(self.enabled_tools())
            return (
                ToolOutput(
                    "invalid", f"Tool '{_clip(name)}' {what}. Available tools: {known}.", {"error": f"tool {what}"}
                ),
                False,
                False,
            )
        if args is None:
            return (
                ToolOutput(
                    "invalid",
                    _validation_message(name, invalid, list(tool.args.model_fields)),
                    {"error": "invalid arguments"},
                ),
                False,
                False,
            )
        if self.remaining is not None and tool.cost > self.remaining:
            text = budget_rejection(
                name,
                tool.cost,
                self.remaining,
                ends_session=self.rejections_in_a_row + 1 >= REJECTIONS_TO_END,
                explore=self.item_id is None,
            )
            return ToolOutput("budget_rejected", text, {"error": "insufficient budget"}), False, True
        problem = (
            self.corpus_watch.problem() if self.corpus_watch is not None and name not in CORPUS_FREE_TOOLS else None
        )
        if problem is None:
            try:
                return tool.run(self.scope, args), True, True
            except sqlite3.Error as exc:
                problem = f"reading the corpus failed ({exc})"
            except Exception as exc:  # a bug: still answered and logged, and the traceback goes to stderr
                log.exception("%s failed in session %s", name, self.session_id[:8])
                return (
                    ToolOutput(
                        "server_error",
                        f"The server failed while running {name} ({type(exc).__name__}). "
                        "Nothing was charged; the server's log has the details.",
                        {"error": "server failure"},
                    ),
                    False,
                    True,
                )
        log.error("call %s in session %s refused: %s", name, self.session_id[:8], problem)
        return (
            ToolOutput(
                "server_error",
                f"The server cannot carry out {name}: {problem}. Nothing was charged. "
                "The corpus must be put back unchanged (the same file) or the server restarted; submit_answer and think still work.",
                {"error": "corpus unavailable"},
            ),
            False,
            True,
        )


PLAY_CLIENT = "human"  # client.name of a /play attempt: a person's, answering only to /play and the person's key
PLAY_ONLY = (
    "This session is a person's attempt on /play: it answers only to /play, in the browser that holds the "
    "participant's key, and not to MCP or the session API. Create a session of your own with POST /sessions."
)


def is_play_session(session: Session) -> bool:
    return session.client.get("name") == PLAY_CLIENT


class SessionRetired(Exception):
    """The session object was dropped from memory while a request held it; look the session up again."""


def state_from_records(records: list[dict]) -> dict | None:
    """GET /sessions/{id}'s answer rebuilt from a session's log records; None without a session_start."""
    start = next((r for r in records if r.get("kind") == "session_start"), None)
    if start is None:
        return None
    end = next((r for r in records if r.get("kind") == "session_end"), None)
    spent = 0
    for r in records:
        if r.get("kind") == "call" and r.get("executed") and isinstance(r.get("budget_after"), int):
            spent = r["budget_after"]
    if end is not None:
        spent = end.get("budget_used", spent)
    return {
        "session_id": start["session_id"],
        "item": start.get("item_id"),
        "run": start.get("run"),
        "caps": start.get("caps"),
        "budget_used": spent,
        "ended": end is not None,
        "termination": end.get("termination") if end else None,
        "answer": end.get("answer") if end else None,
    }


def rejections_in_a_row(records: list[dict]) -> int:
    """Budget-rejected calls since the last executed one (SPEC 4.2: other refusals leave the count as it was)."""
    count = 0
    for r in records:
        if r.get("kind") != "call":
            continue
        if r.get("outcome") == "budget_rejected":
            count += 1
        elif r.get("executed"):
            count = 0
    return count


class SessionRegistry:
    """The sessions of one server process, keyed by unguessable IDs.

    At most ``live_kept`` live sessions stay in memory (the least recently used leave first, never one that
    is serving a call) and ``ended_kept`` ended ones. A session no longer in memory is rebuilt from the log
    when a request names it (``revive``): its budget, rejections in a row and sequence numbers carry on.
    A live session is rebuilt only when this process minted its ID (``minted_here``); one the log shows as
    live under an ID from elsewhere belongs to another server process and is unknown here.
    """

    def __init__(self, log: CheckpointLog, defaults: Caps, *, ended_kept: int = ENDED_KEPT, live_kept: int = LIVE_KEPT):
        self.log = log
        self.defaults = defaults
        self.ended_kept = ended_kept
        self.live_kept = live_kept
        self.corpus_watch: CorpusWatch | None = None
        self._live: OrderedDict[str, Session] = OrderedDict()  # least recently used first
        self._ended: OrderedDict[str, Session] = OrderedDict()
        self._lock = threading.Lock()
        self._key = secrets.token_bytes(32)  # signs the IDs this process mints; dies with it
        self.evicted_live = 0

    # --- IDs --------------------------------------------------------------------

    def _tag(self, nonce: str) -> str:
        return base64.urlsafe_b64encode(hmac.digest(self._key, nonce.encode(), hashlib.sha256)[:6]).decode()

    def mint(self) -> str:
        """A new session ID: 144 random bits and a tag only this process can make (32 URL-safe characters)."""
        nonce = secrets.token_urlsafe(18)
        return nonce + self._tag(nonce)

    def minted_here(self, session_id: str) -> bool:
        return len(session_id) == 32 and hmac.compare_digest(self._tag(session_id[:24]), session_id[24:])

    # --- sessions ---------------------------------------------------------------

    def create(
        self,
        scope: Scope,
        *,
        run: str | None = None,
        caps: Caps | None = None,
        disabled_tools: frozenset[str] = frozenset(),
        client: dict | None = None,
        transport: Transport = "http",
        session_id: str | None = None,
    ) -> Session:
        """Create a session and write its session_start record; raises LogError if that cannot be written."""
        session = Session(
            session_id=session_id or self.mint(),
            scope=scope,
            log=self.log,
            caps=caps or self.defaults,
            run=run,
            disabled_tools=disabled_tools,
            client=client or {},
            transport=transport,
            corpus_watch=self.corpus_watch,
            on_end=self._session_ended,
        )
        session.start()
        with self._lock:
            self._keep_live(session)
        return session

    def _keep_live(self, session: Session) -> None:
        """Under the registry's lock: hold a live session, letting the least recently used idle ones go."""
        self._live[session.session_id] = session
        excess = len(self._live) - self.live_kept
        if excess <= 0:
            return
        for sid in list(self._live)[:-1]:
            if excess <= 0:
                break
            oldest = self._live[sid]
            if not self.minted_here(sid) or not oldest._lock.acquire(blocking=False):
                continue  # an ID from elsewhere could not be rebuilt; a session serving a call is not idle
            try:  # retired under its own lock: no call can be half-way through, so the log holds all of it
                oldest.retired = True
                del self._live[sid]
                self.evicted_live += 1
                excess -= 1
            finally:
                oldest._lock.release()

    def _session_ended(self, session: Session) -> None:
        """Called under the session's lock when it ends: keep it among the recently ended, drop the oldest."""
        with self._lock:
            self._live.pop(session.session_id, None)
            self._keep_ended(session)

    def _keep_ended(self, session: Session) -> None:
        self._ended[session.session_id] = session
        while len(self._ended) > self.ended_kept:
            _, oldest = self._ended.popitem(last=False)
            oldest.retired = True  # a request holding it looks the session up again

    def log_sessionless_call(self, session_id: str | None, tool: str, arguments: object, message: str) -> None:
        """Record a call refused because it named no session, or an unknown one (no run label: no run owns it).

        Its arguments are clipped: no session vouches for them. Raises LogError if it cannot be written.
        """
        stored, altered = stored_arguments(arguments, whole=False)
        self.log.write(
            CallRecord(
                run=None,
                session_id=session_id[:CLIP_NAME] if session_id else None,
                item_id=None,
                seq=None,
                time=time.time(),
                tool=tool[:CLIP_NAME],
                arguments=stored,
                arguments_altered=altered,
                turn=None,
                tokens=None,
                forced=False,
                outcome="invalid",
                executed=False,
                cost=0,
                budget_before=None,
                budget_after=None,
                latency_ms=0.0,
                exposed=[],
                delivered=None,
                output_chars=len(message),
                message=message,
            )
        )

    def get(self, session_id: str) -> Session | None:
        """A session held in memory (live or recently ended); a live one becomes the most recently used."""
        with self._lock:
            session = self._live.get(session_id)
            if session is not None:
                self._live.move_to_end(session_id)
                return session
            return self._ended.get(session_id)

    def _revivable(self, session_id: str, state: dict | None) -> bool:
        return state is not None and (state["ended"] or self.minted_here(session_id))

    def state(self, session_id: str) -> dict | None:
        """A session's state, from memory or else from the log (reads the log: call it off the event loop).

        As for ``revive``, a session the log shows as never ended and whose ID this process did not mint
        belonged to another server process: unknown here.
        """
        session = self.get(session_id)
        if session is not None:
            return session.state()
        state = state_from_records(self.log.session_records(session_id))
        return state if self._revivable(session_id, state) else None

    def revive(self, session_id: str, scope_for: Callable[[str | None], Scope]) -> Session | None:
        """The session from memory, or rebuilt from the log (reads the log: off the event loop).

        A session the log shows as never ended is rebuilt only if this process minted its ID; otherwise it
        belonged to another server process and is unknown here.
        """
        session = self.get(session_id)
        if session is not None:
            return session
        records = self.log.session_records(session_id)
        state = state_from_records(records)
        if state is None or not self._revivable(session_id, state):
            return None
        start = next(r for r in records if r.get("kind") == "session_start")
        caps = Caps(**start["caps"])
        session = Session(
            session_id=session_id,
            scope=scope_for(start.get("item_id")),
            log=self.log,
            caps=caps,
            run=start.get("run"),
            disabled_tools=frozenset(start.get("disabled_tools", [])),
            client=start.get("client", {}),
            transport=start.get("transport", "http"),
            spent=state["budget_used"],
            termination=state["termination"],
            answer=state["answer"],
            rejections_in_a_row=rejections_in_a_row(records),
            corpus_watch=self.corpus_watch,
            on_end=self._session_ended,
            _seq=1 + max(r["seq"] for r in records if isinstance(r.get("seq"), int)),
        )
        with self._lock:
            known = self._live.get(session_id) or self._ended.get(session_id)
            if known is not None:  # another request revived it meanwhile
                return known
            if session.ended:
                self._keep_ended(session)
            else:
                self._keep_live(session)
        return session

    def __len__(self) -> int:
        """Sessions held in memory."""
        with self._lock:
            return len(self._live) + len(self._ended)

    def counts(self) -> dict:
        """What /health reports: sessions held in memory, the bounds, and live sessions let go so far."""
        with self._lock:
            live, ended = len(self._live), len(self._ended)
            return {
                "live": live,
                "ended_in_memory": ended,
                "held": {
                    "live": live,
                    "ended": ended,
                    "total": live + ended,
                    "limit_live": self.live_kept,
                    "limit_ended": self.ended_kept,
                    "live_evicted": self.evicted_live,
                },
            }
