"""JSON-RPC frames the MCP SDK reads wrongly, answered as JSON-RPC says, on stdio and HTTP alike.

The SDK's message model ignores a request's ``id`` when it is not a string or an
integer, so ``{"id": [1], "method": "ping"}`` is read as a notification and never
answered; a frame with an ``id`` but no ``method`` is reported as -32602 (invalid
params) by the legacy HTTP transport; and an id holding a lone UTF-16 surrogate
cannot be echoed in a UTF-8 reply (the stdio writer died of it). Each of these is
an Invalid Request (-32600). ``frame_error`` names the problem; ``stdio_frames``
applies it to every line and ``LegacyFrameCheck`` to every 2025-era POST /mcp body
(2026-07-28 requests, which carry an ``Mcp-Method`` header, are already answered
-32600 by the SDK).
"""

from __future__ import annotations

import json

import mcp_types as types

from agenthop.server.log import jsontext


def _error(request_id, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


def _is_id(value: object) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def frame_error(value: object) -> types.JSONRPCError | None:
    """The -32600 a parsed frame gets before the SDK reads it, or None to let the SDK read it."""
    if not isinstance(value, dict) or "id" not in value:
        return None
    request_id = value["id"]
    if isinstance(request_id, str) and jsontext.has_lone_surrogate(request_id):
        return _error(None, types.INVALID_REQUEST, "Invalid request: the id holds a lone UTF-16 surrogate (half of a surrogate "
                      "pair), which no reply can echo; the request was not run. Use an id that is valid Unicode.")
    if "method" in value:
        if not _is_id(request_id):
            kind = "null" if request_id is None else type(request_id).__name__
            return _error(None, types.INVALID_REQUEST, f"Invalid request: the id must be a string or an integer, got {kind}; "
                          "the request was not run.")
        return None
    if "result" in value or "error" in value:
        return None  # a response: the SDK reads it
    return _error(request_id if _is_id(request_id) else None, types.INVALID_REQUEST,
                  "Invalid request: a request needs a 'method' (a JSON-RPC 2.0 request has jsonrpc, id, method and params).")


MISSING_MCP_SESSION = (
    "Bad Request: Missing session ID: this request has no Mcp-Session-Id header. Without an MCP-Protocol-Version: "
    "2026-07-28 header a request uses the 2025 MCP handshake, which starts with one 'initialize' request to this URL; its "
    "response carries an Mcp-Session-Id header: send that header with 'notifications/initialized' and with every later "
    "request (MCP SDK clients do this themselves; README 'Benchmark your own agent framework over HTTP' shows it with curl). "
    "The AgentHop session (?session= or X-AgentHop-Session) is another thing, and is not what is missing.")


def missing_session_error(value: object, headers: list[tuple[bytes, bytes]]) -> types.JSONRPCError | None:
    """The SDK's bare "Missing session ID" for a 2025-era request without Mcp-Session-Id, said with what to do."""
    if not isinstance(value, dict) or value.get("method") in (None, "initialize"):
        return None
    if any(name.lower() == b"mcp-session-id" for name, _ in headers):
        return None
    request_id = value.get("id")
    return _error(request_id if _is_id(request_id) else None, types.INVALID_REQUEST, MISSING_MCP_SESSION)


def error_body(error: types.JSONRPCError) -> bytes:
    return jsontext.dumps_bytes({"jsonrpc": "2.0", "id": error.id, "error": {"code": error.error.code, "message": error.error.message}},
                                separators=(",", ":"))


class LegacyFrameCheck:
    """Pure ASGI middleware: a 2025-era POST /mcp whose body ``frame_error`` refuses gets 400 and that error.

    The body is read here (as the SDK would) and replayed to the route unchanged when it passes.
    """

    def __init__(self, app, path: str = "/mcp", max_body: int = 4 * 1024 * 1024):
        self.app = app
        self.path = path
        self.max_body = max_body

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        if any(name == b"mcp-method" for name, _ in scope["headers"]):  # 2026-07-28: the SDK answers these itself
            await self.app(scope, receive, send)
            return
        messages, size, more = [], 0, True
        while more and size <= self.max_body:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            more = message.get("more_body", False)
        if not more and messages and messages[-1]["type"] == "http.request":
            try:
                value = json.loads(b"".join(m.get("body", b"") for m in messages))
            except (ValueError, RecursionError):
                value = None  # the SDK answers what is not JSON
            error = frame_error(value) or missing_session_error(value, scope["headers"])
            if error is not None:
                body = error_body(error)
                await send({"type": "http.response.start", "status": 400,
                            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return

        async def replay():
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)
