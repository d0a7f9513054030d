"""The session's seven tools as Inspect tools, every call a ``tools/call`` over MCP to the AgentHop server.

Two MCP clients are offered (task option ``mcp_client``):

* ``agenthop`` (default): the MCP SDK client the runner uses (``McpSession``). Each
  call carries ``_meta`` with the turn number and the cumulative tokens, so the
  checkpoint log holds them and the scorer can measure tokens, turns and calls per
  turn.
* ``inspect``: Inspect's own ``mcp_server_http``. Its client calls ``call_tool``
  without ``_meta`` (inspect_ai/tool/_mcp/_local.py), so the server never learns
  turns or tokens and the scorer reports them as not measured.

Either way the tool list, descriptions and input schemas are the server's
(``tools/list``), converted the way Inspect converts any MCP tool, and an error
result (``isError``) reaches the model as an Inspect tool error.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from inspect_ai.model import ModelUsage
from inspect_ai.tool import Tool, ToolDef, ToolError, ToolParams, mcp_connection, mcp_server_http

from agenthop.runner.session import McpSession, SessionInfo
from agenthop.server.sessions import META_FORCED, META_TOKENS, META_TURN


@dataclass
class TurnCounter:
    """Turns and tokens of one sample, counted as the runner counts them (SPEC 4.3)."""

    send_counts: bool = True  # False when the model's calls go through a client that cannot send _meta
    turn: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0

    @property
    def cumulative(self) -> int:
        """Prompt plus completion tokens over all turns so far, cached prompt tokens included."""
        return self.prompt_tokens + self.completion_tokens

    def count(self, usage: ModelUsage | None) -> None:
        """One model response: a new turn and its tokens (Inspect's input_tokens exclude cache reads and writes)."""
        self.turn += 1
        if usage is None:
            return
        cache_read = usage.input_tokens_cache_read or 0
        self.prompt_tokens += usage.input_tokens + cache_read + (usage.input_tokens_cache_write or 0)
        self.completion_tokens += usage.output_tokens
        self.cached_tokens += cache_read

    def meta(self, forced: bool = False) -> dict:
        meta: dict = {META_TURN: self.turn, META_TOKENS: self.cumulative} if self.send_counts else {}
        if forced:
            meta[META_FORCED] = True
        return meta


def _tool_def(mcp: McpSession, tool, counter: TurnCounter) -> ToolDef:
    name = tool.name

    async def execute(**arguments) -> str:
        result = await mcp.call_tool(name, arguments, meta=counter.meta())
        if result.is_error:
            raise ToolError(result.text)
        return result.text

    parameters = ToolParams.model_validate(tool.input_schema or {"type": "object", "properties": {}})
    for param_name, param in parameters.properties.items():
        param.description = param.description or param_name
    # max_output=0: never truncate. A read_section result is a whole section the session paid 5 points for.
    return ToolDef(execute, name=name, description=tool.description or name, parameters=parameters, max_output=0)


@asynccontextmanager
async def session_tools(
    client: str, mcp: McpSession, info: SessionInfo, counter: TurnCounter
) -> AsyncIterator[list[Tool]]:
    """The tools of the session ``info`` as Inspect tools, through the chosen MCP client, connected for the block."""
    if client == "agenthop":
        yield [_tool_def(mcp, t, counter).as_tool() for t in await mcp.list_tools()]
        return
    server = mcp_server_http(name="agenthop", url=info.mcp_url, headers=info.headers)
    async with mcp_connection([server]):
        yield await server.tools()
