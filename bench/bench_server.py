"""Server latency and throughput, measured side by side in one run.

    python bench/bench_server.py --corpus corpus.sqlite [--calls 200] [--out bench/out/server.json]
    python bench/bench_server.py --corpus corpus.sqlite --only floor      # just section 4 (issue 10's ratios)

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
Ratios are what to read: this machine is shared and noisy.

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
from agenthop.server.tools import TOOLS
from agenthop.server.transport.mcp_app import make_sandbox
from agenthop.server.transport.web import free_port

UNLIMITED = 10**9


def quantiles(samples_ms: list[float]) -> dict:
    s = sorted(samples_ms)
    return {"median_ms": round(statistics.median(s), 3), "p99_ms": round(s[min(len(s) - 1, int(0.99 * len(s)))], 3), "n": len(s)}


def pick_workload(corpus_path: Path) -> tuple[str, dict[str, dict]]:
    """The item with the largest neighbourhood and one argument set per tool."""
    conn = sqlite3.connect(corpus_path)
    item, _ = conn.execute("SELECT item_id, count(*) c FROM item_nodes GROUP BY item_id ORDER BY c DESC LIMIT 1").fetchone()
    seed, question = conn.execute("SELECT seed_paper_id, question FROM items WHERE item_id = ?", (item,)).fetchone()
    texted = conn.execute(
        "SELECT p.paper_id, p.arxiv_id FROM item_nodes n JOIN papers p USING (paper_id) "
        "WHERE n.item_id = ? AND p.has_text = 1 AND p.paper_id != ? ORDER BY n.position LIMIT 1", (item, seed)).fetchone()
    args = {
        "search_papers": {"query": question, "top_k": 10},
        "get_paper_info": {"paper_id": seed},
        "get_references": {"paper_id": seed},
        "list_sections": {"paper_id": texted[0]},
        "read_section": {"paper_id": texted[0], "section": "A"},
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
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "agenthop.server", "serve", "--corpus", str(corpus), "--item", item, "--run", "bench-stdio",
        "--log", str(tmp / "stdio-log.sqlite"), "--budget", str(UNLIMITED)])
    async with Client(params, read_timeout_seconds=60) as client:
        return await _client_latency(client, workload, calls)


class HttpServer:
    def __init__(self, corpus: Path, tmp: Path):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen([
            sys.executable, "-m", "agenthop.server", "serve", "--transport", "http", "--port", str(self.port),
            "--corpus", str(corpus), "--log", str(tmp / "http-log.sqlite"), "--budget", str(UNLIMITED)])

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
    mix = [("get_paper_info", workload["get_paper_info"]), ("search_papers", workload["search_papers"]),
           ("list_sections", workload["list_sections"]), ("think", workload["think"])]

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
            "WHERE n.item_id = ? ORDER BY n.position", (item,)).fetchall(),
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
        entry = {"documents": len(ids), "index_build_s": round(build_s, 3), "agenthop_bm25s": quantiles(ours),
                 "sqlite_fts5_bm25": quantiles(floor)}
        entry["ratio_median_vs_fts5"] = round(entry["agenthop_bm25s"]["median_ms"] / entry["sqlite_fts5_bm25"]["median_ms"], 2)
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

NOOP = types.Tool(name="noop", description="Does nothing.", input_schema={
    "type": "object", "properties": {"reasoning": {"type": "string"}}, "required": ["reasoning"]})


def noop_server(log_path: str | None) -> Server:
    """The fastest server the SDK allows for one tool (input schema given, nothing else to do), optionally writing
    one fsync'd checkpoint record per call (the same writer and the same record shape as AgentHop's think)."""
    log = CheckpointLog(log_path) if log_path else None
    seq = 0

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[NOOP])

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        nonlocal seq
        if log is not None:
            record = {"kind": "call", "run": "noop", "session_id": "noop", "item_id": None, "seq": seq, "time": time.time(),
                      "tool": params.name, "arguments": params.arguments or {}, "turn": None, "tokens": None, "forced": False,
                      "outcome": "ok", "executed": True, "cost": 0, "budget_before": 0, "budget_after": 0, "latency_ms": 0.0,
                      "exposed": [], "delivered": None, "output_chars": 6, "message": None}
            seq += 1
            await anyio.to_thread.run_sync(log.write, record)  # as AgentHop does: off the event loop
        return types.CallToolResult(content=[types.TextContent(type="text", text="Noted.")], structured_content={"outcome": "ok"})

    return Server("noop", version="0", get_tool_input_schema={"noop": NOOP.input_schema}.get,
                  on_list_tools=list_tools, on_call_tool=call_tool)


def serve_noop(transport: str, port: int, log_path: str | None) -> None:
    server = noop_server(log_path)
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
    def __init__(self, tmp: Path, log: bool):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        extra = ["--log", str(tmp / f"noop-{self.port}.sqlite")] if log else []
        self.proc = subprocess.Popen([sys.executable, __file__, "serve-noop", "--transport", "http", "--port", str(self.port), *extra])

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
        for label in labels[r % len(labels):] + labels[:r % len(labels)]:
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
    out = {label: {"p50_ms": round(statistics.median(v), 3), "p99_ms": round(_p(v, 0.99), 3), "n": len(v)} for label, v in samples.items()}
    for other in labels[1:]:
        out[f"ratio_p50_vs_{other}"] = _spread(ratios[other])
        out[f"ratio_p99_vs_{other}"] = round(_p(samples[ours], 0.99) / _p(samples[other], 0.99), 2)
    out[f"{ours}_p99_over_p50"] = round(_p(samples[ours], 0.99) / statistics.median(samples[ours]), 2)
    return out


THINK = ("think", {"reasoning": "benchmark"})
NOOP_CALL = ("noop", {"reasoning": "benchmark"})


async def floor_stdio(corpus: Path, item: str, tmp: Path, rounds: int, per_round: int) -> dict:
    ours = StdioServerParameters(command=sys.executable, args=[
        "-m", "agenthop.server", "serve", "--corpus", str(corpus), "--item", item, "--run", "bench-floor",
        "--log", str(tmp / "floor-stdio.sqlite"), "--budget", str(UNLIMITED)])
    noop = StdioServerParameters(command=sys.executable, args=[__file__, "serve-noop", "--transport", "stdio"])
    noop_fsync = StdioServerParameters(command=sys.executable, args=[__file__, "serve-noop", "--transport", "stdio",
                                                                     "--log", str(tmp / "noop-stdio.sqlite")])
    async with Client(ours, read_timeout_seconds=60) as a, Client(noop, read_timeout_seconds=60) as b, \
            Client(noop_fsync, read_timeout_seconds=60) as c:
        return await _interleaved_latency({"agenthop_think": (a, *THINK), "noop": (b, *NOOP_CALL),
                                           "noop_fsync": (c, *NOOP_CALL)}, rounds, per_round)


async def floor_http(ours_base: str, noop_base: str, noop_fsync_base: str, item: str, rounds: int, per_round: int) -> dict:
    async with httpx2.AsyncClient(timeout=60) as h1, httpx2.AsyncClient(timeout=60) as h2, httpx2.AsyncClient(timeout=60) as h3:
        url = await _session(ours_base, h1, item, "bench-floor")
        async with Client(streamable_http_client(url, http_client=h1)) as a, \
                Client(streamable_http_client(noop_base + "/mcp", http_client=h2)) as b, \
                Client(streamable_http_client(noop_fsync_base + "/mcp", http_client=h3)) as c:
            return await _interleaved_latency({"agenthop_think": (a, *THINK), "noop": (b, *NOOP_CALL),
                                               "noop_fsync": (c, *NOOP_CALL)}, rounds, per_round)


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
    return {"calls_per_s": round(sessions * calls_each / wall, 1), "p50_ms": round(statistics.median(latencies), 1),
            "p99_ms": round(_p(latencies, 0.99), 1)}


async def floor_throughput(ours_base: str, noop_base: str, item: str, sessions: int, calls_each: int, rounds: int) -> dict:
    runs: dict[str, list[dict]] = {"agenthop_think": [], "noop_fsync": []}
    for r in range(rounds):
        order = [("agenthop_think", ours_base, item), ("noop_fsync", noop_base, None)]
        for label, base, it in (order if r % 2 == 0 else order[::-1]):
            runs[label].append(await _concurrent(base, it, sessions, calls_each))
    ratios = [a["calls_per_s"] / b["calls_per_s"] for a, b in zip(runs["agenthop_think"], runs["noop_fsync"])]
    return {"sessions": sessions, "calls_each": calls_each, "rounds": runs, "ratio_calls_per_s": _spread(ratios),
            "agenthop_p99_ms": _spread([x["p99_ms"] for x in runs["agenthop_think"]])}


def bench_floor(corpus: Path, item: str, tmp: Path, rounds: int, per_round: int, tp_calls: int, tp_rounds: int) -> dict:
    result = {"stdio": anyio.run(floor_stdio, corpus, item, tmp, rounds, per_round)}
    ours, noop, noop_fsync = HttpServer(corpus, tmp), NoopHttpServer(tmp, log=False), NoopHttpServer(tmp, log=True)
    try:
        for server in (ours, noop, noop_fsync):
            server.wait_ready()
        result["http"] = anyio.run(floor_http, ours.base, noop.base, noop_fsync.base, item, rounds, per_round)
        result["http_64_sessions"] = anyio.run(floor_throughput, ours.base, noop_fsync.base, item, 64, tp_calls, tp_rounds)
    finally:
        for server in (ours, noop, noop_fsync):
            server.stop()
    return result


def main() -> None:
    if sys.argv[1:2] == ["serve-noop"]:
        noop = argparse.ArgumentParser(prog="bench_server.py serve-noop")
        noop.add_argument("--transport", choices=["stdio", "http"], required=True)
        noop.add_argument("--port", type=int, default=0)
        noop.add_argument("--log")
        args = noop.parse_args(sys.argv[2:])
        serve_noop(args.transport, args.port, args.log)
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=Path("corpus.sqlite"))
    parser.add_argument("--calls", type=int, default=200, help="calls per tool per transport")
    parser.add_argument("--tp-calls", type=int, default=40, help="calls per session in the throughput tests")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=10, help="floor: alternating rounds of the latency comparison")
    parser.add_argument("--per-round", type=int, default=50, help="floor: calls per server per round")
    parser.add_argument("--tp-rounds", type=int, default=3, help="floor: alternating rounds of the 64-session comparison")
    parser.add_argument("--only", choices=["latency", "throughput", "search", "floor"], action="append",
                        help="run only these sections (repeatable); default: all")
    parser.add_argument("--out", type=Path)
    opts = parser.parse_args()
    sections = set(opts.only or ["latency", "throughput", "search", "floor"])
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
                    result["throughput"] = [anyio.run(bench_throughput, server.base, item, workload, n, opts.tp_calls) for n in (1, 8, 64)]
            finally:
                server.stop()
        if "floor" in sections:
            result["floor"] = bench_floor(opts.corpus, item, tmp, opts.rounds, opts.per_round, opts.tp_calls, opts.tp_rounds)
    if "search" in sections:
        result["search"] = bench_search(opts.corpus, item, opts.queries)
    text = json.dumps(result, indent=2)
    print(text)
    if opts.out:
        opts.out.parent.mkdir(parents=True, exist_ok=True)
        opts.out.write_text(text)


if __name__ == "__main__":
    main()
