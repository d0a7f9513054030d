"""Benchmark corpus building at full scale: synthetic generation, then import.

    python bench/bench_corpus.py                      # 7,205 papers, 1,011 items, temp dir
    python bench/bench_corpus.py --out /tmp/release   # keep the release (and corpus.sqlite beside it)
    python bench/bench_corpus.py --papers 300 --items 64 --skip-import

Each step runs in its own child process, which reports its wall time and its own peak
resident memory (``resource.getrusage(RUSAGE_SELF).ru_maxrss``), so one step's memory
never hides another's. Prints a table, or JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _peak_rss_mb() -> float:
    # ru_maxrss is in KiB on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _step_generate(args: argparse.Namespace) -> dict:
    from agenthop.server.corpus.synth import write_release

    started = time.perf_counter()
    stats = write_release(Path(args.release), papers=args.papers, items=args.items, seed=args.seed)
    return {"seconds": round(time.perf_counter() - started, 2), "peak_rss_mb": round(_peak_rss_mb(), 1), "result": stats}


def _step_import(args: argparse.Namespace) -> dict:
    try:
        from agenthop.server.corpus.importer import import_release
    except ImportError as exc:  # the importer is another module; say so plainly
        return {"error": f"cannot import agenthop.server.corpus.importer.import_release ({exc}); the import step was not run"}
    started = time.perf_counter()
    summary = import_release(Path(args.release), Path(args.corpus), skip_bad_labels=False, echo=lambda m: print(m, file=sys.stderr))
    return {
        "seconds": round(time.perf_counter() - started, 2),
        "peak_rss_mb": round(_peak_rss_mb(), 1),
        "result": {"counts": summary.get("counts"), "corpus_bytes": os.path.getsize(args.corpus)},
    }


STEPS = {"generate": _step_generate, "import": _step_import}


def _run_child(step: str, release: Path, corpus: Path, args: argparse.Namespace) -> dict:
    cmd = [
        sys.executable, __file__, "--child", step, "--release", str(release), "--corpus", str(corpus),
        "--papers", str(args.papers), "--items", str(args.items), "--seed", str(args.seed),
    ]
    wall = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    wall = time.perf_counter() - wall
    if proc.returncode != 0:
        return {"error": f"step {step} failed with exit code {proc.returncode}", "wall_seconds": round(wall, 2)}
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    report["wall_seconds"] = round(wall, 2)  # includes interpreter start-up
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=7205)
    parser.add_argument("--items", type=int, default=1011)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="release directory to keep (default: a temp dir, removed afterwards)")
    parser.add_argument("--skip-import", action="store_true")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--child", choices=sorted(STEPS), help=argparse.SUPPRESS)
    parser.add_argument("--release", help=argparse.SUPPRESS)
    parser.add_argument("--corpus", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        print(json.dumps(STEPS[args.child](args)))
        return 0

    tmp = None
    if args.out is None:
        tmp = Path(tempfile.mkdtemp(prefix="agenthop-bench-"))
        release = tmp / "release"
    else:
        release = args.out
    corpus = release.parent / f"{release.name}.corpus.sqlite"
    report: dict = {"papers": args.papers, "items": args.items, "seed": args.seed, "release": str(release), "steps": {}}
    try:
        steps = ["generate"] if args.skip_import else ["generate", "import"]
        for step in steps:
            print(f"running {step} ...", file=sys.stderr)
            report["steps"][step] = _run_child(step, release, corpus, args)
            if "error" in report["steps"][step]:
                break
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)

    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"papers={args.papers} items={args.items} seed={args.seed}")
        for step, r in report["steps"].items():
            if "error" in r:
                print(f"  {step:<9} ERROR: {r['error']}")
                continue
            print(f"  {step:<9} {r['seconds']:>8.2f} s  (wall incl. start-up {r['wall_seconds']:.2f} s)  peak RSS {r['peak_rss_mb']:>8.1f} MB")
        gen = report["steps"].get("generate", {}).get("result")
        if gen:
            print(
                f"  release: {gen['bytes'] / 1e6:.1f} MB; {gen['items']} items {gen['items_per_cell']}; "
                f"{gen['edges']} edges over item graphs; nodes/item {gen['nodes_per_item']}; "
                f"metadata-only share {gen['metadata_only_share']}"
            )
        imp = report["steps"].get("import", {}).get("result")
        if imp:
            print(f"  corpus: {imp['corpus_bytes'] / 1e6:.1f} MB; counts {imp['counts']}")
    failed = any("error" in r for r in report["steps"].values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
