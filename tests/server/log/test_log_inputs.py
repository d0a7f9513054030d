"""Inputs that broke the log: lone UTF-16 surrogates, NaN and Infinity, and log flooding.

Every call is answered (the rules decide: a string with a lone surrogate is not valid text, so a tool
argument holding one is refused for free), logged with exactly what was sent, and `log export` stays
strict JSON. Calls that no session vouches for store bounded arguments.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys

import httpx2
import pytest
from click.testing import CliRunner
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from support.hardening_common import RAW_META, raw_call_body, raw_headers
from support.release_fixture import pid

from agenthop.server.cli import main
from agenthop.server.log.checkpoint import read_records
from agenthop.server.sessions import STORED_ARGS_CHARS
from agenthop.server.transport.http import ServerThread

pytestmark = pytest.mark.anyio

HALF = "\ud83d"  # the first half of an emoji's surrogate pair, alone


def _strict(line: str) -> dict:
    """json.loads that rejects NaN and Infinity, as strict parsers do."""

    def refuse(name):
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(line, parse_constant=refuse)


def _post_raw(http: httpx2.Client, url: str, text: str, name: str) -> httpx2.Response:
    """A tools/call whose JSON text we write ourselves (escapes, NaN), as other SDKs send it."""
    return http.post(url, content=text.encode("ascii"), headers=raw_headers("tools/call", name))


def _post_json(http: httpx2.Client, path: str, body: dict) -> httpx2.Response:
    """POST JSON written with ASCII escapes (httpx refuses to encode a lone surrogate itself)."""
    return http.post(path, content=json.dumps(body).encode("ascii"), headers={"content-type": "application/json"})


def _export(log) -> list[str]:
    result = CliRunner().invoke(main, ["log", "export", str(log)])
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def test_lone_surrogates_over_http_are_answered_refused_and_logged_exactly(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    with (
        ServerThread(str(fixture_corpus), str(log)) as server,
        httpx2.Client(base_url=server.base_url, timeout=30) as http,
    ):
        # Session API: free-form client info is kept exactly; identifiers must be text.
        created = _post_json(
            http, "/sessions", {"item": "st_0001", "run": "surrogates", "client": {"name": f"agent {HALF}"}}
        )
        assert created.status_code == 201, created.text
        refused = {
            "run": _post_json(http, "/sessions", {"item": "st_0001", "run": f"r{HALF}"}),
            "item": _post_json(http, "/sessions", {"item": f"st{HALF}"}),
            "disabled_tools": _post_json(http, "/sessions", {"item": "st_0001", "disabled_tools": [HALF]}),
        }
        assert refused["run"].status_code == 400 and "surrogate" in refused["run"].json()["error"]
        assert refused["item"].status_code == 404 and "unknown item" in refused["item"].json()["error"]
        assert (
            refused["disabled_tools"].status_code == 400
            and "unknown tools" in refused["disabled_tools"].json()["error"]
        )

        url = created.json()["mcp_url"]
        calls = [
            ("search_papers", {"query": f"training {HALF}"}),
            ("think", {"reasoning": f"plan {HALF}"}),
            ("read_section", {"paper_id": pid("B"), "section": HALF}),
            ("no_such_tool", {"x": HALF}),
            ("get_paper_info", {"paper_id": pid("A")}),
        ]
        answers = [
            _post_raw(http, url, json.dumps(raw_call_body(name, args, i)), name) for i, (name, args) in enumerate(calls)
        ]
        sessionless = _post_raw(
            http, f"{server.base_url}/mcp", json.dumps(raw_call_body("think", {"reasoning": HALF}, 9)), "think"
        )
        ended = _post_json(
            http, f"/sessions/{created.json()['session_id']}/end", {"termination": "abandoned", "reason": f"why {HALF}"}
        )
        state = http.get(f"/sessions/{created.json()['session_id']}").json()

    results = [a.json().get("result") for a in answers]
    for result in results[:3]:
        assert result["isError"] and result["structuredContent"]["outcome"] == "invalid", result
        assert "lone UTF-16 surrogate" in result["content"][0]["text"] and result["structuredContent"]["cost"] == 0
    unknown = answers[3].json()["error"]  # an unknown tool is a JSON-RPC error, logged all the same
    assert (
        unknown["code"] == -32602 and unknown["data"]["outcome"] == "invalid" and "does not exist" in unknown["message"]
    )
    assert results[4]["structuredContent"]["outcome"] == "ok" and results[4]["structuredContent"]["budget_used"] == 1
    assert sessionless.json()["result"]["isError"] is True
    assert ended.status_code == 200 and state["termination"] == "abandoned"

    records = list(read_records(log))
    start = next(r for r in records if r["kind"] == "session_start")
    assert start["client"] == {"name": f"agent {HALF}"}
    logged = [
        (r["tool"], r["arguments"], r["outcome"]) for r in records if r["kind"] == "call" and r["run"] == "surrogates"
    ]
    assert logged == [(name, args, "ok" if name == "get_paper_info" else "invalid") for name, args in calls]
    assert any(
        r["kind"] == "call" and r["session_id"] is None and r["arguments"] == {"reasoning": HALF} for r in records
    )
    assert next(r for r in records if r["kind"] == "session_end")["reason"] == f"why {HALF}"
    lines = _export(log)
    assert len(lines) == len(records) and [_strict(line) for line in lines] == records
    assert all(line.isascii() or HALF not in json.loads(line) for line in lines)


def _read_reply(proc: subprocess.Popen, deadline_s: float = 30) -> dict:
    ready, _, _ = select.select([proc.stdout], [], [], deadline_s)
    assert ready, "the server sent no reply"
    return json.loads(proc.stdout.readline())


def test_lone_surrogates_and_unreadable_frames_over_stdio_get_replies_and_are_logged(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agenthop.server",
            "serve",
            "--corpus",
            str(fixture_corpus),
            "--item",
            "st_0001",
            "--run",
            "stdio",
            "--log",
            str(log),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=os.environ.copy(),
    )
    try:

        def send(text: str) -> dict:
            proc.stdin.write(text.encode("ascii") + b"\n")
            proc.stdin.flush()
            return _read_reply(proc)

        surrogate = send(json.dumps(raw_call_body("search_papers", {"query": f"graph {HALF}"}, 1)))
        bad_name = send(json.dumps(raw_call_body(f"think{HALF}", {"reasoning": "r"}, 7)))
        valid = send(json.dumps(raw_call_body("get_paper_info", {"paper_id": pid("A")}, 2)))
        broken = send('{"jsonrpc": "2.0", "id": 3, "method": ')
        not_rpc = send(json.dumps({"id": 4, "hello": "world"}))
        deep = send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 5,
                    "method": "tools/call",
                    "params": {"name": "think", "arguments": {"reasoning": "x"}, "_meta": RAW_META},
                }
            )[:-1]
            + ', "x": '
            + "[" * 100_000
            + "]" * 100_000
            + "}"
        )
        after = send(json.dumps(raw_call_body("think", {"reasoning": "still here"}, 6)))
    finally:
        proc.kill()
        proc.wait()
    assert surrogate["id"] == 1 and surrogate["result"]["structuredContent"]["outcome"] == "invalid"
    assert "lone UTF-16 surrogate" in surrogate["result"]["content"][0]["text"]
    assert (
        bad_name["id"] == 7 and bad_name["error"]["code"] == -32602 and "does not exist" in bad_name["error"]["message"]
    )
    assert valid["result"]["structuredContent"]["budget_used"] == 1
    assert broken["id"] is None and broken["error"]["code"] == -32700
    assert not_rpc["id"] == 4 and not_rpc["error"]["code"] == -32600
    assert deep["error"]["code"] in (-32700, -32600)
    assert after["id"] == 6 and after["result"]["structuredContent"]["outcome"] == "ok"
    calls = [r for r in read_records(log) if r["kind"] == "call"]
    assert [(c["tool"], c["arguments"], c["seq"]) for c in calls] == [
        ("search_papers", {"query": f"graph {HALF}"}, 1),
        (f"think{HALF}", {"reasoning": "r"}, 2),
        ("get_paper_info", {"paper_id": pid("A")}, 3),
        ("think", {"reasoning": "still here"}, 4),
    ]


def test_nan_and_infinity_are_stored_so_export_is_strict_json(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    with (
        ServerThread(str(fixture_corpus), str(log)) as server,
        httpx2.Client(base_url=server.base_url, timeout=30) as http,
    ):
        created = http.post("/sessions", json={"item": "st_0001", "run": "nan"}).json()
        meta = json.dumps(RAW_META)
        bodies = [  # JSON text with the non-standard tokens some clients send
            '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search_papers", '
            '"arguments": {"query": "x", "top_k": NaN}, "_meta": ' + meta + "}}",
            '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "think", '
            '"arguments": {"reasoning": "r", "extra": [Infinity, -Infinity]}, "_meta": ' + meta + "}}",
        ]
        answers = [
            _post_raw(http, created["mcp_url"], body, name).json()
            for body, name in zip(bodies, ["search_papers", "think"])
        ]
        session_api = http.post(
            "/sessions",
            content=b'{"item": "st_0001", "client": {"x": NaN}}',
            headers={"content-type": "application/json"},
        )
    assert [a["result"]["structuredContent"]["outcome"] for a in answers] == ["invalid", "invalid"]
    assert session_api.status_code == 400 and "NaN" in session_api.json()["error"]
    calls = [_strict(line) for line in _export(log) if _strict(line)["kind"] == "call"]
    assert [c["arguments"] for c in calls] == [
        {"query": "x", "top_k": "NaN"},
        {"reasoning": "r", "extra": ["Infinity", "-Infinity"]},
    ]
    assert all(
        c["arguments_altered"]
        == {"clipped": False, "json_chars": c["arguments_altered"]["json_chars"], "non_finite": True}
        for c in calls
    )


async def test_calls_no_session_vouches_for_store_bounded_arguments_while_valid_calls_keep_theirs(
    fixture_corpus, tmp_path
):
    log = tmp_path / "log.sqlite"
    huge = "x" * 1_000_000
    reasoning = "a long but valid thought " * 1_900  # 47,500 characters: within think's 50,000 limit
    with ServerThread(str(fixture_corpus), str(log)) as server:
        async with httpx2.AsyncClient(base_url=server.base_url, timeout=60) as http:
            created = (await http.post("/sessions", json={"item": "st_0001", "run": "flood"})).json()
            size_before = sum(p.stat().st_size for p in tmp_path.glob("log.sqlite*"))
            for url in (f"{server.base_url}/mcp", f"{server.base_url}/mcp?session=not-a-session", created["mcp_url"]):
                async with (
                    httpx2.AsyncClient(timeout=60) as h,
                    Client(streamable_http_client(url, http_client=h)) as client,
                ):
                    for _ in range(10):
                        refused = await client.call_tool("search_papers", {"query": huge, "top_k": 3})
                        assert refused.is_error
                    if url == created["mcp_url"]:
                        kept = await client.call_tool("think", {"reasoning": reasoning})
                        with pytest.raises(MCPError) as unknown:  # an unknown tool is -32602
                            await client.call_tool("y" * 5000, {"a": [huge] * 3})
    assert not kept.is_error and unknown.value.error.code == -32602
    calls = [r for r in read_records(log) if r["kind"] == "call"]
    flood = [c for c in calls if c["tool"] == "search_papers"]
    assert len(flood) == 30
    for c in flood:
        assert c["arguments_altered"]["clipped"] is True and c["arguments_altered"]["json_chars"] > 1_000_000
        assert c["arguments"]["top_k"] == 3 and huge.startswith(c["arguments"]["query"])
        assert len(json.dumps(c)) < 2 * STORED_ARGS_CHARS
    assert {c["session_id"] for c in flood} == {None, "not-a-session", created["session_id"]}
    think = next(c for c in calls if c["tool"] == "think")
    assert think["arguments"] == {"reasoning": reasoning} and "arguments_altered" not in think
    bad_tool = calls[-1]
    assert (
        bad_tool["outcome"] == "invalid" and len(bad_tool["tool"]) == 200 and bad_tool["arguments_altered"]["clipped"]
    )
    # 31 refused megabyte calls and one 47 KB thought grew the log by far less than one of those megabytes.
    growth = sum(p.stat().st_size for p in tmp_path.glob("log.sqlite*")) - size_before
    assert growth < 1_000_000


def test_lone_surrogates_in_prompt_and_resource_requests_get_exact_errors(fixture_corpus, tmp_path):
    """Prompt names, prompt arguments and resource URIs are echoed in their errors: the reply must still be sent.

    Over stdio, where the frames are ours (over HTTP the 2026 protocol repeats the name in a header, which
    cannot carry a lone surrogate, so such a request never reaches the server).
    """
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agenthop.server",
            "serve",
            "--corpus",
            str(fixture_corpus),
            "--log",
            str(tmp_path / "log.sqlite"),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=os.environ.copy(),
    )
    try:

        def send(method: str, params: dict, request_id: int) -> dict:
            body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": RAW_META}}
            proc.stdin.write(json.dumps(body).encode("ascii") + b"\n")
            proc.stdin.flush()
            return _read_reply(proc)

        replies = [
            send("prompts/get", {"name": f"task{HALF}"}, 1),
            send("prompts/get", {"name": "research_task", "arguments": {"item_id": f"st{HALF}"}}, 2),
            send("resources/read", {"uri": f"agenthop://x{HALF}"}, 3),
        ]
    finally:
        proc.kill()
        proc.wait()
    assert [r["id"] for r in replies] == [1, 2, 3]
    for reply in replies:
        assert reply["error"]["code"] == -32602 and "Unknown" in reply["error"]["message"], reply
