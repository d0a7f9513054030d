"""Item IDs across two releases: how many IDs they share, and how many shared IDs name items that differ in what the
agent sees (the question or any option). Since item IDs hash the question and every option, the second count is 0.

    make explore-strict explore-bench
    python bench/bench_release_ids.py explore-strict/release explore-bench/release
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def items(release: Path) -> dict[str, dict]:
    lines = (release / "qa" / "full.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first", type=Path)
    parser.add_argument("second", type=Path)
    args = parser.parse_args()
    a, b = items(args.first), items(args.second)
    shared = sorted(set(a) & set(b))
    differ = [i for i in shared if (a[i]["question"], a[i]["options"]) != (b[i]["question"], b[i]["options"])]
    print(f"{args.first}: {len(a)} items; {args.second}: {len(b)} items")
    print(f"shared IDs: {len(shared)}; shared IDs whose question or options differ: {len(differ)}")
    for i in differ:
        print(f"  {i}")


if __name__ == "__main__":
    main()
