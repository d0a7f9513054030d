"""A locked or full log and a vanished corpus: no call takes effect unlogged, nothing blocks the
event loop, every route answers in JSON naming the cause, and /health says what is wrong.

The faults are real: another SQLite connection holds the log's write lock; SQLite's own page limit makes
the log "full" (SQLITE_FULL, what a full disk gives); the corpus file is removed or truncated. Ordering is
checked by waiting on events, never by timing.
"""

from __future__ import annotations

import os
import sqlite3

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from support.release_fixture import pid

from agenthop.server.log.checkpoint import CheckpointLog, LogUnavailable, read_records
from agenthop.server.transport.http import ServerThread

pytestmark = pytest.mark.anyio

READ_B = ("read_section", {"paper_id": pid("B"), "section": "C"})
INFO_A = ("get_paper_info", {"paper_id": pid("A")})


class WriteLock:
    """Another connection (as another process would) holding the log's write lock until released."""

    def __init__(self, path):
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.conn.execute("BEGIN IMMEDIATE")

    def release(self) -> None:
        self.conn.execute("COMMIT")
        self.conn.close()


async def _client_call(url: str, name: str, args: dict):
    async with httpx2.AsyncClient(timeout=60) as h, Client(streamable_http_client(url, http_client=h)) as client:
        return await client.call_tool(name, args)


async def test_a_locked_log_blocks_nothing_and_a_call_is_logged_once_the_lock_goes(fixture_corpus, tmp_path):
    """While another process holds the write lock, /health and the session API keep answering; the call that
    ran waits for the lock (retrying) and is logged before its result is returned."""
    log = tmp_path / "log.sqlite"
    with ServerThread(str(fixture_corpus), str(log), log_wait_s=120) as server:
        async with httpx2.AsyncClient(base_url=server.base_url, timeout=60) as http:
            created = (await http.post("/sessions", json={"item": "st_0001", "run": "locked"})).json()
            lock = WriteLock(log)
            results: dict = {}

            async def call(key: str, url: str) -> None:
                results[key] = await _client_call(url, *READ_B)

            with anyio.fail_after(90):  # bounds the polling below
                async with anyio.create_task_group() as tg:
                    tg.start_soon(call, "session", created["mcp_url"])
                    tg.start_soon(call, "sessionless", f"{server.base_url}/mcp")
                    # Both calls are waiting for the log: the event loop still serves /health, which says why.
                    while True:
                        health = await http.get("/health")
                        if health.json()["log"]["waiting"] == 2 and health.json()["log"]["failing"]:
                            break
                        assert not results, "a call returned while the log was locked"
                    assert health.status_code == 503 and health.json()["status"] == "failing"
                    assert "locked by another process" in health.json()["problems"][0]
                    state = await http.get(f"/sessions/{created['session_id']}")
                    assert state.status_code == 200 and state.json()["budget_used"] == 0
                    assert not results  # both calls are still waiting for their records to be written
                    lock.release()
            healthy = await http.get("/health")
    assert (
        results["session"].structured_content["outcome"] == "ok"
        and results["session"].structured_content["budget_used"] == 5
    )
    assert results["sessionless"].is_error and "needs a session" in results["sessionless"].content[0].text
    assert healthy.status_code == 200 and healthy.json()["status"] == "ok" and healthy.json()["log"]["failing"] is None
    calls = [r for r in read_records(log) if r["kind"] == "call"]
    assert sorted((c["session_id"], c["cost"]) for c in calls if c["session_id"]) == [(created["session_id"], 5)]
    assert len(calls) == 2


async def test_a_log_locked_past_the_wait_refuses_calls_and_session_requests_in_json(fixture_corpus, tmp_path):
    """Past its wait, a call is refused (not charged, nothing delivered) and every route names the cause in JSON;
    once the lock goes, the session carries on with gap-free records."""
    log = tmp_path / "log.sqlite"
    with ServerThread(str(fixture_corpus), str(log), log_wait_s=0.5) as server:
        async with httpx2.AsyncClient(base_url=server.base_url, timeout=60) as http:
            created = (await http.post("/sessions", json={"item": "st_0001", "run": "refused"})).json()
            lock = WriteLock(log)
            refused = await _client_call(created["mcp_url"], *READ_B)
            sessionless = await _client_call(f"{server.base_url}/mcp", *INFO_A)
            create = await http.post("/sessions", json={"item": "st_0001"})
            end = await http.post(f"/sessions/{created['session_id']}/end", json={"termination": "abandoned"})
            health = await http.get("/health")
            state = (await http.get(f"/sessions/{created['session_id']}")).json()
            lock.release()
            after = await _client_call(created["mcp_url"], *READ_B)
            ended = await http.post(f"/sessions/{created['session_id']}/end", json={"termination": "abandoned"})
    text = refused.content[0].text
    assert refused.is_error and refused.structured_content["outcome"] == "log_unavailable"
    assert refused.structured_content["cost"] == 0 and refused.structured_content["budget_used"] == 0
    assert "locked by another process" in text and "nothing was charged" in text and "Section" not in text
    assert "could not log this call" in sessionless.content[0].text
    for response, status in ((create, 503), (end, 503), (health, 503)):
        assert response.status_code == status and response.headers["content-type"] == "application/json"
    assert "locked by another process" in create.json()["error"] and "no session was created" in create.json()["error"]
    assert "was not ended" in end.json()["error"]
    assert state["budget_used"] == 0 and state["ended"] is False
    assert after.structured_content["outcome"] == "ok" and after.structured_content["budget_used"] == 5
    assert ended.status_code == 200
    records = [r for r in read_records(log) if r["session_id"] == created["session_id"]]
    assert [(r["kind"], r["seq"]) for r in records] == [("session_start", 0), ("call", 1), ("session_end", 2)]
    assert [r for r in read_records(log) if r["kind"] == "call" and r["session_id"] is None] == []


async def test_a_full_log_refuses_calls_with_a_clear_error_and_recovers(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    with ServerThread(str(fixture_corpus), str(log), log_wait_s=0.5) as server:
        async with httpx2.AsyncClient(base_url=server.base_url, timeout=60) as http:
            created = (await http.post("/sessions", json={"item": "st_0001", "run": "full"})).json()
            pages = server.log._conn.execute("PRAGMA page_count").fetchone()[0]
            server.log._conn.execute(f"PRAGMA max_page_count = {pages}")  # no room for another page: SQLITE_FULL
            thought = {"reasoning": "a thought that needs new pages " * 1_500}
            full = await _client_call(created["mcp_url"], "think", thought)
            health = await http.get("/health")
            server.log._conn.execute("PRAGMA max_page_count = 1073741823")  # space freed
            again = await _client_call(created["mcp_url"], "think", thought)
    assert full.is_error and full.structured_content["outcome"] == "log_unavailable"
    assert "disk holding the checkpoint log is full" in full.content[0].text
    assert health.status_code == 503 and "full" in health.json()["problems"][0]
    assert not again.is_error
    calls = [r for r in read_records(log) if r["kind"] == "call"]
    assert [(c["seq"], c["arguments"]) for c in calls] == [(1, thought)]


async def test_a_corpus_removed_or_truncated_while_serving_is_reported_and_calls_are_refused_and_logged(
    fixture_corpus, tmp_path
):
    corpus = tmp_path / "corpus.sqlite"
    corpus.write_bytes(fixture_corpus.read_bytes())
    log = tmp_path / "log.sqlite"
    with ServerThread(str(corpus), str(log)) as server:
        async with httpx2.AsyncClient(base_url=server.base_url, timeout=60) as http:
            created = (await http.post("/sessions", json={"item": "st_0001", "run": "corpus"})).json()
            before = await _client_call(created["mcp_url"], *INFO_A)
            data = corpus.read_bytes()
            corpus.write_bytes(data[: len(data) // 2])  # truncated in place
            truncated = await _client_call(created["mcp_url"], *READ_B)
            truncated_health = await http.get("/health")
            corpus.unlink()
            removed = await _client_call(created["mcp_url"], "search_papers", {"query": "paper"})
            removed_health = await http.get("/health")
            submit = await _client_call(created["mcp_url"], "submit_answer", {"answer": "B", "reasoning": "r"})
    assert before.structured_content["outcome"] == "ok"
    for result, fragment in ((truncated, "changed size"), (removed, "was removed")):
        assert result.is_error and result.structured_content["outcome"] == "server_error", result
        assert fragment in result.content[0].text and result.structured_content["cost"] == 0
    assert truncated_health.status_code == 503 and "changed size" in truncated_health.json()["problems"][0]
    assert removed_health.status_code == 503 and "was removed" in removed_health.json()["problems"][0]
    assert submit.structured_content["outcome"] == "ok"  # the agent can still answer
    calls = [r for r in read_records(log) if r["kind"] == "call"]
    assert [(c["tool"], c["outcome"], c["cost"]) for c in calls] == [
        ("get_paper_info", "ok", 1),
        ("read_section", "server_error", 0),
        ("search_papers", "server_error", 0),
        ("submit_answer", "ok", 0),
    ]
    assert "changed size" in calls[1]["message"]


def test_unknown_routes_and_methods_answer_in_json(fixture_corpus, tmp_path):
    with ServerThread(str(fixture_corpus), str(tmp_path / "log.sqlite")) as server:
        answers = [
            httpx2.request(method, server.base_url + path)
            for method, path in (
                ("GET", "/no-such-route"),
                ("DELETE", "/sessions"),
                ("GET", "/sessions/x/end"),
                ("PUT", "/health"),
            )
        ]
    assert [a.status_code for a in answers] == [404, 405, 405, 405]
    assert all(a.headers["content-type"] == "application/json" and a.json()["error"] for a in answers)
    assert answers[1].headers["allow"] == "POST"


def test_a_record_sqlite_cannot_store_fails_alone_and_the_writer_thread_lives(tmp_path):
    """A value SQLite cannot bind (an integer over 64 bits) fails its own write at once; the log goes on writing."""
    log = CheckpointLog(tmp_path / "log.sqlite", write_wait_s=30)
    try:
        with pytest.raises(LogUnavailable, match="cannot be stored.*OverflowError"):
            log.write({"kind": "call", "seq": 2**70})
        log.write({"kind": "call", "seq": 1})
        assert log.status.failing is None
    finally:
        log.close()
    assert [(r["kind"], r["seq"]) for r in read_records(tmp_path / "log.sqlite")] == [("call", 1)]


async def test_a_session_that_cannot_be_looked_up_in_the_log_is_not_called_unknown(
    fixture_corpus, tmp_path, monkeypatch
):
    """When the log cannot be read to find a session that is not in memory, the answer says so (and that it may
    exist), rather than telling the client the session is unknown and to create a new one."""
    from agenthop.server.log.checkpoint import LogError

    with ServerThread(str(fixture_corpus), str(tmp_path / "log.sqlite")) as server:

        def unreadable(*args, **kwargs):
            raise LogError("the checkpoint log is locked by another process (database is locked)")

        monkeypatch.setattr(server.sandbox.sessions, "revive", unreadable)
        result = await _client_call(f"{server.base_url}/mcp?session=some-ended-session", *INFO_A)
    text = result.content[0].text
    assert result.is_error and "cannot be looked up" in text and "locked by another process" in text
    assert "Create a new one" not in text


async def test_a_corpus_removed_then_put_back_unchanged_is_served_again_and_health_says_so(fixture_corpus, tmp_path):
    """Reads stayed server_error and /health 503 until a restart; the same bytes back end the failure,
    and a different file of the same size does not."""
    corpus = tmp_path / "corpus.sqlite"
    original = fixture_corpus.read_bytes()
    corpus.write_bytes(original)
    log = tmp_path / "log.sqlite"
    with ServerThread(str(corpus), str(log)) as server:
        async with httpx2.AsyncClient(base_url=server.base_url, timeout=60) as http:
            created = (await http.post("/sessions", json={"item": "st_0001", "run": "corpus"})).json()
            corpus.unlink()
            removed = await _client_call(created["mcp_url"], *INFO_A)
            removed_health = await http.get("/health")
            corpus.write_bytes(original[:-1] + bytes([original[-1] ^ 1]))  # same size, one bit differs
            os.utime(corpus, ns=(10**18, 10**18))  # its identity (inode, size, mtime) can never be the next file's
            impostor = await _client_call(created["mcp_url"], *INFO_A)
            impostor_health = await http.get("/health")
            corpus.unlink()
            corpus.write_bytes(original)  # a new file (new inode, new mtime) with the original bytes
            back = await _client_call(created["mcp_url"], *INFO_A)
            back_health = await http.get("/health")
            corpus.rename(tmp_path / "aside.sqlite")  # moved away and back: the accepted file itself returns
            aside = await _client_call(created["mcp_url"], *INFO_A)
            (tmp_path / "aside.sqlite").rename(corpus)
            moved_back = await _client_call(created["mcp_url"], *INFO_A)
            moved_health = (await http.get("/health")).json()
    assert removed.structured_content["outcome"] == "server_error" and "was removed" in removed.content[0].text
    assert "put back unchanged (the same file) or the server restarted" in removed.content[0].text
    assert removed_health.status_code == 503 and removed_health.json()["corpus_restored"] == []
    assert impostor.structured_content["outcome"] == "server_error" and "was replaced" in impostor.content[0].text
    assert impostor_health.status_code == 503 and "was replaced" in impostor_health.json()["problems"][0]
    assert back.structured_content["outcome"] == "ok" and back.structured_content["cost"] == 1
    health = back_health.json()
    assert back_health.status_code == 200 and health["status"] == "ok" and health["problems"] == []
    assert len(health["corpus_restored"]) == 1
    assert "was put back with the original bytes (sha256 " in health["corpus_restored"][0]
    assert aside.structured_content["outcome"] == "server_error" and moved_back.structured_content["outcome"] == "ok"
    assert (
        moved_health["status"] == "ok" and len(moved_health["corpus_restored"]) == 2
    )  # the end of that failure is said too
    calls = [(c["tool"], c["outcome"], c["cost"]) for c in read_records(log) if c["kind"] == "call"]
    assert calls == [("get_paper_info", "server_error", 0)] * 2 + [
        ("get_paper_info", "ok", 1),
        ("get_paper_info", "server_error", 0),
        ("get_paper_info", "ok", 1),
    ]
