"""Benchmark ``corpus build`` on generated S2ORC-style JSON: papers per second, peak memory, size on disk, search latency.

    python bench/bench_build.py                                   # 10,000 and 50,000 papers, 2 rounds, temp dir
    python bench/bench_build.py --sizes 2000 --rounds 1 --queries 50   # a quick look

For each size the script writes one S2ORC (doc2json-shaped) JSONL shard of generated
papers: a title, a 6-sentence abstract and two authors, 6 numbered sections of 2
paragraphs, 20 bibliography entries (half cite other papers of the set by title and year,
half are outside works, a third of those with a DOI) and one citation span per
paragraph. Words are drawn from a 30,000-word vocabulary with Zipf frequencies, as words
of real text are. Then, each step in a child process so that its peak resident memory
(``ru_maxrss``) is its own, for ``--rounds`` rounds with the sizes interleaved:

- convert: read, link and write the release directory (``convert.build.write_release``);
- import: the importer on that release (``importer.import_release``), which also builds
  and stores the explore-mode search index.

``corpus build`` is these two steps. At the largest size, the explore index alone, built from the
corpus's documents as the import builds it now and as it did before (``--rounds`` times each,
alternating, each in its own process). Then, in a fresh process:
explore-mode search as the server does it (the corpus opened and its stored bm25s index
loaded by ``SearchEngine``) next to SQLite FTS5 (bm25 rank) on the same documents (title +
abstract + authors of every paper of the corpus, metadata-only references included), the
same queries interleaved and alternating which engine goes first; median and p90.
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
from itertools import accumulate, product
from pathlib import Path

VOCABULARY_SIZE = 30_000


def vocabulary() -> tuple[list[str], list[float]]:
    """Pseudo-words with Zipf cumulative weights (rank r has weight 1 / r^1.07), deterministic."""
    syllables = ["".join(p) for p in product("bdfgklmnprstvz", "aeiou")]
    rng = random.Random(7)
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < VOCABULARY_SIZE:
        word = "".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words, list(accumulate(1 / r**1.07 for r in range(1, VOCABULARY_SIZE + 1)))


def generate(path: Path, papers: int, seed: int = 0) -> None:
    """One JSONL shard in the doc2json shape, deterministic from the seed."""
    rng = random.Random(seed)
    words, weights = vocabulary()

    def sentence(n: int) -> str:
        return " ".join(rng.choices(words, cum_weights=weights, k=n)).capitalize() + "."

    titles = [f"{sentence(7)[:-1]} {i}" for i in range(papers)]
    years = [rng.randint(1995, 2024) for _ in range(papers)]
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(papers):
            bibs, body = {}, []
            for b in range(20):
                if b % 2 == 0 and papers > 1:
                    j = rng.randrange(papers)
                    bibs[f"BIBREF{b}"] = {
                        "title": titles[j],
                        "year": years[j],
                        "authors": [{"first": "A", "last": f"Author{j}"}],
                        "other_ids": {},
                    }
                else:
                    k = rng.randrange(papers * 5)
                    ids = {"DOI": [f"10.9999/outside.{k}"]} if k % 3 == 0 else {}
                    bibs[f"BIBREF{b}"] = {
                        "title": f"Outside work number {k} on {rng.choice(words[:2000])}",
                        "year": 1990 + k % 30,
                        "authors": [{"first": "B", "last": f"Writer{k}"}],
                        "other_ids": ids,
                        "venue": "Journal",
                    }
            for s, name in enumerate(
                ("Introduction", "Related Work", "Method", "Experiments", "Results", "Conclusion")
            ):
                for p in range(2):
                    text = " ".join(sentence(18) for _ in range(6))
                    ref = f"BIBREF{(s * 2 + p) % 20}"
                    mark = f" [{(s * 2 + p) % 20 + 1}]"
                    cut = text.index(".")
                    text = text[:cut] + mark + text[cut:]
                    body.append(
                        {
                            "text": text,
                            "section": name,
                            "sec_num": str(s + 1),
                            "cite_spans": [
                                {"start": cut + 1, "end": cut + len(mark), "text": mark.strip(), "ref_id": ref}
                            ],
                        }
                    )
            record = {
                "paper_id": f"P{i:07d}",
                "title": titles[i],
                "year": years[i],
                "authors": [{"first": "Ada", "last": f"Author{i}"}, {"first": "Alan", "last": f"Coauthor{i % 997}"}],
                "abstract": " ".join(sentence(20) for _ in range(6)),
                "pdf_parse": {"body_text": body, "bib_entries": bibs},
            }
            fh.write(json.dumps(record) + "\n")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# --- child steps -------------------------------------------------------------------------


def _step_convert(shard: Path, release: Path, corpus: Path) -> dict:
    from agenthop.corpus.convert.build import write_release

    shutil.rmtree(release, ignore_errors=True)
    started = time.perf_counter()
    summary = write_release([shard], release, fmt="s2orc", echo=lambda m: None)
    return {
        "seconds": time.perf_counter() - started,
        "peak_rss_mb": peak_rss_mb(),
        "release_bytes": dir_bytes(release),
        "summary": {k: v for k, v in summary.items() if not isinstance(v, list)},
    }


def _step_import(shard: Path, release: Path, corpus: Path) -> dict:
    from agenthop.corpus.importer import import_release

    corpus.unlink(missing_ok=True)
    started = time.perf_counter()
    summary = import_release(release, corpus, echo=lambda m: None)
    return {
        "seconds": time.perf_counter() - started,
        "peak_rss_mb": peak_rss_mb(),
        "corpus_bytes": corpus.stat().st_size,
        "papers": summary["counts"]["papers"],
    }


def _step_index(corpus_path: Path, variant: str) -> dict:
    """The explore index the import builds, from the corpus's own documents: as it is built now, or as it was.

    ``lists`` is the build before the import streamed its documents (kept here, eight lines, to measure against):
    every document's text in a list, tokens as Python lists of ints, bm25s's numpy CSC backend. ``stream`` is
    what the importer runs now (``search.stored_index_parts`` over ``papers.explore_texts``). Same index bytes.
    """
    import hashlib
    from collections import defaultdict
    from itertools import count

    conn = sqlite3.connect(corpus_path)
    started = time.perf_counter()
    if variant == "stream":
        from agenthop.server.papers import explore_texts
        from agenthop.server.search import stored_index_parts

        parts = stored_index_parts(explore_texts(conn))
    else:
        import bm25s

        from agenthop.server.papers import explore_documents
        from agenthop.server.search import K1, METHOD, B, ScopeIndex, tokenize

        ids_, texts = explore_documents(conn)
        index = ScopeIndex.__new__(ScopeIndex)
        index.paper_ids, index._bm25 = ids_, bm25s.BM25(method=METHOD, k1=K1, b=B)
        ids: defaultdict[str, int] = defaultdict(count().__next__)
        docs = [list(map(ids.__getitem__, tokenize(text))) for text in texts]
        index._empty = False
        index._bm25.index((docs, dict(ids)), show_progress=False)
        parts = index.to_parts()
    digest = hashlib.sha256(b"".join(parts[k] for k in sorted(parts))).hexdigest()[:16]
    return {"seconds": time.perf_counter() - started, "peak_rss_mb": peak_rss_mb(), "parts_sha256": digest}


def _step_search(shard: Path, release: Path, corpus_path: Path, queries: int, seed: int) -> dict:
    """The server's explore search (stored bm25s index) vs FTS5 on the same documents, queries interleaved."""
    from agenthop.server.papers import Corpus, explore_documents
    from agenthop.server.search import SearchEngine, stored_index_parts, tokenize

    started = time.perf_counter()
    corpus = Corpus(corpus_path)
    engine = SearchEngine(corpus)  # loads the stored explore index, as a server does when it starts
    load_s = time.perf_counter() - started
    ids, texts = explore_documents(corpus.conn)
    started = time.perf_counter()
    stored_index_parts(texts)  # what the import spends on the index
    bm25s_build_s = time.perf_counter() - started
    fts = sqlite3.connect(":memory:")
    started = time.perf_counter()
    fts.execute("CREATE VIRTUAL TABLE docs USING fts5(body)")
    fts.executemany("INSERT INTO docs(rowid, body) VALUES (?, ?)", enumerate(texts))
    fts_build_s = time.perf_counter() - started

    # Query words as a searcher types them: 2-3 content words, drawn by frequency from all but the 100 most
    # frequent words of the vocabulary (in real text those would be stopwords, which the tokenizer drops).
    rng = random.Random(seed)
    words, _ = vocabulary()
    content = words[100:]
    weights = list(accumulate(1 / r**1.07 for r in range(101, VOCABULARY_SIZE + 1)))
    times: dict[str, list[float]] = {"bm25s": [], "fts5": []}
    for q in range(queries):
        query = " ".join(rng.choices(content, cum_weights=weights, k=rng.randint(2, 3)))
        match = " OR ".join(f'"{t}"' for t in tokenize(query))
        for name in ("bm25s", "fts5") if q % 2 == 0 else ("fts5", "bm25s"):
            t0 = time.perf_counter()
            if name == "bm25s":
                engine.search(None, query, 5)
            else:
                fts.execute("SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT 5", (match,)).fetchall()
            times[name].append((time.perf_counter() - t0) * 1000)
    out = {
        "documents": len(ids),
        "queries": queries,
        "stored_index_load_s": round(load_s, 2),
        "build_s": {"bm25s": round(bm25s_build_s, 2), "fts5": round(fts_build_s, 2)},
    }
    for name, values in times.items():
        values.sort()
        out[name] = {
            "median_ms": round(statistics.median(values), 2),
            "p90_ms": round(values[int(0.9 * len(values))], 2),
        }
    out["median_ratio_bm25s_over_fts5"] = round(out["bm25s"]["median_ms"] / out["fts5"]["median_ms"], 3)
    return out


def run_child(script: str, *args: str) -> dict:
    """Run one step of ``script`` (``--child STEP ...``) in a process of its own, so its peak RSS is its own."""
    done = subprocess.run([sys.executable, script, "--child", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"child step {args[0]} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def spread(values: list[float], digits: int = 2) -> dict:
    return {
        "median": round(statistics.median(values), digits),
        "min": round(min(values), digits),
        "max": round(max(values), digits),
    }


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        step, shard, release, corpus, *rest = sys.argv[2:]
        paths = (Path(shard), Path(release), Path(corpus))
        if step == "convert":
            result = _step_convert(*paths)
        elif step == "import":
            result = _step_import(*paths)
        elif step == "index":
            result = _step_index(paths[2], rest[0])
        else:
            result = _step_search(*paths, int(rest[0]), int(rest[1]))
        print(json.dumps(result))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000])
    parser.add_argument(
        "--rounds", type=int, default=2, help="builds per size, sizes interleaved (median and spread reported)"
    )
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--dir", type=Path, default=None, help="work directory (default: a temp dir, removed at the end)"
    )
    args = parser.parse_args()
    work = args.dir or Path(tempfile.mkdtemp(prefix="agenthop-bench-build-"))
    work.mkdir(parents=True, exist_ok=True)
    paths = {
        size: (work / f"s2orc-{size}.jsonl", work / f"release-{size}", work / f"corpus-{size}.sqlite")
        for size in args.sizes
    }
    runs: dict[int, list[tuple[dict, dict]]] = {size: [] for size in args.sizes}
    report: dict = {"sizes": {}}
    try:
        for size in args.sizes:
            started = time.perf_counter()
            generate(paths[size][0], size, args.seed)
            print(f"generated {size} papers in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        for round_ in range(args.rounds):
            for size in args.sizes:
                strs = [str(p) for p in paths[size]]
                convert = run_child(__file__, "convert", *strs)
                imported = run_child(__file__, "import", *strs)
                runs[size].append((convert, imported))
                print(
                    f"round {round_ + 1}, {size} papers: convert {convert['seconds']:.1f} s ({convert['peak_rss_mb']:.0f} MB), "
                    f"import {imported['seconds']:.1f} s ({imported['peak_rss_mb']:.0f} MB)",
                    file=sys.stderr,
                )
        for size in args.sizes:
            converts, imports = [c for c, _ in runs[size]], [i for _, i in runs[size]]
            c_secs, i_secs = [c["seconds"] for c in converts], [i["seconds"] for i in imports]
            total = [c + i for c, i in zip(c_secs, i_secs)]
            report["sizes"][size] = {
                "input_bytes": paths[size][0].stat().st_size,
                "release_bytes": converts[0]["release_bytes"],
                "corpus_bytes": imports[0]["corpus_bytes"],
                "corpus_papers": imports[0]["papers"],
                "convert_seconds": spread(c_secs),
                "convert_peak_rss_mb": [round(c["peak_rss_mb"], 1) for c in converts],
                "import_seconds": spread(i_secs),
                "import_peak_rss_mb": [round(i["peak_rss_mb"], 1) for i in imports],
                "build_papers_per_second": spread([size / t for t in total], 0),
                "summary": converts[0]["summary"],
            }
        largest = max(args.sizes)
        index_runs: dict[str, list[dict]] = {"lists": [], "stream": []}
        for round_ in range(args.rounds):
            for variant in ("lists", "stream") if round_ % 2 == 0 else ("stream", "lists"):
                index_runs[variant].append(run_child(__file__, "index", *[str(p) for p in paths[largest]], variant))
        report["explore_index"] = {
            "papers": largest,
            **{
                variant: {
                    "seconds": spread([r["seconds"] for r in rs]),
                    "peak_rss_mb": [round(r["peak_rss_mb"], 1) for r in rs],
                    "parts_sha256": sorted({r["parts_sha256"] for r in rs}),
                }
                for variant, rs in index_runs.items()
            },
        }
        report["search"] = run_child(
            __file__, "search", *[str(p) for p in paths[largest]], str(args.queries), str(args.seed)
        )
        report["search"]["papers"] = largest
    finally:
        if args.dir is None:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
