"""The examples of docs/corpus.md import as the page says: the docs cannot drift from the importer."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from support.paths import REPO

from agenthop.corpus.importer import import_release

DOC = REPO / "docs" / "corpus.md"
TABLES = (
    "papers",
    "sections",
    "pool",
    "edges",
    "items",
    "item_nodes",
    "item_edges",
    "gold_items",
    "gold_recall_labels",
)


def examples() -> dict[str, str]:
    """The ```json file=NAME blocks of the page."""
    return dict(re.findall(r"```json file=(\S+)\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S))


def contents(path: Path) -> dict[str, list]:
    conn = sqlite3.connect(path)
    try:
        return {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in TABLES}
    finally:
        conn.close()


def test_the_documented_release_and_its_packaged_form_import_alike(tmp_path):
    blocks = examples()
    assert {
        "qa/full.jsonl",
        "graphs/full.jsonl",
        "paper_pool/papers.jsonl",
        "audit/recall_labels.jsonl",
        "agenthop_lite.json",
    } <= set(blocks)
    release = tmp_path / "release"
    for name, body in blocks.items():
        path = (release if "/" in name else tmp_path) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        # A JSONL example is one record per line; the packaged file is pretty-printed JSON, written as shown.
        path.write_text(
            body if "/" not in name else "".join(line + "\n" for line in body.splitlines() if line.strip()),
            encoding="utf-8",
        )

    from_release = import_release(release, tmp_path / "release.sqlite", echo=lambda _: None)
    from_packaged = import_release(
        tmp_path / "agenthop_lite.json",
        tmp_path / "packaged.sqlite",
        labels=release / "audit/recall_labels.jsonl",
        echo=lambda _: None,
    )
    assert from_release["counts"]["items"] == from_packaged["counts"]["items"] == 1
    assert from_release["warnings"] == {}
    assert set(from_packaged["warnings"]) == {"unknown_cognitive_skill", "unknown_venue", "unknown_consensus_tier"}
    assert contents(tmp_path / "release.sqlite") == contents(tmp_path / "packaged.sqlite")
