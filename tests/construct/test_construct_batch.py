"""Model stages without a model at hand: batch files in the OpenAI Batch format, and recorded responses.

A scripted model on loopback builds a release directly, recording every response. The same release is then built
(1) through batch files only, the scripted model answering each file as the Batch API would, with one error line and
one missing line in the first output (named, asked again, nothing lost), and (2) from the recorded responses alone,
with no endpoint and no network, byte for byte; a request changed since it was recorded is refused by name."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from support.construct_runs import CORPUS, build, release_parts, settings, tree_digest
from support.construct_script import ConstructScript
from support.fake_openai import FakeOpenAI

from agenthop.construct import prompts
from agenthop.construct.batchfiles import URL, BatchError, BatchPending
from agenthop.construct.client import ModelClient
from agenthop.construct.recorded import ReplayError


def output_line(n: int, request: dict, reply) -> dict:
    """What the Batch API writes for one request: the completion, or an error status."""
    if isinstance(reply, dict):
        response = {"status_code": 200, "request_id": f"req_{n}", "body": reply}
    else:  # a scripted HTTP error (the "retry_then_ok" chain's first distractor call)
        response = {"status_code": reply.status, "request_id": f"req_{n}", "body": {"error": {"message": "boom"}}}
    return {"id": f"batch_req_{n}", "custom_id": request["custom_id"], "response": response, "error": None}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A direct run on the scripted model, recording every response; the script (its outcomes fixed by then)."""
    tmp = tmp_path_factory.mktemp("recorded")
    script = ConstructScript(CORPUS)
    with FakeOpenAI(script) as fake:
        s = settings(fake.base_url)
        result = build(tmp / "direct", s, responses=tmp / "responses.jsonl.gz")
    assert result["release"]["items"] > 0
    return tmp, script, s


def test_batch_files_round_trip_with_an_error_line_and_a_missing_line(recorded, tmp_path):
    tmp, script, s = recorded
    out, echoed = tmp_path / "batch", []
    outputs: list[Path] = []
    rounds, broken = 0, None
    while True:
        try:
            result = build(out, s, model_mode="batch", batch_outputs=tuple(outputs), echo=echoed.append)
            break
        except BatchPending as pending:
            rounds += 1
            assert rounds < 40, "the batch rounds never end"
            assert "--batch-output" in str(pending) and all(str(f) in str(pending) for f in pending.files)
            requests = [json.loads(line) for f in pending.files for line in f.read_text().splitlines()]
            assert len(requests) == pending.count > 0
            assert all(r["method"] == "POST" and r["url"] == URL and r["custom_id"] for r in requests)
            assert len({r["custom_id"] for r in requests}) == len(requests)
            # Portable to every writer of the format: letters, digits, '_' and '-', at most 64 characters.
            assert all(re.fullmatch(r"[A-Za-z0-9_-]{1,64}", r["custom_id"]) for r in requests)
            lines = [output_line(n, r, script(r["body"], None)) for n, r in enumerate(requests)]
            if rounds == 2 and len(lines) >= 3:
                # One request failed in the batch, one is not in the output at all.
                failed, missing = lines[0]["custom_id"], lines[1]["custom_id"]
                lines[0] = {
                    "id": "batch_req_x",
                    "custom_id": failed,
                    "response": None,
                    "error": {"code": "server_error", "message": "the batch worker crashed"},
                }
                del lines[1]
                broken = (failed, missing)
            # Saved beside the request files, as a user may: they are not read as requests.
            path = out / "work" / "batch" / f"output-{rounds:02d}.jsonl"
            path.write_text("".join(json.dumps(line) + "\n" for line in lines))
            outputs.append(path)
            if broken:
                # The next run names both, with why, before it writes them to a new batch file.
                with pytest.raises(BatchPending) as again:
                    build(out, s, model_mode="batch", batch_outputs=tuple(outputs), echo=echoed.append)
                report = "\n".join(echoed)
                assert f"custom_id {broken[0]}: the batch reported an error: the batch worker crashed" in report
                assert f"custom_id {broken[1]}: no line in any --batch-output file" in report
                requests = [json.loads(line) for f in again.value.files for line in f.read_text().splitlines()]
                # Asked again: the two, beside retries of replies the stage could not use; nothing answered is re-asked.
                asked_again = {r["custom_id"] for r in requests}
                answered_before = {
                    json.loads(line)["custom_id"]
                    for o in outputs
                    for line in o.read_text().splitlines()
                    if json.loads(line)["error"] is None
                }
                assert set(broken) <= asked_again and not asked_again & answered_before
                answered = [output_line(n, r, script(r["body"], None)) for n, r in enumerate(requests)]
                path = tmp_path / f"output-{rounds:02d}b.jsonl"
                path.write_text("".join(json.dumps(line) + "\n" for line in answered))
                outputs.append(path)
                broken = None
    assert broken is None and rounds >= 4  # judge, Q/A (with a retry round), distractors, ensemble
    assert release_parts(out / "release") == release_parts(tmp / "direct" / "release")
    assert result["release"]["items"] > 0

    # A line that is not the format, or answers another run's request, is an error naming the file and line.
    alien = tmp_path / "alien.jsonl"
    alien.write_text(json.dumps({"id": "x", "custom_id": "qa-nobody-a1", "response": None, "error": None}) + "\n")
    with pytest.raises(BatchError, match=r"alien.jsonl, line 1: custom_id 'qa-nobody-a1' is in no batch file"):
        build(out, s, model_mode="batch", batch_outputs=(alien,))
    alien.write_text("not json\n")
    with pytest.raises(BatchError, match=r"alien.jsonl, line 1: not a Batch output line"):
        build(out, s, model_mode="batch", batch_outputs=(alien,))


def test_recorded_responses_rebuild_the_release_byte_for_byte_with_no_model(recorded, tmp_path, monkeypatch):
    tmp, _, s = recorded
    store = tmp / "responses.jsonl.gz"
    records = [json.loads(line) for line in gzip.decompress(store.read_bytes()).decode().splitlines()]
    assert records and all(
        set(r) == {"custom_id", "stage", "model", "request_sha256", "response", "usage"} for r in records
    )
    assert {r["stage"] for r in records} == {"chains", "qa", "distractors", "ensemble"}
    assert {r["model"] for r in records} == {"judge", "gen", "f1", "f2", "f3"}  # the names as given

    def no_network(self, spec):
        raise AssertionError(f"a replay opened a connection to {spec}")

    monkeypatch.setattr(ModelClient, "_client", no_network)
    before = store.read_bytes()
    build(tmp_path / "replay", s, model_mode="replay", responses=store)
    assert tree_digest(tmp_path / "replay" / "release") == tree_digest(tmp / "direct" / "release")
    assert store.read_bytes() == before  # a replay reads, never writes
    prov = json.loads((tmp_path / "replay" / "release" / "construct" / "provenance.json").read_text())
    assert prov["models"] == {"chains": "judge", "qa": "gen", "distractors": "gen", "ensemble": ["f1", "f2", "f3"]}
    assert prov["recorded_responses"]["responses"] == len(records)

    # A prompt that changed since the responses were recorded: refused by stage and custom_id, never answered.
    monkeypatch.setattr(prompts, "QA_SHAPE", prompts.QA_SHAPE + " ")
    with pytest.raises(
        ReplayError, match=r"stage qa, custom_id qa-c-[0-9a-f]+-a1: the recorded response answers another"
    ):
        build(tmp_path / "changed", s, model_mode="replay", responses=store)


def test_the_command_stops_with_exit_code_3_naming_the_batch_file(tmp_path):
    from click.testing import CliRunner

    from agenthop.construct.cli import main

    out = tmp_path / "bench"
    # No endpoint listens here: --batch must send nothing.
    args = ["run", "--corpus", str(CORPUS), "--out", str(out), "--min-refs", "5", "--max-chains-per-seed", "1"]
    args += ["--max-qa", "3", "--judge", "judge@http://127.0.0.1:9/v1", "--generator", "gen@http://127.0.0.1:9/v1"]
    done = CliRunner().invoke(main, [*args, "--batch"])
    assert done.exit_code == 3, done.output
    first = out / "work" / "batch" / "chains-01.jsonl"
    assert str(first) in done.output and "--batch-output" in done.output and first.exists()
    lines = [json.loads(line) for line in first.read_text().splitlines()]
    assert lines and all(line["body"]["model"] == "judge" for line in lines)
    refused = CliRunner().invoke(main, [*args, "--replay"])
    assert refused.exit_code == 1 and "--replay needs the recorded responses: add --responses FILE" in refused.output
    both = CliRunner().invoke(main, [*args, "--replay", "--batch", "--responses", str(tmp_path / "r.jsonl.gz")])
    assert both.exit_code == 1 and "give one" in both.output


def test_custom_ids_are_readable_where_they_fit_and_portable_always():
    from agenthop.construct.batchfiles import custom_id, stage_of

    assert custom_id("qa", "c-0123456789ab/a2") == "qa-c-0123456789ab-a2"
    assert custom_id("ensemble", "c-0123456789ab/consensus/qwen/qwen3-32b@x/a1") == (
        "ensemble-c-0123456789ab-consensus-qwen-qwen3-32b_x-a1"
    )
    short = custom_id("chains", "doi:10.18653/v1/p17-2002>doi:10.18653/v1/p16-1001/a1")
    assert short == "chains-doi_10_18653-v1-p17-2002_doi_10_18653-v1-p16-1001-a1" and len(short) <= 64
    hop = "doi:10.18653/v1/2020.acl-main.207>doi:10.18653/v1/2020.emnlp-main.1001/a1"
    long_id = custom_id("chains", hop)
    assert re.fullmatch(r"chains-[0-9a-f]{24}-a1", long_id) and stage_of(long_id) == "chains"
    assert long_id != custom_id("chains", hop.replace("1001", "1002"))


@pytest.mark.parametrize(
    "line",
    [
        {"custom_id": ["qa-c-1-a1"], "response": None, "error": None},  # unhashable: could not be looked up
        {"custom_id": "qa-c-1-a1", "response": "200 OK", "error": None},
        {"custom_id": "qa-c-1-a1", "response": [{"status_code": 200}], "error": None},
    ],
)
def test_a_batch_output_line_with_a_custom_id_or_response_of_another_shape_is_not_the_format(tmp_path, line):
    from agenthop.construct.batchfiles import BatchImport, read_output

    path = tmp_path / "odd.jsonl"
    path.write_text(json.dumps(line) + "\n")
    into = BatchImport()
    with pytest.raises(BatchError, match=r"odd.jsonl, line 1: not a Batch output line"):
        read_output(path, {"qa-c-1-a1": {"model": "m"}}, into)
    assert not into.answers and not into.failed
