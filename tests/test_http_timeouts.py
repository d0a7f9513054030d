"""Slow clients (issue 11): request headers and bodies must arrive within their deadlines, or the server
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


def _status_and_body(raw: bytes) -> tuple[int, dict]:
    head, _, body = raw.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def test_slow_headers_and_bodies_get_408_and_others_are_still_served(fixture_corpus, tmp_path):
    with ServerThread(str(fixture_corpus), str(tmp_path / "log.sqlite"), header_timeout_s=0.5, body_timeout_s=0.5) as server:
        host = f"127.0.0.1:{server.port}".encode()
        no_end_of_headers = _answer_of_slow_request(server.port, b"GET /health HTTP/1.1\r\nHost: " + host + b"\r\n")
        nothing_at_all = _answer_of_slow_request(server.port, b"")
        short_body = _answer_of_slow_request(
            server.port, b"POST /sessions HTTP/1.1\r\nHost: " + host + b"\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 100\r\n\r\n{\"item\": ")
        short_mcp_body = _answer_of_slow_request(
            server.port, b"POST /mcp HTTP/1.1\r\nHost: " + host + b"\r\nContent-Type: application/json\r\n"
                         b"Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\": ")
        health = httpx2.get(f"{server.base_url}/health")
        created = httpx2.post(f"{server.base_url}/sessions", json={"item": "st_0001"})
    for raw, what in ((no_end_of_headers, "request headers"), (nothing_at_all, "request headers"),
                      (short_body, "request body"), (short_mcp_body, "request body")):
        status, body = _status_and_body(raw)
        assert status == 408 and what in body["error"], raw
    assert health.status_code == 200 and created.status_code == 201
