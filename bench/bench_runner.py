"""Runner wall time against the ideal, with a fake model that answers in a fixed latency.

The model is the tests' fake chat-completions server, run in its own process so it
does not share the runner's GIL, answering every request after ``--latency`` seconds
(0.5 s by default) with a fixed 3-turn script (get_references -> list_sections ->
submit_answer). Each configuration runs ``agenthop-runner`` as a subprocess over the
first ``--items`` demo items, serving the corpus in-process exactly as a user would.

    ratio = runner wall time / ideal,   ideal = model responses x latency / workers

where the runner wall time runs from the ``run_start`` record to the last ``item_end``
(start-up, imports and the closing summary are excluded; they are printed separately
as ``startup_s``). ``CPU ms/item`` is the runner's CPU time (all its processes, start-up
included) over the items; ``CPU ms/turn`` is its CPU from ``run_start`` on (start-up excluded) over
the model responses, the figure that carries over to another machine. A ratio of 1.0 means the harness adds nothing to the model's own
latency. Configurations are interleaved (one round runs every configuration once) and
repeated ``--repeats`` times; the table gives the median ratio and its spread (min-max).

``--before PATH`` runs the ``agenthop-runner`` of an earlier checkout in the same rounds,
so an improvement is measured side by side on the same (shared, noisy) machine.

Usage: .venv/bin/python bench/bench_runner.py [--items 64] [--latency 0.5] [--workers 1,8,32]
                                              [--agents raw,sdk] [--processes 1,2] [--repeats 3] [--before PATH]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
RUNNER = str(Path(sys.executable).with_name("agenthop-runner"))


def make_script(latency: float):
    def script(body, fake):
        from support.fake_openai import Slow, seed_id, tool_calls, turn_index

        t = turn_index(body)
        if t == 0:
            reply = tool_calls(("get_references", {"paper_id": seed_id(body)}))
        elif t == 1:
            reply = tool_calls(("list_sections", {"paper_id": seed_id(body)}))
        else:
            reply = tool_calls(("submit_answer", {"answer": "A", "reasoning": "bench"}))
        return Slow(latency, reply) if latency > 0 else reply

    return script


def serve(latency, port_queue, stop_event):
    sys.path.insert(0, str(ROOT / "tests"))
    from support.fake_openai import FakeOpenAI

    with FakeOpenAI(make_script(latency)) as fake:
        port_queue.put(fake.base_url)
        stop_event.wait()


def items_file(tmp: Path, n_items: int) -> tuple[Path, Path]:
    corpus, split = ROOT / "corpus.sqlite", ROOT / "splits" / "demo.jsonl"
    ids = [json.loads(line)["id"] for line in split.read_text().splitlines() if line.strip()][:n_items]
    items = tmp / "items.txt"
    items.write_text("\n".join(ids) + "\n")
    return corpus, items


def measure(out: Path, latency: float, workers: int) -> dict:
    from agenthop.runner.records import read_records

    recs = list(read_records(out / "runner.jsonl"))
    start = next(r["time"] for r in recs if r["kind"] == "run_start")
    ends = [r for r in recs if r["kind"] == "item_end"]
    responses = sum(1 for r in recs if r["kind"] == "turn")
    wall = max(r["time"] for r in ends) - start
    ideal = responses * latency / workers
    return {
        "items": len(ends),
        "responses": responses,
        "wall_s": round(wall, 3),
        "ideal_s": round(ideal, 3),
        "ratio": round(wall / ideal, 3) if ideal else None,
        "not_answered": sum(1 for r in ends if r["termination"] != "answer"),
    }


def run_once(
    runner: str,
    agent: str,
    workers: int,
    processes: int,
    base_url: str,
    corpus: Path,
    items: Path,
    out: Path,
    latency: float,
) -> dict:
    cmd = [
        runner,
        "--items",
        str(items),
        "--agent",
        agent,
        "--model",
        "fake-1",
        "--base-url",
        base_url,
        "--corpus",
        str(corpus),
        "--out",
        str(out),
        "--workers",
        str(workers),
        "--no-progress",
        "--no-resume",
    ]
    if processes > 1:
        cmd += ["--processes", str(processes)]
    t0, cpu0 = time.perf_counter(), _children_cpu()
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(
            cmd, stdout=subprocess.DEVNULL, stderr=err, text=True, env={**os.environ, "OPENAI_API_KEY": "sk-bench"}
        )
        at_start = _cpu_at_run_start(proc, out / "runner.jsonl")
        proc.wait()
        total, cpu = time.perf_counter() - t0, _children_cpu() - cpu0
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err.read()[-3000:]}")
    row = measure(out, latency, workers)
    row["startup_s"] = round(total - row["wall_s"], 2)
    row["cpu_ms_per_item"] = round(cpu * 1000 / max(1, row["items"]), 1)
    # The figure that travels between machines: CPU of the runner and its in-process server per model turn,
    # from run_start on (imports and start-up excluded).
    row["cpu_ms_per_turn"] = (
        round((cpu - at_start) * 1000 / max(1, row["responses"]), 2) if at_start is not None else None
    )
    return row


def _tree_cpu(root: int) -> float:
    """User + system CPU so far of a process and its descendants (Linux /proc)."""
    ticks, parents, own = os.sysconf("SC_CLK_TCK"), {}, {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended meanwhile
            continue
        parents[int(entry.name)] = int(fields[1])
        own[int(entry.name)] = (int(fields[11]) + int(fields[12])) / ticks
    total, stack = 0.0, [root]
    while stack:
        pid = stack.pop()
        total += own.get(pid, 0.0)
        stack += [child for child, parent in parents.items() if parent == pid]
    return total


def _cpu_at_run_start(proc: subprocess.Popen, log: Path) -> float | None:
    """The runner's CPU (its whole process tree) when its run_start record appears; None if the run ends first."""
    while proc.poll() is None:
        try:
            if '"run_start"' in log.read_text():
                return _tree_cpu(proc.pid)
        except FileNotFoundError:
            pass
        time.sleep(0.005)  # polling the log: the run start is known only from it
    return None


def _children_cpu() -> float:
    """CPU seconds (user + system) of the runner processes this script has waited for."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=64)
    ap.add_argument("--latency", type=float, default=0.5, help="seconds the fake model takes per response")
    ap.add_argument("--workers", default="1,8,32")
    ap.add_argument("--agents", default="raw,sdk")
    ap.add_argument("--processes", default="1", help="comma-separated --processes values to compare")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument(
        "--before",
        metavar="PATH",
        help="the agenthop-runner of an earlier checkout, run interleaved with this one (one process) as the reference",
    )
    args = ap.parse_args()

    runners = [("this", RUNNER)] + ([("before", args.before)] if args.before else [])
    configs = [
        (name, path, a, int(w), int(p))
        for a in args.agents.split(",")
        for w in args.workers.split(",")
        for name, path in runners
        for p in args.processes.split(",")
        if int(p) <= int(w) and (name == "this" or int(p) == 1)
    ]  # the runner caps processes at workers
    ctx = mp.get_context("spawn")
    q, stop = ctx.Queue(), ctx.Event()
    proc = ctx.Process(target=serve, args=(args.latency, q, stop), daemon=True)
    proc.start()
    base_url = q.get(timeout=30)
    results: dict[tuple, list[dict]] = {(n, a, w, p): [] for n, _, a, w, p in configs}
    try:
        with tempfile.TemporaryDirectory(prefix="agenthop-bench-") as tmp:
            corpus, items = items_file(Path(tmp), args.items)
            for rep in range(args.repeats):
                for name, path, agent, workers, processes in configs:
                    out = Path(tmp) / f"{name}-{agent}-{workers}-{processes}"
                    row = run_once(path, agent, workers, processes, base_url, corpus, items, out, args.latency)
                    results[(name, agent, workers, processes)].append(row)
                    print(
                        json.dumps(
                            {
                                "round": rep + 1,
                                "runner": name,
                                "agent": agent,
                                "workers": workers,
                                "processes": processes,
                                **row,
                            }
                        ),
                        flush=True,
                    )
    finally:
        stop.set()
        proc.join(timeout=10)
    print()
    print(
        f"runner wall time / ideal, {args.items} items, model latency {args.latency} s, {args.repeats} interleaved rounds"
    )
    print(
        f"{'runner':6} {'agent':6} {'workers':>7} {'procs':>5} {'median':>7} {'spread':>13} {'wall s':>7} {'ideal s':>7} "
        f"{'startup s':>9} {'CPU ms/item':>11} {'CPU ms/turn':>11}"
    )
    for (name, agent, workers, processes), rows in sorted(
        results.items(), key=lambda kv: (kv[0][1], kv[0][2], kv[0][0] != "before", kv[0][3])
    ):
        ratios = [r["ratio"] for r in rows]
        walls = [r["wall_s"] for r in rows]
        print(
            f"{name:6} {agent:6} {workers:>7} {processes:>5} {statistics.median(ratios):>7.2f} {min(ratios):>6.2f}-{max(ratios):<6.2f}"
            f"{statistics.median(walls):>7.2f} {rows[0]['ideal_s']:>7.2f} {statistics.median(r['startup_s'] for r in rows):>9.2f}"
            f" {statistics.median(r['cpu_ms_per_item'] for r in rows):>11.0f}"
            f" {statistics.median(r['cpu_ms_per_turn'] or 0 for r in rows):>11.1f}"
        )


if __name__ == "__main__":
    main()
