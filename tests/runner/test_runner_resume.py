"""A run killed with SIGKILL mid-way and resumed: nothing lost, nothing counted twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest
from support.fake_openai import FakeOpenAI, Slow, seed_id, tool_calls, turn_index

from agenthop.runner.records import read_records
from agenthop.server.log.checkpoint import read_records as read_checkpoint

pytestmark = pytest.mark.slow

N_ITEMS = 10


def script(body, fake):
    # Paced so that the kill lands while items are in flight (the test itself polls, it never sleeps to sync).
    if turn_index(body) == 0:
        return Slow(0.05, tool_calls(("get_references", {"paper_id": seed_id(body)})))
    return Slow(0.05, tool_calls(("submit_answer", {"answer": "A", "reasoning": "r"})))


def command(corpus, split, out, fake) -> list[str]:
    return [
        sys.executable,
        "-m",
        "agenthop.runner.cli",
        "--items",
        str(split),
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
        "--limit",
        str(N_ITEMS),
        "--workers",
        "2",
        "--no-progress",
    ]


def item_ends(out: Path) -> list[dict]:
    return [r for r in read_records(out / "runner.jsonl") if r["kind"] == "item_end"]


def test_sigkill_then_resume(demo, tmp_path):
    corpus, split = demo
    out = tmp_path / "run"
    with FakeOpenAI(script) as fake:
        proc = subprocess.Popen(
            command(corpus, split, out, fake),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, "OPENAI_API_KEY": "test"},
        )
        deadline = time.monotonic() + 60
        while len(item_ends(out)) < 3:
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline, "runner made no progress"
            time.sleep(0.01)  # polling interval
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        proc.stderr.close()
        before = {e["item_id"]: e for e in item_ends(out)}
        assert 3 <= len(before) < N_ITEMS
        turns_before = [r for r in read_records(out / "runner.jsonl") if r["kind"] == "turn"]

        done = subprocess.run(
            command(corpus, split, out, fake),
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "OPENAI_API_KEY": "test"},
        )
        assert done.returncode == 0, done.stderr[-2000:]

    records = list(read_records(out / "runner.jsonl"))
    finals = defaultdict(list)
    for e in (r for r in records if r["kind"] == "item_end"):
        finals[e["item_id"]].append(e)
    ids = [json.loads(line)["id"] for line in split.read_text().splitlines() if line.strip()][:N_ITEMS]
    assert sorted(finals) == sorted(ids)
    assert all(len(v) == 1 and v[0]["termination"] == "answer" for v in finals.values())
    for item, end in before.items():
        assert finals[item][0] == end  # finished items were not run again
    # Every record written before the kill is still there, in order.
    assert [r for r in records if r["kind"] == "turn"][: len(turns_before)] == turns_before
    assert sum(1 for r in records if r["kind"] == "run_start") == 2
    # The checkpoint log: every item has exactly one answered session, the one item_end names.
    log = list(read_checkpoint(out / "server-log.sqlite"))
    answered = defaultdict(list)
    for r in log:
        if r["kind"] == "session_end" and r["termination"] == "answer":
            answered[r["item_id"]].append(r["session_id"])
    assert {i: s for i, s in answered.items()} == {i: [v[0]["session_id"]] for i, v in finals.items()}
    assert "10 finished" in done.stdout.replace("(", " ").replace(",", " ")
