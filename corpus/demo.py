"""The committed default corpus: a small synthetic benchmark built by the same generator and importer as any other.

``agenthop-server corpus demo`` rebuilds ``corpus.sqlite`` and ``splits/demo.jsonl``;
tests/corpus/test_demo_corpus.py checks that the committed files are exactly what this produces.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from agenthop.corpus.importer import import_release
from agenthop.corpus.summaries import DemoSummary
from agenthop.corpus.synth import write_release

DEMO = {"papers": 80, "items": 64, "seed": 7}
SPLIT_FIELDS = ("id", "question_type", "depth", "reasoning_type")


def build_demo(out: Path, split: Path, *, echo=lambda _: None) -> DemoSummary:
    with tempfile.TemporaryDirectory(prefix="agenthop-demo-") as tmp:
        release = Path(tmp) / "agenthop-demo"
        write_release(release, **DEMO)
        summary = import_release(release, Path(out), echo=echo)
        split.parent.mkdir(parents=True, exist_ok=True)
        with open(release / "qa" / "full.jsonl", encoding="utf-8") as qa, open(split, "w", encoding="utf-8") as fh:
            for line in qa:
                item = json.loads(line)
                fh.write(json.dumps({k: item[k] for k in SPLIT_FIELDS}) + "\n")
    return {"demo": DEMO, "corpus": str(out), "split": str(split), "counts": summary["counts"]}
