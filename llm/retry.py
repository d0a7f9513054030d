"""Transient vs hard model-API errors, and retrying in place with backoff.

A transient error (HTTP 408/409/429, any 5xx, a timeout, a dropped
connection) is retried in place: the same request is sent again after an
exponential backoff, and no turn is used. Anything else (another 4xx, a
response that cannot be parsed, an unexpected exception) or more than
``max_retries`` transient failures in a row is a hard error: it ends the
attempt, and the item is retried with a new session (see run.py).

An HTTP error answered twice in a row to the same request with the same status
and the same body is deterministic, not transient: the server refuses that
request (llama.cpp's server answers 500 to a message shape it cannot read, every
time). The call stops after that one retry with a ``deterministic`` hard error,
and the item is not run again for it. Statuses that mean "try later" (408, 429,
502, 503, 504) and answers that carry ``Retry-After`` stay transient however
alike they are, and so do timeouts and dropped connections.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

TRANSIENT_STATUS = {408, 409, 429}
# Statuses whose meaning is "try later": a repeat of the same answer is still no sign of a refusal.
TRY_LATER_STATUS = {408, 429, 502, 503, 504}
# The endpoint refuses the key or the model: every later call would be refused too, so the run stops at once.
DENIED_STATUS = {401, 403}


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 6  # transient retries per model call before it becomes a hard error
    backoff: float = 2.0  # first wait in seconds; doubles each time
    backoff_max: float = 60.0  # ceiling of one wait
    jitter: float = 0.1  # +- share of the wait, to de-synchronise workers
    timeout: float = 300.0  # seconds for one model request

    def delay(self, retry: int) -> float:
        base = min(self.backoff * (2 ** (retry - 1)), self.backoff_max)
        if self.jitter:
            base *= 1 + random.uniform(-self.jitter, self.jitter)
        return max(base, 0.0)


class HardModelError(Exception):
    """The model API failed for good in this attempt."""

    def __init__(self, message: str, retries: int = 0, denied: bool = False, deterministic: bool = False):
        super().__init__(message)
        self.retries = retries
        self.denied = denied  # HTTP 401/403: retrying the item (or any other) cannot help
        self.deterministic = (
            deterministic  # the same request got the same error answer twice: re-running it cannot help
        )


def describe(exc: BaseException) -> str:
    import openai  # here, not at the top: the command line names RetryPolicy without loading the API client

    if isinstance(exc, openai.APIStatusError):
        body = exc.body if isinstance(exc.body, (str, dict)) else None
        return f"HTTP {exc.status_code}: {type(exc).__name__}: {str(body or exc.message)[:300]}"
    return f"{type(exc).__name__}: {str(exc)[:300]}"


def is_transient(exc: BaseException) -> bool:
    import openai

    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError, asyncio.TimeoutError, TimeoutError)):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in TRANSIENT_STATUS or exc.status_code >= 500
    return False


def refusal_signature(exc: BaseException) -> tuple | None:
    """(status, body) of an HTTP error that could be a deterministic refusal; None for anything that means
    "try later" (timeouts, dropped connections, 408/429/502/503/504, an answer with Retry-After)."""
    import openai

    if not isinstance(exc, openai.APIStatusError) or exc.status_code in TRY_LATER_STATUS:
        return None
    headers = getattr(exc.response, "headers", None) or {}
    if "retry-after" in headers or "retry-after-ms" in headers:
        return None
    body = exc.body if exc.body is not None else exc.message
    return exc.status_code, body if isinstance(body, str) else repr(body)


def is_denied(exc: BaseException) -> bool:
    import openai

    return isinstance(exc, openai.APIStatusError) and exc.status_code in DENIED_STATUS


@dataclass
class CallStats:
    retries: int = 0
    latency_ms: float = 0.0
    errors: list[str] | None = None


async def call_with_retry(fn: Callable[[], Awaitable[T]], policy: RetryPolicy, stats: CallStats | None = None) -> T:
    """Run ``fn`` until it succeeds, retrying transient failures in place.

    ``stats`` (when given) receives the number of retries, the latency of the
    successful call and the transient errors seen. Raises HardModelError.
    """
    stats = stats if stats is not None else CallStats()
    stats.errors = stats.errors or []
    previous: tuple | None = None  # the last failure's refusal signature
    while True:
        t0 = time.perf_counter()
        try:
            result = await asyncio.wait_for(fn(), timeout=policy.timeout + 5)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - classified below
            if not is_transient(exc):
                raise HardModelError(describe(exc), stats.retries, denied=is_denied(exc)) from exc
            signature = refusal_signature(exc)
            if signature is not None and signature == previous:
                raise HardModelError(
                    f"the endpoint gave the same answer to the same request twice ({describe(exc)}): it refuses this "
                    "request, so it is not retried again and the item is not run again",
                    stats.retries,
                    deterministic=True,
                ) from exc
            previous = signature
            stats.errors.append(describe(exc))
            if stats.retries >= policy.max_retries:
                raise HardModelError(
                    f"transient model API errors persisted after {stats.retries} retries; last: {describe(exc)}",
                    stats.retries,
                ) from exc
            stats.retries += 1
            await asyncio.sleep(policy.delay(stats.retries))
            continue
        stats.latency_ms = (time.perf_counter() - t0) * 1000
        return result
