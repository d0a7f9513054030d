"""Where the log goes and what it is: a server started without --log from a directory it
cannot write logs to the per-user data directory and says so; the typed records, the generated schema and
the typed reader agree with what the server writes."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from support.paths import REPO
from support.release_fixture import pid

from agenthop.server.cli import main
from agenthop.server.log.checkpoint import LOG_FORMAT_VERSION, read_log, read_records
from agenthop.server.log.records import CallRecord, SessionEnd, SessionStart, log_schema, record_dict

UNWRITABLE = Path("/proc")  # no one can create files here, root included (a chmod'ed directory would not stop root)


@pytest.mark.anyio
@pytest.mark.slow
async def test_stdio_server_without_log_flag_logs_to_the_per_user_directory_and_says_so(fixture_corpus, tmp_path):
    data_home = tmp_path / "data-home"
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(data_home)}
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "agenthop.server",
            "serve",
            "--corpus",
            str(fixture_corpus),
            "--item",
            "st_0001",
            "--run",
            "desktop",
        ],
        env=env,
        cwd=str(UNWRITABLE),
    )
    stderr_path = tmp_path / "stderr.txt"
    with open(stderr_path, "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=30) as client:
            result = await client.call_tool("get_paper_info", {"paper_id": pid("A")})
    expected = data_home / "agenthop" / "agenthop-log.sqlite"
    assert result.structured_content["outcome"] == "ok"
    assert f"checkpoint log {expected}" in stderr_path.read_text()
    assert [(r["kind"], r["run"]) for r in read_records(expected)] == [
        ("session_start", "desktop"),
        ("call", "desktop"),
    ]
    # --log still wins over the default.
    explicit = tmp_path / "explicit.sqlite"
    params.args += ["--log", str(explicit), "--run", "explicit"]
    with open(stderr_path, "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=30) as client:
            await client.call_tool("think", {"reasoning": "r"})
    assert f"checkpoint log {explicit}" in stderr_path.read_text()
    assert [r["run"] for r in read_records(explicit)] == ["explicit", "explicit"]
    assert len(list(read_records(expected))) == 2
    # 'log runs' and 'log path' find the same file with no argument.
    runner = CliRunner(env={"XDG_DATA_HOME": str(data_home)})
    assert runner.invoke(main, ["log", "path"]).output.strip() == str(expected)
    assert runner.invoke(main, ["log", "runs"]).output.splitlines() == ["desktop"]


def test_an_unusable_default_log_directory_names_the_flag(fixture_corpus, tmp_path):
    runner = CliRunner(env={"XDG_DATA_HOME": str(UNWRITABLE / "agenthop-test")})
    result = runner.invoke(main, ["serve", "--transport", "http", "--port", "1", "--corpus", str(fixture_corpus)])
    assert result.exit_code == 1 and "--log" in result.output and "Traceback" not in result.output
    missing = runner.invoke(main, ["log", "runs"])
    assert missing.exit_code == 1 and "no log at the default location" in missing.output


def test_the_committed_schema_is_the_one_the_models_generate():
    committed = json.loads((REPO / "docs" / "log-format.schema.json").read_text(encoding="utf-8"))
    assert committed == log_schema(LOG_FORMAT_VERSION), (
        "docs/log-format.schema.json is stale: run 'agenthop-server log schema > docs/log-format.schema.json'"
    )
    printed = CliRunner().invoke(main, ["log", "schema"])
    assert json.loads(printed.output) == committed


def test_the_typed_reader_reads_what_the_server_writes(fixture_corpus, tmp_path):
    from agenthop.server.caps import Caps
    from agenthop.server.log.checkpoint import CheckpointLog
    from agenthop.server.transport.mcp_app import make_sandbox

    log = CheckpointLog(tmp_path / "log.sqlite")
    sandbox = make_sandbox(fixture_corpus, log, Caps())
    session = sandbox.sessions.create(sandbox.scope("st_0001"), run="typed", transport="stdio")
    session.call("read_section", {"paper_id": pid("B"), "section": "C"}, {"agenthop/turn": 1, "agenthop/tokens": 10})
    session.call("search_papers", {"query": "x" * 5000})
    session.call("submit_answer", {"answer": "B", "reasoning": "r"})
    log.close()
    records = list(read_log(tmp_path / "log.sqlite", run="typed"))
    assert [type(r) for r in records] == [SessionStart, CallRecord, CallRecord, CallRecord, SessionEnd]
    read, clipped = records[1], records[2]
    assert read.delivered is not None and read.delivered.paper_id == pid("B") and read.turn == 1 and read.cost == 5
    assert clipped.outcome == "invalid" and clipped.arguments_altered is not None and clipped.arguments_altered.clipped
    assert records[-1].termination == "answer" and records[-1].answer == "B"
    # Writer and typed reader agree field for field: the dicts on disk are the models' dumps.
    assert [record_dict(r) for r in records] == list(read_records(tmp_path / "log.sqlite", run="typed"))
