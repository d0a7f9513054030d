"""What each tool reads, before and after the tools read only what they return, side by side in one process.

    python bench/bench_tool_reads.py --corpus /tmp/ah/full.corpus.sqlite --old-corpus /tmp/ah/full-nolengths.corpus.sqlite

``--old-corpus`` is the same release imported before section lengths were stored (no ``sections.chars``);
the server still serves such a corpus, counting lengths from the text. Each pair is timed in alternating
rounds on the item with the largest neighbourhood (as bench_server.py picks it); the figure is the median of
per-round medians and the ratio before / after.

1. list_sections: the section headers and lengths of the neighbourhood's papers with text, counted from
   the text (``length(text)``) against the stored ``chars``.
2. get_references: the references of every paper of the neighbourhood, with every paper column (abstract,
   authors and IDs read and parsed, as before) against the four the tool shows.
3. The lone-surrogate check every result's strings pass on the way out: the regular expression (before)
   against ``has_lone_surrogate`` (after), on the longest section of the corpus, as ASCII and with one
   non-ASCII character.
4. The client-log relay (server middleware on every request): ``client_log.relay`` around a handler that
   returns at once, against the handler alone, on the event loop (no client asked for log messages).
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import statistics
import time
from pathlib import Path

from agenthop.server.log.jsontext import has_lone_surrogate
from agenthop.server.papers import _PAPER_COLUMNS, Corpus, _paper

OLD_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _median_ms(fn, args_list: list, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        for args in args_list:
            t0 = time.perf_counter()
            fn(*args)
            times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def _old_references(conn: sqlite3.Connection, item: str, paper_id: str) -> list:
    rows = conn.execute(
        f"SELECT {_PAPER_COLUMNS}, r.context FROM item_edges r JOIN papers p ON p.paper_id = r.cited "
        "WHERE r.item_id = ? AND r.citing = ? ORDER BY r.position",
        (item, paper_id),
    )
    return [(_paper(row[:9]), row[9]) for row in rows]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, required=True, help="a corpus with stored section lengths")
    ap.add_argument("--old-corpus", type=Path, required=True, help="the same release imported before they were stored")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=5, help="passes over the workload per round")
    opts = ap.parse_args()

    new, old = Corpus(opts.corpus), Corpus(opts.old_corpus)
    if "length(text)" in new._section_headers_sql or "length(text)" not in old._section_headers_sql:
        raise SystemExit("--corpus must store section lengths and --old-corpus must not")
    conn = new.conn
    item, _ = conn.execute(
        "SELECT item_id, count(*) c FROM item_nodes GROUP BY item_id ORDER BY c DESC LIMIT 1"
    ).fetchone()
    nodes = [
        pid for (pid,) in conn.execute("SELECT paper_id FROM item_nodes WHERE item_id = ? ORDER BY position", (item,))
    ]
    texted = [
        (a,)
        for (a,) in conn.execute(
            "SELECT p.arxiv_id FROM item_nodes n JOIN papers p USING (paper_id) WHERE n.item_id = ? AND p.has_text = 1",
            (item,),
        )
    ]
    citing = [
        (item, pid) for (pid,) in conn.execute("SELECT DISTINCT citing FROM item_edges WHERE item_id = ?", (item,))
    ]
    longest = conn.execute("SELECT text FROM sections ORDER BY chars DESC LIMIT 1").fetchone()[0]
    texts = {
        "ascii": [(longest,)],
        "non_ascii": [(longest[: len(longest) // 2] + "\u00e9" + longest[len(longest) // 2 :],)],
    }

    for i, pid in citing:  # the same references, in the same order, both ways
        assert [(q.paper_id, q.title, q.year, q.has_text, c) for q, c in _old_references(old.conn, i, pid)] == [
            (r.paper.paper_id, r.paper.title, r.paper.year, r.paper.has_text, r.context) for r in new.references(pid, i)
        ]
    pairs = {
        "list_sections": ((old.section_headers, texted), (new.section_headers, texted)),
        "get_references": (
            (lambda i, p: _old_references(old.conn, i, p), citing),
            (lambda i, p: new.references(p, i), citing),
        ),
        "lone_surrogate_ascii": ((OLD_LONE_SURROGATE.search, texts["ascii"]), (has_lone_surrogate, texts["ascii"])),
        "lone_surrogate_non_ascii": (
            (OLD_LONE_SURROGATE.search, texts["non_ascii"]),
            (has_lone_surrogate, texts["non_ascii"]),
        ),
    }
    rounds: dict[str, dict[str, list[float]]] = {name: {"before": [], "after": []} for name in pairs}
    for r in range(opts.rounds):
        for name, ((before_fn, args), (after_fn, _)) in pairs.items():
            order = [("before", before_fn), ("after", after_fn)]
            for label, fn in order if r % 2 == 0 else order[::-1]:
                rounds[name][label].append(_median_ms(fn, args, opts.repeat))
    report = {
        "item": item,
        "nodes": len(nodes),
        "papers_with_text": len(texted),
        "citing_papers": len(citing),
        "longest_section_chars": len(longest),
        "ms_per_call": {},
    }
    print(
        f"item {item}: {len(nodes)} nodes, {len(texted)} with text, {len(citing)} citing; longest section {len(longest):,} chars"
    )
    print(f"{'':26} {'before ms':>10} {'after ms':>10} {'before / after':>15}")
    for name, got in rounds.items():
        before, after = statistics.median(got["before"]), statistics.median(got["after"])
        ratios = [b / a for b, a in zip(got["before"], got["after"])]
        report["ms_per_call"][name] = {
            "before": round(before, 4),
            "after": round(after, 4),
            "ratio": [round(statistics.median(ratios), 1), round(min(ratios), 1), round(max(ratios), 1)],
        }
        print(
            f"{name:26} {before:>10.4f} {after:>10.4f} {statistics.median(ratios):>8.1f} ({min(ratios):.1f}-{max(ratios):.1f})"
        )
    report["relay_us_per_request"] = relay_cost(opts.rounds)
    print(
        "client-log relay, µs per request: around a bare handler {relay:.2f}, the handler alone {bare:.2f}".format(
            **report["relay_us_per_request"]
        )
    )
    print(json.dumps(report))


def relay_cost(rounds: int, calls: int = 20_000) -> dict:
    """µs per request of the relay middleware around a handler that returns at once, and of the handler alone."""
    import asyncio
    from types import SimpleNamespace

    from agenthop.server.transport import client_log

    async def handler(ctx):
        return {}

    ctx = SimpleNamespace(request_id=1, protocol_version="2026-07-28", meta=None, session=None)

    async def measure() -> dict:
        got: dict[str, list[float]] = {"relay": [], "bare": []}
        for _ in range(rounds):
            for label, call in (("relay", lambda: client_log.relay(ctx, handler)), ("bare", lambda: handler(ctx))):
                t0 = time.perf_counter()
                for _ in range(calls):
                    await call()
                got[label].append((time.perf_counter() - t0) / calls * 1e6)
        return {label: round(statistics.median(v), 2) for label, v in got.items()}

    return asyncio.run(measure())


if __name__ == "__main__":
    main()
