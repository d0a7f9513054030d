"""Sessions nobody ends: the HTTP API and /play share one bounded registry.

Live sessions beyond the bound leave memory, least recently used first; one that is used again comes back from
the checkpoint log with its budget, its rejections in a row, its sequence numbers and (for /play) its turns."""

from __future__ import annotations

import gc
import tracemalloc

import httpx2
import pytest
from support.hardening_common import RAW_META, raw_call_body, raw_headers
from support.release_fixture import pid

from agenthop.server.log.checkpoint import read_records
from agenthop.server.transport.http import ServerThread

pytestmark = pytest.mark.slow


def _call(http: httpx2.Client, sid: str, name: str, args: dict, request_id: int = 1) -> dict:
    body = raw_call_body(name, args, request_id)
    response = http.post("/mcp", json=body, headers={**raw_headers("tools/call", name), "x-agenthop-session": sid})
    return response.json()["result"]["structuredContent"]


def test_abandoned_api_and_play_sessions_leave_memory_and_come_back_from_the_log(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    with (
        ServerThread(str(fixture_corpus), str(log), live_kept=20, ended_kept=10, budget=5) as server,
        httpx2.Client(base_url=server.base_url, timeout=60) as http,
    ):
        first = http.post("/sessions", json={"item": "st_0001", "run": "bounds"}).json()["session_id"]
        before = _call(http, first, "get_paper_info", {"paper_id": pid("A")})
        rejected = _call(http, first, "read_section", {"paper_id": pid("B"), "section": "A"})  # 5 > 4 left
        play = http.post("/play/api/sessions", json={"participant": "p1", "item": "st_0001"}).json()["session_id"]
        acted = http.post(
            f"/play/api/sessions/{play}/call", json={"tool": "think", "arguments": {"reasoning": "first"}}
        ).json()
        for n in range(
            40
        ):  # abandoned: created, never used, never ended (one participant each: play resumes a participant's attempt)
            assert http.post("/sessions", json={"item": "st_0002"}).status_code == 201
            assert (
                http.post("/play/api/sessions", json={"participant": f"p2-{n}", "item": "st_0002"}).status_code == 201
            )
        held = http.get("/health").json()
        # Used again: rebuilt from the log, carrying on where it was.
        after = _call(http, first, "get_paper_info", {"paper_id": pid("A")})
        second = _call(http, first, "read_section", {"paper_id": pid("B"), "section": "A"})
        state = http.get(f"/play/api/sessions/{play}").json()
        acted_again = http.post(
            f"/play/api/sessions/{play}/call", json={"tool": "think", "arguments": {"reasoning": "again"}}
        ).json()
        gave_up = http.post(f"/play/api/sessions/{play}/end", json={})
        for _ in range(40):  # out of memory again, this time one rejection away from the end of its budget
            assert http.post("/sessions", json={"item": "st_0002"}).status_code == 201
        third = _call(http, first, "read_section", {"paper_id": pid("B"), "section": "A"})
        prompt = http.post(
            f"/mcp?session={first}",
            headers=raw_headers("prompts/get", "research_task"),
            json={
                "jsonrpc": "2.0",
                "id": 5,
                "method": "prompts/get",
                "params": {"name": "research_task", "_meta": RAW_META},
            },
        ).json()
        ended = http.post(f"/sessions/{first}/end", json={"termination": "abandoned"})
        final = http.get("/health").json()
    assert held["held"]["live"] <= 20 and held["held"]["total"] <= 30 and held["held"]["live_evicted"] >= 62
    assert (
        held["held"]["limit_live"] == 20
        and held["held"]["limit_ended"] == 10
        and held["sessions"] == held["held"]["total"]
    )
    assert before["budget_used"] == 1 and rejected["outcome"] == "budget_rejected"
    assert after["outcome"] == "ok" and after["budget_used"] == 2 and after["session_ended"] is False
    assert second["outcome"] == "budget_rejected" and second["session_ended"] is False
    assert acted["turns"] == 1 and state["turns"] == 1 and state["participant"] == "p1" and not state["ended"]
    assert acted_again["turns"] == 2 and gave_up.status_code == 200 and gave_up.json()["termination"] == "abandoned"
    assert "Seed paper" in prompt["result"]["messages"][0]["content"]["text"]
    # The rejections in a row came back from the log too: this second one in a row ends the session (SPEC 4.2).
    assert third["outcome"] == "budget_rejected" and third["session_ended"] is True
    assert ended.status_code == 409 and final["held"]["live"] <= 20
    records = [r for r in read_records(log) if r["session_id"] in (first, play)]
    for sid in (first, play):
        seqs = [r["seq"] for r in records if r["session_id"] == sid]
        assert seqs == list(range(len(seqs))), (sid, seqs)  # no gap, no repeat across the trips through the log
    assert [r["turn"] for r in records if r["session_id"] == play and r["kind"] == "call"] == [1, 2]


def test_an_unknown_or_foreign_live_session_is_not_revived(fixture_corpus, tmp_path):
    """A live session of another server process sharing the log is not this process's to write to."""
    log = tmp_path / "log.sqlite"
    with ServerThread(str(fixture_corpus), str(log)) as other, httpx2.Client(base_url=other.base_url) as http:
        foreign = http.post("/sessions", json={"item": "st_0001"}).json()["session_id"]
    with ServerThread(str(fixture_corpus), str(log)) as server, httpx2.Client(base_url=server.base_url) as http:
        assert http.get(f"/sessions/{foreign}").status_code == 404
        result = http.post(
            "/mcp",
            json=raw_call_body("think", {"reasoning": "x"}),
            headers={**raw_headers("tools/call", "think"), "x-agenthop-session": foreign},
        ).json()["result"]
        play = http.get(f"/play/api/sessions/{foreign}")
    assert result["isError"] and "Unknown session" in result["content"][0]["text"]
    assert play.status_code == 404


def test_abandoned_sessions_do_not_grow_server_memory(fixture_corpus, tmp_path):
    """The Python heap of a server (traced allocations, in this process) past the live bound: 1,000 more abandoned
    sessions (API and /play) leave it where it was, where holding them would add about 2 kB each (2 MB)."""
    with (
        ServerThread(str(fixture_corpus), str(tmp_path / "log.sqlite"), live_kept=200) as server,
        httpx2.Client(base_url=server.base_url, timeout=60) as http,
    ):

        def abandon(n: int) -> None:
            for i in range(n):
                if i % 2:
                    assert http.post("/sessions", json={"item": "st_0001", "run": "heap"}).status_code == 201
                else:
                    assert (
                        http.post(
                            "/play/api/sessions", json={"participant": f"p-{n}-{i}", "item": "st_0001"}
                        ).status_code
                        == 201
                    )
                    # Each participant's key cookie belongs to their own browser: this one client forgets it, so the
                    # heap measured here (client and server share the process) is the server's, not a cookie jar's.
                    http.cookies.clear()

        tracemalloc.start()  # before the sessions the server holds are made, so they are traced too
        try:
            abandon(300)  # past the bound, and caches warm
            gc.collect()
            before = tracemalloc.get_traced_memory()[0]
            abandon(1_000)
            gc.collect()
            grown = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        health = http.get("/health").json()
    assert health["held"]["live"] == 200 and health["held"]["live_evicted"] == 1_100
    assert grown < 200_000, f"the heap grew {grown} bytes over 1,000 abandoned sessions"
