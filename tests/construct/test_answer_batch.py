"""tools/answer_batch.py, the way a person (or an agent standing in for a model) answers a construction batch file:
split among answerers, each reply checked with the pipeline's own rules before it is kept, packed into the Batch
output format. Answering every batch file of a scripted run with it gives the same release as the direct run."""

from __future__ import annotations

import importlib.util
import json

import pytest
from support.construct_runs import CORPUS, build, release_parts, settings
from support.construct_script import ConstructScript
from support.fake_openai import FakeOpenAI
from support.paths import REPO

from agenthop.construct.batchfiles import BatchPending

spec = importlib.util.spec_from_file_location("answer_batch", REPO / "tools" / "answer_batch.py")
answer_batch = importlib.util.module_from_spec(spec)
spec.loader.exec_module(answer_batch)


def reply_text(reply) -> str | None:
    return reply["choices"][0]["message"]["content"] if isinstance(reply, dict) else None


@pytest.mark.slow
def test_every_batch_file_answered_through_the_tool_gives_the_direct_runs_release(tmp_path, capsys):
    script = ConstructScript(CORPUS)
    with FakeOpenAI(script) as fake:
        s = settings(fake.base_url)
        build(tmp_path / "direct", s)
    # The same script: its outcomes were fixed by the direct run (which replies are bad the first time, and so on).
    out, outputs, rejected = tmp_path / "batch", [], []
    for round_ in range(40):
        try:
            result = build(out, s, model_mode="batch", batch_outputs=tuple(outputs))
            break
        except BatchPending as pending:
            parts = tmp_path / f"parts-{round_}"
            for batch in pending.files:
                answer_batch.main(["split", str(batch), "--parts", "2", "--out", str(parts)])
            for part in sorted(parts.glob("*.part*.jsonl")):
                if part.name.endswith(".replies.jsonl"):
                    continue
                for line in part.read_text().splitlines():
                    request = json.loads(line)
                    text = reply_text(script(request["body"], None))
                    if text is None:  # an HTTP error in the script: left unanswered, so the run asks again
                        continue
                    args = ["answer", str(out), "--corpus", str(CORPUS), str(part), request["custom_id"]]
                    if answer_batch.main([*args, "--reply", text]) != 0:
                        # The tool refused it as the run would; kept anyway, the run must refuse it too and ask again.
                        rejected.append(request["custom_id"])
                        assert answer_batch.main([*args, "--reply", text, "--give-up"]) == 0
            packed = tmp_path / f"output-{round_}.jsonl"
            answer_batch.main(["pack", *map(str, sorted(parts.glob("*.part?.jsonl"))), "--out", str(packed)])
            outputs.append(packed)
    else:
        pytest.fail("the batch rounds never end")
    assert result["release"]["items"] > 0
    assert any(
        c.startswith("qa-") for c in rejected
    )  # the script's bad Q/A replies were caught before the run saw them
    assert release_parts(out / "release") == release_parts(tmp_path / "direct" / "release")
    assert "NOT KEPT" in capsys.readouterr().out


def test_a_reply_the_run_would_refuse_is_not_kept(tmp_path, capsys):
    part = tmp_path / "qa-01.part1.jsonl"
    body = {"model": "m", "messages": [{"role": "user", "content": "write JSON"}]}
    part.write_text(
        json.dumps({"custom_id": "chains-abc-a1", "method": "POST", "url": "/v1/chat/completions", "body": body}) + "\n"
    )
    args = ["answer", str(tmp_path), "--corpus", str(CORPUS), str(part), "chains-abc-a1"]
    assert answer_batch.main([*args, "--reply", "no JSON here"]) == 1
    assert "NOT KEPT" in capsys.readouterr().out and not answer_batch.replies_path(part).read_text()
    assert answer_batch.main([*args, "--reply", '{"score": 5}']) == 0
    answer_batch.main(["pack", str(part), "--out", str(tmp_path / "out.jsonl")])
    line = json.loads((tmp_path / "out.jsonl").read_text())
    assert line["custom_id"] == "chains-abc-a1" and line["response"]["status_code"] == 200
    assert line["response"]["body"]["model"] == "m"  # the model named in the request, as the Batch API answers
    assert json.loads(line["response"]["body"]["choices"][0]["message"]["content"]) == {"score": 5}


def test_split_by_kind_never_gives_one_answerer_two_sources_of_one_question(tmp_path, capsys):
    batch = tmp_path / "distractors-01.jsonl"
    body = {"model": "m", "messages": [{"role": "user", "content": "answer"}]}
    ids = [f"distractors-c-{c}-{kind}-a1" for c in ("0aaa", "0bbb", "0ccc", "0ddd") for kind in KINDS]
    batch.write_text(
        "".join(
            json.dumps({"custom_id": i, "method": "POST", "url": "/v1/chat/completions", "body": body}) + "\n"
            for i in ids
        )
    )
    answer_batch.main(["split", str(batch), "--parts", "6", "--by-kind", "--out", str(tmp_path / "parts")])
    parts = [
        [json.loads(line)["custom_id"] for line in p.read_text().splitlines()]
        for p in sorted((tmp_path / "parts").glob("*.jsonl"))
    ]
    assert sorted(i for part in parts for i in part) == sorted(ids)  # every request dealt, once
    for part in parts:
        assert part and len({i.split("-")[3] for i in part}) == 1  # one kind of source per part
        assert len({i.split("-")[2] for i in part}) == len(part)  # so each question at most once
    with pytest.raises(SystemExit, match="3 kinds divide"):
        answer_batch.main(["split", str(batch), "--parts", "4", "--by-kind", "--out", str(tmp_path / "other")])


KINDS = ("no_context", "seed_only", "wrong_paper")


def test_an_informed_writers_reply_is_checked_option_by_option(tmp_path, capsys):
    gold = "The gated model scores 4.2 points higher on the test set than the plain one."
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "qa.jsonl").write_text(json.dumps({"id": "c-0aaa", "answer": gold}) + "\n")
    part = tmp_path / "distractors-04.part1.jsonl"
    cid = "distractors-c-0aaa-informed-a1"
    body = {"model": "m", "messages": [{"role": "user", "content": "write three wrong options"}]}
    part.write_text(
        json.dumps({"custom_id": cid, "method": "POST", "url": "/v1/chat/completions", "body": body}) + "\n"
    )
    args = ["answer", str(tmp_path), "--corpus", str(CORPUS), str(part), cid, "--reply"]
    good = {
        "seed_only": "The plain model scores 2.7 points higher on the test set than the gated one.",
        "wrong_paper": "The attention model gains 6.1 points over the recurrent baseline on the held-out data of the task.",
        "no_context": "The gated variant trails the plain one by 1.3 points on the development set.",
    }
    assert answer_batch.main([*args, json.dumps({**good, "no_context": "Lower."})]) == 1
    assert "no_context: the answer has 1 words" in capsys.readouterr().out
    assert answer_batch.main([*args, json.dumps({**good, "seed_only": gold})]) == 1  # the gold itself
    shorter = "The attention model gains 6.1 points over the recurrent baseline on the held-out data."
    assert answer_batch.main([*args, json.dumps({**good, "wrong_paper": shorter})]) == 1
    assert "no wrong answer is longer than the correct answer (15 words)" in capsys.readouterr().out
    assert answer_batch.main([*args, json.dumps(good)]) == 0
    assert json.loads(json.loads(answer_batch.replies_path(part).read_text())["reply"]) == good


def test_a_restatement_is_checked_against_the_options_its_request_shows(tmp_path, capsys):
    options = [
        "The gated model scores 4.2 points higher than the plain one on the test set.",
        "The plain model scores 2.7 points higher than the gated one on the test set.",
        "Both models score within 0.3 points of each other on the test set.",
        "The gated model trails the plain one by 1.3 points on the development set.",
    ]
    content = "Question: how do they compare?\n" + "".join(f"({x}) {o}\n" for x, o in zip("ABCD", options))
    part = tmp_path / "distractors-07.part1.jsonl"
    cid = "distractors-c-0aaa-restate-a2"  # a second attempt: the earlier reply and what was wrong follow the options
    asked = [{"role": "system", "content": "edit"}, {"role": "user", "content": content}]
    retry = [{"role": "assistant", "content": "{}"}, {"role": "user", "content": "That reply cannot be used: ..."}]
    body = {"model": "m", "messages": asked + retry}
    part.write_text(
        json.dumps({"custom_id": cid, "method": "POST", "url": "/v1/chat/completions", "body": body}) + "\n"
    )
    args = ["answer", str(tmp_path), "--corpus", str(CORPUS), str(part), cid, "--reply"]
    good = {x: f"In short, {o[:1].lower()}{o[1:]}" for x, o in zip("ABCD", options)}
    assert (
        answer_batch.main([*args, json.dumps({**good, "C": "Both models score within 0.5 points on the test set."})])
        == 1
    )
    assert "option C must keep its figures exactly as given (its figures: 0.3)" in capsys.readouterr().out
    assert answer_batch.main([*args, json.dumps(good)]) == 0
