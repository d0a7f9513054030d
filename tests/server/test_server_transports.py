"""The server over real transports: stdio (a subprocess) and Streamable HTTP (uvicorn on loopback)."""

import json
import sqlite3
import sys

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from support.release_fixture import pid
from support.server_helpers import text

from agenthop.server.log.checkpoint import read_records
from agenthop.server.transport.http import ServerThread

pytestmark = pytest.mark.anyio

ERAS = ["auto", "legacy"]


def stdio_params(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "agenthop.server", "serve", *args])


@pytest.mark.parametrize("mode", ERAS)
async def test_stdio_serves_one_item_session(fixture_corpus, tmp_path, mode):
    log = tmp_path / "log.sqlite"
    params = stdio_params(
        "--corpus", str(fixture_corpus), "--item", "st_0001", "--run", "stdio-run", "--log", str(log), "--budget", "12"
    )
    async with Client(params, mode=mode, read_timeout_seconds=30) as client:
        prompt = await client.get_prompt("research_task")
        read = await client.call_tool(
            "read_section",
            {"paper_id": pid("B"), "section": "Experiments"},
            meta={"agenthop/turn": 1, "agenthop/tokens": 900},
        )
        submit = await client.call_tool("submit_answer", {"answer": "B", "reasoning": "4,096 examples"})
    task = prompt.messages[0].content.text
    assert "How many training examples" in task and "(B) 4,096" in task and "a budget of 12 points" in task
    assert "4,096 examples" in text(read) and text(read).endswith(
        "[Turn: 1 | Tokens used: 900 | Budget used: 5/12 (7 left)]"
    )
    assert submit.structured_content["session_ended"] is True
    records = list(read_records(log, run="stdio-run"))
    assert [r["kind"] for r in records] == ["session_start", "call", "call", "session_end"]
    assert records[0]["transport"] == "stdio" and records[-1]["answer"] == "B"


async def test_stdio_explore_mode_has_no_budget(fixture_corpus, tmp_path):
    params = stdio_params("--corpus", str(fixture_corpus), "--log", str(tmp_path / "log.sqlite"))
    async with Client(params, read_timeout_seconds=30) as client:
        result = await client.call_tool("get_references", {"paper_id": pid("C")})
    # Explore mode sees the union of all graphs: C cites I in st_0002's graph.
    assert [r["paper_id"] for r in result.structured_content["references"]] == [pid("I")]
    assert text(result).endswith("[Budget used: 1 (no limit)]")


@pytest.mark.parametrize("mode", ERAS)
async def test_http_session_lifecycle(fixture_corpus, tmp_path, mode):
    log = tmp_path / "log.sqlite"
    with ServerThread(str(fixture_corpus), str(log)) as server:
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            created = (
                await http.post(
                    "/sessions", json={"item": "mt_0001", "run": "r1", "budget": 10, "client": {"name": "test"}}
                )
            ).json()
            async with (
                httpx2.AsyncClient() as mcp_http,
                Client(streamable_http_client(created["mcp_url"], http_client=mcp_http), mode=mode) as client,
            ):
                task = (await client.get_prompt("research_task")).messages[0].content.text
                refs = await client.call_tool("get_references", {"paper_id": pid("J")}, meta={"agenthop/turn": 1})
            status = (await http.get(f"/sessions/{created['session_id']}")).json()
            ended = await http.post(
                f"/sessions/{created['session_id']}/end", json={"termination": "max_turns", "reason": "20 turns"}
            )
            again = await http.post(f"/sessions/{created['session_id']}/end", json={"termination": "error"})
    assert created["caps"] == {"budget": 10, "max_turns": 20, "max_tokens": 200000} and len(created["session_id"]) >= 32
    assert "Which pair of settings" in task
    assert [r["paper_id"] for r in refs.structured_content["references"]] == [pid("B"), pid("K"), pid("D")]
    assert status["budget_used"] == 1 and status["ended"] is False
    assert ended.status_code == 200 and again.status_code == 409
    records = list(read_records(log, run="r1"))
    assert records[0]["client"] == {"name": "test"} and records[-1]["termination"] == "max_turns"


async def test_http_session_named_by_header_and_refused_without_one(fixture_corpus, tmp_path):
    with ServerThread(str(fixture_corpus), str(tmp_path / "log.sqlite")) as server:
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            created = (await http.post("/sessions", json={"item": "st_0001"})).json()
        async with (
            httpx2.AsyncClient(headers=created["headers"]) as mcp_http,
            Client(streamable_http_client(f"{server.base_url}/mcp", http_client=mcp_http)) as client,
        ):
            by_header = await client.call_tool("think", {"reasoning": "x"})
        async with (
            httpx2.AsyncClient() as mcp_http,
            Client(streamable_http_client(f"{server.base_url}/mcp?session=forged", http_client=mcp_http)) as client,
        ):
            forged = await client.call_tool("think", {"reasoning": "x"})
        async with (
            httpx2.AsyncClient() as mcp_http,
            Client(streamable_http_client(f"{server.base_url}/mcp", http_client=mcp_http)) as client,
        ):
            tools = await client.list_tools()
            anonymous = await client.call_tool("think", {"reasoning": "x"})
    assert not by_header.is_error and "Budget used: 0/30" in text(by_header)
    assert forged.is_error and "Unknown session 'forged'" in text(forged)
    assert len(tools.tools) == 7 and anonymous.is_error and "POST /sessions" in text(anonymous)
    # Refused for want of a session, yet logged (with no run label: no run owns them).
    orphans = [
        r
        for r in read_records(tmp_path / "log.sqlite")
        if r["kind"] == "call" and r["run"] is None and r["seq"] is None
    ]
    assert [(r["session_id"], r["outcome"], r["cost"]) for r in orphans] == [
        ("forged", "invalid", 0),
        (None, "invalid", 0),
    ]


async def test_http_explore_sessions_take_the_servers_explore_budget(fixture_corpus, tmp_path):
    with ServerThread(str(fixture_corpus), str(tmp_path / "log.sqlite"), explore_budget=3) as server:
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            explore = (await http.post("/sessions", json={})).json()
            item = (await http.post("/sessions", json={"item": "st_0001"})).json()
    assert explore["caps"] == {"budget": 3, "max_turns": None, "max_tokens": None}
    assert item["caps"]["budget"] == 30


@pytest.mark.parametrize(
    "body, status, fragment",
    [
        ({"item": "nope"}, 404, "unknown item"),
        ({"item": 5}, 400, "'item'"),
        ({"budget": -3}, 400, "'budget'"),
        ({"budget": "30"}, 400, "'budget'"),
        ({"disabled_tools": ["fly"]}, 400, "unknown tools"),
        ({"colour": "red"}, 400, "unknown field"),
        ([1, 2], 400, "JSON object"),
    ],
)
async def test_session_creation_validates_its_input(fixture_corpus, tmp_path, body, status, fragment):
    with ServerThread(str(fixture_corpus), str(tmp_path / "log.sqlite")) as server:
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            response = await http.post("/sessions", json=body)
            bad_json = await http.post("/sessions", content=b"{not json")
            unknown_end = await http.post("/sessions/nope/end", json={"termination": "error"})
    assert response.status_code == status and fragment in response.json()["error"]
    assert bad_json.status_code == 400 and unknown_end.status_code == 404


async def test_bearer_token_is_required_when_set(fixture_corpus, tmp_path):
    with ServerThread(str(fixture_corpus), str(tmp_path / "log.sqlite"), auth_token="s3cret") as server:
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            missing = await http.post("/sessions", json={})
            wrong = await http.get("/health", headers={"Authorization": "Bearer nope"})
            created = await http.post("/sessions", json={"item": "st_0001"}, headers={"Authorization": "Bearer s3cret"})
            mcp_denied = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert missing.status_code == 401 and wrong.status_code == 401 and mcp_denied.status_code == 401
    assert created.status_code == 201


async def test_32_concurrent_sessions_keep_their_own_budgets_and_one_record_per_call(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    n_sessions, reads = 32, 3
    with ServerThread(str(fixture_corpus), str(log)) as server:
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            sessions = [
                (await http.post("/sessions", json={"item": "st_0001", "run": "load", "budget": 5 * i})).json()
                for i in range(n_sessions)
            ]

        async def agent(session, outcomes):
            async with (
                httpx2.AsyncClient() as mcp_http,
                Client(streamable_http_client(session["mcp_url"], http_client=mcp_http)) as client,
            ):
                for _ in range(reads):
                    result = await client.call_tool("read_section", {"paper_id": pid("B"), "section": "C"})
                    outcomes[session["session_id"]].append(result.structured_content["outcome"])

        outcomes = {s["session_id"]: [] for s in sessions}
        async with anyio.create_task_group() as tg:
            for session in sessions:
                tg.start_soon(agent, session, outcomes)
    for i, session in enumerate(sessions):
        # Session i can pay for i reads of 5 points; the rest are rejected (two in a row end it).
        paid = min(i, reads)
        expected = ["ok"] * paid + (["budget_rejected", "budget_rejected", "session_ended"][: reads - paid])
        assert outcomes[session["session_id"]] == expected, i
    call_records = [r for r in read_records(log, run="load") if r["kind"] == "call"]
    assert len(call_records) == n_sessions * reads
    per_session = {}
    for r in read_records(log, run="load"):
        per_session.setdefault(r["session_id"], []).append(r["seq"])
    assert all(seqs == list(range(len(seqs))) for seqs in per_session.values())  # no gaps, no duplicates


def test_server_refuses_to_start_on_a_bad_corpus(tmp_path):
    from click.testing import CliRunner

    from agenthop.server.cli import main

    not_sqlite = tmp_path / "junk.sqlite"
    not_sqlite.write_bytes(b"this is not a database" * 100)
    wrong_version = tmp_path / "old.sqlite"
    with sqlite3.connect(wrong_version) as conn:
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
        conn.execute("INSERT INTO meta VALUES ('schema_version', '0')")
    runner = CliRunner()
    for path, fragment in [
        (tmp_path / "missing.sqlite", "corpus file not found"),
        (not_sqlite, "not a readable SQLite corpus"),
        (wrong_version, "schema version 0"),
    ]:
        result = runner.invoke(main, ["serve", "--corpus", str(path), "--log", str(tmp_path / "l.sqlite")])
        assert result.exit_code == 1 and fragment in result.output, result.output


def test_log_export_prints_every_record_as_json(fixture_corpus, tmp_path):
    from click.testing import CliRunner

    from agenthop.server.caps import Caps
    from agenthop.server.cli import main
    from agenthop.server.log.checkpoint import CheckpointLog
    from agenthop.server.transport.mcp_app import make_sandbox

    log_path = tmp_path / "log.sqlite"
    log = CheckpointLog(log_path)
    sandbox = make_sandbox(fixture_corpus, log, Caps())
    for run in ("a", "b"):
        sandbox.sessions.create(sandbox.scope("st_0001"), run=run).call("think", {"reasoning": run})
    log.close()
    result = CliRunner().invoke(main, ["log", "export", str(log_path), "--run", "b"])
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert [(r["kind"], r["run"]) for r in lines] == [("session_start", "b"), ("call", "b")]
    assert CliRunner().invoke(main, ["log", "runs", str(log_path)]).output.split() == ["a", "b"]
    for command in ("export", "runs"):
        missing = CliRunner().invoke(main, ["log", command, str(tmp_path / "none.sqlite")])
        assert missing.exit_code == 1 and "log file not found" in missing.output
    not_a_log = CliRunner().invoke(main, ["log", "runs", str(fixture_corpus)])
    assert not_a_log.exit_code == 1 and "not a readable checkpoint log" in not_a_log.output


async def test_stdio_stderr_has_no_library_debug_lines_at_the_default_level(fixture_corpus, tmp_path):
    from mcp.client.stdio import stdio_client

    stderr = tmp_path / "stderr.txt"
    params = stdio_params("--corpus", str(fixture_corpus), "--log", str(tmp_path / "log.sqlite"))
    with open(stderr, "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=30) as client:
            result = await client.call_tool("search_papers", {"query": "paper abstract"})  # builds a bm25s index
    assert result.structured_content["results"]
    logged = stderr.read_text()
    assert "DEBUG" not in logged and "bm25s" not in logged, logged
