"""The scorer reads the records the writers' models define: a record that does not fit stops it with the file,
the record and the field; a record of a kind a later version added is skipped; the typed records read like the
stored JSON objects."""

from __future__ import annotations

import json
import sqlite3

import pytest
from support.scorer_fixtures import write_main_run

from agenthop.scorer import RunSpecError, load_run
from agenthop.scorer.logs import build_sessions, read_typed_records
from agenthop.server.caps import Caps
from agenthop.server.log.checkpoint import CheckpointLog
from agenthop.server.log.structs import CallRecord, ItemEnd, RunStart, SessionStart
from agenthop.server.sessions import SessionRegistry


def test_a_loaded_run_holds_the_shared_record_types(tmp_path):
    run = load_run(write_main_run(tmp_path))
    session = run.item_sessions()["st_0001"][0]
    assert isinstance(session.start, SessionStart) and isinstance(session.calls[0], CallRecord)
    assert isinstance(run.run_start, RunStart) and run.run_start["model"] == run.run_start.model == "fixture-model"
    assert any(isinstance(r, ItemEnd) for r in run.runner_records)
    read = next(c for c in session.calls if c.tool == "read_section")
    assert read.delivered.paper_id == read.paper_id and read["delivered"] is read.delivered and read.kind == "call"


def test_calls_to_an_unknown_session_group_without_a_sequence_number(tmp_path):
    # The server logs a call that names an unknown session under that ID with seq null; two of them used to stop
    # the scorer (sorting by seq compared None with None).
    log = CheckpointLog(tmp_path / "log.sqlite")
    registry = SessionRegistry(log, Caps(budget=None, max_turns=None, max_tokens=None))
    for tool in ("think", "search_papers"):
        registry.log_sessionless_call("no-such-session", tool, {}, "unknown session")
    sessions, n = build_sessions(read_typed_records(tmp_path / "log.sqlite"))
    assert n == 2
    assert [c.tool for c in sessions["no-such-session"].calls] == ["think", "search_papers"]  # log order
    assert all(c.seq is None and c.outcome == "invalid" for c in sessions["no-such-session"].calls)


def test_a_checkpoint_record_that_does_not_fit_its_model_stops_the_scorer(tmp_path):
    run_dir = write_main_run(tmp_path)
    conn = sqlite3.connect(run_dir / "server-log.sqlite")
    record_id, text = conn.execute("SELECT id, record FROM records WHERE kind = 'call' ORDER BY id LIMIT 1").fetchone()
    conn.execute(
        "UPDATE records SET record = ? WHERE id = ?", (json.dumps(json.loads(text) | {"cost": "1"}), record_id)
    )
    conn.commit()
    conn.close()
    with pytest.raises(RunSpecError) as err:
        load_run(run_dir)
    message = str(err.value)
    assert f"server-log.sqlite: record {record_id} is not a valid call record" in message
    assert "$.cost" in message and "edited or written by another program" in message


def test_a_runner_record_that_does_not_fit_its_model_stops_the_scorer(tmp_path):
    run_dir = write_main_run(tmp_path)
    path = run_dir / "runner.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    end = next(n for n, line in enumerate(lines) if '"item_end"' in line)
    broken = json.loads(lines[end]) | {"termination": "gave_up"}
    path.write_text("\n".join(lines[:end] + [json.dumps(broken)] + lines[end + 1 :]) + "\n", encoding="utf-8")
    with pytest.raises(
        RunSpecError, match=rf"runner.jsonl, line {end + 1}: not a valid item_end record .*\$\.termination"
    ):
        load_run(run_dir)


def test_records_of_kinds_a_later_version_adds_are_skipped(tmp_path):
    run_dir = write_main_run(tmp_path)
    before = load_run(run_dir)
    with (run_dir / "runner.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"kind": "heartbeat", "run": "main", "time": 1.0}) + "\n")
    conn = sqlite3.connect(run_dir / "server-log.sqlite")
    conn.execute(
        "INSERT INTO records(run, session_id, item_id, seq, kind, record) VALUES ('main', 's', 'st_0001', 0, "
        '\'annotation\', \'{"kind": "annotation", "note": "later"}\')'
    )
    conn.commit()
    conn.close()
    after = load_run(run_dir)
    assert len(after.runner_records) == len(before.runner_records) and after.runner_lines_skipped == 0
    assert after.n_records == before.n_records + 1 and set(after.sessions) == set(before.sessions)
