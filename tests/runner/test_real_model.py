"""The runner against a real model's traffic, replayed by a loopback chat-completions server.

Data: tests/fixtures/real-model/ (provenance and licence in its README.md): every request the raw and sdk agents
sent while Qwen2.5-Coder-0.5B-Instruct, served by llama-cpp-python's server, drove them over demo items of the
committed corpus. Each assistant turn of the model is the last assistant message of the next request of the same
conversation, so the replay answers "the k-th model call of the conversation about this seed and question" with
the k-th reply the model gave. The replay server also refuses, as the stock ``llama_cpp.server`` did, with the same
HTTP 500 every time: an assistant message with ``content: null`` beside tool calls, and a tool message whose
content is a list of parts.

The model's quirks, as recorded: JSON-schema keys copied into the arguments (``required``, ``maxLength``,
``title``, ``type``), several calls in one reply, repeated calls, text that imitates a tool response. Added cases:
empty replies (0 tokens) and a runaway generation.
"""

from __future__ import annotations

import gzip
import json
import re
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import paths
from support.fake_openai import Block, FakeOpenAI, HTTPError, completion, turn_index

from agenthop.runner.cli import main
from agenthop.runner.records import read_records as read_runner
from agenthop.server.log.checkpoint import read_records as read_checkpoint

FIXTURES = paths.FIXTURES / "real-model"
AGENTS = ["raw", "sdk"]
# The shape of what llama-cpp-python 0.3.36's server answers to both (measured: its request model's validation
# errors, reported as HTTP 500 "internal_server_error", the same body every time the same request is sent).
LLAMA_CPP_500 = {
    "error": {
        "message": "7 validation errors:\n  {'type': 'literal_error', 'loc': ('body', 'messages', 2, "
        "'ChatCompletionRequestSystemMessage', 'role'), 'msg': \"Input should be 'system'\"} ...",
        "type": "internal_server_error",
        "param": None,
        "code": None,
    }
}


def conversation(body: dict) -> tuple[str, str] | None:
    """(seed ID, question) of a conversation's system prompt; None for a request that has none."""
    messages = body.get("messages") or []
    if not messages or messages[0].get("role") != "system":
        return None
    prompt = messages[0]["content"]
    seed = re.search(r"^ID:\s*(\S+)", prompt, re.M)
    question = re.search(r"^Question:\s*(.+)$", prompt, re.M)
    return (seed.group(1), question.group(1).strip()) if seed and question else None


class Recording:
    """The model's replies of one agent's recorded run, by conversation and model-call index."""

    def __init__(self, agent: str, corpus: Path):
        self.replies: dict[tuple[str, str], dict[int, dict]] = {}
        with gzip.open(FIXTURES / f"{agent}-agent-requests.jsonl.gz", "rt", encoding="utf-8") as fh:
            for line in fh:
                body = json.loads(line)
                key = conversation(body)
                assistants = [m for m in body["messages"] if m["role"] == "assistant"]
                if key is not None and assistants:
                    self.replies.setdefault(key, {}).setdefault(len(assistants) - 1, assistants[-1])
        with sqlite3.connect(corpus) as db:
            by_key = {
                (seed, question): item
                for item, seed, question in db.execute("SELECT item_id, seed_paper_id, question FROM items")
            }
        self.items = {by_key[key]: key for key in self.replies}  # every recorded conversation is a corpus item

    def reply(self, body: dict) -> dict | None:
        return self.replies.get(conversation(body), {}).get(turn_index(body))

    def said(self, item: str, turns: int) -> list[list[tuple[str, dict]]]:
        """The tool calls (name, arguments) of the model's first ``turns`` replies in the conversation of ``item``."""
        replies = self.replies[self.items[item]]
        return [
            [
                (c["function"]["name"], json.loads(c["function"]["arguments"]))
                for c in replies[k].get("tool_calls") or []
            ]
            for k in range(turns)
        ]


def llama_cpp_refusal(body: dict) -> HTTPError | None:
    for m in body.get("messages", []):
        if m.get("role") == "assistant" and m.get("content") is None:
            return HTTPError(500, LLAMA_CPP_500)
        if m.get("role") == "tool" and not isinstance(m.get("content"), str):
            return HTTPError(500, LLAMA_CPP_500)
    return None


def usage(body: dict, reply: dict | None) -> tuple[int, int, int]:
    """Token counts of the order of the real ones (about 4 characters a token); an empty reply has 0."""
    prompt = len(json.dumps(body["messages"])) // 4
    return (
        prompt,
        (len(json.dumps(reply)) // 4 if reply and (reply.get("content") or reply.get("tool_calls")) else 0),
        0,
    )


def replay(recording: Recording, refused: list, then=None):
    """A FakeOpenAI script: the llama.cpp shape checks, then the recorded reply (``then(body, k)``, when given,
    answers instead where it returns something)."""

    def script(body, fake):
        refusal = llama_cpp_refusal(body)
        if refusal is not None:
            refused.append(body)
            return refusal
        answer = then(body, turn_index(body)) if then is not None else None
        if answer is not None:
            return answer
        reply = recording.reply(body)
        if reply is None:
            return HTTPError(400, {"error": {"message": f"no recorded reply for model call {turn_index(body)}"}})
        message = {"role": "assistant", "content": reply.get("content") or "", "tool_calls": reply.get("tool_calls")}
        if not message["tool_calls"]:
            del message["tool_calls"]
        return completion(message, usage(body, reply))

    return script


def empty_reply(body: dict) -> dict:
    return completion({"role": "assistant", "content": ""}, (len(json.dumps(body["messages"])) // 4, 0, 0))


@pytest.fixture(scope="module")
def recordings(demo_corpus) -> dict[str, Recording]:
    return {agent: Recording(agent, demo_corpus) for agent in AGENTS}


def run(demo_corpus, tmp_path, fake, agent, items, *extra) -> tuple[Path, list[dict]]:
    out = tmp_path / f"{agent}-run"
    tmp_path.mkdir(parents=True, exist_ok=True)
    ids = tmp_path / "items.txt"
    ids.write_text("\n".join(items) + "\n")
    args = [
        "--items",
        str(ids),
        "--agent",
        agent,
        "--model",
        "qwen2.5-coder-0.5b",
        "--base-url",
        fake.base_url,
        "--corpus",
        str(demo_corpus),
        "--out",
        str(out),
        "--no-progress",
        "--backoff",
        "0.01",
        *extra,
    ]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return out, list(read_runner(out / "runner.jsonl"))


def kinds(records, kind):
    return [r for r in records if r["kind"] == kind]


def tool_texts(body: dict) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def test_the_recording_is_the_committed_corpus_items(recordings):
    """Every recorded conversation is an item of corpus.sqlite, with replies for its first model calls."""
    assert set(recordings["raw"].items) == {"st_0001", "st_0002", "st_0003", "st_0004"}
    assert {"st_0002", "st_0003"} <= set(recordings["sdk"].items)
    for agent in AGENTS:
        assert all(
            set(range(4)) <= set(recordings[agent].replies[recordings[agent].items[i]]) for i in ("st_0002", "st_0003")
        )


@pytest.mark.parametrize("agent", AGENTS)
def test_the_model_is_replayed_turn_by_turn_and_no_request_is_refused(demo_corpus, tmp_path, recordings, agent):
    """Both agents send what llama.cpp's server accepts (no HTTP 500 on turn 2, where every item failed before), the
    runner records what the model said, and the schema keys it copied are refused for free by name."""
    refused: list = []
    with FakeOpenAI(replay(recordings[agent], refused)) as fake:
        out, recs = run(demo_corpus, tmp_path, fake, agent, ["st_0002", "st_0003"], "--max-turns", "4")
        bodies = fake.bodies()
    assert refused == [] and len(bodies) == 8
    assert all(m.get("content") is not None for b in bodies for m in b["messages"])
    for end in kinds(recs, "item_end"):
        assert (end["termination"], end["turns"], end["attempt"]) == ("max_turns", 4, 1)
        turns = [t for t in kinds(recs, "turn") if t["session_id"] == end["session_id"]]
        said = recordings[agent].said(end["item_id"], 4)
        assert [[(c["name"], c["arguments"]) for c in t["tool_calls"]] for t in turns] == said
        logged = [
            c
            for c in read_checkpoint(out / "server-log.sqlite")
            if c["kind"] == "call" and c["session_id"] == end["session_id"]
        ]
        assert [c["tool"] for c in logged] == [name for calls in said for name, _ in calls][: len(logged)]
    assert not kinds(recs, "attempt_error")
    # The copied schema keys: refused for free, and the refusal the model read names them and the real parameters.
    copied = [
        (name, sorted(set(args) - {"paper_id", "query", "top_k", "section", "reasoning", "answer"}))
        for end in kinds(recs, "item_end")
        for calls in recordings[agent].said(end["item_id"], 4)
        for name, args in calls
    ]
    assert any(keys for _, keys in copied)
    refusals = [text for body in bodies for text in tool_texts(body) if "unknown argument" in text]
    assert refusals and all("Nothing was charged" in text for text in refusals)
    assert any("'required'" in text and "takes only" in text for text in refusals)


def test_the_agents_sdk_shapes_are_refused_like_llama_cpp_once_retried_and_the_item_is_not_run_again(
    demo_corpus, tmp_path, recordings, monkeypatch
):
    """What the probe saw: the Agents SDK's own message shapes (content null beside tool calls, a tool result as a
    list of parts) get llama.cpp's 500 on turn 2. Now the same 500 twice ends the item: one retry, no new attempt
    (it was 6 retries, then the item again, up to 3 times)."""
    from agenthop.runner.sdk_agent import PlainChatClient

    async def through_the_sdk(self, **kwargs):
        return await self._client.chat.completions.create(**kwargs)

    monkeypatch.setattr(PlainChatClient, "create", through_the_sdk)
    refused: list = []
    with FakeOpenAI(replay(recordings["sdk"], refused)) as fake:
        _, recs = run(demo_corpus, tmp_path, fake, "sdk", ["st_0002"], "--max-turns", "4")
        assert len(fake.requests) == 3  # turn 1, turn 2 refused, its one retry
    assert len(refused) == 2 and refused[0] == refused[1]
    (error,) = kinds(recs, "attempt_error")
    assert "same answer to the same request twice" in error["error"] and "HTTP 500" in error["error"]
    (end,) = kinds(recs, "item_end")
    assert (end["termination"], end["attempt"]) == ("error", 1)


@pytest.mark.parametrize("agent", AGENTS)
def test_an_empty_reply_is_nudged_and_a_second_one_ends_the_item(demo_corpus, tmp_path, recordings, agent):
    """The model's first two replies as recorded, then empty replies (0 tokens): nudged once, then the item ends as
    empty_response, in one attempt (it was a hard error: 3 attempts of the same failure at temperature 0)."""
    refused: list = []

    def then(body, k):
        return empty_reply(body) if k >= 2 else None

    with FakeOpenAI(replay(recordings[agent], refused, then)) as fake:
        out, recs = run(demo_corpus, tmp_path, fake, agent, ["st_0002"], "--max-turns", "8")
        bodies = fake.bodies()
    assert len(bodies) == 4 and refused == []
    nudged = bodies[3]["messages"]
    assert nudged[-1] == {
        "role": "user",
        "content": "Please use the available tools to investigate, or call submit_answer if you're ready.",
    }
    (end,) = kinds(recs, "item_end")
    assert (end["termination"], end["turns"], end["attempt"], end["answer"]) == ("empty_response", 4, 1, None)
    turns = kinds(recs, "turn")
    assert "nudged" in turns[2]["error"] and "again after the nudge" in turns[3]["error"]
    assert turns[3]["completion_tokens"] == 0 and not kinds(recs, "attempt_error")
    log = list(read_checkpoint(out / "server-log.sqlite"))
    (session_end,) = [r for r in log if r["kind"] == "session_end"]
    assert session_end["termination"] == "empty_response"

    from agenthop.scorer import score

    summary = score([out], demo_corpus).runs[0].summary
    assert summary["resources"]["termination_counts"] == {"empty_response": 1}


@pytest.mark.slow
def test_a_runaway_generation_is_bounded_by_the_generated_token_cap(demo_corpus, tmp_path, recordings):
    """The model's second reply never ends (it imitates tool responses until it is stopped). With the default cap the
    request carries max_tokens 16,384, the server stops at it (finish_reason length) and the reply is a text turn.
    Without a cap (-1) nothing stops it before the request times out; the timeout stays a transient error."""
    runaway = "<tool_response>\nInvalid arguments for think: required\n</tool_response>\n"
    release = __import__("threading").Event()

    def then(body, k):
        if k != 1:
            return None
        cap = body.get("max_tokens")
        if cap is None:
            return Block(release)  # generating for ever
        message = {"role": "assistant", "content": runaway * 40}
        reply = completion(message, (len(json.dumps(body["messages"])) // 4, cap, 0))
        reply["choices"][0]["finish_reason"] = "length"
        return reply

    refused: list = []
    with FakeOpenAI(replay(recordings["raw"], refused, then)) as fake:
        _, recs = run(demo_corpus, tmp_path / "capped", fake, "raw", ["st_0002"], "--max-turns", "3")
        capped = fake.bodies()
    assert [b.get("max_tokens") for b in capped] == [16_384] * 3
    assert not any(k in b for b in capped for k in ("temperature", "top_p", "top_k", "seed"))  # nothing unless given
    assert capped[2]["messages"][-2]["content"].startswith("<tool_response>")  # the text turn, then the nudge
    (end,) = kinds(recs, "item_end")
    assert (end["termination"], end["turns"]) == ("max_turns", 3)
    assert kinds(recs, "turn")[1]["completion_tokens"] == 16_384

    try:
        with FakeOpenAI(replay(recordings["raw"], refused, then)) as fake:
            _, recs = run(
                demo_corpus,
                tmp_path / "uncapped",
                fake,
                "raw",
                ["st_0002"],
                "--max-turns",
                "3",
                "--max-completion-tokens",
                "-1",
                "--timeout",
                "0.5",
                "--retries",
                "1",
                "--item-attempts",
                "1",
            )
            uncapped = fake.bodies()
    finally:
        release.set()
    assert all("max_tokens" not in b for b in uncapped) and len(uncapped) == 3  # turn 1, turn 2 and its retry
    (error,) = kinds(recs, "attempt_error")
    assert "persisted after 1 retries" in error["error"] and "Timeout" in error["error"]
    assert refused == []


@pytest.mark.parametrize("agent", AGENTS)
def test_sampling_options_reach_the_model_and_the_record(demo_corpus, tmp_path, recordings, agent):
    """Given options go into every request of both agents, run.json and the report's provenance."""
    refused: list = []
    with FakeOpenAI(replay(recordings[agent], refused)) as fake:
        out, _ = run(
            demo_corpus,
            tmp_path,
            fake,
            agent,
            ["st_0003"],
            "--max-turns",
            "2",
            "--temperature",
            "0",
            "--top-p",
            "0.9",
            "--top-k",
            "20",
            "--seed",
            "7",
            "--max-completion-tokens",
            "512",
        )
        bodies = fake.bodies()
    sent = [{k: b.get(k) for k in ("temperature", "top_p", "top_k", "seed", "max_tokens")} for b in bodies]
    assert sent == [{"temperature": 0, "top_p": 0.9, "top_k": 20, "seed": 7, "max_tokens": 512}] * 2
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["sampling"] == {"temperature": 0.0, "top_p": 0.9, "top_k": 20, "max_tokens": 512, "seed": 7}

    from agenthop.scorer import score
    from agenthop.scorer.document import provenance

    summary = score([out], demo_corpus).runs[0].summary
    assert summary["run"]["settings"]["sampling"] == manifest["sampling"]
    shown = dict(provenance(summary))
    assert shown["sampling"] == "temperature: 0; top p: 0.9; top k: 20; max tokens: 512; seed: 7"

    # A resumed run with other sampling settings is another experiment: refused.
    ids = tmp_path / "items.txt"
    again = CliRunner().invoke(
        main,
        [
            "--items",
            str(ids),
            "--agent",
            agent,
            "--model",
            "qwen2.5-coder-0.5b",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--corpus",
            str(demo_corpus),
            "--out",
            str(out),
            "--no-progress",
            "--temperature",
            "0.8",
        ],
    )
    assert again.exit_code != 0 and "sampling" in again.output


def test_counts_of_the_recorded_quirks(recordings):
    """The recording shows what the README says the model did, so the cases above replay real behaviour."""
    calls = [
        c for r in recordings["raw"].replies.values() for reply in r.values() for c in reply.get("tool_calls") or []
    ]
    copied = [
        c for c in calls if set(json.loads(c["function"]["arguments"])) & {"required", "maxLength", "title", "type"}
    ]
    per_reply = Counter(
        len(reply.get("tool_calls") or []) for r in recordings["raw"].replies.values() for reply in r.values()
    )
    assert len(copied) / len(calls) > 0.3 and max(per_reply) >= 8
