"""Benchmark the committed real-paper explore corpus: build time and peak memory, and explore search next to FTS5.

    python bench/bench_explore.py                       # 3 rounds, 300 queries
    python bench/bench_explore.py --rounds 1 --queries 50
    python bench/bench_explore.py --corpus explore.sqlite --queries 300   # the search step alone, on a built corpus

The sources are ``explore/sources`` (1,148 ACL papers as GROBID TEI, the largest real source in the repository).
``corpus build`` is two steps, each run in its own child process so that its peak resident memory
(``ru_maxrss``) is its own: convert (read, link, write the release directory) and import (the importer, which also
builds the stored explore index). Then, in a fresh process: explore search as the server runs it (the corpus
opened and its stored bm25s index loaded by ``SearchEngine``) next to SQLite FTS5 (``ORDER BY rank``) over the same
documents (title + abstract + authors of every paper), with the same real queries, interleaved and alternating
which engine goes first: 2-3 words of the title of a paper with text, as a person looking for it types them.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_build import dir_bytes, peak_rss_mb, run_child, spread

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "explore" / "sources"


def _step_convert(release: Path, corpus: Path) -> dict:
    from agenthop.corpus.convert.build import write_release

    shutil.rmtree(release, ignore_errors=True)
    started = time.perf_counter()
    summary = write_release([SOURCES], release, echo=lambda m: None)
    return {
        "seconds": time.perf_counter() - started,
        "peak_rss_mb": peak_rss_mb(),
        "papers_with_text": summary["papers_with_text"],
        "citations_in_set": summary["citations_in_set"],
    }


def _step_import(release: Path, corpus: Path) -> dict:
    from agenthop.corpus.importer import import_release

    corpus.unlink(missing_ok=True)
    started = time.perf_counter()
    import_release(release, corpus, echo=lambda m: None)
    return {
        "seconds": time.perf_counter() - started,
        "peak_rss_mb": peak_rss_mb(),
        "corpus_bytes": corpus.stat().st_size,
    }


def _step_search(release: Path, corpus_path: Path, queries: int, seed: int) -> dict:
    from agenthop.server.explore.index import corpus_index
    from agenthop.server.explore.query import Filters
    from agenthop.server.explore.search import explore_search
    from agenthop.server.papers import Corpus, explore_documents
    from agenthop.server.search import SearchEngine, tokenize

    started = time.perf_counter()
    corpus = Corpus(corpus_path)
    engine = SearchEngine(corpus)  # loads the stored explore index, as a server does when it starts
    load_s = time.perf_counter() - started
    index, why = corpus_index(corpus)
    ids, texts = explore_documents(corpus.conn)
    fts = sqlite3.connect(":memory:")
    started = time.perf_counter()
    fts.execute("CREATE VIRTUAL TABLE docs USING fts5(body)")
    fts.executemany("INSERT INTO docs(rowid, body) VALUES (?, ?)", enumerate(texts))
    fts_build_s = time.perf_counter() - started
    rng = random.Random(seed)
    titles = [t.split("\n", 1)[0] for t in texts]
    # Queries look for papers one can read: explore search ranks those before metadata-only works by design.
    readable = {pid for (pid,) in corpus.conn.execute("SELECT paper_id FROM papers WHERE has_text = 1")}
    sought = [i for i, pid in enumerate(ids) if pid in readable]

    def explore(with_index: bool):
        def search(query: str) -> list[str]:
            found = explore_search(
                corpus.conn,
                query,
                top_k=5,
                filters=Filters(),
                scope="title_abstract",
                index=index if with_index else None,
            )
            return [h.paper_id for h in found.hits]

        return search

    engines = {
        "bm25s": lambda query: [h.paper_id for h in engine.search(None, query, 5)],
        "fts5": lambda query: [
            ids[r]
            for (r,) in fts.execute(
                "SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT 5",
                (" OR ".join(f'"{t}"' for t in tokenize(query)),),
            )
        ],
        # explore search_papers' ranking as it was before the search index (FTS5 + the ranking rules), and on it
        "explore_fts5": explore(False),
    }
    if index is not None:
        engines["explore_index"] = explore(True)
    times: dict[str, list[float]] = {name: [] for name in engines}
    found_first = dict.fromkeys(engines, 0)
    names = list(engines)
    for q in range(queries):
        doc = rng.choice(sought)
        words = tokenize(titles[doc])
        if len(words) < 2:
            continue
        query = " ".join(rng.sample(words, k=min(len(words), rng.randint(2, 3))))
        for name in names[q % len(names) :] + names[: q % len(names)]:  # rotate which engine goes first
            t0 = time.perf_counter()
            top = engines[name](query)
            times[name].append((time.perf_counter() - t0) * 1000)
            found_first[name] += bool(top) and top[0] == ids[doc]
    out = {
        "documents": len(ids),
        "queries": len(times["bm25s"]),
        "stored_index_load_s": round(load_s, 2),
        "fts5_build_s": round(fts_build_s, 2),
        "search_index": why or "served",
        "paper_ranked_first": found_first,
    }
    for name, values in times.items():
        values.sort()
        out[name] = {
            "median_ms": round(statistics.median(values), 3),
            "p90_ms": round(values[int(0.9 * len(values))], 3),
        }
    out["median_ratio_bm25s_over_fts5"] = round(out["bm25s"]["median_ms"] / out["fts5"]["median_ms"], 3)
    return out


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        step, release, corpus, *rest = sys.argv[2:]
        if step == "convert":
            result = _step_convert(Path(release), Path(corpus))
        elif step == "import":
            result = _step_import(Path(release), Path(corpus))
        else:
            result = _step_search(Path(release), Path(corpus), int(rest[0]), int(rest[1]))
        print(json.dumps(result))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--corpus", type=Path, default=None, help="search this built corpus (no convert, no import)")
    args = parser.parse_args()
    if args.corpus is not None:
        print(
            json.dumps(
                run_child(__file__, "search", "-", str(args.corpus), str(args.queries), str(args.seed)), indent=2
            )
        )
        return
    work = Path(tempfile.mkdtemp(prefix="agenthop-bench-explore-"))
    try:
        release, corpus = str(work / "release"), str(work / "explore.sqlite")
        runs = []
        for round_ in range(args.rounds):
            convert, imported = (
                run_child(__file__, "convert", release, corpus),
                run_child(__file__, "import", release, corpus),
            )
            runs.append((convert, imported))
            print(
                f"round {round_ + 1}: convert {convert['seconds']:.1f} s ({convert['peak_rss_mb']:.0f} MB), "
                f"import {imported['seconds']:.1f} s ({imported['peak_rss_mb']:.0f} MB)",
                file=sys.stderr,
            )
        report = {
            "sources_bytes": dir_bytes(SOURCES),
            "papers_with_text": runs[0][0]["papers_with_text"],
            "citations_in_set": runs[0][0]["citations_in_set"],
            "corpus_bytes": runs[0][1]["corpus_bytes"],
            "convert_seconds": spread([c["seconds"] for c, _ in runs]),
            "convert_peak_rss_mb": [round(c["peak_rss_mb"], 1) for c, _ in runs],
            "import_seconds": spread([i["seconds"] for _, i in runs]),
            "import_peak_rss_mb": [round(i["peak_rss_mb"], 1) for _, i in runs],
            "build_seconds": spread([c["seconds"] + i["seconds"] for c, i in runs]),
            "search": run_child(__file__, "search", release, corpus, str(args.queries), str(args.seed)),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
