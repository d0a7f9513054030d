"""HTTP exposure (issue 6): loopback by default, bearer token on every request when set (flag or env var),
DNS-rebinding Host/Origin checks on every route, bounded and typed request bodies on the session API."""

from __future__ import annotations

import socket

import anyio
import httpx2
import pytest
from hardening_common import ServerProcess, listening_addresses, non_loopback_address, raw_call_body, raw_headers
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from release_fixture import pid

from agenthop.server.checkpoint import read_records
from agenthop.server.cli import main
from agenthop.server.http import ServerThread

pytestmark = pytest.mark.anyio

TOKEN = "hardening-token-7f3a"


def _raw_request(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        return sock.recv(65536)


def test_the_cli_binds_loopback_by_default():
    serve = main.commands["serve"]
    host = next(p for p in serve.params if p.name == "host")
    assert host.default == "127.0.0.1"


async def test_default_server_listens_on_loopback_only_and_env_token_guards_every_request(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    # No --host and no --auth-token: the bind address is the CLI default and the token comes from the environment.
    with ServerProcess(fixture_corpus, log, env={"AGENTHOP_AUTH_TOKEN": TOKEN}, token=TOKEN) as server:
        listening = listening_addresses(server.proc.pid)
        other = non_loopback_address()
        if other is not None:
            with pytest.raises(httpx2.ConnectError):
                httpx2.get(f"http://{other}:{server.port}/health", timeout=3)
        auth = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            denied = [
                await http.get("/health"),
                await http.get("/health", headers={"Authorization": "Bearer wrong"}),
                await http.get("/health", headers={"Authorization": TOKEN}),  # no "Bearer "
                await http.get("/health", headers={"Authorization": f"Bearer {TOKEN}x"}),
                await http.post("/sessions", json={"item": "st_0001"}),
                await http.post("/mcp", json=raw_call_body("think", {"reasoning": "x"}), headers=raw_headers("tools/call", "think")),
                await http.get("/mcp"), await http.delete("/mcp"),
            ]
            created = await http.post("/sessions", json={"item": "st_0001", "run": "auth"}, headers=auth)
            sid = created.json()["session_id"]
            denied += [await http.get(f"/sessions/{sid}"),
                       await http.post(f"/sessions/{sid}/end", json={"termination": "abandoned"}),
                       await http.post(f"/mcp?session={sid}", json=raw_call_body("read_section", {"paper_id": pid("B"), "section": "C"}),
                                       headers=raw_headers("tools/call", "read_section"))]
            # A real MCP client with the token works in both protocol eras; without it, it cannot even connect.
            results = []
            for mode in ("auto", "legacy"):
                async with httpx2.AsyncClient(headers=auth) as h, \
                        Client(streamable_http_client(created.json()["mcp_url"], http_client=h), mode=mode) as client:
                    results.append(await client.call_tool("get_paper_info", {"paper_id": pid("A")}))
            with pytest.raises(Exception):  # noqa: B017 - any failure to connect will do; the 401s are asserted below
                with anyio.fail_after(20):
                    async with httpx2.AsyncClient() as h, Client(streamable_http_client(created.json()["mcp_url"], http_client=h)) as client:
                        await client.call_tool("get_paper_info", {"paper_id": pid("A")})
            status = (await http.get(f"/sessions/{sid}", headers=auth)).json()
    assert listening == [("127.0.0.1", server.port)]
    assert [r.status_code for r in denied] == [401] * len(denied)
    assert all("bearer token" in r.json()["error"] for r in denied)
    assert created.status_code == 201 and [r.structured_content["budget_used"] for r in results] == [1, 2]
    assert status["budget_used"] == 2 and not status["ended"]
    assert [r["tool"] for r in read_records(log) if r["kind"] == "call"] == ["get_paper_info", "get_paper_info"]


async def test_foreign_host_and_origin_are_refused_on_every_route(fixture_corpus, tmp_path):
    """DNS rebinding: the SDK checks /mcp; server/http.py's LoopbackGuard extends the check to the session API."""
    log = tmp_path / "log.sqlite"
    with ServerThread(str(fixture_corpus), str(log)) as server:
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            sid = (await http.post("/sessions", json={"item": "st_0001", "run": "dns"})).json()["session_id"]
            port = server.port
            requests = [
                ("GET", "/health", None), ("POST", "/sessions", {"item": "st_0001"}), ("GET", f"/sessions/{sid}", None),
                ("POST", f"/sessions/{sid}/end", {"termination": "abandoned"}),
                ("POST", f"/mcp?session={sid}", raw_call_body("read_section", {"paper_id": pid("B"), "section": "C"})),
            ]
            hostile = [{"Host": "evil.example"}, {"Host": f"evil.example:{port}"}, {"Host": f"127.0.0.1.evil.example:{port}"},
                       {"Host": "127.0.0.1"}, {"Host": f"localhost:{port}@evil.example"},
                       {"Origin": "http://evil.example"}, {"Origin": f"http://evil.example:{port}"}, {"Origin": "null"},
                       {"Origin": f"https://127.0.0.1.evil.example:{port}"}, {"Origin": f"http://localhost:{port}.evil.example"}]
            refused = []
            for headers in hostile:
                for method, path, body in requests:
                    extra = raw_headers("tools/call", "read_section") if path.startswith("/mcp") else {}
                    refused.append(await http.request(method, path, json=body, headers={**extra, **headers}))
            friendly = [await http.get("/health", headers={"Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"}),
                        await http.get(f"/sessions/{sid}", headers={"Origin": f"http://127.0.0.1:{port}"})]
            status = (await http.get(f"/sessions/{sid}")).json()
            health = (await http.get("/health")).json()
    codes = [r.status_code for r in refused]
    assert set(codes) <= {421, 403}, codes
    assert all(r.status_code == (421 if "Host" in h else 403) for r, h in
               zip(refused, [h for h in hostile for _ in requests])), codes
    assert all(r.status_code == 200 for r in friendly)
    # Nothing the refused requests asked for happened.
    assert status["ended"] is False and status["budget_used"] == 0 and health["sessions"] == 1
    assert [r["kind"] for r in read_records(log)] == ["session_start"]


async def test_the_session_api_refuses_oversize_bodies_and_wrong_content_types(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    with ServerThread(str(fixture_corpus), str(log)) as server:
        async with httpx2.AsyncClient(base_url=server.base_url, timeout=30) as http:
            sid = (await http.post("/sessions", json={"item": "st_0001", "run": "bodies"})).json()["session_id"]

            async def endless():  # a chunked body with no length, far beyond the limit
                for _ in range(160):  # 10 MiB
                    yield b" " * 65536

            oversize = [
                await http.post("/sessions", json={"item": "st_0001", "client": {"pad": "x" * 70_000}}),
                await http.post("/sessions", content=endless(), headers={"content-type": "application/json"}),
                await http.post(f"/sessions/{sid}/end", json={"termination": "abandoned", "reason": "r" * 100_000}),
            ]
            wrong_type = [
                await http.post("/sessions", content=b'{"item": "st_0001"}', headers={"content-type": "text/plain"}),
                await http.post("/sessions", data={"item": "st_0001"}),
                await http.post("/sessions", files={"item": ("a", b"st_0001")}),
                await http.post("/sessions", content=b'{"item": "st_0001"}', headers={"content-type": "application/jsonx"}),
                await http.post(f"/sessions/{sid}/end", content=b'{"termination": "abandoned"}', headers={"content-type": "text/plain"}),
            ]
            accepted = [
                await http.post("/sessions", content=b'{"item": "st_0001"}', headers={"content-type": "application/json; charset=utf-8"}),
                await http.post("/sessions", content=b'{"item": "st_0001"}'),  # no Content-Type: tolerated
            ]
            status = (await http.get(f"/sessions/{sid}")).json()
            health = (await http.get("/health")).json()
        declared = _raw_request(server.port, b"POST /sessions HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                                b"Content-Type: application/json\r\nContent-Length: 99999999\r\n\r\n{}" % server.port)
    # A declared length over the limit is refused at once, without waiting for (or reading) the body.
    assert declared.startswith(b"HTTP/1.1 413"), declared[:200]
    assert [r.status_code for r in oversize] == [413] * 3 and all("too large" in r.json()["error"] for r in oversize)
    assert [r.status_code for r in wrong_type] == [415] * 5 and all("application/json" in r.json()["error"] for r in wrong_type)
    assert [r.status_code for r in accepted] == [201, 201]
    assert status["ended"] is False and health["sessions"] == 3
