"""agenthop-cli: take a benchmark item from a terminal, one command per tool call.

For agents that only have a shell (a coding agent) and for a person at a terminal. ``start ITEM`` creates a
session on a running HTTP server (``agenthop-server serve --transport http``) and prints the task; ``tools ITEM``
lists the tools; ``call ITEM TOOL JSON`` makes one tool call, which counts as one turn (sent as
``agenthop/turn``), metered and logged by the server like any MCP client's. Between commands the session lives
in a small state file per item (``--state``, default ``.agenthop-cli/``): its ID, URL and turn count, never a
token. The scorer then scores the run label (``--run``) like any other.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import click
import httpx2
from mcp import MCPError

from agenthop.runner.session import ALL_TOOLS, McpSession, ServerAPI, ServerError
from agenthop.runner.shell.state import StateError, load, save, session_info, state_path

SERVER_ENV = "AGENTHOP_SERVER"
STATE_ENV = "AGENTHOP_CLI_STATE"
DEFAULT_SERVER = "http://127.0.0.1:8765"
DEFAULT_RUN = "agenthop-cli"
TOOL_ERROR_EXIT = 2  # the call was made (and metered) but the tool refused or failed; 1 is reserved for no call


class CliError(click.ClickException):
    """A problem that stopped the command before any tool call was made."""


def _state_path(state: Path, item: str) -> Path:
    try:
        return state_path(state, item)
    except StateError as exc:
        raise CliError(str(exc)) from None


def _load(state: Path, item: str) -> dict:
    try:
        return load(state, item)
    except StateError as exc:
        raise CliError(str(exc)) from None


def _save(state: Path, item: str, record: dict) -> None:
    save(state, item, record)


class Unreachable(CliError):
    """The server did not answer; ``sent`` is False when the request never left (the connection was refused)."""

    def __init__(self, message: str, sent: bool):
        super().__init__(message)
        self.sent = sent


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside the exception groups the MCP client's task groups wrap errors in."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _run(coro, server: str):
    try:
        return asyncio.run(coro)
    except ServerError as exc:
        raise CliError(str(exc)) from None
    except (OSError, httpx2.HTTPError, MCPError, BaseExceptionGroup) as exc:
        leaf = _leaf(exc)
        if isinstance(leaf, ServerError):
            raise CliError(str(leaf)) from None
        sent = not isinstance(leaf, httpx2.ConnectError | ConnectionRefusedError)
        raise Unreachable(
            f"the AgentHop server at {server} did not answer ({type(leaf).__name__}: {leaf}); is it running?", sent
        ) from None


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.option(
    "--state",
    type=click.Path(file_okay=False, path_type=Path),
    envvar=STATE_ENV,
    default=".agenthop-cli",
    show_default=True,
    help=f"Folder of the per-item session files (or ${STATE_ENV}).",
)
@click.pass_context
def main(ctx, state: Path):
    """Take an AgentHop item from a terminal: one command per tool call, each call one turn.

    \b
    agenthop-server serve --transport http --corpus corpus.sqlite --log runs/cli/server-log.sqlite &
    agenthop-cli start st_0001 --run my-agent     # prints the task: seed paper, question, options
    agenthop-cli tools st_0001                    # the tools, their costs and arguments
    agenthop-cli call st_0001 get_references '{"paper_id": "..."}'
    agenthop-cli call st_0001 submit_answer '{"answer": "B", "reasoning": "..."}'
    agenthop-scorer runs/cli/server-log.sqlite::my-agent --corpus corpus.sqlite --out report/my-agent

    The bearer token, if the server wants one, is read from $AGENTHOP_AUTH_TOKEN and never written to disk.
    Exit codes: 0 the call succeeded; 2 the call was made (and counted) but the tool refused it or failed;
    1 no call was made (no session, bad JSON, the server refused the connection); a call whose answer was lost
    on the way back (the server received it) keeps its turn number, so no turn is numbered twice.
    """
    ctx.obj = state


@main.command()
@click.argument("item")
@click.option(
    "--server",
    envvar=SERVER_ENV,
    default=DEFAULT_SERVER,
    show_default=True,
    help=f"The running server's base URL (or ${SERVER_ENV}).",
)
@click.option(
    "--run", "run_label", default=DEFAULT_RUN, show_default=True, help="Run label the scorer selects the run by."
)
@click.option("--model", default=None, help="The model (or person) taking the item, recorded with the session.")
@click.option("--new", is_flag=True, help="Start a new session even if this item has one in --state.")
@click.option(
    "--closed-book",
    is_flag=True,
    help="No tools but submit_answer and one turn, as the runner's --closed-book: answer from what you know.",
)
@click.pass_obj
def start(state: Path, item: str, server: str, run_label: str, model: str | None, new: bool, closed_book: bool):
    """Create a session for ITEM and print its task (seed paper, question, options, tools, limits)."""
    path = _state_path(state, item)
    if path.exists() and not new:
        old = _load(state, item)
        raise CliError(
            f"item {item} already has session {old['session_id']} (run {old['run']!r}, {old['turn']} turns) in "
            f"{path}; go on with 'agenthop-cli call {item} ...', or pass --new to start another"
        )

    async def go() -> tuple[dict, str]:
        api = ServerAPI(server)
        try:
            client = {"name": "agenthop-cli", **({"model": model} if model else {})}
            caps, disabled = (
                ({"max_turns": 1}, [t for t in ALL_TOOLS if t != "submit_answer"]) if closed_book else ({}, [])
            )
            info = await api.create_session(item, run_label, caps, disabled, client)
        finally:
            await api.aclose()
        async with McpSession(info) as mcp:
            task = await mcp.task_prompt()
        record = {
            "item": item,
            "server": server.rstrip("/"),
            "run": run_label,
            "session_id": info.session_id,
            "mcp_url": info.mcp_url,
            "caps": info.caps,
            "turn": 0,
        }
        return record, task

    record, task = _run(go(), server)
    _save(state, item, record)
    click.echo(task)
    click.echo(f"\n[session {record['session_id']} for item {item}, run {run_label!r}; state in {path}]", err=True)


@main.command()
@click.argument("item")
@click.pass_obj
def tools(state: Path, item: str):
    """List the tools of ITEM's session: name, cost, what it does, its arguments as JSON Schema. Costs nothing."""
    record = _load(state, item)

    async def go() -> list:
        async with McpSession(session_info(record)) as mcp:
            return await mcp.list_tools()

    for tool in _run(go(), record["server"]):
        click.echo(f"{tool.name}: {tool.description}")
        click.echo(f"  arguments: {json.dumps(tool.input_schema.get('properties', {}), ensure_ascii=False)}")
        required = tool.input_schema.get("required") or []
        click.echo(f"  required: {', '.join(required) if required else 'none'}")


@main.command()
@click.argument("item")
@click.argument("tool")
@click.argument("arguments", default="{}")
@click.pass_obj
def call(state: Path, item: str, tool: str, arguments: str):
    """Call TOOL in ITEM's session with ARGUMENTS (a JSON object); one call is one turn. Prints the result."""
    record = _load(state, item)
    try:
        args = json.loads(arguments)
    except ValueError as exc:
        raise CliError(f'ARGUMENTS must be a JSON object, e.g. \'{{"paper_id": "..."}}\'; {exc}') from None
    if not isinstance(args, dict):
        raise CliError(f"ARGUMENTS must be a JSON object, not {type(args).__name__}: {arguments!r}")
    # The turn is counted before the call is sent: a call the server received is never numbered twice.
    record["turn"] += 1
    _save(state, item, record)

    async def go():
        async with McpSession(session_info(record)) as mcp:
            return await mcp.call_tool(tool, args, meta={"agenthop/turn": record["turn"]})

    try:
        result = _run(go(), record["server"])
    except Unreachable as exc:
        if not exc.sent:  # the call never reached the server: its turn number is free again
            record["turn"] -= 1
            _save(state, item, record)
        raise
    if result.ended:
        record["ended"] = True
        _save(state, item, record)
    click.echo(result.text)
    if result.is_error:
        sys.exit(TOOL_ERROR_EXIT)


@main.command()
@click.argument("item")
@click.option(
    "--termination",
    type=click.Choice(["abandoned", "max_turns", "token_limit", "error"]),
    default="abandoned",
    show_default=True,
    help="Why the session ended, as the scorer reports it.",
)
@click.option("--reason", default="ended from agenthop-cli", show_default=True, help="A note kept in the log.")
@click.pass_obj
def end(state: Path, item: str, termination: str, reason: str):
    """End ITEM's session without an answer (submit_answer ends it with one)."""
    record = _load(state, item)

    async def go() -> bool:
        api = ServerAPI(record["server"])
        try:
            return await api.end_session(record["session_id"], termination, reason)
        finally:
            await api.aclose()

    ended = _run(go(), record["server"])
    record["ended"] = True
    _save(state, item, record)
    click.echo(f"session {record['session_id']} ended ({termination})" if ended else "the session had already ended")


if __name__ == "__main__":
    main()
