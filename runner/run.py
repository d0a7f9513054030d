"""Orchestration: one session per item, attempts and item retries, resume, concurrency, the run directory."""

from __future__ import annotations

import asyncio
import itertools
import json
import platform
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from agenthop.llm.pricing import PriceTable
from agenthop.llm.retry import HardModelError, describe
from agenthop.runner.config import RunSettings
from agenthop.runner.episode import Episode
from agenthop.runner.progress import ProgressView
from agenthop.runner.readfirst import ReadFirstGate
from agenthop.runner.records import RUNNER_FILE, RecordWriter
from agenthop.runner.session import ALL_TOOLS, Discovered, McpConnector, McpSession, ServerAPI, ServerError, prompt_text
from agenthop.runner.summary import is_correct
from agenthop.server.log import AttemptError, AttemptStart, ItemEnd
from agenthop.textmatch import TaskParseError, parse_task

if TYPE_CHECKING:  # the model client is imported only by the agents that use one
    from openai import AsyncOpenAI

MANIFEST = "run.json"
SERVER_LOG = "server-log.sqlite"
# Settings that must match for a resumed run to continue the same experiment, and the value a run.json
# written before the key existed stands for.
RESUME_KEYS = ("agent", "model", "caps", "ablations", "corpus", "tool_format", "shard", "sampling")
RESUME_DEFAULTS = {"tool_format": "native", "shard": None}
# Server-side terminations that settle an item: a session a killed run left with one of these counts.
SETTLED = ("answer", "budget", "token_limit", "max_turns", "empty_response")


class RunError(Exception):
    """The run cannot start or go on; the message says why and what to do. ``param`` names the ``run_items`` parameter
    it is about, when there is one (the CLI shows that parameter's flag)."""

    def __init__(self, message: str, param: str | None = None):
        super().__init__(message)
        self.param = param


class ResumeConflict(RunError):
    """The run directory holds records this run cannot resume (other settings, or an unreadable run.json)."""


class ModelAccessDenied(RunError):
    """The model endpoint refused the key or the model (HTTP 401/403): the run stops at the first such answer,
    since every other call would be refused too. The refused attempt is recorded as an error, so a resumed run
    runs its item again."""


class NoItemsLeft(RunError):
    """The filters (or the shard) leave nothing to run."""


def close_writer(writer, finished: bool) -> None:
    """Close the record writer. When the run did not finish, its own error is the one to report, not this one."""
    try:
        writer.close()
    except OSError as exc:
        if finished:
            raise RunLogUnwritable(f"{exc}; run the same command again to resume.") from exc


class RunLogUnwritable(RunError):
    """runner.jsonl cannot be written (a full disk, say): the run stops rather than run items it cannot record.

    An attempt never fails for this reason: its records are still queued and reach the file once it can be
    written, so retrying the item would run an answered item twice. A resumed run finds what was written.
    """


def versions() -> dict:
    out: dict[str, str | None] = {"python": platform.python_version()}
    for pkg in ("agenthop", "mcp", "openai", "openai-agents"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = None
    return out


def base_url_host(url: str | None) -> str | None:
    if not url:
        return None
    parsed = urlparse(url)
    return parsed.hostname + (f":{parsed.port}" if parsed.port else "") if parsed.hostname else None


def session_caps(settings: RunSettings) -> dict:
    caps = settings.caps.as_dict()
    if settings.closed_book:
        caps["max_turns"] = 1
    return caps


def disabled_tools(settings: RunSettings) -> list[str]:
    if settings.closed_book:
        return [t for t in ALL_TOOLS if t != "submit_answer"]
    return list(settings.disabled_tools)


def manifest(
    settings: RunSettings,
    corpus: dict | None,
    server_url: str | None,
    items_file: str,
    replicate_of: str | None = None,
    *,
    shard: dict | None = None,
    processes: int = 1,
) -> dict:
    """run.json. ``replicate_of`` (the run this one repeats; the scorer groups replicates by it) is only
    written when given, so a resumed run keeps the value already in run.json. ``shard`` (runner/sharding.py)
    marks one shard of a run spread over machines; the scorer merges the shards of one run."""
    man = {
        "run": settings.run_label,
        "agent": settings.agent,
        "model": settings.model,
        "caps": session_caps(settings),
        "ablations": settings.ablations(),
        "disabled_tools": disabled_tools(settings),
        "base_url_host": base_url_host(settings.base_url) if settings.agent != "baseline" else None,
        "api_key_env": settings.api_key_env if settings.agent != "baseline" else None,
        "retry": {
            "max_retries": settings.retry.max_retries,
            "backoff": settings.retry.backoff,
            "timeout": settings.retry.timeout,
            "item_attempts": settings.item_attempts,
        },
        # Per-call generation settings (null: not sent, the endpoint's default applies).
        "sampling": settings.sampling.as_dict() if settings.agent != "baseline" else None,
        "workers": settings.workers,
        "processes": processes,
        "tool_format": "text" if settings.text_tools else "native",
        "server": server_url or "in-process",
        "items_file": items_file,
        "corpus": corpus,
        "versions": versions(),
    }
    if replicate_of:
        man["replicate_of"] = replicate_of
    if shard is not None:
        man["shard"] = shard
    return man


def _stamp() -> str:
    return time.strftime("%Y%m%d-%H%M%S")


def _aside_dir(out: Path) -> Path:
    """A new, unused ``previous-<timestamp>[-N]`` directory (two runs that start over may do so in the same second)."""
    stamp = _stamp()
    for n in itertools.count(1):
        aside = out / (f"previous-{stamp}" if n == 1 else f"previous-{stamp}-{n}")
        try:
            aside.mkdir()
        except FileExistsError:
            continue
        return aside
    raise AssertionError("unreachable")


def read_manifest(out: Path) -> dict | None:
    """The run.json of a run directory (None if there is none); RunError if it is not a JSON object."""
    path = out / MANIFEST
    if not path.exists():
        return None
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        why = f"{exc.msg}, line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise ResumeConflict(
            f"{path} is not valid JSON ({why}). It is the manifest of the run in {out}: repair it (or delete it, and "
            "this run's settings are taken as the run's) to resume, start over without resuming (the old "
            "records are moved aside), or choose another run directory."
        ) from exc
    if not isinstance(old, dict):
        raise ResumeConflict(
            f"{path} holds a JSON {type(old).__name__}, not an object. Repair or delete it to resume, start over "
            "without resuming (the old records are moved aside), or choose another run directory."
        )
    return old


def prepare_run_dir(out: Path, man: dict, resume: bool) -> dict:
    """Create the run directory and write run.json; return what was written.

    Starting over (``resume`` false) moves the old records (and run.json) aside into ``previous-*/``. A resume refuses a
    different experiment (RESUME_KEYS) and keeps the keys of the old run.json that this command does
    not set (``replicate_of`` and anything a user added).
    """
    out.mkdir(parents=True, exist_ok=True)
    runner_file = out / RUNNER_FILE
    if not resume:
        if any((out / name).exists() for name in (RUNNER_FILE, MANIFEST, SERVER_LOG)):
            aside = _aside_dir(out)
            for name in (RUNNER_FILE, MANIFEST, SERVER_LOG, SERVER_LOG + "-wal", SERVER_LOG + "-shm"):
                if (out / name).exists():
                    shutil.move(str(out / name), str(aside / name))
    else:
        old = read_manifest(out)
        if old is not None:
            if runner_file.exists():
                diffs = [
                    k
                    for k in RESUME_KEYS
                    if old.get(k, RESUME_DEFAULTS.get(k)) != man.get(k, RESUME_DEFAULTS.get(k))
                    # a run.json from before corpus identities or sampling settings were recorded
                    and not (k in ("corpus", "sampling") and (old.get(k) is None or man.get(k) is None))
                ]
                if diffs:
                    raise ResumeConflict(
                        f"{out} holds a run with different settings ({', '.join(diffs)}); resuming would mix two "
                        "experiments. Start over without resuming (the old records are moved aside) or choose another run directory."
                    )
            man = {**man, **{k: v for k, v in old.items() if k not in man}}
    tmp = out / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(man, indent=2) + "\n")
    tmp.replace(out / MANIFEST)
    return man


def load_agent(agent: str) -> None:
    """Import what the agent runs on, as part of start-up rather than on the first items of the run.

    The OpenAI client, the Agents SDK and the JSON Schema validators (the MCP client checks every result
    against its tool's output schema) take a second or more of CPU to import; imported lazily, every
    worker's first item waited for them after ``run_start``.
    """
    if agent == "sdk":
        import agenthop.runner.sdk_agent  # noqa: F401
    if agent in ("raw", "sdk"):
        import jsonschema.validators  # noqa: F401
        import referencing  # noqa: F401

        import agenthop.runner.raw_agent  # noqa: F401
    else:
        import agenthop.runner.baseline  # noqa: F401


@dataclass
class Lane:
    client: AsyncOpenAI | None  # for the raw and sdk agents
    mcp: McpConnector


class Orchestrator:
    def __init__(
        self,
        settings: RunSettings,
        api: ServerAPI,
        writer: RecordWriter,
        prices: PriceTable,
        gold: dict[str, int] | None = None,
        progress: ProgressView | None = None,
    ):
        self.settings = settings
        self.api = api
        self.writer = writer
        self.prices = prices
        self.gold = gold
        self.progress = progress
        self.on_item_done: Callable[[dict, int, float | None], None] | None = None  # worker processes report here
        # Every session of a run has the same tools (same disabled set): listed once per set.
        self.tool_lists: dict[tuple[str, ...], list] = {}
        self.discovered = Discovered()
        self.lanes: list[Lane] = []
        self.client_info = {
            "name": "agenthop-runner",
            "version": versions().get("agenthop"),
            "agent": settings.agent,
            "model": settings.model,
        }

    def lane(self) -> Lane:
        """A new lane: the HTTP clients one worker uses for its items, one after another.

        Each worker has its own small connection pools (to the model and to the server) instead of
        sharing one big pool: httpcore probes every idle connection of a pool on each request, so a
        pool shared by N workers costs O(N) socket probes per request."""
        client = None
        if self.settings.agent in ("raw", "sdk"):
            from agenthop.runner.raw_agent import make_client

            client = make_client(self.settings, max_connections=4)
        lane = Lane(
            client, McpConnector(timeout=self.settings.mcp_timeout, max_connections=4, discovered=self.discovered)
        )
        self.lanes.append(lane)
        return lane

    async def aclose(self) -> None:
        for lane in self.lanes:
            await lane.mcp.aclose()
            if lane.client is not None:
                await lane.client.close()
        self.lanes.clear()

    async def _tools(self, mcp: McpSession) -> list:
        key = tuple(sorted(mcp.info.disabled_tools))
        if key not in self.tool_lists:
            self.tool_lists[key] = await mcp.list_tools()
        return self.tool_lists[key]

    def cost(self, ep: Episode) -> float | None:
        return self.prices.cost(self.settings.model, ep.prompt_tokens, ep.completion_tokens, ep.cached_tokens)

    async def _attempt(self, lane: Lane, info, item_id: str, attempt: int, holder: list) -> str | None:
        s = self.settings
        if s.agent == "sdk":
            from agenthop.runner.sdk_agent import make_sdk_parts, run_sdk

            assert lane.client is not None  # a lane of the raw and sdk agents has a model client
            server, model, ref = make_sdk_parts(
                info, s, lane.client, lane.mcp.client, lane.mcp.discovered, self.tool_lists
            )
            async with server:
                ep = self._episode(info, item_id, attempt, server.issue)
                holder.append(ep)
                ref.ep = ep
                if s.read_first:
                    ep.gate = ReadFirstGate(_question(prompt_text(await server.get_prompt("research_task"))))
                return await run_sdk(ep, server, model, s)
        async with lane.mcp.session(info) as mcp:
            ep = self._episode(info, item_id, attempt, mcp.call_tool)
            holder.append(ep)
            if s.read_first:
                ep.gate = ReadFirstGate(_question(await mcp.task_prompt()))
            if s.agent == "raw":
                from agenthop.runner.raw_agent import run_raw

                assert lane.client is not None  # a lane of the raw and sdk agents has a model client
                return await run_raw(ep, mcp, lane.client, s, await self._tools(mcp))
            from agenthop.runner.baseline import run_baseline

            return await run_baseline(ep, mcp, s)

    def _episode(self, info, item_id, attempt, issue) -> Episode:
        return Episode(
            run=self.settings.run_label,
            item_id=item_id,
            attempt=attempt,
            session=info,
            caps=self.settings.caps,
            writer=self.writer,
            issue=issue,
        )

    def _item_end(
        self,
        item_id: str,
        session_id: str | None,
        attempt: int,
        termination: str,
        answer: str | None,
        turns: int,
        prompt: int,
        completion: int,
        cached: int,
        budget_used: int | None,
        wall_time_s: float,
        **extra,
    ) -> dict:
        """The item_end record (docs/log-format.md); extra fields (``recovered``) go before ``time``."""
        return {
            "kind": "item_end",
            "run": self.settings.run_label,
            "item_id": item_id,
            "session_id": session_id,
            "attempt": attempt,
            "termination": termination,
            "answer": answer if termination == "answer" else None,
            "turns": turns,
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "cached_tokens": cached,
            "total_tokens": prompt + completion,
            "budget_used": budget_used,
            "cost_usd": self.prices.cost(self.settings.model, prompt, completion, cached),
            "wall_time_s": round(max(0.0, wall_time_s), 3),
            **extra,
            "time": time.time(),
        }

    def _episode_end(
        self,
        ep: Episode | None,
        item_id: str,
        session_id: str | None,
        attempt: int,
        termination: str,
        budget_used: int | None,
        t0: float,
        answer: str | None = None,
    ) -> dict:
        """The item_end of an attempt; ``answer`` is the server's (GET /sessions/{id}) when known."""
        if ep is None:
            return self._item_end(item_id, session_id, attempt, termination, None, 0, 0, 0, 0, 0, time.time() - t0)
        return self._item_end(
            item_id,
            session_id,
            attempt,
            termination,
            answer or ep.answer,
            ep.turn,
            ep.prompt_tokens,
            ep.completion_tokens,
            ep.cached_tokens,
            budget_used,
            time.time() - t0,
        )

    async def run_item(self, item_id: str, lane: Lane | None = None) -> dict:
        s = self.settings
        if lane is None:
            lane = self.lanes[0] if self.lanes else self.lane()
        t0 = time.time()
        spent_tokens = 0
        spent_cost: float | None = 0.0
        info = None
        for attempt in range(1, s.item_attempts + 1):
            info = None
            holder: list[Episode] = []
            try:
                info = await self.api.create_session(
                    item_id, s.run_label, session_caps(s), disabled_tools(s), self.client_info
                )
                # Recorded before the agent starts, so a resumed run finds every session it created.
                self.writer.write(
                    AttemptStart(
                        run=s.run_label, item_id=item_id, session_id=info.session_id, attempt=attempt, time=time.time()
                    )
                )
                await self.durable()
                termination = await self._attempt(lane, info, item_id, attempt, holder)
                ep = holder[0]
                ep.flush_turn()
                reason = {
                    "token_limit": f"{ep.cumulative} tokens > cap {s.caps.max_tokens}",
                    "max_turns": f"{ep.turn} turns, cap {1 if s.closed_book else s.caps.max_turns}",
                    "empty_response": "the model sent an empty response again after the nudge",
                }.get(termination or "", "")
                if termination is not None:
                    await self.api.end_session(info.session_id, termination, reason)
                if termination is None and ep.ended and ep.answer is not None:
                    # The server acknowledged the answer in the result that ended the session (termination
                    # answer, with the budget spent): asking it again would only cost a round trip.
                    state: dict[str, Any] = {
                        "ended": True,
                        "termination": "answer",
                        "answer": ep.answer,
                        "budget_used": ep.budget_used,
                    }
                else:
                    state = await self.api.get_session(info.session_id)
                if not state.get("ended"):
                    await self.api.end_session(info.session_id, "abandoned", "the agent stopped without an ending")
                    state = await self.api.get_session(info.session_id)
                final = state.get("termination") or termination or "abandoned"
                record = self._episode_end(
                    ep,
                    item_id,
                    info.session_id,
                    attempt,
                    final,
                    state.get("budget_used", ep.budget_used),
                    t0,
                    state.get("answer"),
                )
                self.writer.write(ItemEnd.model_validate(record))
                await self.durable()
                self._account(record, spent_tokens + ep.cumulative, _add(spent_cost, record["cost_usd"]))
                return record
            except asyncio.CancelledError:
                # Ctrl+C (or a stopped worker): the turns that finished, the one whose tool calls ran included,
                # reach runner.jsonl (the writer drains on close); the model call in flight has no turn yet.
                if holder:
                    holder[0].flush_turn()
                raise
            except RunLogUnwritable:
                raise
            except Exception as exc:  # noqa: BLE001 - any failure ends the attempt
                failed = holder[0] if holder else None
                if failed is not None:
                    failed.flush_turn()
                    spent_tokens += failed.cumulative
                    spent_cost = _add(spent_cost, self.cost(failed))
                message = describe(exc) if not isinstance(exc, ServerError) else str(exc)
                self.writer.write(
                    AttemptError(
                        run=s.run_label,
                        item_id=item_id,
                        session_id=info.session_id if info else None,
                        attempt=attempt,
                        error=message,
                        time=time.time(),
                    )
                )
                if info is not None:
                    try:
                        await self.api.end_session(info.session_id, "error", message[:1900])
                    except ServerError:
                        pass
                if isinstance(exc, HardModelError) and exc.denied:
                    await self.durable()
                    raise ModelAccessDenied(
                        f"the model endpoint{f' at {s.base_url}' if s.base_url else ''} refused the request ({exc}); "
                        f"check the API key in {s.api_key_env} and the model name {s.model!r}. The run stops here: "
                        "finished items are kept and running the same command again resumes the others."
                    ) from exc
                if isinstance(exc, HardModelError) and exc.deterministic:
                    break  # the endpoint refuses this request every time: another attempt would send it again
                if attempt < s.item_attempts:
                    await asyncio.sleep(s.retry.delay(attempt))
        last = holder[0] if holder else None
        record = self._episode_end(
            last, item_id, info.session_id if info else None, attempt, "error", last.budget_used if last else 0, t0
        )
        self.writer.write(ItemEnd.model_validate(record))
        await self.durable()
        self._account(record, spent_tokens, spent_cost)
        return record

    async def durable(self) -> None:
        """Every record written so far is on disk; RunLogUnwritable if the file cannot be written."""
        try:
            await self.writer.durable()
        except OSError as exc:
            raise RunLogUnwritable(
                f"cannot write {self.writer.path}: {exc}; the run stops. Free the space (or fix the "
                "file) and run the same command again to resume."
            ) from exc

    def _account(self, record: dict, tokens: int, cost: float | None) -> None:
        if self.on_item_done is not None:
            self.on_item_done(record, tokens, cost)
        if self.progress is not None:
            self.progress.item_done(record, tokens, cost, is_correct(record, self.gold))

    async def run_items(self, items: list[str]) -> None:
        """Run ``items`` with ``settings.workers`` at once."""
        queue = iter(items)
        await self.run_claimed(lambda: next(queue, None), self.settings.workers)

    async def run_claimed(self, claim: Callable[[], str | None], workers: int) -> None:
        """Run items with ``workers`` at once; each worker takes its next item from ``claim`` (None: no more)."""

        async def worker(lane: Lane) -> None:
            while (item_id := claim()) is not None:
                await self.run_item(item_id, lane)

        tasks = [asyncio.create_task(worker(self.lane())) for _ in range(max(1, workers))]
        try:
            await asyncio.gather(*tasks)
        finally:
            for t in tasks:
                t.cancel()

    async def recover(self, state, log_path: Path | None) -> list[str]:
        """Finish the bookkeeping of sessions a killed run left without an item_end.

        ``state.open_sessions`` holds every session with an ``attempt_start`` (written as soon as the
        session is created) or a turn record, and no ``attempt_error`` or ``item_end``. If the server
        ended such a session for good (answer, budget, token_limit, max_turns) the attempt counts: an
        item_end is rebuilt from the server's end (termination, answer, budget) and the turn records,
        marked ``"recovered": true``, so an acknowledged answer is never run a second time. The server's
        end comes from the checkpoint log at ``log_path`` (in-process server) or from
        ``GET /sessions/{id}`` (``log_path`` None: a running server). Otherwise the session is ended as
        abandoned (when the server still knows it) and the item is run again. Returns the recovered items.
        """
        wanted = set(state.open_sessions)
        ends: dict[str, dict] = {}
        logged_turns: dict[str, int] = {}
        if log_path is not None and log_path.exists():
            from agenthop.server.log import read_records as read_checkpoint

            for rec in read_checkpoint(log_path):
                sid = rec.get("session_id")
                if not isinstance(sid, str) or sid not in wanted:  # wanted holds strings only
                    continue
                if rec.get("kind") == "session_end":
                    ends[sid] = rec
                elif rec.get("kind") == "call" and isinstance(rec.get("turn"), int):
                    logged_turns[sid] = max(logged_turns.get(sid, 0), rec["turn"])
        recovered: list[str] = []
        for sid, item in state.open_sessions.items():
            if item in state.final or item in recovered:
                continue
            end = ends.get(sid)
            if log_path is None:
                try:
                    info = await self.api.get_session(sid)
                except ServerError:
                    info = {}
                if info.get("ended"):
                    end = {
                        "termination": info.get("termination"),
                        "answer": info.get("answer"),
                        "budget_used": info.get("budget_used"),
                        "time": time.time(),
                    }
            if end is not None and end.get("termination") in SETTLED:
                turns = [t for t in state.turns if t.get("session_id") == sid]
                start = state.starts.get(sid) or {}
                began = start.get("time") or min((t.get("time") or 0 for t in turns), default=0)
                record = self._item_end(
                    item,
                    sid,
                    start.get("attempt") or max((t.get("attempt") or 1 for t in turns), default=1),
                    end["termination"],
                    end.get("answer"),
                    # The turn that ended the session may not have reached runner.jsonl; the calls the server
                    # logged carry their turn numbers.
                    max([t.get("turn") or 0 for t in turns] + [logged_turns.get(sid, 0)]),
                    sum(t.get("prompt_tokens") or 0 for t in turns),
                    sum(t.get("completion_tokens") or 0 for t in turns),
                    sum(t.get("cached_tokens") or 0 for t in turns),
                    end.get("budget_used"),
                    (end.get("time") or 0) - began if began else 0.0,
                    recovered=True,
                )
                self.writer.write(ItemEnd.model_validate(record))
                recovered.append(item)
            else:
                try:
                    await self.api.end_session(sid, "abandoned", "runner was interrupted; the item is run again")
                except ServerError:
                    pass
        return recovered


def _question(prompt: str) -> str:
    """The question line of a research_task prompt, for the read-first gate (the whole text if it has none)."""
    try:
        return parse_task(prompt)["question"]
    except TaskParseError:
        return prompt


def _add(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b
