"""The one client for every model call of the pipeline.

OpenAI-compatible chat completions at any base URL. Each call is looked up in a
durable cache by the hash of its request (model name, messages, settings) before
it is sent, and stored there (committed) as soon as it returns, so a re-run after
a kill replays what was answered and pays for nothing twice. Transient API
errors are retried with backoff by the runner's policy (``agenthop.llm.retry``);
tokens and dollars are counted per stage and model from the runner's price table.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agenthop.construct.batchfiles import (
    BatchImport,
    BatchPending,
    Deferred,
    asked_requests,
    custom_id,
    read_output,
    stage_of,
    write_batch,
)
from agenthop.construct.recorded import RecordedResponses
from agenthop.construct.stagefiles import canonical, digest
from agenthop.llm.pricing import PriceTable
from agenthop.llm.retry import CallStats, HardModelError, RetryPolicy, call_with_retry
from agenthop.llm.wire import Sampling

if TYPE_CHECKING:
    import openai

OFFLINE = "offline"  # the deterministic generator and filter: no model, no call
# Their old name, still accepted wherever a model is named (the command line, Settings); read as OFFLINE.
OFFLINE_OLD_NAME = "baseline"


def offline_name(model: str) -> str:
    """The model as given, with the offline generator's old name ('baseline') read as 'offline'."""
    return OFFLINE if model.strip() == OFFLINE_OLD_NAME else model


class ModelSpecError(ValueError):
    """A model given on the command line cannot be used; the message says how to write one."""


@dataclass(frozen=True)
class ModelSpec:
    """``name`` or ``name@base_url``: a model served by any OpenAI-compatible endpoint."""

    name: str
    base_url: str | None = None

    @classmethod
    def parse(cls, text: str) -> ModelSpec:
        name, _, url = offline_name(text).strip().partition("@")
        if not name:
            raise ModelSpecError(
                f"model {text!r} has no name; write NAME or NAME@BASE_URL, e.g. gpt-4.1-mini@https://api.openai.com/v1"
            )
        if url and not url.startswith(("http://", "https://")):
            raise ModelSpecError(f"model {text!r}: the base URL {url!r} must start with http:// or https://")
        return cls(name, url or None)

    @property
    def offline(self) -> bool:
        return self.name == OFFLINE

    def __str__(self) -> str:
        return self.name if self.base_url is None else f"{self.name}@{self.base_url}"


@dataclass
class Tally:
    calls: int = 0  # requests sent to the endpoint (successful)
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    usd: float = 0.0
    unpriced: bool = False  # the model is not in the price table
    retries: int = 0
    failures: int = 0

    def add_usage(self, usage: dict, usd: float | None) -> None:
        self.prompt_tokens += usage.get("prompt_tokens", 0)
        self.completion_tokens += usage.get("completion_tokens", 0)
        self.cached_tokens += usage.get("cached_tokens", 0)
        if usd is None:
            self.unpriced = True
        else:
            self.usd = round(self.usd + usd, 6)


@dataclass
class Reply:
    text: str
    cached: bool


class ModelFailure(Exception):
    """The endpoint failed for good on one request (after the retry policy's attempts)."""


class ResponseCache:
    """request hash -> (response text, usage), in SQLite; each answer committed before it is used."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode = WAL")
        # A commit survives a kill of the process (the WAL is written before the commit returns); only a power cut
        # could lose the last replies, and then they are asked for again, never half-stored. FULL would fsync each one.
        self.conn.execute("PRAGMA synchronous = NORMAL")
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, text TEXT NOT NULL, usage TEXT NOT NULL)"
        )
        self.lock = threading.Lock()

    def get(self, key: str) -> str | None:
        with self.lock:
            row = self.conn.execute("SELECT text FROM responses WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def get_with_usage(self, key: str) -> tuple[str, dict] | None:
        with self.lock:
            row = self.conn.execute("SELECT text, usage FROM responses WHERE key = ?", (key,)).fetchone()
        return (row[0], json.loads(row[1])) if row else None

    def put(self, key: str, model: str, text: str, usage: dict) -> None:
        with self.lock:
            self.conn.execute(
                "INSERT OR REPLACE INTO responses(key, model, text, usage) VALUES (?, ?, ?, ?)",
                (key, model, text, json.dumps(usage)),
            )

    def close(self) -> None:
        self.conn.close()


@dataclass
class ModelClient:
    cache_path: Path
    prices: PriceTable = field(default_factory=PriceTable.load)
    policy: RetryPolicy = field(default_factory=lambda: RetryPolicy(max_retries=4, backoff=1.0, timeout=120.0))
    workers: int = 8
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.0
    sampling: Sampling | None = None  # the run's sampling options, over the temperature above (llm/wire.py)
    # How a request with no cached answer is answered: "direct" sends it to its endpoint; "batch" keeps it for the
    # stage's batch file (construct/batchfiles.py); "replay" answers from the recorded responses only, never a network.
    mode: str = "direct"
    recorded: RecordedResponses | None = None  # kept (and, unless replaying, added to) when given
    batch_dir: Path | None = None

    def __post_init__(self):
        if self.mode not in ("direct", "batch", "replay"):
            raise ValueError(f"unknown model mode {self.mode!r}")
        if self.mode == "replay" and self.recorded is None:
            raise ValueError("a replay needs the recorded responses (--responses FILE)")
        self.cache = ResponseCache(self.cache_path)
        self.tallies: dict[tuple[str, str], Tally] = {}
        self._clients: dict[str | None, openai.AsyncOpenAI] = {}
        self._slots: asyncio.Semaphore | None = None
        self.pending: dict[str, dict] = {}  # custom_id -> request body, for the current stage's batch file
        self._pending_keys: set[str] = set()
        self.batch_dir = self.batch_dir or self.cache_path.parent / "batch"

    def import_batch(self, outputs: list[Path]) -> list[str]:
        """Store every usable answer of the Batch output files; return one line per asked request left unanswered."""
        assert self.batch_dir is not None, "__post_init__ sets it"
        asked = asked_requests(self.batch_dir)
        result = BatchImport()
        for path in outputs:
            read_output(path, asked, result)
        for cid, answer in result.answers.items():
            body = asked[cid]
            key = digest(canonical(body))
            stage = stage_of(cid)
            self.cache.put(key, body["model"], answer.text, answer.usage)
            if self.recorded is not None:
                self.recorded.add(
                    key=key,
                    custom_id=cid,
                    stage=stage,
                    model=body["model"],
                    text=answer.text,
                    usage=answer.usage,
                )
            self.tally(stage, body["model"]).calls += 1
            self.tally(stage, body["model"]).add_usage(
                answer.usage,
                self.prices.cost(
                    body["model"],
                    answer.usage["prompt_tokens"],
                    answer.usage["completion_tokens"],
                    answer.usage["cached_tokens"],
                ),
            )
        if self.recorded is not None:
            self.recorded.save()
        # Only requests still unanswered count: an earlier output may have answered what a later one failed.
        unanswered = {c for c, body in asked.items() if self.cache.get(digest(canonical(body))) is None}
        return result.problems(unanswered)

    def flush_batch(self, stage: str) -> None:
        """After a stage's candidates ran: if requests wait for answers, write them to a batch file and stop."""
        if not self.pending:
            return
        requests, self.pending, self._pending_keys = self.pending, {}, set()
        assert self.batch_dir is not None, "__post_init__ sets it"
        raise BatchPending(stage, write_batch(self.batch_dir, stage, requests), len(requests))

    def _known(self, key: str, cid: str, stage: str, model: str) -> str | None:
        """The answer to a request from the cache or the recorded responses, or None (a replay refuses a miss)."""
        if self.mode == "replay":
            assert self.recorded is not None, "__post_init__ refuses a replay without recorded responses"
            record = self.recorded.get(key)
            if record is None:
                raise self.recorded.refuse(key, cid, stage)
            return record["response"]
        hit = self.cache.get_with_usage(key)
        if hit is None and self.recorded is not None:
            record = self.recorded.get(key)
            if record is not None:
                hit = record["response"], record.get("usage") or {}
                self.cache.put(key, model, *hit)
        if hit is not None and self.recorded is not None:
            # Every response a run uses is in its recorded responses, including those cached before they were kept.
            self.recorded.add(key=key, custom_id=cid, stage=stage, model=model, text=hit[0], usage=hit[1])
        return hit[0] if hit is not None else None

    def known_or_deferred(self, spec: ModelSpec, messages: list[dict], *, stage: str, call_id: str) -> bool:
        """In batch mode, keep an unanswered request for the batch file; True when the request has an answer."""
        body = self.request(spec, messages)
        key = digest(canonical(body))
        cid = custom_id(stage, call_id)
        if self._known(key, cid, stage, spec.name) is not None:
            return True
        if self.mode == "batch" and key not in self._pending_keys:
            self.pending[cid] = body
            self._pending_keys.add(key)
        return False

    def tally(self, stage: str, model: str) -> Tally:
        return self.tallies.setdefault((stage, model), Tally())

    def request(self, spec: ModelSpec, messages: list[dict]) -> dict:
        body = {"model": spec.name, "messages": messages, "temperature": self.temperature}
        return body | self.sampling.body(spec.name) if self.sampling is not None else body

    def _client(self, spec: ModelSpec) -> openai.AsyncOpenAI:
        if spec.base_url not in self._clients:
            import openai  # here: the offline pipeline never loads the API client

            key = os.environ.get(self.api_key_env)
            if not key and spec.base_url is None:
                raise ModelSpecError(
                    f"model {spec.name} uses the OpenAI API, but {self.api_key_env} is not set; "
                    f"set it, or give the model as {spec.name}@BASE_URL for another endpoint"
                )
            self._clients[spec.base_url] = openai.AsyncOpenAI(
                base_url=spec.base_url, api_key=key or "unused", max_retries=0, timeout=self.policy.timeout
            )
        return self._clients[spec.base_url]

    async def chat(self, spec: ModelSpec, messages: list[dict], *, stage: str, call_id: str = "call") -> Reply:
        """The model's reply text; from the cache when this exact request was answered before.

        ``call_id`` names the call within the stage (candidate, role, attempt): with the stage, the ``custom_id``
        of its batch line and of its recorded response.
        """
        body = self.request(spec, messages)
        key = digest(canonical(body))
        cid = custom_id(stage, call_id)
        tally = self.tally(stage, spec.name)
        cached = self._known(key, cid, stage, spec.name)
        if cached is not None:
            tally.cache_hits += 1
            return Reply(cached, True)
        if self.mode == "batch":
            if key not in self._pending_keys:
                self.pending[cid] = body
                self._pending_keys.add(key)
            raise Deferred(cid)
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.workers)
        client = self._client(spec)
        from openai.types.chat import ChatCompletion

        stats = CallStats()
        async with self._slots:
            try:
                # client.post, not chat.completions.create: the SDK would walk every message to transform it, which
                # costs more CPU than the request (as runner/raw_agent.py found); these messages need no transform.
                response = await call_with_retry(
                    lambda: client.post("/chat/completions", body=body, cast_to=ChatCompletion), self.policy, stats
                )
            except HardModelError as exc:
                tally.failures += 1
                tally.retries += stats.retries
                raise ModelFailure(str(exc)) from exc
        tally.retries += stats.retries
        text = (response.choices[0].message.content or "") if response.choices else ""
        u = response.usage
        usage = {
            "prompt_tokens": getattr(u, "prompt_tokens", 0) or 0,
            "completion_tokens": getattr(u, "completion_tokens", 0) or 0,
            "cached_tokens": (getattr(getattr(u, "prompt_tokens_details", None), "cached_tokens", 0) or 0) if u else 0,
        }
        tally.calls += 1
        tally.add_usage(
            usage,
            self.prices.cost(spec.name, usage["prompt_tokens"], usage["completion_tokens"], usage["cached_tokens"]),
        )
        await asyncio.to_thread(
            self.cache.put, key, spec.name, text, usage
        )  # stored before it is used; the other calls go on
        if self.recorded is not None:
            self.recorded.add(key=key, custom_id=cid, stage=stage, model=spec.name, text=text, usage=usage)
        return Reply(text, False)

    def totals(self) -> dict:
        rows = [{"stage": s, "model": m, **vars(t)} for (s, m), t in sorted(self.tallies.items())]
        return {
            "by_stage_and_model": rows,
            "calls": sum(r["calls"] for r in rows),
            "cache_hits": sum(r["cache_hits"] for r in rows),
            "usd": round(sum(r["usd"] for r in rows), 6),
            "unpriced_models": sorted({r["model"] for r in rows if r["unpriced"]}),
        }

    async def aclose(self) -> None:
        if self.recorded is not None:
            self.recorded.save()
        for client in self._clients.values():
            await client.close()
        self._clients.clear()
        self.cache.close()
