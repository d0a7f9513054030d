"""Server latency and throughput, measured side by side in one run.

    python bench/bench_server.py --corpus corpus.sqlite [--calls 200] [--out bench/out/server.json]
    python bench/bench_server.py --corpus corpus.sqlite --only floor      # just section 4 (the ratios against a no-op tool)

1. Per-tool latency (median, p99): the tool function called directly in-process,
   the same call through Session.call (metering + durable log), over stdio (a
   subprocess server) and over Streamable HTTP (a subprocess server on loopback).
2. HTTP throughput with 1, 8 and 64 concurrent sessions.
3. Search latency on the largest item neighbourhood and in explore mode over the
   whole corpus, next to SQLite FTS5's bm25() on the same documents (and
   rank-bm25 on the neighbourhood, when installed).
4. The floor: AgentHop's cheapest tool (think) against a no-op tool served by the
   same MCP SDK on the same transport (stdio and HTTP), with and without the same
   fsync'd log record per call, and HTTP throughput at 64 concurrent sessions
   against the no-op server that writes that record. Rounds rotate which server
   goes first; each ratio is the median over rounds with its spread (min-max).
5. The anchor: per tool, AgentHop's p50 over stdio and HTTP against the anchor, a server that does
   only the tool's own work (the same function on the same arguments, in-process) and writes the no-op's
   fsync'd record in the same worker thread; also against the function's in-process p50 plus the no-op-with-
   record's p50. Then the realistic mix (search, references, list and read sections, info, think) at 64 HTTP
   sessions against the anchor, the bare no-op and the no-op with the record: calls/s, p99, and each server
   process's CPU per call. Raw JSON-RPC clients (2026-07-28), so the client's cost is the same for every server.
   ``--explore`` serves the whole corpus instead of the item; ``--agenthop-python`` runs AgentHop's server from
   another checkout's venv (before/after comparisons of the ratios).
Ratios are what to read: this machine is shared and noisy.

    python bench/bench_server.py --corpus /tmp/ah/full.corpus.sqlite --only anchor [--explore] [--rounds 5 --per-round 20]

The no-op server is this file: ``python bench/bench_server.py serve-noop --transport stdio|http [--port N] [--log PATH]``.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx2
from mcp import Client, StdioServerParameters, types
from mcp.client.streamable_http import streamable_http_client
from mcp.server import Server

from agenthop.server.caps import Caps
from agenthop.server.log.checkpoint import CheckpointLog
from agenthop.server.search import ScopeIndex, tokenize
from agenthop.server.sections import alias
from agenthop.server.tools import TOOLS, Scope, ToolOutput
from agenthop.server.transport.mcp_app import INPUT_SCHEMAS, TOOL_DEFINITIONS, make_sandbox
from agenthop.server.transport.web import free_port

UNLIMITED = 10**9
AGENTHOP_PYTHON = sys.executable  # --agenthop-python: AgentHop's server from another checkout (the anchor section)


def quantiles(samples_ms: list[float]) -> dict:
    s = sorted(samples_ms)
    return {
        "median_ms": round(statistics.median(s), 3),
        "p99_ms": round(s[min(len(s) - 1, int(0.99 * len(s)))], 3),
        "n": len(s),
    }


def pick_workload(corpus_path: Path) -> tuple[str, dict[str, dict]]:
    """The item with the largest neighbourhood and one argument set per tool."""
    conn = sqlite3.connect(corpus_path)
    item, _ = conn.execute(
        "SELECT item_id, count(*) c FROM item_nodes GROUP BY item_id ORDER BY c DESC LIMIT 1"
    ).fetchone()
    seed, question = conn.execute("SELECT seed_paper_id, question FROM items WHERE item_id = ?", (item,)).fetchone()
    # The neighbourhood's longest section (the costliest read), and its paper for list_sections.
    paper, position = conn.execute(
        "SELECT p.paper_id, s.position FROM item_nodes n JOIN papers p USING (paper_id) JOIN sections s ON s.arxiv_id = p.arxiv_id "
        "WHERE n.item_id = ? AND p.has_text = 1 AND p.paper_id != ? ORDER BY length(s.text) DESC LIMIT 1",
        (item, seed),
    ).fetchone()
    args = {
        "search_papers": {"query": question, "top_k": 10},
        "get_paper_info": {"paper_id": seed},
        "get_references": {"paper_id": seed},
        "list_sections": {"paper_id": paper},
        "read_section": {"paper_id": paper, "section": alias(position)},
        "think": {"reasoning": "benchmark"},
    }
    return item, args


def bench_direct(corpus: Path, item: str, workload: dict, calls: int, tmp: Path) -> dict:
    log = CheckpointLog(tmp / "direct-log.sqlite")
    sandbox = make_sandbox(corpus, log, Caps(UNLIMITED, None, None))
    session = sandbox.sessions.create(sandbox.scope(item), run="bench-direct", caps=Caps(UNLIMITED, None, None))
    out = {}
    for name, args in workload.items():
        tool, parsed = TOOLS[name], TOOLS[name].args.model_validate(args)
        tool.run(sandbox.scope(item), parsed)  # warm caches (search index)
        direct, metered = [], []
        for _ in range(calls):
            t0 = time.perf_counter()
            tool.run(sandbox.scope(item), parsed)
            direct.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            session.call(name, args)
            metered.append((time.perf_counter() - t0) * 1000)
        out[name] = {"function": quantiles(direct), "session_call": quantiles(metered)}
    log.close()
    return out


async def _client_latency(client: Client, workload: dict, calls: int) -> dict:
    out = {}
    for name, args in workload.items():
        await client.call_tool(name, args)
        samples = []
        for _ in range(calls):
            t0 = time.perf_counter()
            result = await client.call_tool(name, args)
            samples.append((time.perf_counter() - t0) * 1000)
            assert not result.is_error or name == "read_section", result
        out[name] = quantiles(samples)
    return out


async def bench_stdio(corpus: Path, item: str, workload: dict, calls: int, tmp: Path) -> dict:
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "agenthop.server",
            "serve",
            "--corpus",
            str(corpus),
            "--item",
            item,
            "--run",
            "bench-stdio",
            "--log",
            str(tmp / "stdio-log.sqlite"),
            "--budget",
            str(UNLIMITED),
        ],
    )
    async with Client(params, read_timeout_seconds=60) as client:
        return await _client_latency(client, workload, calls)


class HttpServer:
    def __init__(self, corpus: Path, tmp: Path, python: str = sys.executable):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [
                python,
                "-m",
                "agenthop.server",
                "serve",
                "--transport",
                "http",
                "--port",
                str(self.port),
                "--corpus",
                str(corpus),
                "--log",
                str(tmp / "http-log.sqlite"),
                "--budget",
                str(UNLIMITED),
            ]
        )

    def wait_ready(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx2.get(self.base + "/health").status_code == 200:
                    return
            except httpx2.TransportError:
                time.sleep(0.1)
        raise RuntimeError("HTTP server did not start")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


async def _session(base: str, http: httpx2.AsyncClient, item: str, run: str) -> str:
    response = await http.post(base + "/sessions", json={"item": item, "run": run, "budget": None})
    return response.json()["mcp_url"]


async def bench_http(base: str, item: str, workload: dict, calls: int) -> dict:
    async with httpx2.AsyncClient() as http:
        url = await _session(base, http, item, "bench-http")
        async with Client(streamable_http_client(url, http_client=http)) as client:
            return await _client_latency(client, workload, calls)


async def bench_throughput(base: str, item: str, workload: dict, sessions: int, calls_each: int) -> dict:
    mix = [
        ("get_paper_info", workload["get_paper_info"]),
        ("search_papers", workload["search_papers"]),
        ("list_sections", workload["list_sections"]),
        ("think", workload["think"]),
    ]

    async def agent(i: int) -> None:
        async with httpx2.AsyncClient(timeout=120) as http:
            url = await _session(base, http, item, f"bench-tp-{sessions}")
            async with Client(streamable_http_client(url, http_client=http)) as client:
                for k in range(calls_each):
                    name, args = mix[k % len(mix)]
                    await client.call_tool(name, args)

    t0 = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for i in range(sessions):
            tg.start_soon(agent, i)
    wall = time.perf_counter() - t0
    total = sessions * calls_each
    return {"sessions": sessions, "calls": total, "wall_s": round(wall, 3), "calls_per_s": round(total / wall, 1)}


def bench_search(corpus: Path, item: str, queries: int) -> dict:
    conn = sqlite3.connect(corpus)
    rng = random.Random(0)
    questions = [q for (q,) in conn.execute("SELECT question FROM items")]
    sample = [rng.choice(questions) for _ in range(queries)]
    out = {}
    scopes = {
        "neighbourhood": conn.execute(
            "SELECT p.paper_id, p.title || char(10) || p.abstract FROM item_nodes n JOIN papers p USING (paper_id) "
            "WHERE n.item_id = ? ORDER BY n.position",
            (item,),
        ).fetchall(),
        "explore": conn.execute("SELECT paper_id, title || char(10) || abstract FROM papers ORDER BY rowid").fetchall(),
    }
    for scope, rows in scopes.items():
        ids, texts = [r[0] for r in rows], [r[1] for r in rows]
        t0 = time.perf_counter()
        index = ScopeIndex(ids, texts)
        build_s = time.perf_counter() - t0
        ours = []
        for q in sample:
            t0 = time.perf_counter()
            index.search(q, 10)
            ours.append((time.perf_counter() - t0) * 1000)
        fts = sqlite3.connect(":memory:")
        fts.execute("CREATE VIRTUAL TABLE docs USING fts5(body)")
        fts.executemany("INSERT INTO docs(rowid, body) VALUES (?, ?)", enumerate(texts))
        floor = []
        for q in sample:
            terms = " OR ".join(f'"{t}"' for t in tokenize(q))
            t0 = time.perf_counter()
            fts.execute("SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT 10", (terms,)).fetchall()
            floor.append((time.perf_counter() - t0) * 1000)
        entry = {
            "documents": len(ids),
            "index_build_s": round(build_s, 3),
            "agenthop_bm25s": quantiles(ours),
            "sqlite_fts5_bm25": quantiles(floor),
        }
        entry["ratio_median_vs_fts5"] = round(
            entry["agenthop_bm25s"]["median_ms"] / entry["sqlite_fts5_bm25"]["median_ms"], 2
        )
        try:
            from rank_bm25 import BM25Okapi

            if len(ids) <= 20_000:
                okapi = BM25Okapi([tokenize(t) for t in texts])
                rb = []
                for q in sample:
                    t0 = time.perf_counter()
                    okapi.get_top_n(tokenize(q), ids, 10)
                    rb.append((time.perf_counter() - t0) * 1000)
                entry["rank_bm25"] = quantiles(rb)
        except ImportError:
            pass
        out[scope] = entry
    return out


# --- 4. the floor: a no-op tool on the same SDK and transport -------------------------------------------

NOOP = types.Tool(
    name="noop",
    description="Does nothing.",
    input_schema={"type": "object", "properties": {"reasoning": {"type": "string"}}, "required": ["reasoning"]},
)


class ToolWork:
    """The tools' own work, as the anchor server does it: the same function on the same arguments (validated as the
    server validates them), over the same corpus and scope; no session, metering, record or status."""

    def __init__(self, corpus: Path, item: str | None):
        from agenthop.server.papers import Corpus
        from agenthop.server.search import SearchEngine

        opened = Corpus(corpus)
        self.scope = Scope(opened, SearchEngine(opened), item)

    def run(self, name: str, arguments: dict) -> ToolOutput:
        tool = TOOLS[name]
        return tool.run(self.scope, tool.args.model_validate(arguments))


def noop_server(log_path: str | None, work: ToolWork | None = None) -> Server:
    """The fastest server the SDK allows for one tool (input schema given, nothing else to do), optionally writing
    one fsync'd checkpoint record per call (the same writer and the same record shape as AgentHop's think).

    With ``work`` it is the anchor: it also serves AgentHop's tools by doing each tool's own work in the same worker
    thread that writes the record, and answers with the tool's text (no structured content beyond the outcome).
    """
    log = CheckpointLog(log_path) if log_path else None
    seq = 0

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[NOOP] + (list(TOOL_DEFINITIONS.values()) if work is not None else []))

    def work_and_record(name: str, arguments: dict, record: dict | None) -> tuple[str, str]:
        outcome, text = "ok", "Noted."
        if work is not None and name in TOOLS:
            output = work.run(name, arguments)
            outcome, text = output.outcome, output.text
        if record is not None:
            log.write({**record, "outcome": outcome, "output_chars": len(text)})
        return outcome, text

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        nonlocal seq
        arguments = params.arguments or {}
        record = None
        if log is not None:
            record = {
                "kind": "call",
                "run": "noop",
                "session_id": "noop",
                "item_id": None,
                "seq": seq,
                "time": time.time(),
                "tool": params.name,
                "arguments": arguments,
                "turn": None,
                "tokens": None,
                "forced": False,
                "outcome": "ok",
                "executed": True,
                "cost": 0,
                "budget_before": 0,
                "budget_after": 0,
                "latency_ms": 0.0,
                "exposed": [],
                "delivered": None,
                "output_chars": 6,
                "message": None,
            }
            seq += 1
        if log is None and work is None:
            outcome, text = "ok", "Noted."
        else:  # as AgentHop does: off the event loop, one hop for the work and the fsync'd record
            outcome, text = await anyio.to_thread.run_sync(work_and_record, params.name, arguments, record)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], structured_content={"outcome": outcome}
        )

    schemas = {"noop": NOOP.input_schema, **(INPUT_SCHEMAS if work is not None else {})}
    return Server(
        "noop", version="0", get_tool_input_schema=schemas.get, on_list_tools=list_tools, on_call_tool=call_tool
    )


def serve_noop(
    transport: str, port: int, log_path: str | None, corpus: str | None = None, item: str | None = None
) -> None:
    server = noop_server(log_path, ToolWork(Path(corpus), item) if corpus else None)
    if transport == "stdio":
        from mcp.server.stdio import stdio_server

        async def run() -> None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        anyio.run(run)
        return
    import uvicorn

    app = server.streamable_http_app(streamable_http_path="/mcp", json_response=True, host="127.0.0.1")  # as build_app
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


class NoopHttpServer(HttpServer):
    def __init__(self, tmp: Path, log: bool, tools: tuple[Path, str | None] | None = None):
        """``tools``: (corpus, item) for the anchor, which also does the tools' own work."""
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        extra = ["--log", str(tmp / f"noop-{self.port}.sqlite")] if log else []
        if tools is not None:
            extra += ["--tools", str(tools[0])] + (["--item", tools[1]] if tools[1] else [])
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "serve-noop", "--transport", "http", "--port", str(self.port), *extra]
        )

    def wait_ready(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                httpx2.get(self.base + "/mcp")  # any HTTP answer means it is listening
                return
            except httpx2.TransportError:
                time.sleep(0.1)
        raise RuntimeError("no-op HTTP server did not start")


def _spread(values: list[float]) -> dict:
    return {"median": round(statistics.median(values), 3), "min": round(min(values), 3), "max": round(max(values), 3)}


def _p(samples: list[float], q: float) -> float:
    s = sorted(samples)
    return s[min(len(s) - 1, int(q * len(s)))]


async def _interleaved_latency(clients: dict[str, tuple[Client, str, dict]], rounds: int, per_round: int) -> dict:
    """Rotate which server goes first, round by round; the first label's per-round median ratio to each other
    label, and overall p50/p99 of each."""
    labels = list(clients)
    samples: dict[str, list[float]] = {label: [] for label in labels}
    ratios: dict[str, list[float]] = {label: [] for label in labels[1:]}
    for client, name, args in clients.values():  # warm up
        for _ in range(10):
            await client.call_tool(name, args)
    for r in range(rounds):
        medians = {}
        for label in labels[r % len(labels) :] + labels[: r % len(labels)]:
            client, name, args = clients[label]
            got = []
            for _ in range(per_round):
                t0 = time.perf_counter()
                await client.call_tool(name, args)
                got.append((time.perf_counter() - t0) * 1000)
            samples[label] += got
            medians[label] = statistics.median(got)
        for other in labels[1:]:
            ratios[other].append(medians[labels[0]] / medians[other])
    ours = labels[0]
    out = {
        label: {"p50_ms": round(statistics.median(v), 3), "p99_ms": round(_p(v, 0.99), 3), "n": len(v)}
        for label, v in samples.items()
    }
    for other in labels[1:]:
        out[f"ratio_p50_vs_{other}"] = _spread(ratios[other])
        out[f"ratio_p99_vs_{other}"] = round(_p(samples[ours], 0.99) / _p(samples[other], 0.99), 2)
    out[f"{ours}_p99_over_p50"] = round(_p(samples[ours], 0.99) / statistics.median(samples[ours]), 2)
    return out


THINK = ("think", {"reasoning": "benchmark"})
NOOP_CALL = ("noop", {"reasoning": "benchmark"})


async def floor_stdio(corpus: Path, item: str, tmp: Path, rounds: int, per_round: int) -> dict:
    ours = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "agenthop.server",
            "serve",
            "--corpus",
            str(corpus),
            "--item",
            item,
            "--run",
            "bench-floor",
            "--log",
            str(tmp / "floor-stdio.sqlite"),
            "--budget",
            str(UNLIMITED),
        ],
    )
    noop = StdioServerParameters(command=sys.executable, args=[__file__, "serve-noop", "--transport", "stdio"])
    noop_fsync = StdioServerParameters(
        command=sys.executable,
        args=[__file__, "serve-noop", "--transport", "stdio", "--log", str(tmp / "noop-stdio.sqlite")],
    )
    async with (
        Client(ours, read_timeout_seconds=60) as a,
        Client(noop, read_timeout_seconds=60) as b,
        Client(noop_fsync, read_timeout_seconds=60) as c,
    ):
        return await _interleaved_latency(
            {"agenthop_think": (a, *THINK), "noop": (b, *NOOP_CALL), "noop_fsync": (c, *NOOP_CALL)}, rounds, per_round
        )


async def floor_http(
    ours_base: str, noop_base: str, noop_fsync_base: str, item: str, rounds: int, per_round: int
) -> dict:
    async with (
        httpx2.AsyncClient(timeout=60) as h1,
        httpx2.AsyncClient(timeout=60) as h2,
        httpx2.AsyncClient(timeout=60) as h3,
    ):
        url = await _session(ours_base, h1, item, "bench-floor")
        async with (
            Client(streamable_http_client(url, http_client=h1)) as a,
            Client(streamable_http_client(noop_base + "/mcp", http_client=h2)) as b,
            Client(streamable_http_client(noop_fsync_base + "/mcp", http_client=h3)) as c,
        ):
            return await _interleaved_latency(
                {"agenthop_think": (a, *THINK), "noop": (b, *NOOP_CALL), "noop_fsync": (c, *NOOP_CALL)},
                rounds,
                per_round,
            )


async def _concurrent(base: str, item: str | None, sessions: int, calls_each: int) -> dict:
    """``sessions`` clients connected first, then all start at once; calls/s and per-call p50/p99 of the calls only."""
    latencies: list[float] = []
    connected, go = anyio.Event(), anyio.Event()
    ready = 0
    finished: list[float] = []

    async def agent() -> None:
        nonlocal ready
        async with httpx2.AsyncClient(timeout=120) as http:
            url = await _session(base, http, item, f"bench-floor-{sessions}") if item else base + "/mcp"
            name = "think" if item else "noop"
            async with Client(streamable_http_client(url, http_client=http)) as client:
                await client.call_tool(name, {"reasoning": "warm"})
                ready += 1
                if ready == sessions:
                    connected.set()
                await go.wait()
                for _ in range(calls_each):
                    t0 = time.perf_counter()
                    await client.call_tool(name, {"reasoning": "benchmark"})
                    latencies.append((time.perf_counter() - t0) * 1000)
                finished.append(time.perf_counter())

    async with anyio.create_task_group() as tg:
        for _ in range(sessions):
            tg.start_soon(agent)
        await connected.wait()
        start = time.perf_counter()
        go.set()
    wall = max(finished) - start
    return {
        "calls_per_s": round(sessions * calls_each / wall, 1),
        "p50_ms": round(statistics.median(latencies), 1),
        "p99_ms": round(_p(latencies, 0.99), 1),
    }


async def floor_throughput(
    ours_base: str, noop_base: str, item: str, sessions: int, calls_each: int, rounds: int
) -> dict:
    runs: dict[str, list[dict]] = {"agenthop_think": [], "noop_fsync": []}
    for r in range(rounds):
        order = [("agenthop_think", ours_base, item), ("noop_fsync", noop_base, None)]
        for label, base, it in order if r % 2 == 0 else order[::-1]:
            runs[label].append(await _concurrent(base, it, sessions, calls_each))
    ratios = [a["calls_per_s"] / b["calls_per_s"] for a, b in zip(runs["agenthop_think"], runs["noop_fsync"])]
    return {
        "sessions": sessions,
        "calls_each": calls_each,
        "rounds": runs,
        "ratio_calls_per_s": _spread(ratios),
        "agenthop_p99_ms": _spread([x["p99_ms"] for x in runs["agenthop_think"]]),
    }


def bench_floor(corpus: Path, item: str, tmp: Path, rounds: int, per_round: int, tp_calls: int, tp_rounds: int) -> dict:
    result = {"stdio": anyio.run(floor_stdio, corpus, item, tmp, rounds, per_round)}
    ours, noop, noop_fsync = HttpServer(corpus, tmp), NoopHttpServer(tmp, log=False), NoopHttpServer(tmp, log=True)
    try:
        for server in (ours, noop, noop_fsync):
            server.wait_ready()
        result["http"] = anyio.run(floor_http, ours.base, noop.base, noop_fsync.base, item, rounds, per_round)
        result["http_64_sessions"] = anyio.run(
            floor_throughput, ours.base, noop_fsync.base, item, 64, tp_calls, tp_rounds
        )
    finally:
        for server in (ours, noop, noop_fsync):
            server.stop()
    return result


# --- 5. the anchor: each tool's own work plus the no-op-with-record server's per-call cost ----------------------
#
# Raw JSON-RPC clients (2026-07-28, no handshake), so the client costs the same whichever server answers: the MCP
# client would validate AgentHop's structured results against their output schemas and the no-op's not at all.

PROTOCOL = "2026-07-28"
RAW_META = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL,
    "io.modelcontextprotocol/clientInfo": {"name": "bench-server", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
MIX = ["search_papers", "get_references", "list_sections", "read_section", "get_paper_info", "think"]


def _request(request_id: int, name: str, arguments: dict) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": RAW_META},
        }
    ).encode()


def _checked(reply: dict, name: str) -> dict:
    result = reply.get("result")
    if result is None or result.get("isError"):
        raise RuntimeError(f"{name} failed: {json.dumps(reply)[:500]}")
    return result


class RawHttp:
    """One JSON-RPC tools/call per POST, as an agent framework with its own client sends it."""

    def __init__(self, http: httpx2.AsyncClient, url: str):
        self.http, self.url, self.n = http, url, 0

    async def call(self, name: str, arguments: dict) -> dict:
        self.n += 1
        response = await self.http.post(
            self.url,
            content=_request(self.n, name, arguments),
            headers={
                "mcp-protocol-version": PROTOCOL,
                "mcp-method": "tools/call",
                "mcp-name": name,
                "accept": "application/json, text/event-stream",
                "content-type": "application/json",
            },
        )
        return _checked(response.json(), name)


class RawStdio:
    """A server subprocess driven by newline-delimited JSON-RPC on its stdin and stdout."""

    def __init__(self, args: list[str], stderr: Path, python: str = sys.executable):
        self.args, self.stderr, self.python, self.n = args, stderr, python, 0

    async def __aenter__(self) -> RawStdio:
        from anyio.streams.buffered import BufferedByteReceiveStream

        self.proc = await anyio.open_process([self.python, *self.args], stderr=self.stderr.open("wb"))
        self.reader = BufferedByteReceiveStream(self.proc.stdout)
        return self

    async def __aexit__(self, *exc) -> None:
        await self.proc.stdin.aclose()
        with anyio.move_on_after(10):
            await self.proc.wait()
        if self.proc.returncode is None:
            self.proc.kill()

    @property
    def pid(self) -> int:
        return self.proc.pid

    async def call(self, name: str, arguments: dict) -> dict:
        self.n += 1
        await self.proc.stdin.send(_request(self.n, name, arguments) + b"\n")
        while True:  # skip notifications (none expected)
            reply = json.loads(await self.reader.receive_until(b"\n", 64 * 2**20))
            if reply.get("id") == self.n:
                return _checked(reply, name)


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far (Linux /proc)."""
    import os

    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _timed(client, name: str, args: dict, n: int) -> float:
    got = []
    for _ in range(n):
        t0 = time.perf_counter()
        await client.call(name, args)
        got.append((time.perf_counter() - t0) * 1000)
    return statistics.median(got)


def _timed_function(work: ToolWork, name: str, args: dict, n: int) -> float:
    got = []
    for _ in range(n):
        t0 = time.perf_counter()
        work.run(name, args)
        got.append((time.perf_counter() - t0) * 1000)
    return statistics.median(got)


async def anchor_latency(clients: dict, workload: dict, work: ToolWork, rounds: int, per_round: int) -> dict:
    """Per tool, p50 over the transport of AgentHop and of the anchor server, the function in-process, and the two
    no-ops, rounds rotating which goes first. Ratios are medians of per-round ratios (min-max)."""
    labels = list(clients) + ["function"]
    tools = list(workload)
    for label, client in clients.items():  # warm up (search indexes, connections)
        for name in tools if label in ("agenthop", "anchor") else ["noop"]:
            for _ in range(5):
                await client.call(name, workload.get(name, {"reasoning": "warm"}))
    rows: list[dict] = []
    for r in range(rounds):
        med: dict[tuple[str, str], float] = {}
        for label in labels[r % len(labels) :] + labels[: r % len(labels)]:
            if label == "function":
                for name in tools:
                    med[label, name] = _timed_function(work, name, workload[name], per_round)
            elif label in ("agenthop", "anchor"):
                for name in tools:
                    med[label, name] = await _timed(clients[label], name, workload[name], per_round)
            else:
                med[label, "noop"] = await _timed(clients[label], "noop", {"reasoning": "benchmark"}, per_round)
        rows.append(med)
    out: dict = {
        "noop_p50_ms": _spread([m["noop", "noop"] for m in rows]),
        "noop_fsync_p50_ms": _spread([m["noop_fsync", "noop"] for m in rows]),
        "tools": {},
    }
    for name in tools:
        out["tools"][name] = {
            "agenthop_p50_ms": _spread([m["agenthop", name] for m in rows]),
            "anchor_p50_ms": _spread([m["anchor", name] for m in rows]),
            "function_p50_ms": _spread([m["function", name] for m in rows]),
            "ratio_vs_anchor_server": _spread([m["agenthop", name] / m["anchor", name] for m in rows]),
            "ratio_vs_function_plus_noop_fsync": _spread(
                [m["agenthop", name] / (m["function", name] + m["noop_fsync", "noop"]) for m in rows]
            ),
            "ratio_vs_noop_fsync": _spread([m["agenthop", name] / m["noop_fsync", "noop"] for m in rows]),
        }
    return out


def _stdio_args(kind: str, corpus: Path, item: str | None, tmp: Path) -> list[str]:
    if kind == "agenthop":
        return [
            "-m",
            "agenthop.server",
            "serve",
            "--corpus",
            str(corpus),
            *(["--item", item] if item else []),
            "--run",
            "bench-anchor",
            "--log",
            str(tmp / "anchor-agenthop.sqlite"),
            "--budget",
            str(UNLIMITED),
        ]
    extra = {
        "noop": [],
        "noop_fsync": ["--log", str(tmp / "anchor-noop.sqlite")],
        "anchor": [
            "--log",
            str(tmp / "anchor-anchor.sqlite"),
            "--tools",
            str(corpus),
            *(["--item", item] if item else []),
        ],
    }[kind]
    return [__file__, "serve-noop", "--transport", "stdio", *extra]


async def anchor_stdio(corpus: Path, item: str | None, workload: dict, tmp: Path, rounds: int, per_round: int) -> dict:
    work = ToolWork(corpus, item)
    kinds = ["agenthop", "anchor", "noop", "noop_fsync"]
    async with (
        RawStdio(_stdio_args(kinds[0], corpus, item, tmp), tmp / "s0.err", AGENTHOP_PYTHON) as a,
        RawStdio(_stdio_args(kinds[1], corpus, item, tmp), tmp / "s1.err") as b,
        RawStdio(_stdio_args(kinds[2], corpus, item, tmp), tmp / "s2.err") as c,
        RawStdio(_stdio_args(kinds[3], corpus, item, tmp), tmp / "s3.err") as d,
    ):
        return await anchor_latency(dict(zip(kinds, (a, b, c, d))), workload, work, rounds, per_round)


class AnchorHttp:
    """The four HTTP servers of the anchor comparison, each in its own process."""

    def __init__(self, corpus: Path, item: str | None, tmp: Path):
        self.item = item
        self.servers = {
            "agenthop": HttpServer(corpus, tmp, AGENTHOP_PYTHON),
            "anchor": NoopHttpServer(tmp, log=True, tools=(corpus, item)),
            "noop": NoopHttpServer(tmp, log=False),
            "noop_fsync": NoopHttpServer(tmp, log=True),
        }

    def __enter__(self) -> AnchorHttp:
        try:
            for server in self.servers.values():
                server.wait_ready()
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        for server in self.servers.values():
            server.stop()

    async def url(self, kind: str, http: httpx2.AsyncClient, run: str) -> str:
        base = self.servers[kind].base
        if kind != "agenthop":
            return base + "/mcp"
        response = await http.post(base + "/sessions", json={"item": self.item, "run": run, "budget": None})
        return response.json()["mcp_url"]


async def anchor_http(servers: AnchorHttp, workload: dict, work: ToolWork, rounds: int, per_round: int) -> dict:
    async with httpx2.AsyncClient(timeout=60) as http:
        clients = {kind: RawHttp(http, await servers.url(kind, http, "bench-anchor")) for kind in servers.servers}
        return await anchor_latency(clients, workload, work, rounds, per_round)


async def _mix_load(servers: AnchorHttp, kind: str, workload: dict, sessions: int, calls_each: int) -> dict:
    """``sessions`` raw clients connected (one warm-up call each) first, then all start at once. AgentHop and the
    anchor get the realistic mix (each session starting at another tool of it); the no-ops get their one call."""
    latencies: list[float] = []
    connected, go = anyio.Event(), anyio.Event()
    ready = 0
    finished: list[float] = []
    mix = MIX if kind in ("agenthop", "anchor") else ["noop"]

    async def agent(i: int) -> None:
        nonlocal ready
        async with httpx2.AsyncClient(timeout=120) as http:
            client = RawHttp(http, await servers.url(kind, http, f"bench-mix-{sessions}"))
            await client.call(mix[-1], workload.get(mix[-1], {"reasoning": "warm"}))
            ready += 1
            if ready == sessions:
                connected.set()
            await go.wait()
            for k in range(calls_each):
                name = mix[(i + k) % len(mix)]
                t0 = time.perf_counter()
                await client.call(name, workload.get(name, {"reasoning": "benchmark"}))
                latencies.append((time.perf_counter() - t0) * 1000)
            finished.append(time.perf_counter())

    pid = servers.servers[kind].proc.pid
    async with anyio.create_task_group() as tg:
        for i in range(sessions):
            tg.start_soon(agent, i)
        await connected.wait()
        cpu0, start = cpu_seconds(pid), time.perf_counter()
        go.set()
    wall, cpu = max(finished) - start, cpu_seconds(pid) - cpu0
    calls = sessions * calls_each
    return {
        "calls_per_s": round(calls / wall, 1),
        "p50_ms": round(statistics.median(latencies), 1),
        "p99_ms": round(_p(latencies, 0.99), 1),
        "server_cpu_ms_per_call": round(cpu * 1000 / calls, 3),
    }


async def anchor_mix(servers: AnchorHttp, workload: dict, sessions: int, calls_each: int, rounds: int) -> dict:
    kinds = list(servers.servers)
    runs: dict[str, list[dict]] = {kind: [] for kind in kinds}
    for r in range(rounds):
        for kind in kinds[r % len(kinds) :] + kinds[: r % len(kinds)]:
            runs[kind].append(await _mix_load(servers, kind, workload, sessions, calls_each))
    ours = runs["agenthop"]
    out = {
        "sessions": sessions,
        "calls_each": calls_each,
        "mix": MIX,
        "rounds": runs,
        "agenthop_p99_ms": _spread([x["p99_ms"] for x in ours]),
    }
    for other in kinds[1:]:
        out[f"calls_per_s_vs_{other}"] = _spread(
            [a["calls_per_s"] / b["calls_per_s"] for a, b in zip(ours, runs[other])]
        )
        out[f"p99_ms_{other}"] = _spread([x["p99_ms"] for x in runs[other]])
    out["server_cpu_per_call_vs_anchor"] = _spread(
        [a["server_cpu_ms_per_call"] / b["server_cpu_ms_per_call"] for a, b in zip(ours, runs["anchor"])]
    )
    out["server_cpu_ms_per_call"] = {kind: _spread([x["server_cpu_ms_per_call"] for x in runs[kind]]) for kind in kinds}
    return out


def bench_anchor(
    corpus: Path,
    item: str | None,
    workload: dict,
    tmp: Path,
    rounds: int,
    per_round: int,
    mix_sessions: int,
    mix_calls: int,
    mix_rounds: int,
) -> dict:
    result = {
        "scope": item or "explore",
        "stdio": anyio.run(anchor_stdio, corpus, item, workload, tmp, rounds, per_round),
    }
    with AnchorHttp(corpus, item, tmp) as servers:
        result["http"] = anyio.run(anchor_http, servers, workload, ToolWork(corpus, item), rounds, per_round)
        if mix_rounds:
            result["http_mix"] = anyio.run(anchor_mix, servers, workload, mix_sessions, mix_calls, mix_rounds)
    return result


def _fmt(spread: dict) -> str:
    return f"{spread['median']:.2f} ({spread['min']:.2f}-{spread['max']:.2f})"


def print_anchor(anchor: dict) -> None:
    """The anchor's figures as the tables of docs/benchmarks.md give them (stderr: stdout is the JSON)."""
    say = lambda line="": print(line, file=sys.stderr)  # noqa: E731
    say(f"\nanchor, scope {anchor['scope']}: p50 ms and AgentHop / anchor (median of per-round ratios, min-max)")
    for transport in ("stdio", "http"):
        part = anchor[transport]
        say(
            f"{transport}: no-op {part['noop_p50_ms']['median']:.2f} ms, no-op with record {part['noop_fsync_p50_ms']['median']:.2f} ms"
        )
        say(
            f"  {'tool':15} {'function':>8} {'anchor':>7} {'agenthop':>8}  {'/ anchor server':>19}  {'/ function + no-op rec':>22}"
        )
        for name, row in part["tools"].items():
            say(
                f"  {name:15} {row['function_p50_ms']['median']:>8.3f} {row['anchor_p50_ms']['median']:>7.2f} "
                f"{row['agenthop_p50_ms']['median']:>8.2f}  {_fmt(row['ratio_vs_anchor_server']):>19}  "
                f"{_fmt(row['ratio_vs_function_plus_noop_fsync']):>22}"
            )
    mix = anchor.get("http_mix")
    if mix:
        say(f"HTTP, {mix['sessions']} sessions x {mix['calls_each']} calls of the mix ({', '.join(mix['mix'])}):")
        for kind, runs in mix["rounds"].items():
            say(
                f"  {kind:10} calls/s {statistics.median(r['calls_per_s'] for r in runs):>7.1f}  "
                f"p99 {statistics.median(r['p99_ms'] for r in runs):>6.1f} ms  "
                f"server CPU {statistics.median(r['server_cpu_ms_per_call'] for r in runs):.2f} ms/call"
            )
        say(
            f"  AgentHop calls/s / no-op {_fmt(mix['calls_per_s_vs_noop'])}, / no-op with record "
            f"{_fmt(mix['calls_per_s_vs_noop_fsync'])}, / anchor {_fmt(mix['calls_per_s_vs_anchor'])}; "
            f"server CPU per call / anchor {_fmt(mix['server_cpu_per_call_vs_anchor'])}"
        )


def main() -> None:
    if sys.argv[1:2] == ["serve-noop"]:
        noop = argparse.ArgumentParser(prog="bench_server.py serve-noop")
        noop.add_argument("--transport", choices=["stdio", "http"], required=True)
        noop.add_argument("--port", type=int, default=0)
        noop.add_argument("--log")
        noop.add_argument(
            "--tools", metavar="CORPUS", help="the anchor: also serve AgentHop's tools (their own work only)"
        )
        noop.add_argument("--item", help="with --tools: the item whose scope the tools see (default: explore)")
        args = noop.parse_args(sys.argv[2:])
        serve_noop(args.transport, args.port, args.log, args.tools, args.item)
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=Path("corpus.sqlite"))
    parser.add_argument("--calls", type=int, default=200, help="calls per tool per transport")
    parser.add_argument("--tp-calls", type=int, default=40, help="calls per session in the throughput tests")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=10, help="floor: alternating rounds of the latency comparison")
    parser.add_argument("--per-round", type=int, default=50, help="floor: calls per server per round")
    parser.add_argument(
        "--tp-rounds", type=int, default=3, help="floor: alternating rounds of the 64-session comparison"
    )
    parser.add_argument(
        "--mix-sessions", type=int, default=64, help="anchor: concurrent HTTP sessions of the realistic mix"
    )
    parser.add_argument("--mix-calls", type=int, default=30, help="anchor: calls per session of the mix")
    parser.add_argument("--mix-rounds", type=int, default=3, help="anchor: rotating rounds of the mix (0: none)")
    parser.add_argument(
        "--explore", action="store_true", help="anchor: explore mode (the whole corpus) instead of the item"
    )
    parser.add_argument(
        "--log-dir",
        type=Path,
        help="anchor: where every server's log goes (e.g. /dev/shm, where fsync is free, "
        "to compare CPU without the shared disk's noise); default: a temporary directory",
    )
    parser.add_argument(
        "--agenthop-python",
        metavar="PYTHON",
        help="anchor: run AgentHop's server with this interpreter (an earlier checkout's venv); default: this one",
    )
    parser.add_argument(
        "--only",
        choices=["latency", "throughput", "search", "floor", "anchor"],
        action="append",
        help="run only these sections (repeatable); default: all",
    )
    parser.add_argument("--out", type=Path)
    opts = parser.parse_args()
    global AGENTHOP_PYTHON
    AGENTHOP_PYTHON = opts.agenthop_python or sys.executable
    sections = set(opts.only or ["latency", "throughput", "search", "floor", "anchor"])
    item, workload = pick_workload(opts.corpus)
    result = {"corpus": str(opts.corpus), "item": item}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        if "latency" in sections:
            result["direct"] = bench_direct(opts.corpus, item, workload, opts.calls, tmp)
            result["stdio"] = anyio.run(bench_stdio, opts.corpus, item, workload, opts.calls, tmp)
        if sections & {"latency", "throughput"}:
            server = HttpServer(opts.corpus, tmp)
            try:
                server.wait_ready()
                if "latency" in sections:
                    result["http"] = anyio.run(bench_http, server.base, item, workload, opts.calls)
                if "throughput" in sections:
                    result["throughput"] = [
                        anyio.run(bench_throughput, server.base, item, workload, n, opts.tp_calls) for n in (1, 8, 64)
                    ]
            finally:
                server.stop()
        if "floor" in sections:
            result["floor"] = bench_floor(
                opts.corpus, item, tmp, opts.rounds, opts.per_round, opts.tp_calls, opts.tp_rounds
            )
        if "anchor" in sections:
            logs = Path(tempfile.mkdtemp(dir=opts.log_dir)) if opts.log_dir else tmp
            result["anchor"] = bench_anchor(
                opts.corpus,
                None if opts.explore else item,
                workload,
                logs,
                opts.rounds,
                opts.per_round,
                opts.mix_sessions,
                opts.mix_calls,
                opts.mix_rounds,
            )
    if "search" in sections:
        result["search"] = bench_search(opts.corpus, item, opts.queries)
    text = json.dumps(result, indent=2)
    print(text)
    if "anchor" in result:
        print_anchor(result["anchor"])
    if opts.out:
        opts.out.parent.mkdir(parents=True, exist_ok=True)
        opts.out.write_text(text)


if __name__ == "__main__":
    main()
