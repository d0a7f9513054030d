"""What the sample's store keeps of its AgentHop session: written by the agent loop, read by the scorer.

The store is part of the Inspect log, so ``inspect score`` can re-score a log without a server.
"""

from __future__ import annotations

from inspect_ai.util import StoreModel


class AgentHopSession(StoreModel):
    run: str | None = None
    session_id: str | None = None
    checkpoint_log: str | None = None
    mcp_client: str | None = None
    termination: str | None = None
    answer: str | None = None
    budget_used: int | None = None
    turns: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
