"""Faults: SIGKILL mid-stream loses no acknowledged call; bad corpus and log files are refused
at start with a clear message. Synchronisation is by polling conditions under a deadline, never by sleeping."""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
import subprocess
import sys
import time

import anyio
import httpx2
import pytest
from click.testing import CliRunner
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from support.hardening_common import ServerProcess
from support.release_fixture import pid

from agenthop.server.cli import main
from agenthop.server.corpus_schema import SCHEMA_VERSION
from agenthop.server.log.checkpoint import CheckpointLog, LogError, read_records
from agenthop.server.transport.http import ServerThread

N_CLIENTS = 6
KILL_AFTER = 60  # acknowledged calls before the SIGKILL


@pytest.mark.anyio
@pytest.mark.slow
async def test_sigkill_mid_stream_loses_no_acknowledged_call(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    acked: list[tuple[str, str]] = []  # (session_id, tag) of every call whose result came back
    with ServerProcess(fixture_corpus, log) as server:
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            sessions = [
                (await http.post("/sessions", json={"item": None, "run": "crash", "budget": None})).json()
                for _ in range(N_CLIENTS)
            ]

        async def client_loop(i: int, session: dict) -> None:
            try:
                async with (
                    httpx2.AsyncClient(timeout=10) as h,
                    Client(streamable_http_client(session["mcp_url"], http_client=h)) as client,
                ):
                    for n in range(10_000):
                        tag = f"c{i}n{n}"
                        if n % 2:
                            result = await client.call_tool("think", {"reasoning": tag})
                        else:
                            result = await client.call_tool("search_papers", {"query": f"paper {tag}", "top_k": 3})
                        assert result.structured_content["outcome"] == "ok"
                        acked.append((session["session_id"], tag))
            except Exception:  # the server died under us: stop, as a real client would
                return

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                for i, session in enumerate(sessions):
                    tg.start_soon(client_loop, i, session)
                while len(acked) < KILL_AFTER:  # poll the condition, bounded by fail_after
                    await anyio.sleep(0.01)
                server.kill()
                killed_at = len(acked)
        assert server.proc.returncode == -9
    assert killed_at >= KILL_AFTER

    # The log opens read-only right after the crash (WAL and all) and holds every acknowledged call.
    calls = [r for r in read_records(log) if r["kind"] == "call"]
    logged = [(c["session_id"], c["arguments"].get("reasoning") or c["arguments"]["query"].split()[-1]) for c in calls]
    assert len(set(logged)) == len(logged), "a call was logged twice"
    missing = set(acked) - set(logged)
    assert not missing, f"{len(missing)} acknowledged calls are missing from the log: {sorted(missing)[:5]}"
    # At most one call per client was in flight (logged but its answer lost with the server).
    assert len(acked) <= len(logged) <= len(acked) + N_CLIENTS
    # Per-session sequence numbers have no gaps.
    by_session: dict[str, list[int]] = {}
    for r in read_records(log):
        by_session.setdefault(r["session_id"], []).append(r["seq"])
    assert all(seqs == list(range(len(seqs))) for seqs in by_session.values())

    exported = CliRunner().invoke(main, ["log", "export", str(log)])
    assert exported.exit_code == 0, exported.output
    assert len([json.loads(line) for line in exported.output.splitlines()]) == len(list(read_records(log)))

    # A new server on the same log recovers it and appends after the crash's records.
    before = len(list(read_records(log)))
    with ServerThread(str(fixture_corpus), str(log)) as restarted, httpx2.Client(base_url=restarted.base_url) as http:
        created = http.post("/sessions", json={"item": "st_0001", "run": "after-crash"}).json()
        async with (
            httpx2.AsyncClient() as h,
            Client(streamable_http_client(created["mcp_url"], http_client=h)) as client,
        ):
            read = await client.call_tool("read_section", {"paper_id": pid("B"), "section": "C"})
    assert read.structured_content["budget_used"] == 5
    assert len(list(read_records(log))) == before + 2
    assert sqlite3.connect(log).execute("PRAGMA integrity_check").fetchone() == ("ok",)


# --- bad corpus files ------------------------------------------------------------------


def _serve(corpus, log) -> tuple[int, str]:
    result = CliRunner().invoke(
        main, ["serve", "--transport", "http", "--port", "1", "--corpus", str(corpus), "--log", str(log)]
    )
    return result.exit_code, result.output


def _corrupt_corpora(fixture_corpus, tmp_path) -> list[tuple[str, object, str]]:
    data = fixture_corpus.read_bytes()
    rng = random.Random(6)
    cases = []
    page = 4096
    for name, length in [
        ("10%", len(data) // 10),
        ("half", len(data) // 2),
        ("one page short", len(data) - page),
        ("one byte short", len(data) - 1),
        ("header only", 100),
    ]:
        path = tmp_path / f"truncated-{len(cases)}.sqlite"
        path.write_bytes(data[:length])
        cases.append((f"truncated ({name})", path, "truncated"))
    junk = tmp_path / "random.sqlite"
    junk.write_bytes(rng.randbytes(len(data)))
    cases.append(("random bytes", junk, "not a readable SQLite corpus"))
    scrambled = tmp_path / "scrambled.sqlite"
    scrambled.write_bytes(data[:100] + rng.randbytes(len(data) - 100))
    cases.append(("random bytes after a valid header", scrambled, "not a readable SQLite corpus"))
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    cases.append(("empty file", empty, "not an AgentHop corpus"))
    for version in (SCHEMA_VERSION + 1, str(SCHEMA_VERSION), None):
        path = tmp_path / f"version-{version}.sqlite"
        path.write_bytes(data)
        with sqlite3.connect(path) as conn:
            if version is None:
                conn.execute("DELETE FROM meta WHERE key = 'schema_version'")
            else:
                conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (json.dumps(version),))
        conn.close()
        cases.append((f"schema version {version!r}", path, f"schema version {version!r}"))
    bad_meta = tmp_path / "bad-meta.sqlite"
    bad_meta.write_bytes(data)
    with sqlite3.connect(bad_meta) as conn:
        conn.execute("UPDATE meta SET value = '{not json' WHERE key = 'schema_version'")
    conn.close()
    cases.append(("meta that is not JSON", bad_meta, "not a readable SQLite corpus"))
    no_gold = tmp_path / "no-gold.sqlite"
    no_gold.write_bytes(data)
    with sqlite3.connect(no_gold) as conn:
        conn.execute("DROP TABLE gold_items")
    conn.close()
    cases.append(("a corpus without its tables", no_gold, "lacks tables ['gold_items']"))
    log_as_corpus = tmp_path / "a-log.sqlite"
    CheckpointLog(log_as_corpus).close()
    cases.append(("a checkpoint log given as the corpus", log_as_corpus, "not an AgentHop corpus"))
    return cases


def test_corrupt_truncated_and_wrong_version_corpora_are_refused_at_start(fixture_corpus, tmp_path):
    failures = []
    for what, path, fragment in _corrupt_corpora(fixture_corpus, tmp_path):
        code, output = _serve(path, tmp_path / "log.sqlite")
        if code != 1 or fragment not in output or "Traceback" in output:
            failures.append((what, code, output[-300:]))
    assert not failures, failures
    assert not (tmp_path / "log.sqlite").exists() or not [r for r in read_records(tmp_path / "log.sqlite")]


def test_the_real_server_process_exits_with_the_message(fixture_corpus, tmp_path):
    truncated = tmp_path / "truncated.sqlite"
    truncated.write_bytes(fixture_corpus.read_bytes()[:-4096])
    started = time.monotonic()
    proc = subprocess.run(
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
            str(truncated),
            "--log",
            str(tmp_path / "log.sqlite"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1 and "is truncated" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert time.monotonic() - started < 30


# --- bad log files -------------------------------------------------------------------------


def test_unusable_log_paths_are_refused_with_a_clear_message(fixture_corpus, tmp_path):
    junk = tmp_path / "junk.log"
    junk.write_bytes(b"not a database at all\n" * 200)
    corpus_copy = tmp_path / "corpus-as-log.sqlite"
    corpus_copy.write_bytes(fixture_corpus.read_bytes())
    digest = hashlib.sha256(corpus_copy.read_bytes()).hexdigest()
    future = tmp_path / "future.sqlite"
    CheckpointLog(future).close()
    with sqlite3.connect(future) as conn:
        conn.execute("UPDATE log_meta SET value = '99' WHERE key = 'log_format_version'")
    conn.close()
    directory = tmp_path / "a-directory"
    directory.mkdir()
    cases = [
        (junk, 1, "cannot use"),
        (corpus_copy, 1, "not a checkpoint log"),
        (future, 1, "format version 99"),
        (directory, 2, "is a directory"),
    ]
    for path, code, fragment in cases:
        result = CliRunner().invoke(
            main, ["serve", "--transport", "http", "--corpus", str(fixture_corpus), "--log", str(path)]
        )
        assert result.exit_code == code and fragment in result.output and "Traceback" not in result.output, (
            path,
            result.output,
        )
    # The corpus given as --log by mistake is left byte-for-byte as it was (no log tables, no WAL switch).
    assert hashlib.sha256(corpus_copy.read_bytes()).hexdigest() == digest
    with pytest.raises(LogError, match="not a readable checkpoint log"):
        list(read_records(junk))
    export = CliRunner().invoke(main, ["log", "export", str(junk)])
    assert export.exit_code == 1 and "not a readable checkpoint log" in export.output
