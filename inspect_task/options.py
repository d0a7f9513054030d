"""The task's options: validation and the session settings they make (caps, disabled tools, run label)."""

from __future__ import annotations

import secrets
import time

from agenthop.server.tools import TOOLS

MCP_CLIENTS = ("agenthop", "inspect")


def parse_run_label(run: str | None) -> str:
    """The run label of the sessions: ``run``, or a fresh ``inspect-<date>-<time>-<4 hex>``. At most 190 characters,
    so that the epoch suffix still fits the server's 200."""
    label = run if run is not None else f"inspect-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"
    if not isinstance(label, str) or not label.strip() or len(label) > 190:
        raise ValueError(f"run must be a non-empty label of at most 190 characters, got {label!r}")
    return label


def parse_mcp_client(value: str) -> str:
    if value not in MCP_CLIENTS:
        raise ValueError(f"mcp_client must be one of {list(MCP_CLIENTS)}, got {value!r}")
    return value


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
