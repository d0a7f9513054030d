"""Two release-level shortcuts, per question type, on a built release (found by a review of the first explore release; both fixed since).

1. Seed exclusion: rule out every option that holds a number the seed paper states, and pick among the rest. The
offline generator never blanks a value the seed states (the seed would give the gold away); while distractors could
be such numbers (SPEC 8's seed_only was one by definition), every ruled-out option was wrong. An agent always has the
seed, so this needs neither the targets nor tools. The artifact check runs it too (``seed_exclusion``).
2. Cross-item: the option the other items with the same blanked sentence also offer. The post-filter now asks each
blank once (``repeated_blank``), so on a current release it abstains; this script keeps measuring it.

    make explore.sqlite explore-bench
    python bench/bench_release_leaks.py             # the release make explore-bench builds
    python bench/bench_release_leaks.py --release DIR --corpus CORPUS

Reports, per question type, the expected accuracy of a uniform pick among the options left (with the scorer's Wilson
95% interval on the rounded credit), how often each distractor kind is ruled out, and how many multi-target items a
reader of one target plus the seed answers (that target's value and "not the seed's number" leave one option); then
the cross-item solver's accuracy and how many items share a blanked sentence with another.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

from agenthop.construct.corpus_view import CorpusView
from agenthop.scorer.stats import wilson

ROOT = Path(__file__).resolve().parents[1]
SEPARATOR = ";"


def seed_numbers(view: CorpusView, pid: str) -> set[str]:
    return {n for sec in view.sections(pid) for n in re.findall(r"\d+(?:\.\d+)?", sec.text)}


def parts(option: str) -> list[str]:
    return [p.strip().rstrip("%") for p in option.split(SEPARATOR)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--release", type=Path, default=ROOT / "explore-bench" / "release")
    ap.add_argument("--corpus", type=Path, default=ROOT / "explore.sqlite")
    args = ap.parse_args()
    items = [json.loads(line) for line in (args.release / "qa" / "full.jsonl").read_text().splitlines()]
    view = CorpusView(args.corpus)
    rows = {}
    for it in items:
        numbers = seed_numbers(view, it["seed_paper_id"])
        stated = [any(p in numbers for p in parts(o)) for o in it["options"]]
        left = [i for i in range(len(stated)) if not stated[i]] or list(range(len(stated)))
        row = rows.setdefault(it["question_type"], {"n": 0, "credit": 0.0, "ruled_out": {}, "one_target": 0})
        row["n"] += 1
        row["credit"] += (it["correct_index"] in left) / len(left)
        for kind, out in zip(it["distractor_types"], stated):
            done, seen = row["ruled_out"].get(kind, (0, 0))
            row["ruled_out"][kind] = (done + out, seen + 1)
        if it["question_type"] == "multi-target":
            gold = parts(it["options"][it["correct_index"]])
            if any(sum(parts(it["options"][i])[k] == gold[k] for i in left) == 1 for k in range(len(gold))):
                row["one_target"] += 1
    view.close()
    total_n = sum(r["n"] for r in rows.values())
    total_credit = sum(r["credit"] for r in rows.values())
    print(f"release: {args.release} ({total_n} items); seed exclusion, chance 25%")
    print("| Items | n | Accuracy [95% CI] | Ruled out by kind | MT answered by one target + seed |")
    print("|---|---:|---:|---|---:|")
    for name, r in [
        *sorted(rows.items()),
        ("all", {"n": total_n, "credit": total_credit, "ruled_out": {}, "one_target": None}),
    ]:
        lo, hi = wilson(round(r["credit"]), r["n"])
        kinds = ", ".join(f"{k} {a}/{b}" for k, (a, b) in sorted(r["ruled_out"].items()))
        one = f"{r['one_target']}/{r['n']}" if name == "multi-target" else ""
        print(f"| {name} | {r['n']} | {r['credit'] / r['n']:.1%} [{lo:.1%}, {hi:.1%}] | {kinds} | {one} |")
    shared, credit = cross_item(items)
    lo, hi = wilson(round(credit), len(items))
    print(
        f"\ncross-item intersection: {credit / len(items):.1%} [{lo:.1%}, {hi:.1%}] over {len(items)} items; "
        f"{shared} items share a blanked sentence with another item"
    )


_CLOZE = re.compile(r'"([^"]*___[^"]*)"')


def cross_item(items: list[dict]) -> tuple[int, float]:
    """(items sharing a blanked sentence with another, expected accuracy of the intersection rule; no overlap = chance)."""
    blanks = [_CLOZE.findall(it["question"]) for it in items]
    where = defaultdict(list)
    for i, cs in enumerate(blanks):
        for k, c in enumerate(cs):
            where[c].append((i, k))
    shared, credit = 0, 0.0
    for i, it in enumerate(items):
        score = [0] * len(it["options"])
        for k, c in enumerate(blanks[i]):
            for j, kk in where[c]:
                if j != i:
                    offered = Counter(parts(o)[kk] for o in items[j]["options"])
                    score = [s + (parts(o)[k] in offered) for s, o in zip(score, it["options"])]
        best = [x for x, s in enumerate(score) if s == max(score)]
        shared += max(score) > 0
        credit += (it["correct_index"] in best) / len(best)
    return shared, credit


if __name__ == "__main__":
    main()
