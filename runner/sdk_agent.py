"""The sdk agent: an OpenAI Agents SDK agent with the session attached as a Streamable HTTP MCP server.

- the model is ``OpenAIChatCompletionsModel`` over ``AsyncOpenAI(max_retries=0)``, wrapped so that
  transient API errors are retried in place (no turn used) with the runner's backoff;
- ``RunHooks.on_llm_end`` counts turns and tokens, writes turn records, and stops the run
  (``TokenLimitReached``) as soon as the token cap is passed, before that response's tool calls run;
- ``tool_meta_resolver`` sends ``agenthop/turn`` and ``agenthop/tokens`` with every call;
- ``StopAtTools(["submit_answer"])`` ends the run at submit; a session the server ended for budget
  stops the run before the next model call;
- a response with no tool calls ends an SDK run; the runner then continues the conversation with
  the same nudge as the raw loop (the turn is used), so both agents face the same rules; an empty
  response is nudged too, and a second one in a row ends the item as ``empty_response``;
- tool calls of one response run one at a time in emitted order (``max_function_tool_concurrency=1``).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from agents import (
    Agent,
    ModelSettings,
    OpenAIChatCompletionsModel,
    RunConfig,
    RunHooks,
    Runner,
    StopAtTools,
    ToolExecutionConfig,
    set_tracing_disabled,
)
from agents.exceptions import MaxTurnsExceeded
from agents.mcp import MCPServerStreamableHttp
from agents.models.interface import Model
from mcp.types import CallToolResult, TextContent
from openai import AsyncOpenAI, NotGiven, Omit
from openai.types.chat import ChatCompletion

from agenthop.llm.retry import CallStats, HardModelError, call_with_retry
from agenthop.llm.wire import portable_messages
from agenthop.runner.config import CLOSED_BOOK_USER_MESSAGE, NUDGE, RunSettings
from agenthop.runner.episode import Episode, SessionOver, TokenLimitReached
from agenthop.runner.raw_agent import parse_arguments, parse_letter
from agenthop.runner.session import (
    Discovered,
    SessionInfo,
    ToolResult,
    http_client_factory,
    prompt_text,
    to_tool_result,
)
from agenthop.server.task import FIRST_USER_MESSAGE


class RetryingModel(Model):
    """Delegates to a real model; retries transient API errors in place and keeps the call's stats."""

    def __init__(self, inner: Model, settings: RunSettings, ep_ref: EpisodeRef):
        self.inner = inner
        self.settings = settings
        self.ep_ref = ep_ref
        self.last_stats = CallStats()

    async def get_response(self, *args, **kwargs):
        if self.ep_ref.ep is not None and self.ep_ref.ep.ended:
            raise SessionOver()
        stats = CallStats()
        response = await call_with_retry(lambda: self.inner.get_response(*args, **kwargs), self.settings.retry, stats)
        self.last_stats = stats
        return response

    def stream_response(self, *args, **kwargs):
        return self.inner.stream_response(*args, **kwargs)

    async def close(self) -> None:
        await self.inner.close()


class PlainChatClient:
    """The run's OpenAI client as the Agents SDK sees it, with ``chat.completions.create`` posting its arguments as
    they are, as the raw agent does (``raw_agent.chat_completion``): the OpenAI SDK's ``create`` walks every message
    of the growing conversation to transform it (about 4% of the sdk agent's CPU at 8 workers), and the Agents SDK
    builds plain JSON dicts that need none. Its messages go out in the shapes every server accepts
    (``wire.portable_messages``): the Agents SDK's converter writes ``content: null`` beside tool calls and a tool
    result as a list of text parts, which OpenAI takes and llama.cpp's server refuses, and it has no setting or hook
    for the first (``RunConfig.call_model_input_filter`` sees the items before conversion). Streaming requests,
    which this agent does not make, go to the real ``create``. Everything else is the client's own."""

    def __init__(self, client: AsyncOpenAI):
        self._client = client
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))

    def __getattr__(self, name: str):
        return getattr(self._client, name)

    async def create(self, *, extra_headers=None, extra_query=None, extra_body=None, timeout=None, **params):
        if params.get("stream") is True:
            return await self._client.chat.completions.create(
                extra_headers=extra_headers, extra_query=extra_query, extra_body=extra_body, timeout=timeout, **params
            )
        body = {key: value for key, value in params.items() if not isinstance(value, (NotGiven, Omit))}
        if "messages" in body:
            body["messages"] = portable_messages(body["messages"])
        options = {"headers": extra_headers, "params": extra_query, "extra_json": extra_body, "timeout": timeout}
        options = {
            key: value for key, value in options.items() if value is not None and not isinstance(value, NotGiven)
        }
        return await self._client.post("/chat/completions", body=body, cast_to=ChatCompletion, options=options)


class EpisodeRef:
    ep: Episode | None = None


def _tool_error_message(ctx, error: Exception) -> str:
    """What the model sees when a call fails before reaching the server (e.g. arguments that are not JSON)."""
    return f"Error: {error}. The call was not executed and cost nothing; call the tool again with a JSON object of arguments."


class SessionMCPServer(MCPServerStreamableHttp):
    """The session's MCP server; every call goes through the Episode (gate, counters, ``_meta``)."""

    def __init__(
        self,
        info: SessionInfo,
        settings: RunSettings,
        ep_ref: EpisodeRef,
        http_factory=http_client_factory,
        discovered: Discovered | None = None,
        tool_lists: dict | None = None,
    ):
        self.ep_ref = ep_ref
        self.discovered = discovered if discovered is not None else Discovered()
        self.tool_lists = tool_lists if tool_lists is not None else {}
        self.tools_key = tuple(sorted(info.disabled_tools))
        super().__init__(
            {
                "url": info.mcp_url,
                "headers": dict(info.headers),
                "timeout": settings.mcp_timeout,
                "sse_read_timeout": 300,
                "httpx_client_factory": http_factory,
            },
            name="agenthop",
            cache_tools_list=True,
            client_session_timeout_seconds=max(30.0, settings.mcp_timeout),
            tool_meta_resolver=lambda ctx: ep_ref.ep.meta() if ep_ref.ep is not None else None,
            failure_error_function=_tool_error_message,
        )

    async def list_tools(self, *args, **kwargs):
        """The run's listing: every session of a run (with the same disabled tools) has the same tools, so one
        ``tools/list`` per run, as the raw agent does, instead of one per item."""
        tools = self.tool_lists.get(self.tools_key)
        if tools is None:
            tools = self.tool_lists[self.tools_key] = await super().list_tools(*args, **kwargs)
            self.discovered.compile(tools)  # every session adopts the compiled validators
        return tools

    async def issue(self, name: str, args: dict, meta: dict) -> ToolResult:
        if self.session is not None:
            self.discovered.adopt(self.session)
        return to_tool_result(await MCPServerStreamableHttp.call_tool(self, name, args, meta=meta))

    async def call_tool(
        self, tool_name: str, arguments: dict[str, Any] | None, meta: dict[str, Any] | None = None
    ) -> CallToolResult:
        ep = self.ep_ref.ep
        assert ep is not None  # the runner sets the episode before the agent runs
        result = await ep.tool(tool_name, dict(arguments or {}), meta=meta)
        if result.raw is not None:
            return result.raw
        return CallToolResult(
            content=[TextContent(type="text", text=result.text)],
            structured_content=result.structured,
            is_error=result.is_error,
        )


class Meter(RunHooks):
    def __init__(self, ep: Episode, model: RetryingModel):
        self.ep = ep
        self.model = model

    async def on_llm_start(self, context, agent, system_prompt, input_items) -> None:
        if self.ep.ended:
            raise SessionOver()

    async def on_llm_end(self, context, agent, response) -> None:
        usage = response.usage
        details = getattr(usage, "input_tokens_details", None)
        calls = [
            {
                "id": getattr(item, "call_id", None),
                "name": getattr(item, "name", None),
                "arguments": getattr(item, "arguments", None),
            }
            for item in response.output
            if getattr(item, "type", None) == "function_call"
        ]
        stats = self.model.last_stats
        malformed = [c for c in calls if parse_arguments(c["arguments"])[1] is not None]
        self.ep.start_turn(
            prompt_tokens=int(getattr(usage, "input_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "output_tokens", 0) or 0),
            cached_tokens=int(getattr(details, "cached_tokens", 0) or 0),
            tool_calls=calls,
            latency_ms=stats.latency_ms,
            retries=stats.retries,
            transient_errors=stats.errors,
        )
        for c in malformed:
            self.ep.note_error(f"malformed arguments for {c['name']} ({c['id']}): {parse_arguments(c['arguments'])[1]}")
        if self.ep.over_tokens:
            self.ep.note_error(
                f"token cap passed ({self.ep.cumulative} > {self.ep.caps.max_tokens}); {len(calls)} tool call(s) discarded"
            )
            raise TokenLimitReached()


def _unwrap(exc: BaseException | None) -> BaseException | None:
    """The first of the runner's own endings in ``exc``'s chain of causes, or None."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, (TokenLimitReached, SessionOver, HardModelError, MaxTurnsExceeded)):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def _final_text(output) -> str:
    if output is None:
        return ""
    if isinstance(output, str):
        return output
    if isinstance(output, dict):
        return str(output.get("text", ""))
    return str(output)


async def run_sdk(ep: Episode, server: SessionMCPServer, model: RetryingModel, settings: RunSettings) -> str | None:
    """Drive one session (the server is connected). Returns token_limit/max_turns, or None when the server ended it."""
    set_tracing_disabled(not settings.trace)
    instructions = prompt_text(await server.get_prompt("research_task"))
    agent = Agent(
        name="agenthop-sdk",
        instructions=instructions,
        model=model,
        mcp_servers=[server],
        mcp_config={"convert_schemas_to_strict": False},
        # The run's sampling fields, the same body fields the raw agent sends (nothing unless set, but the cap).
        model_settings=ModelSettings(extra_args=settings.sampling.body(settings.model) or None),
        tool_use_behavior=StopAtTools(stop_at_tool_names=["submit_answer"]),
    )
    run_config = RunConfig(
        tracing_disabled=not settings.trace,
        tool_execution=ToolExecutionConfig(max_function_tool_concurrency=1),
    )
    hooks = Meter(ep, model)
    max_turns = 1 if settings.closed_book else settings.caps.max_turns
    run_input: Any = CLOSED_BOOK_USER_MESSAGE if settings.closed_book else FIRST_USER_MESSAGE
    empty_turn: int | None = None  # the turn of the last empty response
    while True:
        remaining = 10**9 if max_turns is None else max_turns - ep.turn
        if remaining <= 0:
            return "max_turns"
        try:
            result = await Runner.run(agent, run_input, max_turns=remaining, hooks=hooks, run_config=run_config)
        except Exception as exc:  # noqa: BLE001 - sorted by _unwrap
            inner = _unwrap(exc)
            if isinstance(inner, TokenLimitReached):
                return "token_limit"
            if isinstance(inner, SessionOver) or ep.ended:
                return None
            if isinstance(inner, MaxTurnsExceeded):
                return "max_turns"
            if isinstance(inner, HardModelError):
                raise inner from exc
            raise
        if ep.ended:
            return None
        text = _final_text(result.final_output)
        if not text.strip():
            # Nudged like a text reply; a second empty response in a row (no call in between) ends the item.
            if empty_turn is not None and empty_turn == ep.turn - 1:
                ep.note_error("empty response again after the nudge: no text and no tool calls")
                return "empty_response"
            ep.note_error("empty response: no text and no tool calls; nudged")
            empty_turn = ep.turn
        if settings.closed_book:
            letter = parse_letter(text)
            if letter is not None:
                await ep.call("submit_answer", {"answer": letter, "reasoning": text[:4000]}, forced=True)
            return None if ep.ended else "max_turns"
        run_input = result.to_input_list() + [{"role": "user", "content": NUDGE}]


def make_sdk_parts(
    info: SessionInfo,
    settings: RunSettings,
    client: AsyncOpenAI,
    http_factory=http_client_factory,
    discovered: Discovered | None = None,
    tool_lists: dict | None = None,
) -> tuple[SessionMCPServer, RetryingModel, EpisodeRef]:
    """``http_factory`` builds the MCP connection's httpx2 client (the runner's shares one connection pool);
    ``discovered`` is what the run learnt about its server (its compiled output-schema validators);
    ``tool_lists`` holds the run's tool listings, by disabled tools (``Orchestrator.tool_lists``)."""
    ref = EpisodeRef()
    server = SessionMCPServer(info, settings, ref, http_factory, discovered, tool_lists)
    model = RetryingModel(
        # PlainChatClient stands in for AsyncOpenAI (it forwards every attribute but chat.completions.create to one);
        # the SDK's annotation names the class, not the methods it uses.
        OpenAIChatCompletionsModel(model=settings.model, openai_client=PlainChatClient(client)),  # type: ignore[arg-type]
        settings,
        ref,
    )
    return server, model, ref
