"""The server's own warnings and errors, sent to MCP clients that ask for them (``notifications/message``).

Whatever the ``agenthop.server`` logger records at WARNING or above while a
request is being served (a refused corpus read, a call refused because the log
could not be written) is sent to
the client that made that request, after the handler and before the response:

- on the 2025 protocol, once the client has called ``logging/setLevel`` on its
  connection, at that level and above, on the connection's standalone stream
  (stdio, or the GET stream of a stateful HTTP session);
- on 2026-07-28, when the request opts in with the ``io.modelcontextprotocol/logLevel``
  ``_meta`` key, on that request's own stream (the SDK enforces this rule).

A client never sees what was logged while serving another client's request.
Stderr logging is not touched: the records are observed with a filter on the
logger, not a handler, so Python's handling of unconfigured loggers is unchanged.
"""

from __future__ import annotations

import logging
from contextvars import ContextVar

from mcp import types
from mcp.server import ServerRequestContext
from mcp.server.connection import allowed_log_levels
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

LOGGER = "agenthop.server"
LEVELS: tuple[str, ...] = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
MAX_PER_REQUEST = 20  # a request that logs more sends the first 20
_STATE_KEY = "agenthop/log_level"

_own_log = logging.getLogger(LOGGER + ".client_log")  # a child logger: its records are not relayed
_captured: ContextVar[list[logging.LogRecord] | None] = ContextVar("agenthop_client_log", default=None)


def _mcp_level(record: logging.LogRecord) -> types.LoggingLevel:
    if record.levelno >= logging.CRITICAL:
        return "critical"
    return "error" if record.levelno >= logging.ERROR else "warning"


class _Capture(logging.Filter):
    """Keeps WARNING+ records of the current request (a no-op outside requests); never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        bucket = _captured.get()
        if bucket is not None and record.levelno >= logging.WARNING and len(bucket) < MAX_PER_REQUEST:
            bucket.append(record)
        return True


_FILTER = _Capture()


def install() -> None:
    """Observe the server logger (idempotent), and let it record warnings even when stderr shows only errors."""
    logger = logging.getLogger(LOGGER)
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)
    if logger.getEffectiveLevel() > logging.WARNING:
        logger.setLevel(logging.WARNING)


def _connection_state(ctx: ServerRequestContext) -> dict:
    # The SDK keeps per-connection scratch state on its Connection, reachable from a handler only
    # through the session proxy. A 2026-07-28 request has a fresh connection of its own.
    connection = getattr(ctx.session, "_connection", None)
    return connection.state if connection is not None else {}


async def set_level(ctx: ServerRequestContext, params: types.SetLevelRequestParams) -> types.EmptyResult:
    """``logging/setLevel`` (2025 protocol): the level at and above which this connection gets log messages."""
    _connection_state(ctx)[_STATE_KEY] = params.level
    return types.EmptyResult()


def _wanted(ctx: ServerRequestContext) -> frozenset[str]:
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return allowed_log_levels(ctx.protocol_version, ctx.meta)
    level = _connection_state(ctx).get(_STATE_KEY)
    return frozenset(LEVELS[LEVELS.index(level) :]) if level in LEVELS else frozenset()


async def _send(ctx: ServerRequestContext, records: list[logging.LogRecord]) -> None:
    wanted = _wanted(ctx)
    modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
    for record in records:
        level = _mcp_level(record)
        if level not in wanted:
            continue
        note = types.LoggingMessageNotification(
            params=types.LoggingMessageNotificationParams(level=level, logger=record.name, data=record.getMessage())
        )
        try:
            # 2026-07-28 allows log messages only on the request's own stream; the 2025 protocol sends them
            # connection-wide, which also reaches HTTP clients answered in plain JSON (they listen on GET).
            await ctx.session.send_notification(note, related_request_id=ctx.request_id if modern else None)
        except Exception:  # best effort, like every notification: the response matters more
            _own_log.debug("could not send a log message to the client", exc_info=True)
            return


async def relay(ctx: ServerRequestContext, call_next):
    """Server middleware: collect what the request logs, and send it to the client before the response."""
    if ctx.request_id is None:  # a notification: no one to answer
        return await call_next(ctx)
    bucket: list[logging.LogRecord] = []
    token = _captured.set(bucket)
    try:
        return await call_next(ctx)
    finally:
        _captured.reset(token)
        if bucket:
            await _send(ctx, bucket)
