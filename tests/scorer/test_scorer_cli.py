"""agenthop-scorer end to end: outputs, several runs, replicates, compare, loading logs."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from support.scorer_fixtures import (
    ALL_ITEMS,
    SessionWriter,
    build_corpus,
    new_run_dir,
    write_items_file,
    write_main_run,
)

from agenthop.scorer.cli import main
from agenthop.scorer.logs import to_dataframe
from agenthop.scorer.results import SCORER_VERSION, SUMMARY_SCHEMA_VERSION
from agenthop.scorer.runs import load_run
from agenthop.server.log.checkpoint import CheckpointLog

CORRECT = {
    "st_0001": "B",
    "st_0002": "A",
    "st_0003": "D",
    "st_0004": "C",
    "st_0005": "A",
    "mt_0001": "A",
    "mt_0002": "C",
}
GOLD_READS = {
    "st_0001": ["B"],
    "st_0002": ["H"],
    "st_0003": ["B"],
    "st_0005": ["B"],
    "mt_0001": ["B", "K"],
    "mt_0002": ["H", "K"],
}


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    corpus = build_corpus(root)
    items = write_items_file(root / "items.jsonl")
    main_dir = write_main_run(root / "runs")
    return {"root": root, "corpus": corpus, "items": items, "main": main_dir}


def write_perfect_run(root, name="perfect", manifest=None):
    """Reads every gold paper (section 2) and answers correctly; st_0004 is left out."""
    run_dir, log, _ = new_run_dir(root, name, manifest)
    for item_id, papers in GOLD_READS.items():
        s = SessionWriter(log, item_id, run=name)
        for p in papers:
            s.read(p, 2)
        s.submit(CORRECT[item_id])
    log.close()
    return run_dir


def invoke(*args):
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    return result


def test_score_single_run_writes_versioned_summary_and_reports(env, tmp_path):
    out = tmp_path / "report"
    r = invoke(env["main"], "--corpus", env["corpus"], "--out", out, "--items", env["items"])
    assert r.exit_code == 0, r.output
    assert "four axes" in r.output and "28.6%" in r.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["schema_version"] == SUMMARY_SCHEMA_VERSION and summary["scorer_version"] == SCORER_VERSION
    assert summary["headline"]["accuracy"] == pytest.approx(2 / 7)
    md = (out / "report.md").read_text()
    assert "| overall | 7 | 28.6% [8.2, 64.1]" in md
    html = (out / "report.html").read_text()
    assert html.count("<svg") >= 5 and "<script" not in html and "http://" not in html.replace("http://www.w3.org", "")


@pytest.mark.slow
def test_explicit_score_command_is_the_default(env, tmp_path):
    r1 = invoke("score", env["main"], "--corpus", env["corpus"], "--out", tmp_path / "a")
    r2 = invoke(env["main"], "--corpus", env["corpus"], "--out", tmp_path / "b")
    assert r1.exit_code == 0 and r2.exit_code == 0
    a = json.loads((tmp_path / "a" / "summary.json").read_text())
    b = json.loads((tmp_path / "b" / "summary.json").read_text())
    a.pop("generated_at"), b.pop("generated_at")
    assert a == b


def test_not_measured_is_never_printed_as_a_number(env, tmp_path):
    run_dir, log, _ = new_run_dir(tmp_path, "bare")
    s = SessionWriter(log, "st_0001", run="bare", meta=False)
    s.read("B", 2)
    s.submit("B")
    log.close()
    out = tmp_path / "out"
    r = invoke(run_dir, "--corpus", env["corpus"], "--out", out)
    assert r.exit_code == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["headline"]["calls_per_turn"] is None and summary["headline"]["mean_turns"] is None
    md = (out / "report.md").read_text()
    assert "n/a (no turn data)" in md and "n/a (no turn data)" in (out / "report.html").read_text()
    assert "n/a (no turn data)" in r.output


@pytest.mark.slow
def test_several_runs_comparison_and_replicates(env, tmp_path):
    perfect = write_perfect_run(tmp_path)
    out = tmp_path / "out"
    r = invoke(env["main"], perfect, "--corpus", env["corpus"], "--out", out, "--items", env["items"], "--replicates")
    assert r.exit_code == 0, r.output
    assert (out / "main" / "summary.json").exists() and (out / "perfect" / "report.html").exists()
    comp = json.loads((out / "comparison.json").read_text())
    assert [row["run"] for row in comp["runs"]] == ["main", "perfect"]
    assert comp["runs"][1]["accuracy"] == pytest.approx(6 / 7)
    rel = comp["reliability"]
    assert rel["n_items"] == 7 and rel["n_runs"] == 2
    # Two runs, totals 2 and 6 differ: alpha is defined. Item variances: 4 items differ (0.5 each).
    assert rel["cronbach_alpha"] == pytest.approx(7 / 6 * (1 - 4 * 0.5 / 8))
    pair = comp["pairwise"][0]
    assert (pair["gains"], pair["losses"]) == (4, 0) and pair["mcnemar_exact_p"] == pytest.approx(0.125)
    rep = comp["replicates"]["all runs"]
    assert rep["runs"] == ["main", "perfect"]
    assert rep["metrics"]["accuracy"]["mean"] == pytest.approx(4 / 7)
    assert rep["metrics"]["calls_per_turn"]["n"] == 2
    assert "<svg" in (out / "comparison.html").read_text()
    assert "Cronbach" in (out / "comparison.md").read_text()


@pytest.mark.slow
def test_replicate_of_in_manifest(env, tmp_path):
    rep1 = write_main_run(tmp_path, name="rep1", manifest={"replicate_of": "main"})
    other = write_perfect_run(tmp_path)
    out = tmp_path / "out"
    r = invoke(env["main"], rep1, other, "--corpus", env["corpus"], "--out", out)
    assert r.exit_code == 0, r.output
    comp = json.loads((out / "comparison.json").read_text())
    assert list(comp["replicates"]) == ["main"]
    g = comp["replicates"]["main"]
    assert g["runs"] == ["main", "rep1"]
    assert g["metrics"]["accuracy"]["std"] == 0.0
    assert comp["reliability"]["n_runs"] == 3
    assert comp["reliability"]["item_total_correlation"]["n_defined"] >= 1


def test_compare_command(env, tmp_path):
    perfect = write_perfect_run(tmp_path)
    out = tmp_path / "cmp"
    args = (
        "compare",
        env["main"],
        perfect,
        "--corpus",
        env["corpus"],
        "--items",
        env["items"],
        "--seed",
        3,
        "--resamples",
        500,
    )
    r = invoke(*args, "--out", out)
    assert r.exit_code == 0, r.output
    assert "McNemar" in r.output
    pair = json.loads((out / "comparison.json").read_text())
    assert (pair["gains"], pair["losses"], pair["n_common"]) == (4, 0, 7)
    assert pair["mcnemar_exact_p"] == pytest.approx(0.125)
    assert pair["difference"] == pytest.approx(4 / 7)
    lo, hi = pair["bootstrap_items"]["ci95"]
    assert 0 < lo <= 4 / 7 <= hi <= 1
    assert pair["bootstrap_clusters"]["n_clusters"] == 5  # gold sets: B (x3), H, {B,K}, {H,K}, K
    t = pair["audit_transitions"]["table"]
    assert t["incorrect_inspected"]["correct"] == 2 and t["unobservable"]["unobservable"] == 1
    assert t["incorrect_exposed"]["correct"] == 1 and t["incorrect_neither"]["correct"] == 1
    assert "Audit outcome transitions" in (out / "comparison.md").read_text()
    invoke(*args, "--out", tmp_path / "cmp2")
    assert json.loads((tmp_path / "cmp2" / "comparison.json").read_text()) == pair


@pytest.mark.slow
def test_checkpoint_file_with_labels(env, tmp_path):
    path = tmp_path / "log.sqlite"
    log = CheckpointLog(path)
    SessionWriter(log, "st_0001", run="x").submit("B")
    SessionWriter(log, "st_0001", run="y").submit("C")
    log.close()
    out = tmp_path / "out"
    r = invoke(path, "--corpus", env["corpus"], "--out", out)
    assert r.exit_code == 0, r.output
    comp = json.loads((out / "comparison.json").read_text())
    assert [(row["run"], row["accuracy"]) for row in comp["runs"]] == [("log::x", 1.0), ("log::y", 0.0)]
    r = invoke(f"{path}::y", "--corpus", env["corpus"], "--out", tmp_path / "one")
    assert json.loads((tmp_path / "one" / "summary.json").read_text())["headline"]["accuracy"] == 0.0


def test_clear_errors(env, tmp_path):
    r = invoke(env["main"], "--corpus", tmp_path / "missing.sqlite", "--out", tmp_path / "o")
    assert r.exit_code != 0 and "corpus file not found" in r.output
    r = invoke(tmp_path / "nope", "--corpus", env["corpus"], "--out", tmp_path / "o")
    assert r.exit_code != 0 and "run not found" in r.output
    (tmp_path / "empty").mkdir()
    r = invoke(tmp_path / "empty", "--corpus", env["corpus"], "--out", tmp_path / "o")
    assert r.exit_code != 0 and "server-log.sqlite" in r.output


def test_to_dataframe(env):
    run = load_run(env["main"])
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pip install pandas"):
            to_dataframe(run)
    else:
        df = to_dataframe(run)
        assert {"kind", "session_id", "tool", "outcome"} <= set(df.columns)
        assert (df["kind"] == "call").sum() == sum(len(s.calls) for s in run.sessions.values())


def test_load_run_dataclasses(env):
    run = load_run(env["main"])
    assert run.name == "main" and run.label == "main"
    assert len(run.sessions) == 6 and run.run_start["model"] == "fixture-model"
    sess = run.item_sessions()["st_0001"][0]
    assert [c.tool for c in sess.calls] == ["search_papers", "read_section", "think", "submit_answer"]
    assert sess.answer == "B" and sess.termination == "answer"
    assert set(ALL_ITEMS) - set(run.item_sessions()) == {"st_0004"}


def _server_run(root, name="srv", manifest=None):
    """A run made against a running server: runner.jsonl and run.json here, the checkpoint log elsewhere."""
    run_dir = write_main_run(root / "runs", name=name, manifest=manifest)
    shared = root / "server.sqlite"
    (run_dir / "server-log.sqlite").rename(shared)
    log = CheckpointLog(shared)
    SessionWriter(log, "st_0001", run="someone-else").submit("A")
    log.close()
    return run_dir, shared


def test_server_log_option(env, tmp_path):
    run_dir, shared = _server_run(tmp_path, manifest={"run": "srv", "agent": "raw", "model": "m"})
    r = invoke(run_dir, "--corpus", env["corpus"], "--out", tmp_path / "o")
    assert r.exit_code != 0 and "--server-log" in r.output and "runner.jsonl" in r.output
    out = tmp_path / "ok"
    r = invoke(run_dir, "--corpus", env["corpus"], "--out", out, "--items", env["items"], "--server-log", shared)
    assert r.exit_code == 0, r.output
    s = json.loads((out / "summary.json").read_text())
    assert s["run"]["label"] == "srv" and s["run"]["log"] == str(shared)
    assert s["headline"]["accuracy"] == pytest.approx(2 / 7)  # the other label's session is not this run's
    assert s["calls_per_turn"]["source"] == "runner" and s["calls_per_turn"]["tool_calls"] == 24
    assert s["resources"]["tokens"]["sources"] == ["runner.item_end"]
    # compare takes the option too
    perfect = write_perfect_run(tmp_path)
    r = invoke(
        "compare",
        run_dir,
        perfect,
        "--corpus",
        env["corpus"],
        "--items",
        env["items"],
        "--resamples",
        100,
        "--server-log",
        shared,
    )
    assert r.exit_code == 0, r.output
    assert "McNemar" in r.output


def test_server_log_label_from_directory_name_and_missing_label(env, tmp_path):
    run_dir, shared = _server_run(tmp_path, name="srv2")  # no run.json: the runner's run_start names the label
    r = invoke(run_dir, "--corpus", env["corpus"], "--out", tmp_path / "a", "--server-log", shared)
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "a" / "summary.json").read_text())["run"]["label"] == "srv2"
    other = tmp_path / "runs" / "nolabel"
    other.mkdir()
    (other / "runner.jsonl").write_text("")
    r = invoke(other, "--corpus", env["corpus"], "--out", tmp_path / "b", "--server-log", shared)
    assert r.exit_code != 0 and "no run labelled 'nolabel'" in r.output and "srv2" in r.output
