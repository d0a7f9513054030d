"""Slow clients: request headers and bodies must arrive within their deadlines, or the server
answers 408 in JSON and closes the connection; other clients are served meanwhile."""

from __future__ import annotations

import json
import socket

import httpx2

from agenthop.server.transport.http import ServerThread


def _answer_of_slow_request(port: int, partial: bytes) -> bytes:
    """Send part of a request, then read until the server closes the connection (bounded by the socket timeout)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(partial)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
        return received


def _one_response(sock: socket.socket) -> bytes:
    """Exactly one response (headers, then Content-Length bytes of body) from a kept-alive connection."""
    raw = b""
    while b"\r\n\r\n" not in raw:
        raw += sock.recv(65536)
    head, _, body = raw.partition(b"\r\n\r\n")
    length = int(
        next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))
    )
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def _status_and_body(raw: bytes) -> tuple[int, dict]:
    head, _, body = raw.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def test_slow_headers_and_bodies_get_408_and_others_are_still_served(fixture_corpus, tmp_path):
    with ServerThread(
        str(fixture_corpus), str(tmp_path / "log.sqlite"), header_timeout_s=0.5, body_timeout_s=0.5
    ) as server:
        host = f"127.0.0.1:{server.port}".encode()
        no_end_of_headers = _answer_of_slow_request(server.port, b"GET /health HTTP/1.1\r\nHost: " + host + b"\r\n")
        nothing_at_all = _answer_of_slow_request(server.port, b"")
        short_body = _answer_of_slow_request(
            server.port,
            b"POST /sessions HTTP/1.1\r\nHost: " + host + b"\r\nContent-Type: application/json\r\n"
            b'Content-Length: 100\r\n\r\n{"item": ',
        )
        short_mcp_body = _answer_of_slow_request(
            server.port,
            b"POST /mcp HTTP/1.1\r\nHost: " + host + b"\r\nContent-Type: application/json\r\n"
            b'Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{"jsonrpc": ',
        )
        health = httpx2.get(f"{server.base_url}/health")
        created = httpx2.post(f"{server.base_url}/sessions", json={"item": "st_0001"})
    for raw, what in (
        (no_end_of_headers, "request headers"),
        (nothing_at_all, "request headers"),
        (short_body, "request body"),
        (short_mcp_body, "request body"),
    ):
        status, body = _status_and_body(raw)
        assert status == 408 and what in body["error"], raw
    assert health.status_code == 200 and created.status_code == 201


def test_an_idle_kept_alive_connection_is_closed_silently_and_a_trickled_next_request_still_gets_408(
    fixture_corpus, tmp_path
):
    """A 408 written to an idle kept-alive connection races the client's next request on it (256
    clients saw resets). Idle after a response, the connection is closed without a byte; the header deadline starts
    with the next request's first byte."""
    with ServerThread(
        str(fixture_corpus), str(tmp_path / "log.sqlite"), header_timeout_s=0.3, keep_alive_s=1.0
    ) as server:
        host = f"127.0.0.1:{server.port}".encode()
        request = b"GET /health HTTP/1.1\r\nHost: " + host + b"\r\n\r\n"
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
            sock.sendall(request)
            first = _one_response(sock)
            after_idle = b""
            while chunk := sock.recv(65536):  # nothing more is sent; the server closes when the keep-alive runs out
                after_idle += chunk
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
            sock.sendall(request)
            _one_response(sock)
            sock.sendall(b"GET /health HTTP/1.1\r\n")  # the next request starts, and stalls
            trickled = b""
            while chunk := sock.recv(65536):
                trickled += chunk
    assert first.startswith(b"HTTP/1.1 200")
    assert after_idle == b"", after_idle
    status, body = _status_and_body(trickled)
    assert status == 408 and "request headers" in body["error"]


def test_the_keep_alive_outlasts_the_idle_expiry_of_client_pools():
    """httpx (which the MCP SDK and openai use) drops idle pooled connections after 5 s; the server must not close first."""
    from agenthop.server.transport.web import uvicorn_options

    httpx_expiry = httpx2.Limits().keepalive_expiry
    assert uvicorn_options("127.0.0.1", 1)["timeout_keep_alive"] >= 3 * httpx_expiry
