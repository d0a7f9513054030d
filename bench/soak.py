"""Soak test: many rounds of 64 concurrent sessions over Streamable HTTP against a server subprocess.

    python bench/soak.py [--duration 180] [--sessions 64] [--max-rounds 1000] [--corpus PATH] [--out soak.json]

Each round creates --sessions new item sessions (budget 12) and runs, in every one at once, a fixed
script of 8 tool calls whose outcomes and budgets are known in advance (ok, not_found, budget_rejected,
submit, session_ended). Latency is what the client sees under 64-way concurrency (mostly queueing
behind the durable, serialised log writes); server_latency_ms is the log's latency_ms (executing the call inside
Session.call, before the durable write). Every 8th session is a real mcp.Client (alternating the 2026 and 2025 protocol
eras); the rest send the same calls as raw JSON-RPC. Rounds run until --duration seconds or
--max-rounds, whichever comes first. It reports calls, errors (wrong outcome or budget, transport
failures), p50/p99 call latency, server RSS after each round (and its growth over the second half), and checks that
the checkpoint log holds exactly one call record per call made.

Bounded in time and count, loopback only. Without --corpus it builds the tests' 3-item fixture corpus
in a temporary directory.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from support.hardening_common import BUDGET, SCRIPT  # noqa: E402

from agenthop.server.transport.web import free_port  # noqa: E402

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "soak", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def rss_kb(pid_: int) -> int:
    for line in Path(f"/proc/{pid_}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


def fixture_corpus(tmp: Path) -> Path:
    from support.release_fixture import make_release

    from agenthop.corpus.importer import import_release

    out = tmp / "corpus.sqlite"
    import_release(make_release(tmp), out, echo=lambda _: None)
    return out


def start_server(corpus: Path, log: Path, port: int, stderr) -> subprocess.Popen:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agenthop.server",
            "serve",
            "--transport",
            "http",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--corpus",
            str(corpus),
            "--log",
            str(log),
        ],
        stdout=subprocess.DEVNULL,
        stderr=stderr,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with {proc.returncode}")
        try:
            if httpx2.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return proc
        except httpx2.TransportError:
            pass
        time.sleep(0.05)  # polling interval
    proc.kill()
    raise SystemExit("server did not answer /health within 60 s")


class Stats:
    def __init__(self):
        self.calls = 0
        self.errors: list[str] = []
        self.latencies_ms: list[float] = []

    def record(self, data: dict | None, step: int, started: float, where: str) -> None:
        self.calls += 1
        self.latencies_ms.append((time.perf_counter() - started) * 1000)
        _, _, outcome, used = SCRIPT[step]
        if data is None or (data.get("outcome"), data.get("budget_used")) != (outcome, used):
            self.errors.append(
                f"{where} step {step}: expected {(outcome, used)}, got {data and (data.get('outcome'), data.get('budget_used'))}"
            )


async def raw_agent(http: httpx2.AsyncClient, session: dict, stats: Stats) -> None:
    url = f"/mcp?session={session['session_id']}"
    for step, (tool, args, _, _) in enumerate(SCRIPT):
        started = time.perf_counter()
        try:
            answer = await http.post(
                url,
                json={
                    "jsonrpc": "2.0",
                    "id": step,
                    "method": "tools/call",
                    "params": {"name": tool, "arguments": args, "_meta": META},
                },
                headers={
                    "mcp-protocol-version": "2026-07-28",
                    "mcp-method": "tools/call",
                    "mcp-name": tool,
                    "accept": "application/json, text/event-stream",
                },
            )
            data = answer.json()["result"]["structuredContent"]
        except Exception as exc:  # noqa: BLE001 - a soak counts every failure
            stats.calls += 1
            stats.errors.append(f"raw step {step}: {type(exc).__name__}: {exc}")
            continue
        stats.record(data, step, started, "raw")


async def mcp_agent(session: dict, mode: str, stats: Stats) -> None:
    try:
        async with (
            httpx2.AsyncClient(timeout=60) as h,
            Client(streamable_http_client(session["mcp_url"], http_client=h), mode=mode) as client,
        ):
            for step, (tool, args, _, _) in enumerate(SCRIPT):
                started = time.perf_counter()
                result = await client.call_tool(tool, args, meta={"agenthop/turn": step + 1})
                stats.record(result.structured_content, step, started, mode)
    except Exception as exc:  # noqa: BLE001
        stats.errors.append(f"{mode} client: {type(exc).__name__}: {exc}")


async def soak(base: str, n_sessions: int, duration: float, max_rounds: int, server_pid: int) -> dict:
    stats = Stats()
    rss = {}
    series: list[int] = []  # server RSS (kB) after each round
    started = time.monotonic()
    rounds = 0
    async with httpx2.AsyncClient(base_url=base, timeout=60, limits=httpx2.Limits(max_connections=n_sessions)) as http:
        while rounds < max_rounds and time.monotonic() - started < duration:
            sessions = []
            for _ in range(n_sessions):
                created = await http.post(
                    "/sessions", json={"item": "st_0001", "run": f"soak-{rounds}", "budget": BUDGET}
                )
                sessions.append(created.json())
            with anyio.fail_after(300):
                async with anyio.create_task_group() as tg:
                    for i, session in enumerate(sessions):
                        if i % 8 == 0:
                            tg.start_soon(mcp_agent, session, "legacy" if (i // 8) % 2 else "auto", stats)
                        else:
                            tg.start_soon(raw_agent, http, session, stats)
            rounds += 1
            series.append(rss_kb(server_pid))
            if rounds == 1:
                rss["after_first_round_kb"] = series[0]
            if rounds % 10 == 0:
                print(
                    f"round {rounds}: {stats.calls} calls, {len(stats.errors)} errors, RSS {series[-1]} kB, "
                    f"{time.monotonic() - started:.0f} s",
                    file=sys.stderr,
                )
        rss["end_kb"] = rss_kb(server_pid)
        health = (await http.get("/health")).json()
    wall = time.monotonic() - started
    lat = sorted(stats.latencies_ms)
    return {
        "rounds": rounds,
        "sessions": rounds * n_sessions,
        "sessions_live_in_server": health["sessions"],
        "calls": stats.calls,
        "errors": len(stats.errors),
        "first_errors": stats.errors[:10],
        "wall_s": round(wall, 1),
        "calls_per_s": round(stats.calls / wall, 1),
        "latency_ms": {
            "p50": round(statistics.median(lat), 2),
            "p99": round(lat[min(len(lat) - 1, int(0.99 * len(lat)))], 2),
            "max": round(lat[-1], 2),
        }
        if lat
        else None,
        "rss": {
            **rss,
            "growth_kb": rss["end_kb"] - rss.get("after_first_round_kb", rss["end_kb"]),
            "second_half_growth_kb": series[-1] - series[len(series) // 2] if series else 0,
            "after_each_round_kb": series,
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=180.0, help="seconds to keep starting rounds (default 180)")
    parser.add_argument("--sessions", type=int, default=64, help="concurrent sessions per round (default 64)")
    parser.add_argument("--max-rounds", type=int, default=1000, help="stop after this many rounds (default 1000)")
    parser.add_argument(
        "--corpus", type=Path, default=None, help="corpus file (default: build the tests' fixture corpus)"
    )
    parser.add_argument("--out", type=Path, default=None, help="also write the report here (JSON)")
    args = parser.parse_args()
    if not 1 <= args.sessions <= 256 or not 0 < args.duration <= 3600:
        raise SystemExit("--sessions must be 1-256 and --duration at most 3600 s")

    with tempfile.TemporaryDirectory(prefix="agenthop-soak-") as tmp_dir:
        tmp = Path(tmp_dir)
        corpus = args.corpus or fixture_corpus(tmp)
        log = tmp / "soak-log.sqlite"
        port = free_port()
        with open(tmp / "server.stderr", "wb") as stderr:
            proc = start_server(corpus, log, port, stderr)
            try:
                report = anyio.run(
                    soak, f"http://127.0.0.1:{port}", args.sessions, args.duration, args.max_rounds, proc.pid
                )
            finally:
                os.kill(proc.pid, signal.SIGTERM)
                proc.wait(timeout=30)
        conn = sqlite3.connect(log)
        logged_calls = conn.execute("SELECT count(*) FROM records WHERE kind = 'call'").fetchone()[0]
        ends = conn.execute("SELECT count(*) FROM records WHERE kind = 'session_end'").fetchone()[0]
        server_ms = sorted(
            v for (v,) in conn.execute("SELECT json_extract(record, '$.latency_ms') FROM records WHERE kind = 'call'")
        )
        conn.close()
        if server_ms:  # the log's latency_ms: executing the call, before the durable write; no HTTP, no queueing
            report["server_latency_ms"] = {
                "p50": round(statistics.median(server_ms), 2),
                "p99": round(server_ms[min(len(server_ms) - 1, int(0.99 * len(server_ms)))], 2),
            }
        report["log"] = {
            "call_records": logged_calls,
            "session_end_records": ends,
            "call_records_equal_calls": logged_calls == report["calls"],
            "size_mb": round(log.stat().st_size / 2**20, 1),
        }
        report["settings"] = {
            "sessions": args.sessions,
            "duration_s": args.duration,
            "max_rounds": args.max_rounds,
            "script_calls": len(SCRIPT),
            "corpus": str(args.corpus) if args.corpus else "tests fixture (3 items)",
        }
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    if report["errors"] or not report["log"]["call_records_equal_calls"]:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
