"""Protocol edges: hostile frames over stdio, written as raw bytes to the server's stdin, and the
same frames over HTTP. Every frame gets an answer (or, for a notification, silence) and the process lives."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys

import httpx2
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from support.hardening_common import RAW_META, raw_call_body, raw_headers
from support.release_fixture import pid
from support.server_helpers import calls as server_calls
from support.server_helpers import session_client

from agenthop.server.log.checkpoint import read_records
from agenthop.server.transport.http import ServerThread

META = json.dumps(RAW_META).encode()
ERAS = ["auto", "legacy"]  # auto lands on 2026-07-28; legacy forces the 2025 initialize handshake
pytestmark = pytest.mark.anyio


def _request(request_id: bytes, method: bytes = b'"ping"', params: bytes | None = None) -> bytes:
    params = params if params is not None else b'{"_meta":' + META + b"}"
    return b'{"jsonrpc":"2.0","id":' + request_id + b',"method":' + method + b',"params":' + params + b"}"


def _think(request_id: bytes, reasoning: bytes = b'"x"') -> bytes:
    return _request(
        request_id,
        b'"tools/call"',
        b'{"name":"think","arguments":{"reasoning":' + reasoning + b'},"_meta":' + META + b"}",
    )


class StdioServer:
    """``agenthop-server serve`` over stdio, fed raw bytes."""

    def __init__(self, corpus, log):
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "agenthop.server",
                "serve",
                "--corpus",
                str(corpus),
                "--item",
                "st_0001",
                "--run",
                "edges",
                "--log",
                str(log),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=os.environ.copy(),
        )

    def send(self, frame: bytes) -> None:
        self.proc.stdin.write(frame + b"\n")
        self.proc.stdin.flush()

    def reply(self, deadline_s: float = 30) -> dict:
        ready, _, _ = select.select([self.proc.stdout], [], [], deadline_s)
        assert ready, "the server sent no reply"
        line = self.proc.stdout.readline()
        assert line, f"the server closed stdout (exit {self.proc.wait()}): {self.proc.stderr.read().decode()[-2000:]}"
        return json.loads(line)

    def ask(self, frame: bytes) -> dict:
        self.send(frame)
        return self.reply()

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


@pytest.mark.slow
def test_hostile_stdio_frames_get_answers_and_the_process_lives(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    server = StdioServer(fixture_corpus, log)
    try:
        surrogate_ping = server.ask(_request(b'"\\ud800"'))
        surrogate_call = server.ask(_think(b'"\\ud800"'))
        surrogate_method = server.ask(_request(b"5", b'"ping\\ud800"'))
        wrong_ids = [server.ask(_request(i)) for i in (b'{"a":1}', b"[1]", b"1.5", b"null", b"true")]
        no_method = server.ask(b'{"jsonrpc":"2.0","id":9,"params":{"_meta":' + META + b"}}")
        not_utf8 = server.ask(_think(b"10", b'"caf\xff"'))
        alive = server.ask(_think(b"11", b'"still here"'))
        assert server.proc.poll() is None
    finally:
        server.close()
    for refused in (surrogate_ping, surrogate_call):
        assert refused["id"] is None and refused["error"]["code"] == -32600
        assert "lone UTF-16 surrogate" in refused["error"]["message"] and "was not run" in refused["error"]["message"]
    assert surrogate_method["id"] == 5 and surrogate_method["error"]["code"] == -32601
    assert surrogate_method["error"]["data"] == "ping\ufffd"  # echoed with U+FFFD: it must encode as UTF-8
    kinds = ["dict", "list", "float", "null", "bool"]
    assert [(r["id"], r["error"]["code"]) for r in wrong_ids] == [(None, -32600)] * 5
    assert [r["error"]["message"] for r in wrong_ids] == [
        f"Invalid request: the id must be a string or an integer, got {kind}; the request was not run."
        for kind in kinds
    ]
    assert (
        no_method["id"] == 9
        and no_method["error"]["code"] == -32600
        and "needs a 'method'" in no_method["error"]["message"]
    )
    assert (
        not_utf8["id"] is None
        and not_utf8["error"]["code"] == -32700
        and "not valid UTF-8" in not_utf8["error"]["message"]
    )
    assert alive["id"] == 11 and alive["result"]["structuredContent"]["outcome"] == "ok"
    # Only the last call ran: the refused frames never reached a tool (and so were not charged or logged as calls).
    calls = [r for r in read_records(log) if r["kind"] == "call"]
    assert [(c["tool"], c["arguments"]) for c in calls] == [("think", {"reasoning": "still here"})]


def test_a_notification_with_a_hostile_method_gets_silence_and_the_process_lives(fixture_corpus, tmp_path):
    server = StdioServer(fixture_corpus, tmp_path / "log.sqlite")
    try:
        server.send(b'{"jsonrpc":"2.0","method":"notifications/x\\ud800","params":{"_meta":' + META + b"}}")
        reply = server.ask(_think(b"1"))  # the first line that comes back answers this call: the notification got none
    finally:
        server.close()
    assert reply["id"] == 1 and reply["result"]["structuredContent"]["outcome"] == "ok"


def test_invalid_utf8_is_a_parse_error_on_both_transports(fixture_corpus, tmp_path):
    frame = _think(b"10", b'"caf\xff"')
    server = StdioServer(fixture_corpus, tmp_path / "stdio.sqlite")
    try:
        over_stdio = server.ask(frame)
    finally:
        server.close()
    with (
        ServerThread(str(fixture_corpus), str(tmp_path / "http.sqlite")) as http_server,
        httpx2.Client(base_url=http_server.base_url) as http,
    ):
        sid = http.post("/sessions", json={"item": "st_0001"}).json()["session_id"]
        over_http = http.post(
            "/mcp", content=frame, headers={**raw_headers("tools/call", "think"), "x-agenthop-session": sid}
        ).json()
    assert over_stdio["error"]["code"] == over_http["error"]["code"] == -32700
    assert over_stdio["id"] is over_http["id"] is None
    for log in ("stdio.sqlite", "http.sqlite"):
        assert not [r for r in read_records(tmp_path / log) if r["kind"] == "call"]


def _legacy_session(http: httpx2.Client, sid: str) -> dict:
    headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "x-agenthop-session": sid,
    }
    init = http.post(
        "/mcp",
        headers=headers,
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        },
    )
    assert init.status_code == 200
    headers = {**headers, "mcp-session-id": init.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
    assert (
        http.post("/mcp", headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code
        == 202
    )
    return headers


def test_frames_without_method_or_with_bad_ids_are_invalid_requests_over_http_in_both_eras(fixture_corpus, tmp_path):
    with (
        ServerThread(str(fixture_corpus), str(tmp_path / "log.sqlite")) as server,
        httpx2.Client(base_url=server.base_url) as http,
    ):
        sid = http.post("/sessions", json={"item": "st_0001"}).json()["session_id"]
        legacy = _legacy_session(http, sid)
        replies = {
            "legacy no method": http.post("/mcp", headers=legacy, json={"jsonrpc": "2.0", "id": 9, "params": {}}),
            "legacy list id": http.post("/mcp", headers=legacy, json={"jsonrpc": "2.0", "id": [1], "method": "ping"}),
            "legacy null id": http.post(
                "/mcp", headers=legacy, json={"jsonrpc": "2.0", "id": None, "method": "tools/list"}
            ),
            "2026 no method": http.post(
                "/mcp",
                headers={**raw_headers("ping"), "x-agenthop-session": sid},
                json={"jsonrpc": "2.0", "id": 9, "params": {"_meta": RAW_META}},
            ),
        }
        still = http.post(
            "/mcp",
            headers=legacy,
            json={
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "think", "arguments": {"reasoning": "ok"}},
            },
        )
    for name, reply in replies.items():
        assert reply.status_code == 400, name
        assert reply.json()["error"]["code"] == -32600, (name, reply.text)
    assert replies["legacy no method"].json()["id"] == 9
    assert (
        replies["legacy list id"].json()["id"] is None
        and "got list" in replies["legacy list id"].json()["error"]["message"]
    )
    assert still.json()["result"]["structuredContent"]["outcome"] == "ok"


@pytest.mark.slow
def test_a_valid_stdio_session_still_works_end_to_end(fixture_corpus, tmp_path):
    """The stdin the server now reads itself: ordinary calls, UTF-8 text and a clean exit when stdin closes."""
    log = tmp_path / "log.sqlite"
    server = StdioServer(fixture_corpus, log)
    try:
        first = server.ask(
            json.dumps(raw_call_body("think", {"reasoning": "café ☕ 🙂"}, 1), ensure_ascii=False).encode()
        )
        server.proc.stdin.close()
        assert server.proc.wait(timeout=30) == 0
    finally:
        server.close()
    assert first["result"]["structuredContent"]["outcome"] == "ok"
    assert [r["arguments"] for r in read_records(log) if r["kind"] == "call"] == [{"reasoning": "café ☕ 🙂"}]


# --- point 7: the research_task prompt of an item session names that item only ------------------------------


@pytest.mark.parametrize("mode", ERAS)
async def test_research_task_refuses_an_item_id_other_than_the_served_one(fixture_corpus, tmp_path, mode):
    with ServerThread(str(fixture_corpus), str(tmp_path / "log.sqlite")) as server:
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            created = (await http.post("/sessions", json={"item": "st_0001"})).json()
        async with (
            httpx2.AsyncClient() as h,
            Client(streamable_http_client(created["mcp_url"], http_client=h), mode=mode) as client,
        ):
            own = await client.get_prompt("research_task", {"item_id": "st_0001"})
            plain = await client.get_prompt("research_task")
            with pytest.raises(MCPError) as other:
                await client.get_prompt("research_task", {"item_id": "st_0002"})
    assert own.messages[0].content.text == plain.messages[0].content.text
    assert other.value.error.code == -32602
    assert other.value.error.message == (
        "This session serves item st_0001, not 'st_0002' (argument item_id). Omit item_id, "
        "or name the served item; another item needs a session of its own."
    )


# --- point 8: a tool the session does not offer is a JSON-RPC error, logged all the same --------------------------


@pytest.mark.parametrize("mode", ERAS)
async def test_unknown_tools_are_invalid_params_errors_and_still_logged(fixture_corpus, tmp_path, mode):
    log = tmp_path / "log.sqlite"
    with ServerThread(str(fixture_corpus), str(log)) as server:
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            created = (
                await http.post("/sessions", json={"item": "st_0001", "run": "unknown", "disabled_tools": ["think"]})
            ).json()
        async with (
            httpx2.AsyncClient() as h,
            Client(streamable_http_client(created["mcp_url"], http_client=h), mode=mode) as client,
        ):
            refused = []
            for name in ("fly_to_the_moon", "think"):
                with pytest.raises(MCPError) as error:
                    await client.call_tool(name, {"reasoning": "x"})
                refused.append(error.value.error)
            fine = await client.call_tool("get_paper_info", {"paper_id": "nope"})
    assert [e.code for e in refused] == [-32602, -32602]
    assert refused[0].message.startswith("Tool 'fly_to_the_moon' does not exist. Available tools: search_papers,")
    assert refused[1].message.startswith("Tool 'think' is disabled in this session.")
    assert all(e.data["outcome"] == "invalid" and e.data["cost"] == 0 for e in refused)
    assert fine.structured_content["budget_used"] == 1
    calls = [(r["tool"], r["outcome"], r["cost"]) for r in read_records(log) if r["kind"] == "call"]
    assert calls == [("fly_to_the_moon", "invalid", 0), ("think", "invalid", 0), ("get_paper_info", "not_found", 1)]


# --- point 11: blank means blank -----------------------------------------------------------------------------

BLANKS = ["   ", "\t\n", "\u200b", "\u00a0\ufeff", " \u200d\u2060 ", "\u3000"]


async def test_blank_queries_and_section_names_are_refused_free_whatever_the_blank(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    async with session_client(fixture_corpus, log, "st_0001") as (client, session):
        searches = [await client.call_tool("search_papers", {"query": blank}) for blank in ["", *BLANKS]]
        reads = [
            await client.call_tool("read_section", {"paper_id": pid("B"), "section": blank}) for blank in ["", *BLANKS]
        ]
        visible = await client.call_tool("search_papers", {"query": "\u200bgraph\u200b"})
    for result in searches + reads:
        assert (
            result.is_error
            and result.structured_content["outcome"] == "invalid"
            and result.structured_content["cost"] == 0
        )
        assert "Nothing was charged" in result.content[0].text
    assert all("blank: give keywords" in r.content[0].text for r in searches[1:])
    assert all("blank: give the section's alias" in r.content[0].text for r in reads[1:])
    assert visible.structured_content["cost"] == 1 and session.spent == 1
    assert [(c["outcome"], c["cost"]) for c in server_calls(log)] == [("invalid", 0)] * 14 + [
        (visible.structured_content["outcome"], 1)
    ]


# --- point 5: ambiguous credentials ---------------------------------------------------------------------------

TOKEN = "s3cret-token"


async def test_two_authorization_headers_are_refused_whatever_their_order(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    with ServerThread(str(fixture_corpus), str(log), auth_token=TOKEN) as server:
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            right, wrong = ("authorization", f"Bearer {TOKEN}"), ("authorization", "Bearer wrong")
            pairs = {"wrong, right": [wrong, right], "right, wrong": [right, wrong], "right, right": [right, right]}
            refused = {
                name: await http.post("/sessions", headers=[*pair, ("content-type", "application/json")], content=b"{}")
                for name, pair in pairs.items()
            }
            one = await http.post("/sessions", headers=[right], json={})
    for name, response in refused.items():
        assert response.status_code == 401, name
        assert response.json() == {"error": "2 Authorization headers: send exactly one (Authorization: Bearer ...)"}
    assert one.status_code == 201
    assert [r["kind"] for r in read_records(log)] == ["session_start"]  # the refused requests created nothing


# --- JSON-RPC's codes for frames that are not requests, and for params that are not objects ---

NOT_REQUESTS = {  # frame: (code, whether the reply carries the frame's id 1, a fragment of the message)
    b"42": (-32600, False, "got a number;"),
    b"null": (-32600, False, "got null;"),
    b"[]": (-32600, False, "got an array (MCP has no batches"),
    b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]': (-32600, False, "got a batch of 1 (MCP has no batches"),
    b'{"id":1,"method":"ping"}': (-32600, True, '"jsonrpc" must be "2.0", got none'),
    b'{"jsonrpc":"1.0","id":1,"method":"ping"}': (-32600, True, '"jsonrpc" must be "2.0", got "1.0"'),
    b'{"jsonrpc":"1.0","id":"\\ud800","method":"ping"}': (
        -32600,
        False,
        '"jsonrpc" must be "2.0"',
    ),  # no reply can echo that id
    b'{"jsonrpc":"2.0","id":1,"method":42}': (-32600, True, "the method must be a string, got a number"),
    b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":"x"}': (-32602, True, "'params' must be an object"),
    b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[1]}': (-32602, True, "'params' must be an object"),
}


NULL_PARAMS = b'{"jsonrpc":"2.0","id":12,"method":"ping","params":null}'  # read as no params, as the SDK always did


def _check_not_requests(replies: list[dict]) -> None:
    for (frame, (code, with_id, fragment)), reply in zip(NOT_REQUESTS.items(), replies, strict=True):
        assert reply["error"]["code"] == code, (frame, reply)
        assert reply["id"] == (1 if with_id else None), (frame, reply)
        assert fragment in reply["error"]["message"] and "not run" in reply["error"]["message"], (frame, reply)


def test_frames_that_are_not_requests_get_32600_and_bad_params_32602_with_the_id_over_stdio(fixture_corpus, tmp_path):
    server = StdioServer(fixture_corpus, tmp_path / "log.sqlite")
    try:
        replies = [server.ask(frame) for frame in NOT_REQUESTS]
        alive = server.ask(_think(b"11", b'"still here"'))
    finally:
        server.close()
    _check_not_requests(replies)
    assert alive["id"] == 11 and alive["result"]["structuredContent"]["outcome"] == "ok"


def test_frames_that_are_not_requests_get_32600_and_bad_params_32602_with_the_id_over_2025_http(
    fixture_corpus, tmp_path
):
    with (
        ServerThread(str(fixture_corpus), str(tmp_path / "log.sqlite")) as server,
        httpx2.Client(base_url=server.base_url) as http,
    ):
        legacy = _legacy_session(http, http.post("/sessions", json={"item": "st_0001"}).json()["session_id"])
        responses = [http.post("/mcp", headers=legacy, content=frame) for frame in NOT_REQUESTS]
        null_params = http.post("/mcp", headers=legacy, content=NULL_PARAMS)
    assert [r.status_code for r in responses] == [400] * len(NOT_REQUESTS)
    _check_not_requests([r.json() for r in responses])
    assert null_params.status_code == 200 and null_params.json() == {"jsonrpc": "2.0", "id": 12, "result": {}}


def test_lone_surrogates_in_method_tool_name_or_arguments_are_answered_and_logged_over_2025_http(
    fixture_corpus, tmp_path
):
    """The SDK's legacy HTTP parser answered all three -32700 and never logged the call; now as stdio answers them."""
    log = tmp_path / "log.sqlite"
    with ServerThread(str(fixture_corpus), str(log)) as server, httpx2.Client(base_url=server.base_url) as http:
        legacy = _legacy_session(http, http.post("/sessions", json={"item": "st_0001"}).json()["session_id"])
        method = http.post(
            "/mcp", headers=legacy, content=b'{"jsonrpc":"2.0","id":8,"method":"tools/list\\ud800"}'
        ).json()
        tool = http.post(
            "/mcp",
            headers=legacy,
            content=b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":'
            b'{"name":"think\\ud800","arguments":{"reasoning":"x"}}}',
        ).json()
        arguments = http.post(
            "/mcp",
            headers=legacy,
            content=b'{"jsonrpc":"2.0","id":10,"method":"tools/call","params":'
            b'{"name":"think","arguments":{"reasoning":"x\\ud800"}}}',
        ).json()
    assert method["id"] == 8 and method["error"]["code"] == -32601 and method["error"]["data"] == "tools/list\ufffd"
    assert (
        tool["id"] == 9
        and tool["error"]["code"] == -32602
        and tool["error"]["message"].startswith("Tool 'think\ufffd' does not exist")
    )
    assert arguments["id"] == 10 and arguments["result"]["isError"]
    assert "reasoning: contains a lone UTF-16 surrogate" in arguments["result"]["content"][0]["text"]
    calls = [(c["tool"], c["arguments"], c["outcome"], c["cost"]) for c in read_records(log) if c["kind"] == "call"]
    assert calls == [
        ("think\ud800", {"reasoning": "x"}, "invalid", 0),
        ("think", {"reasoning": "x\ud800"}, "invalid", 0),
    ]


@pytest.mark.slow
def test_a_request_before_initialize_is_told_that_initialize_is_missing_over_stdio(fixture_corpus, tmp_path):
    server = StdioServer(fixture_corpus, tmp_path / "log.sqlite")
    try:  # no _meta: a 2025-era client that skipped the handshake
        listed = server.ask(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
        called = server.ask(
            b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"think","arguments":{"reasoning":"x"}}}'
        )
        pinged = server.ask(b'{"jsonrpc":"2.0","id":3,"method":"ping"}')
        null_params = server.ask(NULL_PARAMS)
    finally:
        server.close()
    for reply, request_id in ((listed, 1), (called, 2)):
        assert reply["id"] == request_id and reply["error"]["code"] == -32602
        assert reply["error"]["message"].startswith("Invalid request: initialize is missing.")
        assert reply["error"]["data"] == {"missing": "initialize"}
    assert pinged == {"jsonrpc": "2.0", "id": 3, "result": {}}
    assert null_params == {"jsonrpc": "2.0", "id": 12, "result": {}}


# --- ambiguous Origin (and Host) headers ----------------------------------------------------


def _raw_two_hosts(port: int) -> bytes:
    """httpx refuses to send two Host headers; a raw socket does."""
    import socket

    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(
            f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nHost: evil.com\r\nConnection: close\r\n\r\n".encode()
        )
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    return reply


async def test_two_origin_headers_are_refused_on_every_route_whatever_their_order(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    with ServerThread(str(fixture_corpus), str(log)) as server:
        loopback, evil = ("origin", server.base_url), ("origin", "http://evil.com")
        body = [("content-type", "application/json")]
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            refused = {}
            for n, order in enumerate(([evil, loopback], [loopback, evil], [loopback, loopback])):
                for path in ("/sessions", "/play/api/sessions"):
                    refused[(path, n)] = await http.post(path, headers=[*order, *body], content=b'{"item": "st_0001"}')
                refused[("/health", n)] = await http.get("/health", headers=order)
            one = await http.post("/sessions", headers=[loopback, *body], content=b'{"item": "st_0001"}')
        two_hosts = _raw_two_hosts(server.port)
    for key, response in refused.items():
        assert response.status_code == 403, key
        assert response.json() == {"error": "2 Origin headers: send at most one"}, key
    assert two_hosts.split(b" ")[1] in (b"400", b"421"), two_hosts[
        :300
    ]  # h11 refuses it first; other parsers reach the guard
    assert one.status_code == 201
    assert [r["kind"] for r in read_records(log)] == ["session_start"]  # the refused requests created nothing
