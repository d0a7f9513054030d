"""The review page over HTTP: a candidate that is not a string (a JSON list or object) is a 400 that names the field,
as an unknown candidate is, and saves nothing; the page's old address (/audit) leads to it."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from support.paths import REPO

from agenthop.construct.review_app import ReviewServer
from agenthop.construct.verdicts import VerdictStore

CORPUS = REPO / "corpus.sqlite"


def _post(url: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.mark.parametrize("candidate", [["c-1"], {"id": "c-1"}, None, 7, "c-unknown"])
def test_a_candidate_that_is_not_one_under_review_is_a_clear_400(tmp_path, candidate):
    out = tmp_path / "run"
    (out / "work").mkdir(parents=True)
    # The verdict is refused before the candidate's fields are read, so an ID is all the stage file needs.
    (out / "work" / "sanity.jsonl").write_text(json.dumps({"id": "c-1"}) + "\n", encoding="utf-8")
    with ReviewServer(CORPUS, out) as server:
        status, reply = _post(
            server.url + "/api/verdicts", {"candidate": candidate, "auditor": "alice", "verdict": "pass", "axes": {}}
        )
    assert status == 400
    assert reply == {"error": f"candidate: not a candidate under review, found {candidate!r}"}
    store = VerdictStore(out / "audit" / "verdicts.sqlite")
    assert store.rows() == []
    store.close()


def test_the_pages_old_address_redirects_to_the_review_page(tmp_path):
    out = tmp_path / "run"
    (out / "work").mkdir(parents=True)
    (out / "work" / "sanity.jsonl").write_text(json.dumps({"id": "c-1"}) + "\n", encoding="utf-8")
    with ReviewServer(CORPUS, out) as server:
        assert server.url.endswith("/review")
        old = server.url.removesuffix("/review") + "/audit"
        with urllib.request.urlopen(old, timeout=30) as reply:  # follows the redirect
            assert reply.url == server.url
            assert "<title>AgentHop review</title>" in reply.read().decode()
