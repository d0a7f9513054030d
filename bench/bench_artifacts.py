"""The artifact audit on a real-paper release: every no-evidence solver's accuracy with its Wilson 95% interval, on the
release this checkout builds from explore.sqlite ("after") beside the release an earlier commit's code builds from the
same corpus with the same settings ("before", by default the code issue 32 was filed against), both audited by this
checkout's solvers.

    make explore.sqlite
    python bench/bench_artifacts.py                      # before = ca3a8ce, after = this checkout
    python bench/bench_artifacts.py --before none        # this checkout only

The "before" release is built in a child process from ``git archive REV`` of this repository, so the two builds
share nothing but the corpus file. Each build's wall time per released item is printed too (the machine is shared:
read them as rough).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from agenthop.construct import artifacts  # noqa: E402
from agenthop.construct.corpus_view import CorpusView  # noqa: E402
from agenthop.construct.pipeline import run_pipeline  # noqa: E402
from agenthop.construct.settings import Settings  # noqa: E402

BEFORE = "ca3a8ce"  # main when issue 32 was filed: the twin-distractor generator
PACKAGES = {"server": "server", "runner": "runner", "scorer": "scorer", "construct": "construct", "inspect_task": "inspect_task"}


def build_at(rev: str, corpus: Path, out: Path, min_refs: int, scratch: Path) -> float:
    """Build a release with the code of commit ``rev`` in a child process; return its wall time."""
    src, pkgroot = scratch / "src", scratch / "pkgroot"
    src.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    (pkgroot / "agenthop").mkdir(parents=True)
    for f in (src / "agenthop").glob("*.py"):
        shutil.copy(f, pkgroot / "agenthop" / f.name)
    for name, folder in PACKAGES.items():
        if (src / folder).is_dir():
            (pkgroot / "agenthop" / name).symlink_to(src / folder)
    env = {**os.environ, "PYTHONPATH": str(pkgroot)}
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "agenthop.construct.cli", "run", "--corpus", str(corpus), "--out", str(out),
                    "--min-refs", str(min_refs)], cwd=scratch, env=env, check=True, capture_output=True)
    return time.perf_counter() - t0


def audit(release: Path, view: CorpusView) -> dict:
    """The release's own recorded audit when it has one, else this checkout's solvers on its items."""
    provenance = json.loads((release / "construct" / "provenance.json").read_text())
    if provenance.get("artifact_audit"):
        return provenance["artifact_audit"]
    items = [json.loads(line) for line in (release / "qa" / "full.jsonl").read_text().splitlines() if line.strip()]
    return artifacts.summarise(items, view=view)


def cell(summary: dict | None, name: str) -> str:
    s = (summary or {}).get("solvers", {}).get(name)
    if not s:
        return "–"
    lo, hi = s["ci95"]
    mark = " **>35%**" if s["accuracy"] > summary["limit"] else ""
    return f"{s['accuracy']:.1%} [{lo:.1%}, {hi:.1%}]{mark}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=ROOT / "explore.sqlite")
    ap.add_argument("--min-refs", type=int, default=2, help="the explore papers cite at most 17 others with text")
    ap.add_argument("--before", default=BEFORE, help="commit whose code builds the 'before' release, or 'none'")
    ap.add_argument("--keep", type=Path, help="keep both builds in this directory")
    args = ap.parse_args()
    if not args.corpus.exists():
        sys.exit(f"{args.corpus} is missing: build it with 'make explore.sqlite'")
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-artifacts-"))
    view = CorpusView(args.corpus)
    try:
        t0 = time.perf_counter()
        result = run_pipeline(args.corpus, work / "after", Settings(min_refs=args.min_refs), echo=lambda line: None)
        after_s = time.perf_counter() - t0
        after = audit(work / "after" / "release", view)
        rows = {r["stage"]: r for r in result["attrition"]["rows"]}
        before = before_s = None
        if args.before != "none":
            before_s = build_at(args.before, args.corpus, work / "before", args.min_refs, work / "before-src")
            before = audit(work / "before" / "release", view)
        print(f"corpus {args.corpus.name}, --min-refs {args.min_refs}; chance {after['chance']:.0%}, limit {after['limit']:.0%}")
        print(f"after: {after['items']} items, built in {after_s:.1f} s ({after_s / max(after['items'], 1):.2f} s per item); "
              f"the artifacts stage dropped {rows['artifacts']['dropped']} of {rows['artifacts']['entered']} "
              f"({', '.join(f'{k} {v}' for k, v in rows['artifacts']['reasons'].items()) or 'none'})")
        if before:
            print(f"before ({args.before}): {before['items']} items, built in {before_s:.1f} s "
                  f"({before_s / max(before['items'], 1):.2f} s per item)")
        print()
        print(f"| Solver | Sees | Before ({args.before}) | After |" if before else "| Solver | Sees | Accuracy [95% CI] |")
        print("|---|---|---:|---:|" if before else "|---|---|---:|")
        family = {s.name: s.family for s in artifacts.SOLVERS} | {"form_vote": "option+question", "option_classifier": "option"}
        for name in artifacts.NAMES:
            cells = [cell(before, name), cell(after, name)] if before else [cell(after, name)]
            print(f"| {name}: {artifacts.describe(name)} | {family[name]} | " + " | ".join(cells) + " |")
        over = [n for n in after["above_limit"]]
        print(f"\nafter: above the limit: {', '.join(over) or 'none'}; below the floor: {', '.join(after['below_floor']) or 'none'}")
    finally:
        view.close()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
