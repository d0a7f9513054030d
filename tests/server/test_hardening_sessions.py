"""No cheating: a session cannot spend or end another's budget, ended stays ended, IDs are
unguessable, and the error paths of the HTTP API reveal no gold data."""

from __future__ import annotations

import json
import math
import os
from collections import Counter

import anyio
import httpx2
import pytest
from conftest import GOLD_WORDS
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from support.hardening_common import raw_call_body, raw_headers
from support.release_fixture import pid

from agenthop.server.corpus_schema import open_corpus
from agenthop.server.log.checkpoint import read_records
from agenthop.server.transport.http import ServerThread

pytestmark = pytest.mark.anyio

READ_B = ("read_section", {"paper_id": pid("B"), "section": "C"})


async def _create(http, **body) -> dict:
    response = await http.post("/sessions", json=body)
    assert response.status_code == 201, response.text
    return response.json()


async def _call(url: str, headers: dict, name: str, args: dict):
    async with httpx2.AsyncClient(headers=headers) as h, Client(streamable_http_client(url, http_client=h)) as client:
        return await client.call_tool(name, args)


async def test_query_parameter_wins_over_header_and_only_that_session_is_charged(fixture_corpus, tmp_path):
    """A request naming session A in the URL and B in the header is A's call: B is never charged."""
    log = tmp_path / "log.sqlite"
    with ServerThread(str(fixture_corpus), str(log)) as server:
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            a, b = (
                await _create(http, item="st_0001", run="x", budget=10),
                await _create(http, item="st_0001", run="x", budget=10),
            )
            mixed = await _call(a["mcp_url"], {"X-AgentHop-Session": b["session_id"]}, *READ_B)
            header_only = await _call(
                f"{server.base_url}/mcp",
                {"X-AgentHop-Session": b["session_id"]},
                "get_paper_info",
                {"paper_id": pid("A")},
            )
            status_a = (await http.get(f"/sessions/{a['session_id']}")).json()
            status_b = (await http.get(f"/sessions/{b['session_id']}")).json()
    assert mixed.structured_content["budget_used"] == 5 and header_only.structured_content["budget_used"] == 1
    assert status_a["budget_used"] == 5 and status_b["budget_used"] == 1
    calls = [r for r in read_records(log) if r["kind"] == "call"]
    assert [(c["session_id"], c["tool"], c["cost"]) for c in calls] == [
        (a["session_id"], "read_section", 5),
        (b["session_id"], "get_paper_info", 1),
    ]


async def test_a_session_cannot_be_ended_or_charged_without_its_exact_id(fixture_corpus, tmp_path):
    with ServerThread(str(fixture_corpus), str(tmp_path / "log.sqlite")) as server:
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            victim = await _create(http, item="st_0001", budget=10)
            sid = victim["session_id"]
            near_misses = [
                sid[:-1],
                sid + "x",
                sid.upper() if sid.upper() != sid else sid.lower(),
                sid[:16],
                f"{sid}/..",
                "%2e%2e",
                " " + sid,
            ]
            ends = [
                await http.post(f"/sessions/{guess}/end", json={"termination": "abandoned"}) for guess in near_misses
            ]
            calls = [await _call(f"{server.base_url}/mcp?session={guess}", {}, *READ_B) for guess in near_misses[:4]]
            status = (await http.get(f"/sessions/{sid}")).json()
    assert all(r.status_code in (404, 405) for r in ends), [r.status_code for r in ends]
    assert all(c.is_error and "Unknown session" in c.content[0].text for c in calls)
    assert status["budget_used"] == 0 and status["ended"] is False


async def test_an_ended_session_stays_ended_after_attempts_to_end_or_use_it_again(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    with ServerThread(str(fixture_corpus), str(log)) as server:
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            answered = await _create(http, item="st_0001", run="ended", budget=10)
            url = answered["mcp_url"]
            async with httpx2.AsyncClient() as h, Client(streamable_http_client(url, http_client=h)) as client:
                submit = await client.call_tool("submit_answer", {"answer": "B", "reasoning": "r"})
                again = [
                    await http.post(f"/sessions/{answered['session_id']}/end", json=body)
                    for body in (
                        {"termination": "abandoned"},
                        {"termination": "error", "reason": "x"},
                        {"termination": "answer"},
                        {"termination": "budget"},
                        {},
                        {"termination": None},
                        [1],
                    )
                ]
                after = [
                    await client.call_tool(*READ_B),
                    await client.call_tool("submit_answer", {"answer": "A", "reasoning": "r"}),
                    await client.call_tool("think", {"reasoning": "x"}),
                ]
            status = (await http.get(f"/sessions/{answered['session_id']}")).json()

            # Ended by the runner first (max_turns): a later submit is refused and the end cannot be overwritten.
            capped = await _create(http, item="st_0001", run="ended", budget=10)
            first = await http.post(f"/sessions/{capped['session_id']}/end", json={"termination": "max_turns"})
            late_submit = await _call(capped["mcp_url"], {}, "submit_answer", {"answer": "B", "reasoning": "late"})
            second = await http.post(f"/sessions/{capped['session_id']}/end", json={"termination": "abandoned"})
            capped_status = (await http.get(f"/sessions/{capped['session_id']}")).json()
    assert submit.structured_content["session_ended"] is True
    assert [r.status_code for r in again] == [409, 409, 400, 400, 400, 400, 400]
    assert all(r.structured_content["outcome"] == "session_ended" and r.structured_content["cost"] == 0 for r in after)
    assert status["ended"] and status["termination"] == "answer" and status["budget_used"] == 0
    assert first.status_code == 200 and second.status_code == 409
    assert late_submit.structured_content["outcome"] == "session_ended" and capped_status["termination"] == "max_turns"
    ends = [(r["session_id"], r["termination"], r["answer"]) for r in read_records(log) if r["kind"] == "session_end"]
    assert ends == [(answered["session_id"], "answer", "B"), (capped["session_id"], "max_turns", None)]


async def test_concurrent_end_requests_end_a_session_exactly_once(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    with ServerThread(str(fixture_corpus), str(log)) as server:
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            sid = (await _create(http, item="st_0001", run="race"))["session_id"]
            codes = []

            async def end(termination):
                codes.append((await http.post(f"/sessions/{sid}/end", json={"termination": termination})).status_code)

            async with anyio.create_task_group() as tg:
                for i in range(24):
                    tg.start_soon(end, ("abandoned", "error", "max_turns", "token_limit")[i % 4])
    assert sorted(codes) == [200] + [409] * 23
    assert len([r for r in read_records(log) if r["kind"] == "session_end"]) == 1


async def test_session_ids_are_unguessable(fixture_corpus, tmp_path):
    with ServerThread(str(fixture_corpus), str(tmp_path / "log.sqlite")) as server:
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            ids = [(await _create(http, item="st_0001", run="same"))["session_id"] for _ in range(100)]
    alphabet = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    assert len(set(ids)) == len(ids)
    assert all(len(i) >= 32 and set(i) <= alphabet for i in ids)
    # Not sequential or time-based: consecutive IDs share (almost) no position, and no prefix is common.
    for x, y in zip(ids, ids[1:]):
        assert sum(a == b for a, b in zip(x, y)) <= 6, (x, y)
    assert max(Counter(i[:3] for i in ids).values()) <= 2
    # Per-character entropy of the pooled characters is close to log2(64) = 6 bits: ~192 bits per ID.
    counts = Counter("".join(ids))
    total = sum(counts.values())
    entropy = -sum(n / total * math.log2(n / total) for n in counts.values())
    assert entropy > 5.8 and entropy * len(ids[0]) >= 180


async def test_error_paths_of_the_http_api_reveal_no_gold_and_no_text(canary_corpus, tmp_path):
    conn = open_corpus(canary_corpus)
    sections = [t for (t,) in conn.execute("SELECT text FROM sections") if len(t) > 20]
    with ServerThread(str(canary_corpus), str(tmp_path / "log.sqlite")) as server:
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            sid = (await _create(http, item="st_0001"))["session_id"]
            mcp = f"/mcp?session={sid}"
            responses = [
                await http.post("/sessions", json={"item": "secret"}),
                await http.post("/sessions", json={"item": "st_0001' OR 1=1 --"}),
                await http.post("/sessions", json={"item": "../st_0001"}),
                await http.post("/sessions", json={"answer": 1}),
                await http.post("/sessions", content=b"\x00\xff", headers={"content-type": "application/json"}),
                await http.post(
                    "/sessions", content=b"item=st_0001", headers={"content-type": "application/x-www-form-urlencoded"}
                ),
                await http.get("/sessions/gold_items"),
                await http.get(f"/sessions/{sid}/../../gold"),
                await http.post(f"/sessions/{sid}/end", json={"termination": "answer", "answer": "B"}),
                await http.delete(f"/sessions/{sid}"),
                await http.get("/gold"),
                await http.get("/sessions"),
                await http.put("/health"),
                await http.get("/mcp"),
                await http.post(mcp, content=b"{oops", headers=raw_headers("tools/call", "think")),
                await http.post(
                    mcp,
                    json={"jsonrpc": "2.0", "id": 1, "method": "gold/list", "params": {"_meta": {}}},
                    headers=raw_headers("gold/list"),
                ),
                await http.post(
                    mcp,
                    json={
                        "jsonrpc": "2.0",
                        "id": 2,
                        "method": "resources/read",
                        "params": {"uri": "agenthop://gold", "_meta": raw_call_body("", {})["params"]["_meta"]},
                    },
                    headers=raw_headers("resources/read"),
                ),
                await http.post(
                    mcp,
                    json={
                        "jsonrpc": "2.0",
                        "id": 3,
                        "method": "prompts/get",
                        "params": {"name": "answer_key", "_meta": raw_call_body("", {})["params"]["_meta"]},
                    },
                    headers=raw_headers("prompts/get"),
                ),
                await http.post(
                    mcp,
                    json=raw_call_body("read_section", {"paper_id": pid("B"), "section": "zzz"}),
                    headers=raw_headers("tools/call", "read_section"),
                ),
                await http.post(
                    mcp,
                    json=raw_call_body("get_paper_info", {"paper_id": pid("H")}),  # another item's gold paper
                    headers=raw_headers("tools/call", "get_paper_info"),
                ),
                await http.post(
                    mcp,
                    json=raw_call_body("submit_answer", {"answer": "E", "reasoning": "?"}),
                    headers=raw_headers("tools/call", "submit_answer"),
                ),
            ]
    seen = [r.status_code for r in responses]
    assert all(code >= 400 or "error" in r.text or 'isError":true' in r.text for code, r in zip(seen, responses)), seen
    for response in responses:
        blob = response.text
        assert not any(word in blob for word in GOLD_WORDS), blob[:300]
        assert not any(text in blob for text in sections), blob[:300]
        assert "Traceback" not in blob and "sqlite3." not in blob, blob[:300]


def test_ids_in_the_log_match_the_sessions_that_made_the_calls(fixture_corpus, tmp_path):
    """Across 16 interleaved sessions, each call record carries the ID of the session that was charged."""
    log = tmp_path / "log.sqlite"
    with ServerThread(str(fixture_corpus), str(log)) as server, httpx2.Client(base_url=server.base_url) as http:
        sessions = [
            http.post("/sessions", json={"item": "st_0001", "run": "mix", "budget": 30}).json() for _ in range(16)
        ]
        expected = Counter()
        rng = __import__("random").Random(os.getpid())
        for n in range(48):
            s = rng.choice(sessions)
            other = rng.choice(sessions)
            answer = http.post(
                f"/mcp?session={s['session_id']}",
                json=raw_call_body("get_paper_info", {"paper_id": pid("A")}, n),
                headers={**raw_headers("tools/call", "get_paper_info"), "X-AgentHop-Session": other["session_id"]},
            )
            assert answer.json()["result"]["structuredContent"]["outcome"] == "ok"
            expected[s["session_id"]] += 1
        budgets = {s["session_id"]: http.get(f"/sessions/{s['session_id']}").json()["budget_used"] for s in sessions}
    logged = Counter(r["session_id"] for r in read_records(log) if r["kind"] == "call")
    assert logged == expected and budgets == {sid: expected.get(sid, 0) for sid in budgets}
    assert json.dumps(budgets)  # plain data


async def test_ended_sessions_leave_memory_and_stay_answerable_from_the_log(fixture_corpus, tmp_path):
    """Only the most recently ended sessions stay in memory; an older one is answered from the log,
    its calls are still refused as session_ended (logged, with the next seq), and it cannot be ended again."""
    log = tmp_path / "log.sqlite"
    with ServerThread(str(fixture_corpus), str(log), ended_kept=3) as server:
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            sessions = [await _create(http, item="st_0001", run="memory", budget=10) for _ in range(12)]
            first = sessions[0]
            submitted = await _call(first["mcp_url"], {}, "submit_answer", {"answer": "C", "reasoning": "r"})
            for s in sessions[1:]:
                assert (
                    await http.post(f"/sessions/{s['session_id']}/end", json={"termination": "max_turns"})
                ).status_code == 200
            health = (await http.get("/health")).json()
            state = (await http.get(f"/sessions/{first['session_id']}")).json()
            late = await _call(first["mcp_url"], {}, *READ_B)
            again = await http.post(f"/sessions/{first['session_id']}/end", json={"termination": "error"})
            unknown = await http.get("/sessions/never-created")
    assert submitted.structured_content["outcome"] == "ok"
    assert health["live"] == 0 and health["ended_in_memory"] <= 3 + 1  # the revived first session may be among them
    assert state == {
        "session_id": first["session_id"],
        "item": "st_0001",
        "run": "memory",
        "caps": {"budget": 10, "max_turns": 20, "max_tokens": 200_000},
        "budget_used": 0,
        "ended": True,
        "termination": "answer",
        "answer": "C",
    }
    assert (
        late.is_error
        and late.structured_content["outcome"] == "session_ended"
        and "answer was submitted" in late.content[0].text
    )
    assert again.status_code == 409 and unknown.status_code == 404
    records = [r for r in read_records(log) if r["session_id"] == first["session_id"]]
    assert [(r["kind"], r["seq"], r.get("outcome")) for r in records] == [
        ("session_start", 0, None),
        ("call", 1, "ok"),
        ("session_end", 2, None),
        ("call", 3, "session_ended"),
    ]


async def test_a_session_another_server_process_left_open_is_unknown_on_every_route(fixture_corpus, tmp_path):
    """A session the log shows as never ended belonged to another process (one that was stopped or crashed):
    GET, end and MCP calls all treat it as unknown, rather than GET reporting it live while nothing can use it."""
    log = tmp_path / "log.sqlite"
    with ServerThread(str(fixture_corpus), str(log)) as first_server:
        async with httpx2.AsyncClient(base_url=first_server.base_url) as http:
            orphan = await _create(http, item="st_0001", run="orphan")
    with ServerThread(str(fixture_corpus), str(log)) as server:
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            state = await http.get(f"/sessions/{orphan['session_id']}")
            end = await http.post(f"/sessions/{orphan['session_id']}/end", json={"termination": "error"})
            call = await _call(f"{server.base_url}/mcp?session={orphan['session_id']}", {}, *READ_B)
    assert state.status_code == 404 and end.status_code == 404
    assert call.is_error and "Unknown session" in call.content[0].text


@pytest.mark.slow
def test_many_ended_sessions_do_not_grow_server_memory(fixture_corpus, tmp_path):
    """RSS of a real server process grows by less than 0.8 kB per session over 1,000 sessions created and ended
    (today every session stays for the life of the process)."""
    from support.hardening_common import ServerProcess, rss_kb

    with (
        ServerProcess(fixture_corpus, tmp_path / "log.sqlite") as server,
        httpx2.Client(base_url=server.base_url) as http,
    ):

        def cycle(n: int) -> None:
            for _ in range(n):
                sid = http.post("/sessions", json={"item": "st_0001", "run": "rss"}).json()["session_id"]
                assert http.post(f"/sessions/{sid}/end", json={"termination": "abandoned"}).status_code == 200

        cycle(200)  # warm up: caches, the ended-session window, allocator pools
        warm = rss_kb(server.proc.pid)
        cycle(1_000)
        grown = rss_kb(server.proc.pid) - warm
        health = http.get("/health").json()
    assert health["live"] == 0 and health["ended_in_memory"] <= 256
    # Kept sessions cost about 1.6 kB each (1.6 MB for 1,000); allocator noise stays well below that.
    assert grown < 800, f"RSS grew {grown} kB over 1,000 ended sessions"
