"""A blind read of a release: a seeded draw of items put to a reader who sees only the options (or only the question
and options), and the reader's picks scored by cell. A capable model that picks the gold from the options alone
finds it by form or register, not by research; the artifact check's rule-based solvers can miss what it sees.

    python bench/blind_read.py packet ITEMS.jsonl --draw 40 --seed 4646 --show options --out DIR
    python bench/blind_read.py score DIR ANSWERS.tsv

ITEMS.jsonl is any file of items with ``question``, ``options``, ``correct_index``, ``kind`` and ``depth`` (a run's
``work/artifacts.jsonl`` or ``work/ensemble.jsonl``, dropped records skipped). ``packet`` writes ``DIR/packet.md``
(for the reader) and ``DIR/key.json`` (never for the reader). ANSWERS.tsv has one line per item,
``N<TAB>LETTER<TAB>why``. ``score`` prints accuracy by cell with Wilson 95% intervals (chance is 25%).
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from agenthop.scorer.stats import wilson

LETTERS = "ABCD"
ASK = {
    "options": "For each item below you see only the four options of a multiple-choice question about a research "
    "paper, not the question. Pick the option you think is the correct answer to whatever was asked.",
    "question": "For each item below you see a multiple-choice question about a research paper and its four options. "
    "Pick the option you think is correct.",
}


def packet(items_path: Path, draw: int, seed: int, show: str, out: Path) -> None:
    rows = [json.loads(line) for line in items_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [r for r in rows if "drop" not in r and r.get("options")]
    chosen = random.Random(seed).sample(rows, min(draw, len(rows)))
    lines = [f"# Items: {show} only" if show == "options" else "# Items", "", ASK[show], ""]
    key = {}
    for n, item in enumerate(chosen, 1):
        lines.append(f"## Item {n}")
        if show == "question":
            lines.append(f"Question: {item['question']}")
        lines += [f"({letter}) {text}" for letter, text in zip(LETTERS, item["options"])]
        lines.append("")
        key[str(n)] = {
            "id": item["id"],
            "gold": LETTERS[item["correct_index"]],
            "cell": f"{item['kind']}-d{item['depth']}",
        }
    out.mkdir(parents=True, exist_ok=True)
    (out / "packet.md").write_text("\n".join(lines), encoding="utf-8")
    (out / "key.json").write_text(json.dumps({"items": str(items_path), "seed": seed, "key": key}, indent=1) + "\n")
    print(f"{out / 'packet.md'}: {len(key)} items drawn with random.Random({seed}) from {len(rows)}")


def _rate(k: int, n: int) -> str:
    low, high = wilson(k, n) or (0.0, 0.0)
    return f"{k}/{n} ({100 * k / n:.1f}% [{100 * low:.1f}, {100 * high:.1f}])" if n else "-"


def score(folder: Path, answers: Path) -> None:
    key = json.loads((folder / "key.json").read_text())["key"]
    picks = {}
    for line in answers.read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        if len(fields) >= 2 and fields[0].strip() in key:
            picks[fields[0].strip()] = fields[1].strip().upper()[:1]
    missing = sorted(set(key) - set(picks), key=int)
    if missing:
        print(f"no answer for item(s) {', '.join(missing)}: counted wrong")
    cells: dict[str, list[bool]] = {}
    for n, entry in key.items():
        cells.setdefault(entry["cell"], []).append(picks.get(n) == entry["gold"])
    print("| cell | gold picked |\n|---|---:|")
    for cell in sorted(cells):
        print(f"| {cell} | {_rate(sum(cells[cell]), len(cells[cell]))} |")
    every = [hit for hits in cells.values() for hit in hits]
    print(f"| all | {_rate(sum(every), len(every))} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("packet", help="draw items and write the reader's packet and the key")
    p.add_argument("items", type=Path)
    p.add_argument("--draw", type=int, default=40)
    p.add_argument("--seed", type=int, default=4646)
    p.add_argument("--show", choices=sorted(ASK), default="options")
    p.add_argument("--out", type=Path, required=True)
    s = sub.add_parser("score", help="score a reader's picks against the key")
    s.add_argument("folder", type=Path)
    s.add_argument("answers", type=Path)
    args = ap.parse_args()
    if args.command == "packet":
        packet(args.items, args.draw, args.seed, args.show, args.out)
    else:
        score(args.folder, args.answers)


if __name__ == "__main__":
    main()
