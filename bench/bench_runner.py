"""Harness overhead of agenthop-runner with a zero-latency scripted model.

The model is the tests' fake chat-completions server, run in its own process so
it does not share the runner's GIL, answering instantly with a fixed 3-turn
script (get_references -> list_sections -> submit_answer). The runner serves the
corpus in-process (ServerThread), exactly as the CLI does. For each agent and
worker count it reports:

- items/s: items finished per second of wall time (run_start -> last item_end);
- outside model: share of item time not spent waiting for the model
  (1 - sum of model-call latencies / sum of item wall times), i.e. harness + MCP + server.

Usage: .venv/bin/python bench/bench_runner.py [--items N] [--workers 1,8,32] [--agents raw,sdk]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def script(body, fake):
    from fake_openai import seed_id, tool_calls, turn_index

    t = turn_index(body)
    if t == 0:
        return tool_calls(("get_references", {"paper_id": seed_id(body)}))
    if t == 1:
        return tool_calls(("list_sections", {"paper_id": seed_id(body)}))
    return tool_calls(("submit_answer", {"answer": "A", "reasoning": "bench"}))


def serve(port_queue, stop_event):
    sys.path.insert(0, str(ROOT / "tests"))
    from fake_openai import FakeOpenAI

    with FakeOpenAI(script) as fake:
        port_queue.put(fake.base_url)
        stop_event.wait()


def corpus_and_items(tmp: Path, n_items: int) -> tuple[Path, Path]:
    corpus, split = ROOT / "corpus.sqlite", ROOT / "splits" / "demo.jsonl"
    if not (corpus.exists() and split.exists()):
        from agenthop.server.corpus.demo import build_demo

        corpus, split = tmp / "corpus.sqlite", tmp / "demo.jsonl"
        build_demo(corpus, split)
    ids = [json.loads(line)["id"] for line in split.read_text().splitlines() if line.strip()][:n_items]
    items = tmp / "items.txt"
    items.write_text("\n".join(ids) + "\n")
    return corpus, items


def measure(out: Path) -> dict:
    from agenthop.runner.records import read_records

    recs = list(read_records(out / "runner.jsonl"))
    start = next(r["time"] for r in recs if r["kind"] == "run_start")
    ends = [r for r in recs if r["kind"] == "item_end"]
    model_s = sum(r["latency_ms"] for r in recs if r["kind"] == "turn") / 1000
    item_s = sum(r["wall_time_s"] for r in ends)
    wall = max(r["time"] for r in ends) - start
    return {"items": len(ends), "wall_s": round(wall, 2), "items_per_s": round(len(ends) / wall, 2),
            "outside_model": round(1 - model_s / item_s, 3), "mean_item_s": round(item_s / len(ends), 3),
            "errors": sum(1 for r in ends if r["termination"] != "answer")}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=64)
    ap.add_argument("--workers", default="1,8,32")
    ap.add_argument("--agents", default="raw,sdk")
    args = ap.parse_args()
    from click.testing import CliRunner

    from agenthop.runner.cli import main as runner_main

    ctx = mp.get_context("spawn")
    q, stop = ctx.Queue(), ctx.Event()
    proc = ctx.Process(target=serve, args=(q, stop), daemon=True)
    proc.start()
    base_url = q.get(timeout=30)
    rows = []
    try:
        with tempfile.TemporaryDirectory(prefix="agenthop-bench-") as tmp:
            corpus, items = corpus_and_items(Path(tmp), args.items)
            for agent in args.agents.split(","):
                for workers in [int(w) for w in args.workers.split(",")]:
                    out = Path(tmp) / f"{agent}-{workers}"
                    t0 = time.perf_counter()
                    res = CliRunner().invoke(runner_main, [
                        "--items", str(items), "--agent", agent, "--model", "fake-1", "--base-url", base_url,
                        "--corpus", str(corpus), "--out", str(out), "--workers", str(workers), "--no-progress"])
                    if res.exit_code != 0:
                        raise SystemExit(res.output)
                    row = {"agent": agent, "workers": workers, **measure(out), "total_s": round(time.perf_counter() - t0, 2)}
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    finally:
        stop.set()
        proc.join(timeout=10)
    print()
    print(f"{'agent':6} {'workers':>7} {'items':>5} {'items/s':>8} {'outside model':>14} {'mean item s':>12}")
    for r in rows:
        print(f"{r['agent']:6} {r['workers']:>7} {r['items']:>5} {r['items_per_s']:>8} {r['outside_model']:>14.1%} {r['mean_item_s']:>12}")


if __name__ == "__main__":
    main()
