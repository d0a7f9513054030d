"""Study mode on /play: enrolment with a code and consent, each participant's items balanced by cell in a seeded
order, a time limit per item, resuming with the key in another browser, and all of it in the checkpoint log."""

from __future__ import annotations

import hashlib
from collections import Counter

import httpx2
import pytest

from agenthop.server.log.checkpoint import read_records
from agenthop.server.papers import Corpus
from agenthop.server.play import study_gate
from agenthop.server.play.routes import PlayOptions, check_participant
from agenthop.server.play.study import StudyError, load_study
from agenthop.server.transport.http import ServerThread

CONSENT = "I agree that every action I take on this page is logged for the study."


def _study_file(tmp_path, split, **extra) -> object:
    fields = {
        "id": "pilot",
        "title": "Pilot",
        "code": "heron-42",
        "items": str(split),
        "items_per_participant": 6,
        "seed": 7,
        "instructions": "Find the evidence, then answer.",
        "consent": CONSENT,
        **extra,
    }
    lines = [f"{k} = {v!r}".replace("'", '"') if not isinstance(v, list) else f"{k} = {v!r}" for k, v in fields.items()]
    path = tmp_path / "study.toml"
    path.write_text("\n".join(line.replace("'", '"') for line in lines) + "\n")
    return load_study(path, check_participant=check_participant)


def _enrol(http, name, code="heron-42", consent=True):
    return http.post("/play/api/study/enrol", json={"participant": name, "code": code, "consent": consent})


def test_enrolment_needs_the_code_the_consent_and_a_listed_name(demo, tmp_path):
    corpus, split = demo
    study = _study_file(tmp_path, split, participants=["p01", "p02", "p03"])
    with (
        ServerThread(str(corpus), str(tmp_path / "log.sqlite"), play=PlayOptions(study=study)) as server,
        httpx2.Client(base_url=server.base_url) as http,
    ):
        before = http.get("/play/api/items", params={"participant": "p01"})
        answers = [
            _enrol(http, "p01", consent=False),
            _enrol(http, "p01", code="wrong-code"),
            _enrol(http, "mallory"),
            http.post("/play/api/sessions", json={"participant": "p01"}),
        ]
        enrolled = _enrol(http, "p01")
        again = _enrol(http, "p01")
        config = http.get("/play/api/config").json()
        with httpx2.Client(base_url=server.base_url) as other:
            stolen = _enrol(other, "p01")
    assert before.status_code == 403 and "has not enrolled" in before.json()["error"]
    assert [r.status_code for r in answers] == [400, 403, 403, 403]
    assert "consent" in answers[0].json()["error"] and "code" in answers[1].json()["error"]
    assert "not one of this study's participants" in answers[2].json()["error"]
    assert enrolled.status_code == 200 and again.json()["key"] == enrolled.json()["key"]
    assert stolen.status_code == 403
    assert config["study"]["consent"] == CONSENT and "code" not in config["study"]
    assert not [r for r in read_records(tmp_path / "log.sqlite") if r["kind"] == "session_start"]


def test_each_participant_gets_a_seeded_order_balanced_by_cell(demo, tmp_path):
    corpus, split = demo
    study = _study_file(tmp_path, split, participants=["p01", "p02", "p03"])
    cells = Corpus(corpus)
    cell_of = lambda i: (cells.item(i).question_type, cells.item(i).depth)  # noqa: E731
    orders = {p: study.assignment(p, k, cell_of) for k, p in enumerate(study.participants)}
    assert all(len(o) == 6 and len(set(o)) == 6 for o in orders.values())
    assert orders == {p: study.assignment(p, k, cell_of) for k, p in enumerate(study.participants)}  # seeded
    n_cells = len({cell_of(i) for i in study.items})
    for order in orders.values():  # six items over the cells: no cell gets two before every cell has one
        counts = Counter(cell_of(i) for i in order)
        assert max(counts.values()) - min(counts.get(c, 0) for c in {cell_of(i) for i in study.items}) <= 1
        assert len(counts) == min(6, n_cells)
    covered = Counter(i for o in orders.values() for i in o)
    assert max(covered.values()) == 1  # 18 slots over 64 items: three people play different items
    other_seed = _study_file(tmp_path, split, participants=["p01", "p02", "p03"], seed=8)
    assert other_seed.assignment("p01", 0, cell_of) != orders["p01"]


def test_a_participant_plays_their_own_order_and_the_log_records_the_study(demo, tmp_path):
    corpus, split = demo
    log = tmp_path / "log.sqlite"
    study = _study_file(tmp_path, split)
    with (
        ServerThread(str(corpus), str(log), play=PlayOptions(study=study)) as server,
        httpx2.Client(base_url=server.base_url) as ann,
    ):
        assert _enrol(ann, "ann").status_code == 200
        listing = ann.get("/play/api/items", params={"participant": "ann"}).json()
        order = [i["item_id"] for i in listing["items"]]
        skipped = ann.post("/play/api/sessions", json={"participant": "ann", "item": order[1]})
        first = ann.post("/play/api/sessions", json={"participant": "ann", "item": order[0]}).json()
        ann.post(
            f"/play/api/sessions/{first['session_id']}/call",
            json={"tool": "submit_answer", "arguments": {"answer": "A", "reasoning": "r"}},
        )
        second = ann.post("/play/api/sessions", json={"participant": "ann"}).json()
        key = listing["key"]
        with httpx2.Client(base_url=server.base_url) as laptop:  # another browser, with the key
            adopted = laptop.post("/play/api/key", json={"participant": "ann", "key": key})
            resumed = laptop.get("/play/api/items", params={"participant": "ann"}).json()
    assert len(order) == 6 and listing["next"] == order[0]
    assert skipped.status_code == 409 and f"the next one is {order[0]}" in skipped.json()["error"]
    assert second["item_id"] == order[1]
    assert adopted.status_code == 200
    assert [i["item_id"] for i in resumed["items"]] == order
    assert [i["status"] for i in resumed["items"]][:2] == ["finished", "in_progress"]
    starts = [r for r in read_records(log) if r["kind"] == "session_start"]
    studies = [s["client"]["study"] for s in starts]
    assert [s["slot"] for s in studies] == [1, 2] and all(s["order"] == order for s in studies)
    assert all(
        s["id"] == "pilot" and s["consent_sha256"] == hashlib.sha256(CONSENT.encode()).hexdigest() for s in studies
    )
    assert all(s["consented_at"] is not None and s["consented_at"] <= starts[0]["time"] for s in studies)


def test_the_time_limit_ends_an_attempt_and_the_late_call_is_not_run(demo, tmp_path, monkeypatch):
    corpus, split = demo
    log = tmp_path / "log.sqlite"
    study = _study_file(tmp_path, split, time_limit_s=300)
    with (
        ServerThread(str(corpus), str(log), play=PlayOptions(study=study)) as server,
        httpx2.Client(base_url=server.base_url) as bo,
    ):
        _enrol(bo, "bo")
        sid = bo.post("/play/api/sessions", json={"participant": "bo"}).json()["session_id"]
        early = bo.post(f"/play/api/sessions/{sid}/call", json={"tool": "think", "arguments": {"reasoning": "a"}})
        real = study_gate.clock
        monkeypatch.setattr(study_gate, "clock", lambda: real() + 301)
        late = bo.post(f"/play/api/sessions/{sid}/call", json={"tool": "think", "arguments": {"reasoning": "b"}})
    assert early.json()["time_limit_s"] == 300 and 0 < early.json()["time_left_s"] <= 300
    assert late.json()["ended"] and late.json()["termination"] == "abandoned" and late.json()["time_left_s"] is None
    records = [r for r in read_records(log) if r.get("session_id") == sid]
    end = next(r for r in records if r["kind"] == "session_end")
    assert end["reason"].startswith("time_limit:")
    assert [(r["tool"], r["outcome"]) for r in records if r["kind"] == "call"] == [
        ("think", "ok"),
        ("think", "session_ended"),
    ]


def test_enrolment_and_order_survive_a_restart(demo, tmp_path):
    corpus, split = demo
    log = tmp_path / "log.sqlite"
    study = _study_file(tmp_path, split)
    with ServerThread(str(corpus), str(log), play=PlayOptions(study=study)) as server:
        with httpx2.Client(base_url=server.base_url) as first, httpx2.Client(base_url=server.base_url) as second:
            _enrol(first, "cy")
            _enrol(second, "di")
            order = [i["item_id"] for i in second.get("/play/api/items", params={"participant": "di"}).json()["items"]]
            cookies = dict(second.cookies)
    with ServerThread(str(corpus), str(log), play=PlayOptions(study=study)) as server:
        with httpx2.Client(base_url=server.base_url, cookies=cookies) as second:
            again = [i["item_id"] for i in second.get("/play/api/items", params={"participant": "di"}).json()["items"]]
        with httpx2.Client(base_url=server.base_url) as thief:
            refused = _enrol(thief, "di")
    assert again == order and refused.status_code == 403


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"code": "abc"}, "at least 4 characters"),
        ({"items": []}, "field 'items'"),
        ({"participants": ["ok", "bad name"]}, "field 'participants'"),
        ({"time_limit_s": 0}, "time_limit_s"),
        ({"colour": "blue"}, "unknown field"),
    ],
)
def test_a_study_file_that_cannot_be_used_is_refused_with_the_field(demo, tmp_path, change, message):
    with pytest.raises(StudyError, match=message):
        _study_file(tmp_path, demo[1], **change)


def test_the_play_command_refuses_a_study_it_cannot_use_in_words(demo, tmp_path):
    from click.testing import CliRunner

    from agenthop.server.cli import main

    corpus, split = demo
    bad = tmp_path / "bad.toml"
    bad.write_text('id = "x"\ncode = "heron-42"\n')
    refused = CliRunner().invoke(main, ["play", "--study", str(bad), "--corpus", str(corpus), "--no-browser"])
    _study_file(tmp_path, split)
    mixed = CliRunner().invoke(
        main, ["play", "--study", str(tmp_path / "study.toml"), "--items", str(split), "--corpus", str(corpus)]
    )
    assert refused.exit_code == 1 and "--study: field 'items'" in refused.output
    assert mixed.exit_code == 2 and "drop --items" in mixed.output
