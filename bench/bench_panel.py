"""Benchmark the panel: N synthetic runs x 1,011 items, ``agenthop-scorer panel`` next to scoring the runs one by one.

    .venv/bin/python bench/bench_panel.py [--runs 20] [--items 1011] [--repeat 2] [--jobs 2]

Builds the corpus and run directories of bench_scorer.py (the same realistic sessions),
then times, interleaved (each round runs every variant once, in turn; the machine is
shared), each in a child process:

* panel, one process: ``agenthop-scorer panel RUN... --out D --jobs 1``;
* panel, ``--jobs J``;
* the runs scored one by one: ``agenthop-scorer RUN... --out D --jobs 1`` (every run's summary.json,
  report.md and report.html, and the comparison across runs), the work a researcher would otherwise do.

Prints each variant's median wall time (min-max), CPU time and peak RSS, and the ratio to the first.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

from bench_scorer import generate, print_variants, timed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--items", type=int, default=1011)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=2, help="rounds; each round runs every variant once")
    ap.add_argument("--jobs", type=int, default=os.cpu_count(), help="worker processes of the parallel panel variant")
    ap.add_argument("--out", type=Path, default=Path("bench/out/panel"))
    args = ap.parse_args()
    corpus, runs = generate(args.out, args.runs, args.items, args.seed)

    cli = [sys.executable, "-m", "agenthop.scorer.cli"]
    panels = {f"panel, --jobs {j}": [*cli, "panel", *runs, "--jobs", str(j)] for j in dict.fromkeys((1, args.jobs))}
    variants = {**panels, "score one by one, --jobs 1": [*cli, "score", *runs, "--jobs", "1"]}
    results: dict[str, list[dict]] = {name: [] for name in variants}
    for r in range(args.repeat):
        for k, (name, cmd) in enumerate(variants.items()):
            report = args.out / f"report-{k}"
            shutil.rmtree(report, ignore_errors=True)
            results[name].append(
                timed([*cmd, "--corpus", str(corpus), "--out", str(report)], args.out / f"variant-{k}.log")
            )
        print(
            f"round {r + 1}/{args.repeat}: " + ", ".join(f"{n} {res[-1]['wall']:.1f} s" for n, res in results.items())
        )

    print_variants(f"{args.runs} runs x {args.items} items (median of {args.repeat}, min-max)", results, 28)
    if len(panels) == 2:  # the panel must not depend on how many processes scored the runs
        p0, p1 = (json.loads((args.out / f"report-{k}" / "panel.json").read_text()) for k in (0, 1))
        same = p0["main_table"] == p1["main_table"] and p0["stopping"] == p1["stopping"]
        print(f"same main table and stopping with 1 and {args.jobs} jobs: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
