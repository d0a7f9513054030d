"""The registered solver ``agenthop/agenthop_agent``: one metered AgentHop session per sample (the loop is in loop.py)."""

from __future__ import annotations

from pathlib import Path

from inspect_ai.solver import Generate, Solver, TaskState, solver


@solver
def agenthop_agent(
    corpus: str,
    log: str,
    run: str,
    caps: dict,
    disabled_tools: list[str],
    closed_book: bool = False,
    mcp_client: str = "agenthop",
) -> Solver:
    """Drive each sample through its own session on the eval's AgentHop server.

    ``caps``: {"budget", "max_turns", "max_tokens"} (None = unlimited); ``disabled_tools``: tool names;
    ``mcp_client``: "agenthop" (sends _meta) or "inspect" (Inspect's mcp_server_http).
    """
    # Imported here, not at the top: Inspect imports every extension on startup, and the loop pulls in MCP,
    # OpenAI and the server, which an eval of some other task should not pay for.
    from agenthop.inspect_task.loop import run_sample

    corpus_path, log_path = Path(corpus), Path(log)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        await run_sample(
            state,
            corpus=corpus_path,
            log=log_path,
            run=run,
            caps=caps,
            disabled_tools=disabled_tools,
            closed_book=closed_book,
            mcp_client=mcp_client,
        )
        return state

    return solve
