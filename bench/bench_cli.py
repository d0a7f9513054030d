"""How long each command line takes to answer ``--help`` (its start-up before any work), side by side.

    python bench/bench_cli.py [--repeat 7] [--before /tmp/before/venv/bin]

Runs ``agenthop-server --help``, ``agenthop-runner --help`` and ``agenthop-scorer --help`` from
this interpreter's bin directory and, with ``--before``, from another install's bin directory
(an earlier checkout), interleaved: each round runs every command of every install once. Prints
the median wall time of each with its spread (min-max), and the ratio before / now.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

COMMANDS = ("agenthop-server", "agenthop-runner", "agenthop-scorer")


def time_help(executable: Path) -> float:
    started = time.perf_counter()
    subprocess.run([str(executable), "--help"], check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--before", type=Path, default=None, help="bin directory of an earlier install to compare with")
    args = parser.parse_args()
    installs = {"now": Path(sys.executable).parent}
    if args.before is not None:
        installs["before"] = args.before
    samples: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.repeat):
        for command in COMMANDS:
            for name, bin_dir in installs.items():
                samples.setdefault((command, name), []).append(time_help(bin_dir / command))
    for command in COMMANDS:
        line = f"{command:<17}"
        for name in installs:
            values = samples[(command, name)]
            line += f"  {name} {statistics.median(values):.2f} s ({min(values):.2f}-{max(values):.2f})"
        if "before" in installs:
            line += f"  before / now {statistics.median(samples[(command, 'before')]) / statistics.median(samples[(command, 'now')]):.1f}x"
        print(line)


if __name__ == "__main__":
    main()
