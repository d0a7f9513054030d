"""The artifact check on the real-paper release: every no-evidence solver's accuracy with its Wilson 95% interval, on
the release `make explore-bench` builds from explore.sqlite ("after", the figures its provenance records) beside the
release the code before the artifact check builds from the same corpus ("before", commit ca3a8ce, with the settings
the issue measured: --min-refs 2), both checked by this checkout's solvers.

    make explore.sqlite explore-bench
    python bench/bench_artifacts.py                      # before = ca3a8ce
    python bench/bench_artifacts.py --before none        # the explore release only

The "before" release is built in a child process from ``git archive REV`` of this repository, so the two builds
share nothing but the corpus file.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from agenthop.construct import artifacts  # noqa: E402
from agenthop.construct.corpus_view import CorpusView  # noqa: E402

BEFORE = "ca3a8ce"  # the last commit of the twin-distractor generator, before the artifact check
PACKAGES = ("server", "corpus", "llm", "runner", "scorer", "construct", "inspect_task")  # agenthop.X lives in X/


def build_at(rev: str, corpus: Path, out: Path, options: list[str], scratch: Path) -> None:
    """Build a release with the code of commit ``rev`` in a child process."""
    src, pkgroot = scratch / "src", scratch / "pkgroot"
    src.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    (pkgroot / "agenthop").mkdir(parents=True)
    for f in (src / "agenthop").glob("*.py"):
        shutil.copy(f, pkgroot / "agenthop" / f.name)
    for name in PACKAGES:
        if (src / name).is_dir():
            (pkgroot / "agenthop" / name).symlink_to(src / name)
    env = {**os.environ, "PYTHONPATH": str(pkgroot)}
    subprocess.run(
        [sys.executable, "-m", "agenthop.construct.cli", "run", "--corpus", str(corpus), "--out", str(out), *options],
        cwd=scratch,
        env=env,
        check=True,
        capture_output=True,
    )


def artifact_check(release: Path, view: CorpusView) -> dict:
    """The release's own recorded artifact check when it has one, else this checkout's solvers on its items."""
    provenance = json.loads((release / "construct" / "provenance.json").read_text())
    if provenance.get("artifact_check"):
        return provenance["artifact_check"]
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
    ap.add_argument(
        "--after", type=Path, default=ROOT / "explore-bench", help="the output directory of 'make explore-bench'"
    )
    ap.add_argument("--before", default=BEFORE, help="commit whose code builds the 'before' release, or 'none'")
    ap.add_argument("--before-options", default="--min-refs 2", help="its agenthop-construct run options")
    args = ap.parse_args()
    for path, how in ((args.corpus, "make explore.sqlite"), (args.after / "release", "make explore-bench")):
        if not path.exists():
            sys.exit(f"{path} is missing: build it with '{how}'")
    view = CorpusView(args.corpus)
    work = Path(tempfile.mkdtemp(prefix="bench-artifacts-"))
    try:
        after = artifact_check(args.after / "release", view)
        rows = {r["stage"]: r for r in json.loads((args.after / "attrition.json").read_text())["rows"]}
        before = None
        if args.before != "none":
            build_at(args.before, args.corpus, work / "before", args.before_options.split(), work / "src")
            before = artifact_check(work / "before" / "release", view)
        print(f"corpus {args.corpus.name}; chance {after['chance']:.0%}, limit {after['limit']:.0%}")
        art = rows.get("artifacts", {"entered": 0, "dropped": 0, "reasons": {}})
        print(
            f"after ({args.after.name}): {after['items']} items; the artifacts stage dropped {art['dropped']} of {art['entered']} "
            f"({', '.join(f'{k} {v}' for k, v in art['reasons'].items()) or 'none'})"
        )
        if before:
            print(f"before ({args.before}, {args.before_options}): {before['items']} items")
        print()
        print(
            f"| Solver | Sees | Before ({args.before}) | After |" if before else "| Solver | Sees | Accuracy [95% CI] |"
        )
        print("|---|---|---:|---:|" if before else "|---|---|---:|")
        family = {s.name: s.family for s in artifacts.SOLVERS} | {
            "form_vote": "option+question",
            "option_classifier": "option",
        }
        for name in artifacts.NAMES:
            cells = [cell(before, name), cell(after, name)] if before else [cell(after, name)]
            print(f"| `{name}`: {artifacts.describe(name)} | {family[name]} | " + " | ".join(cells) + " |")
        print(
            f"\nafter: above the limit: {', '.join(after['above_limit']) or 'none'}; "
            f"below the floor: {', '.join(after['below_floor']) or 'none'}"
        )
        if before:
            print(f"before: above the limit: {', '.join(before['above_limit']) or 'none'}")
    finally:
        view.close()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
