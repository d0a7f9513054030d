"""Benchmark the scorer: synthetic logs for N runs x 1,011 items, scoring wall time and peak memory.

    .venv/bin/python bench/bench_scorer.py [--runs 20] [--items 1011] [--out bench/out/scorer]

Builds a synthetic corpus (items, gold, recall labels, sections for the gold
papers) and N run directories (checkpoint log + runner.jsonl) with realistic
sessions (~12 calls per item: searches exposing 10 papers, reference lists of
up to 30, reads of gold and non-gold papers, think, submit), then runs
``agenthop-scorer RUN... --corpus C --out D`` in a child process and reports
its wall time and peak RSS. The child does everything the CLI does: score every
run, write summary.json, report.md and report.html (with plots) per run, and the
comparison across runs.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from agenthop.server.checkpoint import CheckpointLog
from agenthop.server.corpus.schema import create_schema

TOOLS_COST = {"search_papers": 1, "get_paper_info": 1, "get_references": 1, "list_sections": 1, "read_section": 5,
              "think": 0, "submit_answer": 0}
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
        item_rows.append((item_id, "single-target" if st else "multi-target", depth, rng.choice(["GROUND", "METHOD", "MOTIVE", "RESULT"]),
                          None, rng.choice(["ACL", "NeurIPS", "ICLR"]), rng.choice(["gold", "silver", "bronze"]), "q?",
                          json.dumps(["a", "b", "c", "d"]), pid(seed), None, "seed", None, i))
        gold_rows.append((item_id, correct, json.dumps(dist), json.dumps([pid(g) for g in golds]),
                          json.dumps([f"{g:04d}.{g:05d}" for g in golds]), "[]", "[]"))
        for k, g in enumerate(golds):
            labels.append((item_id, 2 * k, None, f"{g:04d}.{g:05d}", rng.choice(["Results", "4.1 Window Size", "method"]), "direct", None))
            labels.append((item_id, 2 * k + 1, None, f"{g:04d}.{g:05d}", "Introduction", "supporting", None))
        items.append({"item_id": item_id, "seed": seed, "golds": golds, "others": others, "correct": correct})
    conn.executemany("INSERT INTO papers(paper_id, arxiv_id, title, has_text) VALUES (?,?,?,?)", papers)
    conn.executemany("INSERT INTO sections VALUES (?,?,?,?)", sections)
    conn.executemany("INSERT INTO items VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", item_rows)
    conn.executemany("INSERT INTO gold_items VALUES (?,?,?,?,?,?,?)", gold_rows)
    conn.executemany("INSERT INTO gold_recall_labels VALUES (?,?,?,?,?,?,?)", labels)
    conn.commit()
    conn.close()
    return items


def session_records(run: str, item: dict, rng: random.Random, skill: float) -> tuple[list[dict], list[dict]]:
    sid = f"{run}-{item['item_id']}-{rng.getrandbits(48):012x}"
    base = {"run": run, "session_id": sid, "item_id": item["item_id"]}
    recs = [{**base, "kind": "session_start", "seq": 0, "time": 0.0, "mode": "item",
             "caps": {"budget": 30, "max_turns": 20, "max_tokens": 200000}, "disabled_tools": [],
             "client": {"agent": "bench", "model": "synthetic"}, "transport": "http",
             "corpus": {"corpus_id": "bench", "schema_version": 1},
             "search": {"engine": "bm25s", "method": "lucene", "k1": 1.5, "b": 0.75, "tokenizer": "default"}}]
    spent, seq, turn = 0, 1, 0
    turns: list[dict] = []
    candidates = item["golds"] + item["others"][:5]

    def call(tool, args, *, outcome="ok", exposed=(), delivered=None, same_turn=False):
        nonlocal spent, seq, turn
        if not same_turn or turn == 0:
            turn += 1
            turns.append({"kind": "turn", "run": run, "item_id": item["item_id"], "session_id": sid, "attempt": 1,
                          "turn": turn, "prompt_tokens": 2000 * turn, "completion_tokens": 150, "cached_tokens": 0,
                          "cumulative_tokens": 2150 * turn * (turn + 1) // 2, "tool_calls": [], "latency_ms": 900.0,
                          "retries": 0, "error": None, "time": 0.0})
        turns[-1]["tool_calls"].append({"id": f"c{seq}", "name": tool, "arguments": args})
        executed = outcome in ("ok", "not_found", "no_text", "ambiguous")
        cost = TOOLS_COST[tool] if executed else 0
        recs.append({**base, "kind": "call", "seq": seq, "time": float(seq), "tool": tool, "arguments": args, "turn": turn,
                     "tokens": 2150 * turn * (turn + 1) // 2, "forced": False, "outcome": outcome, "executed": executed,
                     "cost": cost, "budget_before": spent, "budget_after": spent + cost, "latency_ms": 2.0,
                     "exposed": [{"paper_id": pid(p), "rank": r} for r, p in enumerate(exposed, 1)],
                     "delivered": delivered, "output_chars": 3000, "message": None})
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
        call("read_section", {"paper_id": pid(p), "section": HEADERS[k]},
             delivered={"paper_id": pid(p), "arxiv_id": arxiv, "section_index": k, "header": HEADERS[k]}, same_turn=rng.random() < 0.2)
    call("think", {"reasoning": "r"})
    answer = None
    if rng.random() < 0.95:
        answer = "ABCD"[item["correct"] if rng.random() < skill else rng.randrange(4)]
        call("submit_answer", {"answer": answer, "reasoning": "r"})
        end = "answer"
    else:
        end = "max_turns"
    recs.append({**base, "kind": "session_end", "seq": seq, "time": float(seq), "termination": end, "answer": answer,
                 "budget_used": spent, "reason": None})
    runner = turns + [{"kind": "item_end", "run": run, "item_id": item["item_id"], "session_id": sid, "attempt": 1,
                       "termination": end, "answer": answer, "turns": turn, "prompt_tokens": 0, "completion_tokens": 0,
                       "cached_tokens": 0, "total_tokens": turns[-1]["cumulative_tokens"], "budget_used": spent,
                       "cost_usd": 0.002 * turn, "wall_time_s": 5.0, "time": 0.0}]
    return recs, runner


def write_run(run_dir: Path, name: str, items: list[dict], rng: random.Random, skill: float) -> int:
    run_dir.mkdir(parents=True)
    CheckpointLog(run_dir / "server-log.sqlite").close()  # creates the file with the server's schema
    conn = sqlite3.connect(run_dir / "server-log.sqlite")
    rows, runner = [], [{"kind": "run_start", "run": name, "agent": "bench", "model": f"synthetic-{skill:.2f}",
                         "settings": {"workers": 8}, "versions": {}, "time": 0.0}]
    for item in items:
        recs, rr = session_records(name, item, rng, skill)
        runner.extend(rr)
        rows.extend((r["run"], r["session_id"], r["item_id"], r["seq"], r["kind"], r.get("tool"), r.get("outcome"),
                     json.dumps(r, sort_keys=True)) for r in recs)
    conn.executemany("INSERT INTO records(run, session_id, item_id, seq, kind, tool, outcome, record) VALUES (?,?,?,?,?,?,?,?)", rows)
    conn.commit()
    conn.close()
    with (run_dir / "runner.jsonl").open("w") as fh:
        for r in runner:
            fh.write(json.dumps(r) + "\n")
    return len(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--items", type=int, default=1011)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("bench/out/scorer"))
    args = ap.parse_args()
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    rng = random.Random(args.seed)
    t0 = time.perf_counter()
    corpus = args.out / "corpus.sqlite"
    items = build_corpus(corpus, args.items, rng)
    runs, n_records = [], 0
    for k in range(args.runs):
        d = args.out / "runs" / f"run{k:02d}"
        n_records += write_run(d, f"run{k:02d}", items, rng, skill=0.3 + 0.6 * k / max(1, args.runs - 1))
        runs.append(str(d))
    gen = time.perf_counter() - t0
    print(f"generated {args.runs} runs x {args.items} items ({n_records:,} checkpoint records) in {gen:.1f} s")

    report = args.out / "report"
    cmd = [sys.executable, "-m", "agenthop.scorer.cli", *runs, "--corpus", str(corpus), "--out", str(report)]
    t1 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t1
    if proc.returncode != 0:
        print(proc.stdout[-3000:], proc.stderr[-3000:])
        raise SystemExit(proc.returncode)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak_mb = usage.ru_maxrss / 1024
    cpu = usage.ru_utime + usage.ru_stime
    comp = json.loads((report / "comparison.json").read_text())
    print(f"scored {args.runs} runs x {args.items} items (summaries, Markdown + HTML reports with plots, comparison) "
          f"in {wall:.1f} s wall, {cpu:.1f} s CPU ({wall / args.runs:.2f} s wall per run); peak RSS {peak_mb:.0f} MB")
    print(f"Cronbach's alpha {comp['reliability']['cronbach_alpha']:.3f}; accuracy range "
          f"{min(r['accuracy'] for r in comp['runs']):.3f}-{max(r['accuracy'] for r in comp['runs']):.3f}")


if __name__ == "__main__":
    main()
