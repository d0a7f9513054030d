"""HTTP exposure: loopback by default (all of 127.0.0.0/8), no unauthenticated non-loopback bind
unless asked for, bearer token on every request when set (flag or env var, never empty, scheme in any case),
DNS-rebinding Host (with the served port) and Origin checks on every route, bounded and typed request bodies."""

from __future__ import annotations

import socket

import anyio
import httpx2
import pytest
from click.testing import CliRunner
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from support.hardening_common import (
    ServerProcess,
    listening_addresses,
    non_loopback_address,
    raw_call_body,
    raw_headers,
)
from support.release_fixture import pid

from agenthop.server.cli import main
from agenthop.server.log.checkpoint import read_records
from agenthop.server.transport.http import ExposureError, ServerThread, check_exposure, is_loopback

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


@pytest.mark.slow
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
                await http.post(
                    "/mcp", json=raw_call_body("think", {"reasoning": "x"}), headers=raw_headers("tools/call", "think")
                ),
                await http.get("/mcp"),
                await http.delete("/mcp"),
            ]
            created = await http.post("/sessions", json={"item": "st_0001", "run": "auth"}, headers=auth)
            sid = created.json()["session_id"]
            denied += [
                await http.get(f"/sessions/{sid}"),
                await http.post(f"/sessions/{sid}/end", json={"termination": "abandoned"}),
                await http.post(
                    f"/mcp?session={sid}",
                    json=raw_call_body("read_section", {"paper_id": pid("B"), "section": "C"}),
                    headers=raw_headers("tools/call", "read_section"),
                ),
            ]
            # A real MCP client with the token works in both protocol eras; without it, it cannot even connect.
            results = []
            for mode in ("auto", "legacy"):
                async with (
                    httpx2.AsyncClient(headers=auth) as h,
                    Client(streamable_http_client(created.json()["mcp_url"], http_client=h), mode=mode) as client,
                ):
                    results.append(await client.call_tool("get_paper_info", {"paper_id": pid("A")}))
            with pytest.raises(Exception):  # noqa: B017 - any failure to connect will do; the 401s are asserted below
                with anyio.fail_after(20):
                    async with (
                        httpx2.AsyncClient() as h,
                        Client(streamable_http_client(created.json()["mcp_url"], http_client=h)) as client,
                    ):
                        await client.call_tool("get_paper_info", {"paper_id": pid("A")})
            status = (await http.get(f"/sessions/{sid}", headers=auth)).json()
    assert listening == [("127.0.0.1", server.port)]
    assert [r.status_code for r in denied] == [401] * len(denied)
    assert all("bearer token" in r.json()["error"] for r in denied)
    assert created.status_code == 201 and [r.structured_content["budget_used"] for r in results] == [1, 2]
    assert status["budget_used"] == 2 and not status["ended"]
    assert [r["tool"] for r in read_records(log) if r["kind"] == "call"] == ["get_paper_info", "get_paper_info"]


async def test_foreign_host_and_origin_are_refused_on_every_route(fixture_corpus, tmp_path):
    """DNS rebinding: the SDK checks /mcp; server/transport/http.py's LoopbackGuard extends the check to the session API."""
    log = tmp_path / "log.sqlite"
    with ServerThread(str(fixture_corpus), str(log)) as server:
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            sid = (await http.post("/sessions", json={"item": "st_0001", "run": "dns"})).json()["session_id"]
            port = server.port
            requests = [
                ("GET", "/health", None),
                ("POST", "/sessions", {"item": "st_0001"}),
                ("GET", f"/sessions/{sid}", None),
                ("POST", f"/sessions/{sid}/end", {"termination": "abandoned"}),
                ("POST", f"/mcp?session={sid}", raw_call_body("read_section", {"paper_id": pid("B"), "section": "C"})),
            ]
            hostile = [
                {"Host": "evil.example"},
                {"Host": f"evil.example:{port}"},
                {"Host": f"127.0.0.1.evil.example:{port}"},
                {"Host": "127.0.0.1"},
                {"Host": f"localhost:{port}@evil.example"},
                {"Origin": "http://evil.example"},
                {"Origin": f"http://evil.example:{port}"},
                {"Origin": "null"},
                {"Origin": f"https://127.0.0.1.evil.example:{port}"},
                {"Origin": f"http://localhost:{port}.evil.example"},
            ]
            refused = []
            for headers in hostile:
                for method, path, body in requests:
                    extra = raw_headers("tools/call", "read_section") if path.startswith("/mcp") else {}
                    refused.append(await http.request(method, path, json=body, headers={**extra, **headers}))
            friendly = [
                await http.get("/health", headers={"Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"}),
                await http.get(f"/sessions/{sid}", headers={"Origin": f"http://127.0.0.1:{port}"}),
            ]
            status = (await http.get(f"/sessions/{sid}")).json()
            health = (await http.get("/health")).json()
    codes = [r.status_code for r in refused]
    assert set(codes) <= {421, 403}, codes
    assert all(
        r.status_code == (421 if "Host" in h else 403) for r, h in zip(refused, [h for h in hostile for _ in requests])
    ), codes
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
                await http.post(
                    "/sessions", content=b'{"item": "st_0001"}', headers={"content-type": "application/jsonx"}
                ),
                await http.post(
                    f"/sessions/{sid}/end",
                    content=b'{"termination": "abandoned"}',
                    headers={"content-type": "text/plain"},
                ),
            ]
            accepted = [
                await http.post(
                    "/sessions",
                    content=b'{"item": "st_0001"}',
                    headers={"content-type": "application/json; charset=utf-8"},
                ),
                await http.post("/sessions", content=b'{"item": "st_0001"}'),  # no Content-Type: tolerated
            ]
            status = (await http.get(f"/sessions/{sid}")).json()
            health = (await http.get("/health")).json()
        declared = _raw_request(
            server.port,
            b"POST /sessions HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
            b"Content-Type: application/json\r\nContent-Length: 99999999\r\n\r\n{}" % server.port,
        )
    # A declared length over the limit is refused at once, without waiting for (or reading) the body.
    assert declared.startswith(b"HTTP/1.1 413"), declared[:200]
    assert [r.status_code for r in oversize] == [413] * 3 and all("too large" in r.json()["error"] for r in oversize)
    assert [r.status_code for r in wrong_type] == [415] * 5 and all(
        "application/json" in r.json()["error"] for r in wrong_type
    )
    assert [r.status_code for r in accepted] == [201, 201]
    assert status["ended"] is False and health["sessions"] == 3


# --- exposure ---------------------------------------------------------------------------------


def test_all_of_127_slash_8_and_ipv6_loopback_count_as_loopback():
    assert all(
        is_loopback(h)
        for h in (
            "127.0.0.1",
            "127.0.0.2",
            "127.255.255.254",
            "::1",
            "[::1]",
            "::ffff:127.0.0.1",
            "localhost",
            "LOCALHOST",
        )
    )
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "10.0.0.1", "192.168.1.5", "128.0.0.1", "example.com", ""))


def _serve(args: list[str], monkeypatch, tmp_path, env: dict | None = None):
    """Run `serve --transport http` with uvicorn replaced: what would be served, and what was said."""
    import uvicorn

    served = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: served.update(app=app, **kw))
    result = CliRunner().invoke(
        main, ["serve", "--transport", "http", "--log", str(tmp_path / "log.sqlite"), *args], env=env or {}
    )
    return result, served


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5"])
def test_a_non_loopback_address_without_a_token_is_refused(fixture_corpus, tmp_path, monkeypatch, host):
    result, served = _serve(["--corpus", str(fixture_corpus), "--host", host], monkeypatch, tmp_path)
    assert result.exit_code == 2 and served == {}
    assert f"{host} is not a loopback address" in result.output and "--auth-token" in result.output
    assert "--allow-remote-without-auth" in result.output
    assert not (tmp_path / "log.sqlite").exists()  # refused before anything was opened
    with pytest.raises(ExposureError):  # the library refuses too, without naming flags
        check_exposure(host, None)


def test_serving_a_non_loopback_address_without_a_token_must_be_asked_for_and_is_warned_loudly(
    fixture_corpus, tmp_path, monkeypatch
):
    result, served = _serve(
        [
            "--corpus",
            str(fixture_corpus),
            "--host",
            "0.0.0.0",
            "--port",
            "9911",
            "--allow-remote-without-auth",
            "--log-level",
            "ERROR",
        ],
        monkeypatch,
        tmp_path,
    )
    assert result.exit_code == 0, result.output
    assert served["host"] == "0.0.0.0" and served["port"] == 9911
    assert (
        "SERVING WITHOUT AUTHENTICATION: 0.0.0.0 is not a loopback address" in result.stderr
    )  # shown at any log level
    with_token, _ = _serve(
        ["--corpus", str(fixture_corpus), "--host", "0.0.0.0", "--auth-token", TOKEN], monkeypatch, tmp_path
    )
    assert with_token.exit_code == 0 and "WITHOUT AUTHENTICATION" not in with_token.stderr


@pytest.mark.parametrize(
    "args, env", [([], {"AGENTHOP_AUTH_TOKEN": ""}), (["--auth-token", ""], {}), (["--auth-token", "two words"], {})]
)
def test_an_empty_or_unusable_token_is_an_error_not_no_auth(fixture_corpus, tmp_path, monkeypatch, args, env):
    result, served = _serve(["--corpus", str(fixture_corpus), *args], monkeypatch, tmp_path, env)
    assert result.exit_code == 2 and served == {}
    assert "AGENTHOP_AUTH_TOKEN is set but empty" in result.output or "auth token" in result.output


async def test_the_host_guard_checks_the_port_and_covers_127_0_0_2(fixture_corpus, tmp_path):
    with ServerThread(str(fixture_corpus), str(tmp_path / "log.sqlite"), host="127.0.0.2") as server:
        port = server.port
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            ok = [await http.get("/health"), await http.get("/health", headers={"Host": f"localhost:{port}"})]
            refused = [
                await http.get("/health", headers={"Host": f"127.0.0.1:{port + 1}"}),
                await http.get("/health", headers={"Host": f"127.0.0.2:{port + 1}"}),
                await http.get("/health", headers={"Host": "evil.example"}),
                await http.post("/sessions", json={}, headers={"Host": f"evil.example:{port}"}),
            ]
    assert [r.status_code for r in ok] == [200, 200]
    assert [r.status_code for r in refused] == [421] * 4
    assert f"127.0.0.2:{port}" in refused[0].json()["error"]


async def test_the_bearer_scheme_is_case_insensitive(fixture_corpus, tmp_path):
    with ServerThread(str(fixture_corpus), str(tmp_path / "log.sqlite"), auth_token=TOKEN) as server:
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            accepted = [
                await http.get("/health", headers={"Authorization": f"{scheme} {TOKEN}"})
                for scheme in ("Bearer", "bearer", "BEARER", "bEaReR")
            ]
            spaced = await http.get("/health", headers={"Authorization": f"Bearer   {TOKEN}"})
            refused = [
                await http.get("/health", headers={"Authorization": f"Basic {TOKEN}"}),
                await http.get("/health", headers={"Authorization": f"Bearer{TOKEN}"}),
                await http.get("/health", headers={"Authorization": f"bearer {TOKEN.upper()}"}),
            ]
    assert [r.status_code for r in accepted] == [200] * 4 and spaced.status_code == 200
    assert [r.status_code for r in refused] == [401] * 3
