"""bench/blind_read.py: the packet a blind reader sees holds no key, and the reader's picks are scored by cell."""

from __future__ import annotations

import json
import subprocess
import sys

from support.paths import REPO

SCRIPT = REPO / "bench" / "blind_read.py"


def run(*args) -> str:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)], check=True, capture_output=True, text=True
    ).stdout


def test_a_packet_hides_the_gold_and_picks_are_scored_by_cell(tmp_path):
    items = tmp_path / "items.jsonl"
    rows = [
        {
            "id": f"c-{n}",
            "kind": "ST" if n % 2 else "MT",
            "depth": 1,
            "question": f"Question {n}?",
            "options": [f"option {n}{x}" for x in "wxyz"],
            "correct_index": n % 4,
        }
        for n in range(6)
    ] + [{"id": "c-dropped", "drop": {"reason": "shortcut"}}]
    items.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run("packet", items, "--draw", 4, "--seed", 1, "--out", tmp_path / "read")
    text = (tmp_path / "read" / "packet.md").read_text()
    assert not any(r["id"] in text or r["question"] in text for r in rows[:6])  # the options, nothing else
    key = json.loads((tmp_path / "read" / "key.json").read_text())["key"]
    by_id = {r["id"]: r for r in rows}
    assert len(key) == 4 and "c-dropped" not in {e["id"] for e in key.values()}
    for entry in key.values():
        item = by_id[entry["id"]]
        assert f"({entry['gold']}) {item['options'][item['correct_index']]}\n" in text
    picks = {n: e["gold"] if n != "1" else ("A" if e["gold"] != "A" else "B") for n, e in key.items()}
    (tmp_path / "answers.tsv").write_text("".join(f"{n}\t{p}\twhy\n" for n, p in picks.items() if n != "2"))
    out = run("score", tmp_path / "read", tmp_path / "answers.tsv")
    assert "no answer for item(s) 2: counted wrong" in out
    assert "| all | 2/4 (50.0%" in out
