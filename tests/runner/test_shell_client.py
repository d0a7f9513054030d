"""agenthop-cli end to end: a real HTTP server on loopback, two demo items driven only through the CLI (each command a
subprocess, as a coding agent with a shell runs it), then agenthop-scorer over the server's log scores the run like
any other: the right answer on one item and a wrong one on the other give 50%, every call is one turn, and the
budget is what the calls cost."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from support.hardening_common import ServerProcess
from support.paths import REPO as ROOT

CORPUS = ROOT / "corpus.sqlite"
ITEMS = ("st_0001", "st_0002")
TOKEN = "cli-test-token-7f3a"


def cli(state: Path, server: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agenthop.runner.shell.cli", "--state", str(state), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "AGENTHOP_SERVER": server, "AGENTHOP_AUTH_TOKEN": TOKEN},
        timeout=120,
    )


def gold(item: str) -> tuple[int, str]:
    with sqlite3.connect(CORPUS) as conn:
        index = conn.execute("SELECT correct_index FROM gold_items WHERE item_id = ?", (item,)).fetchone()[0]
        seed = conn.execute("SELECT seed_paper_id FROM items WHERE item_id = ?", (item,)).fetchone()[0]
    return index, seed


@pytest.mark.slow
def test_two_items_taken_only_through_the_cli_are_scored_like_any_run(tmp_path):
    state, log = tmp_path / "state", tmp_path / "server-log.sqlite"
    # With a bearer token, which the CLI reads from the environment at each command and never writes down.
    with ServerProcess(CORPUS, log, env={"AGENTHOP_AUTH_TOKEN": TOKEN}, token=TOKEN) as server:
        for n, item in enumerate(ITEMS):
            index, seed = gold(item)
            started = cli(state, server.base_url, "start", item, "--run", "shell-agent", "--model", "a-person")
            assert started.returncode == 0, started.stderr
            assert seed in started.stdout and "submit_answer" in started.stdout  # the task, as the prompt gives it
            listed = cli(state, server.base_url, "tools", item)
            assert listed.returncode == 0 and "read_section" in listed.stdout and "paper_id" in listed.stdout
            refs = cli(state, server.base_url, "call", item, "get_references", json.dumps({"paper_id": seed}))
            assert refs.returncode == 0, refs.stderr
            assert "Turn: 1" in refs.stdout and "Budget used: 1/30" in refs.stdout
            bad = cli(state, server.base_url, "call", item, "get_paper_info", "{not json")
            assert bad.returncode == 1 and "JSON object" in bad.stderr  # nothing sent, no turn used
            info = cli(state, server.base_url, "call", item, "get_paper_info", json.dumps({"paper_id": seed}))
            assert "Turn: 2" in info.stdout and "Budget used: 2/30" in info.stdout
            # The first item answered right, the second wrong.
            letter = "ABCD"[index if n == 0 else (index + 1) % 4]
            done = cli(
                state,
                server.base_url,
                "call",
                item,
                "submit_answer",
                json.dumps({"answer": letter, "reasoning": "from the references"}),
            )
            assert done.returncode == 0 and "session has ended" in done.stdout
            after = cli(state, server.base_url, "call", item, "think", json.dumps({"thought": "more?"}))
            assert after.returncode == 2  # a call on an ended session is refused (and logged), exit 2
            again = cli(state, server.base_url, "start", item)
            assert again.returncode == 1 and "--new" in again.stderr
    assert len(list(state.glob("*.json"))) == 2 and not any(TOKEN in p.read_text() for p in state.glob("*"))
    # The server is gone: a clear error, no traceback, and the refused connection uses no turn number.
    before = json.loads((state / f"{ITEMS[1]}.json").read_text())["turn"]
    gone = cli(state, server.base_url, "call", ITEMS[1], "think", json.dumps({"thought": "anyone?"}))
    assert gone.returncode == 1 and "did not answer" in gone.stderr and "Traceback" not in gone.stderr
    assert json.loads((state / f"{ITEMS[1]}.json").read_text())["turn"] == before

    out, items_file = tmp_path / "report", tmp_path / "items.txt"
    items_file.write_text("\n".join(ITEMS) + "\n")
    scored = subprocess.run(
        [str(Path(sys.executable).parent / "agenthop-scorer"), f"{log}::shell-agent", "--corpus", str(CORPUS)]
        + ["--out", str(out), "--items", str(items_file)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert scored.returncode == 0, scored.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["items"]["n"] == 2 and summary["items"]["observed"] == 2
    assert summary["headline"]["accuracy"] == 0.5
    # Each command one turn: two reads, the answer, and the call refused after it (received and logged like any).
    assert summary["headline"]["mean_turns"] == 4
    assert summary["headline"]["mean_budget"] == 2


@pytest.mark.slow
def test_a_closed_book_session_from_the_cli_has_one_turn_and_no_tool_but_the_answer(tmp_path):
    state, log = tmp_path / "state", tmp_path / "server-log.sqlite"
    item = ITEMS[0]
    index, seed = gold(item)
    with ServerProcess(CORPUS, log) as server:
        started = cli(state, server.base_url, "start", item, "--run", "closed", "--closed-book")
        assert started.returncode == 0, started.stderr
        listed = cli(state, server.base_url, "tools", item)
        assert "submit_answer" in listed.stdout and "get_references" not in listed.stdout
        refused = cli(state, server.base_url, "call", item, "get_references", json.dumps({"paper_id": seed}))
        assert refused.returncode == 2  # made and logged, but the tool is disabled in this session
        cli(state, server.base_url, "start", ITEMS[1], "--run", "closed", "--closed-book")
        answer = json.dumps({"answer": "ABCD"[index], "reasoning": "from memory"})
        done = cli(state, server.base_url, "call", ITEMS[1], "submit_answer", answer)
        assert done.returncode == 0 and "session has ended" in done.stdout
    with sqlite3.connect(log) as conn:
        starts = [json.loads(r) for (r,) in conn.execute("SELECT record FROM records WHERE kind = 'session_start'")]
    assert len(starts) == 2
    assert all(s["caps"]["max_turns"] == 1 and "get_references" in s["disabled_tools"] for s in starts)
