"""Orchestration: one session per item, attempts and item retries, resume, concurrency, the run directory."""

from __future__ import annotations

import asyncio
import json
import platform
import shutil
import time
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from urllib.parse import urlparse

from agenthop.runner.config import RunSettings
from agenthop.runner.episode import Episode
from agenthop.runner.pricing import PriceTable
from agenthop.runner.progress import ProgressView
from agenthop.runner.readfirst import ReadFirstGate
from agenthop.runner.records import RUNNER_FILE, RecordWriter, load_state
from agenthop.runner.retry import describe
from agenthop.runner.session import ALL_TOOLS, McpSession, ServerAPI, ServerError

MANIFEST = "run.json"
SERVER_LOG = "server-log.sqlite"
# Settings that must match for a resumed run to continue the same experiment.
RESUME_KEYS = ("agent", "model", "caps", "ablations", "corpus")


class RunError(Exception):
    """The run cannot start; the message says why and what to do."""


def versions() -> dict:
    out = {"python": platform.python_version()}
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


def manifest(settings: RunSettings, corpus: dict | None, server_url: str | None, items_file: str) -> dict:
    return {
        "run": settings.run_label,
        "agent": settings.agent,
        "model": settings.model,
        "caps": session_caps(settings),
        "ablations": settings.ablations(),
        "disabled_tools": disabled_tools(settings),
        "base_url_host": base_url_host(settings.base_url) if settings.agent != "baseline" else None,
        "api_key_env": settings.api_key_env if settings.agent != "baseline" else None,
        "retry": {"max_retries": settings.retry.max_retries, "backoff": settings.retry.backoff, "timeout": settings.retry.timeout,
                  "item_attempts": settings.item_attempts},
        "workers": settings.workers,
        "server": server_url or "in-process",
        "items_file": items_file,
        "corpus": corpus,
        "versions": versions(),
    }


def prepare_run_dir(out: Path, man: dict, resume: bool) -> None:
    """Create the run directory; on --no-resume move old records aside; refuse to resume a different experiment."""
    out.mkdir(parents=True, exist_ok=True)
    runner_file = out / RUNNER_FILE
    old_manifest = out / MANIFEST
    if not resume:
        if runner_file.exists() or (out / SERVER_LOG).exists():
            aside = out / f"previous-{time.strftime('%Y%m%d-%H%M%S')}"
            aside.mkdir()
            for name in (RUNNER_FILE, MANIFEST, SERVER_LOG, SERVER_LOG + "-wal", SERVER_LOG + "-shm"):
                if (out / name).exists():
                    shutil.move(str(out / name), str(aside / name))
    elif runner_file.exists() and old_manifest.exists():
        old = json.loads(old_manifest.read_text())
        diffs = [k for k in RESUME_KEYS if old.get(k) != man.get(k) and not (k == "corpus" and (old.get(k) is None or man.get(k) is None))]
        if diffs:
            raise RunError(
                f"{out} holds a run with different settings ({', '.join(diffs)}); resuming would mix two experiments. "
                "Use --no-resume to start over (the old records are moved aside) or choose another --out."
            )
    tmp = out / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(man, indent=2) + "\n")
    tmp.replace(out / MANIFEST)


@dataclass
class Totals:
    """Spend of this invocation across all attempts (for the progress line)."""

    tokens: int = 0
    cost: float | None = 0.0
    done: int = 0
    correct: int = 0
    graded: int = 0
    terminations: dict = field(default_factory=dict)


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
        self.client = None
        if settings.agent in ("raw", "sdk"):
            from agenthop.runner.raw_agent import make_client

            self.client = make_client(settings)
        self.client_info = {"name": "agenthop-runner", "version": versions().get("agenthop"), "agent": settings.agent, "model": settings.model}

    async def aclose(self) -> None:
        if self.client is not None:
            await self.client.close()

    def cost(self, ep: Episode) -> float | None:
        return self.prices.cost(self.settings.model, ep.prompt_tokens, ep.completion_tokens, ep.cached_tokens)

    async def _attempt(self, info, item_id: str, attempt: int, holder: list) -> str | None:
        s = self.settings
        gate_question = None
        if s.read_first:
            gate_question = ""
        if s.agent == "sdk":
            from agenthop.runner.sdk_agent import make_sdk_parts, run_sdk

            server, model, ref = make_sdk_parts(info, s, self.client)
            async with server:
                ep = self._episode(info, item_id, attempt, server.issue, gate_question)
                holder.append(ep)
                ref.ep = ep
                if ep.gate is not None:
                    ep.gate.question = await self._question(server=server)
                return await run_sdk(ep, server, model, s)
        async with McpSession(info, timeout=s.mcp_timeout) as mcp:
            ep = self._episode(info, item_id, attempt, mcp.call_tool, gate_question)
            holder.append(ep)
            if ep.gate is not None:
                ep.gate.question = await self._question(mcp=mcp)
            if s.agent == "raw":
                from agenthop.runner.raw_agent import run_raw

                return await run_raw(ep, mcp, self.client, s)
            from agenthop.runner.baseline import run_baseline

            return await run_baseline(ep, mcp, s)

    async def _question(self, mcp=None, server=None) -> str:
        import re

        if mcp is not None:
            text = await mcp.task_prompt()
        else:
            prompt = await server.get_prompt("research_task")
            text = "\n".join(getattr(m.content, "text", "") for m in prompt.messages)
        m = re.search(r"^Question:\s*(.+)$", text, re.M)
        return m.group(1) if m else text

    def _episode(self, info, item_id, attempt, issue, gate_question) -> Episode:
        gate = ReadFirstGate(gate_question) if gate_question is not None else None
        return Episode(
            run=self.settings.run_label, item_id=item_id, attempt=attempt, session=info, caps=self.settings.caps,
            writer=self.writer, issue=issue, gate=gate,
        )

    async def run_item(self, item_id: str) -> dict:
        s = self.settings
        t0 = time.time()
        spent_tokens = 0
        spent_cost: float | None = 0.0
        info = None
        for attempt in range(1, s.item_attempts + 1):
            info = None
            holder: list[Episode] = []
            try:
                info = await self.api.create_session(item_id, s.run_label, session_caps(s), disabled_tools(s), self.client_info)
                termination = await self._attempt(info, item_id, attempt, holder)
                ep = holder[0]
                ep.flush_turn()
                reason = {"token_limit": f"{ep.cumulative} tokens > cap {s.caps.max_tokens}",
                          "max_turns": f"{ep.turn} turns, cap {1 if s.closed_book else s.caps.max_turns}"}.get(termination or "", "")
                if termination is not None:
                    await self.api.end_session(info.session_id, termination, reason)
                state = await self.api.get_session(info.session_id)
                if not state.get("ended"):
                    await self.api.end_session(info.session_id, "abandoned", "the agent stopped without an ending")
                    state = await self.api.get_session(info.session_id)
                final = state.get("termination") or termination or "abandoned"
                cost = self.cost(ep)
                record = {
                    "kind": "item_end", "run": s.run_label, "item_id": item_id, "session_id": info.session_id,
                    "attempt": attempt, "termination": final, "answer": ep.answer if final == "answer" else None,
                    "turns": ep.turn, "prompt_tokens": ep.prompt_tokens, "completion_tokens": ep.completion_tokens,
                    "cached_tokens": ep.cached_tokens, "total_tokens": ep.cumulative,
                    "budget_used": state.get("budget_used", ep.budget_used), "cost_usd": cost,
                    "wall_time_s": round(time.time() - t0, 3), "time": time.time(),
                }
                self.writer.write(record)
                self._account(record, spent_tokens + ep.cumulative, _add(spent_cost, cost))
                return record
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - any failure ends the attempt
                ep = holder[0] if holder else None
                if ep is not None:
                    ep.flush_turn()
                    spent_tokens += ep.cumulative
                    spent_cost = _add(spent_cost, self.cost(ep))
                message = describe(exc) if not isinstance(exc, ServerError) else str(exc)
                self.writer.write({
                    "kind": "attempt_error", "run": s.run_label, "item_id": item_id,
                    "session_id": info.session_id if info else None, "attempt": attempt, "error": message, "time": time.time(),
                })
                if info is not None:
                    try:
                        await self.api.end_session(info.session_id, "error", message[:1900])
                    except ServerError:
                        pass
                if attempt < s.item_attempts:
                    await asyncio.sleep(s.retry.delay(attempt))
        ep = holder[0] if holder else None
        record = {
            "kind": "item_end", "run": s.run_label, "item_id": item_id, "session_id": info.session_id if info else None,
            "attempt": s.item_attempts, "termination": "error", "answer": None,
            "turns": ep.turn if ep else 0, "prompt_tokens": ep.prompt_tokens if ep else 0,
            "completion_tokens": ep.completion_tokens if ep else 0, "cached_tokens": ep.cached_tokens if ep else 0,
            "total_tokens": ep.cumulative if ep else 0, "budget_used": ep.budget_used if ep else 0,
            "cost_usd": self.cost(ep) if ep else None, "wall_time_s": round(time.time() - t0, 3), "time": time.time(),
        }
        self.writer.write(record)
        self._account(record, spent_tokens, spent_cost)
        return record

    def _account(self, record: dict, tokens: int, cost: float | None) -> None:
        if self.progress is not None:
            correct = None
            if self.gold is not None and record["item_id"] in self.gold:
                answer = record.get("answer")
                correct = answer is not None and "ABCD".find(answer) == self.gold[record["item_id"]]
            self.progress.item_done(record, tokens, cost, correct)

    async def run_items(self, items: list[str]) -> None:
        sem = asyncio.Semaphore(max(1, self.settings.workers))

        async def one(item_id: str) -> None:
            async with sem:
                await self.run_item(item_id)

        tasks = [asyncio.create_task(one(i)) for i in items]
        try:
            await asyncio.gather(*tasks)
        finally:
            for t in tasks:
                t.cancel()

    async def recover(self, state, log_path: Path | None) -> list[str]:
        """Finish the bookkeeping of sessions a killed run left without an item_end.

        If the server ended such a session for good (answer, budget, token_limit, max_turns) the
        attempt counts: an item_end is rebuilt from its turn records and the server's end record
        (marked ``"recovered": true``), so an acknowledged answer is never run a second time.
        Otherwise the session is ended as abandoned (when the server still knows it) and the item
        is run again.
        """
        ends: dict[str, dict] = {}
        if log_path is not None and log_path.exists():
            from agenthop.server.checkpoint import read_records as read_checkpoint

            wanted = set(state.open_sessions)
            for rec in read_checkpoint(log_path):
                if rec.get("kind") == "session_end" and rec.get("session_id") in wanted:
                    ends[rec["session_id"]] = rec
        recovered = []
        for sid, item in state.open_sessions.items():
            if item in state.final or item in recovered:
                continue
            end = ends.get(sid)
            turns = [t for t in state.turns if t.get("session_id") == sid]
            if end is None and log_path is None:
                try:
                    info = await self.api.get_session(sid)
                except ServerError:
                    info = {}
                if info.get("ended"):
                    answer = None
                    for t in turns:
                        for c in t.get("tool_calls") or []:
                            if c.get("name") == "submit_answer" and isinstance(c.get("arguments"), dict):
                                answer = c["arguments"].get("answer")
                    end = {"termination": info.get("termination"), "answer": answer, "budget_used": info.get("budget_used"),
                           "time": time.time()}
            if end is not None and end.get("termination") in ("answer", "budget", "token_limit", "max_turns"):
                prompt = sum(t.get("prompt_tokens") or 0 for t in turns)
                completion = sum(t.get("completion_tokens") or 0 for t in turns)
                cached = sum(t.get("cached_tokens") or 0 for t in turns)
                record = {
                    "kind": "item_end", "run": self.settings.run_label, "item_id": item, "session_id": sid,
                    "attempt": max((t.get("attempt") or 1 for t in turns), default=1), "termination": end["termination"],
                    "answer": end.get("answer") if end["termination"] == "answer" else None,
                    "turns": max((t.get("turn") or 0 for t in turns), default=0), "prompt_tokens": prompt,
                    "completion_tokens": completion, "cached_tokens": cached, "total_tokens": prompt + completion,
                    "budget_used": end.get("budget_used"), "cost_usd": self.prices.cost(self.settings.model, prompt, completion, cached),
                    "wall_time_s": round(max(0.0, (end.get("time") or 0) - min((t["time"] for t in turns), default=0)), 3),
                    "recovered": True, "time": time.time(),
                }
                self.writer.write(record)
                recovered.append(item)
            else:
                try:
                    await self.api.end_session(sid, "abandoned", "runner was interrupted; the item is run again")
                except ServerError:
                    pass
        return recovered


def _add(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def summarise(runner_file: Path, items: list[str], gold: dict[str, int] | None, prices: PriceTable, model: str) -> dict:
    """The run's standing from runner.jsonl (all invocations), over the given items."""
    state = load_state(runner_file)
    wanted = set(items)
    finals = {i: r for i, r in state.final.items() if i in wanted}
    errored = {i: r for i, r in state.errored.items() if i in wanted}
    ends = list(finals.values()) + list(errored.values())
    terminations: dict[str, int] = {}
    for r in ends:
        terminations[r["termination"]] = terminations.get(r["termination"], 0) + 1
    correct = graded = 0
    if gold is not None:
        for r in ends:
            if r["item_id"] in gold:
                graded += 1
                a = r.get("answer")
                correct += a is not None and "ABCD".find(a) == gold[r["item_id"]]
    turns = [t for t in state.turns if t.get("item_id") in wanted]
    prompt = sum(t.get("prompt_tokens") or 0 for t in turns)
    completion = sum(t.get("completion_tokens") or 0 for t in turns)
    cached = sum(t.get("cached_tokens") or 0 for t in turns)
    n = len(ends)
    return {
        "items": len(items),
        "finished": len(finals),
        "errored": len(errored),
        "not_run": len(items) - n,
        "answered": sum(1 for r in ends if r.get("answer")),
        "accuracy": (correct / graded) if graded else None,
        "correct": correct,
        "graded": graded,
        "terminations": terminations,
        "mean_turns": (sum(r["turns"] for r in ends) / n) if n else None,
        "mean_budget": (sum(r.get("budget_used") or 0 for r in ends) / n) if n else None,
        "mean_tokens": (sum(r.get("total_tokens") or 0 for r in ends) / n) if n else None,
        "tokens_all_attempts": {"prompt": prompt, "completion": completion, "cached": cached, "total": prompt + completion},
        "cost_usd": prices.cost(model, prompt, completion, cached),
        "wall_time_s_sum": sum(r.get("wall_time_s") or 0 for r in ends),
    }
