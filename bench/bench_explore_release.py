"""A real-paper release: built twice from scratch, the same bytes both times; items kept per stage beside the
published pipeline's Table 5; time per item; the artifact check's solvers; and, with --agents, the offline baseline
agent with tools and closed-book (no tools), scored.

    python bench/bench_explore_release.py [--release bench|strict|research] [--agents] [--draw 20 --draw-seed 32]

The settings are the Makefile's: EXPLORE_BENCH_OPTS (`make explore-bench`, the default), EXPLORE_STRICT_OPTS
(`make explore-strict`) or EXPLORE_RESEARCH_OPTS (`make explore-research`, rebuilt from its recorded responses).
--draw prints that many items chosen by a seeded draw (for reading by hand) with their gold, evidence, the citing
sentences and the labelled sections of the targets. Figures go to stdout as markdown; progress to stderr.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent

# SPEC 8's published attrition (the paper's Table 5): items left after each stage.
TABLE5 = {
    "seeds": 953,
    "chains": 17_983,
    "qa": 1_651,
    "distractors": 1_651,
    "artifacts": None,
    "ensemble": 1_149,
    "sanity": 1_078,
    "audit": 1_043,
    "postfilter": 1_011,
}


def make_opts(variable: str) -> list[str]:
    text = (ROOT / "Makefile").read_text()
    return re.search(rf"^{variable}\s*:=\s*(.+)$", text, re.M).group(1).split()


RELEASE_OPTS = {
    "bench": lambda: make_opts("EXPLORE_BENCH_OPTS"),
    "strict": lambda: make_opts("EXPLORE_STRICT_OPTS"),
    "research": lambda: (
        make_opts("EXPLORE_RESEARCH_OPTS")
        + ["--replay", "--responses", str(ROOT / "explore" / "research-responses.jsonl.gz")]
    ),
}


def tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def build(corpus: Path, out: Path, opts: list[str]) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(
        [str(BIN / "agenthop-construct"), "run", "--corpus", str(corpus), "--out", str(out), *opts],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        sys.exit(f"construct failed:\n{done.stderr[-2000:]}")
    return time.perf_counter() - t0


def run_agent(items: Path, corpus: Path, out: Path, closed_book: bool) -> dict:
    args = [
        str(BIN / "agenthop-runner"),
        "--items",
        str(items),
        "--agent",
        "baseline",
        "--corpus",
        str(corpus),
        "--out",
        str(out / "run"),
        "--no-resume",
        "--no-progress",
        *(["--closed-book"] if closed_book else []),
    ]
    subprocess.run(args, check=True, capture_output=True)
    subprocess.run(
        [str(BIN / "agenthop-scorer"), str(out / "run"), "--corpus", str(corpus), "--out", str(out / "report")],
        check=True,
        capture_output=True,
    )
    return json.loads((out / "report" / "summary.json").read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=ROOT / "explore.sqlite")
    ap.add_argument(
        "--release",
        choices=sorted(RELEASE_OPTS),
        default="bench",
        help="which of the Makefile's real-paper releases to build",
    )
    ap.add_argument("--strict", action="store_true", help="the same as --release strict")
    ap.add_argument(
        "--agents", action="store_true", help="also run the offline baseline with tools and closed-book, and score them"
    )
    ap.add_argument("--draw", type=int, default=0, help="print this many items chosen by a seeded draw")
    ap.add_argument("--draw-seed", type=int, default=32)
    ap.add_argument(
        "--keep-report",
        type=Path,
        help="with --agents, copy the with-tools run's scorer report here (its four-axis table)",
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-explore-release-") as tmp:
        tmp = Path(tmp)
        print("building twice from scratch ...", file=sys.stderr)
        opts = RELEASE_OPTS["strict" if args.strict else args.release]()
        seconds = [build(args.corpus, tmp / f"b{i}", opts) for i in (1, 2)]
        digests = [tree_digest(tmp / f"b{i}" / "release") for i in (1, 2)]
        out = tmp / "b1"
        items = [json.loads(line) for line in (out / "release" / "qa" / "full.jsonl").read_text().splitlines()]
        attrition = json.loads((out / "attrition.json").read_text())
        n, mt = len(items), sum(i["question_type"] == "multi-target" for i in items)
        print(f"## The explore release\n\n`agenthop-construct run --corpus {args.corpus.name} {' '.join(opts)}`\n")
        print(f"- items: {n} ({mt} multi-target, {mt / max(n, 1):.1%})")
        print(
            f"- two builds from scratch: {'the same bytes' if digests[0] == digests[1] else 'DIFFERENT bytes'} (SHA-256 of the release tree "
            f"{digests[0][:16]}...)"
        )
        print(
            f"- build time: {seconds[0]:.1f} s and {seconds[1]:.1f} s; {1000 * min(seconds) / max(n, 1):.0f} ms per released item\n"
        )
        print("| Stage | Table 5 (published) | explore release | drops by reason |\n|---|---:|---:|---|")
        for row in attrition["rows"]:
            reasons = ", ".join(f"{k} −{v}" for k, v in sorted(row["reasons"].items(), key=lambda kv: -kv[1]))
            paper = TABLE5.get(row["stage"])
            print(
                f"| {row['name']} | {paper:,} |" if paper else f"| {row['name']} | – |",
                f"{row['kept']:,} | {reasons or '–'} |",
            )
        print()
        from agenthop.construct import artifacts
        from agenthop.construct.corpus_view import CorpusView

        view = CorpusView(args.corpus)
        print(artifacts.markdown(artifacts.summarise(items, view=view)))
        if args.agents:
            bench = tmp / "bench.sqlite"
            subprocess.run(
                [str(BIN / "agenthop-server"), "corpus", "import", str(out / "release"), "--out", str(bench)],
                check=True,
                capture_output=True,
            )
            from agenthop.scorer.stats import wilson

            print("\n| Agent | accuracy [95% CI] | paper recall ST / MT | section recall |\n|---|---:|---:|---:|")
            for name, closed in (
                ("offline baseline, closed-book (no tools)", True),
                ("offline baseline with tools", False),
            ):
                print(f"running {name} ...", file=sys.stderr)
                summary = run_agent(
                    out / "release" / "qa" / "full.jsonl", bench, tmp / ("closed" if closed else "tools"), closed
                )
                head, total = summary["headline"], summary["items"]["n"]
                low, high = wilson(round(head["accuracy"] * total), total)
                pct = lambda v: "–" if v is None else f"{100 * v:.1f}%"  # noqa: E731
                print(
                    f"| {name} | {pct(head['accuracy'])} [{100 * low:.1f}, {100 * high:.1f}] | {pct(head.get('paper_recall_st'))} / "
                    f"{pct(head.get('paper_recall_mt'))} | {pct(head.get('section_recall'))} |"
                )
            if args.keep_report:
                shutil.copytree(tmp / "tools" / "report", args.keep_report, dirs_exist_ok=True)
        if args.draw:
            labels = {
                json.loads(line)["sample_id"]: json.loads(line)
                for line in (out / "release" / "audit" / "recall_labels.jsonl").read_text().splitlines()
            }
            print(f"\n## {args.draw} items drawn with random.Random({args.draw_seed})\n")
            for item in random.Random(args.draw_seed).sample(items, min(args.draw, n)):
                construct = labels[item["id"]]["analysis"]["construct"]
                print(f"### {item['id']} ({item['question_type']}, depth {item['depth']})\n\n{item['question']}\n")
                for i, (o, k) in enumerate(zip(item["options"], item["distractor_types"])):
                    print(f"- {'ABCD'[i]}. {o} ({k})")
                print(f"\nevidence: {' | '.join(construct['evidence'])}\n")
                print(reading(view, item, labels[item["id"]]["analysis"]["section_recall_labels"]))


def reading(view, item: dict, labels: list[dict]) -> str:
    """What a reader needs beside the item: the citing sentences of the path, and the sections the labels name."""
    seed, targets = item["seed_paper_id"], item["gold_paper_ids"]
    bridge = (item.get("bridge_paper_ids") or [None])[0]
    hops = ([(seed, bridge)] if bridge else []) + [(bridge or seed, t) for t in targets]
    lines = [f'- {view.papers[a].title} cites {view.papers[b].title}: "{view.context(a, b) or ""}"' for a, b in hops]
    by_key = {p.text_key: pid for pid, p in view.papers.items() if p.text_key}
    for label in labels:
        pid = by_key.get(label["arxiv_id"])
        text = next((s.text for s in view.sections(pid) if s.header == label["section"]), "") if pid else ""
        lines.append(f"\n[{label['relevance']}] {label['paper']}, section {label['section']!r}:\n{text}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
