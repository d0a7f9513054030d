"""Streamable HTTP: the MCP endpoint plus the small harness API that creates and ends sessions."""

from __future__ import annotations

import functools
import hmac
import ipaddress
import json
import logging
import threading
import time
from dataclasses import dataclass

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from agenthop.server.caps import Caps
from agenthop.server.log import jsontext
from agenthop.server.log.checkpoint import CheckpointLog, LogError
from agenthop.server.play.routes import PlayOptions, play_routes
from agenthop.server.sessions import PLAY_CLIENT, PLAY_ONLY, is_play_session
from agenthop.server.tools import TOOLS
from agenthop.server.transport.frame_checks import LegacyFrameCheck
from agenthop.server.transport.front import front_routes
from agenthop.server.transport.mcp_app import SESSION_PARAM, Sandbox, build_server, make_sandbox
from agenthop.server.transport.timeouts import BODY_TIMEOUT_S, HEADER_TIMEOUT_S, KEEP_ALIVE_S, BodyDeadline
from agenthop.server.transport.web import BodyError, bound_socket, json_body, uvicorn_config
from agenthop.server.web.assets import asset_routes

log = logging.getLogger("agenthop.server")

CLIENT_ENDABLE = ("token_limit", "max_turns", "empty_response", "error", "abandoned")


# --- exposure -------------------------------------------------------------------------------------------


class ExposureError(ValueError):
    """Serving as asked would expose the server to others without authentication, or the token is unusable."""


def is_loopback(host: str) -> bool:
    """localhost, any address in 127.0.0.0/8, or ::1 (IPv4-mapped forms included)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host.strip().strip("[]"))
    except ValueError:
        return False  # any other name may resolve to anything
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback


def check_auth_token(token: str | None) -> None:
    """A token must be printable ASCII without spaces (it travels in an HTTP header); empty is not 'no auth'."""
    if token is None:
        return
    if not token:
        raise ExposureError(
            "the auth token is empty; give a real token, or none to serve without authentication on loopback"
        )
    if not all("!" <= ch <= "~" for ch in token):
        raise ExposureError(
            "the auth token must be printable ASCII without spaces (it is sent in the Authorization header)"
        )


def check_exposure(host: str, auth_token: str | None, allow_unauthenticated: bool = False) -> str | None:
    """None when serving on ``host`` is safe as asked; a warning to show loudly when the user accepted an
    unauthenticated non-loopback address; ExposureError when they did not."""
    check_auth_token(auth_token)
    if auth_token or is_loopback(host):
        return None
    risk = (
        f"{host} is not a loopback address, so without an auth token anyone who can reach this port can create "
        "sessions, read the corpus and write to the checkpoint log"
    )
    if not allow_unauthenticated:
        raise ExposureError(
            f"refusing to serve: {risk}. Set an auth token, or allow unauthenticated remote access explicitly."
        )
    return f"SERVING WITHOUT AUTHENTICATION: {risk}."


class SafeJSONResponse(JSONResponse):
    """Strict JSON whatever it echoes: lone surrogates from a client are sent as \\u escapes, not a 500."""

    def render(self, content) -> bytes:
        return jsontext.dumps_bytes(content, separators=(",", ":"))


def _error(status: int, message: str) -> JSONResponse:
    return SafeJSONResponse({"error": message}, status_code=status)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    """Unknown routes and methods answer in JSON too (Starlette's default is plain text)."""
    # Starlette types a handler as taking any Exception; it is registered for HTTPException only.
    assert isinstance(exc, HTTPException)
    response = _error(exc.status_code, exc.detail)
    response.headers.update(exc.headers or {})
    return response


async def _internal_error(request: Request, exc: Exception) -> JSONResponse:
    """Any unexpected failure still answers in JSON (Starlette's default is a plain-text 500)."""
    log.exception("unexpected error on %s %s", request.method, request.url.path)
    return _error(500, f"internal server error ({type(exc).__name__}); the server's log has the details")


def _cap(body: dict, key: str, default: int | None) -> int | None:
    if key not in body:
        return default
    value = body[key]
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"field '{key}' must be a non-negative integer or null, got {value!r}")
    return value


def _parse_session_request(body: object, defaults: Caps, explore: Caps) -> dict:
    if not isinstance(body, dict):
        raise ValueError("the body must be a JSON object")
    unknown = set(body) - {"item", "run", "budget", "max_turns", "max_tokens", "disabled_tools", "client"}
    if unknown:
        raise ValueError(
            f"unknown field(s) {sorted(unknown)}; allowed: item, run, budget, max_turns, max_tokens, disabled_tools, client"
        )
    item = body.get("item")
    if item is not None and not isinstance(item, str):
        raise ValueError("field 'item' must be an item ID string or null (explore mode)")
    run = body.get("run")
    if run is not None and (not isinstance(run, str) or len(run) > 200):
        raise ValueError("field 'run' must be a string of at most 200 characters")
    if run is not None and jsontext.has_lone_surrogate(run):
        # A run label names files and selects records on the command line: it must be printable text.
        raise ValueError("field 'run' contains a lone UTF-16 surrogate (half of a surrogate pair); send valid Unicode")
    disabled = body.get("disabled_tools", [])
    if not isinstance(disabled, list) or not all(isinstance(t, str) for t in disabled):
        raise ValueError("field 'disabled_tools' must be a list of tool names")
    unknown_tools = set(disabled) - set(TOOLS)
    if unknown_tools:
        raise ValueError(f"field 'disabled_tools' names unknown tools {sorted(unknown_tools)}; tools are {list(TOOLS)}")
    client = body.get("client", {})
    if not isinstance(client, dict) or len(json.dumps(client)) > 10_000:
        raise ValueError("field 'client' must be a JSON object (at most 10 KB)")
    if client.get("name") == PLAY_CLIENT:
        # /play counts a participant's attempts by this name: a harness that used it could fill in a person's list
        raise ValueError(f"client name {PLAY_CLIENT!r} is reserved for attempts made on /play; name your own client")
    # Omitted caps: the server's item caps, or its explore caps (unlimited unless --explore-budget).
    base = defaults if item is not None else explore
    caps = Caps(
        _cap(body, "budget", base.budget),
        _cap(body, "max_turns", base.max_turns),
        _cap(body, "max_tokens", base.max_tokens),
    )
    return {"item": item, "run": run, "caps": caps, "disabled": frozenset(disabled), "client": client}


def session_routes(sandbox: Sandbox, public_url: str) -> list[Route]:
    async def health(request: Request) -> JSONResponse:
        """200 and "ok" only when the corpus is as it was at start and the log is being written."""
        watch = sandbox.sessions.corpus_watch
        assert watch is not None  # Sandbox.__post_init__ always gives the registry one
        corpus_problem = await anyio.to_thread.run_sync(watch.check)
        status = sandbox.sessions.log.status
        problems = [p for p in (corpus_problem, status.failing) if p]
        body = {
            "status": "failing" if problems else "ok",
            "problems": problems,
            "corpus": sandbox.corpus.identity,
            "corpus_restored": watch.restored,
            "sessions": len(sandbox.sessions),
            **sandbox.sessions.counts(),
            "log": {
                "path": str(sandbox.sessions.log.path),
                "failing": status.failing,
                "failing_since": status.since,
                "waiting": status.waiting,
                "records_written": status.records,
                "commits": status.committed,
            },
        }
        return SafeJSONResponse(body, status_code=503 if problems else 200)

    async def create_session(request: Request) -> JSONResponse:
        try:
            body = await json_body(request)
            spec = _parse_session_request(body, sandbox.sessions.defaults, sandbox.explore_caps)
        except BodyError as exc:
            return _error(exc.status, f"bad session request: {exc}")
        except ValueError as exc:
            return _error(400, f"bad session request: {exc}")
        if spec["item"] is not None and sandbox.corpus.item(spec["item"]) is None:
            return _error(404, f"unknown item '{spec['item'][:100]}'; GET /items lists the items this server serves")
        # The session_start record is an fsync'd write: keep it off the event loop.
        try:
            session = await anyio.to_thread.run_sync(
                functools.partial(
                    sandbox.sessions.create,
                    sandbox.scope(spec["item"]),
                    run=spec["run"],
                    caps=spec["caps"],
                    disabled_tools=spec["disabled"],
                    client=spec["client"],
                    transport="http",
                )
            )
        except LogError as exc:
            return _error(503, f"no session was created: {exc}; try again shortly")
        sid = session.session_id
        return SafeJSONResponse(
            {
                "session_id": sid,
                "mcp_url": f"{public_url}/mcp?{SESSION_PARAM}={sid}",
                "headers": {"X-AgentHop-Session": sid},
                "item": session.item_id,
                "run": session.run,
                "caps": session.caps.as_dict(),
                "disabled_tools": sorted(session.disabled_tools),
            },
            status_code=201,
        )

    async def get_session(request: Request) -> JSONResponse:
        # Ended sessions leave memory after a while; they are then rebuilt from the log (off the event loop).
        try:
            session = await anyio.to_thread.run_sync(
                sandbox.sessions.revive, request.path_params["session_id"], sandbox.scope
            )
        except LogError as exc:
            return _error(503, f"cannot read the session from the log: {exc}")
        if session is None:
            return _error(404, "unknown session")
        if is_play_session(session):
            return _error(403, PLAY_ONLY)
        return SafeJSONResponse(session.state())

    async def end_session(request: Request) -> JSONResponse:
        try:
            session = await anyio.to_thread.run_sync(
                sandbox.sessions.revive, request.path_params["session_id"], sandbox.scope
            )
        except LogError as exc:
            return _error(503, f"cannot read the session from the log: {exc}")
        if session is None:
            return _error(404, "unknown session")
        if is_play_session(session):
            return _error(403, PLAY_ONLY)
        try:
            body = await json_body(request)
        except BodyError as exc:
            return _error(exc.status, f"bad end request: {exc}")
        termination = body.get("termination") if isinstance(body, dict) else None
        if termination not in CLIENT_ENDABLE:
            return _error(
                400,
                f"field 'termination' must be one of {list(CLIENT_ENDABLE)} (answer and budget are set by the server)",
            )
        assert isinstance(body, dict)  # a termination was found, so the body is an object
        reason = body.get("reason")
        # Off the event loop: the write is fsync'd, and a slow call may hold the session's lock.
        try:
            ended = await sandbox.end(session, termination, str(reason)[:2000] if reason is not None else None)
        except LogError as exc:
            return _error(503, f"the session was not ended: {exc}; try again shortly")
        if not ended:
            return _error(409, f"session already ended ({session.termination})")
        return SafeJSONResponse({"session_id": session.session_id, "termination": termination})

    return [
        Route("/health", health, methods=["GET"]),
        Route("/sessions", create_session, methods=["POST"]),
        Route("/sessions/{session_id}", get_session, methods=["GET"]),
        Route("/sessions/{session_id}/end", end_session, methods=["POST"]),
    ]


class BearerAuth:
    """Pure ASGI middleware: every HTTP request must carry 'Authorization: Bearer TOKEN' (scheme in any case)."""

    def __init__(self, app, token: str):
        check_auth_token(token)
        self.app = app
        self.expected = token.encode()

    @staticmethod
    def _credentials(header: bytes) -> bytes:
        scheme, _, credentials = header.strip().partition(b" ")
        return credentials.strip(b" ") if scheme.lower() == b"bearer" else b""  # RFC 7235: schemes ignore case

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            headers = [value for name, value in scope["headers"] if name.lower() == b"authorization"]
            if len(headers) > 1:  # which one counts would depend on the proxy or the parser: refuse the ambiguity
                response = _error(
                    401, f"{len(headers)} Authorization headers: send exactly one (Authorization: Bearer ...)"
                )
                await response(scope, receive, send)
                return
            supplied = self._credentials(headers[0] if headers else b"")
            if not hmac.compare_digest(supplied, self.expected):
                response = _error(401, "missing or wrong bearer token (Authorization: Bearer ...)")
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


class LoopbackGuard:
    """Pure ASGI middleware against DNS rebinding for the whole app (the SDK guards only /mcp).

    When the server binds a loopback address, every HTTP request must name a
    loopback Host with the port it serves and, if it sends an Origin, this very
    origin: ``http``, a loopback name and the port served, compared exactly (the SDK
    allows any port, but a page on another local port is another origin, and
    SameSite cookies do not tell ports apart). A request a browser marks as sent by
    another site or another port (``Sec-Fetch-Site``) is refused too, unless it is a
    top-level navigation: a GET sent with ``mode: no-cors`` carries no Origin.
    Anything else gets 421 or 403 before it reaches a route. Two Host or two Origin
    headers are refused as ambiguous, as two Authorization headers are (the SDK's own
    check on /mcp already refused them).
    """

    NAMES = ("127.0.0.1", "localhost", "[::1]")

    def __init__(self, app, *, host: str, port: int):
        self.app = app
        bound = f"[{host}]" if ":" in host else host
        names = (*self.NAMES, bound) if bound not in self.NAMES else self.NAMES
        self.port = port
        self.hosts = frozenset(f"{name}:{port}" for name in names)
        self.origins = frozenset(f"http://{name}:{port}" for name in names) | (
            frozenset(f"http://{name}" for name in names) if port == 80 else frozenset()
        )

    def _origin_ok(self, origin: str) -> bool:
        return origin.lower() in self.origins

    @staticmethod
    def _foreign_fetch(headers: dict[str, str]) -> bool:
        """A subresource request the browser says another site or port sent (a navigation may come from anywhere)."""
        site = headers.get("sec-fetch-site", "").strip().lower()
        return site in ("same-site", "cross-site") and headers.get("sec-fetch-mode", "").strip().lower() != "navigate"

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            for name, status in ((b"host", 421), (b"origin", 403)):
                count = sum(1 for k, _ in scope["headers"] if k.lower() == name)
                if count > 1:  # which one counts would depend on the proxy or the parser: refuse the ambiguity
                    label = name.decode().capitalize()
                    await _error(
                        status, f"{count} {label} headers: send {'exactly' if name == b'host' else 'at most'} one"
                    )(scope, receive, send)
                    return
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            origin = headers.get("origin")
            if headers.get("host", "").lower() not in self.hosts:
                message = f"invalid Host header: this server answers only to {', '.join(sorted(self.hosts))}"
                await _error(421, message)(scope, receive, send)
                return
            if origin and not self._origin_ok(origin):
                await _error(
                    403,
                    "invalid Origin header: cross-origin requests are refused (this server's origin is "
                    f"http://127.0.0.1:{self.port}; another port is another origin)",
                )(scope, receive, send)
                return
            if self._foreign_fetch(headers):
                await _error(403, "cross-origin requests are refused (Sec-Fetch-Site names another origin)")(
                    scope, receive, send
                )
                return
        await self.app(scope, receive, send)


def build_app(
    sandbox: Sandbox,
    *,
    host: str,
    port: int,
    auth_token: str | None = None,
    play=None,
    allow_unauthenticated: bool = False,
    body_timeout_s: float = BODY_TIMEOUT_S,
) -> Starlette:
    """The HTTP app: MCP at /mcp, the session API, /play, and / with /items (server/transport/front.py).

    ``play``: the PlayOptions of /play (server/play/routes.py); None serves /play with the defaults (reveal off).
    Raises ExposureError for a non-loopback ``host`` without ``auth_token`` unless
    ``allow_unauthenticated`` (see check_exposure), and for an unusable token.
    """
    check_exposure(host, auth_token, allow_unauthenticated)
    public_url = f"http://{'[' + host + ']' if ':' in host else host}:{port}"
    server = build_server(sandbox)
    app = server.streamable_http_app(
        streamable_http_path="/mcp",
        json_response=True,
        host=host,
        custom_starlette_routes=session_routes(sandbox, public_url)
        + play_routes(sandbox, play or PlayOptions())
        + front_routes(sandbox)
        + asset_routes(),
    )
    app.add_exception_handler(Exception, _internal_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_middleware(LegacyFrameCheck)  # 2025-era frames the SDK misreads get JSON-RPC's -32600
    app.add_middleware(BodyDeadline, seconds=body_timeout_s)  # only requests that passed the guards
    if auth_token:
        app.add_middleware(BearerAuth, token=auth_token)
    if is_loopback(host):
        app.add_middleware(LoopbackGuard, host=host, port=port)  # added last, so it runs first
    return app


@dataclass
class ServerThread:
    """Serve the HTTP API in a background thread (the runner and tests use this)."""

    corpus_path: str
    log_path: str
    host: str = "127.0.0.1"
    port: int = 0
    budget: int | None = 30
    max_turns: int | None = 20
    max_tokens: int | None = 200_000
    auth_token: str | None = None
    explore_budget: int | None = None
    play: PlayOptions | None = None  # for /play (server/play/routes.py)
    log_wait_s: float | None = None  # None: checkpoint.WRITE_WAIT_S
    header_timeout_s: float = HEADER_TIMEOUT_S
    keep_alive_s: float = KEEP_ALIVE_S
    body_timeout_s: float = BODY_TIMEOUT_S
    ended_kept: int | None = None  # None: sessions.ENDED_KEPT
    live_kept: int | None = None  # None: sessions.LIVE_KEPT

    def __post_init__(self):
        self._socket = bound_socket(
            self.host, self.port
        )  # held until uvicorn listens on it: no one else takes the port
        self.port = self._socket.getsockname()[1]
        try:
            self.log = CheckpointLog(
                self.log_path, **({} if self.log_wait_s is None else {"write_wait_s": self.log_wait_s})
            )
        except BaseException:
            self._socket.close()
            raise
        try:  # a server that cannot be built leaves no writer thread behind
            self.sandbox = make_sandbox(
                self.corpus_path,
                self.log,
                Caps(self.budget, self.max_turns, self.max_tokens),
                Caps(self.explore_budget, None, None),
            )
            if self.ended_kept is not None:
                self.sandbox.sessions.ended_kept = self.ended_kept
            if self.live_kept is not None:
                self.sandbox.sessions.live_kept = self.live_kept
            app = build_app(
                self.sandbox,
                host=self.host,
                port=self.port,
                auth_token=self.auth_token,
                play=self.play,
                body_timeout_s=self.body_timeout_s,
            )
        except BaseException:
            self.log.close()
            self._socket.close()
            raise
        config = uvicorn_config(
            app, self.host, self.port, header_timeout_s=self.header_timeout_s, keep_alive_s=self.keep_alive_s
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, args=([self._socket],), name="agenthop-http", daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> ServerThread:
        self._thread.start()
        # uvicorn sets .started once it is accepting connections.
        while not self._server.started:
            if not self._thread.is_alive():
                self.log.close()
                self._socket.close()
                raise RuntimeError(f"the AgentHop HTTP server failed to start on {self.base_url}")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        if self._thread.is_alive():
            log.error("the HTTP server thread did not stop within 10 s; leaving its log open")
            return
        self._socket.close()  # uvicorn closes it on shutdown; this covers a server that never served
        self.log.close()

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
