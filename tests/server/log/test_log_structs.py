"""One definition of the log records, two readers: the msgspec Structs the scorer decodes into are derived from
the pydantic models the writers use, and both accept and reject exactly the same records."""

from __future__ import annotations

import ast
import json
import typing
from pathlib import Path

import msgspec
import pytest
from pydantic import ValidationError
from support.release_fixture import pid

from agenthop.server.log import records as log_records
from agenthop.server.log import structs as log_structs
from agenthop.server.log.checkpoint import CheckpointLog, read_log, read_records
from agenthop.server.log.records import AttemptError, AttemptStart, ItemEnd, RunStart, Turn, record_dict

CHECKPOINT = msgspec.json.Decoder(log_structs.SessionStart | log_structs.CallRecord | log_structs.SessionEnd)
RUNNER = msgspec.json.Decoder(
    log_structs.RunStart | log_structs.AttemptStart | log_structs.Turn | log_structs.AttemptError | log_structs.ItemEnd
)
MODELS = (
    log_records.SessionStart,
    log_records.CallRecord,
    log_records.SessionEnd,
    RunStart,
    AttemptStart,
    Turn,
    AttemptError,
    ItemEnd,
)
#: Values put in place of a field: wrong types, bounds, nulls, and values of the right type.
REPLACEMENTS = (None, "x", "", -1, 0, 1, 1.5, 2.0, True, {}, [], {"paper_id": "p"}, ["x"], 2**70, "A", "answer", "item")


def server_records(corpus, tmp_path) -> list[dict]:
    """Checkpoint records as the server writes them: every kind, outcome shapes, clipped arguments, explore mode."""
    from agenthop.server.caps import Caps
    from agenthop.server.transport.mcp_app import make_sandbox

    log = CheckpointLog(tmp_path / "log.sqlite")
    sandbox = make_sandbox(corpus, log, Caps())
    session = sandbox.sessions.create(sandbox.scope("st_0001"), run="r", transport="stdio")
    meta = {"agenthop/turn": 1, "agenthop/tokens": 10}
    session.call("search_papers", {"query": "paper"}, meta)
    session.call("get_references", {"paper_id": pid("A")}, meta)
    session.call("read_section", {"paper_id": pid("B"), "section": "C"}, meta)
    session.call("read_section", {"paper_id": pid("B"), "section": "no such section"}, meta)
    session.call("search_papers", {"query": "x" * 5000, "n": float("nan")})
    session.call("no_such_tool", {})
    session.call("submit_answer", {"answer": "B", "reasoning": "r"})
    explore = sandbox.sessions.create(sandbox.scope(None), run=None, caps=Caps(None, None, None), transport="stdio")
    explore.call("search_papers", {"query": "paper"})
    sandbox.sessions.log_sessionless_call(None, "think", {"reasoning": "r"}, "no session")
    log.close()
    return list(read_records(tmp_path / "log.sqlite"))


def runner_records() -> list[dict]:
    """Records of every runner kind as the runner builds them, optional additions set and unset."""
    turn = dict(
        run="r",
        item_id="st_0001",
        session_id="s",
        attempt=1,
        turn=1,
        prompt_tokens=900,
        completion_tokens=100,
        cached_tokens=0,
        cumulative_tokens=1000,
        tool_calls=[
            {"id": "c1", "name": "think", "arguments": {"reasoning": "r"}},
            {"id": None, "name": None, "arguments": "{broken"},
        ],
        latency_ms=812.5,
        retries=0,
        error=None,
        time=1.0,
    )
    end = dict(
        run="r",
        item_id="st_0001",
        session_id="s",
        attempt=1,
        termination="answer",
        answer="B",
        turns=3,
        prompt_tokens=900,
        completion_tokens=100,
        cached_tokens=0,
        total_tokens=1000,
        budget_used=7,
        cost_usd=None,
        wall_time_s=2.5,
        time=2.0,
    )
    models = [
        RunStart(
            run="r",
            agent="raw",
            model="m",
            settings={"caps": {"budget": 30}},
            versions={"agenthop": "0.1.0"},
            corpus={"corpus_id": "c", "schema_version": 2},
            time=0.0,
        ),
        RunStart(run="r", agent="baseline", model=None, settings={}, versions={}, time=0.0),
        AttemptStart(run="r", item_id="st_0001", session_id="s", attempt=1, time=0.5),
        Turn(**turn),
        Turn(**turn | {"turn": 2, "error": "empty response", "transient_errors": ["429 rate limited"]}),
        AttemptError(run="r", item_id="st_0001", session_id=None, attempt=2, error="boom", time=1.5),
        ItemEnd(**end),
        ItemEnd(**end | {"termination": "error", "answer": None, "session_id": None, "recovered": True}),
    ]
    return [json.loads(json.dumps(record_dict(m))) for m in models]


def fields(value, path=()):
    """Every (path, value) inside a record: object keys and the first element of lists, recursively."""
    if isinstance(value, dict):
        for key, sub in value.items():
            yield (*path, key), sub
            yield from fields(sub, (*path, key))
    elif isinstance(value, list) and value:
        yield (*path, 0), value[0]
        yield from fields(value[0], (*path, 0))


def mutated(record: dict, path: tuple, value) -> dict:
    copy = json.loads(json.dumps(record))
    target = copy
    for step in path[:-1]:
        target = target[step]
    if value is _DELETE:
        if isinstance(target, list):
            target.pop(path[-1])
        else:
            del target[path[-1]]
    else:
        target[path[-1]] = value
    return copy


_DELETE = object()


def verdicts(text: str, adapter, decoder) -> tuple[bool, bool]:
    try:
        adapter.validate_json(text, strict=True)
        by_model = True
    except ValidationError:
        by_model = False
    try:
        decoder.decode(text)
        by_struct = True
    except msgspec.ValidationError:
        by_struct = False
    return by_model, by_struct


def test_the_structs_have_the_models_fields_in_order():
    for model in MODELS:
        struct = log_structs.struct(model)
        assert struct.__name__ == model.__name__
        assert struct.__struct_config__.tag == model.model_fields["kind"].default
        assert [f.name for f in msgspec.structs.fields(struct)] == [n for n in model.model_fields if n != "kind"]
        for f in msgspec.structs.fields(struct):
            info = model.model_fields[f.name]
            assert f.required == info.is_required(), (model.__name__, f.name)
            if not f.required:
                assert f.default == info.default, (model.__name__, f.name)


def _type_checking_block() -> list[ast.stmt]:
    """The class statements under structs.py's ``if TYPE_CHECKING:``."""
    tree = ast.parse(Path(log_structs.__file__).read_text(encoding="utf-8"))
    (block,) = [
        node
        for node in tree.body
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
        if any(isinstance(stmt, ast.ClassDef) for stmt in node.body)
    ]
    return block.body


def test_the_declarations_the_type_checker_reads_are_the_derived_structs():
    # The checker cannot run struct(): it reads class statements generated from the same models. A model changed
    # without regenerating them fails here, with the text to paste.
    declared = [ast.dump(stmt) for stmt in _type_checking_block()]
    derived = [ast.dump(stmt) for stmt in ast.parse(log_structs.static_declarations()).body]
    assert declared == derived, log_structs.static_declarations()
    names = {stmt.name for stmt in _type_checking_block() if isinstance(stmt, ast.ClassDef)}
    assert {model.__name__ for model in MODELS} <= names


def test_the_declarations_follow_a_changed_model():
    class Probe(log_records._Model):
        kind: typing.Literal["probe"] = "probe"
        seq: int
        note: str | None = None
        caps: log_records.Caps

    original = log_structs.MODELS
    try:
        log_structs.MODELS = (Probe,)
        text = log_structs.static_declarations()
    finally:
        log_structs.MODELS = original
    assert 'class Probe(Record, tag_field="kind", tag="probe"):' in text
    assert "    note: str | None\n" in text and "    caps: Caps\n" in text
    assert text.index("class Caps(Record):") < text.index("class Probe(")


def test_both_readers_accept_and_reject_the_same_records(fixture_corpus, tmp_path):
    checkpoint = server_records(fixture_corpus, tmp_path)
    assert {r["kind"] for r in checkpoint} == {"session_start", "call", "session_end"}
    assert any("arguments_altered" in r for r in checkpoint) and any(r["session_id"] is None for r in checkpoint)
    cases = [(r, log_records.checkpoint_adapter, CHECKPOINT) for r in checkpoint]
    cases += [(r, log_records.runner_adapter, RUNNER) for r in runner_records()]
    tried = rejected = 0
    disagreements = []
    for record, adapter, decoder in cases:
        assert verdicts(json.dumps(record), adapter, decoder) == (True, True), record
        with_extra = json.dumps(record | {"added_by_a_later_version": [1, {"x": None}]})
        assert verdicts(with_extra, adapter, decoder) == (True, True)
        for path, _ in list(fields(record)):
            for value in (_DELETE, *REPLACEMENTS):
                text = json.dumps(mutated(record, path, value))
                by_model, by_struct = verdicts(text, adapter, decoder)
                tried += 1
                rejected += not by_model
                if by_model != by_struct:
                    disagreements.append(
                        (record["kind"], path, "deleted" if value is _DELETE else value, by_model, by_struct)
                    )
    assert disagreements == []
    assert tried > 5000 and 0.3 < rejected / tried < 0.9  # the mutations do test the validation


def test_the_typed_reader_and_the_structs_read_the_same_values(fixture_corpus, tmp_path):
    server_records(fixture_corpus, tmp_path)
    models = list(read_log(tmp_path / "log.sqlite"))
    structs = [CHECKPOINT.decode(json.dumps(r)) for r in read_records(tmp_path / "log.sqlite")]
    assert len(models) == len(structs) > 10
    for model, struct in zip(models, structs):
        assert msgspec.to_builtins(struct) == model.model_dump(mode="json")
    call = next(s for s in structs if s.kind == "call")
    assert call["seq"] == call.seq and call.get("nothing", 3) == 3
    with pytest.raises(KeyError):
        call["nothing"]


def test_a_model_feature_the_derivation_cannot_express_fails_loudly():
    from typing import Annotated

    from pydantic import BaseModel, Field

    class Odd(BaseModel):
        kind: typing.Literal["odd"] = "odd"
        ratio: Annotated[float, Field(multiple_of=0.5)]

    with pytest.raises(TypeError, match="cannot express"):
        log_structs.struct(Odd)

    class Odder(BaseModel):
        when: set[int]

    with pytest.raises(TypeError, match="cannot derive"):
        log_structs.struct(Odder)
