"""The play API behind /play: the turn cap, giving up, the next unplayed item read from the log,
bad requests; every call through the session's metering, as an MCP client's would be."""

from __future__ import annotations

import sqlite3

import httpx2
import pytest
from support.release_fixture import pid

from agenthop.server.log.checkpoint import read_records
from agenthop.server.play.routes import PlayOptions, played_items
from agenthop.server.transport.http import ServerThread


def _start(http, participant="alice", item=None) -> dict:
    r = http.post("/play/api/sessions", json={"participant": participant, "item": item})
    assert r.status_code == 201, r.text
    return r.json()


def _call(http, sid, tool, arguments) -> dict:
    r = http.post(f"/play/api/sessions/{sid}/call", json={"tool": tool, "arguments": arguments})
    assert r.status_code == 200, r.text
    return r.json()


def test_each_action_is_one_turn_and_the_turn_cap_ends_the_attempt(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    with (
        ServerThread(str(fixture_corpus), str(log), max_turns=3) as server,
        httpx2.Client(base_url=server.base_url) as http,
    ):
        sid = _start(http)["session_id"]
        results = [
            _call(http, sid, "get_paper_info", {"paper_id": pid("A")}),
            _call(http, sid, "read_section", {"paper_id": pid("A")}),  # no section: invalid, free, still a turn
            _call(http, sid, "think", {"reasoning": "out of turns"}),
            _call(http, sid, "think", {"reasoning": "too late"}),
        ]
    assert [(r["data"]["outcome"], r["data"]["cost"], r["turns"]) for r in results] == [
        ("ok", 1, 1),
        ("invalid", 0, 2),
        ("ok", 0, 3),
        ("session_ended", 0, 4),
    ]
    assert results[0]["text"].endswith("[Turn: 1 | Budget used: 1/30 (29 left)]")
    assert [r["ended"] for r in results] == [False, False, True, True] and results[2]["termination"] == "max_turns"
    records = list(read_records(log))
    assert [r["turn"] for r in records if r["kind"] == "call"] == [1, 2, 3, 4]
    end = [r for r in records if r["kind"] == "session_end"]
    assert [(e["termination"], e["reason"]) for e in end] == [("max_turns", "turn cap reached (3 actions)")]


def test_giving_up_ends_the_attempt_as_abandoned_once(fixture_corpus, tmp_path):
    with (
        ServerThread(str(fixture_corpus), str(tmp_path / "log.sqlite")) as server,
        httpx2.Client(base_url=server.base_url) as http,
    ):
        sid = _start(http)["session_id"]
        first = http.post(f"/play/api/sessions/{sid}/end", json={})
        again = http.post(f"/play/api/sessions/{sid}/end", json={})
        state = http.get(f"/play/api/sessions/{sid}").json()
    assert first.status_code == 200 and first.json()["termination"] == "abandoned"
    assert again.status_code == 409 and "already ended (abandoned)" in again.json()["error"]
    assert state["ended"] and state["answer"] is None and "reveal" not in state


def _give_up(http, sid) -> None:
    assert http.post(f"/play/api/sessions/{sid}/end", json={}).status_code == 200


def test_the_next_item_is_the_first_this_participant_has_not_finished_or_started(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    options = PlayOptions(items=("st_0002", "st_0001"))
    with (
        ServerThread(str(fixture_corpus), str(log), play=options) as server,
        httpx2.Client(base_url=server.base_url) as http,
    ):
        # A model's session on the first item is not alice's.
        http.post(
            "/sessions",
            json={"item": "st_0002", "run": "model", "client": {"name": "human-like", "participant": "alice"}},
        )
        first = _start(http)
        listing = http.get("/play/api/items", params={"participant": "alice"}).json()
        second = _start(http)  # the first is in progress: the next is the other item
        done = http.post("/play/api/sessions", json={"participant": "alice"})
        _give_up(http, first["session_id"])
        _give_up(http, second["session_id"])
        finished = http.get("/play/api/items", params={"participant": "alice"}).json()
        bob = http.get("/play/api/items", params={"participant": "bob"}).json()
        chosen = _start(http, "alice", "st_0002")  # playing an item again is allowed when chosen (reveal is off)
        outside = http.post("/play/api/sessions", json={"participant": "alice", "item": "mt_0001"})
    assert (first["item_id"], second["item_id"], chosen["item_id"]) == ("st_0002", "st_0001", "st_0002")
    assert chosen["session_id"] not in (first["session_id"], second["session_id"])
    assert [(i["item_id"], i["status"], i["session_id"]) for i in listing["items"]] == [
        ("st_0002", "in_progress", first["session_id"]),
        ("st_0001", "not_played", None),
    ]
    assert listing["next"] == "st_0001"
    assert done.status_code == 409 and done.json()["error"] == (
        "participant alice has played every item of this list or has an attempt in progress (st_0001, st_0002): resume it from the list"
    )
    assert [(i["item_id"], i["status"], i["played"]) for i in finished["items"]] == [
        ("st_0002", "finished", True),
        ("st_0001", "finished", True),
    ]
    assert finished["next"] is None
    assert bob["next"] == "st_0002" and not any(i["played"] for i in bob["items"])
    assert outside.status_code == 404 and "not in this server's play list" in outside.json()["error"]
    assert played_items(log, "alice") == {"st_0001", "st_0002"} and played_items(log, "carol") == set()
    starts = [r for r in read_records(log) if r["kind"] == "session_start" and r["client"].get("name") == "human"]
    assert {s["run"] for s in starts} == {"human-alice"} and all(s["mode"] == "item" for s in starts)


def test_an_unfinished_attempt_is_resumed_with_its_results(fixture_corpus, tmp_path):
    """Opening the item again (a closed tab, another browser) gives the same session, its results and its counts."""
    with (
        ServerThread(str(fixture_corpus), str(tmp_path / "log.sqlite")) as server,
        httpx2.Client(base_url=server.base_url) as http,
    ):
        made = _start(http, "dora", "st_0001")
        called = _call(http, made["session_id"], "get_paper_info", {"paper_id": pid("A")})
        again = _start(http, "dora", "st_0001")
        state = http.get(f"/play/api/sessions/{made['session_id']}").json()
    assert again["session_id"] == made["session_id"] and again["turns"] == 1 and again["budget_used"] == 1
    assert [(h["tool"], h["turn"], h["arguments"], h["text"]) for h in state["history"]] == [
        ("get_paper_info", 1, {"paper_id": pid("A")}, called["text"])
    ]
    assert state["seed"]["paper_id"] == pid("A") and state["question"] and state["reads"] == 0


def test_an_attempt_cut_short_by_a_restart_is_not_played_and_the_page_is_told_why(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    with ServerThread(str(fixture_corpus), str(log)) as server, httpx2.Client(base_url=server.base_url) as http:
        lost = _start(http, "erin", "st_0001")["session_id"]
        cookies = dict(http.cookies)  # the log keeps erin's key: the same browser carries on after the restart
    with (
        ServerThread(str(fixture_corpus), str(log)) as server,
        httpx2.Client(base_url=server.base_url, cookies=cookies) as http,
    ):
        listing = http.get("/play/api/items", params={"participant": "erin"}).json()
        state = http.get(f"/play/api/sessions/{lost}")
        restarted = _start(http, "erin")
    assert [(i["item_id"], i["status"]) for i in listing["items"]][:2] == [
        ("st_0001", "cut_short"),
        ("st_0002", "not_played"),
    ]
    assert listing["next"] == "st_0001"
    assert state.status_code == 404 and state.json()["error"] == (
        "your attempt at st_0001 was cut short: the server was restarted during it, and an attempt lives only as long as "
        "the server process. It does not count as played: start the item again"
    )
    assert restarted["item_id"] == "st_0001" and restarted["session_id"] != lost


def test_with_reveal_a_finished_item_cannot_be_played_again_by_the_same_person(fixture_corpus, tmp_path):
    options = PlayOptions(items=("st_0001", "st_0002"), reveal=True)
    with (
        ServerThread(str(fixture_corpus), str(tmp_path / "log.sqlite"), play=options) as server,
        httpx2.Client(base_url=server.base_url) as http,
    ):
        sid = _start(http, "fay", "st_0001")["session_id"]
        _give_up(http, sid)
        shown = http.get(f"/play/api/sessions/{sid}").json()
        again = http.post("/play/api/sessions", json={"participant": "fay", "item": "st_0001"})
        listing = http.get("/play/api/items", params={"participant": "fay"}).json()
        other = _start(http, "gus", "st_0001")
    assert "reveal" in shown and shown["reveal"]["correct"] in "ABCD"
    assert again.status_code == 409 and again.json()["error"] == (
        "participant fay has finished item st_0001 and this server shows the correct answer after an attempt: another "
        "attempt would not measure anything; choose another item"
    )
    assert [(i["item_id"], i["replayable"]) for i in listing["items"]] == [("st_0001", False), ("st_0002", True)]
    assert other["item_id"] == "st_0001"  # another person may still play it


@pytest.mark.parametrize(
    "body,status,words",
    [
        ({"participant": "al ice"}, 400, "participant must be 1-64 characters"),
        ({"participant": ""}, 400, "participant must be"),
        ({"participant": "a" * 65}, 400, "participant must be"),
        ({"participant": "alice", "item": 7}, 404, "not in this server's play list"),
        ([1, 2], 400, "the body must be a JSON object"),
    ],
)
def test_bad_requests_are_refused_with_a_reason_and_create_nothing(fixture_corpus, tmp_path, body, status, words):
    log = tmp_path / "log.sqlite"
    with ServerThread(str(fixture_corpus), str(log)) as server, httpx2.Client(base_url=server.base_url) as http:
        r = http.post("/play/api/sessions", json=body)
        sid = _start(http)["session_id"]
        bad_call = http.post(f"/play/api/sessions/{sid}/call", json={"tool": "think", "arguments": "x"})
        unknown = http.post("/play/api/sessions/nope/call", json={"tool": "think", "arguments": {"reasoning": "x"}})
        plain = http.post(f"/play/api/sessions/{sid}/call", content=b"{}", headers={"content-type": "text/plain"})
    assert r.status_code == status and words in r.json()["error"]
    assert bad_call.status_code == 400 and '"arguments"' in bad_call.json()["error"]
    assert unknown.status_code == 404 and "unknown play session" in unknown.json()["error"]
    assert plain.status_code == 415
    assert [r["kind"] for r in read_records(log)] == ["session_start"]  # only the good session; no call was made


def test_a_fixed_participant_overrides_the_page_and_run_labels_can_be_set(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    options = PlayOptions(participant="p07", run="study-1")
    with (
        ServerThread(str(fixture_corpus), str(log), play=options) as server,
        httpx2.Client(base_url=server.base_url) as http,
    ):
        config = http.get("/play/api/config").json()
        made = _start(http, participant="someone-else")
    start = next(r for r in read_records(log) if r["kind"] == "session_start")
    assert config["participant"] == "p07" and config["reveal"] is False
    assert made["participant"] == "p07" and start["run"] == "study-1" and start["client"]["participant"] == "p07"


def test_the_play_cli_reports_a_bad_items_file_and_an_unknown_item(fixture_corpus, tmp_path):
    from click.testing import CliRunner

    from agenthop.server.cli import main

    missing = CliRunner().invoke(
        main,
        [
            "play",
            "--corpus",
            str(fixture_corpus),
            "--items",
            str(tmp_path / "none.jsonl"),
            "--no-browser",
            "--log",
            str(tmp_path / "log.sqlite"),
        ],
    )
    unknown_file = tmp_path / "items.txt"
    unknown_file.write_text("st_0001\nzz_9999\n")
    unknown = CliRunner().invoke(
        main,
        [
            "play",
            "--corpus",
            str(fixture_corpus),
            "--items",
            str(unknown_file),
            "--no-browser",
            "--log",
            str(tmp_path / "log.sqlite"),
        ],
    )
    bad_name = CliRunner().invoke(
        main,
        [
            "play",
            "--corpus",
            str(fixture_corpus),
            "--participant",
            "a b",
            "--no-browser",
            "--log",
            str(tmp_path / "log.sqlite"),
        ],
    )
    assert missing.exit_code == 1 and "cannot read --items: items file not found" in missing.output
    assert (
        unknown.exit_code == 1
        and "--items: 1 item(s) of the play list are not in the corpus: zz_9999" in unknown.output
    )
    assert bad_name.exit_code == 1 and "--participant: participant must be 1-64 characters" in bad_name.output


def test_deeply_nested_bodies_and_an_unwritable_log_get_json_errors(fixture_corpus, tmp_path):
    """Nesting deeper than the JSON parser reads is a bad body (400) on both APIs; a locked log is a 503 that names
    the cause, and the session it could not record does not exist."""
    log = tmp_path / "log.sqlite"
    deep = b"[" * 30_000
    with (
        ServerThread(str(fixture_corpus), str(log), log_wait_s=0.5) as server,
        httpx2.Client(base_url=server.base_url, timeout=60) as http,
    ):
        nested = [
            http.post(path, content=deep, headers={"content-type": "application/json"})
            for path in ("/sessions", "/play/api/sessions")
        ]
        lock = sqlite3.connect(log, isolation_level=None)
        lock.execute("BEGIN IMMEDIATE")  # another process holding the log's write lock
        try:
            locked = http.post("/play/api/sessions", json={"participant": "alice"})
        finally:
            lock.execute("COMMIT")
            lock.close()
        after = _start(http)
    assert [(r.status_code, r.headers["content-type"]) for r in nested] == [(400, "application/json")] * 2
    assert all("must be JSON" in r.json()["error"] for r in nested)
    assert locked.status_code == 503 and "locked by another process" in locked.json()["error"]
    assert [r["session_id"] for r in read_records(log) if r["kind"] == "session_start"] == [after["session_id"]]
