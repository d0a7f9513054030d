"""Protocol edges (issue 23): hostile frames over stdio, written as raw bytes to the server's stdin, and the
same frames over HTTP. Every frame gets an answer (or, for a notification, silence) and the process lives."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys

import httpx2
from hardening_common import RAW_META, raw_call_body, raw_headers

from agenthop.server.checkpoint import read_records
from agenthop.server.http import ServerThread

META = json.dumps(RAW_META).encode()


def _request(request_id: bytes, method: bytes = b'"ping"', params: bytes | None = None) -> bytes:
    params = params if params is not None else b'{"_meta":' + META + b"}"
    return b'{"jsonrpc":"2.0","id":' + request_id + b',"method":' + method + b',"params":' + params + b"}"


def _think(request_id: bytes, reasoning: bytes = b'"x"') -> bytes:
    return _request(request_id, b'"tools/call"', b'{"name":"think","arguments":{"reasoning":' + reasoning + b'},"_meta":' + META + b"}")


class StdioServer:
    """``agenthop-server serve`` over stdio, fed raw bytes."""

    def __init__(self, corpus, log):
        self.proc = subprocess.Popen([sys.executable, "-m", "agenthop.server", "serve", "--corpus", str(corpus), "--item", "st_0001",
                                      "--run", "edges", "--log", str(log)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=os.environ.copy())

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
        f"Invalid request: the id must be a string or an integer, got {kind}; the request was not run." for kind in kinds]
    assert no_method["id"] == 9 and no_method["error"]["code"] == -32600 and "needs a 'method'" in no_method["error"]["message"]
    assert not_utf8["id"] is None and not_utf8["error"]["code"] == -32700 and "not valid UTF-8" in not_utf8["error"]["message"]
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
    with ServerThread(str(fixture_corpus), str(tmp_path / "http.sqlite")) as http_server, httpx2.Client(base_url=http_server.base_url) as http:
        sid = http.post("/sessions", json={"item": "st_0001"}).json()["session_id"]
        over_http = http.post("/mcp", content=frame, headers={**raw_headers("tools/call", "think"), "x-agenthop-session": sid}).json()
    assert over_stdio["error"]["code"] == over_http["error"]["code"] == -32700
    assert over_stdio["id"] is over_http["id"] is None
    for log in ("stdio.sqlite", "http.sqlite"):
        assert not [r for r in read_records(tmp_path / log) if r["kind"] == "call"]


def _legacy_session(http: httpx2.Client, sid: str) -> dict:
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json", "x-agenthop-session": sid}
    init = http.post("/mcp", headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
    assert init.status_code == 200
    headers = {**headers, "mcp-session-id": init.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
    assert http.post("/mcp", headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code == 202
    return headers


def test_frames_without_method_or_with_bad_ids_are_invalid_requests_over_http_in_both_eras(fixture_corpus, tmp_path):
    with ServerThread(str(fixture_corpus), str(tmp_path / "log.sqlite")) as server, httpx2.Client(base_url=server.base_url) as http:
        sid = http.post("/sessions", json={"item": "st_0001"}).json()["session_id"]
        legacy = _legacy_session(http, sid)
        replies = {
            "legacy no method": http.post("/mcp", headers=legacy, json={"jsonrpc": "2.0", "id": 9, "params": {}}),
            "legacy list id": http.post("/mcp", headers=legacy, json={"jsonrpc": "2.0", "id": [1], "method": "ping"}),
            "legacy null id": http.post("/mcp", headers=legacy, json={"jsonrpc": "2.0", "id": None, "method": "tools/list"}),
            "2026 no method": http.post("/mcp", headers={**raw_headers("ping"), "x-agenthop-session": sid},
                                        json={"jsonrpc": "2.0", "id": 9, "params": {"_meta": RAW_META}}),
        }
        still = http.post("/mcp", headers=legacy, json={"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                                                        "params": {"name": "think", "arguments": {"reasoning": "ok"}}})
    for name, reply in replies.items():
        assert reply.status_code == 400, name
        assert reply.json()["error"]["code"] == -32600, (name, reply.text)
    assert replies["legacy no method"].json()["id"] == 9
    assert replies["legacy list id"].json()["id"] is None and "got list" in replies["legacy list id"].json()["error"]["message"]
    assert still.json()["result"]["structuredContent"]["outcome"] == "ok"


def test_a_valid_stdio_session_still_works_end_to_end(fixture_corpus, tmp_path):
    """The stdin the server now reads itself: ordinary calls, UTF-8 text and a clean exit when stdin closes."""
    log = tmp_path / "log.sqlite"
    server = StdioServer(fixture_corpus, log)
    try:
        first = server.ask(json.dumps(raw_call_body("think", {"reasoning": "café ☕ 🙂"}, 1), ensure_ascii=False).encode())
        server.proc.stdin.close()
        assert server.proc.wait(timeout=30) == 0
    finally:
        server.close()
    assert first["result"]["structuredContent"]["outcome"] == "ok"
    assert [r["arguments"] for r in read_records(log) if r["kind"] == "call"] == [{"reasoning": "café ☕ 🙂"}]
