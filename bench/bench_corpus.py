"""Corpus building at full scale, side by side with a plain load of the same files; explore search and server start-up.

    python bench/bench_corpus.py                              # 7,205 papers, 1,011 items in a temp dir, 3 rounds
    python bench/bench_corpus.py --release /tmp/ah/full       # reuse (or first write) a release there; corpus beside it
    python bench/bench_corpus.py --papers 300 --items 64 --rounds 2 --json

1. generate: the synthetic release (once).
2. import vs baseline, interleaved for ``--rounds`` rounds: ``corpus import`` against a plain
   load of the same files (``json.loads`` per line, ``executemany`` into tables with no keys,
   no checks). Both report MB/s of input; the ratio import/baseline is the figure to read.
3. explore search on the imported corpus, in a fresh process: the first search (the stored
   index loaded as a server loads it) and 200 later ones; building the index in memory (what
   a first search cost before the index was stored); SQLite FTS5 bm25() on the same documents.
4. start-up: a stdio server over the corpus, spawned and driven by mcp.Client, until its first
   search_papers result (``--startups`` times).

Each step runs in its own child process, which reports its wall time and its own peak resident
memory (``ru_maxrss``). The machine is shared: read the ratios, the medians and the spread.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FILES = ("paper_pool/papers.jsonl", "graphs/full.jsonl", "qa/full.jsonl", "audit/recall_labels.jsonl")


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _input_mb(release: Path) -> float:
    return sum((release / f).stat().st_size for f in FILES if (release / f).exists()) / 1e6


# --- child steps ---------------------------------------------------------------------


def _step_generate(args: argparse.Namespace) -> dict:
    from agenthop.corpus.synth import write_release

    started = time.perf_counter()
    stats = write_release(Path(args.release), papers=args.papers, items=args.items, seed=args.seed)
    return {
        "seconds": round(time.perf_counter() - started, 2),
        "peak_rss_mb": round(_peak_rss_mb(), 1),
        "result": stats,
    }


def _step_import(args: argparse.Namespace) -> dict:
    from agenthop.corpus.importer import import_release

    Path(args.corpus).unlink(
        missing_ok=True
    )  # as the baseline does: replacing the last round's 600 MB file costs 0.4 s
    started = time.perf_counter()
    summary = import_release(Path(args.release), Path(args.corpus), echo=lambda m: print(m, file=sys.stderr))
    seconds = time.perf_counter() - started
    return {
        "seconds": round(seconds, 2),
        "mb_per_s": round(_input_mb(Path(args.release)) / seconds, 1),
        "peak_rss_mb": round(_peak_rss_mb(), 1),
        "result": {"counts": summary["counts"], "corpus_bytes": os.path.getsize(args.corpus)},
    }


BASELINE_DDL = """
CREATE TABLE sections (arxiv_id, position, header, text);
CREATE TABLE nodes (item_id, paper_id, title, arxiv_id, year, abstract, authors, venue);
CREATE TABLE edges (item_id, citing, cited, position, context);
CREATE TABLE items (item_id, record);
CREATE TABLE labels (item_id, position, arxiv_id, section, relevance, what_it_contains);
"""


def _step_baseline(args: argparse.Namespace) -> dict:
    """The floor: read every line with json.loads and executemany its rows, with no keys, checks or indexes."""
    release, out = Path(args.release), Path(args.corpus + ".baseline")
    out.unlink(missing_ok=True)
    started = time.perf_counter()
    conn = sqlite3.connect(out, isolation_level=None)
    conn.execute("PRAGMA journal_mode = OFF")
    conn.execute("PRAGMA synchronous = OFF")
    conn.executescript(BASELINE_DDL)
    conn.execute("BEGIN")
    rows: list[tuple] = []
    with open(release / FILES[0], encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            rows.extend((r["arxiv_id"], i, s["header"], s["text"]) for i, s in enumerate(r["sections"]))
            if len(rows) >= 5000:
                conn.executemany("INSERT INTO sections VALUES (?, ?, ?, ?)", rows)
                rows.clear()
    conn.executemany("INSERT INTO sections VALUES (?, ?, ?, ?)", rows)
    with open(release / FILES[1], encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            sid, contexts = r["sample_id"], r.get("contexts") or {}
            conn.executemany(
                "INSERT INTO nodes VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        sid,
                        p,
                        n["title"],
                        n.get("arxivId"),
                        n.get("year"),
                        n.get("abstract"),
                        json.dumps(n.get("authors")),
                        n.get("venue"),
                    )
                    for p, n in r["nodes"].items()
                ],
            )
            conn.executemany(
                "INSERT INTO edges VALUES (?, ?, ?, ?, ?)",
                [
                    (sid, a, b, i, (contexts.get(a) or {}).get(b))
                    for a, cited in r["edges"].items()
                    for i, b in enumerate(cited)
                ],
            )
    with open(release / FILES[2], encoding="utf-8") as fh:
        conn.executemany("INSERT INTO items VALUES (?, ?)", [(r["id"], json.dumps(r)) for r in map(json.loads, fh)])
    with open(release / FILES[3], encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            conn.executemany(
                "INSERT INTO labels VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (r["sample_id"], i, lab["arxiv_id"], lab["section"], lab["relevance"], lab.get("what_it_contains"))
                    for i, lab in enumerate(r["analysis"]["section_recall_labels"])
                ],
            )
    conn.execute("COMMIT")
    conn.close()
    seconds = time.perf_counter() - started
    size = out.stat().st_size
    out.unlink()
    return {
        "seconds": round(seconds, 2),
        "mb_per_s": round(_input_mb(release) / seconds, 1),
        "peak_rss_mb": round(_peak_rss_mb(), 1),
        "result": {"bytes": size},
    }


def _quantiles(ms: list[float]) -> dict:
    s = sorted(ms)
    return {
        "median_ms": round(statistics.median(s), 3),
        "p99_ms": round(s[min(len(s) - 1, int(0.99 * len(s)))], 3),
        "n": len(s),
    }


def _step_search(args: argparse.Namespace) -> dict:
    """In a fresh process: open the corpus as a server does, then its first and later explore-mode searches."""
    from agenthop.server.papers import Corpus
    from agenthop.server.search import ScopeIndex, SearchEngine, tokenize

    conn = sqlite3.connect(args.corpus)
    questions = [q for (q,) in conn.execute("SELECT question FROM items ORDER BY position")]
    conn.close()
    rng = random.Random(0)
    queries = [rng.choice(questions) for _ in range(201)]

    started = time.perf_counter()
    corpus = Corpus(args.corpus)
    engine = SearchEngine(corpus)  # loads the stored explore index
    opened = time.perf_counter()
    engine.search(None, queries[0], 10)
    first_search_ms = (time.perf_counter() - opened) * 1000
    open_ms = (opened - started) * 1000
    later = []
    for q in queries[1:]:
        t0 = time.perf_counter()
        engine.search(None, q, 10)
        later.append((time.perf_counter() - t0) * 1000)

    ids, texts = corpus.search_documents(None)
    t0 = time.perf_counter()
    ScopeIndex(ids, texts)
    build_s = time.perf_counter() - t0

    fts = sqlite3.connect(":memory:")
    fts.execute("CREATE VIRTUAL TABLE docs USING fts5(body)")
    fts.executemany("INSERT INTO docs(rowid, body) VALUES (?, ?)", enumerate(texts))
    floor = []
    for q in queries[1:]:
        terms = " OR ".join(f'"{t}"' for t in tokenize(q))
        t0 = time.perf_counter()
        fts.execute("SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT 10", (terms,)).fetchall()
        floor.append((time.perf_counter() - t0) * 1000)
    return {
        "documents": len(ids),
        "open_corpus_and_index_ms": round(open_ms, 1),
        "first_search_ms": round(first_search_ms, 3),
        "later_searches": _quantiles(later),
        "in_memory_index_build_s": round(build_s, 2),
        "sqlite_fts5_bm25": _quantiles(floor),
        "peak_rss_mb": round(_peak_rss_mb(), 1),
    }


def _step_startup(args: argparse.Namespace) -> dict:
    """Spawn a stdio server over the corpus; time until it answers its first search_papers call."""
    import anyio
    from mcp import Client, StdioServerParameters

    conn = sqlite3.connect(args.corpus)
    query = conn.execute("SELECT question FROM items ORDER BY position LIMIT 1").fetchone()
    conn.close()
    query = query[0] if query else "citation graph"

    async def once(log: Path) -> dict:
        params = StdioServerParameters(
            command=sys.executable,
            args=[
                "-m",
                "agenthop.server",
                "serve",
                "--corpus",
                args.corpus,
                "--log",
                str(log),
                "--run",
                "bench-startup",
            ],
        )
        t0 = time.perf_counter()
        async with Client(params, read_timeout_seconds=60) as client:
            ready = time.perf_counter()
            result = await client.call_tool("search_papers", {"query": query, "top_k": 10})
            answered = time.perf_counter()
            assert not result.is_error, result
        return {"initialized_s": round(ready - t0, 3), "first_search_answered_s": round(answered - t0, 3)}

    with tempfile.TemporaryDirectory() as tmp:
        runs = [anyio.run(once, Path(tmp) / f"log-{i}.sqlite") for i in range(args.startups)]
    answered = [r["first_search_answered_s"] for r in runs]
    return {
        "runs": runs,
        "first_search_answered_s": {
            "median": round(statistics.median(answered), 3),
            "min": min(answered),
            "max": max(answered),
        },
    }


STEPS = {
    "generate": _step_generate,
    "import": _step_import,
    "baseline": _step_baseline,
    "search": _step_search,
    "startup": _step_startup,
}


def _run_child(step: str, release: Path, corpus: Path, args: argparse.Namespace) -> dict:
    cmd = [
        sys.executable,
        __file__,
        "--child",
        step,
        "--release",
        str(release),
        "--corpus",
        str(corpus),
        "--papers",
        str(args.papers),
        "--items",
        str(args.items),
        "--seed",
        str(args.seed),
        "--startups",
        str(args.startups),
    ]
    wall = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    wall = time.perf_counter() - wall
    if proc.returncode != 0:
        return {"error": f"step {step} failed with exit code {proc.returncode}", "wall_seconds": round(wall, 2)}
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    report["wall_seconds"] = round(wall, 2)  # includes interpreter start-up
    return report


def _spread(values: list[float]) -> dict:
    return {"median": round(statistics.median(values), 2), "min": round(min(values), 2), "max": round(max(values), 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=7205)
    parser.add_argument("--items", type=int, default=1011)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--release", type=Path, help="release directory to reuse or write (default: a temp dir, removed afterwards)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="import/baseline pairs, interleaved")
    parser.add_argument("--startups", type=int, default=3, help="server start-ups to time")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--child", choices=sorted(STEPS), help=argparse.SUPPRESS)
    parser.add_argument("--corpus", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        args.release = str(args.release)
        print(json.dumps(STEPS[args.child](args)))
        return 0

    tmp = None
    if args.release is None:
        tmp = Path(tempfile.mkdtemp(prefix="agenthop-bench-"))
        release = tmp / "release"
    else:
        release = args.release
    corpus = release.parent / f"{release.name}.corpus.sqlite"
    report: dict = {"papers": args.papers, "items": args.items, "seed": args.seed, "release": str(release), "steps": {}}
    failed = False
    try:
        if not (release / FILES[0]).exists():
            print("generating the release ...", file=sys.stderr)
            report["steps"]["generate"] = _run_child("generate", release, corpus, args)
            failed = "error" in report["steps"]["generate"]
        rounds = []
        for i in range(args.rounds if not failed else 0):
            print(f"round {i + 1}/{args.rounds}: baseline, then import ...", file=sys.stderr)
            pair = {step: _run_child(step, release, corpus, args) for step in ("baseline", "import")}
            rounds.append(pair)
            if any("error" in r for r in pair.values()):
                failed = True
                break
        report["rounds"] = rounds
        if rounds and not failed:
            report["input_mb"] = round(_input_mb(release), 1)
            report["import_mb_per_s"] = _spread([r["import"]["mb_per_s"] for r in rounds])
            report["baseline_mb_per_s"] = _spread([r["baseline"]["mb_per_s"] for r in rounds])
            report["import_over_baseline"] = _spread(
                [r["import"]["mb_per_s"] / r["baseline"]["mb_per_s"] for r in rounds]
            )
            print("explore search ...", file=sys.stderr)
            report["search"] = _run_child("search", release, corpus, args)
            print("server start-up ...", file=sys.stderr)
            report["startup"] = _run_child("startup", release, corpus, args)
            failed = "error" in report["search"] or "error" in report["startup"]
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)

    if args.json:
        print(json.dumps(report, indent=2))
    else:
        _print(report)
    return 1 if failed else 0


def _print(report: dict) -> None:
    print(f"papers={report['papers']} items={report['items']} seed={report['seed']}")
    gen = report["steps"].get("generate")
    if gen:
        if "error" in gen:
            print(f"  generate ERROR: {gen['error']}")
            return
        g = gen["result"]
        print(
            f"  generate  {gen['seconds']:.1f} s, peak RSS {gen['peak_rss_mb']:.0f} MB; release {g['bytes'] / 1e6:.1f} MB, "
            f"{g['items']} items {g['items_per_cell']}, {g['edges']} edges over item graphs"
        )
    for i, pair in enumerate(report.get("rounds", []), 1):
        for step in ("baseline", "import"):
            r = pair[step]
            if "error" in r:
                print(f"  round {i} {step:<8} ERROR: {r['error']}")
                continue
            print(
                f"  round {i} {step:<8} {r['seconds']:>7.2f} s  {r['mb_per_s']:>6.1f} MB/s  peak RSS {r['peak_rss_mb']:>6.0f} MB"
            )
    if "import_over_baseline" in report:
        ratio = report["import_over_baseline"]
        print(
            f"  input {report['input_mb']} MB; import/baseline MB/s ratio: median {ratio['median']} (min {ratio['min']}, max {ratio['max']})"
        )
        imp = report["rounds"][-1]["import"]["result"]
        print(f"  corpus {imp['corpus_bytes'] / 1e6:.1f} MB; counts {imp['counts']}")
    s = report.get("search")
    if s and "error" not in s:
        later = s["later_searches"]
        print(
            f"  explore search over {s['documents']} papers: open corpus + stored index {s['open_corpus_and_index_ms']} ms, "
            f"first search {s['first_search_ms']} ms, later searches median {later['median_ms']} ms (p99 {later['p99_ms']} ms); "
            f"FTS5 median {s['sqlite_fts5_bm25']['median_ms']} ms; building the index in memory instead: {s['in_memory_index_build_s']} s"
        )
    st = report.get("startup")
    if st and "error" not in st:
        a = st["first_search_answered_s"]
        print(
            f"  stdio server start to first search result: median {a['median']} s (min {a['min']}, max {a['max']}) over {len(st['runs'])} starts"
        )


if __name__ == "__main__":
    sys.exit(main())
