"""Stdio frames the MCP SDK's parser drops: re-read them with Python's json module, or answer with an error.

The SDK's stdio transport parses each line with pydantic's JSON parser, which
rejects a lone UTF-16 surrogate escape ("\\ud83d", half an emoji pair, which
models do emit) as invalid JSON. The transport then hands the server an
exception, which the SDK drops at debug level: the client never gets a reply
and waits for ever. ``ReparsingReadStream`` sits between the transport and the
server: a dropped line that Python's json module reads (as HTTP's transport
does) becomes the message it is; anything else gets the JSON-RPC error that
HTTP would give (-32700 parse error, or -32600 with the request's id).
"""

from __future__ import annotations

import json
import logging

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

log = logging.getLogger("agenthop.server")


def _frame(exc: Exception) -> str | dict | None:
    """What the SDK's parser was given (the line) or had parsed (an object), from its error."""
    if isinstance(exc, ValidationError):
        for error in exc.errors():
            if isinstance(error.get("input"), str | dict):
                return error["input"]
    return None


def reparse(exc: Exception) -> SessionMessage | types.JSONRPCError:
    """The message a dropped line holds, or the error to answer it with."""
    frame = _frame(exc)
    try:
        value = json.loads(frame) if isinstance(frame, str) else frame
    except (ValueError, RecursionError) as parse_error:
        return types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(
            code=types.PARSE_ERROR, message=f"Parse error: the line is not JSON ({str(parse_error)[:200]})"))
    if value is None:
        return types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(code=types.PARSE_ERROR, message="Parse error"))
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_python(value, by_name=False))
    except (ValidationError, RecursionError):
        request_id = value.get("id") if isinstance(value, dict) else None
        if not isinstance(request_id, str | int) or isinstance(request_id, bool):
            request_id = None
        return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(
            code=types.INVALID_REQUEST, message="Invalid request: not a JSON-RPC 2.0 request, notification or response"))


class ReparsingReadStream:
    """Wraps the stdio transport's read stream; answers undecodable frames on ``write_stream``."""

    def __init__(self, inner, write_stream):
        self._inner = inner
        self._write = write_stream

    @property
    def last_context(self):
        return self._inner.last_context

    async def receive(self):
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            fixed = reparse(item)
            if isinstance(fixed, SessionMessage):
                return fixed
            log.warning("stdio: answered an undecodable frame with JSON-RPC error %d", fixed.error.code)
            await self._write.send(SessionMessage(fixed))

    def close(self) -> None:
        self._inner.close()

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self):
        return self

    async def __anext__(self):
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        return await self._inner.__aexit__(*exc)
