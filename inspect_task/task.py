"""The ``agenthop/agenthop`` Inspect task and its options (``-T name=value``; docs/inspect.md)."""

from __future__ import annotations

import secrets
import time
from pathlib import Path

from inspect_ai import Task, task

from agenthop.inspect_task.dataset import item_dataset
from agenthop.inspect_task.scorer import agenthop_answer
from agenthop.inspect_task.solver import agenthop_agent
from agenthop.inspect_task.tools import MCP_CLIENTS
from agenthop.server.tools import TOOLS

DEFAULT_LOG = "logs/agenthop-log.sqlite"   # beside Inspect's own default log directory


def default_run_label() -> str:
    return f"inspect-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


def parse_disabled_tools(value: str | list[str] | None) -> list[str]:
    """A comma-separated string or a list of tool names; submit_answer cannot be disabled."""
    if value is None:
        return []
    names = value.split(",") if isinstance(value, str) else list(value)
    names = list(dict.fromkeys(str(n).strip() for n in names if str(n).strip()))
    unknown = [n for n in names if n not in TOOLS]
    if unknown:
        raise ValueError(f"disabled_tools names unknown tool(s) {unknown}; the tools are {', '.join(TOOLS)}")
    if "submit_answer" in names:
        raise ValueError("disabled_tools cannot include submit_answer: no item could be answered")
    return names


def parse_cap(name: str, value: int | None) -> int | None:
    """A cap: a non-negative integer, or None / a negative number for unlimited (as the runner's -1)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer (negative or null: unlimited), got {value!r}")
    return None if value < 0 else value


def session_settings(closed_book: bool, disabled_tools: list[str], caps: dict) -> tuple[dict, list[str]]:
    """Caps and disabled tools of every session, as the runner sets them (runner/run.py): closed book is one turn
    with submit_answer as the only tool."""
    if not closed_book:
        return dict(caps), list(disabled_tools)
    return {**caps, "max_turns": 1}, [t for t in TOOLS if t != "submit_answer"]


@task
def agenthop(
    items: str = "splits/demo.jsonl",
    corpus: str = "corpus.sqlite",
    log: str = DEFAULT_LOG,
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
    if mcp_client not in MCP_CLIENTS:
        raise ValueError(f"mcp_client must be one of {list(MCP_CLIENTS)}, got {mcp_client!r}")
    label = run if run is not None else default_run_label()
    if not isinstance(label, str) or not label.strip() or len(label) > 190:
        raise ValueError(f"run must be a non-empty label of at most 190 characters, got {label!r}")
    caps = {"budget": parse_cap("budget", budget), "max_turns": parse_cap("max_turns", max_turns),
            "max_tokens": parse_cap("max_tokens", max_tokens)}
    session_caps, disabled = session_settings(bool(closed_book), parse_disabled_tools(disabled_tools), caps)
    items_path, corpus_path, log_path = Path(items).resolve(), Path(corpus).resolve(), Path(log).resolve()
    return Task(
        dataset=item_dataset(items_path, corpus_path),
        solver=agenthop_agent(corpus=str(corpus_path), log=str(log_path), run=label, caps=session_caps,
                              disabled_tools=disabled, closed_book=bool(closed_book), mcp_client=mcp_client),
        scorer=agenthop_answer(),
        metadata={"agenthop": {
            "run": label, "checkpoint_log": str(log_path), "corpus": str(corpus_path), "items": str(items_path),
            "caps": session_caps, "disabled_tools": disabled, "closed_book": bool(closed_book), "mcp_client": mcp_client,
            "score_with": f"agenthop-scorer {log_path}::{label} --corpus {corpus_path}",
        }},
    )
