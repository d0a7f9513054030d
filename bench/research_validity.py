"""Headroom of a release, by cell: a closed-book run, a with-tools run, and the with-tools run on the items the
closed-book run missed; each from the server's checkpoint log, scored by agenthop-scorer like any run.

    python bench/research_validity.py --log LOG --corpus explore-research.sqlite \
        --closed-book closed-book --agent agent [--agent-items drawn.txt]

``--closed-book`` and ``--agent`` are run labels in LOG (for instance sessions taken through ``agenthop-cli start
--closed-book --run closed-book`` and ``agenthop-cli start --run agent``). The closed-book run is scored over every
item it answered; the agent run over ``--agent-items`` (one ID per line), or every item it answered. Markdown to
stdout: accuracy by cell with Wilson 95% intervals, the agent's mean tool calls, and the agent's accuracy on the
items the closed-book run got wrong (the headroom that remains when a model may know the papers).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

from agenthop.scorer.stats import wilson

BIN = Path(sys.executable).parent
CELLS = ("ST-d1", "ST-d2", "MT-d1", "MT-d2")


def answered(log: Path, run: str) -> list[str]:
    with sqlite3.connect(f"file:{log}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT DISTINCT item_id FROM records WHERE run = ? AND kind = 'session_end'", (run,))
        return sorted(r[0] for r in rows if r[0])


def score(log: Path, run: str, corpus: Path, items: list[str], tmp: Path) -> dict[str, dict]:
    """item ID -> the scorer's result row for the run's items."""
    listed = tmp / f"{run}.items.txt"
    listed.write_text("\n".join(items) + "\n")
    out = tmp / run
    done = subprocess.run(
        [str(BIN / "agenthop-scorer"), f"{log}::{run}", "--corpus", str(corpus), "--out", str(out)]
        + ["--items", str(listed)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        sys.exit(f"agenthop-scorer failed on run {run!r}:\n{done.stderr[-2000:]}")
    rows = json.loads((out / "summary.json").read_text())["item_results"]
    return {r["item_id"]: r for r in rows}


def cell(row: dict) -> str:
    return f"{row['qtype']}-d{row['depth']}"


def rate(rows: list[dict]) -> str:
    if not rows:
        return "–"
    k, n = sum(r["correct"] for r in rows), len(rows)
    low, high = wilson(k, n)
    return f"{k}/{n} = {100 * k / n:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def table(closed: dict[str, dict], agent: dict[str, dict]) -> str:
    lines = [
        "| cell | closed-book | agent with tools | agent: mean tool calls | agent on items closed-book missed |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in (*CELLS, "all"):
        c = [r for r in closed.values() if name == "all" or cell(r) == name]
        a = [r for r in agent.values() if name == "all" or cell(r) == name]
        missed = [r for r in a if r["item_id"] in closed and not closed[r["item_id"]]["correct"]]
        calls = f"{sum(r['n_calls_logged'] for r in a) / len(a):.1f}" if a else "–"
        lines.append(f"| {name} | {rate(c)} | {rate(a)} | {calls} | {rate(missed)} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log", type=Path, required=True)
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--closed-book", required=True, help="the closed-book run's label")
    ap.add_argument("--agent", required=True, help="the with-tools run's label")
    ap.add_argument("--agent-items", type=Path, help="the items the agent was given (default: those it answered)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="research-validity-") as tmp:
        closed = score(args.log, args.closed_book, args.corpus, answered(args.log, args.closed_book), Path(tmp))
        given = args.agent_items.read_text().split() if args.agent_items else answered(args.log, args.agent)
        agent = score(args.log, args.agent, args.corpus, given, Path(tmp))
    print(table(closed, agent))


if __name__ == "__main__":
    main()
