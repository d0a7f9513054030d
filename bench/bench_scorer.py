"""Benchmark the scorer: N synthetic runs x 1,011 items, scored with reports, side by side with a baseline.

    .venv/bin/python bench/bench_scorer.py [--runs 20] [--items 1011] [--repeat 3] [--baseline-ref 45a5747] [--profile] [--loading]

Builds a synthetic corpus (items, gold, recall labels, sections for the gold
papers) and N run directories (checkpoint log + runner.jsonl) with realistic
sessions (~12 calls per item: searches exposing 10 papers, reference lists of
up to 30, reads of gold and non-gold papers, think, submit). Then scores them
``--repeat`` times with each variant, interleaved (the machine is shared: each
round runs every variant once, in turn), each in a child process that does
everything ``agenthop-scorer RUN... --corpus C --out D`` does: score every run,
write summary.json, report.md and report.html (with plots) per run, and the
comparison across runs. Variants:

* baseline: the scorer as it was at ``--baseline-ref`` (extracted with git archive; default: the commit
  before the scorer became a library, one process, stdlib json);
* now, 1 process (``--jobs 1``);
* now, the default (``--jobs`` = the number of CPUs).

Prints each variant's median wall time with its spread (min-max), CPU time and
peak RSS, the ratios to the baseline, and checks that every variant reports the
same headline numbers. ``--profile`` first prints where one process spends its
time (cProfile, 5 runs); ``--loading`` also times loading the runs alone (``load_run``),
baseline and now, interleaved.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from agenthop.server.corpus_schema import INDEXES, create_index, create_schema
from agenthop.server.log.checkpoint import CheckpointLog

TOOLS_COST = {
    "search_papers": 1,
    "get_paper_info": 1,
    "get_references": 1,
    "list_sections": 1,
    "read_section": 5,
    "think": 0,
    "submit_answer": 0,
}
HEADERS = ["Introduction", "Related Work", "Method", "Experiments", "Results", "Conclusion", "Apdx_A: Proofs"]


def pid(n: int) -> str:
    return f"{n:040x}"


def build_corpus(path: Path, n_items: int, rng: random.Random) -> list[dict]:
    conn = sqlite3.connect(path)
    create_schema(conn)
    conn.execute("INSERT INTO meta(key, value) VALUES ('corpus_id', ?)", (json.dumps("bench"),))
    items = []
    n_st = round(n_items * 568 / 1011)
    next_paper = 1
    papers, sections, gold_rows, item_rows, labels = [], [], [], [], []
    for i in range(n_items):
        st = i < n_st
        item_id = f"st_{i:04d}" if st else f"mt_{i:04d}"
        depth = 1 + (i % 2)
        seed = next_paper
        next_paper += 1
        golds = list(range(next_paper, next_paper + (1 if st else 2)))
        next_paper += len(golds)
        others = list(range(next_paper, next_paper + 60))
        next_paper += 60
        for p in [seed, *golds, *others[:5]]:
            arxiv = f"{p:04d}.{p:05d}"
            papers.append((pid(p), arxiv, f"Paper {p}", 1))
            for k, h in enumerate(HEADERS):
                sections.append((arxiv, k, h, f"Text of section {h} of paper {p}. " * 40 + "\n4.1 Window Size\nMore."))
        for p in others[5:]:
            papers.append((pid(p), None, f"Paper {p}", 0))
        correct = rng.randrange(4)
        dist = ["seed_only", "wrong_paper", "no_context"]
        rng.shuffle(dist)
        dist.insert(correct, "correct")
        item_rows.append(
            (
                item_id,
                "single-target" if st else "multi-target",
                depth,
                rng.choice(["GROUND", "METHOD", "MOTIVE", "RESULT"]),
                None,
                rng.choice(["ACL", "NeurIPS", "ICLR"]),
                rng.choice(["gold", "silver", "bronze"]),
                "q?",
                json.dumps(["a", "b", "c", "d"]),
                pid(seed),
                None,
                "seed",
                None,
                i,
            )
        )
        gold_rows.append(
            (
                item_id,
                correct,
                json.dumps(dist),
                json.dumps([pid(g) for g in golds]),
                json.dumps([f"{g:04d}.{g:05d}" for g in golds]),
                "[]",
                "[]",
            )
        )
        for k, g in enumerate(golds):
            labels.append(
                (
                    item_id,
                    2 * k,
                    None,
                    f"{g:04d}.{g:05d}",
                    rng.choice(["Results", "4.1 Window Size", "method"]),
                    "direct",
                    None,
                )
            )
            labels.append((item_id, 2 * k + 1, None, f"{g:04d}.{g:05d}", "Introduction", "supporting", None))
        items.append({"item_id": item_id, "seed": seed, "golds": golds, "others": others, "correct": correct})
    conn.executemany("INSERT INTO papers(paper_id, arxiv_id, title, has_text) VALUES (?,?,?,?)", papers)
    conn.executemany("INSERT INTO sections VALUES (?,?,?,?)", sections)
    conn.executemany("INSERT INTO items VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", item_rows)
    conn.executemany("INSERT INTO gold_items VALUES (?,?,?,?,?,?,?)", gold_rows)
    conn.executemany("INSERT INTO gold_recall_labels VALUES (?,?,?,?,?,?,?)", labels)
    for table in INDEXES:  # as the importer does after its bulk load; without them every section lookup scans
        create_index(conn, table)
    conn.commit()
    conn.close()
    return items


def session_records(run: str, item: dict, rng: random.Random, skill: float) -> tuple[list[dict], list[dict]]:
    sid = f"{run}-{item['item_id']}-{rng.getrandbits(48):012x}"
    base = {"run": run, "session_id": sid, "item_id": item["item_id"]}
    recs = [
        {
            **base,
            "kind": "session_start",
            "seq": 0,
            "time": 0.0,
            "mode": "item",
            "caps": {"budget": 30, "max_turns": 20, "max_tokens": 200000},
            "disabled_tools": [],
            "client": {"agent": "bench", "model": "synthetic"},
            "transport": "http",
            "corpus": {"corpus_id": "bench", "schema_version": 1},
            "search": {"engine": "bm25s", "method": "lucene", "k1": 1.5, "b": 0.75, "tokenizer": "default"},
        }
    ]
    spent, seq, turn = 0, 1, 0
    turns: list[dict] = []
    candidates = item["golds"] + item["others"][:5]

    def call(tool, args, *, outcome="ok", exposed=(), delivered=None, same_turn=False):
        nonlocal spent, seq, turn
        if not same_turn or turn == 0:
            turn += 1
            turns.append(
                {
                    "kind": "turn",
                    "run": run,
                    "item_id": item["item_id"],
                    "session_id": sid,
                    "attempt": 1,
                    "turn": turn,
                    "prompt_tokens": 2000 * turn,
                    "completion_tokens": 150,
                    "cached_tokens": 0,
                    "cumulative_tokens": 2150 * turn * (turn + 1) // 2,
                    "tool_calls": [],
                    "latency_ms": 900.0,
                    "retries": 0,
                    "error": None,
                    "time": 0.0,
                }
            )
        turns[-1]["tool_calls"].append({"id": f"c{seq}", "name": tool, "arguments": args})
        executed = outcome in ("ok", "not_found", "no_text", "ambiguous")
        cost = TOOLS_COST[tool] if executed else 0
        recs.append(
            {
                **base,
                "kind": "call",
                "seq": seq,
                "time": float(seq),
                "tool": tool,
                "arguments": args,
                "turn": turn,
                "tokens": 2150 * turn * (turn + 1) // 2,
                "forced": False,
                "outcome": outcome,
                "executed": executed,
                "cost": cost,
                "budget_before": spent,
                "budget_after": spent + cost,
                "latency_ms": 2.0,
                "exposed": [{"paper_id": pid(p), "rank": r} for r, p in enumerate(exposed, 1)],
                "delivered": delivered,
                "output_chars": 3000,
                "message": None,
            }
        )
        spent += cost
        seq += 1

    call("search_papers", {"query": "q", "top_k": 10}, exposed=rng.sample(candidates + item["others"], 10))
    call("get_references", {"paper_id": pid(item["seed"])}, exposed=rng.sample(item["others"] + item["golds"], 30))
    for _ in range(rng.randint(2, 4)):
        p = rng.choice(candidates) if rng.random() < skill else rng.choice(item["others"][:5])
        k = rng.randrange(len(HEADERS))
        if spent + 5 > 30:
            call("read_section", {"paper_id": pid(p), "section": "A"}, outcome="budget_rejected")
            break
        arxiv = f"{p:04d}.{p:05d}"
        call("list_sections", {"paper_id": pid(p)})
        call(
            "read_section",
            {"paper_id": pid(p), "section": HEADERS[k]},
            delivered={"paper_id": pid(p), "arxiv_id": arxiv, "section_index": k, "header": HEADERS[k]},
            same_turn=rng.random() < 0.2,
        )
    call("think", {"reasoning": "r"})
    answer = None
    if rng.random() < 0.95:
        answer = "ABCD"[item["correct"] if rng.random() < skill else rng.randrange(4)]
        call("submit_answer", {"answer": answer, "reasoning": "r"})
        end = "answer"
    else:
        end = "max_turns"
    recs.append(
        {
            **base,
            "kind": "session_end",
            "seq": seq,
            "time": float(seq),
            "termination": end,
            "answer": answer,
            "budget_used": spent,
            "reason": None,
        }
    )
    runner = turns + [
        {
            "kind": "item_end",
            "run": run,
            "item_id": item["item_id"],
            "session_id": sid,
            "attempt": 1,
            "termination": end,
            "answer": answer,
            "turns": turn,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "cached_tokens": 0,
            "total_tokens": turns[-1]["cumulative_tokens"],
            "budget_used": spent,
            "cost_usd": 0.002 * turn,
            "wall_time_s": 5.0,
            "time": 0.0,
        }
    ]
    return recs, runner


def write_run(run_dir: Path, name: str, items: list[dict], rng: random.Random, skill: float) -> int:
    run_dir.mkdir(parents=True)
    CheckpointLog(run_dir / "server-log.sqlite").close()  # creates the file with the server's schema
    conn = sqlite3.connect(run_dir / "server-log.sqlite")
    rows, runner = (
        [],
        [
            {
                "kind": "run_start",
                "run": name,
                "agent": "bench",
                "model": f"synthetic-{skill:.2f}",
                "settings": {"workers": 8},
                "versions": {},
                "time": 0.0,
            }
        ],
    )
    for item in items:
        recs, rr = session_records(name, item, rng, skill)
        runner.extend(rr)
        rows.extend(
            (
                r["run"],
                r["session_id"],
                r["item_id"],
                r["seq"],
                r["kind"],
                r.get("tool"),
                r.get("outcome"),
                json.dumps(r, sort_keys=True),
            )
            for r in recs
        )
    conn.executemany(
        "INSERT INTO records(run, session_id, item_id, seq, kind, tool, outcome, record) VALUES (?,?,?,?,?,?,?,?)", rows
    )
    conn.commit()
    conn.close()
    with (run_dir / "runner.jsonl").open("w") as fh:
        for r in runner:
            fh.write(json.dumps(r) + "\n")
    return len(rows)


BASELINE_REF = "45a5747"  # main before the scorer became a library (scorer-lib branch)
# Server modules the baseline imports that have moved since (server/ was grouped by job).
MOVED_SINCE_BASELINE = {"agenthop.server.checkpoint": "agenthop.server.log.checkpoint"}
GOAL_S = 10.0  # the goal: 20 runs x 1,011 items scored in 10 s or less


def baseline_scorer(ref: str, dest: Path) -> list[str] | None:
    """A command running the scorer of git ref ``ref`` (as package ``scorer_baseline``), or None if it cannot."""
    repo = Path(__file__).resolve().parent.parent
    try:
        data = subprocess.run(["git", "archive", ref, "scorer"], cwd=repo, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"baseline {ref}: not available ({exc}); measuring the current scorer only")
        return None
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(dest, filter="data")
    (dest / "scorer").rename(dest / "scorer_baseline")
    for path in (dest / "scorer_baseline").rglob("*.py"):  # absolute imports of the scorer must reach the baseline's
        text = path.read_text(encoding="utf-8").replace("agenthop.scorer", "scorer_baseline")
        for old, new in MOVED_SINCE_BASELINE.items():
            text = text.replace(f"{old} ", f"{new} ")
        path.write_text(text, encoding="utf-8")
    code = f"import sys; sys.path.insert(0, {str(dest)!r}); from scorer_baseline.cli import main; main()"
    return [sys.executable, "-c", code]


def timed(cmd: list[str], log: Path) -> dict:
    """Run ``cmd`` as a child; its wall time, CPU time (worker processes included) and peak RSS."""
    t0 = time.perf_counter()
    with log.open("w") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        print(log.read_text()[-3000:])
        raise SystemExit(f"{cmd[:3]}... failed with exit code {proc.returncode}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024}


def headline_rows(report: Path) -> list[dict]:
    rows = json.loads((report / "comparison.json").read_text())["runs"]
    return [{k: v for k, v in r.items()} for r in rows]


def profile_now(runs: list[str], corpus: Path, out: Path) -> None:
    """Where one process spends its time scoring ``runs`` (cProfile; shares of the total)."""
    from agenthop.scorer.scoring import score

    prof = cProfile.Profile()
    prof.runcall(score, runs, corpus, out=out, jobs=1)
    stats = pstats.Stats(prof, stream=io.StringIO())
    total = max(v[3] for v in stats.stats.values())
    parts = {
        "drawing plots (plots.run_plots, comparison_plots)": ("plots.py", ("run_plots", "comparison_plots")),
        "reading logs (runs.load_run)": ("runs.py", ("load_run",)),
        "scoring (summary.score_run)": ("summary.py", ("score_run",)),
        "writing summary.json (reports.write_json)": ("reports.py", ("write_json",)),
    }
    print(f"profile of one process scoring {len(runs)} runs ({total:.1f} s under cProfile):")
    for label, (file, funcs) in parts.items():
        cum = sum(v[3] for (f, _, name), v in stats.stats.items() if f.endswith(file) and name in funcs)
        print(f"  {label:<50} {100 * cum / total:5.1f}%")


LOAD_CODE = """
import sys, time
sys.path.insert(0, sys.argv[1])
from {package} import load_run
t0 = time.perf_counter()
records = sum(load_run(spec).n_records for spec in sys.argv[2:])
print(time.perf_counter() - t0, records)
"""


def compare_loading(runs: list[str], repeat: int, baseline_src: Path | None) -> None:
    """Wall time of load_run over every run, baseline and now, interleaved (one child process each time)."""
    packages = {"baseline": "scorer_baseline"} if baseline_src else {}
    packages["now"] = "agenthop.scorer"
    times: dict[str, list[float]] = {name: [] for name in packages}
    for _ in range(repeat):
        for name, package in packages.items():
            out = subprocess.run(
                [sys.executable, "-c", LOAD_CODE.format(package=package), str(baseline_src or ""), *runs],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()
            times[name].append(float(out[0]))
    first = statistics.median(next(iter(times.values())))
    print(f"\nloading {len(runs)} runs (load_run; {out[1]} checkpoint records), median of {repeat} (min-max):")
    for name, values in times.items():
        print(f"  {name:<10} {spread(values):>18} {first / statistics.median(values):>6.2f}x")


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.1f} s ({min(values):.1f}-{max(values):.1f})"


def print_variants(title: str, results: dict[str, list[dict]], width: int) -> None:
    """Each variant's wall time (median, min-max), CPU, peak RSS and speed against the first, under ``title``."""
    first = statistics.median(r["wall"] for r in next(iter(results.values())))
    print(f"\n{title}, load average now {os.getloadavg()[0]:.1f}:")
    print(f"  {'variant':<{width}} {'wall':>18} {'CPU':>8} {'peak RSS':>9} {'vs first':>9}")
    for name, res in results.items():
        wall = [x["wall"] for x in res]
        print(
            f"  {name:<{width}} {spread(wall):>18} {statistics.median(x['cpu'] for x in res):>6.1f} s "
            f"{max(x['rss_mb'] for x in res):>6.0f} MB {first / statistics.median(wall):>8.2f}x"
        )


def generate(out: Path, n_runs: int, n_items: int, seed: int) -> tuple[Path, list[str]]:
    """A fresh ``out`` holding a synthetic corpus and ``n_runs`` runs of rising skill over its items (printed)."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    rng = random.Random(seed)
    t0 = time.perf_counter()
    corpus = out / "corpus.sqlite"
    items = build_corpus(corpus, n_items, rng)
    runs, n_records = [], 0
    for k in range(n_runs):
        d = out / "runs" / f"run{k:02d}"
        n_records += write_run(d, f"run{k:02d}", items, rng, skill=0.3 + 0.6 * k / max(1, n_runs - 1))
        runs.append(str(d))
    print(
        f"generated {n_runs} runs x {n_items} items ({n_records:,} checkpoint records) in {time.perf_counter() - t0:.1f} s; "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
    )
    return corpus, runs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--items", type=int, default=1011)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3, help="rounds; each round runs every variant once")
    ap.add_argument("--baseline-ref", default=BASELINE_REF, help="git ref of the baseline scorer ('' for none)")
    ap.add_argument("--profile", action="store_true", help="first profile one process scoring 5 runs")
    ap.add_argument(
        "--loading",
        action="store_true",
        help="also time loading the runs alone (load_run), baseline and now, interleaved, in child processes",
    )
    ap.add_argument("--out", type=Path, default=Path("bench/out/scorer"))
    args = ap.parse_args()
    corpus, runs = generate(args.out, args.runs, args.items, args.seed)
    if args.profile:
        profile_now(runs[:5], corpus, args.out / "profile")

    now = [sys.executable, "-m", "agenthop.scorer.cli"]
    variants = {}
    base = baseline_scorer(args.baseline_ref, args.out / "baseline-src") if args.baseline_ref else None
    if base:
        variants[f"baseline {args.baseline_ref}"] = base
    variants["now, --jobs 1"] = [*now, "--jobs", "1"]
    variants[f"now, default (--jobs {os.cpu_count()})"] = now
    results: dict[str, list[dict]] = {name: [] for name in variants}
    for r in range(args.repeat):
        for k, (name, cmd) in enumerate(variants.items()):
            report = args.out / f"report-{k}"
            shutil.rmtree(report, ignore_errors=True)
            results[name].append(
                timed([*cmd, *runs, "--corpus", str(corpus), "--out", str(report)], args.out / f"variant-{k}.log")
            )
        print(
            f"round {r + 1}/{args.repeat}: " + ", ".join(f"{n} {res[-1]['wall']:.1f} s" for n, res in results.items())
        )

    if args.loading:
        compare_loading(runs, args.repeat, args.out / "baseline-src" if base else None)

    rows = {k: headline_rows(args.out / f"report-{k}") for k in range(len(variants))}
    same = all(rows[k] == rows[0] for k in rows)
    print_variants(
        f"scoring {args.runs} runs x {args.items} items with reports (median of {args.repeat}, min-max)", results, 34
    )
    default = statistics.median(x["wall"] for x in list(results.values())[-1])
    print(f"goal: <= {GOAL_S:.0f} s with the default: {default:.1f} s ({'met' if default <= GOAL_S else 'NOT met'})")
    print(f"same headline numbers (comparison.json runs) in every variant: {'yes' if same else 'NO'}")
    comp = json.loads((args.out / f"report-{len(variants) - 1}" / "comparison.json").read_text())
    print(
        f"Cronbach's alpha {comp['reliability']['cronbach_alpha']:.3f}; accuracy range "
        f"{min(r['accuracy'] for r in comp['runs']):.3f}-{max(r['accuracy'] for r in comp['runs']):.3f}"
    )


if __name__ == "__main__":
    main()
