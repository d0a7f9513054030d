"""A newcomer's first errors: each one stops at once and says what was wrong and what to do.

The raw agent without a key, a model endpoint that refuses the key, a file that is not a log given to the
scorer, the HTTP server's front page and item list, its start-up banner, and a quiet package build.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from click.testing import CliRunner
from support.fake_openai import FakeOpenAI, HTTPError
from support.paths import REPO

import agenthop
from agenthop.runner.cli import main as runner_main
from agenthop.runner.records import read_records
from agenthop.scorer.cli import main as scorer_main
from agenthop.server.transport.http import ServerThread


def _env_without_key() -> dict:
    return {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}


def _items(tmp_path: Path, split: Path, n: int) -> Path:
    ids = [json.loads(line)["id"] for line in split.read_text().splitlines() if line.strip()][:n]
    path = tmp_path / "items.txt"
    path.write_text("\n".join(ids) + "\n")
    return path


def test_the_raw_agent_without_a_key_or_base_url_refuses_to_start_and_names_both(demo, tmp_path):
    corpus, split = demo
    out = tmp_path / "run"
    # The timeout only keeps a regression from hanging the suite (it used to retry for minutes); the assertions
    # are that it exits non-zero, says why, and started nothing (no run directory).
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agenthop.runner.cli",
            "--items",
            str(split),
            "--agent",
            "raw",
            "--model",
            "gpt-4.1-mini",
            "--corpus",
            str(corpus),
            "--out",
            str(out),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        env=_env_without_key(),
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert "the raw agent needs an API key: the environment variable OPENAI_API_KEY is not set" in done.stderr
    assert "--base-url URL" in done.stderr and "--api-key-env NAME" in done.stderr
    assert not out.exists()


def test_a_base_url_without_a_key_is_allowed(demo, tmp_path, monkeypatch):
    """A local OpenAI-compatible server needs no key: the check is only for OpenAI's own endpoint."""
    corpus, split = demo
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with FakeOpenAI(lambda body, fake: HTTPError(400)) as fake:
        r = CliRunner().invoke(
            runner_main,
            [
                "--items",
                str(_items(tmp_path, split, 1)),
                "--agent",
                "raw",
                "--model",
                "m",
                "--base-url",
                fake.base_url,
                "--corpus",
                str(corpus),
                "--out",
                str(tmp_path / "run"),
                "--item-attempts",
                "1",
                "--no-progress",
            ],
        )
        requests = len(fake.requests)
    assert r.exit_code == 0, r.output
    assert requests == 1  # it ran: the model was asked (and its 400 ended the item as an error)


@pytest.mark.parametrize("status", [401, 403])
def test_an_endpoint_refusing_the_key_stops_the_run_at_once_and_says_why(demo, tmp_path, monkeypatch, status):
    corpus, split = demo
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    out = tmp_path / "run"
    body = {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}
    with FakeOpenAI(lambda b, fake: HTTPError(status, body)) as fake:
        r = CliRunner().invoke(
            runner_main,
            [
                "--items",
                str(_items(tmp_path, split, 3)),
                "--agent",
                "raw",
                "--model",
                "m",
                "--base-url",
                fake.base_url,
                "--corpus",
                str(corpus),
                "--out",
                str(out),
                "--no-progress",
            ],
        )
        requests = len(fake.requests)
    assert r.exit_code == 1, r.output
    assert f"the model endpoint at {fake.base_url} refused the request (HTTP {status}" in r.output
    assert (
        "Incorrect API key provided" in r.output
        and "check the API key in OPENAI_API_KEY and the model name 'm'" in r.output
    )
    assert "running the same command again resumes the others" in r.output
    assert requests == 1  # no retry of the call, of the item, or another item
    records = list(read_records(out / "runner.jsonl"))
    assert [r["kind"] for r in records if r["kind"] in ("attempt_error", "item_end")] == ["attempt_error"]


def test_the_scorer_says_once_that_a_file_is_not_a_log(demo):
    corpus, _ = demo
    r = CliRunner().invoke(scorer_main, [str(REPO / "README.md"), "--corpus", str(corpus)])
    assert r.exit_code != 0
    assert r.output.count("is not a readable checkpoint log") == 1, r.output
    assert "README.md is not a readable checkpoint log (file is not a database)." in r.output


def test_the_root_page_names_the_endpoints_and_the_version_and_items_are_listed(fixture_corpus, tmp_path):
    with (
        ServerThread(str(fixture_corpus), str(tmp_path / "log.sqlite")) as server,
        httpx2.Client(base_url=server.base_url) as http,
    ):
        page = http.get("/", headers={"Accept": "text/html,application/xhtml+xml"})
        described = http.get("/")
        items = http.get("/items")
        unknown = http.post("/sessions", json={"item": "zz_9999"})
        css = http.get("/static/base.css")
        nothing = http.get("/static/secret.py")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    for path in ("/mcp", "/sessions", "/sessions/{id}/end", "/items", "/play", "/health", "Mcp-Session-Id"):
        assert path in page.text, path
    assert f"server {agenthop.__version__}" in page.text
    info = described.json()
    assert info["version"] == agenthop.__version__
    assert [e["path"] for e in info["endpoints"]] == [
        "/mcp",
        "/sessions",
        "/sessions/{id}",
        "/sessions/{id}/end",
        "/items",
        "/play",
        "/health",
    ]
    listed = items.json()
    assert listed["count"] == 3 and [i["item_id"] for i in listed["items"]] == ["st_0001", "st_0002", "mt_0001"]
    assert set(listed["items"][0]) == {
        "item_id",
        "question_type",
        "depth",
        "reasoning_type",
        "seed_paper_id",
        "seed_title",
        "question",
        "options",
    }  # never the answer or the gold papers
    assert (
        unknown.status_code == 404
        and unknown.json()["error"] == "unknown item 'zz_9999'; GET /items lists the items this server serves"
    )
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    assert nothing.status_code == 404 and "serves base.css, dom.js" in nothing.json()["error"]


@pytest.mark.slow
@pytest.mark.parametrize("level", ["WARNING", "INFO"])
def test_the_http_banner_names_play_and_the_endpoints_once_at_any_log_level(fixture_corpus, tmp_path, level):
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agenthop.server",
            "serve",
            "--transport",
            "http",
            "--port",
            "0",
            "--corpus",
            str(fixture_corpus),
            "--log",
            str(tmp_path / "log.sqlite"),
            "--log-level",
            level,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = []
        for line in proc.stderr:  # until the banner (or the end of the output, if the server died)
            lines.append(line)
            if "serving http://" in line:
                break
    finally:
        proc.terminate()
        rest = proc.communicate(timeout=60)[1]
    banner = [line for line in lines + rest.splitlines(True) if "serving http://" in line]
    assert len(banner) == 1, lines
    assert "/play" in banner[0] and "/mcp" in banner[0] and "/items" in banner[0] and "/health" in banner[0]
    if level == "INFO":
        assert " INFO agenthop.server: serving http://127.0.0.1:" in banner[0]
    else:
        assert banner[0].startswith("agenthop-server: serving http://127.0.0.1:") and "WARNING" not in banner[0]


@pytest.mark.slow
def test_building_the_package_prints_no_setuptools_warning_about_the_static_folders(tmp_path):
    # A copy of the sources, so that the build's scratch files never land in the checkout.
    src = tmp_path / "src"
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True, text=True, check=True
    )
    for name in files.stdout.splitlines():
        if (REPO / name).is_file() and not name.endswith(".sqlite"):
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            (src / name).write_bytes((REPO / name).read_bytes())
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "-w", str(tmp_path / "wheel"), "-v"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    output = done.stdout + done.stderr
    assert "would be ignored" not in output and "is absent from the `packages` configuration" not in output
    import zipfile

    names = zipfile.ZipFile(next((tmp_path / "wheel").glob("*.whl"))).namelist()
    for wanted in (
        "agenthop/server/web/static/base.css",
        "agenthop/server/web/static/dom.js",
        "agenthop/server/play/static/play.js",
        "agenthop/scorer/view_static/view.js",
        "agenthop/construct/review_static/review.js",
    ):
        assert wanted in names


def test_the_library_refuses_a_model_run_without_a_key_in_words_not_flags(demo, tmp_path, monkeypatch):
    from agenthop.runner import run_items
    from agenthop.runner.run import RunError

    corpus, split = demo
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "MY_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(RunError) as info:
        run_items(
            split, agent="sdk", model="m", corpus=corpus, out=tmp_path / "x", api_key_env="MY_KEY", progress=False
        )
    assert info.value.param == "api_key_env" and "--" not in str(info.value)
    assert str(info.value).startswith("the sdk agent needs an API key: the environment variable MY_KEY is not set")
    assert not (tmp_path / "x").exists()
