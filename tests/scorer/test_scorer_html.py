"""The HTML reports open in headless Chromium, offline, with no console errors, and show their plots."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from click.testing import CliRunner
from support.scorer_fixtures import build_corpus, write_baseline_run, write_items_file, write_main_run

from agenthop.scorer.cli import main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.browser

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
    "--window-size=1200,2000",
]


def chromium(tmp_path, url: str, *extra: str) -> subprocess.CompletedProcess:
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    return subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *extra, url], capture_output=True, text=True, timeout=120
    )


def console_errors(stderr: str) -> list[str]:
    return [
        line
        for line in stderr.splitlines()
        if "CONSOLE" in line or "Uncaught" in line or "ERR_FILE_NOT_FOUND" in line or "Failed to load resource" in line
    ]


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    root = tmp_path_factory.mktemp("html")
    corpus = build_corpus(root)
    run = write_main_run(root / "runs")
    rep = write_main_run(root / "runs", name="rep", manifest={"replicate_of": "main"})
    out = root / "report"
    r = CliRunner().invoke(
        main,
        [
            str(run),
            str(rep),
            "--corpus",
            str(corpus),
            "--out",
            str(out),
            "--items",
            str(write_items_file(root / "items.jsonl")),
        ],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.output
    baseline = write_baseline_run(root / "runs")
    r = CliRunner().invoke(
        main, [str(baseline), "--corpus", str(corpus), "--out", str(root / "baseline-report")], catch_exceptions=False
    )
    assert r.exit_code == 0, r.output
    return out


@pytest.mark.parametrize(
    "page,plots",
    [
        (
            "main/report.html",
            [
                "transition-heatmap",
                "cell-accuracy",
                "cell-accuracy-vs-recall",
                "budget-hist",
                "turns-hist",
                "tokens-hist",
            ],
        ),
        ("comparison.html", ["accuracy-vs-recall"]),
    ],
)
def test_report_renders_without_console_errors(reports, tmp_path, page, plots):
    url = (reports / page).resolve().as_uri()
    shot = tmp_path / "shot.png"
    r = chromium(tmp_path, url, "--dump-dom", f"--screenshot={shot}")
    assert r.returncode == 0, r.stderr[-2000:]
    assert not console_errors(r.stderr), console_errors(r.stderr)
    for name in plots:
        assert re.search(rf'<svg[^>]*data-plot="{name}"', r.stdout), name
    assert "<table>" in r.stdout
    assert shot.stat().st_size > 10_000


def test_baseline_report_draws_only_what_was_measured_and_no_reprs(reports, tmp_path):
    """The offline baseline records 0 tokens: no token histogram, a sentence instead; settings as a definition list."""
    url = (reports.parent / "baseline-report" / "report.html").resolve().as_uri()
    r = chromium(tmp_path, url, "--dump-dom")
    assert r.returncode == 0, r.stderr[-2000:]
    assert not console_errors(r.stderr), console_errors(r.stderr)
    dom = r.stdout
    assert 'data-plot="tokens-hist"' not in dom and re.search(r'<svg[^>]*data-plot="budget-hist"', dom)
    assert "Tokens: not measured, so no histogram: every item reports 0 tokens" in dom
    assert "<dt>caps</dt><dd>budget: 30; max turns: 20; max tokens: 200000</dd>" in dom
    text = re.sub(r"<svg.*?</svg>|<style>.*?</style>|<[^>]+>", " ", dom, flags=re.S)  # what a reader sees
    repr_like = re.search(r"\{'|'\}|\['|'\]|\bTrue\b|\bFalse\b|\bNone\b", text)
    assert repr_like is None, text[max(0, repr_like.start() - 80) : repr_like.end() + 80]


def test_console_error_detection_works(tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text('<html><body><script>console.error("boom"); missing();</script></body></html>')
    r = chromium(tmp_path, bad.as_uri(), "--dump-dom")
    assert len(console_errors(r.stderr)) == 2
