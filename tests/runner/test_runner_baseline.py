"""The offline baseline over the whole demo corpus: no model, no API key, clearly above chance."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from agenthop.runner.cli import main
from agenthop.runner.records import read_records
from agenthop.server.corpus_schema import open_corpus
from agenthop.server.log.checkpoint import read_records as read_checkpoint


@pytest.mark.slow
def test_baseline_beats_chance_on_demo_corpus(demo, tmp_path):
    corpus, split = demo
    out = tmp_path / "baseline"
    result = CliRunner().invoke(
        main,
        [
            "--items",
            str(split),
            "--agent",
            "baseline",
            "--corpus",
            str(corpus),
            "--out",
            str(out),
            "--workers",
            "4",
            "--no-progress",
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    recs = list(read_records(out / "runner.jsonl"))
    ends = [r for r in recs if r["kind"] == "item_end"]
    ids = [json.loads(line)["id"] for line in split.read_text().splitlines() if line.strip()]
    assert sorted(e["item_id"] for e in ends) == sorted(ids)
    conn = open_corpus(corpus, allow_gold=True)
    gold = {i: c for i, c in conn.execute("SELECT item_id, correct_index FROM gold_items")}
    conn.close()
    correct = sum(1 for e in ends if e["answer"] and "ABCD".index(e["answer"]) == gold[e["item_id"]])
    accuracy = correct / len(ends)
    print(f"baseline accuracy on the demo corpus: {accuracy:.1%} ({correct}/{len(ends)})")
    assert accuracy >= 0.45, accuracy  # chance is 25%
    assert all(e["termination"] == "answer" and e["budget_used"] <= 30 and e["total_tokens"] == 0 for e in ends)
    log = list(read_checkpoint(out / "server-log.sqlite"))
    calls = [r for r in log if r["kind"] == "call"]
    assert all(c["turn"] is not None and c["tokens"] == 0 for c in calls)
    assert not any(c["outcome"] == "budget_rejected" for c in calls)
    assert "accuracy" in result.output


def test_baseline_closed_book_and_disabled_search(demo, tmp_path):
    corpus, split = demo
    for extra, name in ((["--closed-book"], "cb"), (["--disable-tools", "search_papers,get_paper_info"], "ns")):
        out = tmp_path / name
        result = CliRunner().invoke(
            main,
            [
                "--items",
                str(split),
                "--agent",
                "baseline",
                "--corpus",
                str(corpus),
                "--out",
                str(out),
                "--limit",
                "4",
                "--no-progress",
                *extra,
            ],
            catch_exceptions=False,
        )
        assert result.exit_code == 0, result.output
        ends = [r for r in read_records(out / "runner.jsonl") if r["kind"] == "item_end"]
        assert len(ends) == 4 and all(e["termination"] == "answer" for e in ends)
        tools = {r["tool"] for r in read_checkpoint(out / "server-log.sqlite") if r["kind"] == "call"}
        if name == "cb":
            assert tools == {"submit_answer"} and all(e["turns"] == 1 for e in ends)
        else:
            assert "search_papers" not in tools and "read_section" in tools


def test_baseline_against_a_running_server_that_wants_a_token(demo, tmp_path, monkeypatch):
    """--server URL: the runner uses a server someone else started (here with --auth-token) and its log."""
    from agenthop.server.transport.http import ServerThread

    corpus, split = demo
    server_log, out = tmp_path / "shared-log.sqlite", tmp_path / "remote"
    args = ["--items", str(split), "--agent", "baseline", "--out", str(out), "--limit", "3", "--no-progress"]
    with ServerThread(str(corpus), str(server_log), auth_token="t0ken") as server:
        monkeypatch.delenv("AGENTHOP_AUTH_TOKEN", raising=False)
        refused = CliRunner().invoke(main, [*args, "--server", server.base_url])
        monkeypatch.setenv("AGENTHOP_AUTH_TOKEN", "t0ken")
        result = CliRunner().invoke(main, [*args, "--server", server.base_url, "--no-resume"], catch_exceptions=False)
    assert refused.exit_code != 0 and "401" in refused.output
    assert result.exit_code == 0, result.output
    ends = [r for r in read_records(out / "runner.jsonl") if r["kind"] == "item_end"]
    assert [e["termination"] for e in ends] == ["answer"] * 3
    assert not (out / "server-log.sqlite").exists()  # the log is the running server's
    logged = {r["session_id"] for r in read_checkpoint(server_log, run="remote") if r["kind"] == "session_end"}
    assert logged == {e["session_id"] for e in ends}


def test_a_run_compiles_each_output_schema_once_not_once_per_session(demo, tmp_path, monkeypatch):
    """The MCP SDK compiles a validator per tool per session (~10 ms each); the run's sessions share one set."""
    from jsonschema.validators import Draft202012Validator

    checked, real = [], Draft202012Validator.check_schema.__func__

    def counting(cls, schema, **kw):
        checked.append(schema)
        return real(cls, schema, **kw)

    monkeypatch.setattr(Draft202012Validator, "check_schema", classmethod(counting))
    corpus, split = demo
    result = CliRunner().invoke(
        main,
        [
            "--items",
            str(split),
            "--agent",
            "baseline",
            "--corpus",
            str(corpus),
            "--limit",
            "12",
            "--out",
            str(tmp_path / "run"),
            "--workers",
            "2",
            "--no-progress",
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    ends = [r for r in read_records(tmp_path / "run" / "runner.jsonl") if r["kind"] == "item_end"]
    assert len(ends) == 12 and all(e["termination"] == "answer" for e in ends)
    # Seven tools with output schemas, compiled once for the run (the first listing); 12 sessions share them.
    assert 0 < len(checked) <= 7 + 2, len(checked)
