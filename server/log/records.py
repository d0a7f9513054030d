"""The records of a run, as pydantic models: one definition for the writers, the readers and the JSON Schema.

The checkpoint log (written by the server) holds ``session_start``, ``call`` and
``session_end`` records; ``runner.jsonl`` (written by the runner) holds
``run_start``, ``attempt_start``, ``turn``, ``attempt_error`` and ``item_end``.
docs/log-format.md explains every field; docs/log-format.schema.json is
generated from these models by ``log_schema()`` (``agenthop-server log schema``)
and a test fails when the committed file differs. structs.py derives msgspec
Structs from the same models for readers that need speed (the scorer).

Every model allows unknown extra fields, so that a reader of this version
accepts records written by a later one; a field that changes meaning bumps
``LOG_FORMAT_VERSION`` in checkpoint.py.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

Transport = Literal["stdio", "http"]
Termination = Literal["answer", "budget", "token_limit", "max_turns", "empty_response", "error", "abandoned"]
Answer = Literal["A", "B", "C", "D"]
#: Outcomes of a call. ``server_error`` (the corpus became unreadable while serving, or the tool failed unexpectedly) is refused and free, like
#: ``invalid``; readers that predate it may treat any unknown outcome with ``executed: false`` the same way.
Outcome = Literal[
    "ok", "not_found", "no_text", "ambiguous", "invalid", "budget_rejected", "session_ended", "server_error"
]
EXECUTED_OUTCOMES = ("ok", "not_found", "no_text", "ambiguous")
NonNegative = Annotated[int, Field(ge=0)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow", allow_inf_nan=False)


# --- parts -----------------------------------------------------------------------------------------------------


class Caps(_Model):
    """Per-session limits; null means unlimited."""

    budget: int | None
    max_turns: int | None
    max_tokens: int | None


class Exposed(_Model):
    """A paper ID a result showed to the agent, with its 1-based rank."""

    paper_id: str
    rank: Annotated[int, Field(ge=1)]


class Delivered(_Model):
    """The section whose text a read_section call delivered."""

    paper_id: str
    arxiv_id: str | None
    section_index: NonNegative
    header: str


class ArgumentsAltered(_Model):
    """Present on a call record whose ``arguments`` are not exactly what the client sent, and says how."""

    clipped: bool = Field(
        description="Strings, lists, objects or nesting were cut to the stored bound (a call with no "
        "session, an unknown session or invalid arguments)."
    )
    json_chars: NonNegative | None = Field(
        description="Length of the arguments as JSON before clipping (null when they "
        "could not be measured, e.g. nested too deeply)."
    )
    non_finite: bool = Field(
        description="NaN or Infinity values were stored as the strings 'NaN', 'Infinity', '-Infinity'."
    )


# --- checkpoint log ----------------------------------------------------------------------------------------------


class _CheckpointRecord(_Model):
    run: str | None = Field(description="The run label the session was created with.")
    item_id: str | None = Field(description="Null in explore mode.")
    time: float = Field(description="Unix time (seconds) when the record was written.")


class SessionStart(_CheckpointRecord):
    """A session was created (seq 0)."""

    kind: Literal["session_start"] = "session_start"
    session_id: Annotated[str, Field(min_length=1)]
    seq: NonNegative
    mode: Literal["item", "explore"]
    caps: Caps
    disabled_tools: list[str]
    client: dict[str, Any]
    transport: Transport
    corpus: dict[str, Any]
    search: dict[str, Any]


class CallRecord(_CheckpointRecord):
    """One tool call, executed or refused."""

    kind: Literal["call"] = "call"
    session_id: str | None = Field(description="Null, like seq and run, on a call that named no session.")
    seq: NonNegative | None = Field(description="Null on a call that named no session or an unknown one.")
    tool: str
    arguments: dict[str, Any]
    arguments_altered: ArgumentsAltered | None = Field(
        default=None, description="Absent when the arguments are stored as sent."
    )
    turn: int | None
    tokens: int | None
    forced: bool
    outcome: Outcome
    executed: bool
    cost: NonNegative
    budget_before: NonNegative | None
    budget_after: NonNegative | None
    latency_ms: Annotated[float, Field(ge=0)]
    exposed: list[Exposed]
    delivered: Delivered | None
    output_chars: NonNegative
    message: str | None = None


class SessionEnd(_CheckpointRecord):
    """The session ended."""

    kind: Literal["session_end"] = "session_end"
    session_id: Annotated[str, Field(min_length=1)]
    seq: NonNegative
    termination: Termination
    answer: Answer | None
    budget_used: NonNegative
    reason: str | None = None


CheckpointRecord = Annotated[SessionStart | CallRecord | SessionEnd, Field(discriminator="kind")]


# --- runner.jsonl --------------------------------------------------------------------------------------------------


class RunStart(_Model):
    """runner.jsonl: a run began or resumed."""

    kind: Literal["run_start"] = "run_start"
    run: str
    agent: str
    model: str | None
    settings: dict[str, Any]
    versions: dict[str, Any]
    corpus: dict[str, Any] | None = Field(
        default=None,
        description="The corpus served ({corpus_id, schema_version}); null when the run used a running server.",
    )
    time: float


class AttemptStart(_Model):
    """runner.jsonl: the server created the session of an attempt (written before the agent starts, so a resumed run
    finds every session it created)."""

    kind: Literal["attempt_start"] = "attempt_start"
    run: str
    item_id: str
    session_id: str
    attempt: Annotated[int, Field(ge=1)]
    time: float


class EmittedToolCall(_Model):
    """A tool call as the model emitted it: arguments as sent (an object when they parsed as one)."""

    id: str | None = None
    name: str | None = Field(description="Null when the model's call named no tool.")
    arguments: Any = None


class Turn(_Model):
    """runner.jsonl: one model response."""

    kind: Literal["turn"] = "turn"
    run: str
    item_id: str
    session_id: str
    attempt: Annotated[int, Field(ge=1)]
    turn: Annotated[int, Field(ge=1)]
    prompt_tokens: int | None
    completion_tokens: int | None
    cached_tokens: int | None
    cumulative_tokens: int | None
    tool_calls: list[EmittedToolCall]
    latency_ms: float | None
    retries: NonNegative
    error: str | None
    time: float
    transient_errors: list[str] | None = Field(
        default=None, description="The transient API errors retried before this response; absent when there were none."
    )


class AttemptError(_Model):
    """runner.jsonl: a hard error; the item is retried up to twice."""

    kind: Literal["attempt_error"] = "attempt_error"
    run: str
    item_id: str
    session_id: str | None
    attempt: Annotated[int, Field(ge=1)]
    error: str
    time: float


class ItemEnd(_Model):
    """runner.jsonl: an item finished (complete unless termination is error)."""

    kind: Literal["item_end"] = "item_end"
    run: str
    item_id: str
    session_id: str | None
    attempt: Annotated[int, Field(ge=1)]
    termination: Termination
    answer: Answer | None
    turns: int | None
    prompt_tokens: int | None
    completion_tokens: int | None
    cached_tokens: int | None
    total_tokens: int | None
    budget_used: int | None
    cost_usd: float | None
    wall_time_s: float | None
    recovered: bool | None = Field(
        default=None,
        description="True on an item_end a resumed run rebuilt from the server's end of the session; absent otherwise.",
    )
    time: float


RunnerRecord = Annotated[RunStart | AttemptStart | Turn | AttemptError | ItemEnd, Field(discriminator="kind")]

checkpoint_adapter: TypeAdapter = TypeAdapter(CheckpointRecord)
runner_adapter: TypeAdapter = TypeAdapter(RunnerRecord)


def parse_checkpoint_record(data: dict) -> SessionStart | CallRecord | SessionEnd:
    """A checkpoint record (a dict as stored) as its model; raises pydantic.ValidationError if it is not one.

    Strict: a value of the wrong JSON type is an error, never converted (the fast reader, structs.py, agrees).
    """
    return checkpoint_adapter.validate_python(data, strict=True)


#: Optional additions that are left out of a record when unset (older readers never see them).
ABSENT_WHEN_UNSET = {"arguments_altered", "transient_errors", "recovered"}


def record_dict(record: BaseModel) -> dict:
    """The dict stored for a record: every field in declaration order, except optional additions that are unset."""
    data = record.model_dump(mode="python")
    for name in ABSENT_WHEN_UNSET.intersection(data):
        if data[name] is None:
            del data[name]
    return data


# --- the JSON Schema ----------------------------------------------------------------------------------------------

_SCHEMA_NAMES = {
    "SessionStart": "session_start",
    "CallRecord": "call",
    "SessionEnd": "session_end",
    "Caps": "caps",
    "Exposed": "exposed_entry",
    "Delivered": "delivered",
    "ArgumentsAltered": "arguments_altered",
    "RunStart": "run_start",
    "AttemptStart": "attempt_start",
    "Turn": "turn",
    "AttemptError": "attempt_error",
    "ItemEnd": "item_end",
    "EmittedToolCall": "emitted_tool_call",
}


def log_schema(version: int) -> dict:
    """The JSON Schema of every record of a run (checkpoint log and runner.jsonl), generated from the models."""
    defs: dict = {}
    tops = {}
    for name, adapter in (("checkpoint_record", checkpoint_adapter), ("runner_record", runner_adapter)):
        schema = adapter.json_schema(ref_template="#/$defs/{model}")
        defs.update(schema.pop("$defs", {}))
        tops[name] = schema
    text = json.dumps({**defs, **tops})
    for model, name in _SCHEMA_NAMES.items():
        text = text.replace(f'"#/$defs/{model}"', f'"#/$defs/{name}"')
    defs = json.loads(text)
    renamed = {_SCHEMA_NAMES.get(k, k): v for k, v in defs.items()}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://agenthop.invalid/log-format.schema.json",
        "title": f"AgentHop log records (LOG_FORMAT_VERSION {version})",
        "description": "Records of the checkpoint log (server) and runner.jsonl (runner); see docs/log-format.md. Generated "
        "from agenthop.server.log.records by 'agenthop-server log schema'; do not edit by hand. Validate a "
        "checkpoint record against #/$defs/checkpoint_record and a runner.jsonl line against "
        "#/$defs/runner_record; the top level accepts either. Unknown extra fields are allowed so that "
        "additions do not break readers; a field that changes meaning bumps LOG_FORMAT_VERSION.",
        "oneOf": [{"$ref": "#/$defs/checkpoint_record"}, {"$ref": "#/$defs/runner_record"}],
        "$defs": dict(sorted(renamed.items())),
    }
