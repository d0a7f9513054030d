"""The 20 research questions of bench/explore_questions.jsonl (written before any result was looked at): is the
expected paper in explore search's top 5?

    python bench/bench_explore_questions.py explore.sqlite                # explore search as this code runs it
    python bench/bench_explore_questions.py explore.sqlite --query-only   # the query alone, no filters

Each question has a query (what a person would type) and, for some, filters (year, author, scope). The search runs
through an explore session (``Session.call``, as a client's call runs), with the filters when the tool's explore
schema declares them. A question expecting an outside work (no ``expected_id``) counts as found when a result's
title is the expected title (normalised), whichever record of the work it is. Prints one JSON line per question,
then the count.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

QUESTIONS = Path(__file__).resolve().parent / "explore_questions.jsonl"


def _norm(title: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", title.lower()).split())


def found_at(results: list[dict], question: dict) -> int | None:
    for r in results:
        if question["expected_id"] is not None and r["paper_id"] == question["expected_id"]:
            return r["rank"]
        if question["expected_id"] is None and _norm(r["title"]).startswith(_norm(question["expected_title"])):
            return r["rank"]
    return None


def run(corpus: Path, *, query_only: bool) -> list[dict]:
    from agenthop.server.caps import Caps
    from agenthop.server.log.checkpoint import CheckpointLog
    from agenthop.server.transport.mcp_app import make_sandbox

    questions = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        log = CheckpointLog(Path(tmp) / "log.sqlite")
        try:
            sandbox = make_sandbox(corpus, log, Caps())
            session = sandbox.sessions.create(
                sandbox.scope(None), run="questions", caps=Caps(None, None, None), transport="stdio"
            )
            for q in questions:
                args = {"query": q["query"], "top_k": 5}
                if not query_only:
                    args.update(q["filters"])
                result = session.call("search_papers", args)
                if result.data.get("outcome") == "invalid":  # code without the explore arguments: the query alone
                    args = {"query": q["query"], "top_k": 5}
                    result = session.call("search_papers", args)
                rank = found_at(result.data.get("results", []), q)
                rows.append(
                    {
                        "n": q["n"],
                        "query": q["query"],
                        "args": args,
                        "rank": rank,
                        "top": [r["title"][:60] for r in result.data.get("results", [])],
                    }
                )
        finally:
            log.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--query-only", action="store_true", help="search with the query alone, no filters")
    args = parser.parse_args(argv)
    rows = run(args.corpus, query_only=args.query_only)
    for row in rows:
        print(json.dumps(row, ensure_ascii=False))
    hits = sum(1 for r in rows if r["rank"] is not None)
    print(f"top 5: {hits}/{len(rows)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
