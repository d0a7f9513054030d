"""People beside models in the scorer: a study's participants and a model run on the same items, side by side on the
four axes, the audit and time, per participant and pooled, with paired tests; and the panel's "people" tier."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from support.study_helpers import baseline_run, run_study_over_http, write_study

from agenthop.scorer.cli import main as scorer_main
from agenthop.scorer.errors import ScorerError
from agenthop.scorer.panel_scoring import panel
from agenthop.scorer.study import PEOPLE, study_report
from agenthop.server.log.checkpoint import read_records


@pytest.fixture(scope="module")
def study_logs(demo, tmp_path_factory):
    corpus, split = demo
    root = tmp_path_factory.mktemp("study")
    log = root / "study-log.sqlite"
    played = run_study_over_http(corpus, log, write_study(root, split))
    items = sorted({i for items in played.values() for i in items})
    model = baseline_run(corpus, items, root / "baseline")
    return corpus, log, model, played


def test_people_and_a_model_are_reported_side_by_side_on_the_same_items(study_logs, tmp_path):
    corpus, log, model, played = study_logs
    result = study_report(log, [str(model)], corpus, out=tmp_path, resamples=200)
    rows = {r["name"]: r for r in result["rows"]}
    assert result["participants"] == ["p01", "p02", "p03"] and result["attempts"] == played
    assert [r["kind"] for r in result["rows"]] == ["person"] * 3 + ["people", "model"]
    pooled, baseline = rows[PEOPLE], result["rows"][-1]
    assert pooled["attempts"] == sum(rows[p]["attempts"] for p in played) == 6
    assert baseline["items"] == len(result["items"]) == pooled["items"]
    for row in result["rows"]:
        assert sum(row["audit"].values()) == row["attempts"]
        assert row["seconds_per_item_median"] is not None and row["seconds_per_call_median"] is not None
    # Accuracy pooled over attempts is the attempts' mean, whoever played them.
    assert pooled["accuracy"] == pytest.approx(sum(rows[p]["accuracy"] * rows[p]["attempts"] for p in played) / 6)
    pair = result["paired"][0]["pooled"]
    assert pair["pairs"] == 6
    discordant = pair["model_right_person_wrong"] - pair["person_right_model_wrong"]
    assert pair["difference_model_minus_people"] == pytest.approx(discordant / 6)
    assert pair["people_accuracy"] == pytest.approx(pooled["accuracy"])
    assert 0 <= pair["mcnemar_exact_p"] <= 1
    assert set(result["paired"][0]["per_participant"]) == set(played)
    html = (tmp_path / "study.html").read_text()
    assert "people (pooled)" in html and "McNemar" in html and all(p in html for p in played)
    assert json.loads((tmp_path / "study.json").read_text())["study"] == "pilot"


def test_time_per_item_comes_from_the_session_records(study_logs, tmp_path):
    corpus, log, model, played = study_logs
    result = study_report(log, [], corpus, resamples=10)
    records = list(read_records(log))
    spans = []
    for sid in {r["session_id"] for r in records if r["kind"] == "session_start"}:
        start = next(r["time"] for r in records if r["kind"] == "session_start" and r["session_id"] == sid)
        end = next(r["time"] for r in records if r["kind"] == "session_end" and r["session_id"] == sid)
        spans.append(end - start)
    pooled = next(r for r in result["rows"] if r["kind"] == "people")
    assert pooled["timed_items"] == len(spans) == 6
    assert pooled["seconds_per_item_mean"] == pytest.approx(sum(spans) / len(spans))


def test_the_cli_writes_the_report_and_a_log_without_a_study_is_refused(study_logs, tmp_path):
    corpus, log, model, _ = study_logs
    ok = CliRunner().invoke(
        scorer_main,
        [
            "study",
            str(log),
            "--model",
            str(model),
            "--corpus",
            str(corpus),
            "--out",
            str(tmp_path),
            "--resamples",
            "50",
        ],
    )
    other = tmp_path / "plain.sqlite"
    from agenthop.server.log.checkpoint import CheckpointLog

    CheckpointLog(other).close()
    refused = CliRunner().invoke(
        scorer_main, ["study", str(other), "--corpus", str(corpus), "--out", str(tmp_path / "x")]
    )
    assert ok.exit_code == 0, ok.output
    assert "3 participants and 1 model run(s)" in ok.output and (tmp_path / "study.md").exists()
    assert (
        refused.exit_code != 0 and "no attempt made in study mode" in refused.output and "--study-id" in refused.output
    )
    with pytest.raises(ScorerError, match="holds no attempt of study other"):
        study_report(log, [], corpus, study_id="other")


def test_the_panel_puts_people_in_a_people_tier(study_logs):
    corpus, log, model, played = study_logs
    result = panel([f"{log}::human-p01", str(model)], corpus, resamples=20)
    tiers = {r["run"]: r["tier"] for r in result["runs"]}
    assert tiers[next(n for n in tiers if "human-p01" in n)] == "people"
    assert tiers[next(n for n in tiers if "human" not in n)] != "people"


def test_participants_sharing_one_run_label_are_still_told_apart(demo, tmp_path):
    corpus, split = demo
    log = tmp_path / "shared.sqlite"
    played = run_study_over_http(corpus, log, write_study(tmp_path, split), run="pilot-sitting")
    result = study_report(log, [], corpus, resamples=10)
    rows = {r["name"]: r for r in result["rows"]}
    assert result["attempts"] == played
    assert [rows[p]["attempts"] for p in played] == [2, 2, 2] and rows[PEOPLE]["attempts"] == 6
