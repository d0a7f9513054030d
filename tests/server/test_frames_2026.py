"""Invalid frames of the 2026-07-28 era over HTTP keep their id in the error, as on stdio and in the 2025 era
(docs/reliability.md 3c): -32600 for a frame that is not a request, -32602 for params that are not an object."""

from __future__ import annotations

import json

import httpx2
import pytest

from agenthop.server.transport.http import ServerThread

HEADERS = {
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
}
FRAMES = [
    ({"id": 111, "method": "tools/call", "params": {}}, -32600),
    ({"jsonrpc": "1.0", "id": 111, "method": "tools/call", "params": {}}, -32600),
    ({"jsonrpc": "2.0", "id": 111}, -32600),
    ({"jsonrpc": "2.0", "id": 111, "method": 5}, -32600),
    ({"jsonrpc": "2.0", "id": 111, "method": "tools/call", "params": "x"}, -32602),
    ({"jsonrpc": "2.0", "id": 111, "method": "tools/call", "params": [1]}, -32602),
]


@pytest.fixture(scope="module")
def server(fixture_corpus, tmp_path_factory):
    with ServerThread(str(fixture_corpus), str(tmp_path_factory.mktemp("frames") / "log.sqlite")) as running:
        yield running


@pytest.mark.parametrize(("frame", "code"), FRAMES)
def test_an_invalid_2026_frame_keeps_its_id(server, frame, code):
    with httpx2.Client(base_url=server.base_url) as http:
        sid = http.post("/sessions", json={}).json()["session_id"]
        r = http.post(f"/mcp?session={sid}", content=json.dumps(frame), headers=HEADERS)
    body = r.json()
    assert r.status_code == 400 and body["id"] == 111 and body["error"]["code"] == code, r.text


def test_a_valid_2026_request_still_reaches_the_sdk(server):
    with httpx2.Client(base_url=server.base_url) as http:
        frame = {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"_meta": {}}}
        r = http.post("/mcp", content=json.dumps(frame), headers={**HEADERS, "mcp-method": "tools/list"})
    assert r.json()["id"] == 7 and "envelope" in r.json()["error"]["message"]  # the SDK's own check answered
