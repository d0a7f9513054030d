"""Comparing runs on the demo split: its item IDs, and each item's result without what differs between two runs of the
same deterministic agent."""

from __future__ import annotations

import json
from pathlib import Path

# What differs between two runs of the same deterministic agent: identities, clocks and run labels.
VOLATILE = {"session_id", "time", "latency_ms", "wall_time_s", "run", "cost_usd"}


def demo_ids(split: Path, n: int | None = None) -> list[str]:
    ids = [json.loads(line)["id"] for line in split.read_text().splitlines() if line.strip()]
    return ids[:n] if n else ids


def normalised_items(summary: dict) -> dict:
    return {r["item_id"]: {k: v for k, v in r.items() if k not in VOLATILE} for r in summary["item_results"]}
