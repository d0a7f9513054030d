"""Scorer metrics on hand-built logs whose every number is known by construction (see scorer_fixtures.py)."""

from __future__ import annotations

import pytest
from support.scorer_fixtures import (
    ALL_ITEMS,
    RunnerWriter,
    SessionWriter,
    build_corpus,
    new_run_dir,
    pid,
    write_items_file,
    write_main_run,
)

from agenthop.scorer.gold import Gold
from agenthop.scorer.results import SUMMARY_SCHEMA_VERSION
from agenthop.scorer.runs import load_run
from agenthop.scorer.summary import score_run
from agenthop.server.log.checkpoint import CheckpointLog
from agenthop.server.sections import label_is_resolvable, label_matches_section


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return build_corpus(tmp_path_factory.mktemp("scorer-corpus"))


@pytest.fixture(scope="module")
def gold(corpus):
    g = Gold(corpus)
    yield g
    g.close()


@pytest.fixture(scope="module")
def main(tmp_path_factory, gold):
    root = tmp_path_factory.mktemp("runs")
    run = load_run(write_main_run(root))
    return score_run(run, gold, list(ALL_ITEMS))


def rows(summary):
    return {r["item_id"]: r for r in summary["item_results"]}


def one_item(tmp_path, gold, item_id, script, *, runner=False, expected=None):
    """Score a run holding one session scripted by ``script(session)``."""
    run_dir, log, rw = new_run_dir(tmp_path, "edge")
    s = SessionWriter(log, item_id, run="edge")
    script(s)
    log.close()
    if runner:
        rw.item_end(s, "answer" if s.ended else "max_turns", None, rw.turns(s))
    summary = score_run(load_run(run_dir), gold, expected)
    return summary, rows(summary)[item_id]


# -- accuracy --------------------------------------------------------------------


def test_accuracy_counts_unobservable_and_non_submissions_as_wrong(main):
    ov = main["metrics"]["overall"]
    assert (ov["n"], ov["correct"]) == (7, 2)
    assert ov["accuracy"] == pytest.approx(2 / 7)
    r = rows(main)
    assert r["st_0005"]["answer"] is None and r["st_0005"]["correct"] == 0
    assert r["st_0004"]["observed"] is False and r["st_0004"]["correct"] == 0


def test_item_set_from_logs_without_items_file(tmp_path, gold):
    summary = score_run(load_run(write_main_run(tmp_path)), gold)
    assert summary["items"]["n"] == 6 and summary["items"]["expected_from"] == "logs"
    assert summary["headline"]["accuracy"] == pytest.approx(2 / 6)


def test_cells_with_wilson_intervals(main):
    cells = main["metrics"]["by_cell"]
    assert {c: (m["n"], m["correct"]) for c, m in cells.items()} == {
        "ST-d1": (4, 1),
        "ST-d2": (1, 0),
        "MT-d1": (1, 0),
        "MT-d2": (1, 1),
    }
    lo, hi = cells["ST-d1"]["accuracy_ci95"]
    assert lo == pytest.approx(0.0456, abs=1e-4) and hi == pytest.approx(0.6994, abs=1e-4)
    assert main["metrics"]["by_type"]["ST"]["n"] == 5 and main["metrics"]["by_type"]["MT"]["n"] == 2
    assert set(main["metrics"]["by_reasoning_type"]) == {"GROUND", "METHOD", "MOTIVE", "RESULT"}
    assert main["metrics"]["by_reasoning_type"]["RESULT"]["correct"] == 2
    assert main["metrics"]["by_venue"]["ACL"]["n"] == 7
    assert main["metrics"]["by_consensus_tier"]["gold"]["n"] == 7


# -- recall and conversion ----------------------------------------------------------


def test_paper_recall_st_and_mt(main):
    h = main["headline"]
    assert h["paper_recall_st"] == pytest.approx(1 / 5)
    assert h["paper_recall_mt"] == pytest.approx(1 / 2)
    r = rows(main)
    assert r["st_0001"]["paper_recall"] == 1 and r["mt_0002"]["paper_recall"] == 1


def test_mt_with_only_one_gold_read_has_paper_recall_zero(main):
    r = rows(main)["mt_0001"]
    assert r["gold_delivered"] == [pid("B")]
    assert r["paper_recall"] == 0


def test_failed_gold_read_is_inspection_not_recall(main):
    r = rows(main)["st_0002"]  # read_section on H with outcome not_found
    assert r["paper_recall"] == 0
    assert r["audit"] == "incorrect_inspected"


def test_refused_reads_deliver_nothing(tmp_path, gold):
    bogus = {"paper_id": pid("B"), "arxiv_id": "2101.00002", "section_index": 2, "header": "Experiments"}

    def script(s):
        s.read("B", 2, outcome="budget_rejected", delivered=bogus)  # even a stray delivered is ignored
        s.read("B", 2, outcome="invalid", delivered=bogus)
        s.submit("A")

    summary, r = one_item(tmp_path, gold, "st_0001", script)
    assert r["paper_recall"] == 0 and r["section_recall"] == 0
    assert r["audit"] == "incorrect_neither"  # refused calls are not inspections
    assert r["budget"] == 0


def test_section_recall(main):
    r = rows(main)
    assert main["headline"]["section_recall"] == pytest.approx(1 / 7)
    assert r["st_0001"]["section_recall"] == 1
    # mt_0002: H's subsection label is credited, but K's delivered section is not its labelled one.
    assert r["mt_0002"]["gold_direct_hit"] == [pid("H")]
    assert r["mt_0002"]["section_recall"] == 0


def test_subsection_label_credited_via_verbatim_text(tmp_path, gold):
    def script(s):
        s.read("H", 1)  # Method; its text holds "4.1 Window Size"
        s.read("K", 2)  # Experiments (label "experiments": case-insensitive header)
        s.submit("C")

    _, r = one_item(tmp_path, gold, "mt_0002", script)
    assert (r["paper_recall"], r["section_recall"], r["correct"]) == (1, 1, 1)


def test_normalised_header_label(tmp_path, gold):
    _, r = one_item(tmp_path, gold, "st_0002", lambda s: (s.read("H", 1), s.submit("A")))
    assert r["section_recall"] == 1  # label "2 Method" vs header "Method"


def test_supporting_label_does_not_count(tmp_path, gold):
    _, r = one_item(tmp_path, gold, "st_0001", lambda s: (s.read("B", 0), s.submit("B")))
    assert r["paper_recall"] == 1 and r["section_recall"] == 0  # Introduction is only "supporting"


HEADERS = ["Introduction", "Method", "Experiments", "Results", "Apdx_A: Proofs"]


def test_label_matching_rules():
    def m(label, header, text=None):
        return label_matches_section(label, header, text, HEADERS)

    assert m("experiments", "Experiments")
    assert m("2 Method", "Method")
    assert m("Proofs", "Apdx_A: Proofs")
    assert m("3.2 Ablation Details", "Method", "We ablate.\n3.2 Ablation Details\nMore.")
    assert not m("Ablation", "Method", "no such words here")
    # A label that names a header of the paper is credited by that section only, never by another
    # section whose text happens to contain the word (SPEC 7: the text rule is for subsection labels).
    assert not m("Results", "Experiments", "Results are in Table 2.")
    assert not m("4 Results", "Method", "4 Results are discussed below.")
    assert m("Results", "Results", "anything")
    assert not label_matches_section("Results", "Experiments", "Results are in Table 2.", ["Results"])


def test_label_resolvable_at_import_uses_the_same_rule():
    texts = ["intro", "We ablate.\n3.2 Ablation Details\nMore.", "Results are in Table 2.", "", None]
    assert label_is_resolvable("results", HEADERS, texts)
    assert label_is_resolvable("3.2 Ablation Details", HEADERS, texts)
    assert not label_is_resolvable("Related Work", HEADERS, texts)
    assert not label_is_resolvable("  ", HEADERS, texts)

    def never():
        raise AssertionError("texts read although the label names a header")
        yield  # pragma: no cover

    assert label_is_resolvable("1 Introduction", HEADERS, never())


def test_header_label_not_credited_by_another_sections_text(tmp_path, gold):
    # K's Introduction text contains "experiments"; mt_0002's K label "experiments" names K's Experiments header.
    def script(s):
        s.read("H", 1)  # Method: its text holds the subsection label "4.1 Window Size"
        s.read("K", 0)  # Introduction: mentions "experiments", but is not the labelled section
        s.submit("C")

    _, r = one_item(tmp_path, gold, "mt_0002", script)
    assert r["paper_recall"] == 1
    assert r["gold_direct_hit"] == [pid("H")] and r["section_recall"] == 0
    _, r = one_item(tmp_path / "b", gold, "st_0004", lambda s: (s.read("K", 0), s.submit("C")))
    assert r["paper_recall"] == 1 and r["section_recall"] == 0


def test_conversion(main):
    assert main["headline"]["conversion_st"] == 1.0 and main["headline"]["conversion_mt"] == 1.0
    assert main["metrics"]["overall"]["conversion_n"] == 2


# -- calls per turn and resources ------------------------------------------------------


def test_calls_per_turn_from_runner(main):
    cpt = main["calls_per_turn"]
    assert cpt["source"] == "runner"
    assert (cpt["tool_calls"], cpt["assistant_turns"], cpt["turns_with_calls"], cpt["turns_without_calls"]) == (
        24,
        23,
        22,
        1,
    )
    assert cpt["value"] == pytest.approx(24 / 23)  # SPEC 7: per assistant turn, text-only turns included
    assert main["metrics"]["by_cell"]["MT-d2"]["calls_per_turn"] == pytest.approx(5 / 3)
    assert main["metrics"]["by_cell"]["ST-d1"]["calls_per_turn"] == pytest.approx(
        (4 + 2 + 4) / (4 + 2 + 5)
    )  # st_0001, st_0003, st_0005


def _turn(s, n, calls, error=None):
    return {
        "kind": "turn",
        "run": "errs",
        "item_id": s.item_id,
        "session_id": s.session_id,
        "attempt": 1,
        "turn": n,
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "cached_tokens": 0,
        "cumulative_tokens": 15 * n,
        "tool_calls": calls,
        "latency_ms": 1.0,
        "retries": 0,
        "error": error,
        "time": 1.0,
    }


def test_runner_turns_with_errors(tmp_path, gold):
    """Malformed calls and token-cap discards are real assistant turns; an empty failed response is not."""
    run_dir, log, rw = new_run_dir(tmp_path, "errs")
    call = {"id": "c", "name": "read_section", "arguments": "{not json"}
    s = SessionWriter(log, "st_0001", run="errs")
    s.read("B", 2)
    s.submit("B")
    rw.write(
        _turn(
            s,
            1,
            [call, {"id": "d", "name": "read_section", "arguments": {}}],
            error="malformed arguments for read_section (c): not a JSON object",
        )
    )
    rw.write(_turn(s, 2, [{"id": "e", "name": "submit_answer", "arguments": {}}]))
    rw.item_end(s, "answer", "B", 2)
    t = SessionWriter(log, "st_0003", run="errs")
    t.think()
    rw.write(_turn(t, 1, [{"id": "f", "name": "think", "arguments": {}}]))
    rw.write(_turn(t, 2, [], error="empty response: no text and no tool calls"))  # a failed response: not a turn
    rw.write(_turn(t, 3, []))  # a text-only turn (nudged)
    rw.write(_turn(t, 4, [call, call, call], error="token cap passed (70 > 50); 3 tool call(s) discarded"))
    rw.item_end(t, "token_limit", None, 4)
    u = SessionWriter(log, "st_0005", run="errs")
    u.think()
    rw.write(_turn(u, 1, [{"id": "g", "name": "think", "arguments": {}}]))
    rw.write(_turn(u, 2, [], error="token cap passed (70 > 50); 0 tool call(s) discarded"))  # text at the cap
    rw.item_end(u, "token_limit", None, 2)
    log.close()
    summary = score_run(load_run(run_dir), gold)
    r = rows(summary)
    assert (r["st_0001"]["tool_calls"], r["st_0001"]["assistant_turns"], r["st_0001"]["turns_without_calls"]) == (
        3,
        2,
        0,
    )
    assert (r["st_0003"]["tool_calls"], r["st_0003"]["assistant_turns"], r["st_0003"]["turns_without_calls"]) == (
        4,
        3,
        1,
    )
    assert (r["st_0005"]["tool_calls"], r["st_0005"]["assistant_turns"], r["st_0005"]["turns_without_calls"]) == (
        1,
        2,
        1,
    )
    cpt = summary["calls_per_turn"]
    assert (cpt["tool_calls"], cpt["assistant_turns"], cpt["turns_without_calls"]) == (8, 7, 2)
    assert cpt["value"] == pytest.approx(8 / 7)


def test_calls_per_turn_from_checkpoint_turns(tmp_path, gold):
    def script(s):
        s.search(hits=[("B", 1)])
        s.read("B", 2, same_turn=True)
        s.read("B", 0, same_turn=True)
        s.submit("B")

    summary, r = one_item(tmp_path, gold, "st_0001", script)
    assert summary["calls_per_turn"]["source"] == "checkpoint"
    assert summary["calls_per_turn"]["value"] == pytest.approx(4 / 2)
    assert r["turns"] == 2 and r["turns_source"] == "checkpoint._meta"
    assert r["tokens"] == 2000


def test_checkpoint_turn_gaps_are_turns_without_calls(tmp_path, gold):
    def script(s):
        s.search(hits=[("B", 1)])  # turn 1
        s.read("B", 2, turn=3)  # turn 2 was text only
        s.submit("B", turn=4)

    summary, r = one_item(tmp_path, gold, "st_0001", script)
    assert (r["tool_calls"], r["assistant_turns"], r["turns_without_calls"]) == (3, 4, 1)
    assert summary["calls_per_turn"]["value"] == pytest.approx(3 / 4)


def test_calls_per_turn_not_measured_without_turn_data(tmp_path, gold):
    run_dir, log, _ = new_run_dir(tmp_path, "bare")
    s = SessionWriter(log, "st_0001", run="bare", meta=False)
    s.read("B", 2)
    s.submit("B")
    log.close()
    summary = score_run(load_run(run_dir), gold)
    assert summary["calls_per_turn"]["value"] is None and not summary["calls_per_turn"]["measured"]
    assert summary["headline"]["calls_per_turn"] is None
    assert summary["headline"]["mean_tokens"] is None and summary["headline"]["mean_turns"] is None
    assert summary["metrics"]["overall"]["calls_per_turn"] is None
    assert any("calls per turn not measured" in w for w in summary["warnings"])


def test_resources_and_caps(main):
    res = main["resources"]
    assert res["budget"]["mean"] == pytest.approx(47 / 6)
    r = rows(main)
    assert [r[i]["budget"] for i in ("st_0001", "st_0002", "st_0003", "mt_0001", "mt_0002", "st_0005")] == [
        6,
        12,
        0,
        6,
        12,
        11,
    ]
    assert res["tokens"]["sources"] == ["runner.item_end"]
    assert res["turns"]["mean"] == pytest.approx((4 + 5 + 2 + 4 + 3 + 5) / 6)
    assert res["pct_turn_cap"] == pytest.approx(1 / 7)
    assert res["pct_token_cap"] == 0 and res["pct_budget"] == 0
    assert res["termination_counts"] == {"answer": 5, "max_turns": 1, "unobservable": 1}


def test_session_without_end_is_abandoned_unless_runner_says_otherwise(tmp_path, gold):
    _, r = one_item(tmp_path, gold, "st_0001", lambda s: s.think())
    assert r["termination"] == "abandoned"
    _, r = one_item(tmp_path / "b", gold, "st_0001", lambda s: s.think(), runner=True)
    assert r["termination"] == "max_turns"


def test_budget_termination_counts_toward_budget_cap(tmp_path, gold):
    def script(s):
        s.read("A", 0)
        s.read("C", 0, outcome="budget_rejected")
        s.read("C", 0, outcome="budget_rejected")
        s.end("budget")

    summary, r = one_item(tmp_path, gold, "st_0001", script)
    assert r["termination"] == "budget" and summary["resources"]["pct_budget"] == 1.0


def test_retries_use_last_ended_session(tmp_path, gold):
    run_dir, log, rw = new_run_dir(tmp_path, "retry")
    first = SessionWriter(log, "st_0001", run="retry")
    first.submit("B")  # ended and correct
    second = SessionWriter(log, "st_0001", run="retry")
    second.think()  # a later attempt that never ended: not the one that counts
    log.close()
    summary = score_run(load_run(run_dir), gold)
    r = rows(summary)["st_0001"]
    assert r["session_id"] == first.session_id and r["correct"] == 1 and r["n_sessions"] == 2
    assert summary["items"]["items_with_retries"] == 1


def test_answer_from_last_ok_submit_when_no_session_end(tmp_path, gold):
    def script(s):
        s.call("submit_answer", {"answer": "B", "reasoning": "r"})

    _, r = one_item(tmp_path, gold, "st_0001", script)
    assert r["answer"] == "B" and r["correct"] == 1


# -- audit -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "item_id,category",
    [
        ("st_0001", "correct"),
        ("mt_0002", "correct"),
        ("st_0002", "incorrect_inspected"),
        ("mt_0001", "incorrect_inspected"),
        ("st_0005", "incorrect_exposed"),
        ("st_0003", "incorrect_neither"),
        ("st_0004", "unobservable"),
    ],
)
def test_audit_categories(main, item_id, category):
    assert rows(main)[item_id]["audit"] == category


def test_audit_counts_partition_items(main):
    assert main["audit"]["counts"] == {
        "correct": 2,
        "incorrect_inspected": 2,
        "incorrect_exposed": 1,
        "incorrect_neither": 1,
        "unobservable": 1,
    }
    assert sum(main["audit"]["counts"].values()) == main["items"]["n"]


def test_exposure_ranks_and_bands(main):
    ex = main["exposure"]
    assert (ex["gold_targets"], ex["exposed"], ex["never_exposed"], ex["inspected_later"]) == (8, 7, 1, 5)
    bands = ex["by_rank_band"]
    assert (bands["1-5"]["exposed"], bands["1-5"]["inspected_later"]) == (5, 5)
    assert (bands["6-20"]["exposed"], bands["6-20"]["inspected_later"]) == (1, 0)  # K's read was refused
    assert bands["21-50"]["exposed"] == 0 and bands["21-50"]["share_inspected"] is None
    assert (bands["51+"]["exposed"], bands["51+"]["inspected_later"]) == (1, 0)
    assert ex["first_rank_median"] == 2
    st2 = rows(main)["st_0002"]["exposures"][0]
    assert (st2["rank"], st2["tool"], st2["inspected_later"]) == (1, "get_references", True)


# -- failure attribution, position bias, budget views ----------------------------------------


def test_failure_attribution(main):
    fa = main["failure_attribution"]
    assert fa["n_wrong"] == 5
    assert fa["counts"] == {"seed_only": 0, "wrong_paper": 2, "no_context": 0, "unknown": 1, "no_answer": 2}
    assert fa["rates"]["wrong_paper"] == pytest.approx(0.4)


def test_position_bias(main):
    pb = main["position_bias"]
    assert pb["predicted_distribution"] == {"A": 1, "B": 3, "C": 1, "D": 0, "none": 2}
    assert pb["correct_distribution"] == {"A": 3, "B": 1, "C": 2, "D": 1}
    assert pb["accuracy_by_correct_position"]["B"]["accuracy"] == 1.0
    assert pb["accuracy_by_correct_position"]["C"]["accuracy"] == 0.5


def test_budget_views(main):
    bv = main["budget_views"]
    assert bv["points_total"] == 47 and bv["points_per_correct"] == pytest.approx(23.5)
    assert bv["tokens_per_correct"] == pytest.approx((4 + 5 + 2 + 4 + 3 + 5) * 1000 / 2)
    assert bv["usd_per_correct"] == pytest.approx(0.03)
    bands = bv["accuracy_by_budget_band"]
    assert (bands["0-5"]["n"], bands["6-10"]["n"], bands["11-15"]["n"]) == (1, 2, 3)
    assert bands["6-10"]["accuracy"] == 0.5


def test_usd_not_measured_without_runner(tmp_path, gold):
    summary, _ = one_item(tmp_path, gold, "st_0001", lambda s: s.submit("B"))
    assert summary["budget_views"]["usd_per_correct"] is None


# -- provenance -------------------------------------------------------------------


def test_provenance(main, gold):
    assert main["schema_version"] == SUMMARY_SCHEMA_VERSION == 2 and main["scorer_version"]
    assert main["corpus"]["corpus_id"] == gold.meta["corpus_id"]
    assert main["corpus"]["meta"]["provenance"]["inputs"]
    assert main["sessions"]["caps"][0]["value"] == {"budget": 30, "max_turns": 20, "max_tokens": 200000}
    assert main["sessions"]["search"][0]["value"]["engine"] == "bm25s"
    assert main["run"]["agent"] == "scripted" and main["run"]["model"] == "fixture-model"
    assert main["run"]["settings"]["workers"] == 1


def test_manifest_overrides_runner(tmp_path, gold):
    # What runner/run.py's manifest() writes to run.json (plus replicate_of).
    manifest = {
        "run": "main",
        "agent": "raw",
        "model": "m-1",
        "caps": {"budget": 30, "max_turns": 20, "max_tokens": 1000},
        "ablations": {"closed_book": False, "disabled_tools": [], "read_first": False},
        "disabled_tools": [],
        "base_url_host": "api.example",
        "api_key_env": "KEY",
        "retry": {"max_retries": 6},
        "workers": 4,
        "server": "in-process",
        "items_file": "items.jsonl",
        "corpus": None,
        "versions": {"agenthop": "9.9"},
        "replicate_of": "base",
    }
    run_dir = write_main_run(tmp_path, manifest=manifest)
    s = score_run(load_run(run_dir), gold)
    assert (s["run"]["agent"], s["run"]["model"], s["run"]["replicate_of"]) == ("raw", "m-1", "base")
    assert (s["run"]["name"], s["run"]["label"]) == ("main", "main")
    assert s["run"]["settings"]["workers"] == 4 and s["run"]["settings"]["caps"]["max_tokens"] == 1000
    assert s["run"]["settings"]["base_url_host"] == "api.example" and "api_key_env" not in s["run"]["settings"]
    assert s["run"]["versions"] == {"agenthop": "9.9"}


def test_unknown_items_are_reported_not_scored(tmp_path, gold):
    run_dir, log, _ = new_run_dir(tmp_path, "unknown")
    SessionWriter(log, "st_9999", run="unknown").submit("A")
    SessionWriter(log, "st_0001", run="unknown").submit("B")
    log.close()
    s = score_run(load_run(run_dir), gold)
    assert s["items"]["n"] == 1 and s["items"]["unknown_to_corpus"] == ["st_9999"]
    assert any("st_9999" in w for w in s["warnings"])


def test_runner_only_item_is_unobservable(tmp_path, gold):
    run_dir, log, rw = new_run_dir(tmp_path, "ro")
    s = SessionWriter(log, "st_0001", run="ro")
    s.submit("B")
    log.close()
    rw.write(
        {
            "kind": "attempt_error",
            "run": "ro",
            "item_id": "st_0003",
            "session_id": "gone",
            "attempt": 1,
            "error": "boom",
            "time": 1.0,
        }
    )
    summary = score_run(load_run(run_dir), gold)
    assert rows(summary)["st_0003"]["audit"] == "unobservable"


def test_items_file_formats(tmp_path):
    from agenthop.server.item_files import read_items

    write_items_file(tmp_path / "a.jsonl", ["st_0001", "mt_0001"])
    assert [r.id for r in read_items(tmp_path / "a.jsonl")] == ["st_0001", "mt_0001"]
    (tmp_path / "b.txt").write_text("st_0001\n\nmt_0001\nst_0001\n")
    assert [r.id for r in read_items(tmp_path / "b.txt")] == ["st_0001", "mt_0001"]


def test_log_file_with_several_labels(tmp_path, gold):
    from agenthop.scorer.logs import RunSpecError
    from agenthop.scorer.runs import load_runs

    path = tmp_path / "shared.sqlite"
    log = CheckpointLog(path)
    SessionWriter(log, "st_0001", run="a").submit("B")
    SessionWriter(log, "st_0001", run="b").submit("A")
    log.close()
    runs = load_runs(path)
    assert [r.label for r in runs] == ["a", "b"]
    assert score_run(load_runs(f"{path}::b")[0], gold)["headline"]["accuracy"] == 0.0
    with pytest.raises(RunSpecError, match="::LABEL"):
        load_run(path)
    with pytest.raises(RunSpecError, match="no run labelled"):
        load_runs(f"{path}::zzz")


def test_runner_turns_are_joined_by_session(tmp_path, gold):
    run_dir, log, rw = new_run_dir(tmp_path, "join")
    s = SessionWriter(log, "st_0001", run="join")
    s.search(hits=[("B", 1)])
    s.read("B", 2, same_turn=True)
    s.submit("B")
    log.close()
    RunnerWriter(run_dir / "runner.jsonl", run="join").turns(s)
    summary = score_run(load_run(run_dir), gold)
    assert summary["calls_per_turn"]["value"] == pytest.approx(3 / 2)
    assert rows(summary)["st_0001"]["turns_source"] == "runner.turn"


def test_corpus_mismatch_warning(tmp_path, gold):
    run_dir, log, _ = new_run_dir(tmp_path, "mismatch")
    SessionWriter(log, "st_0001", run="mismatch", corpus={"corpus_id": "f" * 64, "schema_version": 1}).submit("B")
    log.close()
    s = score_run(load_run(run_dir), gold)
    assert any("gold may not match" in w for w in s["warnings"])
    assert s["sessions"]["corpus"] == [{"value": {"corpus_id": "f" * 64, "schema_version": 1}, "sessions": 1}]


def test_text_only_turns_are_counted_and_reported(main):
    assert main["calls_per_turn"]["turns_without_calls"] == 1  # st_0005's last turn
    r = rows(main)["st_0005"]
    assert (r["tool_calls"], r["assistant_turns"], r["turns_with_calls"], r["turns_without_calls"]) == (4, 5, 4, 1)


def test_torn_runner_line_in_the_middle_is_skipped_and_warned(tmp_path, gold):
    """A crash tears a line; the resumed runner starts a fresh one (runner/records.py) and the scorer reads on."""
    run_dir = write_main_run(tmp_path)
    path = run_dir / "runner.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    torn = lines[3][: len(lines[3]) // 2] + "\n"
    path.write_text("".join(lines[:3] + [torn] + lines[3:]), encoding="utf-8")
    run = load_run(run_dir)
    assert run.runner_lines_skipped == 1 and len(run.runner_records) == len(lines)
    summary = score_run(run, gold, list(ALL_ITEMS))
    assert summary["run"]["runner_lines_skipped"] == 1
    assert any("runner.jsonl" in w and "skipped" in w for w in summary["warnings"])
    assert summary["calls_per_turn"]["tool_calls"] == 24
