"""The raw agent: an OpenAI-compatible chat-completions loop over the session's MCP tools.

Turn = one model response. The token cap is checked after each response and
before its tool calls run (calls of a response that passes the cap are
discarded); the turn cap allows at most ``max_turns`` responses. Parallel tool
calls of one response run one after another in emitted order. A response with
no tool calls gets a nudge (and uses its turn), an empty one too (no text, no
tool calls: small local models send them); a second empty response in a row
ends the item as ``empty_response``.
Malformed arguments (not a JSON object) are answered with a tool error
message and never reach the server, so they cost nothing. With text tools
(``--text-tools``) the calls are read from the reply's text instead.
"""

from __future__ import annotations

import functools
import json
import re
from typing import TypedDict

from openai import AsyncOpenAI
from openai.types.chat import ChatCompletion, ChatCompletionMessageFunctionToolCall, ChatCompletionMessageToolCallUnion
from openai.types.chat.chat_completion_message_function_tool_call import Function

from agenthop.llm.retry import CallStats, HardModelError, call_with_retry
from agenthop.runner.config import CLOSED_BOOK_USER_MESSAGE, NUDGE, RunSettings
from agenthop.runner.episode import Episode
from agenthop.runner.session import McpSession
from agenthop.runner.text_tools import malformed_text_message, parse_tool_calls, results_message, tools_block
from agenthop.server.task import FIRST_USER_MESSAGE


def make_client(settings: RunSettings, max_connections: int | None = None) -> AsyncOpenAI:
    """The model API client (no SDK retries: the runner retries). ``max_connections``: the pool's size
    (default: enough for every worker of the run)."""
    import httpx2

    from agenthop.runner.session import shared_ssl_context

    http = httpx2.AsyncClient(
        timeout=httpx2.Timeout(settings.retry.timeout, connect=min(10.0, settings.retry.timeout)),
        limits=httpx2.Limits(
            max_connections=max_connections or max(100, 2 * settings.workers),
            max_keepalive_connections=max_connections or max(20, settings.workers),
        ),
        verify=shared_ssl_context(),
        follow_redirects=True,
    )
    return AsyncOpenAI(
        base_url=settings.base_url,
        api_key=settings.api_key(),
        max_retries=0,
        timeout=settings.retry.timeout,
        http_client=http,
    )


def openai_tools(mcp_tools: list) -> list[dict]:
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description or "",
                "parameters": t.input_schema or {"type": "object", "properties": {}},
            },
        }
        for t in mcp_tools
    ]


class EmittedCall(TypedDict):
    """A tool call as the model emitted it (the turn record's ``tool_calls``)."""

    id: str
    name: str
    arguments: str | dict | None  # JSON text as sent; a text-mode call's parsed arguments, or its text if malformed


def _function(call: ChatCompletionMessageToolCallUnion) -> Function:
    """The function a tool call names. A custom tool call has none: AttributeError, as reading it would raise (the
    response is then malformed: this agent offers only function tools)."""
    if not isinstance(call, ChatCompletionMessageFunctionToolCall):
        raise AttributeError(f"'{type(call).__name__}' object has no attribute 'function'")
    return call.function


def parse_arguments(raw) -> tuple[dict | None, str | None]:
    """(arguments, None) or (None, why they are unusable)."""
    if isinstance(raw, dict):
        return raw, None
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}, None
    try:
        value = json.loads(raw)
    except (TypeError, json.JSONDecodeError) as exc:
        return None, f"not valid JSON ({exc})"
    if not isinstance(value, dict):
        return None, f"a JSON {type(value).__name__}, not an object"
    return value, None


def malformed_message(name: str, raw, why: str) -> str:
    return (
        f"Error: the arguments of your {name} call are {why}: {str(raw)[:300]!r}. The call was not executed and cost "
        f"nothing. Call {name} again with a JSON object of arguments."
    )


_LETTER_PATTERNS = (
    re.compile(r"\b(?:answer|option|choice)\s*(?:is|:|=)?\s*\(?\**([ABCD])\b", re.I),
    re.compile(r"^\s*\(?\**([ABCD])\**\)?\s*[.:)]?\s*$", re.M),
    re.compile(r"\(([ABCD])\)"),
)


def parse_letter(text: str) -> str | None:
    for pattern in _LETTER_PATTERNS:
        m = pattern.search(text or "")
        if m:
            return m.group(1).upper()
    return None


def _usage(resp) -> tuple[int, int, int]:
    usage = getattr(resp, "usage", None)
    if usage is None:
        return 0, 0, 0
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) or 0
    return int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0), int(cached)


async def chat_completion(client: AsyncOpenAI, body: dict) -> ChatCompletion:
    """POST /chat/completions with ``body`` as is: the SDK's ``create`` walks every message of the growing
    conversation to transform it, which costs more CPU than the request; our messages need no transform."""
    return await client.post("/chat/completions", body=body, cast_to=ChatCompletion)


async def run_raw(
    ep: Episode, mcp: McpSession, client: AsyncOpenAI, settings: RunSettings, tools: list | None = None
) -> str | None:
    """Drive one session. Returns the runner-side termination (token_limit, max_turns) or None when the server ended it.

    ``tools``: the session's MCP tools when the caller already listed them (every session of a run has the same).
    With ``settings.text_tools`` the tools are described in the system prompt and the calls read from the reply's
    text (runner/text_tools.py); everything else (turns, caps, metering, records) is the same."""
    prompt = await mcp.task_prompt()
    mcp_tools = tools if tools is not None else await mcp.list_tools()
    text_mode = settings.text_tools
    known = {t.name for t in mcp_tools}
    specs = [] if text_mode else openai_tools(mcp_tools)
    system = prompt + tools_block(mcp_tools) if text_mode and mcp_tools else prompt
    first = CLOSED_BOOK_USER_MESSAGE if settings.closed_book else FIRST_USER_MESSAGE
    messages: list[dict] = [{"role": "system", "content": system}, {"role": "user", "content": first}]
    max_turns = 1 if settings.closed_book else settings.caps.max_turns
    sampling = settings.sampling.body(settings.model)
    empty_before = False  # the last response was empty (and nudged): a second one in a row ends the item
    while not ep.ended:
        if max_turns is not None and ep.turn >= max_turns:
            return "max_turns"
        stats = CallStats()
        kwargs = {"model": settings.model, "messages": messages, **sampling}
        if specs:
            kwargs["tools"] = specs
        resp = await call_with_retry(functools.partial(chat_completion, client, kwargs), settings.retry, stats)
        try:
            message = resp.choices[0].message
            text = message.content or ""
            if text_mode:
                parsed = parse_tool_calls(text, known)
                emitted: list[EmittedCall] = [
                    {
                        "id": f"text_{ep.turn + 1}_{i}",
                        "name": c.name,
                        "arguments": c.arguments if c.problem is None else c.raw,
                    }
                    for i, c in enumerate(parsed)
                ]
            else:
                emitted = [
                    {
                        "id": tc.id or f"call_{ep.turn + 1}_{i}",
                        "name": _function(tc).name,
                        "arguments": _function(tc).arguments,
                    }
                    for i, tc in enumerate(message.tool_calls or [])
                ]
            prompt_tokens, completion_tokens, cached = _usage(resp)
        except (AttributeError, IndexError, TypeError) as exc:
            raise HardModelError(
                f"malformed chat-completions response ({type(exc).__name__}: {exc}): {str(resp)[:200]}", stats.retries
            ) from exc
        ep.start_turn(
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cached_tokens=cached,
            tool_calls=emitted,
            latency_ms=stats.latency_ms,
            retries=stats.retries,
            transient_errors=stats.errors,
        )
        if ep.over_tokens:
            ep.note_error(
                f"token cap passed ({ep.cumulative} > {settings.caps.max_tokens}); {len(emitted)} tool call(s) discarded"
            )
            return "token_limit"
        if not emitted:
            if not text.strip():
                if empty_before:
                    ep.note_error("empty response again after the nudge: no text and no tool calls")
                    return "empty_response"
                ep.note_error("empty response: no text and no tool calls; nudged")
            empty_before = not text.strip()
            messages.append({"role": "assistant", "content": text})
            if settings.closed_book:
                letter = parse_letter(text)
                if letter is not None:
                    await ep.call("submit_answer", {"answer": letter, "reasoning": text[:4000]}, forced=True)
                    continue
            messages.append({"role": "user", "content": NUDGE})
            continue
        empty_before = False
        if text_mode:
            messages.append({"role": "assistant", "content": text})
            results = []
            for call in parsed:
                if call.problem is not None:
                    ep.note_error(f"malformed text tool call {call.name}: {call.problem}")
                    content = malformed_text_message(call)
                else:
                    assert call.arguments is not None  # a call read without a problem has its arguments
                    content = (await ep.tool(call.name, call.arguments)).text
                results.append((call.name, content))
                if ep.ended:
                    break
            messages.append(results_message(results))
            continue
        messages.append(
            {
                "role": "assistant",
                "content": text,  # "" rather than null beside tool_calls: every server accepts it (llm/wire.py)
                "tool_calls": [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {"name": c["name"], "arguments": c["arguments"] or "{}"},
                    }
                    for c in emitted
                ],
            }
        )
        for sent in emitted:
            args, why = parse_arguments(sent["arguments"])
            if why is not None:
                ep.note_error(f"malformed arguments for {sent['name']} ({sent['id']}): {why}")
                content = malformed_message(sent["name"], sent["arguments"], why)
            else:
                assert args is not None  # parse_arguments gives the arguments or why there are none
                content = (await ep.tool(sent["name"], args)).text
            messages.append({"role": "tool", "tool_call_id": sent["id"], "content": content})
            if ep.ended:
                break
    return None
