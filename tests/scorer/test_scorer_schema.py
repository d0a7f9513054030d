"""docs/log-format.schema.json: a valid JSON Schema that the records the scorer reads satisfy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.paths import REPO
from support.scorer_fixtures import SessionWriter, build_corpus, pid, write_main_run

from agenthop.server.log.checkpoint import CheckpointLog, read_records

jsonschema = pytest.importorskip("jsonschema")

SCHEMA_PATH = REPO / "docs" / "log-format.schema.json"


@pytest.fixture(scope="module")
def schema():
    s = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(s)
    return s


def validator(schema, ref: str):
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{ref}", "$defs": schema["$defs"]})


def test_fixture_records_validate(schema, tmp_path):
    run_dir = write_main_run(tmp_path)
    cp = validator(schema, "checkpoint_record")
    rr = validator(schema, "runner_record")
    top = jsonschema.Draft202012Validator(schema)
    records = list(read_records(run_dir / "server-log.sqlite"))
    assert {r["kind"] for r in records} == {"session_start", "call", "session_end"}
    for rec in records:
        cp.validate(rec)
        top.validate(rec)
    lines = [json.loads(line) for line in (run_dir / "runner.jsonl").read_text().splitlines()]
    assert {r["kind"] for r in lines} == {"run_start", "turn", "item_end"}
    for rec in lines:
        rr.validate(rec)
        top.validate(rec)


@pytest.mark.parametrize(
    "broken",
    [
        {"outcome": "exploded"},
        {"exposed": [{"paper_id": "x", "rank": 0}]},
        {"delivered": {"paper_id": "x"}},
        {"seq": -1},
    ],
)
def test_schema_rejects_malformed_calls(schema, tmp_path, broken):
    log = CheckpointLog(tmp_path / "l.sqlite")
    s = SessionWriter(log, "st_0001")
    s.read("B", 2)
    log.close()
    call = [r for r in read_records(tmp_path / "l.sqlite") if r["kind"] == "call"][0]
    v = validator(schema, "call")
    v.validate(call)
    call.update(broken)
    with pytest.raises(jsonschema.ValidationError):
        v.validate(call)


def test_real_server_records_validate(schema, tmp_path):
    """Records written by the server itself (driven in-process) satisfy the schema."""
    try:
        from agenthop.server.caps import Caps
        from agenthop.server.transport.mcp_app import make_sandbox
    except ImportError as exc:  # pragma: no cover - the server is built in parallel
        pytest.skip(f"server not importable: {exc}")
    corpus = build_corpus(tmp_path)
    log = CheckpointLog(tmp_path / "server-log.sqlite")
    sandbox = make_sandbox(corpus, log, Caps())
    s = sandbox.sessions.create(sandbox.scope("st_0001"), run="real", caps=Caps(), transport="stdio")
    meta = {"agenthop/turn": 1, "agenthop/tokens": 100}
    s.call("search_papers", {"query": "paper"}, meta)
    s.call("get_references", {"paper_id": pid("A")}, meta)
    s.call("list_sections", {"paper_id": pid("B")}, meta)
    s.call("read_section", {"paper_id": pid("B"), "section": "Experiments"}, meta)
    s.call("read_section", {"paper_id": pid("B"), "section": "nothing like this"}, meta)
    s.call("read_section", {"paper_id": "0" * 40, "section": "A"}, meta)
    s.call("no_such_tool", {}, meta)
    s.call("search_papers", {"query": ""}, meta)
    s.call("think", {"reasoning": "ok"})
    s.call("submit_answer", {"answer": "B", "reasoning": "r"})
    s.call("think", {"reasoning": "after the end"})
    e = sandbox.sessions.create(sandbox.scope(None), run="real", caps=Caps(None, None, None), transport="stdio")
    e.call("search_papers", {"query": "paper"})
    log.close()
    v = validator(schema, "checkpoint_record")
    records = list(read_records(tmp_path / "server-log.sqlite"))
    outcomes = {r.get("outcome") for r in records if r["kind"] == "call"}
    assert {"ok", "not_found", "invalid", "session_ended"} <= outcomes
    for rec in records:
        v.validate(rec)


@pytest.mark.slow
def test_real_runner_records_validate_and_score(schema, tmp_path):
    """The offline baseline agent's run directory (real runner + server) validates and scores consistently."""
    import sqlite3
    import subprocess
    import sys

    from agenthop.scorer.gold import Gold
    from agenthop.scorer.runs import load_run
    from agenthop.scorer.summary import score_run

    exe = Path(sys.executable).parent / "agenthop-runner"
    if not exe.exists():  # pragma: no cover - the runner is built in parallel
        pytest.skip("agenthop-runner is not installed")
    corpus = build_corpus(tmp_path)
    items = tmp_path / "items.txt"
    items.write_text("\n".join(["st_0001", "st_0002", "mt_0001", "mt_0002", "st_0003"]) + "\n")
    run_dir = tmp_path / "baseline"
    proc = subprocess.run(
        [str(exe), "--items", str(items), "--agent", "baseline", "--out", str(run_dir), "--corpus", str(corpus)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    cp, rr = validator(schema, "checkpoint_record"), validator(schema, "runner_record")
    for rec in read_records(run_dir / "server-log.sqlite"):
        cp.validate(rec)
    runner = [json.loads(line) for line in (run_dir / "runner.jsonl").read_text().splitlines() if line.strip()]
    for rec in runner:
        rr.validate(rec)

    gold = Gold(corpus)
    try:
        summary = score_run(load_run(run_dir), gold)
    finally:
        gold.close()
    # Independent check of accuracy: the runner's final answers against the gold table.
    conn = sqlite3.connect(corpus)
    correct = {i: "ABCD"[c] for i, c in conn.execute("SELECT item_id, correct_index FROM gold_items")}
    conn.close()
    ends = {r["item_id"]: r for r in runner if r["kind"] == "item_end"}
    expected = sum(1 for i, r in ends.items() if r["answer"] == correct[i]) / len(ends)
    assert summary["items"]["n"] == 5
    assert summary["headline"]["accuracy"] == pytest.approx(expected)
    assert sum(summary["audit"]["counts"].values()) == 5
    assert summary["calls_per_turn"]["source"] == "runner"
    assert summary["resources"]["budget"]["mean"] == pytest.approx(sum(r["budget_used"] for r in ends.values()) / 5)
