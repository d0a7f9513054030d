"""Settings of one run, shared by the orchestration and the agents."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from agenthop.llm.retry import RetryPolicy
from agenthop.llm.wire import Sampling
from agenthop.server.caps import Caps

AGENTS = ("raw", "sdk", "baseline")
NUDGE = "Please use the available tools to investigate, or call submit_answer if you're ready."
CLOSED_BOOK_USER_MESSAGE = "Answer the question above by calling submit_answer with the letter of your choice."


def missing_api_key(agent: str, base_url: str | None, api_key_env: str) -> str | None:
    """Why a model agent cannot start without a key (None when it can).

    OpenAI's own endpoint needs a key; an OpenAI-compatible server named by a base URL (vLLM, a local proxy) often
    does not, so only a run without a base URL is refused. Without this check the run would send the key "EMPTY"
    and spend minutes retrying refused calls."""
    if agent not in ("raw", "sdk") or base_url or os.environ.get(api_key_env):
        return None
    return (
        f"the {agent} agent needs an API key: the environment variable {api_key_env} is not set, and no base URL "
        "names another OpenAI-compatible endpoint. Set the variable, name the variable that holds the key, or give "
        "the base URL of a server that needs no key"
    )


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
    text_tools: bool = False  # raw agent: tool calls written in the model's text (runner/text_tools.py)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    sampling: Sampling = field(default_factory=Sampling)  # per-call generation settings (llm/wire.py)
    item_attempts: int = 3  # first try + two item-level retries
    workers: int = 1
    trace: bool = False
    mcp_timeout: float = 60.0

    def api_key(self) -> str:
        # Only a run with a base URL gets here without the variable set (see missing_api_key): local servers want no key.
        return os.environ.get(self.api_key_env) or "EMPTY"

    def ablations(self) -> dict:
        return {
            "closed_book": self.closed_book,
            "disabled_tools": list(self.disabled_tools),
            "read_first": self.read_first,
        }
