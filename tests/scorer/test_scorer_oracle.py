"""An oracle that reads exactly the labelled gold sections and answers correctly scores recall 1 everywhere.

Uses the committed corpus.sqlite when it exists, else the scorer's fixture corpus
(release fixture + four items). Two oracles: one writes the checkpoint records by
hand; the other drives the real server's sessions in-process, so the ``delivered``
records come from read_section itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.paths import REPO
from support.scorer_fixtures import SessionWriter, build_corpus

from agenthop.scorer.gold import Gold
from agenthop.scorer.runs import load_run
from agenthop.scorer.summary import score_run
from agenthop.server.log.checkpoint import CheckpointLog
from agenthop.server.sections import alias, resolve

MAX_ITEMS = 200  # keep the test fast on a large corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    committed = REPO / "corpus.sqlite"
    if committed.exists():
        return committed
    return build_corpus(tmp_path_factory.mktemp("oracle-corpus"))


def labelled_sections(gold: Gold, item) -> list[tuple[str, str, int, str, str]] | None:
    """Per gold paper (paper_id, arxiv_id, section index, header, label) of one direct label; None if unresolvable."""
    out = []
    for pid, arxiv in zip(item.gold_paper_ids, item.gold_arxiv_ids):
        rows = gold.conn.execute(
            "SELECT position, header, text FROM sections WHERE arxiv_id = ? ORDER BY position", (arxiv,)
        ).fetchall()
        headers = [h for _, h, _ in rows]
        found = None
        for lab in item.direct_labels(arxiv):
            res = resolve(lab.section, headers)
            if res.index is not None:
                found = (res.index, lab.section)
                break
            hits = [pos for pos, _, text in rows if lab.section in text]  # a subsection label
            if hits:
                found = (hits[0], lab.section)
                break
        if found is None:
            return None
        out.append((pid, arxiv, found[0], headers[found[0]], found[1]))
    return out


def oracle_plan(gold: Gold):
    plan, skipped = {}, []
    for iid, item in list(gold.items.items())[:MAX_ITEMS]:
        reads = labelled_sections(gold, item)
        if reads is None:
            skipped.append(iid)
        else:
            plan[iid] = (reads, item.correct_letter)
    return plan, skipped


def check(summary, plan):
    h = summary["headline"]
    assert summary["items"]["n"] == len(plan)
    assert h["accuracy"] == 1.0
    for key in ("paper_recall_st", "paper_recall_mt", "conversion_st", "conversion_mt"):
        assert h[key] in (1.0, None), key
    assert h["paper_recall_st"] == 1.0 or h["paper_recall_mt"] == 1.0
    assert h["section_recall"] == 1.0
    assert all(r["paper_recall"] == 1 and r["section_recall"] == 1 for r in summary["item_results"])
    assert summary["audit"]["counts"]["correct"] == len(plan)


def test_oracle_from_hand_written_logs(corpus, tmp_path):
    gold = Gold(corpus)
    try:
        plan, skipped = oracle_plan(gold)
        assert plan and len(skipped) <= len(plan) // 10, f"labels that resolve to no section: {skipped[:10]}"
        run_dir = tmp_path / "oracle"
        run_dir.mkdir()
        log = CheckpointLog(run_dir / "server-log.sqlite")
        for iid, (reads, letter) in plan.items():
            s = SessionWriter(log, iid, run="oracle")
            for pid, arxiv, index, header, _ in reads:
                s.read(
                    pid, index, delivered={"paper_id": pid, "arxiv_id": arxiv, "section_index": index, "header": header}
                )
            s.submit(letter)
        log.close()
        check(score_run(load_run(run_dir), gold), plan)
    finally:
        gold.close()


def test_oracle_through_the_real_server(corpus, tmp_path):
    try:
        from agenthop.server.caps import Caps
        from agenthop.server.transport.mcp_app import make_sandbox
    except ImportError as exc:  # pragma: no cover - the server is built in parallel
        pytest.skip(f"server not importable: {exc}")
    gold = Gold(corpus)
    try:
        plan, _ = oracle_plan(gold)
        run_dir = tmp_path / "oracle-server"
        run_dir.mkdir()
        log = CheckpointLog(run_dir / "server-log.sqlite")
        sandbox = make_sandbox(corpus, log, Caps())
        for iid, (reads, letter) in plan.items():
            s = sandbox.sessions.create(sandbox.scope(iid), run="oracle", caps=Caps(None, 20, None), transport="stdio")
            for pid, _, index, _header, _label in reads:
                # Name the section by its alias: the labelled section itself, whatever the label's form.
                r = s.call("read_section", {"paper_id": pid, "section": alias(index)}, {"agenthop/turn": 1})
                assert not r.is_error, r.text
            r = s.call("submit_answer", {"answer": letter, "reasoning": "oracle"}, {"agenthop/turn": 2})
            assert not r.is_error, r.text
        log.close()
        summary = score_run(load_run(run_dir), gold)
        check(summary, plan)
        assert summary["calls_per_turn"]["source"] == "checkpoint"
    finally:
        gold.close()
