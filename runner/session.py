"""The server's HTTP session API (docs/http-api.md) and an MCP client bound to one session."""

from __future__ import annotations

import os
import ssl
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

import httpx2
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp_types import INVALID_PARAMS

from agenthop.server.tools import TOOLS

TOKEN_ENV = "AGENTHOP_AUTH_TOKEN"
ALL_TOOLS = tuple(TOOLS)


_SSL_CONTEXT: ssl.SSLContext | None = None


def shared_ssl_context() -> ssl.SSLContext:
    """One TLS context for every HTTP client: building one loads the CA store (~0.1 s each time)."""
    global _SSL_CONTEXT
    if _SSL_CONTEXT is None:
        _SSL_CONTEXT = ssl.create_default_context()
    return _SSL_CONTEXT


def http_client_factory(headers: dict | None = None, timeout=None, auth=None) -> httpx2.AsyncClient:
    """httpx2 clients for MCP connections (also the Agents SDK's ``httpx_client_factory``)."""
    return httpx2.AsyncClient(
        headers=headers,
        timeout=timeout if timeout is not None else httpx2.Timeout(60, read=300),
        auth=auth,
        verify=shared_ssl_context(),
        follow_redirects=True,
    )


class ServerError(Exception):
    """The sandbox server refused a request or could not be reached."""


@dataclass
class SessionInfo:
    session_id: str
    mcp_url: str
    headers: dict[str, str]
    item: str | None
    caps: dict
    disabled_tools: list[str] = field(default_factory=list)


@dataclass
class ToolResult:
    text: str
    structured: dict
    is_error: bool
    raw: Any = None  # the mcp CallToolResult, when the server produced this result

    @property
    def outcome(self) -> str | None:
        return self.structured.get("outcome")

    @property
    def ended(self) -> bool:
        return bool(self.structured.get("session_ended")) or self.outcome == "session_ended"

    @property
    def budget_used(self) -> int | None:
        return self.structured.get("budget_used")


class ServerAPI:
    """Creates and ends sessions over plain HTTP. One instance per run."""

    def __init__(self, base_url: str, auth_token: str | None = None, timeout: float = 30.0):
        self.base_url = base_url.rstrip("/")
        self.auth_token = auth_token if auth_token is not None else os.environ.get(TOKEN_ENV)
        headers = {"Authorization": f"Bearer {self.auth_token}"} if self.auth_token else {}
        self._http = httpx2.AsyncClient(
            base_url=self.base_url, headers=headers, timeout=timeout, verify=shared_ssl_context()
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _request(self, method: str, path: str, **kw) -> tuple[int, dict]:
        try:
            resp = await self._http.request(method, path, **kw)
        except httpx2.HTTPError as exc:
            raise ServerError(
                f"cannot reach the AgentHop server at {self.base_url}: {type(exc).__name__}: {exc}"
            ) from exc
        try:
            body = resp.json()
        except ValueError:
            body = {"error": resp.text[:300]}
        return resp.status_code, body

    async def health(self) -> dict:
        status, body = await self._request("GET", "/health")
        if status != 200:
            raise ServerError(f"GET /health answered {status}: {body.get('error', body)}")
        return body

    async def create_session(
        self, item: str | None, run: str, caps: dict, disabled_tools: list[str], client: dict
    ) -> SessionInfo:
        payload = {"item": item, "run": run, **caps, "disabled_tools": list(disabled_tools), "client": client}
        status, body = await self._request("POST", "/sessions", json=payload)
        if status != 201 and status != 200:
            raise ServerError(f"POST /sessions for item {item} answered {status}: {body.get('error', body)}")
        headers = dict(body.get("headers") or {})
        if self.auth_token:
            headers.setdefault("Authorization", f"Bearer {self.auth_token}")
        return SessionInfo(
            session_id=body["session_id"],
            mcp_url=body["mcp_url"],
            headers=headers,
            item=body.get("item"),
            caps=body.get("caps") or {},
            disabled_tools=list(body.get("disabled_tools") or []),
        )

    async def get_session(self, session_id: str) -> dict:
        status, body = await self._request("GET", f"/sessions/{session_id}")
        if status != 200:
            raise ServerError(f"GET /sessions/{session_id} answered {status}: {body.get('error', body)}")
        return body

    async def end_session(self, session_id: str, termination: str, reason: str = "") -> bool:
        """Report why the runner ended a session. False if the server had already ended it (409) or forgot it (404)."""
        status, body = await self._request(
            "POST", f"/sessions/{session_id}/end", json={"termination": termination, "reason": reason}
        )
        if status in (404, 409):
            return False
        if status != 200:
            raise ServerError(f"POST /sessions/{session_id}/end answered {status}: {body.get('error', body)}")
        return True


def prompt_text(prompt: Any) -> str:
    """The text of an MCP ``GetPromptResult`` (the ``research_task`` prompt), messages joined by blank lines."""
    parts = []
    for msg in prompt.messages:
        content = msg.content
        parts.append(
            getattr(content, "text", "")
            if not isinstance(content, list)
            else "\n".join(getattr(c, "text", "") for c in content)
        )
    return "\n\n".join(p for p in parts if p)


def result_text(result: Any) -> str:
    return "\n".join(getattr(b, "text", "") for b in (result.content or []) if getattr(b, "type", None) == "text")


def to_tool_result(result: Any) -> ToolResult:
    structured = result.structured_content if isinstance(getattr(result, "structured_content", None), dict) else {}
    return ToolResult(text=result_text(result), structured=dict(structured), is_error=bool(result.is_error), raw=result)


def refused_tool(exc: MCPError) -> ToolResult | None:
    """A call to a tool the session does not offer, which the server answers (and logs, free) as a JSON-RPC -32602
    carrying the usual structured content: the model gets that message as the tool's result, as for any refusal."""
    data = exc.error.data
    if exc.error.code != INVALID_PARAMS or not isinstance(data, dict) or data.get("outcome") != "invalid":
        return None
    return ToolResult(text=exc.error.message, structured=dict(data), is_error=True)


class _Borrowed(httpx2.AsyncBaseTransport):
    """A view of the run's shared transport that a session's client may close without closing the pool."""

    def __init__(self, inner: httpx2.AsyncBaseTransport):
        self.inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        pass


def compile_validator(schema: dict) -> Any:
    """A validator of ``schema``, built as the MCP SDK builds it (ClientSession._output_schema_validator)."""
    from jsonschema.validators import validator_for
    from referencing import Registry

    cls = validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, registry=Registry())


@dataclass
class Discovered:
    """What a run learns about its server once: the protocol it speaks and its tools' output schemas.

    The MCP SDK validates every result against its tool's output schema. For that it lists the
    tools on a session's first call and compiles one validator per tool per session (checking the
    schema against the JSON Schema 2020-12 metaschema: about 10 ms each), and the runner opens a
    session per item. The sessions of one run talk to one server, so the run compiles each schema
    once (``compile``, when it lists the tools) and every session adopts the result before its
    calls (``adopt``). Those per-session caches are the SDK's private attributes
    (ClientSession._tool_output_schemas and _tool_output_validators in mcp 2.3): if a later SDK
    renames them, sharing stops and only speed is lost.
    """

    version: str | None = None
    result: Any = None  # mcp.types.DiscoverResult
    output_schemas: dict = field(default_factory=dict)  # tool name -> output schema, as listed
    validators: dict = field(default_factory=dict)  # tool name -> compiled validator of that schema

    def compile(self, tools: list) -> None:
        """Compile the output schemas of a tool listing that this run has not compiled yet."""
        for tool in tools:
            schema = getattr(tool, "output_schema", None)
            if schema is not None and self.output_schemas.get(tool.name) != schema:
                self.validators[tool.name] = compile_validator(schema)
                self.output_schemas[tool.name] = schema

    def adopt(self, session: Any) -> None:
        """Give a ClientSession the schemas and validators the run has compiled."""
        schemas, validators = (
            getattr(session, "_tool_output_schemas", None),
            getattr(session, "_tool_output_validators", None),
        )
        if isinstance(schemas, dict) and isinstance(validators, dict) and len(validators) < len(self.validators):
            schemas.update(self.output_schemas)
            validators.update(self.validators)


class McpConnector:
    """What consecutive MCP sessions share: a keep-alive connection pool and the server's discover result.

    Sessions that follow one another (one worker's items) reuse the pool's connection instead
    of connecting anew, and the protocol probe (``server/discover``) runs once per run: later
    sessions adopt its result (``prior_discover``). Each session still gets its own client (its
    own headers) over the pool.
    """

    def __init__(self, timeout: float = 60.0, max_connections: int = 4, discovered: Discovered | None = None):
        self.timeout = timeout
        self._transport = httpx2.AsyncHTTPTransport(
            verify=shared_ssl_context(),
            limits=httpx2.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
        )
        self.discovered = discovered if discovered is not None else Discovered()

    def client(self, headers: dict | None = None, timeout=None, auth=None) -> httpx2.AsyncClient:
        """An httpx2 client over the shared pool (also the Agents SDK's ``httpx_client_factory``)."""
        return httpx2.AsyncClient(
            headers=headers,
            timeout=timeout if timeout is not None else httpx2.Timeout(self.timeout, read=max(self.timeout, 300)),
            auth=auth,
            transport=_Borrowed(self._transport),
            follow_redirects=True,
        )

    def session(self, info: SessionInfo) -> McpSession:
        return McpSession(info, timeout=self.timeout, connector=self)

    async def aclose(self) -> None:
        await self._transport.aclose()


class McpSession:
    """An MCP client connection for one sandbox session (async context manager)."""

    def __init__(self, info: SessionInfo, timeout: float = 60.0, connector: McpConnector | None = None):
        self.info = info
        self.timeout = timeout
        self.connector = connector
        self._stack: AsyncExitStack | None = None
        self.client: Client | None = None

    async def __aenter__(self) -> McpSession:
        stack = AsyncExitStack()
        try:
            make = self.connector.client if self.connector is not None else http_client_factory
            http = await stack.enter_async_context(
                make(self.info.headers, httpx2.Timeout(self.timeout, read=max(self.timeout, 300)))
            )
            known = self.connector.discovered if self.connector is not None else None
            mode = (
                {"mode": known.version, "prior_discover": known.result} if known is not None and known.version else {}
            )
            self.client = await stack.enter_async_context(
                Client(
                    streamable_http_client(self.info.mcp_url, http_client=http),
                    read_timeout_seconds=self.timeout,
                    **mode,
                )
            )
            session = self.client.session
            if known is not None and not known.version and session.discover_result is not None:
                known.version, known.result = session.protocol_version, session.discover_result
        except BaseException:
            await stack.aclose()
            raise
        self._stack = stack
        return self

    async def __aexit__(self, *exc) -> None:
        if self._stack is not None:
            await self._stack.aclose()

    def _connected(self) -> Client:
        """The MCP client, which ``async with`` connects: the session is used inside it."""
        assert self.client is not None, "use the session inside 'async with'"
        return self.client

    async def list_tools(self) -> list:
        tools = list((await self._connected().list_tools()).tools)
        if self.connector is not None:
            self.connector.discovered.compile(tools)
        return tools

    async def task_prompt(self) -> str:
        return prompt_text(await self._connected().get_prompt("research_task"))

    async def call_tool(self, name: str, arguments: dict, meta: dict | None = None) -> ToolResult:
        if self.connector is not None:
            self.connector.discovered.adopt(self._connected().session)
        try:
            # RequestParamsMeta is an open map (extra_items=Any), so any dict of str keys is one; the checker will
            # not take a dict for a TypedDict.
            return to_tool_result(await self._connected().call_tool(name, arguments, meta=meta))  # type: ignore[arg-type]
        except MCPError as exc:
            refused = refused_tool(exc)
            if refused is None:
                raise
            return refused
