"""Stdio frames the MCP SDK's transport mishandles: every line gets an answer (or, for a notification, silence).

The SDK's stdio transport parses each line with pydantic's JSON parser, which
rejects a lone UTF-16 surrogate escape ("\\ud83d", half an emoji pair, which
models do emit) as invalid JSON. The transport then hands the server an
exception, which the SDK drops at debug level: the client never gets a reply
and waits for ever. ``ReparsingReadStream`` sits between the transport and the
server: a dropped line that Python's json module reads (as HTTP's transport
does) becomes the message it is; anything else gets the JSON-RPC error that
HTTP would give (-32700 parse error, or -32600 with the request's id).

More edges, each of which used to kill or silence the process:

- a request whose ``id`` holds a lone surrogate: its reply cannot be encoded as
  UTF-8, and the SDK's writer raised and ended the process. Such an id cannot be
  echoed, so the request is refused as -32600 with a null id and never runs
  (HTTP, whose writer escapes it, runs it and echoes the id);
- any other reply that echoes a lone surrogate (a method name in "Method not
  found"): ``WireSafeWriteStream`` replaces lone surrogates by U+FFFD rather than
  let the writer raise;
- bytes that are not UTF-8: the SDK decodes stdin with ``errors="replace"`` and
  runs the call with U+FFFD in place (charging it) where HTTP answers -32700.
- a request whose id is an object, array, float, boolean or null: the SDK reads
  it as a notification and never answers; HTTP answers -32600 with a null id
  (these and the first are ``frame_checks.frame_error``, shared with HTTP).

``StdinFrames`` reads the lines itself and answers the first, third and fourth
before the SDK sees them, as HTTP does; ``WireSafeWriteStream`` is the net for
the second.
"""

from __future__ import annotations

import io
import json
import logging
import os
import sys
from contextlib import contextmanager

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from agenthop.server.log.jsontext import has_lone_surrogate, wire_safe
from agenthop.server.transport.frame_checks import frame_error

log = logging.getLogger("agenthop.server")


def _frame(exc: Exception) -> str | dict | None:
    """What the SDK's parser was given (the line) or had parsed (an object), from its error."""
    if isinstance(exc, ValidationError):
        for error in exc.errors():
            if isinstance(error.get("input"), str | dict):
                return error["input"]
    return None


def _error(request_id, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


def reparse(exc: Exception) -> SessionMessage | types.JSONRPCError:
    """The message a dropped line holds, or the error to answer it with."""
    frame = _frame(exc)
    try:
        value = json.loads(frame) if isinstance(frame, str) else frame
    except (ValueError, RecursionError) as parse_error:
        return types.JSONRPCError(
            jsonrpc="2.0",
            id=None,
            error=types.ErrorData(
                code=types.PARSE_ERROR, message=f"Parse error: the line is not JSON ({str(parse_error)[:200]})"
            ),
        )
    if value is None:
        return types.JSONRPCError(
            jsonrpc="2.0", id=None, error=types.ErrorData(code=types.PARSE_ERROR, message="Parse error")
        )
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_python(value, by_name=False))
    except (ValidationError, RecursionError):
        request_id = value.get("id") if isinstance(value, dict) else None
        if not isinstance(request_id, str | int) or isinstance(request_id, bool):
            request_id = None
        return types.JSONRPCError(
            jsonrpc="2.0",
            id=request_id,
            error=types.ErrorData(
                code=types.INVALID_REQUEST,
                message="Invalid request: not a JSON-RPC 2.0 request, notification or response",
            ),
        )


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


class WireSafeWriteStream:
    """Wraps the stdio transport's write stream: a message that cannot be encoded as UTF-8 is sent with U+FFFD instead.

    The SDK's writer serialises each message in its own task; a lone surrogate there (a client's method name
    echoed in an error) raised and took the whole process down.
    """

    def __init__(self, inner):
        self._inner = inner

    async def send(self, item: SessionMessage) -> None:
        try:
            item.message.model_dump_json(by_alias=True, exclude_unset=True)
        except PydanticSerializationError:
            wire = wire_safe(item.message.model_dump(by_alias=True, exclude_unset=True))
            item = SessionMessage(
                types.jsonrpc_message_adapter.validate_python(wire, by_name=False), metadata=item.metadata
            )
            log.warning("stdio: a reply echoed a lone surrogate; sent with U+FFFD instead")
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    def close(self) -> None:
        self._inner.close()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        return await self._inner.__aexit__(*exc)


def refusal(line: str) -> types.JSONRPCError | None:
    """The error a line gets before the SDK sees it (see frame_checks), or None to let the SDK (and ``reparse``) read it."""
    if has_lone_surrogate(line):  # raw surrogates (not \\u escapes) come only from bytes that are not UTF-8
        return _error(
            None, types.PARSE_ERROR, "Parse error: the line is not valid UTF-8; send JSON text encoded as UTF-8"
        )
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None  # the SDK's parser refuses it too, and reparse answers it
    return frame_error(value)


class StdinFrames:
    """The client's lines as text for ``stdio_server(stdin=...)``; lines ``refusal`` refuses are answered here.

    Decoding uses ``surrogateescape`` so that bytes that are not UTF-8 stay recognisable (as lone surrogates).
    """

    def __init__(self, binary):
        self._text = io.TextIOWrapper(binary, encoding="utf-8", errors="surrogateescape")
        self._write = None
        self._ready = anyio.Event()

    def answer_on(self, write_stream) -> None:
        """Where refusals are sent: the transport's write stream, which exists only once the transport runs."""
        self._write = write_stream
        self._ready.set()

    def __aiter__(self):
        return self

    async def __anext__(self) -> str:
        while True:
            line = await anyio.to_thread.run_sync(self._text.readline, abandon_on_cancel=True)
            if not line:
                raise StopAsyncIteration
            error = refusal(line)
            if error is None:
                return line
            await self._ready.wait()
            log.warning("stdio: refused a frame with JSON-RPC error %d", error.error.code)
            await self._write.send(SessionMessage(error))


@contextmanager
def stdin_frames():
    """The wire's stdin as ``StdinFrames``, read from a private descriptor.

    As the SDK does for the stdin it opens itself, fd 0 reads the null device meanwhile, so nothing else in
    the process can take the client's frames; fd 0 is restored on exit.
    """
    try:
        private = os.dup(sys.stdin.fileno())
        devnull = os.open(os.devnull, os.O_RDONLY)
    except (OSError, ValueError, AttributeError):  # no real descriptor (an embedded interpreter): read stdin in place
        yield StdinFrames(sys.stdin.buffer)
        return
    saved = os.dup(0)
    os.dup2(devnull, 0)
    os.close(devnull)
    try:
        yield StdinFrames(os.fdopen(private, "rb"))
    finally:
        os.dup2(saved, 0)
        os.close(saved)
