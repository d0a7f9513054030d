"""Load: 64 concurrent sessions over HTTP against a real server process; every response is
correct, every call is logged once, and the server's memory stays flat across rounds."""

from __future__ import annotations

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from support.hardening_common import BUDGET, SCRIPT, ServerProcess, raw_call_body, raw_headers, rss_kb

from agenthop.server.log.checkpoint import read_records

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

N_SESSIONS = 64
RAW_ROUNDS = 2


async def _new_sessions(http, run: str) -> list[dict]:
    return [
        (await http.post("/sessions", json={"item": "st_0001", "run": run, "budget": BUDGET})).json()
        for _ in range(N_SESSIONS)
    ]


def _check(result_data: dict, step: int, where: str) -> None:
    _, _, outcome, used = SCRIPT[step]
    assert (result_data["outcome"], result_data["budget_used"]) == (outcome, used), (where, step, result_data)


async def test_64_concurrent_sessions_are_correct_logged_once_and_memory_stays_flat(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    with ServerProcess(fixture_corpus, log) as server:
        async with httpx2.AsyncClient(
            base_url=server.base_url, timeout=60, limits=httpx2.Limits(max_connections=N_SESSIONS)
        ) as http:
            # Round 1: real MCP clients, both protocol eras (every eighth session speaks the 2025 protocol).
            sessions = await _new_sessions(http, "load-0")

            async def mcp_agent(i: int, session: dict) -> None:
                mode = "legacy" if i % 8 == 0 else "auto"
                async with (
                    httpx2.AsyncClient(timeout=60) as h,
                    Client(streamable_http_client(session["mcp_url"], http_client=h), mode=mode) as client,
                ):
                    for step, (tool, args, _, _) in enumerate(SCRIPT):
                        result = await client.call_tool(tool, args, meta={"agenthop/turn": step + 1})
                        _check(result.structured_content, step, f"{mode} {i}")

            with anyio.fail_after(120):
                async with anyio.create_task_group() as tg:
                    for i, session in enumerate(sessions):
                        tg.start_soon(mcp_agent, i, session)
            warm_kb = rss_kb(server.proc.pid)

            # Rounds 2..: the same script as raw JSON-RPC (a lighter client, so the server is the bottleneck).
            async def raw_agent(session: dict, round_no: int) -> None:
                url = f"/mcp?session={session['session_id']}"
                for step, (tool, args, _, _) in enumerate(SCRIPT):
                    answer = await http.post(
                        url, json=raw_call_body(tool, args, step), headers=raw_headers("tools/call", tool)
                    )
                    assert answer.status_code == 200, answer.text
                    _check(answer.json()["result"]["structuredContent"], step, f"raw round {round_no}")

            for round_no in range(1, RAW_ROUNDS + 1):
                round_sessions = await _new_sessions(http, f"load-{round_no}")
                sessions += round_sessions
                with anyio.fail_after(120):
                    async with anyio.create_task_group() as tg:
                        for session in round_sessions:
                            tg.start_soon(raw_agent, session, round_no)
            end_kb = rss_kb(server.proc.pid)
            health = (await http.get("/health")).json()

    n_calls = len(sessions) * len(SCRIPT)
    records = list(read_records(log))
    calls = [r for r in records if r["kind"] == "call"]
    assert len(calls) == n_calls and health["sessions"] == len(sessions)
    by_session: dict[str, list[dict]] = {}
    for r in records:
        by_session.setdefault(r["session_id"], []).append(r)
    assert set(by_session) == {s["session_id"] for s in sessions}
    for rs in by_session.values():
        assert [r["seq"] for r in rs] == list(range(len(rs)))
        assert [r["kind"] for r in rs] == ["session_start"] + ["call"] * 7 + ["session_end", "call"]
        assert [(r["outcome"], r["budget_after"]) for r in rs if r["kind"] == "call"] == [
            (o, u) for _, _, o, u in SCRIPT
        ]
    # Flat memory: after the warm-up round, two more rounds (1,024 calls, 128 sessions) add little (about 1-2 MB
    # here). The bound is generous for allocator noise on a shared machine; a leak of 24 KB per call would exceed it.
    growth_mb = (end_kb - warm_kb) / 1024
    assert growth_mb < 24, f"RSS grew {growth_mb:.1f} MB ({warm_kb} -> {end_kb} kB) over {RAW_ROUNDS} rounds"


def test_the_http_server_caps_glibc_malloc_arenas_unless_told_otherwise(monkeypatch):
    """Two arenas instead of glibc's 8 per core (docs/reliability.md, section 6); MALLOC_ARENA_MAX set by hand wins."""
    import platform

    from agenthop.server.transport.serving import _fewer_malloc_arenas

    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    capped = _fewer_malloc_arenas()
    monkeypatch.setenv("MALLOC_ARENA_MAX", "8")
    assert capped is (platform.libc_ver()[0] == "glibc")
    assert _fewer_malloc_arenas() is False
