"""Checkpoint-log write throughput and latency: one commit per call vs the group-committing writer.

    python bench/bench_log.py [--rounds 5] [--records 1200] [--dirs /work/tmp /dev/shm] [--out bench/out/log.json]

Both writers keep the guarantee the server needs: a record is on disk (WAL,
synchronous=FULL, fsync) when write() returns.

- per-call: what the server did before issue 10/11, each write its own
  autocommit INSERT (one fsync per record) under a lock.
- group: agenthop.server.checkpoint.CheckpointLog: one writer thread commits
  every waiting record in one transaction, and each writer is woken after that
  transaction's fsync.

Writers are threads (Session.call runs in worker threads; anyio lends at most 40),
each writing realistic call records as fast as it can. Each round runs every
(concurrency, writer) pair once, interleaved, on each directory; the figures are
the median over rounds with the spread (min-max). Run it on the disk that will
hold the log and on tmpfs to see what the fsync costs.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import tempfile
import threading
import time
from pathlib import Path

from agenthop.server.checkpoint import CheckpointLog, encode
from agenthop.server.log_records import CallRecord

CONCURRENCY = (1, 8, 40)


def call_record(i: int, session: str) -> CallRecord:
    return CallRecord(
        run="bench", session_id=session, item_id="st_0001", seq=i, time=time.time(), tool="search_papers",
        arguments={"query": f"graph neural networks for molecules {i}", "top_k": 5}, turn=i // 2, tokens=1000 * i,
        forced=False, outcome="ok", executed=True, cost=1, budget_before=i, budget_after=i + 1, latency_ms=0.4,
        exposed=[{"paper_id": f"{k:040x}", "rank": k + 1} for k in range(5)], delivered=None, output_chars=1800, message=None)


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
            self._conn.execute("INSERT INTO records(run, session_id, item_id, seq, kind, tool, outcome, record) "
                               "VALUES (?,?,?,?,?,?,?,?)", row)

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
    return {"records_per_s": written / wall, "p50_ms": statistics.median(latencies),
            "p99_ms": latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))]}


def summary(values: list[float]) -> dict:
    return {"median": round(statistics.median(values), 2), "min": round(min(values), 2), "max": round(max(values), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--records", type=int, default=1200, help="records per run at concurrency 8 and 40 (a quarter at 1)")
    parser.add_argument("--dirs", nargs="+", type=Path, default=[Path(tempfile.gettempdir()), Path("/dev/shm")])
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

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
    print(f"{'dir':<12} {'threads':>7} {'writer':<9} {'records/s':>22} {'p50 ms':>20} {'p99 ms':>20} {'group/per-call':>15}")
    for directory in args.dirs:
        for threads in CONCURRENCY:
            rows = {kind: {m: summary(samples[(str(directory), threads, kind, m)]) for m in ("records_per_s", "p50_ms", "p99_ms")}
                    for kind in ("per-call", "group")}
            ratios = [g / p for g, p in zip(samples[(str(directory), threads, "group", "records_per_s")],
                                            samples[(str(directory), threads, "per-call", "records_per_s")])]
            for kind, row in rows.items():
                fmt = lambda s: f"{s['median']:>8} ({s['min']}-{s['max']})"  # noqa: E731
                ratio = summary(ratios) if kind == "group" else None
                print(f"{str(directory):<12} {threads:>7} {kind:<9} {fmt(row['records_per_s']):>22} {fmt(row['p50_ms']):>20} "
                      f"{fmt(row['p99_ms']):>20} {'' if ratio is None else fmt(ratio):>15}")
                report.append({"dir": str(directory), "threads": threads, "writer": kind, **row, "throughput_ratio": ratio})
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
