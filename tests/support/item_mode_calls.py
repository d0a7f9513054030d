"""Item-mode results for a fixed script of calls on a corpus: what tests/server/explore/test_explore_tools.py compares
with the results the code gave before explore mode grew its own tools, kept in tests/fixtures/item_mode_before.json.

Only public APIs are used, so the same script ran on the code before the change:

    python tests/support/item_mode_calls.py corpus.sqlite > tests/fixtures/item_mode_before.json
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path

ITEMS = ("st_0001", "st_0002", "mt_0037")


def _script(corpus, item_id: str) -> list[tuple[str, dict]]:
    item = corpus.item(item_id)
    nodes = [
        pid
        for (pid,) in corpus.conn.execute(
            "SELECT paper_id FROM item_nodes WHERE item_id = ? ORDER BY position", (item_id,)
        )
    ]
    with_text = [pid for pid in nodes if corpus.paper(pid, item_id).has_text]
    calls: list[tuple[str, dict]] = [
        ("search_papers", {"query": item.seed_title}),
        ("search_papers", {"query": item.question, "top_k": 10}),
        ("search_papers", {"query": "2017 results"}),
        ("get_references", {"paper_id": item.seed_paper_id}),
        ("get_paper_info", {"paper_id": "P18-1068"}),
        ("get_paper_info", {"paper_id": item.seed_paper_id[:-1]}),
    ]
    calls += [("get_paper_info", {"paper_id": pid}) for pid in nodes[:8]]
    calls += [("get_references", {"paper_id": pid}) for pid in nodes[:4]]
    for pid in with_text[:2]:
        calls += [("list_sections", {"paper_id": pid}), ("read_section", {"paper_id": pid, "section": "A"})]
    calls.append(("think", {"reasoning": "done"}))
    return calls


def item_mode_results(corpus_path: Path) -> dict:
    """{"tools": the tool definitions an item session lists, "calls": {item: [[tool, args, outcome, sha256], ...]}}."""
    from agenthop.server.caps import Caps
    from agenthop.server.log.checkpoint import CheckpointLog
    from agenthop.server.transport.mcp_app import TOOL_DEFINITIONS, make_sandbox

    out: dict = {
        "tools": [
            TOOL_DEFINITIONS[n].model_dump(mode="json", by_alias=True, exclude_none=True) for n in TOOL_DEFINITIONS
        ],
        "calls": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        log = CheckpointLog(Path(tmp) / "log.sqlite")
        try:
            sandbox = make_sandbox(corpus_path, log, Caps(budget=1000))
            for item_id in ITEMS:
                session = sandbox.sessions.create(
                    sandbox.scope(item_id), run="golden", transport="stdio", session_id=f"golden-{item_id}"
                )
                results = []
                for name, args in _script(sandbox.corpus, item_id):
                    result = session.call(name, args, {"agenthop/turn": 1})
                    whole = json.dumps([result.text, result.data, result.is_error], sort_keys=True, ensure_ascii=False)
                    # A digest of the whole result (text, structured content, error flag), and its outcome to read.
                    results.append([name, args, result.data.get("outcome"), hashlib.sha256(whole.encode()).hexdigest()])
                out["calls"][item_id] = results
        finally:
            log.close()
    return out


if __name__ == "__main__":
    json.dump(item_mode_results(Path(sys.argv[1])), sys.stdout, indent=1, sort_keys=True, ensure_ascii=False)
    sys.stdout.write("\n")
