"""Server latency and throughput, measured side by side in one run.

    python bench/bench_server.py --corpus corpus.sqlite [--calls 200] [--out bench/out/server.json]

1. Per-tool latency (median, p99): the tool function called directly in-process,
   the same call through Session.call (metering + durable log), over stdio (a
   subprocess server) and over Streamable HTTP (a subprocess server on loopback).
2. HTTP throughput with 1, 8 and 64 concurrent sessions.
3. Search latency on the largest item neighbourhood and in explore mode over the
   whole corpus, next to SQLite FTS5's bm25() on the same documents (and
   rank-bm25 on the neighbourhood, when installed).
Ratios are what to read: this machine is shared and noisy.
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
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from agenthop.server.checkpoint import CheckpointLog
from agenthop.server.http import free_port
from agenthop.server.mcp_app import make_sandbox
from agenthop.server.search import ScopeIndex, tokenize
from agenthop.server.sessions import Caps
from agenthop.server.tools import TOOLS

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=Path("corpus.sqlite"))
    parser.add_argument("--calls", type=int, default=200, help="calls per tool per transport")
    parser.add_argument("--tp-calls", type=int, default=40, help="calls per session in the throughput test")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--out", type=Path)
    opts = parser.parse_args()
    item, workload = pick_workload(opts.corpus)
    result = {"corpus": str(opts.corpus), "item": item}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        result["direct"] = bench_direct(opts.corpus, item, workload, opts.calls, tmp)
        result["stdio"] = anyio.run(bench_stdio, opts.corpus, item, workload, opts.calls, tmp)
        server = HttpServer(opts.corpus, tmp)
        try:
            server.wait_ready()
            result["http"] = anyio.run(bench_http, server.base, item, workload, opts.calls)
            result["throughput"] = [anyio.run(bench_throughput, server.base, item, workload, n, opts.tp_calls) for n in (1, 8, 64)]
        finally:
            server.stop()
    result["search"] = bench_search(opts.corpus, item, opts.queries)
    text = json.dumps(result, indent=2)
    print(text)
    if opts.out:
        opts.out.parent.mkdir(parents=True, exist_ok=True)
        opts.out.write_text(text)


if __name__ == "__main__":
    main()
