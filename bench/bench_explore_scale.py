"""Explore mode at scale (issues 33 and 48): import, file size, start-up, search latency and memory of a generated
explore-only corpus, with explore search (the tantivy search index + ranking rules + filters) side by side with
tantivy alone, bm25s memory-mapped and plain FTS5 on the same queries and documents.

    python bench/bench_explore_scale.py --text 100000 --stubs 900000 --stub-abstracts 0.3 --keep /tmp/big   # a million
    python bench/bench_explore_scale.py --text 10000 --stubs 90000 --fallback     # 100,000 papers, FTS5 search as well
    python bench/bench_explore_scale.py --corpus big.sqlite                        # start-up and search of a built corpus

The release is written directly (corpus/papers.jsonl, corpus/citations.jsonl, paper_pool/papers.jsonl; converting
from PDF/TEI/S2ORC is bench_build.py's subject): papers with text have a 7-word title, a 3-sentence abstract, two
authors, a year (1995-2024), one of six venues and 4 sections of 3 sentences; metadata-only papers (outside works)
have a title, a year and two authors, a third of them a DOI, ``--stub-abstracts`` of them a 3-sentence abstract, and
one in twenty a second record of the same work (same title, year and first author) for the import to merge. Each
paper with text cites 20 papers (10 with text, 10 outside works) with a citing sentence for half; each metadata-only
paper cites ``--cites`` others. Words are drawn from bench_build's 30,000-word Zipf vocabulary.

Each step runs in its own child process, so its peak RSS (``ru_maxrss``) is its own: import (tables, FTS5, the
stored bm25s index, the search index); start-up (the sandbox a server builds, the first explore search, then
``--serve`` more searches of every kind: the serving process's peak RSS); search (``--queries`` queries of 2-3 words
of a random title, the engines interleaved and rotating which goes first: explore search_papers as a session runs it
(arguments validated, the tool run; not the checkpoint log's fsync) in title_abstract and full_text scope, with a
year or venue filter and sorted; tantivy's BM25 top 10 alone on the same index; bm25s memory-mapped (the stored
index saved in bm25s's layout, ``BM25.load(mmap=True)``); plain FTS5 ``MATCH ... ORDER BY rank LIMIT 10``; with
``--fallback``, explore search without the index as it ran before); and cited-by / similar papers on the most cited
work. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_build import dir_bytes, peak_rss_mb, run_child, vocabulary

VENUES = [
    "Proceedings of the 56th Annual Meeting of the Association for Computational Linguistics",
    "Proceedings of the 2018 Conference on Empirical Methods in Natural Language Processing",
    "Transactions of the Association for Computational Linguistics",
    "Journal of Machine Learning Research",
    "Advances in Neural Information Processing Systems",
    "Computational Linguistics",
]


def generate(release: Path, text: int, stubs: int, cites: int, seed: int, stub_abstracts: float = 0.0) -> None:
    rng = random.Random(seed)
    words, weights = vocabulary()

    def sentence(n: int) -> str:
        return " ".join(rng.choices(words, cum_weights=weights, k=n)).capitalize() + "."

    (release / "paper_pool").mkdir(parents=True)
    (release / "corpus").mkdir()
    text_ids = [f"doi:10.9999/p{i}" for i in range(text)]
    stub_ids = [f"ref:{k:08x}" for k in range(stubs)]
    with (
        open(release / "paper_pool" / "papers.jsonl", "w") as pool,
        open(release / "corpus" / "papers.jsonl", "w") as papers,
    ):
        for i, pid in enumerate(text_ids):
            title = f"{sentence(7)[:-1]} {i}"
            pool.write(
                json.dumps(
                    {
                        "arxiv_id": pid,
                        "title": title,
                        "sections": [
                            {"header": f"{s + 1} {name}", "text": " ".join(sentence(18) for _ in range(3))}
                            for s, name in enumerate(("Introduction", "Method", "Experiments", "Conclusion"))
                        ],
                    }
                )
                + "\n"
            )
            papers.write(
                json.dumps(
                    {
                        "paper_id": pid,
                        "title": title,
                        "abstract": " ".join(sentence(20) for _ in range(3)),
                        "authors": [f"Ada Author{i}", f"Alan Coauthor{i % 997}"],
                        "year": rng.randint(1995, 2024),
                        "venue": VENUES[i % len(VENUES)],
                        "text_id": pid,
                        "ids": {"doi": pid[4:]},
                    }
                )
                + "\n"
            )
        for k, pid in enumerate(stub_ids):
            record = {
                "paper_id": pid,
                "title": f"Outside work {k} on {sentence(4)[:-1].lower()}",
                "year": 1980 + k % 45,
                "authors": [f"Bea Writer{k}", f"Cy Other{k % 501}"],
            }
            if k % 3 == 0:
                record["ids"] = {"doi": f"10.8888/outside.{k}"}
            if rng.random() < stub_abstracts:  # a work whose abstract a metadata source gave
                record["abstract"] = " ".join(sentence(20) for _ in range(3))
            papers.write(json.dumps(record) + "\n")
            if k % 20 == 0:  # a second record of the same work, as another bibliography wrote it
                papers.write(json.dumps({**record, "paper_id": f"ref:dup{k:08x}", "ids": {}}) + "\n")
    with open(release / "corpus" / "citations.jsonl", "w") as out:
        for pid in text_ids:
            refs = {text_ids[rng.randrange(text)] for _ in range(10)} - {pid}
            refs |= {stub_ids[rng.randrange(stubs)] for _ in range(10)} if stubs else set()
            out.write(
                json.dumps(
                    {
                        "paper_id": pid,
                        "references": [
                            {"paper_id": r, "context": sentence(15) if n % 2 == 0 else None}
                            for n, r in enumerate(sorted(refs))
                        ],
                    }
                )
                + "\n"
            )
        if cites:
            for pid in stub_ids:
                refs = sorted({stub_ids[rng.randrange(stubs)] for _ in range(cites)} - {pid})
                out.write(
                    json.dumps({"paper_id": pid, "references": [{"paper_id": r, "context": None} for r in refs]}) + "\n"
                )


def _step_import(release: Path, corpus: Path) -> dict:
    from agenthop.corpus.importer import import_release

    corpus.unlink(missing_ok=True)
    started = time.perf_counter()
    summary = import_release(release, corpus, echo=lambda m: None)
    return {
        "seconds": round(time.perf_counter() - started, 1),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "corpus_bytes": corpus.stat().st_size,
        "search_index_bytes": dir_bytes(corpus.with_name(corpus.name + ".search")),
        "papers": summary["counts"]["papers"],
        "edges": summary["counts"]["edges"],
        "sections": summary["counts"]["sections"],
        **summary["explore"],
    }


class _Tools:
    """Runs explore tools as a session does once it has validated the arguments, without the checkpoint log's fsync
    (a few ms of disk wait per call on this machine, which would hide the search itself)."""

    def __init__(self, sandbox):
        from agenthop.server.explore.tools import tool_for

        self.scope, self.tool_for = sandbox.scope(None), tool_for

    def call(self, name: str, args: dict, expect: str | None = "ok"):
        tool = self.tool_for(name, explore=True)
        output = tool.run(self.scope, tool.args.model_validate(args))
        assert expect is None or output.outcome == expect, output.text
        return output


def _sandbox(corpus: Path, log: Path):
    from agenthop.server.caps import Caps
    from agenthop.server.log.checkpoint import CheckpointLog
    from agenthop.server.transport.mcp_app import make_sandbox

    sandbox = make_sandbox(corpus, CheckpointLog(log), Caps())
    return sandbox, _Tools(sandbox)


def _asks(conn: sqlite3.Connection, queries: int, rng: random.Random) -> list[str]:
    """2-3 words of the titles of random papers with text."""
    from agenthop.server.search import tokenize

    n_text = conn.execute("SELECT count(*) FROM papers WHERE has_text = 1").fetchone()[0]
    asks = []
    for _ in range(queries):
        (title,) = conn.execute(
            "SELECT title FROM papers WHERE has_text = 1 LIMIT 1 OFFSET ?", (rng.randrange(n_text),)
        ).fetchone()
        words = [w for w in tokenize(title) if not w.isdigit()]
        asks.append(" ".join(rng.sample(words, min(len(words), rng.choice((2, 3))))))
    return asks


def _step_startup(corpus: Path, log: Path, serve: int) -> dict:
    started = time.perf_counter()
    import agenthop.server.explore.tools  # noqa: F401  the server's modules: the same at any corpus size
    import agenthop.server.transport.mcp_app  # noqa: F401

    imported = time.perf_counter()
    _, session = _sandbox(corpus, log)
    ready = time.perf_counter()
    first = session.call("search_papers", {"query": "outside work method"})
    first_s = time.perf_counter() - ready
    conn = sqlite3.connect(f"file:{corpus}?mode=ro", uri=True)
    asks = _asks(conn, serve, random.Random(1))
    conn.close()
    # A serving process's memory after searches of every kind (the index's pages it touched stay mapped).
    for n, q in enumerate(asks):
        extra = [{}, {"scope": "full_text"}, {"year_from": 2010}, {"venue": "ACL"}, {"sort": "citations"}][n % 5]
        session.call("search_papers", {"query": q, "top_k": 10, **extra})
    return {
        "imports_s": round(imported - started, 2),
        "sandbox_ready_s": round(ready - imported, 3),
        "first_search_s": round(first_s, 3),
        "first_search_notes": first.data.get("notes"),
        "searches_after": len(asks),
        "serving_peak_rss_mb": round(peak_rss_mb(), 1),
    }


def _ms(values: list[float]) -> dict:
    values = sorted(values)
    return {
        "p50_ms": round(statistics.median(values), 2),
        "p90_ms": round(values[int(0.9 * len(values))], 2),
        "p99_ms": round(values[min(len(values) - 1, int(0.99 * len(values)))], 2),
    }


def _bm25s_mmap(sandbox, work: Path):
    """The stored bm25s index saved in bm25s's own layout and loaded memory-mapped (``BM25.load(mmap=True)``)."""
    import bm25s
    import numpy as np

    stored = sandbox.search.index(None)
    stored._bm25.save(str(work / "bm25s"), show_progress=False)
    mapped = bm25s.BM25.load(str(work / "bm25s"), mmap=True, show_progress=False)
    paper_ids = stored.paper_ids
    del stored
    sandbox.search._cache.clear()  # the in-memory copy goes: this engine reads the mapped arrays only

    def search(query: str, k: int = 10) -> list[str]:
        from agenthop.server.search import tokenize

        terms = [t for t in tokenize(query) if t in mapped.vocab_dict]
        if not terms:
            return []
        scores = mapped.get_scores(terms)
        top = np.argpartition(-scores, k)[:k]
        return [paper_ids[i] for i in top[np.argsort(-scores[top])]]

    return search


def _tantivy_alone(corpus: Path):
    """tantivy's BM25 top 10 over the same index, without the ranking rules or the corpus file."""
    from agenthop.server.explore.index import open_index
    from agenthop.server.explore.search import PAPER_FIELDS, _any_word
    from agenthop.server.search import tokenize

    conn = sqlite3.connect(f"file:{corpus}?mode=ro", uri=True)
    (corpus_id,) = conn.execute("SELECT value FROM meta WHERE key = 'corpus_id'").fetchone()
    conn.close()
    index, why = open_index(corpus, json.loads(corpus_id))
    assert index is not None, why
    searcher = index.papers.searcher()

    def search(query: str) -> list:
        return searcher.search(_any_word(index.papers_schema, PAPER_FIELDS, tokenize(query)), 10, count=False).hits

    return search


def _step_search(corpus: Path, log: Path, queries: int, seed: int, fallback: bool) -> dict:
    from agenthop.server.explore.query import Filters
    from agenthop.server.explore.search import explore_search
    from agenthop.server.search import tokenize

    sandbox, session = _sandbox(corpus, log)
    conn = sqlite3.connect(f"file:{corpus}?mode=ro", uri=True)
    asks = _asks(conn, queries, random.Random(seed))
    with tempfile.TemporaryDirectory(dir=corpus.parent) as work:
        mapped = _bm25s_mmap(sandbox, Path(work))
        tantivy_alone = _tantivy_alone(corpus)

        def call(**args):
            return lambda q: session.call("search_papers", {"query": q, "top_k": 10, **args})

        engines = {
            "explore search_papers, title_abstract": call(),
            "explore search_papers, title_abstract, year_from 2010": call(year_from=2010),
            "explore search_papers, title_abstract, venue ACL": call(venue="ACL"),
            "explore search_papers, title_abstract, sort citations": call(sort="citations"),
            "explore search_papers, title_abstract, sort year, year_from 2010": call(sort="year", year_from=2010),
            "explore search_papers, full_text (snippets)": call(scope="full_text"),
            "explore search_papers, full_text, year_from 2010": call(scope="full_text", year_from=2010),
            "tantivy alone (BM25 top 10, the same index)": tantivy_alone,
            "bm25s memory-mapped (the stored index, BM25.load(mmap=True))": mapped,
            'plain FTS5 (MATCH \'"a" OR "b"\' ORDER BY rank LIMIT 10)': lambda q: conn.execute(
                "SELECT rowid FROM papers_fts WHERE papers_fts MATCH ? ORDER BY rank LIMIT 10",
                (" OR ".join(f'"{w}"' for w in tokenize(q)),),
            ).fetchall(),
        }
        if fallback:  # explore search as it ran before the index: FTS5 and the ranking rules
            engines["explore search without the index (FTS5 + ranking rules, as before)"] = lambda q: explore_search(
                sandbox.corpus.conn, q, top_k=10, filters=Filters(), scope="title_abstract", index=None
            )
            engines["explore full_text without the index (FTS5, as before)"] = lambda q: explore_search(
                sandbox.corpus.conn, q, top_k=10, filters=Filters(), scope="full_text", index=None
            )
        result = _time_engines(engines, asks)
        result.update(_graph_tools(conn, session))
    return {"queries": queries, **result, "peak_rss_mb": round(peak_rss_mb(), 1)}


def _time_engines(engines: dict, asks: list[str]) -> dict:
    times: dict[str, list[float]] = {name: [] for name in engines}
    names = list(engines)
    for n, q in enumerate(asks):
        for name in names[n % len(names) :] + names[: n % len(names)]:  # rotate which engine goes first
            t0 = time.perf_counter()
            engines[name](q)
            times[name].append((time.perf_counter() - t0) * 1000)
    return {"search": {name: _ms(v) for name, v in times.items()}}


def _graph_tools(conn: sqlite3.Connection, session) -> dict:
    (top,) = conn.execute("SELECT paper_id FROM cited_by_counts ORDER BY n DESC LIMIT 1").fetchone()
    graph: dict[str, list[float]] = {
        "get_citing_papers (most cited, limit 10, sort citations)": [],
        "get_paper_info (most cited)": [],
        "find_similar_papers (most cited)": [],
        "get_paper_info (unknown ID: the closest is looked for)": [],
    }
    for _ in range(5):
        for name, (tool, args) in zip(
            graph,
            [
                ("get_citing_papers", {"paper_id": top, "sort": "citations"}),
                ("get_paper_info", {"paper_id": top}),
                ("find_similar_papers", {"paper_id": top}),
                ("get_paper_info", {"paper_id": top[:-1] + "#"}),
            ],
        ):
            t0 = time.perf_counter()
            session.call(tool, args, expect=None if "unknown" in name else "ok")
            graph[name].append((time.perf_counter() - t0) * 1000)
    cited = conn.execute("SELECT n FROM cited_by_counts WHERE paper_id = ?", (top,)).fetchone()[0]
    return {"graph": {name: _ms(v) for name, v in graph.items()}, "most_cited_citers": cited}


def _measure(corpus: Path, work: Path, args) -> dict:
    out = {"startup": run_child(__file__, "startup", str(corpus), str(work / "log1.sqlite"), str(args.serve))}
    print(f"startup: {out['startup']}", file=sys.stderr)
    out["search"] = run_child(
        __file__,
        "search",
        str(corpus),
        str(work / "log2.sqlite"),
        str(args.queries),
        str(args.seed),
        "1" if args.fallback else "0",
    )
    return out


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        step, a, b, *rest = sys.argv[2:]
        if step == "import":
            result = _step_import(Path(a), Path(b))
        elif step == "startup":
            result = _step_startup(Path(a), Path(b), int(rest[0]))
        else:
            result = _step_search(Path(a), Path(b), int(rest[0]), int(rest[1]), rest[2] == "1")
        print(json.dumps(result))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--text", type=int, default=100_000, help="papers with text")
    parser.add_argument("--stubs", type=int, default=400_000, help="metadata-only papers (outside works)")
    parser.add_argument("--cites", type=int, default=0, help="references of each metadata-only paper")
    parser.add_argument(
        "--stub-abstracts", type=float, default=0.0, help="share of metadata-only papers with a 3-sentence abstract"
    )
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--serve", type=int, default=50, help="searches before the serving process's RSS is read")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--fallback", action="store_true", help="also time explore search without the index (FTS5, as before)"
    )
    parser.add_argument("--dir", type=Path, default=None, help="work directory (default: a temporary one)")
    parser.add_argument("--keep", type=Path, default=None, help="work in this directory and keep the built corpus")
    parser.add_argument(
        "--corpus", type=Path, default=None, help="measure start-up and search on this corpus (no generate, no import)"
    )
    args = parser.parse_args()
    if args.corpus is not None:
        with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
            out = {"corpus": str(args.corpus), "corpus_bytes": args.corpus.stat().st_size}
            out.update(_measure(args.corpus, Path(tmp), args))
        print(json.dumps(out, indent=1))
        return
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=False)
    with tempfile.TemporaryDirectory(dir=args.dir) as scratch:
        tmp = args.keep if args.keep is not None else Path(scratch)
        started = time.perf_counter()
        generate(tmp / "release", args.text, args.stubs, args.cites, args.seed, args.stub_abstracts)
        out = {
            "text": args.text,
            "stubs": args.stubs,
            "stub_abstracts": args.stub_abstracts,
            "cites": args.cites,
            "generate_s": round(time.perf_counter() - started, 1),
        }
        print(f"generated in {out['generate_s']} s", file=sys.stderr)
        out["import"] = run_child(__file__, "import", str(tmp / "release"), str(tmp / "corpus.sqlite"))
        print(f"import: {out['import']}", file=sys.stderr)
        out.update(_measure(tmp / "corpus.sqlite", tmp, args))
        print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
