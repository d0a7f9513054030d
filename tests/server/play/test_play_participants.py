"""A participant's attempt answers only to that participant's key, on every route that can act on it: /play, /mcp
and /sessions. Keys and claimed names live in the log database (a restart keeps them), a name with an attempt is
never freed to make room, and the Origin guard compares scheme, host and port exactly (docs/web.md, Threat model)."""

from __future__ import annotations

import json

import httpx2
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from agenthop.server.log.checkpoint import read_records
from agenthop.server.transport.http import ServerThread

THINK = {"tool": "think", "arguments": {"reasoning": "mine"}}


def _start(http, participant="p1") -> str:
    listed = http.get("/play/api/items", params={"participant": participant})
    assert listed.status_code == 200, listed.text
    created = http.post("/play/api/sessions", json={"participant": participant})
    assert created.status_code == 201, created.text
    return created.json()["session_id"]


def _session_calls(log, sid) -> list[dict]:
    return [r for r in read_records(log) if r["kind"] == "call" and r["session_id"] == sid]


def test_filling_the_name_table_does_not_free_a_name_with_a_live_attempt(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    with ServerThread(str(fixture_corpus), str(log), live_kept=4) as server:
        with httpx2.Client(base_url=server.base_url) as p1, httpx2.Client(base_url=server.base_url) as other:
            sid = _start(p1)
            fills = [other.get("/play/api/items", params={"participant": f"fill{n}"}) for n in range(12)]
            other.cookies.clear()
            taken = other.get("/play/api/items", params={"participant": "p1"})
            taken_start = other.post("/play/api/sessions", json={"participant": "p1"})
            mine = p1.post(f"/play/api/sessions/{sid}/call", json=THINK)
    assert {r.status_code for r in fills} == {200}
    assert taken.status_code == 403 and "in use in another browser" in taken.json()["error"]
    assert taken_start.status_code == 403
    assert mine.status_code == 200 and mine.json()["turns"] == 1
    assert [c["arguments"]["reasoning"] for c in _session_calls(log, sid)] == ["mine"]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_play_session_id_alone_drives_nothing_over_mcp(fixture_corpus, tmp_path, mode):
    log = tmp_path / "log.sqlite"
    with ServerThread(str(fixture_corpus), str(log)) as server:
        with httpx2.Client(base_url=server.base_url) as p1:
            sid = _start(p1)
        async with (
            httpx2.AsyncClient() as h,
            Client(streamable_http_client(f"{server.base_url}/mcp?session={sid}", http_client=h), mode=mode) as client,
        ):
            try:
                result = await client.call_tool("submit_answer", {"answer": "A", "reasoning": "not p1"})
                refused, text = result.is_error, result.content[0].text
            except MCPError as exc:
                refused, text = True, exc.error.message
        with httpx2.Client(base_url=server.base_url) as stranger:
            state = stranger.get(f"/sessions/{sid}")
    assert refused and "/play" in text, text
    assert state.status_code == 403
    records = [r for r in read_records(log) if r.get("session_id") == sid]
    assert [r["kind"] for r in records] == ["session_start"]  # no call, no end: the attempt is p1's, untouched


def test_a_play_session_id_alone_cannot_end_the_attempt_over_the_session_api(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    with ServerThread(str(fixture_corpus), str(log)) as server, httpx2.Client(base_url=server.base_url) as p1:
        sid = _start(p1)
        with httpx2.Client(base_url=server.base_url) as stranger:
            ended = stranger.post(f"/sessions/{sid}/end", json={"termination": "abandoned"})
            forged = stranger.post(
                "/sessions", json={"item": "st_0001", "client": {"name": "human", "participant": "p1"}}
            )
        still = p1.post(f"/play/api/sessions/{sid}/call", json=THINK)
    assert ended.status_code == 403 and "/play" in ended.json()["error"]
    assert forged.status_code == 400 and "reserved" in forged.json()["error"]
    assert still.status_code == 200 and not still.json()["ended"]
    assert not [r for r in read_records(log) if r["kind"] == "session_end"]


def test_the_origin_guard_compares_scheme_host_and_port_exactly(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    with ServerThread(str(fixture_corpus), str(log)) as server, httpx2.Client(base_url=server.base_url) as p1:
        port = server.port
        _start(p1)
        foreign = [
            f"http://127.0.0.1:{port + 1}",
            f"http://localhost:{port + 1}",
            f"https://127.0.0.1:{port}",
            "http://127.0.0.1",
            f"http://[::1]:{port + 1}",
        ]
        refused = [
            p1.post("/play/api/sessions", json={"participant": "p1", "item": "st_0002"}, headers={"Origin": o})
            for o in foreign
        ]
        # A page on another port can send a GET without Origin; the browser still says where it came from.
        blind = p1.get(
            "/play/api/items",
            params={"participant": "p1"},
            headers={"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "no-cors"},
        )
        own = p1.post(
            "/play/api/sessions",
            json={"participant": "p1", "item": "st_0002"},
            headers={"Origin": f"http://localhost:{port}", "Sec-Fetch-Site": "same-origin"},
        )
    assert [r.status_code for r in refused] == [403] * len(foreign), [r.text for r in refused]
    assert blind.status_code == 403
    assert own.status_code == 201
    starts = [r for r in read_records(log) if r["kind"] == "session_start"]
    assert [s["item_id"] for s in starts] == ["st_0001", "st_0002"]


def test_a_restart_keeps_names_and_keys(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    with ServerThread(str(fixture_corpus), str(log)) as server, httpx2.Client(base_url=server.base_url) as p1:
        _start(p1)
        cookies = dict(p1.cookies)
    with ServerThread(str(fixture_corpus), str(log)) as server:
        with httpx2.Client(base_url=server.base_url) as thief:
            listed = thief.get("/play/api/items", params={"participant": "p1"})
            started = thief.post("/play/api/sessions", json={"participant": "p1"})
            adopted = thief.post("/play/api/key", json={"participant": "p1", "key": "x" * 43})
        with httpx2.Client(base_url=server.base_url, cookies=cookies) as p1:
            back = p1.get("/play/api/items", params={"participant": "p1"})
    assert listed.status_code == 403 and started.status_code == 403 and adopted.status_code == 403
    assert back.status_code == 200 and back.json()["items"][0]["status"] == "cut_short"
    runs = {r["run"] for r in read_records(log) if r["kind"] == "session_start"}
    assert runs == {"human-p1"} and len([r for r in read_records(log) if r["kind"] == "session_start"]) == 1


def test_a_name_with_attempts_but_no_kept_key_is_not_handed_to_a_newcomer(fixture_corpus, tmp_path):
    """Attempts logged before keys were kept (or under --participant) belong to someone the server cannot name."""
    log = tmp_path / "log.sqlite"
    from agenthop.server.play.routes import PlayOptions

    with ServerThread(str(fixture_corpus), str(log), play=PlayOptions(participant="p9")) as server:
        with httpx2.Client(base_url=server.base_url) as fixed:
            assert fixed.post("/play/api/sessions", json={}).status_code == 201
    with ServerThread(str(fixture_corpus), str(log)) as server, httpx2.Client(base_url=server.base_url) as other:
        listed = other.get("/play/api/items", params={"participant": "p9"})
    assert listed.status_code == 403 and "no key" in listed.json()["error"]


def test_a_listing_alone_does_not_keep_a_name_across_a_restart(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    with ServerThread(str(fixture_corpus), str(log)) as server, httpx2.Client(base_url=server.base_url) as squatter:
        assert squatter.get("/play/api/items", params={"participant": "p2"}).status_code == 200
    with ServerThread(str(fixture_corpus), str(log)) as server, httpx2.Client(base_url=server.base_url) as p2:
        listed = p2.get("/play/api/items", params={"participant": "p2"})
        started = p2.post("/play/api/sessions", json={"participant": "p2"})
    assert listed.status_code == 200 and started.status_code == 201
    assert json.loads(started.text)["participant"] == "p2"
