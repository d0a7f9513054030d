"""Helpers for server tests: an in-process sandbox with one session and a real MCP client."""

from __future__ import annotations

import json
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path

from mcp import Client

from agenthop.server.caps import Caps
from agenthop.server.log.checkpoint import CheckpointLog, read_records
from agenthop.server.transport.mcp_app import build_server, make_sandbox
from support.paths import FIXTURES


@asynccontextmanager
async def session_client(
    corpus: Path,
    log_path: Path,
    item: str | None,
    *,
    caps: Caps | None = None,
    mode: str = "auto",
    disabled: frozenset[str] = frozenset(),
    run: str = "test",
):
    """A real mcp.Client talking in-process to a sandbox that serves one fixed session."""
    log = CheckpointLog(log_path)
    sandbox = make_sandbox(corpus, log, Caps())
    session_caps = caps or (Caps() if item else Caps(None, None, None))
    sandbox.fixed_session = sandbox.sessions.create(
        sandbox.scope(item), run=run, caps=session_caps, disabled_tools=disabled, transport="stdio"
    )
    try:
        async with Client(build_server(sandbox), mode=mode, raise_exceptions=True) as client:
            yield client, sandbox.fixed_session
    finally:
        log.close()


def calls(log_path: Path) -> list[dict]:
    return [r for r in read_records(log_path) if r["kind"] == "call"]


def text(result) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def build_fixture_corpus(folder: str, out: Path) -> dict:
    """``agenthop-server corpus build`` over one folder of tests/fixtures (tei, jats, s2orc), as a user runs it; its summary."""
    done = subprocess.run(
        [sys.executable, "-m", "agenthop.server", "corpus", "build", str(FIXTURES / folder), "--out", str(out)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)
