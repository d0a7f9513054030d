"""docs/python-api.md documents every public name, and every example on it runs.

The page's headings name the public API of each package: the test fails when a name in a package's
``__all__`` has no entry, when an entry names something that is not public, or when an entry has no
example. The plain examples run top to bottom in one directory holding the committed corpus and split;
the two that serve forever are started as servers and used by real clients.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from support.paths import REPO

from agenthop.server.log.checkpoint import read_log

DOC = REPO / "docs" / "python-api.md"
PACKAGES = ("agenthop", "agenthop.server", "agenthop.corpus", "agenthop.runner", "agenthop.scorer")
FENCE = re.compile(r"^```python( [\w-]+)?\n(.*?)^```$", re.M | re.S)

RUNNER = r"""
import json, sys, traceback
blocks = json.load(open(sys.argv[1]))
for line, code in blocks:
    try:
        exec(compile(code, f"docs/python-api.md, the example at line {line}", "exec"), {"__name__": "__main__"})
    except BaseException:
        traceback.print_exc()
        sys.exit(f"the example at line {line} of docs/python-api.md failed")
    print(f"--- example at line {line} ran", flush=True)
"""


def page() -> str:
    return DOC.read_text(encoding="utf-8")


def examples(kind: str | None = None) -> list[tuple[int, str]]:
    text = page()
    return [
        (text.count("\n", 0, m.start()) + 1, m.group(2))
        for m in FENCE.finditer(text)
        if (m.group(1) or "").strip() == (kind or "")
    ]


def entries() -> dict[str, list[tuple[list[str], str]]]:
    """Package -> its entries: (the names in the heading, the text up to the next heading)."""
    out: dict[str, list] = {}
    for section in re.split(r"^## ", page(), flags=re.M)[1:]:
        package, _, body = section.partition("\n")
        parts = re.split(r"^### (.*)$", body, flags=re.M)
        out[package.strip()] = [(re.findall(r"`([^`]+)`", parts[i]), parts[i + 1]) for i in range(1, len(parts), 2)]
    return out


@pytest.fixture
def workdir(tmp_path) -> Path:
    shutil.copy(REPO / "corpus.sqlite", tmp_path / "corpus.sqlite")
    (tmp_path / "splits").mkdir()
    shutil.copy(REPO / "splits" / "demo.jsonl", tmp_path / "splits" / "demo.jsonl")
    shutil.copytree(REPO / "tests" / "fixtures" / "jats", tmp_path / "papers")
    return tmp_path


def env(tmp_path: Path) -> dict:
    # The per-user data directory of the examples is the test's own.
    return {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data-home"), "HOME": str(tmp_path / "home")}


def test_every_public_name_has_an_entry_with_an_example():
    documented = entries()
    assert set(documented) == set(PACKAGES)
    for package in PACKAGES:
        names = [n for heading, _ in documented[package] for n in heading]
        assert sorted(names) == sorted(importlib.import_module(package).__all__), package
        for heading, body in documented[package]:
            assert "```python" in body, f"{package}: the entry {heading} has no example"


@pytest.mark.slow
def test_the_examples_run(workdir):
    plain = examples()
    assert len(plain) >= 20
    blocks = workdir / "blocks.json"
    blocks.write_text(json.dumps(plain), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER, str(blocks)],
        cwd=workdir,
        env=env(workdir),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    assert proc.stdout.count("--- example at line") == len(plain)
    # A few things the examples claim, checked here too.
    assert "64\n" in proc.stdout  # build_demo's item count
    assert (workdir / "report" / "baseline" / "report.html").exists() and (workdir / "view" / "index.html").exists()
    assert "to_dataframe needs pandas" in proc.stdout or "read_section" in proc.stdout


@pytest.mark.anyio
async def test_the_stdio_server_example_serves_an_mcp_client(workdir):
    ((_, code),) = examples("stdio-server")
    params = StdioServerParameters(command=sys.executable, args=["-c", code], cwd=str(workdir), env=env(workdir))
    with open(workdir / "stderr.txt", "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=60) as client:
            tools = await client.list_tools()
            result = await client.call_tool("think", {"reasoning": "from the docs"})
    assert len(tools.tools) == 7 and result.structured_content["outcome"] == "ok"
    start, call = list(read_log(workdir / "mine.sqlite"))
    assert (start.run, start.item_id, start.caps.budget, call.tool) == ("mine", "st_0001", 20, "think")


@pytest.mark.slow
def test_the_play_example_serves_the_page(workdir):
    ((_, code),) = examples("http-server")
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=workdir,
        env=env(workdir),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = proc.stdout.readline().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/play", url), (
            url,
            proc.stderr.read() if proc.poll() is not None else "",
        )
        with urllib.request.urlopen(url, timeout=30) as page_response:
            assert page_response.status == 200 and "<html" in page_response.read().decode().lower()
        with urllib.request.urlopen(f"{url}/api/config", timeout=30) as config_response:
            config = json.load(config_response)
        assert config["participant"] == "p01" and config["caps"]["budget"] == 30
    finally:
        proc.terminate()
        proc.wait(timeout=30)
