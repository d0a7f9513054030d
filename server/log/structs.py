"""The records of a run as msgspec Structs, derived from the pydantic models of records.py, for fast readers.

records.py defines every record once, as a pydantic model: the server and the
runner write through those models, ``read_log`` validates with them, and the JSON Schema
is generated from them. A reader that loads millions of records (the scorer) needs more
speed than pydantic gives, so this module derives from each model a msgspec Struct with
the same fields, types, constraints (``ge``, ``min_length``, ...) and defaults, and the
``kind`` field as the tag of a tagged union. Decoding JSON into these Structs validates
as the models do (tests/server/log/test_log_structs.py checks that both accept and reject the same
records) and is faster than decoding into dicts.

Unknown fields are ignored (a record of a later version still reads). Records also read
like the dicts they are stored as: ``record["seq"]`` and ``record.get("seq")`` work.
A model feature the derivation does not know raises ``TypeError`` at import, so the two
cannot silently disagree.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

import annotated_types
import msgspec
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from agenthop.server.log import records as log_records


class Record(msgspec.Struct, kw_only=True):
    """Base of every derived record: read by attribute, or by key like the stored JSON object."""

    @property
    def kind(self) -> str:
        """The record's kind (the union's tag, which msgspec keeps out of the fields)."""
        tag = self.__struct_config__.tag
        # struct() tags every record with a kind (its Literal default, a str); a nested model's Struct has none.
        assert isinstance(tag, str), f"{type(self).__name__} has no kind"
        return tag

    def __getitem__(self, key: str) -> Any:
        try:
            return getattr(self, key)
        except AttributeError:
            raise KeyError(key) from None

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key, default)


#: annotated_types constraints and the msgspec.Meta argument each becomes.
_CONSTRAINTS = {
    annotated_types.Ge: "ge",
    annotated_types.Gt: "gt",
    annotated_types.Le: "le",
    annotated_types.Lt: "lt",
    annotated_types.MinLen: "min_length",
    annotated_types.MaxLen: "max_length",
}


def _meta(constraints: list) -> msgspec.Meta | None:
    kwargs = {}
    for item in constraints:
        if isinstance(item, FieldInfo):  # Annotated[int, Field(ge=0)] nests its constraints in a FieldInfo
            meta = _meta(item.metadata)
            kwargs.update(
                {
                    k: getattr(meta, k)
                    for k in _CONSTRAINTS.values()
                    if meta is not None and getattr(meta, k) is not None
                }
            )
            continue
        name = _CONSTRAINTS.get(type(item))
        if name is None:
            raise TypeError(f"log_structs cannot express the constraint {item!r}; teach _CONSTRAINTS about it")
        kwargs[name] = getattr(item, name)
    return msgspec.Meta(**kwargs) if kwargs else None


def _type(tp: Any) -> Any:
    """The msgspec type for a pydantic annotation."""
    origin = typing.get_origin(tp)
    if origin is Annotated:
        inner, *extra = typing.get_args(tp)
        meta = _meta(extra)
        return Annotated[_type(inner), meta] if meta is not None else _type(inner)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return struct(tp)
    if origin in (Union, types.UnionType):
        return Union[tuple(_type(arg) for arg in typing.get_args(tp))]  # noqa: UP007 - built from a tuple
    if origin in (list, dict):
        return origin[tuple(_type(arg) for arg in typing.get_args(tp))]
    if origin is Literal or tp in (str, int, float, bool, Any, type(None)):
        return tp
    raise TypeError(f"log_structs cannot derive a msgspec type from {tp!r}")


_STRUCTS: dict[type[BaseModel], type[Record]] = {}


def struct(model: type[BaseModel]) -> type[Record]:
    """The Struct derived from ``model`` (made once). A ``kind`` field with a Literal default becomes the tag."""
    if model in _STRUCTS:
        return _STRUCTS[model]
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    options: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        if name == "kind" and typing.get_origin(info.annotation) is Literal:
            options = {"tag_field": "kind", "tag": info.default}
            continue
        tp = _type(Annotated[info.annotation, *info.metadata] if info.metadata else info.annotation)
        if info.is_required():
            fields.append((name, tp))
        elif info.default_factory is not None:
            if info.default_factory_takes_validated_data:
                raise TypeError(f"log_structs cannot call {model.__name__}.{name}'s default factory without the data")
            # Checked just above: the factory takes no argument (pydantic's type does not follow that check).
            factory = typing.cast(Callable[[], Any], info.default_factory)
            fields.append((name, tp, msgspec.field(default_factory=factory)))
        else:
            fields.append((name, tp, info.default))
    derived = msgspec.defstruct(model.__name__, fields, bases=(Record,), module=__name__, kw_only=True, **options)
    assert issubclass(derived, Record)  # its base, given above
    globals()[model.__name__] = derived  # importable by name, so records pickle
    _STRUCTS[model] = derived
    return derived


#: The records the Structs are derived from, in the order their declarations come below.
MODELS: tuple[type[BaseModel], ...] = (
    log_records.SessionStart,
    log_records.CallRecord,
    log_records.SessionEnd,
    log_records.RunStart,
    log_records.AttemptStart,
    log_records.Turn,
    log_records.AttemptError,
    log_records.ItemEnd,
)


def _annotation(tp: Any) -> str:
    """``tp`` written as a type annotation over the Structs (what ``_type`` derives, without the constraints)."""
    origin = typing.get_origin(tp)
    if origin is Annotated:
        return _annotation(typing.get_args(tp)[0])
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return tp.__name__
    if origin in (Union, types.UnionType):
        return " | ".join(_annotation(arg) for arg in typing.get_args(tp))
    if origin in (list, dict):
        return f"{origin.__name__}[{', '.join(_annotation(arg) for arg in typing.get_args(tp))}]"
    if origin is Literal:
        return f"Literal[{', '.join(json.dumps(arg) for arg in typing.get_args(tp))}]"
    if tp is type(None):
        return "None"
    if tp is Any:
        return "Any"
    return tp.__name__


def static_declarations() -> str:
    """The Structs as class statements, for the type checker, which cannot run ``struct``: the block under
    ``if TYPE_CHECKING`` below is this text (tests/server/log/test_log_structs.py checks that they agree). Print it to
    update the block after changing a record model:
    ``python -c "from agenthop.server.log.structs import static_declarations as s; print(s())"``."""
    ordered: list[type[BaseModel]] = []

    def visit(model: type[BaseModel]) -> None:
        for info in model.model_fields.values():
            for tp in _nested_models(info.annotation):
                if tp not in ordered:
                    visit(tp)
        if model not in ordered:
            ordered.append(model)

    for model in MODELS:
        visit(model)
    blocks = []
    for model in ordered:
        kind = model.model_fields.get("kind")
        tagged = kind is not None and typing.get_origin(kind.annotation) is Literal
        bases = f'Record, tag_field="kind", tag={json.dumps(kind.default)}' if tagged and kind else "Record"
        lines = [f"class {model.__name__}({bases}):"]
        lines += [
            f"    {name}: {_annotation(info.annotation)}"
            for name, info in model.model_fields.items()
            if not (tagged and name == "kind")
        ]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def _nested_models(tp: Any) -> list[type[BaseModel]]:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return [tp]
    return [m for arg in typing.get_args(tp) for m in _nested_models(arg)]


#: The checkpoint log's records and runner.jsonl's, as Structs (same names as the models).
if TYPE_CHECKING:
    # BEGIN static_declarations()
    class Caps(Record):
        budget: int | None
        max_turns: int | None
        max_tokens: int | None

    class SessionStart(Record, tag_field="kind", tag="session_start"):
        run: str | None
        item_id: str | None
        time: float
        session_id: str
        seq: int
        mode: Literal["item", "explore"]
        caps: Caps
        disabled_tools: list[str]
        client: dict[str, Any]
        transport: Literal["stdio", "http"]
        corpus: dict[str, Any]
        search: dict[str, Any]

    class ArgumentsAltered(Record):
        clipped: bool
        json_chars: int | None
        non_finite: bool

    class Exposed(Record):
        paper_id: str
        rank: int

    class Delivered(Record):
        paper_id: str
        arxiv_id: str | None
        section_index: int
        header: str

    class CallRecord(Record, tag_field="kind", tag="call"):
        run: str | None
        item_id: str | None
        time: float
        session_id: str | None
        seq: int | None
        tool: str
        arguments: dict[str, Any]
        arguments_altered: ArgumentsAltered | None
        turn: int | None
        tokens: int | None
        forced: bool
        outcome: Literal[
            "ok", "not_found", "no_text", "ambiguous", "invalid", "budget_rejected", "session_ended", "server_error"
        ]
        executed: bool
        cost: int
        budget_before: int | None
        budget_after: int | None
        latency_ms: float
        exposed: list[Exposed]
        delivered: Delivered | None
        output_chars: int
        message: str | None

    class SessionEnd(Record, tag_field="kind", tag="session_end"):
        run: str | None
        item_id: str | None
        time: float
        session_id: str
        seq: int
        termination: Literal["answer", "budget", "token_limit", "max_turns", "empty_response", "error", "abandoned"]
        answer: Literal["A", "B", "C", "D"] | None
        budget_used: int
        reason: str | None

    class RunStart(Record, tag_field="kind", tag="run_start"):
        run: str
        agent: str
        model: str | None
        settings: dict[str, Any]
        versions: dict[str, Any]
        corpus: dict[str, Any] | None
        time: float

    class AttemptStart(Record, tag_field="kind", tag="attempt_start"):
        run: str
        item_id: str
        session_id: str
        attempt: int
        time: float

    class EmittedToolCall(Record):
        id: str | None
        name: str | None
        arguments: Any

    class Turn(Record, tag_field="kind", tag="turn"):
        run: str
        item_id: str
        session_id: str
        attempt: int
        turn: int
        prompt_tokens: int | None
        completion_tokens: int | None
        cached_tokens: int | None
        cumulative_tokens: int | None
        tool_calls: list[EmittedToolCall]
        latency_ms: float | None
        retries: int
        error: str | None
        time: float
        transient_errors: list[str] | None

    class AttemptError(Record, tag_field="kind", tag="attempt_error"):
        run: str
        item_id: str
        session_id: str | None
        attempt: int
        error: str
        time: float

    class ItemEnd(Record, tag_field="kind", tag="item_end"):
        run: str
        item_id: str
        session_id: str | None
        attempt: int
        termination: Literal["answer", "budget", "token_limit", "max_turns", "empty_response", "error", "abandoned"]
        answer: Literal["A", "B", "C", "D"] | None
        turns: int | None
        prompt_tokens: int | None
        completion_tokens: int | None
        cached_tokens: int | None
        total_tokens: int | None
        budget_used: int | None
        cost_usd: float | None
        wall_time_s: float | None
        recovered: bool | None
        time: float

    # END static_declarations()
else:
    SessionStart, CallRecord, SessionEnd, RunStart, AttemptStart, Turn, AttemptError, ItemEnd = map(struct, MODELS)

CHECKPOINT_KINDS = ("session_start", "call", "session_end")
RUNNER_KINDS = ("run_start", "attempt_start", "turn", "attempt_error", "item_end")
