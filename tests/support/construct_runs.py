"""A construction run against the scripted model (support/construct_script.py) on the committed corpus: prices for its
three models, settings that send every model stage to it, the run itself, and digests of a run's files to compare two
runs byte for byte."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from agenthop.construct.pipeline import run_pipeline
from agenthop.construct.settings import Settings
from agenthop.llm.pricing import PriceTable
from agenthop.llm.retry import RetryPolicy
from support.construct_script import OUTCOMES
from support.paths import REPO

CORPUS = REPO / "corpus.sqlite"
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


def build(out: Path, s, **kw) -> dict:
    return run_pipeline(
        CORPUS,
        out,
        s,
        prices=PriceTable(PRICES),
        policy=RetryPolicy(backoff=0.01, jitter=0),
        echo=kw.pop("echo", lambda line: None),
        **kw,
    )


def release_parts(root: Path) -> tuple[dict, dict]:
    """The release's files' digests without the provenance, and the provenance without the recorded responses' entry."""
    files = tree_digest(root)
    prov = json.loads(files.pop("construct/provenance.json") and (root / "construct/provenance.json").read_text())
    prov.pop("recorded_responses", None)
    return files, prov
