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

from agenthop.construct.batchfiles import Deferred
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

    async def ask(
        self, spec: ModelSpec, messages: list[dict], validate: Callable[[str], Any], stage: str, call: str = "call"
    ) -> Any:
        """``validate(reply)`` of the first usable reply; raises Unusable after ``attempts`` tries.

        ``call`` names the call within the stage (the candidate and its role); each attempt is ``call/aN``, the
        custom_id of its batch line and recorded response. In batch mode an unanswered request raises Deferred.
        """
        if self.client is None:
            raise RuntimeError("a model stage ran without a model client")
        problem: BadReply | None = None
        for attempt in range(1, self.settings.attempts + 1):
            try:
                reply = await self.client.chat(spec, messages, stage=stage, call_id=f"{call}/a{attempt}")
            except ModelFailure as exc:
                raise Unusable("model_error", str(exc)) from None
            try:
                return validate(reply.text)
            except BadReply as exc:
                problem = exc
                messages = retry_messages(messages, reply.text, str(exc))
        raise Unusable(getattr(problem, "reason", "malformed_output"), str(problem))

    def prefetch(self, calls: list[tuple[ModelSpec, list[dict], str]], stage: str) -> None:
        """Before a candidate's calls that do not depend on each other's replies: in batch mode, put every one not
        yet answered in the stage's batch file at once (one round, not one per call), and defer the candidate."""
        if self.client is None or self.client.mode != "batch":
            return
        known = [self.client.known_or_deferred(spec, m, stage=stage, call_id=f"{call}/a1") for spec, m, call in calls]
        if not all(known):
            raise Deferred(stage)

    async def each(self, stage: str, items: list, work: Callable[[Any], Awaitable[dict]]) -> list[dict]:
        total, done, started = len(items), 0, time.monotonic()
        slots = asyncio.Semaphore(self.settings.workers)
        step = max(total // 10, 1)
        deferred = 0

        async def one(item):
            nonlocal done, deferred
            async with slots:
                try:
                    result = await work(item)
                except Deferred:  # batch mode: this candidate waits for answers in the stage's batch file
                    deferred += 1
                    result = None
            done += 1
            if done % step == 0 or done == total:
                self.progress(f"  {stage}: {done}/{total} candidates ({time.monotonic() - started:.1f} s)")
            return result

        results = list(await asyncio.gather(*(one(i) for i in items)))
        if deferred and self.client is not None:
            self.client.flush_batch(stage)  # raises BatchPending, naming the file; the stage's output is not written
        return results
