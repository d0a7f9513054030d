"""The scorer as a library: score/compare/write_reports from Python, the same files as the CLI, errors without flags."""

from __future__ import annotations

import json
import pickle
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.scorer_fixtures import SessionWriter, build_corpus, new_run_dir, write_items_file, write_main_run

import agenthop.scorer as scorer_pkg
from agenthop.scorer import (
    ItemsFileError,
    PairResult,
    RunSpecError,
    ScorerError,
    ScoreResult,
    compare,
    score,
    write_reports,
)
from agenthop.scorer.cli import main

STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00")


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    root = tmp_path_factory.mktemp("api")
    corpus = build_corpus(root)
    return {
        "corpus": corpus,
        "items": write_items_file(root / "items.jsonl"),
        "main": write_main_run(root / "runs"),
        "rep": write_main_run(root / "runs", name="rep", manifest={"replicate_of": "main"}),
        "root": root,
    }


def files(directory: Path) -> dict[str, str]:
    """Every file under a report directory, generation time stamps blanked."""
    return {
        str(p.relative_to(directory)): STAMP.sub("<time>", p.read_text(encoding="utf-8"))
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


@pytest.mark.slow
def test_score_in_memory_then_write_reports_equals_the_cli(env, tmp_path):
    result = score([env["main"], env["rep"]], env["corpus"], items=env["items"])
    assert isinstance(result, ScoreResult) and result.out is None
    assert [r.name for r in result.runs] == ["main", "rep"]
    assert all(r.complete for r in result.runs) and "trajectory" in result.runs[0].summary
    assert result.runs[0].headline.accuracy == pytest.approx(2 / 7) and result.runs[0].n_items == 7
    assert result.comparison["reliability"]["n_runs"] == 2
    assert not list(tmp_path.iterdir())  # nothing written without out

    write_reports(result, tmp_path / "lib")
    r = CliRunner().invoke(
        main,
        [
            str(env["main"]),
            str(env["rep"]),
            "--corpus",
            str(env["corpus"]),
            "--items",
            str(env["items"]),
            "--out",
            str(tmp_path / "cli"),
        ],
    )
    assert r.exit_code == 0, r.output
    lib, cli = files(tmp_path / "lib"), files(tmp_path / "cli")
    assert sorted(lib) == [
        "comparison.html",
        "comparison.json",
        "comparison.md",
        "main/report.html",
        "main/report.md",
        "main/summary.json",
        "rep/report.html",
        "rep/report.md",
        "rep/summary.json",
    ]
    assert lib == cli


@pytest.mark.slow
def test_streamed_reports_are_the_same_in_one_process_and_in_workers(env, tmp_path):
    seen = []
    one = score(
        [env["main"], env["rep"]], env["corpus"], out=tmp_path / "one", jobs=1, on_run=lambda r: seen.append(r.name)
    )
    two = score([env["main"], env["rep"]], env["corpus"], out=tmp_path / "two", jobs=2)
    assert seen == ["main", "rep"]
    assert [r.name for r in two.runs] == ["main", "rep"]
    assert not two.runs[0].complete and "trajectory" not in two.runs[0].summary
    assert (
        two.runs[0].full_summary()["trajectory"]
        == json.loads((tmp_path / "two/main/summary.json").read_text())["trajectory"]
    )
    assert one.comparison == two.comparison
    assert files(tmp_path / "one") == files(tmp_path / "two")


def test_compare_from_python(env, tmp_path):
    pair = compare(env["main"], env["rep"], env["corpus"], items=env["items"], resamples=200, out=tmp_path)
    assert isinstance(pair, PairResult)
    assert pair.difference == 0 and pair.mcnemar_p == 1.0 and pair.a.name == "main" and pair.b.name == "rep"
    assert json.loads((tmp_path / "comparison.json").read_text())["n_common"] == 7
    again = tmp_path / "again"
    write_reports(pair, again)
    assert files(again) == {k: v for k, v in files(tmp_path).items() if not k.startswith("again/")}


def test_library_errors_name_parameters_and_the_cli_names_flags(env, tmp_path):
    run_dir = tmp_path / "remote"
    run_dir.mkdir()
    (run_dir / "runner.jsonl").write_text("")
    with pytest.raises(RunSpecError) as info:
        score([run_dir], env["corpus"])
    assert "server_log" in str(info.value) and "--" not in str(info.value) and info.value.param == "server_log"
    r = CliRunner().invoke(main, [str(run_dir), "--corpus", str(env["corpus"]), "--out", str(tmp_path / "o")])
    assert r.exit_code == 1 and "--server-log" in r.output and "server_log" not in r.output
    with pytest.raises(RunSpecError, match="give that log as server_log"):  # raised in a worker process
        score([env["main"], run_dir], env["corpus"], jobs=2)
    r = CliRunner().invoke(main, [str(env["main"]), str(run_dir), "--corpus", str(env["corpus"]), "--jobs", "2"])
    assert r.exit_code == 1 and "give that log as --server-log" in r.output

    bad_items = tmp_path / "items.jsonl"
    bad_items.write_text("{not json\n")
    with pytest.raises(ItemsFileError, match=r"^cannot read items: .*items.jsonl:1: not valid JSON") as info:
        score([env["main"]], env["corpus"], items=bad_items)
    assert "--" not in str(info.value)
    r = CliRunner().invoke(main, [str(env["main"]), "--corpus", str(env["corpus"]), "--items", str(bad_items)])
    assert r.exit_code == 1 and "Error: cannot read --items:" in r.output

    with pytest.raises(ScorerError, match="corpus file not found") as info:
        score([env["main"]], tmp_path / "missing.sqlite")
    assert info.value.param == "corpus"
    with pytest.raises(ScorerError, match="jobs must be at least 1"):
        score([env["main"]], env["corpus"], jobs=0)


def test_errors_survive_worker_processes():
    """A ScorerError raised in a worker process reaches the caller whole (it is pickled on the way)."""
    err = RunSpecError("{path} has no {server_log} {{braces}}", "server_log", path="/a/{b}")
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is RunSpecError and back.param == "server_log"
    assert str(back) == "/a/{b} has no server_log {braces}"
    assert back.render(lambda p: "--" + p.replace("_", "-")) == "/a/{b} has no --server-log {braces}"


def test_only_the_cli_knows_click_and_flags():
    """click.ClickException lives in cli.py only; no library message spells a flag."""
    package = Path(scorer_pkg.__file__).parent
    for path in package.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        if path.name == "cli.py":
            assert "ClickException" in text
            continue
        assert "click" not in text, path.name
        for message in re.findall(r'Error\((?:f?"[^"]*"\s*)+', text):
            assert not re.search(r"--[a-z]", message), (path.name, message)


def test_public_api_is_declared():
    assert set(scorer_pkg.__all__) >= {
        "score",
        "compare",
        "write_reports",
        "load_run",
        "load_runs",
        "to_dataframe",
        "score_run",
        "Gold",
        "ScorerError",
        "RunScore",
        "ScoreResult",
        "PairResult",
    }
    assert all(hasattr(scorer_pkg, name) for name in scorer_pkg.__all__)


def test_one_run_streamed_to_out(env, tmp_path):
    run_dir, log, _ = new_run_dir(tmp_path, "solo")
    SessionWriter(log, "st_0001", run="solo").submit("B")
    log.close()
    result = score([run_dir], env["corpus"], out=tmp_path / "out")
    assert result.comparison is None and result.runs[0].report_dir == tmp_path / "out"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["report.html", "report.md", "summary.json"]
    assert result.runs[0].headline.accuracy == 1.0


def test_fast_readers_agree_with_the_writers_readers(env, tmp_path):
    """The scorer parses logs with msgspec; it must read exactly what the server's and the runner's readers read."""
    from agenthop.runner.records import read_records as runner_records
    from agenthop.scorer.logs import _read_runner_file, read_checkpoint_records
    from agenthop.server.log.checkpoint import CheckpointLog, read_records

    path = tmp_path / "runner.jsonl"
    lines = [
        b'{"kind": "run_start", "run": "r"}',
        b"",
        b"   ",
        b'{"kind": "turn", "big": 1180591620717411303424}',
        b"[1, 2]",
        b'"text"',
        b'{"kind": "turn", "latency_ms": NaN, "note": "caf\xc3\xa9"}',
        b'{"kind": "item_end", "answer": "\xff\xfe"}',
        b'{"kind": "item_end", "torn": tr',
        b'{"kind": "tail"}',
    ]
    path.write_bytes(b"\n".join(lines))
    records, skipped = _read_runner_file(path)
    expected = list(runner_records(path))
    assert json.dumps(records) == json.dumps(expected)  # NaN compares unequal; its JSON text does not
    assert len(records) == 5 and skipped == 3 and records[1]["big"] == 2**70

    log_path = tmp_path / "log.sqlite"
    log = CheckpointLog(log_path)
    s = SessionWriter(log, "st_0001", run="x")
    s.call("think", {"reasoning": "é ☃", "n": 2**70})
    s.submit("B")
    log.write({"kind": "call", "run": "y", "session_id": "s2", "latency_ms": float("nan"), "seq": 0})
    log.close()
    assert json.dumps(list(read_checkpoint_records(log_path))) == json.dumps(list(read_records(log_path)))
    assert json.dumps(list(read_checkpoint_records(log_path, run="x"))) == json.dumps(
        list(read_records(log_path, run="x"))
    )
    starts = list(read_checkpoint_records(log_path, kinds=("session_start",)))
    assert [r["kind"] for r in starts] == ["session_start"]
