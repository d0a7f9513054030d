"""Hand-built runs for the panel tests: the scorer fixture's corpus plus st_0006..st_0019, each run written call by
call (tests/scorer/test_scorer_panel.py and test_scorer_panel_paper.py share them).

The extra items are single-target depth-1 items like st_0003 (seed A, gold B, direct label B "Experiments", correct
option D).
"""

from __future__ import annotations

from agenthop.scorer.panel_tables import panel_entry
from agenthop.scorer.runs import load_run
from agenthop.scorer.summary import score_run
from support.release_fixture import _graph, _item, _label
from support.scorer_fixtures import SessionWriter, _add_items, new_run_dir

EXTRA = [f"st_{n:04d}" for n in range(6, 20)]
B_ITEMS = ["st_0001", "st_0003", "st_0005", *EXTRA]  # gold paper B, seed A
RIGHT = {
    "st_0001": "B",
    "st_0002": "A",
    "mt_0001": "A",
    "mt_0002": "C",
    "st_0003": "D",
    "st_0005": "A",
    **{i: "D" for i in EXTRA},
}
WRONG = "C"  # the correct option of none of the items above but mt_0002


def more_items(rel) -> None:
    _add_items(rel)
    for iid in EXTRA:
        rel.qa.append(
            _item(
                iid,
                "single-target",
                1,
                "MOTIVE",
                "A",
                ["B"],
                [],
                f"Question of {iid}?",
                ["w", "x", "y", "z"],
                3,
                ["wrong_paper", "no_context", "seed_only", "correct"],
            )
        )
        rel.graphs.append(_graph(iid, ["A", "B", "C", "D", "E"], {"A": ["B", "C", "D"], "B": ["E"]}))
        rel.labels.append(
            {"sample_id": iid, "analysis": {"section_recall_labels": [_label("B", "Experiments", "direct")]}}
        )


def manifest(name, model, tier=None, closed_book=False, disabled=()):
    m = {
        "run": name,
        "agent": "raw",
        "model": model,
        "disabled_tools": list(disabled),
        "ablations": {"closed_book": closed_book, "disabled_tools": list(disabled), "read_first": False},
    }
    return {**m, "tier": tier} if tier else m


def write_run(root, name, scripts: dict, man: dict | None = None, corpus_id: str | None = None, caps=None):
    run_dir, log, _ = new_run_dir(root, name, man)
    for iid, script in scripts.items():
        s = SessionWriter(
            log,
            iid,
            run=name,
            corpus={"corpus_id": corpus_id, "schema_version": 1} if corpus_id else None,
            caps=caps,
        )
        script(s)
    log.close()
    return run_dir


def entry(gold, run_dir, label=None):
    return panel_entry(score_run(load_run(run_dir), gold), label)
