"""/play obeys the HTTP server's Host/Origin/token rules, and nothing any play route or asset returns reveals
gold, before or after an attempt, unless the server was started with reveal (SPEC 4.6)."""

from __future__ import annotations

import json
import re

import httpx2
from conftest import GOLD_WORDS

from agenthop.server.corpus_schema import open_corpus
from agenthop.server.log.checkpoint import read_records
from agenthop.server.play.routes import ASSETS, PlayOptions
from agenthop.server.transport.http import ServerThread

TOKEN = "play-token-51c2"
PAGES = ["/play", *[f"/play/assets/{name}" for name in ASSETS], "/play/api/config", "/play/api/items?participant=alice"]


def _play_requests(sid: str) -> list[tuple[str, str, dict | None]]:
    return [("GET", path, None) for path in PAGES] + [
        ("POST", "/play/api/sessions", {"participant": "alice"}),
        ("GET", f"/play/api/sessions/{sid}", None),
        ("POST", f"/play/api/sessions/{sid}/call", {"tool": "think", "arguments": {"reasoning": "x"}}),
        ("POST", f"/play/api/sessions/{sid}/end", {}),
    ]


def test_every_play_route_needs_the_bearer_token_when_one_is_set(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with (
        ServerThread(str(fixture_corpus), str(log), auth_token=TOKEN) as server,
        httpx2.Client(base_url=server.base_url) as http,
    ):
        sid = http.post("/play/api/sessions", json={"participant": "alice"}, headers=auth).json()["session_id"]
        denied = [http.request(m, p, json=b) for m, p, b in _play_requests(sid)]
        wrong = [
            http.request(m, p, json=b, headers={"Authorization": "Bearer nope"}) for m, p, b in _play_requests(sid)
        ]
        allowed = [http.request(m, p, json=b, headers=auth) for m, p, b in _play_requests(sid)]
    assert {r.status_code for r in denied + wrong} == {401}
    assert all("bearer token" in r.json()["error"] for r in denied + wrong)
    assert [r.status_code for r in allowed] == [200] * len(PAGES) + [201, 200, 200, 200]
    calls = [r for r in read_records(log) if r["kind"] == "call"]
    assert len(calls) == 1  # only the authorised call ran


def test_foreign_host_and_origin_are_refused_on_every_play_route(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    with ServerThread(str(fixture_corpus), str(log)) as server, httpx2.Client(base_url=server.base_url) as http:
        port = server.port
        sid = http.post("/play/api/sessions", json={"participant": "alice"}).json()["session_id"]
        hostile = [
            {"Host": "evil.example"},
            {"Host": f"evil.example:{port}"},
            {"Host": "127.0.0.1"},
            {"Host": f"127.0.0.1.evil.example:{port}"},
            {"Origin": "http://evil.example"},
            {"Origin": f"http://evil.example:{port}"},
            {"Origin": "null"},
        ]
        refused = [(h, http.request(m, p, json=b, headers=h)) for h in hostile for m, p, b in _play_requests(sid)]
        same_origin = http.post(
            f"/play/api/sessions/{sid}/call",
            json={"tool": "think", "arguments": {"reasoning": "ok"}},
            headers={"Origin": f"http://127.0.0.1:{port}"},
        )
    assert all(r.status_code == (421 if "Host" in h else 403) for h, r in refused), [r.status_code for _, r in refused]
    assert same_origin.status_code == 200 and same_origin.json()["turns"] == 1
    kinds = [r["kind"] for r in read_records(log)]
    assert kinds == ["session_start", "call"]  # the refused requests created and called nothing


def _gold_values(corpus) -> tuple[list[str], list[str]]:
    """(gold paper IDs, correct letters) of every item, read with gold access."""
    conn = open_corpus(corpus, allow_gold=True)
    rows = conn.execute("SELECT gold_paper_ids, correct_index FROM gold_items").fetchall()
    return [p for gp, _ in rows for p in re.findall(r"[0-9a-f]{40}", gp)], ["ABCD"[ci] for _, ci in rows]


def _without_history(response, metered: list[str]) -> str:
    """A session's state without its history, after checking that the history only repeats results the tool calls
    returned (metered answers, which may show a gold paper as they would to any agent)."""

    state = response.json()
    returned = {json.loads(m)["text"] for m in metered}
    assert all(h["text"] in returned for h in state.pop("history")), "the history holds a text no call returned"
    return json.dumps(state)


def _crawl(http, corpus) -> tuple[list[str], list[str]]:
    """(unmetered, metered) answers: every play page and asset, the item list, session creation and state before and
    after an ending; and every tool on papers of every item through the play API."""
    conn = open_corpus(corpus)
    unmetered = [http.get(path).text for path in PAGES]
    metered = []
    for (item,) in conn.execute("SELECT item_id FROM items"):
        created = http.post("/play/api/sessions", json={"participant": "crawler", "item": item})
        unmetered.append(created.text)
        sid = created.json()["session_id"]
        papers = [p for (p,) in conn.execute("SELECT paper_id FROM item_nodes WHERE item_id = ?", (item,))]
        for paper in papers[:4]:
            for tool, args in (
                ("get_paper_info", {}),
                ("get_references", {}),
                ("list_sections", {}),
                ("read_section", {"section": "A"}),
            ):
                metered.append(
                    http.post(
                        f"/play/api/sessions/{sid}/call", json={"tool": tool, "arguments": {"paper_id": paper, **args}}
                    ).text
                )
        metered.append(
            http.post(
                f"/play/api/sessions/{sid}/call",
                json={"tool": "search_papers", "arguments": {"query": "gold correct answer", "top_k": 10}},
            ).text
        )
        unmetered.append(_without_history(http.get(f"/play/api/sessions/{sid}"), metered))
        metered.append(
            http.post(
                f"/play/api/sessions/{sid}/call",
                json={"tool": "submit_answer", "arguments": {"answer": "A", "reasoning": "x"}},
            ).text
        )
        unmetered.append(_without_history(http.get(f"/play/api/sessions/{sid}"), metered))
        unmetered.append(http.post(f"/play/api/sessions/{sid}/end", json={}).text)
    unmetered.append(http.get("/play/api/items", params={"participant": "crawler"}).text)
    return unmetered, metered


def test_a_crawl_of_every_play_route_and_asset_finds_no_gold(canary_corpus, tmp_path):
    gold_ids, _ = _gold_values(canary_corpus)
    with (
        ServerThread(str(canary_corpus), str(tmp_path / "log.sqlite")) as server,
        httpx2.Client(base_url=server.base_url, timeout=30) as http,
    ):
        unmetered, metered = _crawl(http, canary_corpus)
    assert len(unmetered) == len(PAGES) + 3 * 4 + 1 and len(metered) > 30
    for blob in unmetered + metered:
        assert not any(word in blob for word in GOLD_WORDS), blob[:300]
        assert '"reveal":{' not in blob, blob[:300]  # a reveal object
    for blob in unmetered:  # a gold paper may be shown by a tool, as to any agent, but is never singled out
        assert not any(pid in blob for pid in gold_ids), blob[:300]


def test_with_reveal_only_an_ended_attempt_shows_its_correct_option_and_gold_papers(canary_corpus, tmp_path):
    gold_ids, letters = _gold_values(canary_corpus)
    with (
        ServerThread(str(canary_corpus), str(tmp_path / "log.sqlite"), play=PlayOptions(reveal=True)) as server,
        httpx2.Client(base_url=server.base_url) as http,
    ):
        config = http.get("/play/api/config").json()
        created = http.post("/play/api/sessions", json={"participant": "teacher", "item": "st_0001"}).json()
        sid = created["session_id"]
        during = http.post(
            f"/play/api/sessions/{sid}/call", json={"tool": "think", "arguments": {"reasoning": "x"}}
        ).json()
        answered = http.post(
            f"/play/api/sessions/{sid}/call",
            json={"tool": "submit_answer", "arguments": {"answer": "A", "reasoning": "x"}},
        )
        after = answered.json()
    assert config["reveal"] is True
    assert "reveal" not in created and "reveal" not in during
    assert not any(pid in str(created) + str(during) for pid in gold_ids)
    assert '"reveal":{' in answered.text  # what the crawl above looks for
    assert after["reveal"]["correct"] in letters and after["reveal"]["papers"]
    assert all(p["paper_id"] in gold_ids for p in after["reveal"]["papers"])


def test_a_participants_attempts_need_the_key_their_browser_was_given(fixture_corpus, tmp_path):
    """The name alone (or the session ID) neither lists, starts nor acts on another's attempt;
    the key, typed into another browser, moves the attempts there; a fixed participant asks for no key."""
    log = tmp_path / "log.sqlite"
    with (
        ServerThread(str(fixture_corpus), str(log)) as server,
        httpx2.Client(base_url=server.base_url) as bob,
        httpx2.Client(base_url=server.base_url) as other,
    ):
        first = bob.get("/play/api/items", params={"participant": "bob"})
        key = first.json()["key"]
        cookie = first.headers["set-cookie"]
        sid = bob.post("/play/api/sessions", json={"participant": "bob"}).json()["session_id"]
        listed = bob.get("/play/api/items", params={"participant": "bob"}).json()
        refused = [
            other.get("/play/api/items", params={"participant": "bob"}),
            other.post("/play/api/sessions", json={"participant": "bob", "item": listed["items"][0]["item_id"]}),
            other.get(f"/play/api/sessions/{sid}"),
            other.post(
                f"/play/api/sessions/{sid}/call",
                json={"tool": "submit_answer", "arguments": {"answer": "A", "reasoning": "x"}},
            ),
            other.post(f"/play/api/sessions/{sid}/end", json={}),
            other.post("/play/api/key", json={"participant": "bob", "key": "y" * 43}),
        ]
        adopted = other.post("/play/api/key", json={"participant": "bob", "key": key})
        resumed = other.get("/play/api/items", params={"participant": "bob"}).json()
        acted = other.post(
            f"/play/api/sessions/{sid}/call", json={"tool": "think", "arguments": {"reasoning": "from my laptop"}}
        )
    assert (
        len(key) >= 32
        and "HttpOnly" in cookie
        and "SameSite=strict" in cookie.replace("Strict", "strict")
        and "Path=/play" in cookie
    )
    assert key not in str(list(read_records(log)))  # no secret in the log
    assert listed["items"][0]["session_id"] == sid
    assert [r.status_code for r in refused] == [403] * 6
    assert all(sid not in r.text for r in refused)
    assert "participant bob is in use in another browser" in refused[0].json()["error"]
    assert "that is not bob's key" in refused[-1].json()["error"]
    assert adopted.status_code == 200 and resumed["items"][0]["session_id"] == sid and acted.status_code == 200
    assert [r["kind"] for r in read_records(log)] == ["session_start", "call"]  # only the key holder's call ran

    with (
        ServerThread(
            str(fixture_corpus), str(tmp_path / "fixed.sqlite"), play=PlayOptions(participant="p07")
        ) as server,
        httpx2.Client(base_url=server.base_url) as one,
        httpx2.Client(base_url=server.base_url) as two,
    ):
        a = one.get("/play/api/items", params={"participant": "x"})
        b = two.get("/play/api/items", params={"participant": "x"})
    assert a.status_code == b.status_code == 200 and a.json()["key"] is None and "set-cookie" not in b.headers


def test_keys_are_kept_like_live_sessions_so_unused_names_do_not_grow_memory(fixture_corpus, tmp_path):
    """The server holds at most live_kept claimed names, least recently used out first: a name no one has used since
    that many others is free again (its attempts left memory by the same rule)."""
    with (
        ServerThread(str(fixture_corpus), str(tmp_path / "log.sqlite"), live_kept=2) as server,
        httpx2.Client(base_url=server.base_url) as first,
        httpx2.Client(base_url=server.base_url) as other,
    ):
        for name in ("ann", "ben", "cat"):
            assert first.get("/play/api/items", params={"participant": name}).status_code == 200
        kept = [other.get("/play/api/items", params={"participant": name}).status_code for name in ("ben", "cat")]
        freed = other.get("/play/api/items", params={"participant": "ann"})
    assert kept == [403, 403] and freed.status_code == 200
