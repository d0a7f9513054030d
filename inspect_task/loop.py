"""The agent loop of one sample: an AgentHop session on the eval's server, the runner's messages, the session's caps.

(The registered solver, solver.py, imports this module only when a task is built:
Inspect loads every extension at startup, and this one pulls in MCP, OpenAI and the server.)

It follows the runner's raw agent (runner/raw_agent.py) so that an Inspect run and
a runner run of the same model are the same experiment:

* system message: the server's ``research_task`` prompt for the session; first user
  message: the runner's (the closed-book one under that ablation);
* a turn is one model response; the turn cap allows at most ``max_turns``
  responses; the token cap is checked after each response, before its tool calls
  (which are then not executed); a response without tool calls gets the runner's
  nudge and uses its turn; under closed book a letter in the text is submitted for
  the model (a ``forced`` call);
* the sample ends when the session ends (answer, or the budget: the server decides)
  or when a cap is reached (the solver tells the server why).

An Inspect limit (``--token-limit``, ``--message-limit``, ``--time-limit`` ...) or an
error also ends the session, with the matching termination, before Inspect records it.
"""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

import anyio
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, execute_tools, get_model
from inspect_ai.solver import TaskState
from inspect_ai.util import LimitExceededError

import agenthop
from agenthop.inspect_task.record import AgentHopSession
from agenthop.inspect_task.servers import server_url
from agenthop.inspect_task.tools import TurnCounter, session_tools
from agenthop.runner.config import CLOSED_BOOK_USER_MESSAGE, NUDGE
from agenthop.runner.raw_agent import parse_letter
from agenthop.runner.session import McpSession, ServerAPI, SessionInfo
from agenthop.server.task import FIRST_USER_MESSAGE

# Inspect limit type -> the termination the server records (the server accepts token_limit, max_turns, error, abandoned).
LIMIT_TERMINATIONS = {"token": "token_limit", "turn": "max_turns", "message": "max_turns"}


def epoch_label(run: str, epoch: int) -> str:
    """Epoch 1 is the run itself; each further epoch is a run of its own, so no epoch hides another in the scorer."""
    return run if epoch <= 1 else f"{run}-epoch{epoch}"


async def run_sample(
    state: TaskState,
    *,
    corpus: Path,
    log: Path,
    run: str,
    caps: dict,
    disabled_tools: list[str],
    closed_book: bool,
    mcp_client: str,
) -> None:
    """One metered AgentHop session for the sample: create it, drive it, end it, keep its final state in the store."""
    base_url = await anyio.to_thread.run_sync(server_url, corpus, log)
    record = state.store_as(AgentHopSession)
    record.checkpoint_log, record.mcp_client = str(log), mcp_client
    counter = TurnCounter(send_counts=mcp_client == "agenthop")
    label = epoch_label(run, state.epoch)
    api = ServerAPI(base_url)
    try:
        info = await api.create_session(
            str(state.sample_id), label, caps, disabled_tools, _client_info(state, mcp_client)
        )
        record.run, record.session_id = label, info.session_id
        termination: str | None = "abandoned"  # None: the session ended on its own (answer or budget)
        reason = "the sample was cancelled before its session ended"
        try:
            ending = await _run_session(state, info, counter, closed_book, mcp_client, api)
            termination, reason = ending if ending is not None else (None, "")
        except LimitExceededError as exc:
            termination, reason = (
                LIMIT_TERMINATIONS.get(exc.type, "abandoned"),
                f"Inspect {exc.type} limit: {exc.message}",
            )
            raise
        except Exception as exc:
            termination, reason = "error", f"{type(exc).__name__}: {exc}"
            raise
        finally:
            with anyio.CancelScope(shield=True):
                await _settle(api, info, termination, reason, record, counter)
    finally:
        with anyio.CancelScope(shield=True):
            await api.aclose()


def _client_info(state: TaskState, mcp_client: str) -> dict:
    """The session_start ``client`` record: who drove the session, for which sample (the join key to the Inspect log)."""
    return {
        "name": "inspect_ai",
        "version": version("inspect_ai"),
        "agenthop": agenthop.__version__,
        "model": str(state.model),
        "sample_id": state.sample_id,
        "epoch": state.epoch,
        "mcp_client": mcp_client,
    }


async def _run_session(
    state: TaskState, info: SessionInfo, counter: TurnCounter, closed_book: bool, mcp_client: str, api: ServerAPI
) -> tuple[str, str] | None:
    """Drive the session; (termination, reason) when a cap ended it here, None when the server ended it."""
    async with McpSession(info) as mcp:
        system = await mcp.task_prompt()
        first = CLOSED_BOOK_USER_MESSAGE if closed_book else FIRST_USER_MESSAGE
        state.messages = [ChatMessageSystem(content=system), ChatMessageUser(content=first)]
        async with session_tools(mcp_client, mcp, info, counter) as tools:
            state.tools = tools
            return await _loop(state, info, counter, closed_book, mcp, api)


async def _loop(
    state: TaskState, info: SessionInfo, counter: TurnCounter, closed_book: bool, mcp: McpSession, api: ServerAPI
) -> tuple[str, str] | None:
    max_turns, max_tokens = info.caps.get("max_turns"), info.caps.get("max_tokens")
    model = get_model()
    while True:
        if max_turns is not None and counter.turn >= max_turns:
            return "max_turns", f"{counter.turn} turns, cap {max_turns}"
        output = await model.generate(state.messages, state.tools)
        counter.count(output.usage)
        state.output = output
        state.messages.append(output.message)
        if max_tokens is not None and counter.cumulative > max_tokens:
            calls = len(output.message.tool_calls or [])
            return "token_limit", f"{counter.cumulative} tokens > cap {max_tokens}; {calls} tool call(s) discarded"
        if output.message.tool_calls:
            result = await execute_tools(state.messages, state.tools)
            state.messages.extend(result.messages)
        elif closed_book and (letter := parse_letter(output.completion)) is not None:
            await mcp.call_tool(
                "submit_answer",
                {"answer": letter, "reasoning": output.completion[:4000]},
                meta=counter.meta(forced=True),
            )
        else:
            state.messages.append(ChatMessageUser(content=NUDGE))
            continue
        if (await api.get_session(info.session_id)).get("ended"):
            return None


async def _settle(
    api: ServerAPI,
    info: SessionInfo,
    termination: str | None,
    reason: str,
    record: AgentHopSession,
    counter: TurnCounter,
) -> None:
    """Tell the server why the session ended (unless it ended it itself) and keep its final state in the store."""
    if termination is not None:
        await api.end_session(info.session_id, termination, reason[:1900])  # False: the server had ended it first
    final = await api.get_session(info.session_id)
    if not final.get("ended"):
        await api.end_session(info.session_id, "abandoned", "the solver stopped without an ending")
        final = await api.get_session(info.session_id)
    record.termination = final.get("termination")
    record.answer = final.get("answer")
    record.budget_used = final.get("budget_used")
    record.turns = counter.turn
    record.prompt_tokens, record.completion_tokens, record.cached_tokens = (
        counter.prompt_tokens,
        counter.completion_tokens,
        counter.cached_tokens,
    )
