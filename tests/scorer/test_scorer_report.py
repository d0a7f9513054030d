"""What the reports show: plots only of what was measured, readable settings, terminal tables that fit, -h."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from rich.console import Console
from support.scorer_fixtures import SessionWriter, build_corpus, new_run_dir, write_baseline_run, write_main_run

from agenthop.scorer import SCORER_VERSION, compare, score
from agenthop.scorer.cli import main
from agenthop.scorer.document import readable
from agenthop.scorer.plots import cell_accuracy_bars
from agenthop.scorer.stats import wilson
from agenthop.scorer.terminal import print_comparison, print_pair, print_run


def test_cell_bars_at_100_percent_do_not_crash():
    """Wilson's upper end for 10/10 is 0.9999999999999999: the error bar must not go negative."""
    assert wilson(10, 10)[1] < 1.0
    cell = {"n": 10, "accuracy": 1.0, "accuracy_ci95": list(wilson(10, 10))}
    svg = cell_accuracy_bars({"ST-d1": cell, "ST-d2": {"n": 0}})
    assert 'data-plot="cell-accuracy"' in svg


# -- what was not measured is a sentence, settings are readable ------------------------------------------------------

REPR = re.compile(r"\{'|'\}|\['|'\]|\bTrue\b|\bFalse\b|\bNone\b")


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    root = tmp_path_factory.mktemp("report")
    corpus = build_corpus(root)
    return {
        "root": root,
        "corpus": corpus,
        "main": write_main_run(root / "runs"),
        "baseline": write_baseline_run(root / "runs"),
    }


def test_a_run_without_a_model_has_no_token_figures(env, tmp_path):
    result = score([env["baseline"]], env["corpus"], out=tmp_path)
    s = json.loads((tmp_path / "summary.json").read_text())
    assert s["scorer_version"] == SCORER_VERSION
    assert s["headline"]["mean_tokens"] is None and s["resources"]["tokens"]["measured"] is False
    assert s["resources"]["tokens"]["reason"].startswith("every item reports 0 tokens")
    assert all(r["tokens"] is None for r in s["item_results"]) and s["budget_views"]["tokens_per_correct"] is None
    assert any(w.startswith("tokens not measured: every item reports 0 tokens") for w in s["warnings"])
    assert result.runs[0].headline.mean_turns == 4  # what was measured still is: one turn per call
    md, html = (tmp_path / "report.md").read_text(), (tmp_path / "report.html").read_text()
    for text in (md, html):
        assert "Tokens: not measured, so no histogram: every item reports 0 tokens" in text
    assert (
        'data-plot="tokens-hist"' not in html and 'data-plot="turns-hist"' in html and 'data-plot="budget-hist"' in html
    )
    assert "| tokens | n/a (no token data) |" in md and "| tokens | 0 |" not in md


def test_settings_read_as_definitions_not_python_reprs(env, tmp_path):
    score([env["baseline"]], env["corpus"], out=tmp_path)
    md, html = (tmp_path / "report.md").read_text(), (tmp_path / "report.html").read_text()
    assert not REPR.search(md), REPR.search(md)
    assert not REPR.search(html), REPR.search(html)
    assert "- **caps**: budget: 30; max turns: 20; max tokens: 200000" in md
    assert "- **ablations**: closed book: no; disabled tools: none; read first: no" in md
    assert "- **retry**: max retries: 6; backoff: 2; timeout: 300; item attempts: 3" in md
    assert "<dt>caps</dt><dd>budget: 30; max turns: 20; max tokens: 200000</dd>" in html
    assert "<dt>caps in the sessions</dt><dd>budget: 30; max tokens: 200000; max turns: 20 (3 sessions)</dd>" in html


def test_readable_values():
    assert (
        readable({"a_b": 1, "c": {"d": True, "e": None}, "f": [], "g": ["x", 2.5]})
        == "a b: 1; c: (d: yes; e: none); f: none; g: x, 2.5"
    )
    assert readable({}) == "none" and readable(False) == "no" and readable(300.0) == "300"


def test_no_plot_of_nothing(env, tmp_path):
    """Items that never made two calls in a row draw no transition heatmap; the report says why instead."""
    run_dir, log, _ = new_run_dir(tmp_path, "one-call")
    SessionWriter(log, "st_0001", run="one-call").submit("B")
    log.close()
    score([run_dir], env["corpus"], out=tmp_path / "out")
    html = (tmp_path / "out/report.html").read_text()
    assert 'data-plot="transition-heatmap"' not in html
    assert "Tool transitions: no item made two tool calls in a row, so no heatmap." in html
    assert 'data-plot="cell-accuracy"' in html


# -- the terminal at 120 columns ----------------------------------------------------------------------------------------


def test_terminal_tables_read_at_120_columns(env):
    runs = [env["main"], env["baseline"]]
    result = score(runs, env["corpus"])
    comp = result.comparison
    for row in comp["runs"]:  # long names, as replicate labels tend to be
        row["run"] = "gpt-4o-mini-closed-book-replicate-" + row["run"]
    pair = compare(env["main"], env["baseline"], env["corpus"], resamples=50).pair
    console = Console(width=120, record=True)
    print_comparison(comp, console)
    for r in result.runs:
        print_run(r.summary, console)
    print_pair(pair, console)
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 120
    assert "…" not in text
    for header in ("accuracy", "paper recall", "ST / MT", "section", "conversion", "calls/", "tokens", "budget"):
        assert header in text
    assert text.count("gpt-4o-mini") == 2  # long names wrap, never cut


# -- -h everywhere ----------------------------------------------------------------------------------------------------


def _commands(group, path=()):
    yield path
    for name, cmd in getattr(group, "commands", {}).items():
        yield from _commands(cmd, (*path, name))


def test_dash_h_on_every_scorer_command():
    paths = list(_commands(main))
    assert ("score",) in paths and ("compare",) in paths
    for path in paths:
        r = CliRunner().invoke(main, [*path, "-h"])
        assert r.exit_code == 0, (path, r.output)
        assert r.output.startswith("Usage: ") and "-h, --help" in r.output, path
    r = CliRunner().invoke(main, ["runs/x", "-h"])  # routed to the default command, score
    assert r.exit_code == 0 and "Score RUN(s)" in r.output
