"""Serving the sandbox: ``serve(...)`` does everything ``agenthop-server serve`` does.

    from agenthop.server import serve
    serve("corpus.sqlite", transport="http", port=8765, log="runs/mine/server-log.sqlite")

Over stdio, one process serves one session (an item, or explore mode over the whole
corpus) until the client closes stdin. Over Streamable HTTP it serves the sessions that
clients create with ``POST /sessions`` until interrupted. Everything is checked before
anything is served, and the errors name the problem in words, never in flags:
``CorpusError`` (the corpus file), ``LogError`` (the checkpoint log; ``LogPathError``
when it cannot be created where asked, ``LogUnavailable`` when the first record cannot be
written), ``ExposureError`` (a non-loopback host without a token) and ``ServeError``.
"""

from __future__ import annotations

import ctypes
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from agenthop.server.caps import Caps
from agenthop.server.log.checkpoint import CheckpointLog, LogError, LogUnavailable, default_log_path

log = logging.getLogger("agenthop.server")
_M_ARENA_MAX = -8  # glibc's malloc.h


class ServeError(ValueError):
    """Arguments that do not go together, or an item the corpus does not hold."""


def serve(
    corpus: str | Path = "corpus.sqlite",
    *,
    transport: Literal["stdio", "http"] = "stdio",
    item: str | None = None,
    run: str | None = None,
    log_path: str | Path | None = None,
    caps: Caps | None = None,
    explore_budget: int | None = None,
    host: str = "127.0.0.1",
    port: int = 8765,
    auth_token: str | None = None,
    allow_remote_without_auth: bool = False,
    echo: Callable[[str], None] = lambda message: None,
) -> None:
    """Serve the seven metered tools over ``corpus`` until the client leaves (stdio) or the process is interrupted (HTTP).

    ``item``: stdio only, the one item to serve (None: explore mode). ``run``: the run label of that
    session. ``log_path``: the checkpoint log (None: ``default_log_path()``, in the per-user data
    directory). ``caps``: caps of item sessions (None: ``Caps()``, 30 points, 20 turns, 200K tokens); ``explore_budget``: the budget of explore sessions
    (None: unlimited). ``host``, ``port`` (0: a free one), ``auth_token`` and
    ``allow_remote_without_auth``: HTTP only (see ``check_exposure``). ``echo`` receives a line
    saying where the log is once it is open, and over HTTP one naming the address and its endpoints.
    """
    from agenthop.server.transport.mcp_app import make_sandbox

    if transport not in ("stdio", "http"):
        raise ServeError(f"unknown transport {transport!r}; serve over 'stdio' or 'http'")
    if transport == "http":
        from agenthop.server.transport.http import check_exposure

        check_exposure(host, auth_token, allow_remote_without_auth)
        if item is not None:
            raise ServeError('an item is served over stdio only; over HTTP, POST /sessions with {"item": ...} instead.')
    caps = caps or Caps()
    log_path = Path(log_path) if log_path is not None else default_log_path()
    checkpoint = CheckpointLog(log_path)
    echo(f"checkpoint log {log_path.resolve()}")
    try:  # the log is closed (its last records written) when serving ends, or when serving cannot start
        sandbox = make_sandbox(corpus, checkpoint, caps, Caps(explore_budget, None, None))
        if transport == "http":
            _serve_http(sandbox, host, port, auth_token, allow_remote_without_auth, echo)
            return
        if item is not None and sandbox.corpus.item(item) is None:
            raise ServeError(
                f"unknown item '{item}'; 'agenthop-server corpus info {corpus}' shows what the corpus holds."
            )
        session_caps = caps if item else sandbox.explore_caps
        try:
            sandbox.fixed_session = sandbox.sessions.create(
                sandbox.scope(item), run=run, caps=session_caps, transport="stdio"
            )
        except LogError as exc:
            raise LogUnavailable(f"cannot start the session: {exc}") from exc
        _serve_stdio(sandbox)
    finally:
        checkpoint.close()


def _serve_stdio(sandbox) -> None:
    import anyio
    from mcp.server.stdio import stdio_server

    from agenthop.server.transport.mcp_app import build_server
    from agenthop.server.transport.stdio_frames import ReparsingReadStream, WireSafeWriteStream, stdin_frames

    server = build_server(sandbox)

    async def run() -> None:
        with stdin_frames() as stdin:
            async with stdio_server(stdin=stdin) as (read, write):
                write = WireSafeWriteStream(write)
                stdin.answer_on(write)
                await server.run(ReparsingReadStream(read, write), write, server.create_initialization_options())

    anyio.run(run)


def _fewer_malloc_arenas(arenas: int = 2) -> bool:
    """Cap glibc's malloc arenas (unless MALLOC_ARENA_MAX says otherwise); False where there is no glibc.

    Tool calls run in a pool of worker threads, and glibc gives threads arenas of their own, up to 8 per core.
    Under hundreds of concurrent sessions their fragmentation grew the server's RSS with every round of sessions
    while the Python heap stayed flat; two arenas halved that growth and it levels off (docs/reliability.md,
    section 6). Python's own allocator serves most objects under the GIL, so the cap costs no measured throughput.
    """
    if "MALLOC_ARENA_MAX" in os.environ:
        return False
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):  # not glibc (macOS, Windows, musl)
        return False
    return mallopt(_M_ARENA_MAX, arenas) == 1


def _serve_http(sandbox, host: str, port: int, auth_token: str | None, allow_unauthenticated: bool, echo) -> None:
    import uvicorn

    from agenthop.server.transport.http import build_app
    from agenthop.server.transport.web import free_port, uvicorn_options

    _fewer_malloc_arenas()
    port = port or free_port(host)  # the Host check needs the real port
    app = build_app(sandbox, host=host, port=port, auth_token=auth_token, allow_unauthenticated=allow_unauthenticated)
    url = f"http://{'[' + host + ']' if ':' in host else host}:{port}"
    banner = f"serving {url}/ (MCP {url}/mcp, sessions API /sessions, items /items, play {url}/play, health /health)"
    log.info(banner)
    if not log.isEnabledFor(logging.INFO):
        echo(banner)  # a person needs the address whatever the log level (WARNING by default), once
    uvicorn.run(app, **uvicorn_options(host, port))
