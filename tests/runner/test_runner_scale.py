"""Scale-out: shards over machines, worker processes, and the library call behind the CLI.

- shards cover every item exactly once for any N (property test), and the scorer's merge of N
  sharded runs scores every item exactly as the unsharded run does (deterministic baseline);
- a run spread over worker processes writes the same runner.jsonl content (up to order and the
  fields that name sessions and times) and scores the same as one process;
- SIGKILL of a multi-process run, then resume: every item once, no answer twice, no process left;
- ``run_items`` from Python, with errors that never name CLI flags.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from support.demo_runs import VOLATILE, demo_ids, normalised_items
from support.fake_openai import FakeOpenAI, Slow, seed_id, tool_calls, turn_index

from agenthop.runner import RunError, run_items
from agenthop.runner.records import read_records
from agenthop.runner.sharding import Shard, ShardError, items_digest, parse_shard
from agenthop.scorer.cli import main as scorer_main
from agenthop.scorer.gold import Gold
from agenthop.scorer.logs import RunSpecError
from agenthop.scorer.runs import load_run, load_runs
from agenthop.scorer.shards import group_specs
from agenthop.scorer.summary import score_run
from agenthop.server.caps import Caps
from agenthop.server.log.checkpoint import read_records as read_checkpoint

pytestmark = pytest.mark.slow


@given(st.lists(st.text(min_size=1, max_size=8), unique=True, max_size=60), st.integers(min_value=1, max_value=70))
def test_shards_cover_every_item_exactly_once(items, count):
    shards = [Shard(k, count).take(items) for k in range(1, count + 1)]
    flat = [i for s in shards for i in s]
    assert sorted(flat) == sorted(items) and len(flat) == len(items)
    assert max(map(len, shards)) - min(map(len, shards)) <= 1
    for shard in shards:  # each shard keeps the list's order
        assert shard == [i for i in items if i in set(shard)]


def test_parse_shard():
    assert parse_shard("2/4") == Shard(2, 4) and str(parse_shard(" 1 / 1 ")) == "1/1"
    for bad in ("0/3", "4/3", "1/0", "a/b", "3", ""):
        with pytest.raises(ShardError, match="K"):
            parse_shard(bad)
    for index, count in ((0, 2), (3, 2), (1, 0), (True, 2), (1.0, 2)):  # built in Python, not parsed: the same rule
        with pytest.raises(ShardError, match="between 1 and N"):
            Shard(index, count)


def test_merged_shards_score_like_the_unsharded_run(demo, tmp_path):
    corpus, split = demo
    ids = demo_ids(split, 24)
    whole = run_items(ids, agent="baseline", corpus=corpus, out=tmp_path / "whole", workers=4, progress=False)
    assert whole.summary.finished == 24
    shard_dirs = []
    for k in (3, 1, 2):  # any order
        res = run_items(
            ids,
            agent="baseline",
            corpus=corpus,
            out=tmp_path / f"qwen-shard-{k}-of-3",
            shard=f"{k}/3",
            workers=4,
            progress=False,
        )
        assert res.items == Shard(k, 3).take(ids) and res.run_label == "qwen"
        manifest = json.loads((res.out / "run.json").read_text())
        assert manifest["shard"] == {"index": k, "count": 3, "items_total": 24, "items_sha256": items_digest(ids)}
        shard_dirs.append(res.out)

    gold = Gold(str(corpus))
    try:
        reference = score_run(load_run(whole.out), gold)
        (group,) = group_specs([str(d) for d in shard_dirs])
        merged = score_run(load_run(group), gold)
    finally:
        gold.close()
    assert merged["run"]["name"] == "qwen" and merged["items"]["n"] == 24
    assert normalised_items(merged) == normalised_items(reference)
    assert merged["headline"] == reference["headline"]

    # A directory holding the shard directories is that run; the CLI scores the N arguments as one run.
    parent = tmp_path / "shards"
    parent.mkdir()
    for d in shard_dirs:
        d.rename(parent / d.name)
    (run,) = load_runs(parent)
    assert run.name == "qwen" and len({s.item_id for s in run.sessions.values()}) == 24
    result = CliRunner().invoke(
        scorer_main,
        [*(str(parent / d.name) for d in shard_dirs), "--corpus", str(corpus), "--out", str(tmp_path / "report")],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "report" / "summary.json").read_text())  # one run: no per-run subdirectories
    assert normalised_items(summary) == normalised_items(reference)

    # Two shards of three: the scorer names the missing one instead of scoring a partial run as the whole.
    with pytest.raises(RunSpecError, match=r"shard\(s\) 3/3 are missing"):
        group_specs([str(parent / shard_dirs[1].name), str(parent / shard_dirs[2].name)])
    # One shard alone is the run of its own items.
    (alone,) = load_runs(parent / shard_dirs[0].name)
    assert {s.item_id for s in alone.sessions.values()} == set(Shard(3, 3).take(ids))
    # A directory holding only some shards of the run names the missing ones, as separate arguments do.
    partial = tmp_path / "partial"
    partial.mkdir()
    (parent / shard_dirs[0].name).rename(partial / shard_dirs[0].name)
    with pytest.raises(RunSpecError, match=r"shard\(s\) 1/3, 2/3 are missing"):
        load_runs(partial)


def runner_content(out: Path) -> Counter:
    """runner.jsonl without run_start, as a multiset of records stripped of identities and clocks."""
    recs = [r for r in read_records(out / "runner.jsonl") if r["kind"] != "run_start"]
    return Counter(json.dumps({k: v for k, v in r.items() if k not in VOLATILE}, sort_keys=True) for r in recs)


def test_worker_processes_write_what_one_process_writes(demo, tmp_path):
    corpus, split = demo
    ids = demo_ids(split, 16)
    one = run_items(ids, agent="baseline", corpus=corpus, out=tmp_path / "one", workers=4, progress=False)
    two = run_items(ids, agent="baseline", corpus=corpus, out=tmp_path / "two", workers=4, processes=2, progress=False)
    assert one.summary.as_dict() | {"wall_time_s_sum": 0} == two.summary.as_dict() | {"wall_time_s_sum": 0}
    assert runner_content(one.out) == runner_content(two.out)
    assert json.loads((two.out / "run.json").read_text())["processes"] == 2
    # Both processes served sessions into the one checkpoint log.
    starts = [r for r in read_checkpoint(two.out / "server-log.sqlite") if r["kind"] == "session_start"]
    assert sorted(s["item_id"] for s in starts) == sorted(ids)
    gold = Gold(str(corpus))
    try:
        assert normalised_items(score_run(load_run(one.out), gold)) == normalised_items(
            score_run(load_run(two.out), gold)
        )
    finally:
        gold.close()


def paced(body, fake):
    # Paced so the kill lands while items are in flight (the test polls; it never sleeps to synchronise).
    if turn_index(body) == 0:
        return Slow(0.05, tool_calls(("get_references", {"paper_id": seed_id(body)})))
    return Slow(0.05, tool_calls(("submit_answer", {"answer": "B", "reasoning": "r"})))


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def test_sigkill_of_a_multiprocess_run_then_resume(demo, tmp_path):
    corpus, split = demo
    n = 16
    out = tmp_path / "run"

    def command(fake):
        return [
            sys.executable,
            "-m",
            "agenthop.runner.cli",
            "--items",
            str(split),
            "--limit",
            str(n),
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
            "--workers",
            "4",
            "--processes",
            "2",
            "--no-progress",
        ]

    def ends():
        return [r for r in read_records(out / "runner.jsonl") if r["kind"] == "item_end"]

    env = {**os.environ, "OPENAI_API_KEY": "test"}
    with FakeOpenAI(paced) as fake:
        proc = subprocess.Popen(
            command(fake), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, start_new_session=True
        )
        deadline = time.monotonic() + 90
        while len(ends()) < 4:
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline, "runner made no progress"
            time.sleep(0.01)  # polling interval
        proc.send_signal(signal.SIGKILL)  # the parent only: its worker processes must follow it
        proc.wait(timeout=10)
        proc.stderr.close()
        while group_alive(proc.pid):
            assert time.monotonic() < deadline, "worker processes outlived their parent"
            time.sleep(0.01)  # polling interval
        assert 4 <= len(ends()) < n

        done = subprocess.run(command(fake), capture_output=True, text=True, timeout=180, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    final = [e for e in ends() if e["termination"] != "error"]
    assert Counter(e["item_id"] for e in final) == Counter(demo_ids(split, n))  # every item once
    answered = Counter(
        r["item_id"]
        for r in read_checkpoint(out / "server-log.sqlite")
        if r["kind"] == "session_end" and r.get("termination") == "answer"
    )
    assert set(answered) == set(demo_ids(split, n)) and set(answered.values()) == {1}  # no answer given twice


def test_run_items_errors_name_no_flags(demo, tmp_path):
    corpus, split = demo
    cases = [
        (dict(agent="raw"), "need a model name"),
        (dict(agent="baseline", corpus=corpus, server="http://127.0.0.1:1"), "not both"),
        (dict(agent="baseline"), "no corpus to serve"),
        (
            dict(agent="baseline", corpus=corpus, question_type="multi-target", depth=1, limit=1, shard="5/3"),
            "K must be",
        ),
        (dict(agent="baseline", corpus=corpus, disabled_tools=("submit_answer",)), "cannot be disabled"),
        (dict(agent="baseline", corpus=corpus, text_tools=True), "raw agent only"),
    ]
    for kwargs, words in cases:
        with pytest.raises((RunError, ShardError)) as info:
            run_items(split, out=tmp_path / "x", progress=False, **kwargs)
        assert words in str(info.value) and "--" not in str(info.value), str(info.value)
    # A run directory of another experiment: the library says what to do in words, the CLI adds the flags.
    run_items(demo_ids(split, 1), agent="baseline", corpus=corpus, out=tmp_path / "r", progress=False)
    with pytest.raises(RunError) as info:
        run_items(
            demo_ids(split, 1), agent="baseline", corpus=corpus, out=tmp_path / "r", read_first=True, progress=False
        )
    assert "different settings (ablations)" in str(info.value) and "--" not in str(info.value)


def test_cli_refuses_a_bad_shard(demo, tmp_path):
    from agenthop.runner.cli import main

    corpus, split = demo
    result = CliRunner().invoke(
        main,
        [
            "--items",
            str(split),
            "--agent",
            "baseline",
            "--corpus",
            str(corpus),
            "--out",
            str(tmp_path / "x"),
            "--shard",
            "4/3",
        ],
    )
    assert (
        result.exit_code == 2
        and "Invalid value for '--shard'" in result.output
        and "K must be between 1 and N" in result.output
    )
    assert not (tmp_path / "x").exists()  # refused before anything is written


def test_a_runner_log_that_cannot_be_written_stops_the_run_and_reruns_nothing(demo, tmp_path, monkeypatch):
    """A full disk when an answered item's item_end is written: the run stops with a clear error instead of
    treating the attempt as failed and running the item again; the queued record still reaches the file, and
    resuming runs only what is left."""
    import errno

    from agenthop.runner import records

    corpus, split = demo
    ids = demo_ids(split, 4)
    real = records._write_all
    failures = {"left": 1}

    def full_once_at_the_first_item_end(fd, data):
        if failures["left"] and b'"kind": "item_end"' in data:
            failures["left"] -= 1
            raise OSError(errno.ENOSPC, "No space left on device")
        real(fd, data)

    monkeypatch.setattr(records, "_write_all", full_once_at_the_first_item_end)
    with pytest.raises(RunError, match="cannot write .*runner.jsonl: .*No space left on device.*resume"):
        run_items(ids, agent="baseline", corpus=corpus, out=tmp_path / "run", workers=1, progress=False)
    recs = list(read_records(tmp_path / "run" / "runner.jsonl"))
    assert not [r for r in recs if r["kind"] == "attempt_error"]
    assert [r["item_id"] for r in recs if r["kind"] == "item_end"] == ids[:1]  # written once the disk had room
    resumed = run_items(ids, agent="baseline", corpus=corpus, out=tmp_path / "run", workers=1, progress=False)
    ends = [r for r in read_records(tmp_path / "run" / "runner.jsonl") if r["kind"] == "item_end"]
    assert sorted(r["item_id"] for r in ends) == sorted(ids) and resumed.summary.finished == 4
    starts = Counter(
        r["item_id"] for r in read_records(tmp_path / "run" / "runner.jsonl") if r["kind"] == "attempt_start"
    )
    assert starts == Counter(ids)  # every item ran once


def test_shards_against_one_shared_server_and_a_copied_in_shared_log_score_as_their_run(demo, tmp_path):
    """Two shards run against one server (--server): scored with that server's log, each session counts once.
    A run directory whose copied-in server log also holds another run scores its own sessions only."""
    from agenthop.server.transport.http import ServerThread

    corpus, split = demo
    ids = demo_ids(split, 6)
    log = tmp_path / "shared-server-log.sqlite"
    with ServerThread(str(corpus), str(log)) as server:
        shards = [
            run_items(
                ids,
                agent="baseline",
                out=tmp_path / f"qwen-shard-{k}-of-2",
                shard=f"{k}/2",
                server=server.base_url,
                workers=2,
                progress=False,
            ).out
            for k in (1, 2)
        ]
        # Another run of the same items on the same server, with a budget that changes its answers.
        other = run_items(
            ids,
            agent="baseline",
            out=tmp_path / "other",
            run_label="other",
            caps=Caps(budget=6),
            server=server.base_url,
            workers=2,
            progress=False,
        ).out
    whole = run_items(ids, agent="baseline", corpus=corpus, out=tmp_path / "whole", workers=2, progress=False)
    gold = Gold(str(corpus))
    try:
        reference = score_run(load_run(whole.out), gold)
        (group,) = group_specs([str(d) for d in shards])
        merged = score_run(load_run(group, server_log=log), gold)
        (tmp_path / "whole" / "server-log.sqlite").unlink()
        copied = tmp_path / "whole" / "server-log.sqlite"
        copied.write_bytes(log.read_bytes())  # the shared log: the shards' sessions (label qwen) and run 'other'
        manifest = json.loads((whole.out / "run.json").read_text())
        (whole.out / "run.json").write_text(json.dumps({**manifest, "run": "qwen"}))
        from_copy = score_run(load_run(whole.out), gold)
        assert normalised_items(score_run(load_run(other, server_log=log), gold)) != normalised_items(reference)
    finally:
        gold.close()
    assert merged["items"]["n"] == 6 and normalised_items(merged) == normalised_items(reference)

    # The copied log's sessions are the shards', not those whole's runner.jsonl names: turns come from the log.
    def without_turns_source(summary: dict) -> dict:
        return {i: {k: v for k, v in r.items() if k != "turns_source"} for i, r in normalised_items(summary).items()}

    assert from_copy["items"]["n"] == 6 and without_turns_source(from_copy) == without_turns_source(reference)
