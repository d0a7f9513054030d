"""What every stage gets: the corpus, the settings, the model client, and two helpers.

``ask`` sends a request and retries a reply the stage cannot use (bad JSON, a
label naming no header, an answer the evidence does not hold) by showing the
model what was wrong; ``each`` runs a stage's work on every candidate with
bounded concurrency and returns results in input order, so the output never
depends on which call finished first.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from agenthop.construct.client import ModelClient, ModelFailure, ModelSpec
from agenthop.construct.corpus_view import CorpusView
from agenthop.construct.prompts import BadReply, retry_messages
from agenthop.construct.settings import Settings


class Unusable(Exception):
    """Every attempt gave an unusable reply; ``reason`` is the drop reason, ``detail`` the last problem."""

    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason, self.detail = reason, detail


@dataclass
class Context:
    view: CorpusView
    settings: Settings
    client: ModelClient | None = None
    progress: Callable[[str], None] = field(default=lambda line: print(line, file=sys.stderr, flush=True))

    async def ask(self, spec: ModelSpec, messages: list[dict], validate: Callable[[str], Any], stage: str) -> Any:
        """``validate(reply)`` of the first usable reply; raises Unusable after ``attempts`` tries."""
        if self.client is None:
            raise RuntimeError("a model stage ran without a model client")
        problem: BadReply | None = None
        for _ in range(self.settings.attempts):
            try:
                reply = await self.client.chat(spec, messages, stage=stage)
            except ModelFailure as exc:
                raise Unusable("model_error", str(exc)) from None
            try:
                return validate(reply.text)
            except BadReply as exc:
                problem = exc
                messages = retry_messages(messages, reply.text, str(exc))
        raise Unusable(getattr(problem, "reason", "malformed_output"), str(problem))

    async def each(self, stage: str, items: list, work: Callable[[Any], Awaitable[dict]]) -> list[dict]:
        total, done, started = len(items), 0, time.monotonic()
        slots = asyncio.Semaphore(self.settings.workers)
        step = max(total // 10, 1)

        async def one(item):
            nonlocal done
            async with slots:
                result = await work(item)
            done += 1
            if done % step == 0 or done == total:
                self.progress(f"  {stage}: {done}/{total} candidates ({time.monotonic() - started:.1f} s)")
            return result

        return list(await asyncio.gather(*(one(i) for i in items)))
