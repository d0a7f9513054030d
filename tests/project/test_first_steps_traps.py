"""First steps that no longer mislead: a session still open (or never ended) is scored with a warning
that it never ended, and the report names the client the session was created with instead of "agent unknown";
`corpus build` says that --licence sets the licence of files that state none, and says on stderr (and in its help)
that a pipe gets the full JSON summary; `log runs` and `log export --run` on a log of only unlabelled sessions
say so and how to label them, instead of printing nothing with exit 0."""

from __future__ import annotations

import asyncio
import json

import httpx2
from click.testing import CliRunner
from support.paths import REPO as ROOT
from support.server_helpers import session_client

from agenthop.scorer.cli import main as scorer_main
from agenthop.server.cli import main as server_main
from agenthop.server.transport.http import ServerThread


def test_an_open_session_is_scored_with_a_warning_and_the_report_names_its_client(demo, tmp_path):
    corpus, _ = demo
    log = tmp_path / "server-log.sqlite"
    with ServerThread(str(corpus), str(log)) as server:
        created = httpx2.post(
            f"{server.base_url}/sessions",
            json={"item": "st_0001", "run": "my-framework", "client": {"name": "my-framework", "model": "my-model"}},
        )
        assert created.status_code == 201, created.text
        # Scored while the session is still open, with no call made: the README's step 5 run too early.
        r = CliRunner().invoke(
            scorer_main, [f"{log}::my-framework", "--corpus", str(corpus), "--out", str(tmp_path / "report")]
        )
    assert r.exit_code == 0, r.output
    md = (tmp_path / "report" / "report.md").read_text()
    assert "1 session(s) never ended (st_0001; 1 with no call at all): still open when scored" in md
    assert "They count as abandoned; score again once they have ended." in md
    assert "client my-framework, model my-model" in md and "agent unknown" not in md


def test_corpus_build_names_licence_and_says_where_the_json_goes(tmp_path):
    out = tmp_path / "papers.sqlite"
    r = CliRunner().invoke(
        server_main, ["corpus", "build", str(ROOT / "tests" / "fixtures" / "tei"), "--out", str(out)]
    )
    assert r.exit_code == 0, r.output
    assert "have no open licence (or none stated)" in r.stderr
    assert "If their files state none and you know the terms, --licence sets it" in r.stderr
    assert "stdout is not a terminal, so the full summary goes there as JSON" in r.stderr
    assert json.loads(r.stdout)["imported"]["out"] == str(out)  # the pipe still gets the JSON alone
    assert "when stdout is a pipe or a file it prints the full JSON summary there" in " ".join(
        CliRunner().invoke(server_main, ["corpus", "build", "--help"]).output.split()
    )


def test_log_runs_and_export_say_why_an_unlabelled_log_has_no_run(demo, tmp_path):
    corpus, _ = demo
    log = tmp_path / "desktop-log.sqlite"

    async def one_call():
        async with session_client(corpus, log, None, run=None) as (client, _):
            await client.call_tool("search_papers", {"query": "retrieval"})

    asyncio.run(one_call())
    runs = CliRunner().invoke(server_main, ["log", "runs", str(log)])
    assert runs.exit_code == 0 and runs.stdout == ""  # stdout stays a list of labels for scripts
    assert f"{log} has no run label." in runs.stderr
    assert "1 session(s) have none: the server was started without --run" in runs.stderr
    export = CliRunner().invoke(server_main, ["log", "export", str(log), "--run", "claude-desktop"])
    assert export.exit_code == 1 and export.stdout == ""
    assert f"no records of run 'claude-desktop' in {log}." in export.stderr
    assert "'log export' without --run prints every record" in export.stderr
    everything = CliRunner().invoke(server_main, ["log", "export", str(log)])
    assert everything.exit_code == 0 and len(everything.stdout.splitlines()) >= 2
