"""Resume recovery, run.json handling and clear CLI errors (review findings on the runner).

Recovery is exercised at two levels:
- simulated kills: a session is created (and possibly answered) exactly as a killed runner would have
  left it, with only its ``attempt_start`` record in runner.jsonl, then the runner is started again;
- a real SIGKILL of a closed-book run during its only turn (the model call is in flight).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.fake_openai import Block, FakeOpenAI, Hang, tool_calls
from support.fake_openai import system_text as fake_system

from agenthop.runner import run as run_module
from agenthop.runner.cli import main
from agenthop.runner.config import RunSettings
from agenthop.runner.records import RecordWriter, read_records
from agenthop.runner.run import disabled_tools, session_caps
from agenthop.runner.session import McpSession, ServerAPI
from agenthop.server.log.checkpoint import read_records as read_checkpoint
from agenthop.server.sessions import META_TOKENS, META_TURN
from agenthop.server.transport.http import ServerThread

pytestmark = pytest.mark.slow


def demo_ids(split: Path, n: int) -> list[str]:
    return [json.loads(line)["id"] for line in split.read_text().splitlines() if line.strip()][:n]


def items_file(tmp_path: Path, ids: list[str]) -> Path:
    path = tmp_path / "items.txt"
    path.write_text("\n".join(ids) + "\n")
    return path


def runner_records(out: Path, kind: str | None = None) -> list[dict]:
    return [r for r in read_records(out / "runner.jsonl") if kind is None or r["kind"] == kind]


def invoke(*args: str):
    return CliRunner().invoke(main, [*map(str, args), "--no-progress"])


async def killed_session(base_url: str, item: str, run: str, answer: str | None) -> str:
    """Create a closed-book session the way the runner does; submit ``answer`` (None: the model never replied)."""
    settings = RunSettings(agent="baseline", model="baseline", run_label=run, closed_book=True)
    api = ServerAPI(base_url)
    try:
        info = await api.create_session(item, run, session_caps(settings), disabled_tools(settings), {"name": "test"})
        if answer is not None:
            async with McpSession(info) as mcp:
                result = await mcp.call_tool(
                    "submit_answer", {"answer": answer, "reasoning": "r"}, {META_TURN: 1, META_TOKENS: 0}
                )
            assert result.ended
    finally:
        await api.aclose()
    return info.session_id


def leave_attempt_start(out: Path, run: str, item: str, session_id: str) -> None:
    """What runner.jsonl holds when the runner is killed before the session's first turn record is written."""
    writer = RecordWriter(out / "runner.jsonl")
    writer.write(
        {
            "kind": "attempt_start",
            "run": run,
            "item_id": item,
            "session_id": session_id,
            "attempt": 1,
            "time": time.time(),
        }
    )
    writer.close()


def test_recovery_in_process_uses_the_logged_answer(demo, tmp_path):
    """Closed-book, in-process server: the answer was acknowledged but no turn record was written."""
    corpus, split = demo
    (item,) = demo_ids(split, 1)
    out = tmp_path / "cb"
    out.mkdir()
    with ServerThread(str(corpus), str(out / "server-log.sqlite")) as server:
        sid = asyncio.run(killed_session(server.base_url, item, "cb", "C"))
    leave_attempt_start(out, "cb", item, sid)

    result = invoke(
        "--items",
        items_file(tmp_path, [item]),
        "--agent",
        "baseline",
        "--closed-book",
        "--corpus",
        corpus,
        "--out",
        out,
    )
    assert result.exit_code == 0, result.output
    (end,) = runner_records(out, "item_end")
    assert (end["session_id"], end["termination"], end["answer"], end["recovered"]) == (sid, "answer", "C", True)
    assert (end["attempt"], end["turns"], end["budget_used"]) == (1, 1, 0)  # the turn comes from the checkpoint log
    starts = [r for r in read_checkpoint(out / "server-log.sqlite") if r["kind"] == "session_start"]
    assert [s["session_id"] for s in starts] == [sid]  # the item was not run a second time


def test_recovery_against_a_running_server(demo, tmp_path):
    """--server: the answer comes from GET /sessions/{id}; a session killed during its only turn is ended
    as abandoned and its item is run again."""
    corpus, split = demo
    answered, unanswered = demo_ids(split, 2)
    out = tmp_path / "remote"
    out.mkdir()
    with ServerThread(str(corpus), str(tmp_path / "shared.sqlite")) as server:
        sid_answered = asyncio.run(killed_session(server.base_url, answered, "remote", "D"))
        sid_open = asyncio.run(killed_session(server.base_url, unanswered, "remote", None))
        leave_attempt_start(out, "remote", answered, sid_answered)
        leave_attempt_start(out, "remote", unanswered, sid_open)
        result = invoke(
            "--items",
            items_file(tmp_path, [answered, unanswered]),
            "--agent",
            "baseline",
            "--closed-book",
            "--server",
            server.base_url,
            "--out",
            out,
        )
    assert result.exit_code == 0, result.output
    ends = {e["item_id"]: e for e in runner_records(out, "item_end")}
    assert len(runner_records(out, "item_end")) == 2
    assert (ends[answered]["session_id"], ends[answered]["answer"], ends[answered]["recovered"]) == (
        sid_answered,
        "D",
        True,
    )
    assert ends[unanswered]["session_id"] != sid_open and ends[unanswered]["termination"] == "answer"
    assert "recovered" not in ends[unanswered]
    log = list(read_checkpoint(tmp_path / "shared.sqlite"))
    session_ends = {r["session_id"]: r for r in log if r["kind"] == "session_end"}
    assert session_ends[sid_open]["termination"] == "abandoned"
    sessions = defaultdict(list)
    for r in log:
        if r["kind"] == "session_start":
            sessions[r["item_id"]].append(r["session_id"])
    assert sessions[answered] == [sid_answered]
    assert sessions[unanswered] == [sid_open, ends[unanswered]["session_id"]]


def test_sigkill_of_a_closed_book_item_during_its_only_turn(demo, tmp_path):
    """A real kill while the only model call is in flight: the session is in runner.jsonl, the item runs again."""
    corpus, split = demo
    (item,) = demo_ids(split, 1)
    out = tmp_path / "cb"
    state = {"hang": True}

    def script(body, fake):
        if state["hang"]:
            return Hang(5)  # the runner is killed while it waits
        return tool_calls(("submit_answer", {"answer": "B", "reasoning": "r"}))

    def command(fake):
        return [
            sys.executable,
            "-m",
            "agenthop.runner.cli",
            "--items",
            str(items_file(tmp_path, [item])),
            "--agent",
            "raw",
            "--model",
            "fake-1",
            "--base-url",
            fake.base_url,
            "--corpus",
            str(corpus),
            "--out",
            str(out),
            "--closed-book",
            "--no-progress",
        ]

    env = {**os.environ, "OPENAI_API_KEY": "test"}
    with FakeOpenAI(script) as fake:
        proc = subprocess.Popen(command(fake), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        deadline = time.monotonic() + 60
        while not fake.requests:
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline, "the runner never called the model"
            time.sleep(0.01)  # polling interval
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        proc.stderr.close()
        (start,) = runner_records(out, "attempt_start")
        assert runner_records(out, "turn") == [] and runner_records(out, "item_end") == []
        state["hang"] = False
        done = subprocess.run(command(fake), capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    (end,) = runner_records(out, "item_end")
    assert end["termination"] == "answer" and end["answer"] == "B" and end["session_id"] != start["session_id"]
    log = list(read_checkpoint(out / "server-log.sqlite"))
    assert [r["session_id"] for r in log if r["kind"] == "session_start"] == [start["session_id"], end["session_id"]]
    # The killed session's server died with it: it has no end record and is scored abandoned.
    assert [r["session_id"] for r in log if r["kind"] == "session_end"] == [end["session_id"]]


def test_turn_holding_the_answer_is_written_when_the_server_ends_the_session(demo, tmp_path):
    """The turn record of the submit is flushed as soon as the server acknowledges it, before the item ends."""
    corpus, split = demo
    out = tmp_path / "b"
    result = invoke(
        "--items", items_file(tmp_path, demo_ids(split, 1)), "--agent", "baseline", "--corpus", corpus, "--out", out
    )
    assert result.exit_code == 0, result.output
    kinds = [r["kind"] for r in runner_records(out)]
    assert kinds[:2] == ["run_start", "attempt_start"] and kinds[-1] == "item_end"
    turns = runner_records(out, "turn")
    assert turns[-1]["tool_calls"][0]["name"] == "submit_answer"


# --- clear errors ------------------------------------------------------------------------------


def test_bad_depth_in_items_file_names_file_line_and_field(demo, tmp_path):
    corpus, _ = demo
    items = tmp_path / "items.jsonl"
    items.write_text('{"id": "st_0001", "depth": 1}\n{"id": "x", "depth": "x"}\n')
    result = invoke("--items", items, "--agent", "baseline", "--corpus", corpus, "--out", tmp_path / "o")
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert f"{items}:2" in result.output and "'depth'" in result.output and "Traceback" not in result.output


def test_corrupt_run_json_is_a_clear_error(demo, tmp_path):
    corpus, split = demo
    out = tmp_path / "r"
    args = (
        "--items",
        items_file(tmp_path, demo_ids(split, 1)),
        "--agent",
        "baseline",
        "--corpus",
        corpus,
        "--out",
        out,
    )
    assert invoke(*args).exit_code == 0
    (out / "run.json").write_text('{"run": "r", "agent": ')
    result = invoke(*args)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert "run.json is not valid JSON" in result.output and "--no-resume" in result.output
    (out / "run.json").write_text("[1, 2]")
    result = invoke(*args)
    assert result.exit_code == 1 and "not an object" in result.output
    # --no-resume moves the broken manifest aside and starts over.
    result = invoke(*args, "--no-resume")
    assert result.exit_code == 0, result.output
    (aside,) = out.glob("previous-*")
    assert (aside / "run.json").read_text() == "[1, 2]"
    assert json.loads((out / "run.json").read_text())["agent"] == "baseline"


def test_no_resume_twice_in_the_same_second(demo, tmp_path, monkeypatch):
    corpus, split = demo
    out = tmp_path / "r"
    monkeypatch.setattr(run_module, "_stamp", lambda: "20250101-000000")
    args = (
        "--items",
        items_file(tmp_path, demo_ids(split, 1)),
        "--agent",
        "baseline",
        "--corpus",
        corpus,
        "--out",
        out,
        "--no-resume",
    )
    for _ in range(3):
        result = invoke(*args)
        assert result.exit_code == 0, result.output
    asides = sorted(p.name for p in out.glob("previous-*"))
    assert asides == ["previous-20250101-000000", "previous-20250101-000000-2"]
    assert all((out / a / "runner.jsonl").exists() and (out / a / "run.json").exists() for a in asides)


# --- run.json ---------------------------------------------------------------------------------


def test_replicate_of_and_user_keys_survive_a_resume(demo, tmp_path):
    corpus, split = demo
    out = tmp_path / "rep1"
    args = (
        "--items",
        items_file(tmp_path, demo_ids(split, 1)),
        "--agent",
        "baseline",
        "--corpus",
        corpus,
        "--out",
        out,
    )
    assert invoke(*args, "--replicate-of", "main").exit_code == 0
    man = json.loads((out / "run.json").read_text())
    assert man["replicate_of"] == "main"
    man["note"] = "added by hand"
    (out / "run.json").write_text(json.dumps(man))
    result = invoke(*args)  # resume without --replicate-of
    assert result.exit_code == 0, result.output
    man = json.loads((out / "run.json").read_text())
    assert (man["replicate_of"], man["note"], man["agent"]) == ("main", "added by hand", "baseline")
    assert invoke(*args, "--replicate-of", "other").exit_code == 0
    assert json.loads((out / "run.json").read_text())["replicate_of"] == "other"
    # A run without the option has no replicate_of.
    other = tmp_path / "solo"
    assert invoke(*args[:-1], other).exit_code == 0
    assert "replicate_of" not in json.loads((other / "run.json").read_text())


@pytest.mark.parametrize("agent", ["raw", "sdk"])
def test_ctrl_c_keeps_every_finished_turn(demo, tmp_path, agent):
    """SIGINT (Ctrl+C) while the third model call is in flight: the two turns that finished reach runner.jsonl,
    the second (its tool calls ran, its record was still open) included, matching the calls the server logged
    (a real run kept 1 turn record against 8 logged calls)."""
    corpus, split = demo
    (item,) = demo_ids(split, 1)
    out = tmp_path / "run"
    release = threading.Event()

    def script(body, fake):
        seed = re.search(r"^ID:\s*(\S+)", fake_system(body), re.M).group(1)
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if turn == 0:
            return tool_calls(("get_references", {"paper_id": seed}))
        if turn == 1:
            return tool_calls(("list_sections", {"paper_id": seed}), ("think", {"reasoning": "next"}))
        return Block(release)  # the model is still generating when Ctrl+C comes

    command = [
        sys.executable,
        "-m",
        "agenthop.runner.cli",
        "--items",
        str(items_file(tmp_path, [item])),
        "--agent",
        agent,
        "--model",
        "fake-1",
        "--base-url",
        "",
        "--corpus",
        str(corpus),
        "--out",
        str(out),
        "--no-progress",
    ]
    with FakeOpenAI(script) as fake:
        command[command.index("--base-url") + 1] = fake.base_url
        proc = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, "OPENAI_API_KEY": "test"}
        )
        try:
            fake.wait_for_requests(3)
            proc.send_signal(signal.SIGINT)
            stderr = proc.communicate(timeout=60)[1].decode()
        finally:
            release.set()
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 130, stderr[-2000:]
    assert "interrupted" in stderr
    turns = runner_records(out, "turn")
    assert [(t["turn"], [c["name"] for c in t["tool_calls"]]) for t in turns] == [
        (1, ["get_references"]),
        (2, ["list_sections", "think"]),
    ]
    assert runner_records(out, "item_end") == []
    calls = [r for r in read_checkpoint(out / "server-log.sqlite") if r["kind"] == "call"]
    assert [(c["tool"], c["turn"]) for c in calls] == [("get_references", 1), ("list_sections", 2), ("think", 2)]
