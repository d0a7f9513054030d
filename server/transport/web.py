"""What every HTTP route of the server shares: JSON request bodies, ports and uvicorn's settings.

The session API (``http.py``) and the play API (``play/routes.py``) both read small JSON bodies
and run under the same uvicorn options; this module holds those pieces so neither imports the other.
"""

from __future__ import annotations

import json
import socket

import uvicorn
from starlette.requests import Request

from agenthop.server.transport.timeouts import HEADER_TIMEOUT_S, KEEP_ALIVE_S, header_timeout_protocol

MAX_BODY = 64 * 1024  # the session and play APIs take small bodies; /mcp has the SDK's own 4 MiB cap


class BodyError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


async def json_body(request: Request) -> object:
    """The request's JSON body (``{}`` when empty), refusing non-JSON content types and bodies over MAX_BODY."""
    content_type = request.headers.get("content-type")
    if content_type is not None and content_type.split(";")[0].strip().lower() != "application/json":
        raise BodyError(415, f"Content-Type must be application/json, got {content_type[:100]!r}")
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_BODY:
        raise BodyError(413, f"body too large (limit {MAX_BODY} bytes)")
    body = bytearray()
    async for chunk in request.stream():
        body.extend(chunk)
        if len(body) > MAX_BODY:
            raise BodyError(413, f"body too large (limit {MAX_BODY} bytes)")
    try:
        return json.loads(bytes(body) or b"{}", parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:  # RecursionError: nesting deeper than json can read
        raise BodyError(400, f"the body must be JSON ({exc})") from exc


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON (strict JSON has no NaN or Infinity)")


def uvicorn_options(
    host: str, port: int, *, header_timeout_s: float = HEADER_TIMEOUT_S, keep_alive_s: float = KEEP_ALIVE_S
) -> dict:
    """uvicorn as AgentHop runs it: quiet, a client must send a request's headers within header_timeout_s, and an
    idle kept-alive connection stays open keep_alive_s (longer than client pools keep one: see timeouts.py)."""
    return {
        "host": host,
        "port": port,
        "log_level": "warning",
        "lifespan": "on",
        "http": header_timeout_protocol(header_timeout_s),
        "timeout_keep_alive": keep_alive_s,
    }


def uvicorn_config(
    app, host: str, port: int, *, header_timeout_s: float = HEADER_TIMEOUT_S, keep_alive_s: float = KEEP_ALIVE_S
) -> uvicorn.Config:
    return uvicorn.Config(
        app, **uvicorn_options(host, port, header_timeout_s=header_timeout_s, keep_alive_s=keep_alive_s)
    )


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def bound_socket(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A TCP socket bound to (host, port), port 0 meaning one the OS picks, for uvicorn to listen on.

    Holding the socket from the moment the port is known, rather than picking a free port and binding it
    later, leaves no moment in which another process can take the port."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: a restart on the same port works
        sock.bind((host, port))
    except BaseException:
        sock.close()
        raise
    return sock
