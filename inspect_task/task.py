"""The ``agenthop/agenthop`` Inspect task and its options (``-T name=value``; docs/inspect.md)."""

from __future__ import annotations

from pathlib import Path

from inspect_ai import Task, task

from agenthop.inspect_task.scorer import agenthop_answer
from agenthop.inspect_task.solver import agenthop_agent


@task
def agenthop(
    items: str = "splits/demo.jsonl",
    corpus: str = "corpus.sqlite",
    log: str = "logs/agenthop-log.sqlite",  # beside Inspect's own default log directory
    run: str | None = None,
    closed_book: bool = False,
    disabled_tools: str | list[str] | None = None,
    budget: int | None = 30,
    max_turns: int | None = 20,
    max_tokens: int | None = 200_000,
    mcp_client: str = "agenthop",
) -> Task:
    """AgentHop: multi-hop research questions answered through seven metered MCP tools, one AgentHop session per sample.

    Args:
        items: Items file: the release's qa/full.jsonl, a split file (JSONL with "id") or one item ID per line.
        corpus: Corpus file the server serves; its gold tables give the targets.
        log: Checkpoint log (SQLite) the server writes; many evals can share one, each under its run label.
        run: Run label of the sessions (default: inspect-<time>-<random>). Epoch N > 1 uses "<run>-epochN".
        closed_book: Ablation: no tools but submit_answer, one turn.
        disabled_tools: Ablation: tools to disable, comma-separated (e.g. "search_papers").
        budget: Budget points per session (negative or null: unlimited).
        max_turns: Model responses per session (negative or null: unlimited).
        max_tokens: Cumulative prompt + completion tokens per session (negative or null: unlimited).
        mcp_client: "agenthop" (the MCP SDK client; sends turns and tokens in _meta) or "inspect"
            (Inspect's mcp_server_http; cannot send _meta, so turns and tokens go unmeasured in the checkpoint log).
    """
    # Imported here, not at the top: Inspect imports every extension on startup (see solver.py).
    from agenthop.inspect_task.dataset import item_dataset
    from agenthop.inspect_task.options import (
        parse_cap,
        parse_disabled_tools,
        parse_mcp_client,
        parse_run_label,
        session_settings,
    )

    mcp_client, label = parse_mcp_client(mcp_client), parse_run_label(run)
    caps = {
        "budget": parse_cap("budget", budget),
        "max_turns": parse_cap("max_turns", max_turns),
        "max_tokens": parse_cap("max_tokens", max_tokens),
    }
    session_caps, disabled = session_settings(bool(closed_book), parse_disabled_tools(disabled_tools), caps)
    items_path, corpus_path, log_path = Path(items).resolve(), Path(corpus).resolve(), Path(log).resolve()
    return Task(
        dataset=item_dataset(items_path, corpus_path),
        solver=agenthop_agent(
            corpus=str(corpus_path),
            log=str(log_path),
            run=label,
            caps=session_caps,
            disabled_tools=disabled,
            closed_book=bool(closed_book),
            mcp_client=mcp_client,
        ),
        scorer=agenthop_answer(),
        metadata={
            "agenthop": {
                "run": label,
                "checkpoint_log": str(log_path),
                "corpus": str(corpus_path),
                "items": str(items_path),
                "caps": session_caps,
                "disabled_tools": disabled,
                "closed_book": bool(closed_book),
                "mcp_client": mcp_client,
                "score_with": f"agenthop-scorer {log_path}::{label} --corpus {corpus_path}",
            }
        },
    )
