"""The records of a run as msgspec Structs, derived from the pydantic models of records.py, for fast readers.

records.py defines every record once, as a pydantic model: the server and the
runner write through those models, ``read_log`` validates with them, and the JSON Schema
is generated from them. A reader that loads millions of records (the scorer) needs more
speed than pydantic gives, so this module derives from each model a msgspec Struct with
the same fields, types, constraints (``ge``, ``min_length``, ...) and defaults, and the
``kind`` field as the tag of a tagged union. Decoding JSON into these Structs validates
as the models do (tests/test_log_structs.py checks that both accept and reject the same
records) and is faster than decoding into dicts.

Unknown fields are ignored (a record of a later version still reads). Records also read
like the dicts they are stored as: ``record["seq"]`` and ``record.get("seq")`` work.
A model feature the derivation does not know raises ``TypeError`` at import, so the two
cannot silently disagree.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from typing import Annotated, Any, Literal, Union

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


#: The checkpoint log's records and runner.jsonl's, as Structs (same names as the models).
SessionStart = struct(log_records.SessionStart)
CallRecord = struct(log_records.CallRecord)
SessionEnd = struct(log_records.SessionEnd)
RunStart = struct(log_records.RunStart)
AttemptStart = struct(log_records.AttemptStart)
Turn = struct(log_records.Turn)
AttemptError = struct(log_records.AttemptError)
ItemEnd = struct(log_records.ItemEnd)

CHECKPOINT_KINDS = ("session_start", "call", "session_end")
RUNNER_KINDS = ("run_start", "attempt_start", "turn", "attempt_error", "item_end")
