"""Small pieces of the runner, exercised directly (no network)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import httpx2
import openai
import pytest

from agenthop.llm.pricing import PriceTable
from agenthop.llm.retry import CallStats, HardModelError, RetryPolicy, call_with_retry, is_transient
from agenthop.runner.items import ItemsError, filter_items, read_items
from agenthop.runner.raw_agent import parse_arguments, parse_letter
from agenthop.runner.readfirst import ReadFirstGate
from agenthop.runner.records import RecordWriter, load_state
from agenthop.textmatch import header_score, reasoning_cue


def test_read_items_formats(tmp_path):
    qa = tmp_path / "full.jsonl"
    qa.write_text(
        json.dumps({"id": "st_0001", "question_type": "single-target", "depth": 2})
        + "\n"
        + json.dumps({"id": "mt_0002", "question_type": "multi-target", "depth": 1})
        + "\n\n"
    )
    refs = read_items(qa)
    assert [(r.id, r.depth) for r in refs] == [("st_0001", 2), ("mt_0002", 1)]
    assert [r.id for r in filter_items(refs, "multi-target", None, None)] == ["mt_0002"]
    assert [r.id for r in filter_items(refs, None, 2, None)] == ["st_0001"]
    ids = tmp_path / "ids.txt"
    ids.write_text("# a comment\nst_0001\nmt_0002\nst_0001\n")
    refs = read_items(ids)
    assert [r.id for r in refs] == ["st_0001", "mt_0002"]
    assert [r.id for r in filter_items(refs, "single-target", None, 5)] == ["st_0001"]  # type from the ID prefix
    with pytest.raises(ItemsError, match="depth unknown"):
        filter_items(refs, None, 1, None)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n{"id": \n')
    with pytest.raises(ItemsError, match=r"bad.jsonl:2"):
        read_items(bad)


def test_prices(tmp_path):
    table = PriceTable.load()
    assert table.cost("gpt-4.1-mini-2025-04-14", 1_000_000, 0) == pytest.approx(0.40)
    assert table.cost("openai/gpt-4.1", 1_000_000, 1_000_000, cached_tokens=500_000) == pytest.approx(1.0 + 0.25 + 8.0)
    assert table.cost("some-local-model", 10, 10) is None
    custom = tmp_path / "p.json"
    custom.write_text(json.dumps({"qwen": {"input_per_m": 1, "output_per_m": 2}}))
    assert PriceTable.load(custom).cost("qwen2.5-7b", 1_000_000, 1_000_000, 1_000_000) == pytest.approx(3.0)
    custom.write_text(json.dumps({"qwen": {"input": 1}}))
    with pytest.raises(ValueError, match="input_per_m"):
        PriceTable.load(custom)


def test_records_survive_a_torn_line(tmp_path):
    path = tmp_path / "runner.jsonl"
    w = RecordWriter(path)
    w.write({"kind": "turn", "item_id": "a", "session_id": "s1"})
    w.write({"kind": "item_end", "item_id": "a", "session_id": "s1", "termination": "answer"})
    w.write({"kind": "item_end", "item_id": "b", "session_id": "s2", "termination": "error"})
    w.write({"kind": "turn", "item_id": "c", "session_id": "s3"})
    w.close()
    with open(path, "a") as fh:
        fh.write('{"kind": "item_end", "item_id": "c", "sess')  # killed mid-write
    state = load_state(path)
    assert set(state.final) == {"a"} and set(state.errored) == {"b"} and state.open_sessions == {"s3": "c"}
    w = RecordWriter(path)
    w.write({"kind": "item_end", "item_id": "c", "session_id": "s4", "termination": "answer"})
    w.close()
    assert set(load_state(path).final) == {"a", "c"}


def test_parse_arguments_and_letters():
    assert parse_arguments('{"a": 1}') == ({"a": 1}, None)
    assert parse_arguments("") == ({}, None)
    assert parse_arguments("{bad")[0] is None
    assert "not an object" in parse_arguments("[1, 2]")[1]
    assert parse_letter("The answer is (C).") == "C"
    assert parse_letter("B") == "B"
    assert parse_letter("I pick option d because") == "D"
    assert parse_letter("no idea") is None


def _status_error(status: int) -> openai.APIStatusError:
    request = httpx2.Request("POST", "http://x/v1/chat/completions")
    return openai.APIStatusError("boom", response=httpx2.Response(status, request=request), body=None)


def test_transient_classification():
    assert is_transient(_status_error(429)) and is_transient(_status_error(503)) and is_transient(_status_error(408))
    assert not is_transient(_status_error(400)) and not is_transient(_status_error(401))
    assert not is_transient(ValueError("x"))


def test_call_with_retry():
    policy = RetryPolicy(max_retries=2, backoff=0.001, jitter=0)
    calls = {"n": 0}

    async def flaky():
        calls["n"] += 1
        if calls["n"] < 3:
            raise _status_error(503)
        return "ok"

    stats = CallStats()
    assert asyncio.run(call_with_retry(flaky, policy, stats)) == "ok"
    assert stats.retries == 2 and len(stats.errors) == 2

    async def always():
        raise _status_error(502)

    with pytest.raises(HardModelError, match="persisted after 2 retries"):
        asyncio.run(call_with_retry(always, policy))

    async def hard():
        raise _status_error(404)

    with pytest.raises(HardModelError, match="404"):
        asyncio.run(call_with_retry(hard, policy))


def _answer(status: int, body, headers: dict | None = None) -> openai.APIStatusError:
    request = httpx2.Request("POST", "http://x/v1/chat/completions")
    return openai.APIStatusError("boom", response=httpx2.Response(status, request=request, headers=headers), body=body)


def test_the_same_error_answer_twice_is_deterministic_and_stops_after_one_retry():
    """llama.cpp's server answers 500 with the same body to a message shape it cannot read, every time: one retry
    shows it, and the error says why it stopped."""
    policy = RetryPolicy(max_retries=6, backoff=0.001, jitter=0)
    sent = []

    def answering(*answers):
        async def call():
            sent.append(1)
            raise answers[(len(sent) - 1) % len(answers)]  # in turn

        return call

    refusal = {"error": {"code": 500, "message": "Expected 'content' to be a string", "type": "server_error"}}
    with pytest.raises(HardModelError, match="same answer to the same request twice") as caught:
        asyncio.run(call_with_retry(answering(_answer(500, refusal)), policy))
    assert (
        caught.value.deterministic
        and caught.value.retries == 1
        and len(sent) == 2
        and "Expected 'content'" in str(caught.value)
    )

    # Different bodies, or statuses that mean "try later", or a Retry-After: transient, retried to the limit.
    for answers in (
        [_answer(500, {"error": "a"}), _answer(500, {"error": "b"})],
        [_answer(503, {"error": "overloaded"})],
        [_answer(429, {"error": "slow down"})],
        [_answer(500, {"error": "busy"}, {"retry-after": "0"})],
    ):
        sent.clear()
        with pytest.raises(HardModelError, match="persisted after 6 retries") as caught:
            asyncio.run(call_with_retry(answering(*answers), policy))
        assert not caught.value.deterministic and len(sent) == 7


def test_read_first_gate_decisions():
    gate = ReadFirstGate("What BLEU score did that work report in its results?")
    listing = {
        "outcome": "ok",
        "results": [
            {"rank": 1, "paper_id": "p1", "has_text": False},
            {"rank": 2, "paper_id": "p2", "has_text": True},
            {"rank": 3, "paper_id": "p3", "has_text": True},
        ],
    }
    gate.observe("search_papers", {"query": "q"}, listing)
    assert gate.decide("think", {}, 30) is None and gate.listed is not None  # think keeps the gate armed
    assert gate.decide("get_references", {"paper_id": "seed"}, 30) == "p2"
    assert gate.decide("get_references", {"paper_id": "seed"}, 30) is None  # disarmed after one decision
    gate.observe("search_papers", {"query": "q"}, listing)
    assert gate.decide("list_sections", {"paper_id": "p3"}, 30) is None  # the agent inspects one itself
    gate.observe("search_papers", {"query": "q"}, listing)
    assert gate.decide("submit_answer", {"answer": "A"}, 30) is None
    gate.observe("search_papers", {"query": "q"}, listing)
    assert gate.decide("search_papers", {"query": "x"}, 5) is None  # cannot pay for list + read
    gate.observe("read_section", {"paper_id": "p2"}, {"outcome": "ok"})
    gate.observe("search_papers", {"query": "q"}, listing)
    assert gate.decide("search_papers", {"query": "x"}, 30) == "p3"  # p2 was read already
    best = gate.best_section(
        [
            {"alias": "A", "header": "Introduction"},
            {"alias": "B", "header": "Main Results"},
            {"alias": "C", "header": "Conclusion"},
        ]
    )
    assert best["alias"] == "B"


def test_cues():
    assert reasoning_cue("What shortcoming of existing systems motivated that work?") == "MOTIVE"
    assert reasoning_cue("What dropout configuration did that work use in its training setup?") == "METHOD"
    assert reasoning_cue("How large was the test split used by that work?") == "GROUND"
    q = "What macro-F1 on MNLI did that work report for its full model in its results?"
    assert header_score("Main Results", q) > header_score("Introduction", q)


def test_a_line_torn_inside_a_multibyte_character_is_skipped(tmp_path):
    from agenthop.runner.records import read_records as read_runner_records

    path = tmp_path / "runner.jsonl"
    whole = '{"kind": "turn", "error": "café"}'.encode()
    path.write_bytes(whole[:-3] + b"\n" + whole + b"\n")  # the first copy stops inside "é"
    assert [r["error"] for r in read_runner_records(path)] == ["café"]


def test_record_writer_group_commit_and_a_failed_write(tmp_path, monkeypatch):
    """write() only queues; durable() returns once the records are on disk; a failed batch is retried whole."""
    import errno

    from agenthop.runner import records

    path = tmp_path / "runner.jsonl"
    w = RecordWriter(path)

    async def first():
        for i in range(50):
            w.write({"kind": "turn", "item_id": f"i{i}", "session_id": "s"})
        await w.durable()
        return [r["item_id"] for r in records.read_records(path)]

    assert asyncio.run(first()) == [f"i{i}" for i in range(50)]

    real = records._write_all
    failures = {"left": 1}

    def flaky(fd, data):
        if failures["left"]:
            failures["left"] -= 1
            real(fd, data[: len(data) // 2])  # half a batch reaches the file, then the disk is full
            raise OSError(errno.ENOSPC, "No space left on device")
        real(fd, data)

    monkeypatch.setattr(records, "_write_all", flaky)

    async def second():
        w.write({"kind": "item_end", "item_id": "x", "session_id": "s2", "termination": "answer"})
        with pytest.raises(OSError, match="No space left"):
            await w.durable()  # the caller hears of it ...

    asyncio.run(second())
    w.close()  # ... and the batch is written whole once the disk has room
    recs = list(records.read_records(path))
    assert [r["item_id"] for r in recs] == [f"i{i}" for i in range(50)] + ["x"]
    assert path.read_text().count("\n") == 51  # no torn half line left behind


def _wait_for_an_interrupt(ready, path: str) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.default_int_handler)  # as _child_main does (pytest may run with SIGINT ignored)
    try:
        ready.set()
        time.sleep(120)  # the parent's SIGINT ends this
    except KeyboardInterrupt:
        Path(path).write_text("interrupted")


def test_closing_the_process_pool_interrupts_processes_still_running_their_share(tmp_path):
    """When the parent stops before its workers have finished (a notebook interrupt reaches only it), closing
    the pool sends each unfinished worker a SIGINT, so it stops taking items instead of running on for 30 s."""
    import multiprocessing as mp

    from agenthop.runner.multiproc import ProcessPool

    ctx = mp.get_context("fork")
    ready, marker = ctx.Event(), tmp_path / "marker"
    proc = ctx.Process(target=_wait_for_an_interrupt, args=(ready, str(marker)))
    proc.start()
    assert ready.wait(60)
    pool = ProcessPool.__new__(ProcessPool)  # the pool's shutdown, over a stand-in worker
    pool.pipes, pool.procs, pool.finished = [], [proc], set()
    pool.close()
    assert marker.read_text() == "interrupted" and proc.exitcode == 0
