"""A blind read of a release: a seeded draw of items put to a reader who sees only the options (or only the question
and options), and the reader's picks scored by cell. A capable model that picks the gold from the options alone
finds it by form or register, not by research; the artifact check's rule-based solvers can miss what it sees.

    python bench/blind_read.py packet ITEMS.jsonl --draw 40 --seed 4646 --show options --out DIR
    python bench/blind_read.py score DIR ANSWERS.tsv

    python bench/blind_read.py packet ITEMS.jsonl --draw 40 --seed 4646 --show open --out DIR   # the question alone
    python bench/blind_read.py judge DIR ANSWERS.tsv --out JUDGED   # a judge's packet: question, gold, answer
    python bench/blind_read.py score JUDGED VERDICTS.tsv            # Y: the answer states the gold's finding

ITEMS.jsonl is any file of items with ``question``, ``options``, ``correct_index``, ``kind`` and ``depth`` (a run's
``work/artifacts.jsonl`` or ``work/ensemble.jsonl``, dropped records skipped). ``packet`` writes ``DIR/packet.md``
(for the reader) and ``DIR/key.json`` (never for the reader). ANSWERS.tsv has one line per item,
``N<TAB>LETTER<TAB>why``. ``score`` prints accuracy by cell with Wilson 95% intervals (chance is 25%).

``--show open`` asks for the question alone, answered in the reader's own words with no options: what a model knows
of the finding, apart from anything the options give away. Another reader, who wrote none of the answers, judges
each beside the gold (``judge``): Y when it states the gold's finding (its figures, direction or mechanism), P when
part of it, N when not; ``score`` counts Y.
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
    "open": "For each item below you see a question about a research paper. Answer it in your own words, in one or "
    "two sentences, as specifically as you can (figures, direction of an effect, mechanism): your best answer, "
    "never 'unknown'.",
}
JUDGE = (
    "For each item below you see a question about a research paper, the paper's answer (the gold), and another "
    "reader's answer written without the paper. Judge whether the reader's answer states the gold's finding: Y (its "
    "substance: the same figures, direction or mechanism), P (part of it, or the right idea without what makes it "
    "specific), N (wrong, or too vague to count)."
)


def packet(items_path: Path, draw: int, seed: int, show: str, out: Path) -> None:
    rows = [json.loads(line) for line in items_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [r for r in rows if "drop" not in r and r.get("options")]
    chosen = random.Random(seed).sample(rows, min(draw, len(rows)))
    lines = [f"# Items: {show} only" if show == "options" else "# Items", "", ASK[show], ""]
    key = {}
    for n, item in enumerate(chosen, 1):
        lines.append(f"## Item {n}")
        if show != "options":
            lines.append(f"Question: {item['question']}")
        if show != "open":
            lines += [f"({letter}) {text}" for letter, text in zip(LETTERS, item["options"])]
        lines.append("")
        key[str(n)] = {
            "id": item["id"],
            "gold": "Y" if show == "open" else LETTERS[item["correct_index"]],
            "cell": f"{item['kind']}-d{item['depth']}",
            **({"question": item["question"], "answer": item["answer"]} if show == "open" else {}),
        }
    out.mkdir(parents=True, exist_ok=True)
    (out / "packet.md").write_text("\n".join(lines), encoding="utf-8")
    (out / "key.json").write_text(json.dumps({"items": str(items_path), "seed": seed, "key": key}, indent=1) + "\n")
    print(f"{out / 'packet.md'}: {len(key)} items drawn with random.Random({seed}) from {len(rows)}")


def judge(folder: Path, answers: Path, out: Path) -> None:
    """A judge's packet for an open read: each item's question, its gold and the reader's answer (the key stays)."""
    key = json.loads((folder / "key.json").read_text())
    given = _answers(answers)
    lines = ["# Items: judge the answers", "", JUDGE, ""]
    for n, entry in key["key"].items():
        lines += [
            f"## Item {n}",
            f"Question: {entry['question']}",
            f"Gold: {entry['answer']}",
            f"Reader's answer: {given.get(n, '(none)')}",
            "",
        ]
    out.mkdir(parents=True, exist_ok=True)
    (out / "packet.md").write_text("\n".join(lines), encoding="utf-8")
    (out / "key.json").write_text(json.dumps({**key, "answers": str(answers)}, indent=1) + "\n")
    print(f"{out / 'packet.md'}: {len(key['key'])} answers to judge")


def _answers(path: Path) -> dict[str, str]:
    """Item number -> the second field of its line (a letter, a verdict or an answer in words)."""
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        if len(fields) >= 2 and fields[0].strip().isdigit():
            out[fields[0].strip()] = fields[1].strip()
    return out


def _rate(k: int, n: int) -> str:
    low, high = wilson(k, n) or (0.0, 0.0)
    return f"{k}/{n} ({100 * k / n:.1f}% [{100 * low:.1f}, {100 * high:.1f}])" if n else "-"


def score(folder: Path, answers: Path) -> None:
    key = json.loads((folder / "key.json").read_text())["key"]
    picks = {n: a.upper()[:1] for n, a in _answers(answers).items() if n in key}
    missing = sorted(set(key) - set(picks), key=int)
    if missing:
        print(f"no answer for item(s) {', '.join(missing)}: counted wrong")
    cells: dict[str, list[bool]] = {}
    for n, entry in key.items():
        cells.setdefault(entry["cell"], []).append(picks.get(n) == entry["gold"])
    print("| cell | right |\n|---|---:|")
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
    j = sub.add_parser("judge", help="an open read's answers beside their golds, for a judge")
    j.add_argument("folder", type=Path)
    j.add_argument("answers", type=Path)
    j.add_argument("--out", type=Path, required=True)
    s = sub.add_parser("score", help="score a reader's picks (or a judge's verdicts) against the key")
    s.add_argument("folder", type=Path)
    s.add_argument("answers", type=Path)
    args = ap.parse_args()
    if args.command == "packet":
        packet(args.items, args.draw, args.seed, args.show, args.out)
    elif args.command == "judge":
        judge(args.folder, args.answers, args.out)
    else:
        score(args.folder, args.answers)


if __name__ == "__main__":
    main()
