"""The agent's libraries are imported before ``run_start``: imported on the first items instead,
they cost every worker's first turn a second or more of CPU and counted against the run, not its start-up.

Checked in a fresh interpreter (this one has imported everything already): the runner runs one item
against the loopback fake model, and the modules present when ``run_start`` is written are recorded."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from support.paths import TESTS

SCRIPT = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {tests!r})
    from click.testing import CliRunner
    from support.fake_openai import FakeOpenAI, seed_id, tool_calls, turn_index
    import agenthop.runner.records as records
    from agenthop.runner.cli import main

    seen = {{}}
    write = records.RecordWriter.write

    def spy(self, record):
        if getattr(record, "kind", None) == "run_start":
            seen.update({{name: name in sys.modules for name in {modules!r}}})
        return write(self, record)

    records.RecordWriter.write = spy

    def script(body, fake):
        if turn_index(body) == 0:
            return tool_calls(("get_references", {{"paper_id": seed_id(body)}}))
        return tool_calls(("submit_answer", {{"answer": "A", "reasoning": "test"}}))

    with FakeOpenAI(script) as fake:
        result = CliRunner().invoke(main, ["--items", {items!r}, "--agent", {agent!r}, "--model", "fake-1",
                                           "--base-url", fake.base_url, "--corpus", {corpus!r}, "--out", {out!r},
                                           "--no-progress"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    print(json.dumps(seen))
""")

MODULES = {
    "raw": ["openai", "jsonschema.validators", "agenthop.runner.raw_agent"],
    "sdk": ["agents", "openai", "jsonschema.validators", "agenthop.runner.sdk_agent"],
}


@pytest.mark.parametrize("agent", ["raw", "sdk"])
@pytest.mark.slow
def test_agent_libraries_are_loaded_before_run_start(demo_corpus, tmp_path, agent):
    items = tmp_path / "items.txt"
    items.write_text("st_0001\n")
    code = SCRIPT.format(
        tests=str(TESTS),
        modules=MODULES[agent],
        items=str(items),
        agent=agent,
        corpus=str(demo_corpus),
        out=str(tmp_path / "out"),
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env={"OPENAI_API_KEY": "sk-test", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {name: True for name in MODULES[agent]}
