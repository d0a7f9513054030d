"""Shards: a deterministic share of a run's items, so N machines can each run one.

Shard K of N holds the items at positions K-1, K-1+N, K-1+2N, ... of the run's item
list (after the question-type, depth and limit filters). Every item is in exactly one
shard, shard sizes differ by at most one, and each shard keeps the list's mix of item
types. The identity of the whole list travels with each shard (``items_sha256``), so
the scorer can check that N runs are the shards of one run before merging them.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass


class ShardError(ValueError):
    """A shard specification that cannot be used; the message says why."""


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int

    def __post_init__(self) -> None:
        if type(self.index) is not int or type(self.count) is not int or not 1 <= self.index <= self.count:
            raise ShardError(f"shard {self.index!r}/{self.count!r}: K must be between 1 and N, and N at least 1")

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def take(self, items: list[str]) -> list[str]:
        return items[self.index - 1 :: self.count]


def parse_shard(text: str) -> Shard:
    """``"K/N"`` with 1 <= K <= N."""
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
    if not m:
        raise ShardError(f"shard {text!r} is not of the form K/N (for example 2/4)")
    return Shard(int(m.group(1)), int(m.group(2)))  # which checks 1 <= K <= N


def items_digest(items: list[str]) -> str:
    """sha256 of the ordered item list (one ID per line): equal digests, equal lists."""
    return hashlib.sha256("".join(i + "\n" for i in items).encode("utf-8")).hexdigest()


def shard_manifest(shard: Shard, all_items: list[str]) -> dict:
    """The ``shard`` entry of run.json (docs/runner.md, "Sharding")."""
    return {
        "index": shard.index,
        "count": shard.count,
        "items_total": len(all_items),
        "items_sha256": items_digest(all_items),
    }
