"""Benchmark ``corpus build`` on generated S2ORC-style JSON: papers per second, peak memory, size on disk, search latency.

    python bench/bench_build.py                         # 10,000 and 50,000 papers, temp dir
    python bench/bench_build.py --sizes 2000 --repeat 1 # quick look

For each size the script writes one S2ORC JSONL shard of generated papers (title,
abstract, authors, 6 sections of 2 paragraphs, 20 bibliography entries of which
half cite other papers of the set by title and year and half are outside works,
some with DOIs, citation spans in the text). Then, in a child process per run so
each run's peak resident memory is its own (``ru_maxrss``):

- convert: read, link and write the release directory (``write_release``);
- import: the importer on that release, when the importer accepts corpus/ (it is
  reported as not run otherwise).

Search at the largest size: the server's explore-mode engine (bm25s over title +
abstract, ``agenthop.server.search.ScopeIndex``) next to SQLite FTS5 (bm25 rank)
on the same documents, the same queries interleaved, median and p90 per query.
"""

from __future__ import annotations

import argparse
import json
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

WORDS = ("graph citation retrieval protein volatile neural corpus embedding sequence signal transformer "
         "ligand plant herbivore kinase attention dataset benchmark sampling inference gradient lattice "
         "enzyme membrane kernel entropy language parser tokenizer ontology cohort trial dosage imaging "
         "segmentation lidar robot policy reward bandit causal survey genome variant expression receptor").split()


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def generate(path: Path, papers: int, seed: int = 0) -> None:
    """One JSONL shard in the doc2json shape, deterministic from the seed."""
    rng = random.Random(seed)
    titles = [f"{_sentence(rng, 7)[:-1]} {i}" for i in range(papers)]
    years = [rng.randint(1995, 2024) for _ in range(papers)]
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(papers):
            bibs, body = {}, []
            for b in range(20):
                if b % 2 == 0 and papers > 1:
                    j = rng.randrange(papers)
                    bibs[f"BIBREF{b}"] = {"title": titles[j], "year": years[j], "authors": [{"first": "A", "last": f"Author{j}"}], "other_ids": {}}
                else:
                    k = rng.randrange(papers * 5)
                    ids = {"DOI": [f"10.9999/outside.{k}"]} if k % 3 == 0 else {}
                    bibs[f"BIBREF{b}"] = {"title": f"Outside work number {k} on {rng.choice(WORDS)}", "year": 1990 + k % 30,
                                          "authors": [{"first": "B", "last": f"Writer{k}"}], "other_ids": ids, "venue": "Journal"}
            for s, name in enumerate(("Introduction", "Related Work", "Method", "Experiments", "Results", "Conclusion")):
                for p in range(2):
                    text = " ".join(_sentence(rng, 18) for _ in range(6))
                    ref = f"BIBREF{(s * 2 + p) % 20}"
                    mark = f" [{(s * 2 + p) % 20 + 1}]"
                    cut = text.index(".") + 0
                    text = text[:cut] + mark + text[cut:]
                    body.append({"text": text, "section": name, "sec_num": str(s + 1),
                                 "cite_spans": [{"start": cut + 1, "end": cut + len(mark), "text": mark.strip(), "ref_id": ref}]})
            record = {"paper_id": f"P{i:07d}", "title": titles[i], "year": years[i],
                      "authors": [{"first": "Ada", "last": f"Author{i}"}, {"first": "Alan", "last": f"Coauthor{i % 997}"}],
                      "abstract": " ".join(_sentence(rng, 20) for _ in range(6)),
                      "pdf_parse": {"body_text": body, "bib_entries": bibs}}
            fh.write(json.dumps(record) + "\n")


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def child(step: str, shard: Path, release: Path, corpus: Path) -> dict:
    started = time.perf_counter()
    if step == "convert":
        from agenthop.server.corpus.convert.build import write_release

        shutil.rmtree(release, ignore_errors=True)
        summary = write_release([shard], release, fmt="s2orc", echo=lambda m: None)
        return {"seconds": time.perf_counter() - started, "peak_rss_mb": _peak_rss_mb(), "release_bytes": _dir_bytes(release), "summary": summary}
    from agenthop.server.corpus.importer import ReleaseError, import_release

    corpus.unlink(missing_ok=True)
    try:
        import_release(release, corpus, echo=lambda m: None)
    except ReleaseError as exc:
        return {"error": f"the importer refused the release ({exc}); import not measured"}
    return {"seconds": time.perf_counter() - started, "peak_rss_mb": _peak_rss_mb(), "corpus_bytes": corpus.stat().st_size}


def run_child(step: str, shard: Path, release: Path, corpus: Path) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", step, str(shard), str(release), str(corpus)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def search_latency(shard: Path, queries: int, seed: int) -> dict:
    """bm25s (the server's explore engine) vs SQLite FTS5 over the same title + abstract documents."""
    from agenthop.server.search import ScopeIndex

    ids, texts = [], []
    with open(shard, encoding="utf-8") as fh:
        for line in fh:
            record = json.loads(line)
            ids.append(record["paper_id"])
            texts.append(f"{record['title']}\n{record['abstract']}")
    started = time.perf_counter()
    index = ScopeIndex(ids, texts)
    bm25s_build = time.perf_counter() - started
    conn = sqlite3.connect(":memory:")
    started = time.perf_counter()
    conn.execute("CREATE VIRTUAL TABLE docs USING fts5(paper_id UNINDEXED, body)")
    conn.executemany("INSERT INTO docs VALUES (?, ?)", zip(ids, texts))
    fts_build = time.perf_counter() - started
    rng = random.Random(seed)
    times: dict[str, list[float]] = {"bm25s": [], "fts5": []}
    for q in range(queries):
        words = [rng.choice(WORDS) for _ in range(rng.randint(2, 3))]
        engines = ("bm25s", "fts5") if q % 2 == 0 else ("fts5", "bm25s")  # interleave, alternate order
        for engine in engines:
            started = time.perf_counter()
            if engine == "bm25s":
                index.search(" ".join(words), 5)
            else:
                conn.execute("SELECT paper_id FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT 5", (" OR ".join(words),)).fetchall()
            times[engine].append((time.perf_counter() - started) * 1000)
    out = {"documents": len(ids), "queries": queries, "build_seconds": {"bm25s": round(bm25s_build, 2), "fts5": round(fts_build, 2)}}
    for engine, values in times.items():
        values.sort()
        out[engine] = {"median_ms": round(statistics.median(values), 2), "p90_ms": round(values[int(0.9 * len(values))], 2)}
    out["ratio_median_bm25s_over_fts5"] = round(out["bm25s"]["median_ms"] / out["fts5"]["median_ms"], 2)
    return out


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(child(sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]), Path(sys.argv[5]))))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000])
    parser.add_argument("--repeat", type=int, default=2, help="builds per size (median and spread reported)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dir", type=Path, default=None, help="work directory (default: a temp dir, removed at the end)")
    args = parser.parse_args()
    work = args.dir or Path(tempfile.mkdtemp(prefix="agenthop-bench-build-"))
    work.mkdir(parents=True, exist_ok=True)
    report: dict = {"sizes": {}}
    try:
        for size in args.sizes:
            shard = work / f"s2orc-{size}.jsonl"
            generate(shard, size, args.seed)
            runs = []
            for _ in range(args.repeat):
                convert = run_child("convert", shard, work / f"release-{size}", work / f"corpus-{size}.sqlite")
                imported = run_child("import", shard, work / f"release-{size}", work / f"corpus-{size}.sqlite")
                runs.append((convert, imported))
            secs = [c["seconds"] for c, _ in runs]
            entry = {
                "input_bytes": shard.stat().st_size,
                "convert_papers_per_second": round(size / statistics.median(secs), 1),
                "convert_seconds": {"median": round(statistics.median(secs), 2), "min": round(min(secs), 2), "max": round(max(secs), 2)},
                "convert_peak_rss_mb": [round(c["peak_rss_mb"], 1) for c, _ in runs],
                "release_bytes": runs[0][0]["release_bytes"],
                "summary": {k: v for k, v in runs[0][0]["summary"].items() if not isinstance(v, list)},
            }
            if "error" in runs[0][1]:
                entry["import"] = runs[0][1]["error"]
            else:
                isecs = [i["seconds"] for _, i in runs]
                entry["import_seconds"] = {"median": round(statistics.median(isecs), 2), "min": round(min(isecs), 2), "max": round(max(isecs), 2)}
                entry["import_peak_rss_mb"] = [round(i["peak_rss_mb"], 1) for _, i in runs]
                entry["corpus_bytes"] = runs[0][1]["corpus_bytes"]
                entry["build_papers_per_second"] = round(size / (statistics.median(secs) + statistics.median(isecs)), 1)
            report["sizes"][size] = entry
            print(json.dumps({size: entry}), file=sys.stderr)
        report["search"] = search_latency(work / f"s2orc-{max(args.sizes)}.jsonl", args.queries, args.seed)
    finally:
        if args.dir is None:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
