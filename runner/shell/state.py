"""The per-item session files of agenthop-cli: what one command leaves for the next.

One JSON file per item: the item, the server's URL, the run label, the session ID and MCP URL, the caps and the
turn count (and ``ended`` once it ended). Never a token: that is read from the environment at each command.
Written atomically, so a killed command leaves the old state or the new one.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from agenthop.runner.session import TOKEN_ENV, SessionInfo


class StateError(ValueError):
    """The state folder has no usable session for the item; the message says what to do."""


def state_path(state: Path, item: str) -> Path:
    if not re.fullmatch(r"[A-Za-z0-9_.\-]{1,200}", item) or item.startswith("."):
        raise StateError(f"item ID {item!r} is not one the server serves (letters, digits, '_', '-', '.')")
    return state / f"{item}.json"


def load(state: Path, item: str) -> dict:
    path = state_path(state, item)
    if not path.exists():
        raise StateError(f"no session for item {item} in {state}/; start one first: agenthop-cli start {item}")
    try:
        return json.loads(path.read_text())
    except ValueError as exc:
        raise StateError(f"{path} is not the JSON agenthop-cli writes ({exc}); start the item again") from None


def save(state: Path, item: str, record: dict) -> None:
    path = state_path(state, item)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n")
    os.replace(tmp, path)


def session_info(record: dict) -> SessionInfo:
    """The session as the MCP client needs it, with the bearer token from the environment when one is set."""
    headers = {"X-AgentHop-Session": record["session_id"]}
    token = os.environ.get(TOKEN_ENV)
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return SessionInfo(record["session_id"], record["mcp_url"], headers, record["item"], record.get("caps") or {})
