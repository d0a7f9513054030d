"""Settings of one run, shared by the orchestration and the agents."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from agenthop.runner.retry import RetryPolicy
from agenthop.server.caps import Caps

AGENTS = ("raw", "sdk", "baseline")
NUDGE = "Please use the available tools to investigate, or call submit_answer if you're ready."
CLOSED_BOOK_USER_MESSAGE = "Answer the question above by calling submit_answer with the letter of your choice."


@dataclass
class RunSettings:
    agent: str
    model: str
    run_label: str
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    caps: Caps = field(default_factory=Caps)
    closed_book: bool = False
    disabled_tools: tuple[str, ...] = ()
    read_first: bool = False
    text_tools: bool = False        # raw agent: tool calls written in the model's text (runner/text_tools.py)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    item_attempts: int = 3          # first try + two item-level retries
    workers: int = 1
    trace: bool = False
    mcp_timeout: float = 60.0

    def api_key(self) -> str:
        return os.environ.get(self.api_key_env) or "EMPTY"

    def ablations(self) -> dict:
        return {"closed_book": self.closed_book, "disabled_tools": list(self.disabled_tools), "read_first": self.read_first}
