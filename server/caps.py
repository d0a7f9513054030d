"""A session's caps: budget points, turns and tokens. On its own so that a command line can name it without
loading the sandbox."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Caps:
    """Per-session limits; None means unlimited."""

    budget: int | None = 30
    max_turns: int | None = 20
    max_tokens: int | None = 200_000

    def as_dict(self) -> dict:
        return {"budget": self.budget, "max_turns": self.max_turns, "max_tokens": self.max_tokens}
