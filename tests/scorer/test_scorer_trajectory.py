"""Trajectory analysis on hand-built logs: transitions, n-grams, stopping and recovery."""

from __future__ import annotations

import pytest
from support.scorer_fixtures import SessionWriter, build_corpus, new_run_dir

from agenthop.scorer.gold import Gold
from agenthop.scorer.logs import TOOLS
from agenthop.scorer.runs import load_run
from agenthop.scorer.summary import score_run


@pytest.fixture(scope="module")
def gold(tmp_path_factory):
    g = Gold(build_corpus(tmp_path_factory.mktemp("traj-corpus")))
    yield g
    g.close()


def score(tmp_path, gold, scripts: dict):
    run_dir, log, _ = new_run_dir(tmp_path, "t")
    for item_id, script in scripts.items():
        s = SessionWriter(log, item_id, run="t")
        script(s)
    log.close()
    return score_run(load_run(run_dir), gold)["trajectory"]


def test_transition_matrix_counts_and_rows(tmp_path, gold):
    def a(s):
        s.search(hits=[("B", 1)])
        s.read("B", 2)
        s.think()
        s.submit("B")

    def b(s):
        s.search()
        s.search()
        s.read("A", 0)
        s.call("read_section", {"paper_id": "x"}, outcome="session_ended")  # after the end: not in the trajectory
        s.call("no_such_tool", {}, outcome="invalid")  # not one of the seven tools

    tr = score(tmp_path, gold, {"st_0001": a, "st_0003": b})
    t = tr["transitions"]
    assert t["tools"] == list(TOOLS)
    i = {name: n for n, name in enumerate(TOOLS)}
    c = t["counts"]
    assert c[i["search_papers"]][i["read_section"]] == 2
    assert c[i["search_papers"]][i["search_papers"]] == 1
    assert c[i["read_section"]][i["think"]] == 1
    assert c[i["think"]][i["submit_answer"]] == 1
    assert sum(map(sum, c)) == 5
    assert t["row_normalised"][i["search_papers"]][i["read_section"]] == pytest.approx(2 / 3)
    assert t["row_normalised"][i["get_paper_info"]] == [0.0] * 7


def test_bigram_accuracy_difference_and_trigram(tmp_path, gold):
    def good(s):
        s.search(hits=[("B", 1)])
        s.read("B", 2)
        s.submit("B")

    def bad(s):
        s.think()
        s.submit("A")

    def bad2(s):
        s.search()
        s.read("A", 0)
        s.submit("B")  # st_0005's answer is A

    tr = score(tmp_path, gold, {"st_0001": good, "st_0003": bad, "st_0005": bad2})
    bg = {tuple(b["bigram"]): b for b in tr["bigrams"]}
    sr = bg[("search_papers", "read_section")]
    assert (sr["n_with"], sr["accuracy_with"], sr["n_without"], sr["accuracy_without"]) == (2, 0.5, 1, 0.0)
    assert sr["difference"] == pytest.approx(0.5)
    ts = bg[("think", "submit_answer")]
    assert ts["difference"] == pytest.approx(0 - 0.5)
    tg = tr["trigrams"]
    assert tg["total"] == 2
    assert tg["most_frequent"]["trigram"] == ["search_papers", "read_section", "submit_answer"]
    assert tg["most_frequent"]["share"] == 1.0


def _scope(tr: dict, scope: str) -> dict:
    stop = tr["stopping"][scope]
    return {"n": stop["n"], **{k: v["n"] for k, v in stop["categories"].items() if v["n"]}}


# ST scope (st_0001, gold B): the action after the first delivered read of B.
@pytest.mark.parametrize(
    "script,expected",
    [
        (lambda s: (s.read("A", 0), s.read("B", 2), s.submit("B")), "imm"),
        (lambda s: (s.read("B", 2), s.think(), s.think(), s.submit("B")), "thnk"),
        (lambda s: (s.read("B", 2), s.think(), s.read("B", 0), s.submit("B")), "read"),
        (lambda s: (s.read("B", 2), s.read("D", 0, outcome="no_text"), s.end("max_turns")), "read"),
        (lambda s: (s.read("B", 2), s.search(), s.submit("B")), "rest"),
        (lambda s: (s.read("B", 2), s.think(), s.end("max_turns")), "rest"),
        (lambda s: (s.read("B", 2), s.sections("A"), s.think(), s.submit("B")), "rest"),
    ],
)
def test_st_scope(tmp_path, gold, script, expected):
    tr = score(tmp_path, gold, {"st_0001": script})
    assert _scope(tr, "st") == {"n": 1, expected: 1}
    assert _scope(tr, "mt_fail") == {"n": 0} and _scope(tr, "mt_both") == {"n": 0}


def test_st_scope_needs_a_delivered_gold_read(tmp_path, gold):
    tr = score(tmp_path, gold, {"st_0001": lambda s: (s.read("B", 9, outcome="not_found"), s.submit("B"))})
    assert _scope(tr, "st") == {"n": 0}


# MT-fail scope (mt_0001, gold B and K; K never delivered), whatever the answer.
@pytest.mark.parametrize(
    "script,expected",
    [
        (lambda s: (s.read("J", 0), s.search(), s.submit("C")), "zero_gold"),
        (lambda s: (s.read("K", 2, outcome="budget_rejected"), s.end("budget")), "zero_gold"),
        (lambda s: (s.read("B", 2), s.submit("A")), "prem"),  # right answer: still a recall failure
        (lambda s: (s.read("B", 2), s.think(), s.submit("B")), "prem"),
        (lambda s: (s.search(), s.read("B", 2), s.end("max_turns")), "prem"),
        (lambda s: (s.read("B", 2), s.search(), s.submit("B")), "explored"),
        (lambda s: (s.read("B", 2), s.read("J", 1), s.submit("B")), "explored"),
        (lambda s: (s.read("B", 2), s.read("K", 2, outcome="budget_rejected"), s.submit("B")), "explored"),
        (lambda s: (s.read("B", 2), s.info("J"), s.end("max_turns")), "explored"),
        (lambda s: (s.read("B", 2), s.refs("B"), s.submit("B")), "explored"),
        (lambda s: (s.read("B", 2), s.read("B", 0), s.think(), s.submit("B")), "stayed"),
        (lambda s: (s.read("B", 2), s.sections("B"), s.end("max_turns")), "stayed"),
    ],
)
def test_mt_fail_scope(tmp_path, gold, script, expected):
    tr = score(tmp_path, gold, {"mt_0001": script})
    assert _scope(tr, "mt_fail") == {"n": 1, expected: 1}
    assert _scope(tr, "mt_both") == {"n": 0}


# MT-both scope (mt_0001): the action after the read that delivered the second gold paper (K), not the first.
@pytest.mark.parametrize(
    "script,expected",
    [
        (lambda s: (s.read("B", 2), s.think(), s.read("K", 2), s.submit("A")), "imm"),
        (lambda s: (s.read("K", 0), s.read("B", 2), s.think(), s.submit("B")), "thnk"),
        (lambda s: (s.read("B", 2), s.read("K", 2), s.read("B", 0), s.submit("B")), "read"),
        (lambda s: (s.read("B", 2), s.read("K", 2), s.refs("K"), s.submit("B")), "rest"),
    ],
)
def test_mt_both_scope(tmp_path, gold, script, expected):
    tr = score(tmp_path, gold, {"mt_0001": script})
    assert _scope(tr, "mt_both") == {"n": 1, expected: 1}
    assert _scope(tr, "mt_fail") == {"n": 0}


def test_scopes_pool_items_with_their_accuracy(tmp_path, gold):
    tr = score(
        tmp_path,
        gold,
        {
            "mt_0001": lambda s: (s.read("B", 2), s.submit("A")),  # prem, right answer
            "mt_0002": lambda s: (s.read("H", 1), s.search(), s.submit("A")),  # explored, wrong (C is right)
            "st_0001": lambda s: (s.read("B", 2), s.submit("C")),  # imm, wrong
            "st_0003": lambda s: (s.read("B", 2), s.submit("D")),  # imm, right
            "st_0005": lambda s: (s.read("A", 0), s.submit("A")),  # gold never read: out of the ST scope
        },
    )
    mf = tr["stopping"]["mt_fail"]
    assert mf["n"] == 2
    assert (mf["categories"]["prem"]["share"], mf["categories"]["prem"]["accuracy"]) == (0.5, 1.0)
    assert (mf["categories"]["explored"]["share"], mf["categories"]["explored"]["accuracy"]) == (0.5, 0.0)
    st = tr["stopping"]["st"]
    assert st["n"] == 2 and st["categories"]["imm"] == {"n": 2, "share": 1.0, "accuracy": 0.5}
    assert st["categories"]["thnk"] == {"n": 0, "share": 0.0, "accuracy": None}


def test_item_row_trajectory_names_only_the_seven_tools(tmp_path, gold):
    run_dir, log, _ = new_run_dir(tmp_path, "t")
    s = SessionWriter(log, "st_0001", run="t")
    s.search()
    s.call("fly_to_moon", {}, outcome="invalid")
    s.read("B", 2)
    s.submit("B")
    s.call("think", {"reasoning": "late"}, outcome="session_ended")
    log.close()
    row = score_run(load_run(run_dir), gold)["item_results"][0]
    assert row["trajectory"] == ["search_papers", "read_section", "submit_answer"]
    assert row["contact"] == "inspected"


def test_after_nongold_read(tmp_path, gold):
    def script(s):
        s.read("A", 0)  # non-gold -> next read is gold: recover
        s.read("B", 2)
        s.read("A", 1)  # non-gold -> next read is another non-gold: stay
        s.read("D", 0, outcome="no_text")
        s.read("A", 2)  # -> think
        s.think()
        s.read("A", 3)  # -> re-navigate
        s.refs("A")
        s.read("C", 0, outcome="not_found")  # not delivered: no event
        s.read("A", 0)  # -> submit
        s.submit("B")

    tr = score(tmp_path, gold, {"st_0001": script})
    cats = {k: v["n"] for k, v in tr["after_nongold_read"]["categories"].items()}
    assert cats == {"recover": 1, "stay": 1, "think": 1, "renavigate": 1, "submit": 1, "end": 0}
    tr = score(tmp_path / "end", gold, {"st_0001": lambda s: s.read("A", 0)})
    assert tr["after_nongold_read"]["categories"]["end"]["n"] == 1
