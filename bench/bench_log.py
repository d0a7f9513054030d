"""Checkpoint-log write throughput and latency: one commit per call vs the group-committing writer.

    python bench/bench_log.py [--rounds 5] [--records 1200] [--dirs DISK_DIR /dev/shm] [--out bench/out/log.json]
    python bench/bench_log.py --servers /work/main/.venv/bin/python .venv/bin/python --corpus corpus.sqlite [--sessions 64]

Part 1 (always): the log alone.

Both writers keep the guarantee the server needs: a record is on disk (WAL,
synchronous=FULL, fsync) when write() returns.

- per-call: what the server did before group commit, each write its own
  autocommit INSERT (one fsync per record) under a lock.
- group: agenthop.server.log.checkpoint.CheckpointLog: one writer thread commits
  every waiting record in one transaction, and each writer is woken after that
  transaction's fsync.

Writers are threads (Session.call runs in worker threads; anyio lends at most 40),
each writing realistic call records as fast as it can. Each round runs every
(concurrency, writer) pair once, interleaved, on each directory; the figures are
the median over rounds with the spread (min-max). Run it on the disk that will
hold the log and on tmpfs to see what the fsync costs.

Part 2 (--servers): the whole HTTP server, one subprocess per interpreter given
(e.g. main's virtualenv and this branch's), each with its log on every --dirs
directory: SESSIONS concurrent sessions each send CALLS raw JSON-RPC tool calls
(get_paper_info and think alternately, keep-alive connections); calls/s and
client-seen latency. Servers and directories are interleaved within each round.
Then Session.call alone (metering and the durable log write, no transport), in
each interpreter, on each directory: the median of 1,500 sequential calls.

Part 3 (--from-loop): what one call's durable record costs as the server pays it, from
the event loop, one call at a time: the hop to a worker thread alone (``anyio.to_thread``,
as every tool call takes), the hop plus a commit made by that worker thread itself, and the
hop plus ``CheckpointLog.write`` (the group-commit writer thread). Interleaved rounds of
``--records`` sequential calls each; medians of the per-round medians, with the spread.

    python bench/bench_log.py --from-loop [--rounds 9] [--records 300] [--dirs DISK_DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import anyio
import httpx2

from agenthop.server.log.checkpoint import CheckpointLog, encode
from agenthop.server.log.records import CallRecord

CONCURRENCY = (1, 8, 40)


def call_record(i: int, session: str) -> CallRecord:
    return CallRecord(
        run="bench",
        session_id=session,
        item_id="st_0001",
        seq=i,
        time=time.time(),
        tool="search_papers",
        arguments={"query": f"graph neural networks for molecules {i}", "top_k": 5},
        turn=i // 2,
        tokens=1000 * i,
        forced=False,
        outcome="ok",
        executed=True,
        cost=1,
        budget_before=i,
        budget_after=i + 1,
        latency_ms=0.4,
        exposed=[{"paper_id": f"{k:040x}", "rank": k + 1} for k in range(5)],
        delivered=None,
        output_chars=1800,
        message=None,
    )


class PerCallLog:
    """The old write path: one autocommit INSERT, so one fsync, per record."""

    def __init__(self, path: Path):
        CheckpointLog(path).close()  # same file format and pragmas
        self._conn = sqlite3.connect(path, check_same_thread=False, timeout=30, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute("PRAGMA synchronous = FULL")
        self._lock = threading.Lock()

    def write(self, record) -> None:
        row = encode(record)
        with self._lock:
            self._conn.execute(
                "INSERT INTO records(run, session_id, item_id, seq, kind, tool, outcome, record) "
                "VALUES (?,?,?,?,?,?,?,?)",
                row,
            )

    def close(self) -> None:
        self._conn.close()


def run_once(kind: str, directory: Path, threads: int, records: int) -> dict:
    """Write ``records`` records from ``threads`` threads; records/s and per-write latency."""
    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        path = Path(tmp) / "log.sqlite"
        log = PerCallLog(path) if kind == "per-call" else CheckpointLog(path)
        per_thread = max(1, records // threads)
        latencies: list[float] = []
        lock = threading.Lock()
        prepared = [[call_record(i, f"s{t}") for i in range(per_thread)] for t in range(threads)]

        def worker(batch: list[CallRecord]) -> None:
            mine = []
            for record in batch:
                started = time.perf_counter()
                log.write(record)
                mine.append((time.perf_counter() - started) * 1000)
            with lock:
                latencies.extend(mine)

        workers = [threading.Thread(target=worker, args=(batch,)) for batch in prepared]
        started = time.perf_counter()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        wall = time.perf_counter() - started
        log.close()
        written = sqlite3.connect(path).execute("SELECT count(*) FROM records").fetchone()[0]
        assert written == per_thread * threads, (written, per_thread * threads)
    latencies.sort()
    return {
        "records_per_s": written / wall,
        "p50_ms": statistics.median(latencies),
        "p99_ms": latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))],
    }


# --- part 2: the whole server ---------------------------------------------------------------------------

PROTOCOL = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL,
    "io.modelcontextprotocol/clientInfo": {"name": "bench-log", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serve(python: str, corpus: Path, log: Path) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    proc = subprocess.Popen(
        [
            python,
            "-m",
            "agenthop.server",
            "serve",
            "--transport",
            "http",
            "--port",
            str(port),
            "--corpus",
            str(corpus),
            "--log",
            str(log),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{python} server exited with {proc.returncode}")
        try:
            if httpx2.get(base + "/health", timeout=1).status_code == 200:
                return proc, base
        except httpx2.TransportError:
            pass
        time.sleep(0.05)  # polling interval while the server starts
    proc.kill()
    raise RuntimeError(f"{python} server did not start")


def _paper_id(corpus: Path) -> tuple[str, str]:
    conn = sqlite3.connect(corpus)
    item, seed = conn.execute("SELECT item_id, seed_paper_id FROM items ORDER BY position LIMIT 1").fetchone()
    conn.close()
    return item, seed


async def _server_load(base: str, item: str, paper: str, sessions: int, calls: int) -> dict:
    latencies: list[float] = []

    async def agent() -> None:
        async with httpx2.AsyncClient(base_url=base, timeout=120) as http:
            created = (await http.post("/sessions", json={"item": item, "run": "bench-log", "budget": None})).json()
            for n in range(calls):
                name, args = ("get_paper_info", {"paper_id": paper}) if n % 2 else ("think", {"reasoning": f"step {n}"})
                body = {
                    "jsonrpc": "2.0",
                    "id": n,
                    "method": "tools/call",
                    "params": {"name": name, "arguments": args, "_meta": META},
                }
                started = time.perf_counter()
                response = await http.post(
                    created["mcp_url"],
                    json=body,
                    headers={
                        "mcp-protocol-version": PROTOCOL,
                        "mcp-method": "tools/call",
                        "mcp-name": name,
                        "accept": "application/json, text/event-stream",
                    },
                )
                latencies.append((time.perf_counter() - started) * 1000)
                assert response.json()["result"]["structuredContent"]["outcome"] == "ok", response.text[:300]

    started = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(sessions):
            tg.start_soon(agent)
    wall = time.perf_counter() - started
    latencies.sort()
    return {
        "calls_per_s": sessions * calls / wall,
        "p50_ms": statistics.median(latencies),
        "p99_ms": latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))],
    }


def bench_servers(
    pythons: list[str], corpus: Path, dirs: list[Path], rounds: int, sessions: int, calls: int
) -> list[dict]:
    item, paper = _paper_id(corpus)
    samples: dict = {}
    for _ in range(rounds):
        for directory in dirs:
            for python in pythons:
                with tempfile.TemporaryDirectory(dir=directory) as tmp:
                    proc, base = _serve(python, corpus, Path(tmp) / "log.sqlite")
                    try:
                        result = anyio.run(_server_load, base, item, paper, sessions, calls)
                    finally:
                        proc.terminate()
                        proc.wait(timeout=30)
                for metric, value in result.items():
                    samples.setdefault((str(directory), python, metric), []).append(value)
    report = []
    print(f"\nwhole server: {sessions} sessions x {calls} calls, {rounds} rounds; median (min-max)")
    print(f"{'dir':<16} {'server':<40} {'calls/s':>22} {'p50 ms':>22} {'p99 ms':>22}")
    for directory in dirs:
        for python in pythons:
            row = {m: summary(samples[(str(directory), python, m)]) for m in ("calls_per_s", "p50_ms", "p99_ms")}
            fmt = lambda s: f"{s['median']:>8} ({s['min']}-{s['max']})"  # noqa: E731
            print(
                f"{str(directory):<16} {python:<40} {fmt(row['calls_per_s']):>22} {fmt(row['p50_ms']):>22} {fmt(row['p99_ms']):>22}"
            )
            report.append({"dir": str(directory), "server": python, **row})
    if len(pythons) == 2:
        for directory in dirs:
            ratios = [
                b / a
                for a, b in zip(
                    samples[(str(directory), pythons[0], "calls_per_s")],
                    samples[(str(directory), pythons[1], "calls_per_s")],
                )
            ]
            print(f"{str(directory):<16} throughput {pythons[1]} / {pythons[0]}: {summary(ratios)}")
    return report


SESSION_CALL = """
import json, statistics, sys, tempfile, time
from pathlib import Path
from agenthop.server.log.checkpoint import CheckpointLog
from agenthop.server.transport.mcp_app import make_sandbox
from agenthop.server.caps import Caps
with tempfile.TemporaryDirectory(dir=sys.argv[2]) as tmp:
    log = CheckpointLog(Path(tmp) / "log.sqlite")
    sandbox = make_sandbox(sys.argv[1], log, Caps())
    session = sandbox.sessions.create(sandbox.scope(None), run="bench", caps=Caps(None, None, None), transport="stdio")
    paper = sandbox.corpus.conn.execute("SELECT paper_id FROM papers LIMIT 1").fetchone()[0]
    out = {}
    for name, args in (("think", {"reasoning": "r"}), ("get_paper_info", {"paper_id": paper})):
        latencies = []
        for _ in range(1500):
            started = time.perf_counter()
            session.call(name, args)
            latencies.append((time.perf_counter() - started) * 1000)
        out[name] = statistics.median(latencies)
    log.close()
print(json.dumps(out))
"""


def bench_session_call(pythons: list[str], corpus: Path, dirs: list[Path], rounds: int) -> None:
    samples: dict = {}
    for _ in range(rounds):
        for directory in dirs:
            for python in pythons:
                out = subprocess.run(
                    [python, "-c", SESSION_CALL, str(corpus), str(directory)],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
                for tool, ms in json.loads(out).items():
                    samples.setdefault((str(directory), python, tool), []).append(ms)
    print(f"\nSession.call median ms over {rounds} rounds: median (min-max)")
    for (directory, python, tool), values in samples.items():
        print(f"{directory:<16} {python:<40} {tool:<15} {summary(values)}")


# --- part 3: one call's record, from the event loop ------------------------------------------------------


def bench_from_loop(directory: Path, rounds: int, calls: int) -> dict:
    """Per-call latency (ms) of a worker-thread hop alone, with a commit in that thread, and with CheckpointLog.write."""
    record = call_record(0, "loop")
    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        log, direct = CheckpointLog(Path(tmp) / "writer.sqlite"), PerCallLog(Path(tmp) / "direct.sqlite")
        variants = {
            "hop alone": lambda rec: None,
            "hop + commit in that thread": direct.write,
            "hop + CheckpointLog.write": log.write,
        }

        async def measure() -> dict[str, list[float]]:
            medians: dict[str, list[float]] = {name: [] for name in variants}
            for _ in range(rounds):
                for name, write in variants.items():  # interleaved, so drift on the shared machine hits all alike
                    times = []
                    for _ in range(calls):
                        started = time.perf_counter()
                        await anyio.to_thread.run_sync(write, record)
                        times.append((time.perf_counter() - started) * 1000)
                    medians[name].append(statistics.median(times))
            return medians

        try:
            medians = anyio.run(measure)
        finally:
            log.close()
            direct.close()
    report = {name: summary(values) for name, values in medians.items()}
    for name, row in report.items():
        print(f"{str(directory):<16} {name:<30} p50 {row['median']:.3f} ms ({row['min']:.3f}-{row['max']:.3f})")
    return report


def summary(values: list[float]) -> dict:
    return {"median": round(statistics.median(values), 3), "min": round(min(values), 3), "max": round(max(values), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--records", type=int, default=1200, help="records per run at concurrency 8 and 40 (a quarter at 1)"
    )
    parser.add_argument("--dirs", nargs="+", type=Path, default=[Path(tempfile.gettempdir()), Path("/dev/shm")])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--servers", nargs="+", default=None, help="python interpreters whose agenthop server to compare (part 2)"
    )
    parser.add_argument("--corpus", type=Path, default=Path("corpus.sqlite"))
    parser.add_argument("--sessions", type=int, default=64)
    parser.add_argument("--calls", type=int, default=20, help="calls per session (part 2)")
    parser.add_argument(
        "--from-loop", action="store_true", help="part 3: one call's record as the event loop pays for it"
    )
    args = parser.parse_args()
    if args.from_loop:
        report = {str(d): bench_from_loop(d, args.rounds, args.records) for d in args.dirs}
        if args.out:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(report, indent=1))
        return
    if args.servers:
        pythons = [os.path.abspath(p) if os.sep in p else p for p in args.servers]
        report = bench_servers(pythons, args.corpus, args.dirs, args.rounds, args.sessions, args.calls)
        bench_session_call(pythons, args.corpus, args.dirs, args.rounds)
        if args.out:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(report, indent=1))
        return

    samples: dict = {}
    for _ in range(args.rounds):
        for directory in args.dirs:
            for threads in CONCURRENCY:
                for kind in ("per-call", "group"):  # interleaved, so drift on the shared machine hits both alike
                    n = args.records // 4 if threads == 1 else args.records
                    result = run_once(kind, directory, threads, n)
                    for metric, value in result.items():
                        samples.setdefault((str(directory), threads, kind, metric), []).append(value)

    report = []
    print(
        f"{'dir':<12} {'threads':>7} {'writer':<9} {'records/s':>22} {'p50 ms':>20} {'p99 ms':>20} {'group/per-call':>15}"
    )
    for directory in args.dirs:
        for threads in CONCURRENCY:
            rows = {
                kind: {
                    m: summary(samples[(str(directory), threads, kind, m)])
                    for m in ("records_per_s", "p50_ms", "p99_ms")
                }
                for kind in ("per-call", "group")
            }
            ratios = [
                g / p
                for g, p in zip(
                    samples[(str(directory), threads, "group", "records_per_s")],
                    samples[(str(directory), threads, "per-call", "records_per_s")],
                )
            ]
            for kind, row in rows.items():
                fmt = lambda s: f"{s['median']:>8} ({s['min']}-{s['max']})"  # noqa: E731
                ratio = summary(ratios) if kind == "group" else None
                print(
                    f"{str(directory):<12} {threads:>7} {kind:<9} {fmt(row['records_per_s']):>22} {fmt(row['p50_ms']):>20} "
                    f"{fmt(row['p99_ms']):>20} {'' if ratio is None else fmt(ratio):>15}"
                )
                report.append(
                    {"dir": str(directory), "threads": threads, "writer": kind, **row, "throughput_ratio": ratio}
                )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
