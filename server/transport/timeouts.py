"""Slow clients: a request's headers and its body must each arrive within a deadline.

uvicorn's keep-alive timeout is reset by every byte received, so a client that
trickles a request (slowloris) holds a connection for ever. Two limits close that:

- ``header_timeout_protocol``: uvicorn's h11 protocol with a deadline for the
  request line and headers, counted from the connection (or, on a kept-alive
  connection, from the first byte of the next request); past it the server
  answers 408 and closes the connection.

A kept-alive connection with no request under way is closed silently after
KEEP_ALIVE_S (uvicorn's keep-alive timeout), never with a 408: a 408 written
to an idle connection races a client that is sending its next request on it,
and the client reads the 408 (or a reset) as the answer to that request. The
keep-alive outlasts the idle expiry of common client pools (httpx drops idle
connections after 5 s, aiohttp after 15 s), so the client, not the server,
closes a pooled connection; uvicorn's default (5 s) equalled httpx's, and 256
concurrent clients saw resets.
- ``BodyDeadline``: ASGI middleware under which every read of a request's body
  must complete within a deadline counted from its headers (408 otherwise).
"""

from __future__ import annotations

import anyio
import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from agenthop.server.log import jsontext

HEADER_TIMEOUT_S = 10.0
BODY_TIMEOUT_S = 60.0
KEEP_ALIVE_S = 30.0


def _timeout_body(what: str, seconds: float) -> bytes:
    return jsontext.dumps_bytes({"error": f"request timeout: the {what} did not arrive within {seconds:g} s"})


def header_timeout_protocol(seconds: float) -> type[H11Protocol]:
    """An H11Protocol subclass that closes connections whose request headers do not arrive within ``seconds``."""

    class HeaderTimeoutProtocol(H11Protocol):
        _header_timer = None

        def _arm(self) -> None:
            self._disarm()
            self._header_timer = self.loop.call_later(seconds, self._headers_too_slow)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._arm()

        def connection_lost(self, exc) -> None:
            self._disarm()
            super().connection_lost(exc)

        def handle_events(self) -> None:
            super().handle_events()
            if self.conn.their_state is not h11.IDLE:  # a whole request head has arrived
                self._disarm()

        def data_received(self, data: bytes) -> None:
            if self._header_timer is None and self.conn.their_state is h11.IDLE and self.conn.our_state is h11.IDLE:
                self._arm()  # the first bytes of the next request on a kept-alive connection: its headers' deadline starts
            super().data_received(data)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._disarm()  # idle now: uvicorn's keep-alive timeout closes the connection, silently

        def _headers_too_slow(self) -> None:
            self._header_timer = None
            if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
                return
            if self.conn.our_state is h11.IDLE and self.conn.their_state is h11.IDLE:
                body = _timeout_body("request headers", seconds)
                self.transport.write(
                    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
                    b"connection: close\r\ncontent-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
                )
            self.transport.close()

    return HeaderTimeoutProtocol


class BodyDeadline:
    """Pure ASGI middleware: a request's body must arrive within ``seconds`` of its headers.

    The route reads the body as usual; a read that would pass the deadline instead answers 408 (if the route has
    not answered yet) and tells the route the client is gone.
    """

    def __init__(self, app, seconds: float = BODY_TIMEOUT_S):
        self.app = app
        self.seconds = seconds

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        deadline = anyio.current_time() + self.seconds
        state = {"body_done": False, "started": False, "timed_out": False}

        async def timed_receive():
            if state["body_done"] or state["timed_out"]:
                return await receive() if not state["timed_out"] else {"type": "http.disconnect"}
            with anyio.move_on_after(max(0.0, deadline - anyio.current_time())):
                message = await receive()
                if message["type"] != "http.request" or not message.get("more_body", False):
                    state["body_done"] = True
                return message
            state["timed_out"] = True
            if not state["started"]:
                body = _timeout_body("request body", self.seconds)
                await send(
                    {
                        "type": "http.response.start",
                        "status": 408,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
            return {"type": "http.disconnect"}

        async def guarded_send(message):
            if state["timed_out"]:
                return  # the 408 has been sent
            if message["type"] == "http.response.start":
                state["started"] = True
            await send(message)

        await self.app(scope, timed_receive, guarded_send)
