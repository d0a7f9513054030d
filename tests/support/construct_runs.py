"""A construction run against the scripted model (support/construct_script.py): prices for its three models, settings
that send every model stage to it, and a digest of a run's files to compare two runs byte for byte."""

from __future__ import annotations

import hashlib
from pathlib import Path

from agenthop.construct.settings import Settings
from support.construct_script import OUTCOMES

PRICES = {
    "gen": {"input_per_m": 1.0, "output_per_m": 4.0},
    "f": {"input_per_m": 0.5, "output_per_m": 2.0},
    "judge": {"input_per_m": 0.25, "output_per_m": 1.0},
}


def settings(url: str, **kw) -> Settings:
    return Settings(
        min_refs=5,
        max_chains_per_seed=1,
        judge=f"judge@{url}",
        generator=f"gen@{url}",
        filters=(f"f1@{url}", f"f2@{url}", f"f3@{url}"),
        max_qa=len(OUTCOMES),
        workers=1,
        **kw,
    )


def tree_digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }
