"""JSON-RPC frames the MCP SDK reads wrongly, answered as JSON-RPC says, on stdio and HTTP alike.

The SDK's message model ignores a request's ``id`` when it is not a string or an
integer, so ``{"id": [1], "method": "ping"}`` is read as a notification and never
answered; a frame with an ``id`` but no ``method`` is reported as -32602 (invalid
params) by the legacy HTTP transport; and an id holding a lone UTF-16 surrogate
cannot be echoed in a UTF-8 reply (the stdio writer died of it). Each of these is
an Invalid Request (-32600), and so is a frame that is not one object (a batch, ``[]``, ``42``), has no
``"jsonrpc": "2.0"`` or a method that is not a string, all of which the legacy HTTP transport answered -32602 and
stdio -32700; a ``params`` that is not an object is -32602 with the request's id. ``frame_error`` names the problem; ``stdio_frames``
applies it to every line and ``LegacyFrameCheck`` to every POST /mcp body (for
2026-07-28 requests, which carry an ``Mcp-Method`` header, the SDK answered these
-32600 with a null id).

Two more repairs live here. The legacy HTTP transport's parser refuses a lone
surrogate escape anywhere in a body (-32700, and a tool call never reached the
log) where stdio and the 2026 era read it: ``LegacyFrameCheck`` hands the SDK the
frame with U+FFFD in place and keeps the params as sent for the tool handler
(``original_params``). And the SDK refuses a request sent before ``initialize``
with an empty -32602; ``say_initialize_is_missing`` says what is missing.
"""

from __future__ import annotations

import json

import mcp_types as types
from mcp import MCPError

from agenthop.server.log import jsontext


def _error(request_id, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


def _is_id(value: object) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _shape_error(value: object) -> types.JSONRPCError | None:
    """-32600 for a frame that is not one JSON-RPC 2.0 object, or whose ``jsonrpc`` or ``method`` is wrong."""
    if not isinstance(value, dict):
        got = f"a batch of {len(value)}" if isinstance(value, list) and value else _kind(value)
        batches = " (MCP has no batches: send each request as its own object)" if isinstance(value, list) else ""
        return _error(
            None,
            types.INVALID_REQUEST,
            f"Invalid request: a frame must be one JSON-RPC 2.0 object, got {got}{batches}; it was not run.",
        )
    request_id = value.get("id")
    if not _is_id(request_id) or (isinstance(request_id, str) and jsontext.has_lone_surrogate(request_id)):
        request_id = None  # no reply can echo it (see frame_error)
    if value.get("jsonrpc") != "2.0":
        got = "none" if "jsonrpc" not in value else json.dumps(value["jsonrpc"])[:40]
        return _error(
            request_id,
            types.INVALID_REQUEST,
            f'Invalid request: "jsonrpc" must be "2.0", got {got}; the request was not run.',
        )
    if "method" in value and not isinstance(value["method"], str):
        return _error(
            request_id,
            types.INVALID_REQUEST,
            f"Invalid request: the method must be a string, got {_kind(value['method'])}; the request was not run.",
        )
    return None


def frame_error(value: object) -> types.JSONRPCError | None:
    """The error a parsed frame gets before the SDK reads it, or None to let the SDK read it.

    -32600 for what is not a request, notification or response; -32602 (with the id) for a request whose
    ``params`` is not an object.
    """
    shape = _shape_error(value)
    if shape is not None:
        return shape
    assert isinstance(value, dict)  # _shape_error refuses every frame that is not an object
    if "id" not in value:
        if "method" in value or "result" in value or "error" in value:
            return None  # a notification (never answered) or a response: the SDK reads it
        return _error(
            None,
            types.INVALID_REQUEST,
            "Invalid request: a request needs a 'method' (a JSON-RPC 2.0 request has jsonrpc, id, method and params).",
        )
    request_id = value["id"]
    if isinstance(request_id, str) and jsontext.has_lone_surrogate(request_id):
        return _error(
            None,
            types.INVALID_REQUEST,
            "Invalid request: the id holds a lone UTF-16 surrogate (half of a surrogate "
            "pair), which no reply can echo; the request was not run. Use an id that is valid Unicode.",
        )
    if "method" in value:
        if not _is_id(request_id):
            kind = "null" if request_id is None else type(request_id).__name__
            return _error(
                None,
                types.INVALID_REQUEST,
                f"Invalid request: the id must be a string or an integer, got {kind}; the request was not run.",
            )
        # A null params is read as none, as the SDK always read it: clients that serialise an absent field as null
        # keep working (JSON-RPC says params "MAY be omitted"; a string or an array has no MCP meaning).
        if value.get("params") is not None and not isinstance(value["params"], dict):
            return _error(
                request_id,
                types.INVALID_PARAMS,
                f"Invalid params: 'params' must be an object (MCP passes parameters "
                f"by name), got {_kind(value['params'])}; the request was not run.",
            )
        return None
    if "result" in value or "error" in value:
        return None  # a response: the SDK reads it
    return _error(
        request_id if _is_id(request_id) else None,
        types.INVALID_REQUEST,
        "Invalid request: a request needs a 'method' (a JSON-RPC 2.0 request has jsonrpc, id, method and params).",
    )


MISSING_MCP_SESSION = (
    "Bad Request: Missing session ID: this request has no Mcp-Session-Id header. Without an MCP-Protocol-Version: "
    "2026-07-28 header a request uses the 2025 MCP handshake, which starts with one 'initialize' request to this URL; its "
    "response carries an Mcp-Session-Id header: send that header with 'notifications/initialized' and with every later "
    "request (MCP SDK clients do this themselves; README 'Benchmark your own agent framework over HTTP' shows it with curl). "
    "The AgentHop session (?session= or X-AgentHop-Session) is another thing, and is not what is missing."
)


def missing_session_error(value: object, headers: list[tuple[bytes, bytes]]) -> types.JSONRPCError | None:
    """The SDK's bare "Missing session ID" for a 2025-era request without Mcp-Session-Id, said with what to do."""
    if not isinstance(value, dict) or value.get("method") in (None, "initialize"):
        return None
    if any(name.lower() == b"mcp-session-id" for name, _ in headers):
        return None
    request_id = value.get("id")
    return _error(request_id if _is_id(request_id) else None, types.INVALID_REQUEST, MISSING_MCP_SESSION)


def error_body(error: types.JSONRPCError) -> bytes:
    return jsontext.dumps_bytes(
        {"jsonrpc": "2.0", "id": error.id, "error": {"code": error.error.code, "message": error.error.message}},
        separators=(",", ":"),
    )


_NOT_JSON = object()
ORIGINAL_PARAMS = "agenthop_original_params"  # key in the ASGI scope's state: params as sent, lone surrogates and all


def original_params(request) -> dict | None:
    """The params of a 2025-era HTTP frame as sent, when ``LegacyFrameCheck`` had to replace lone surrogates in it."""
    state = getattr(request, "scope", {}).get("state") or {}
    return state.get(ORIGINAL_PARAMS)


class LegacyFrameCheck:
    """Pure ASGI middleware: a POST /mcp whose body ``frame_error`` refuses gets 400 and that error.

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
        # 2026-07-28 requests (an Mcp-Method header): the SDK checks the envelope and the headers itself, but answers
        # a frame that is not a request with a null id; frame_error answers those with the id, as the 2025 era does.
        modern = any(name == b"mcp-method" for name, _ in scope["headers"])
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
                value = _NOT_JSON  # the SDK answers what is not JSON
            error = None
            if value is not _NOT_JSON:
                error = (
                    frame_error(value)
                    if modern
                    else frame_error(value) or missing_session_error(value, scope["headers"])
                )
            if error is not None:
                body = error_body(error)
                await send(
                    {
                        "type": "http.response.start",
                        "status": 400,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
            if not modern and value is not _NOT_JSON and jsontext.wire_safe(value) != value:
                # The SDK's parser refuses lone surrogate escapes (-32700), where stdio and the 2026 era read them: it gets
                # the frame with U+FFFD in their place (a method so named is "Method not found"), and the tool call
                # handler reads the name and arguments as sent (original_params), so the call is refused and logged
                # exactly as on the other transports.
                if isinstance(value.get("params"), dict):
                    scope.setdefault("state", {})[ORIGINAL_PARAMS] = value["params"]
                messages = [
                    {
                        "type": "http.request",
                        "body": jsontext.dumps_bytes(jsontext.wire_safe(value)),
                        "more_body": False,
                    }
                ]

        async def replay():
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)


INITIALIZE_MISSING = (
    "Invalid request: initialize is missing. A 2025-era client sends initialize, then "
    "notifications/initialized, before any other request (ping excepted); a 2026-07-28 client sends "
    "io.modelcontextprotocol/protocolVersion in each request's _meta."
)


def _handshake_open(ctx) -> bool:
    connection = getattr(ctx.session, "_connection", None)
    accepted = getattr(connection, "initialize_accepted", None)
    return accepted if isinstance(accepted, bool) else ctx.session.client_params is not None


async def say_initialize_is_missing(ctx, call_next):
    """Server middleware: the SDK refuses a request before the handshake as -32602 "Invalid request parameters" with
    empty data, the answer it also gives to malformed params; the refusal says instead what is missing."""
    try:
        return await call_next(ctx)
    except MCPError as exc:
        error = exc.error
        if (
            error.code == types.INVALID_PARAMS
            and error.message == "Invalid request parameters"
            and not error.data
            and ctx.method != "initialize"
            and not _handshake_open(ctx)
        ):
            raise MCPError(
                code=types.INVALID_PARAMS, message=INITIALIZE_MISSING, data={"missing": "initialize"}
            ) from None
        raise
