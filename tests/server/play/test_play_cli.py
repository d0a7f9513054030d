"""``agenthop-server play`` as a real process: it prints the /play URL once it serves, opens the user's browser
when there is one (BROWSER here), and carries on without one."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import httpx2
import pytest

pytestmark = pytest.mark.slow


def _within(fn, seconds: float = 60):
    """fn() run in a thread; fails the test if it does not return in time (a blocking read must not hang the suite)."""
    box: dict = {}
    thread = threading.Thread(target=lambda: box.update(value=fn()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"no answer within {seconds} s"
    return box["value"]


def _play(corpus: Path, log: Path, env: dict, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "agenthop.server", "play", "--corpus", str(corpus), "--log", str(log), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _stop(proc: subprocess.Popen) -> str:
    proc.terminate()
    _, err = proc.communicate(timeout=30)
    return err


def test_play_prints_its_url_and_opens_the_browser_named_by_BROWSER(fixture_corpus, tmp_path):
    fifo = tmp_path / "opened"
    os.mkfifo(fifo)
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\necho "$1" > {fifo}\n')
    browser.chmod(0o755)
    proc = _play(
        fixture_corpus, tmp_path / "log.sqlite", {**os.environ, "BROWSER": str(browser)}, "--participant", "p01"
    )
    try:
        url = _within(proc.stdout.readline).strip()
        opened = _within(lambda: fifo.read_text().strip())
        page = httpx2.get(url)
        config = httpx2.get(url.replace("/play", "/play/api/config")).json()
    finally:
        err = _stop(proc)
    assert url.startswith("http://127.0.0.1:") and url.endswith("/play")
    assert opened == url
    assert page.status_code == 200 and "AgentHop Play" in page.text
    assert config["participant"] == "p01" and config["reveal"] is False
    assert "reveal off" in err


def test_play_without_any_browser_prints_the_url_and_keeps_serving(fixture_corpus, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("BROWSER", "DISPLAY", "WAYLAND_DISPLAY")}
    env["PATH"] = str(Path(sys.executable).parent)  # no console browser (lynx, w3m) either
    proc = _play(fixture_corpus, tmp_path / "log.sqlite", env, "--reveal")
    try:
        url = _within(proc.stdout.readline).strip()
        note = _within(proc.stderr.readline) + _within(proc.stderr.readline)
        page = httpx2.get(url)
        alive = proc.poll() is None
    finally:
        _stop(proc)
    assert page.status_code == 200 and alive
    assert "reveal ON" in note and "No browser to open here: open the URL above yourself." in note
