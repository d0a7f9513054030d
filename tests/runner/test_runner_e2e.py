"""End to end: the runner CLI drives raw and sdk agents through whole items against the real
sandbox server (ServerThread, started by the runner) and a real loopback fake model server."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.fake_openai import (
    FakeOpenAI,
    Garbage,
    Hang,
    HTTPError,
    last_tool_message,
    seed_id,
    text,
    tool_calls,
    turn_index,
)
from support.release_fixture import ITEM_IDS, make_release

from agenthop.corpus.importer import import_release
from agenthop.llm.wire import portable_messages
from agenthop.runner.cli import main
from agenthop.runner.records import read_records as read_runner
from agenthop.server.log.checkpoint import read_records as read_checkpoint

AGENTS = ["raw", "sdk"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("corpus")
    release = make_release(root / "release")
    import_release(release, root / "corpus.sqlite")
    items = root / "items.txt"
    items.write_text("\n".join(ITEM_IDS) + "\n")
    return root / "corpus.sqlite", items


def run(corpus, fake: FakeOpenAI, out: Path, agent: str, *extra: str) -> list[dict]:
    corpus_path, items = corpus
    args = [
        "--items",
        str(items),
        "--agent",
        agent,
        "--model",
        "fake-1",
        "--base-url",
        fake.base_url,
        "--corpus",
        str(corpus_path),
        "--out",
        str(out),
        "--no-progress",
        "--backoff",
        "0.01",
        *extra,
    ]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return list(read_runner(out / "runner.jsonl"))


def kinds(records, kind):
    return [r for r in records if r["kind"] == kind]


def checkpoint(out: Path) -> list[dict]:
    return list(read_checkpoint(out / "server-log.sqlite"))


def calls_of(log, session_id):
    return [r for r in log if r["kind"] == "call" and r["session_id"] == session_id]


def end_of(log, session_id):
    ends = [r for r in log if r["kind"] == "session_end" and r["session_id"] == session_id]
    assert len(ends) == 1
    return ends[0]


@pytest.mark.parametrize("agent", AGENTS)
def test_answer_and_meta_reach_server(corpus, tmp_path, agent):
    def script(body, fake):
        if turn_index(body) == 0:
            return tool_calls(("get_references", {"paper_id": seed_id(body)}), usage=(100, 20, 30))
        assert "References of" in last_tool_message(body)
        return tool_calls(("submit_answer", {"answer": "B", "reasoning": "evidence"}), usage=(150, 10, 0))

    with FakeOpenAI(script) as fake:
        recs = run(corpus, fake, tmp_path / "r", agent)
    ends = kinds(recs, "item_end")
    assert sorted(e["item_id"] for e in ends) == sorted(ITEM_IDS)
    log = checkpoint(tmp_path / "r")
    for end in ends:
        assert (end["termination"], end["answer"], end["turns"]) == ("answer", "B", 2)
        assert (end["prompt_tokens"], end["completion_tokens"], end["cached_tokens"], end["total_tokens"]) == (
            250,
            30,
            30,
            280,
        )
        calls = calls_of(log, end["session_id"])
        assert [(c["tool"], c["turn"], c["tokens"]) for c in calls] == [
            ("get_references", 1, 120),
            ("submit_answer", 2, 280),
        ]
        assert all(c["run"] == "r" for c in calls)
        assert end_of(log, end["session_id"])["termination"] == "answer"
        turns = [t for t in kinds(recs, "turn") if t["session_id"] == end["session_id"]]
        assert [t["cumulative_tokens"] for t in turns] == [120, 280]
        assert turns[0]["tool_calls"][0]["name"] == "get_references"
    manifest = json.loads((tmp_path / "r" / "run.json").read_text())
    assert manifest["agent"] == agent and manifest["base_url_host"].startswith("127.0.0.1:")
    assert "api_key" not in json.dumps(manifest).replace("api_key_env", "")


@pytest.mark.parametrize("agent", AGENTS)
def test_budget_ends_after_two_rejections(corpus, tmp_path, agent):
    def script(body, fake):
        seed = seed_id(body)
        if turn_index(body) == 0:
            return tool_calls(("read_section", {"paper_id": seed, "section": "A"}))
        return tool_calls(
            ("read_section", {"paper_id": seed, "section": "B"}), ("read_section", {"paper_id": seed, "section": "C"})
        )

    with FakeOpenAI(script) as fake:
        recs = run(corpus, fake, tmp_path / "r", agent, "--budget", "6", "--limit", "1")
        assert len(fake.requests) == 2
    (end,) = kinds(recs, "item_end")
    assert (end["termination"], end["answer"], end["turns"], end["budget_used"]) == ("budget", None, 2, 5)
    log = checkpoint(tmp_path / "r")
    assert [c["outcome"] for c in calls_of(log, end["session_id"])] == ["ok", "budget_rejected", "budget_rejected"]
    assert end_of(log, end["session_id"])["termination"] == "budget"


@pytest.mark.parametrize("agent", AGENTS)
def test_max_turns(corpus, tmp_path, agent):
    def script(body, fake):
        return tool_calls(("think", {"reasoning": f"step {turn_index(body)}"}))

    with FakeOpenAI(script) as fake:
        recs = run(corpus, fake, tmp_path / "r", agent, "--max-turns", "3", "--limit", "1")
        assert len(fake.requests) == 3
    (end,) = kinds(recs, "item_end")
    assert (end["termination"], end["turns"]) == ("max_turns", 3)
    log = checkpoint(tmp_path / "r")
    assert [c["turn"] for c in calls_of(log, end["session_id"])] == [1, 2, 3]
    assert end_of(log, end["session_id"])["termination"] == "max_turns"


@pytest.mark.parametrize("agent", AGENTS)
def test_token_limit_discards_the_last_calls(corpus, tmp_path, agent):
    def script(body, fake):
        return tool_calls(("think", {"reasoning": "x"}), usage=(1000, 0, 200))

    with FakeOpenAI(script) as fake:
        recs = run(corpus, fake, tmp_path / "r", agent, "--max-tokens", "2500", "--limit", "1")
    (end,) = kinds(recs, "item_end")
    assert (end["termination"], end["turns"], end["total_tokens"], end["cached_tokens"]) == (
        "token_limit",
        3,
        3000,
        600,
    )
    log = checkpoint(tmp_path / "r")
    assert [c["turn"] for c in calls_of(log, end["session_id"])] == [1, 2]  # turn 3's call was discarded
    assert end_of(log, end["session_id"])["termination"] == "token_limit"
    last = kinds(recs, "turn")[-1]
    assert last["turn"] == 3 and "token cap" in last["error"]


@pytest.mark.parametrize("agent", AGENTS)
def test_429_is_retried_without_using_a_turn(corpus, tmp_path, agent):
    seen = Counter()

    def script(body, fake):
        t = turn_index(body)
        seen[t] += 1
        if t == 1 and seen[t] == 1:
            return HTTPError(429, {"error": {"message": "rate limited", "type": "rate_limit"}})
        if t == 0:
            return tool_calls(("get_references", {"paper_id": seed_id(body)}))
        return tool_calls(("submit_answer", {"answer": "C", "reasoning": "r"}))

    with FakeOpenAI(script) as fake:
        recs = run(corpus, fake, tmp_path / "r", agent, "--limit", "1")
        assert len(fake.requests) == 3
    (end,) = kinds(recs, "item_end")
    assert (end["termination"], end["answer"], end["turns"]) == ("answer", "C", 2)
    turns = kinds(recs, "turn")
    assert [t["retries"] for t in turns] == [0, 1]
    assert "429" in turns[1]["transient_errors"][0]
    assert not kinds(recs, "attempt_error")


@pytest.mark.parametrize("agent", AGENTS)
def test_repeated_503_retries_the_item_then_error(corpus, tmp_path, agent):
    with FakeOpenAI(lambda body, fake: HTTPError(503)) as fake:
        recs = run(corpus, fake, tmp_path / "r", agent, "--limit", "1", "--retries", "2")
        assert len(fake.requests) == 3 * 3  # three attempts, each 1 try + 2 retries
    errors = kinds(recs, "attempt_error")
    assert [e["attempt"] for e in errors] == [1, 2, 3]
    assert all("503" in e["error"] for e in errors)
    (end,) = kinds(recs, "item_end")
    assert (end["termination"], end["attempt"], end["answer"]) == ("error", 3, None)
    log = checkpoint(tmp_path / "r")
    sessions = {e["session_id"] for e in errors}
    assert len(sessions) == 3
    assert all(end_of(log, s)["termination"] == "error" for s in sessions)


@pytest.mark.parametrize("agent", AGENTS)
def test_the_same_500_twice_ends_the_item_without_running_it_again(corpus, tmp_path, agent):
    """A server that refuses a request answers it the same way every time: one retry, then the item ends as error,
    with the reason in attempt_error, and no second attempt (it was 6 retries x 3 attempts)."""
    refusal = {"error": {"code": 500, "message": "Internal Server Error", "type": "server_error"}}
    with FakeOpenAI(lambda body, fake: HTTPError(500, refusal)) as fake:
        recs = run(corpus, fake, tmp_path / "r", agent, "--limit", "1")
        assert len(fake.requests) == 2
    (error,) = kinds(recs, "attempt_error")
    assert "same answer to the same request twice" in error["error"] and "HTTP 500" in error["error"]
    (end,) = kinds(recs, "item_end")
    assert (end["termination"], end["attempt"]) == ("error", 1)
    assert end_of(checkpoint(tmp_path / "r"), end["session_id"])["termination"] == "error"


@pytest.mark.parametrize("agent", AGENTS)
def test_malformed_arguments_go_back_to_the_model(corpus, tmp_path, agent):
    def script(body, fake):
        if turn_index(body) == 0:
            return tool_calls(("read_section", '{"paper_id": "x", section'))
        assert "JSON" in last_tool_message(body) and "not executed" in last_tool_message(body)
        return tool_calls(("submit_answer", {"answer": "A", "reasoning": "r"}))

    with FakeOpenAI(script) as fake:
        recs = run(corpus, fake, tmp_path / "r", agent, "--limit", "1")
    (end,) = kinds(recs, "item_end")
    assert (end["termination"], end["answer"]) == ("answer", "A")
    assert [c["tool"] for c in calls_of(checkpoint(tmp_path / "r"), end["session_id"])] == ["submit_answer"]
    assert "malformed arguments" in kinds(recs, "turn")[0]["error"]


@pytest.mark.parametrize("agent", AGENTS)
def test_several_tool_calls_in_one_turn(corpus, tmp_path, agent):
    def script(body, fake):
        seed = seed_id(body)
        if turn_index(body) == 0:
            return tool_calls(
                ("get_references", {"paper_id": seed}),
                ("list_sections", {"paper_id": seed}),
                ("think", {"reasoning": "plan"}),
                ("get_paper_info", {"paper_id": seed}),
            )
        return tool_calls(("submit_answer", {"answer": "D", "reasoning": "r"}))

    with FakeOpenAI(script) as fake:
        recs = run(corpus, fake, tmp_path / "r", agent, "--limit", "1")
        assert len(fake.requests) == 2
    (end,) = kinds(recs, "item_end")
    assert (end["termination"], end["answer"], end["turns"], end["budget_used"]) == ("answer", "D", 2, 3)
    calls = calls_of(checkpoint(tmp_path / "r"), end["session_id"])
    assert [(c["tool"], c["turn"]) for c in calls] == [
        ("get_references", 1),
        ("list_sections", 1),
        ("think", 1),
        ("get_paper_info", 1),
        ("submit_answer", 2),
    ]
    assert len(kinds(recs, "turn")[0]["tool_calls"]) == 4


def test_timeout_and_garbage(corpus, tmp_path):
    """A hung request is a transient error (retried in place); a garbage body is a hard error (item retried)."""
    n = Counter()

    def script(body, fake):
        n["all"] += 1
        if n["all"] == 1:
            return Garbage()
        if n["all"] == 2:
            return Hang(1)
        if turn_index(body) == 0:
            return tool_calls(("think", {"reasoning": "r"}))
        return tool_calls(("submit_answer", {"answer": "B", "reasoning": "r"}))

    with FakeOpenAI(script) as fake:
        recs = run(corpus, fake, tmp_path / "r", "raw", "--limit", "1", "--timeout", "0.3")
    (err,) = kinds(recs, "attempt_error")
    (end,) = kinds(recs, "item_end")
    assert (end["termination"], end["attempt"], end["answer"]) == ("answer", 2, "B")
    assert kinds(recs, "turn")[0]["retries"] == 1 and "Timeout" in kinds(recs, "turn")[0]["transient_errors"][0]


@pytest.mark.parametrize("agent", AGENTS)
def test_closed_book(corpus, tmp_path, agent):
    def script(body, fake):
        assert [t["function"]["name"] for t in body.get("tools", [])] == ["submit_answer"]
        return text("Without the papers, my best guess: the answer is (C).")

    with FakeOpenAI(script) as fake:
        recs = run(corpus, fake, tmp_path / "r", agent, "--closed-book", "--limit", "1")
        assert len(fake.requests) == 1
    (end,) = kinds(recs, "item_end")
    assert (end["termination"], end["answer"], end["turns"]) == ("answer", "C", 1)
    log = checkpoint(tmp_path / "r")
    (call,) = calls_of(log, end["session_id"])
    assert call["tool"] == "submit_answer" and call["forced"] is True
    start = [r for r in log if r["kind"] == "session_start"][0]
    assert "search_papers" in start["disabled_tools"] and "submit_answer" not in start["disabled_tools"]


def test_disable_tools(corpus, tmp_path):
    def script(body, fake):
        assert "search_papers" not in [t["function"]["name"] for t in body["tools"]]
        return tool_calls(("submit_answer", {"answer": "A", "reasoning": "r"}))

    with FakeOpenAI(script) as fake:
        recs = run(corpus, fake, tmp_path / "r", "raw", "--disable-tools", "search_papers", "--limit", "1")
    assert kinds(recs, "item_end")[0]["termination"] == "answer"
    start = [r for r in checkpoint(tmp_path / "r") if r["kind"] == "session_start"][0]
    assert start["disabled_tools"] == ["search_papers"]
    assert json.loads((tmp_path / "r" / "run.json").read_text())["ablations"]["disabled_tools"] == ["search_papers"]


@pytest.mark.parametrize("agent", AGENTS)
def test_read_first_gate(corpus, tmp_path, agent):
    def script(body, fake):
        t = turn_index(body)
        if t == 0:
            return tool_calls(("search_papers", {"query": "paper"}))
        if t == 1:
            return tool_calls(("get_references", {"paper_id": seed_id(body)}))  # not an inspection: replaced
        assert last_tool_message(body).startswith("[read-first gate]")
        return tool_calls(("submit_answer", {"answer": "B", "reasoning": "r"}))

    with FakeOpenAI(script) as fake:
        recs = run(corpus, fake, tmp_path / "r", agent, "--read-first", "--limit", "1")
    (end,) = kinds(recs, "item_end")
    assert end["termination"] == "answer"
    calls = calls_of(checkpoint(tmp_path / "r"), end["session_id"])
    assert [(c["tool"], c["forced"]) for c in calls] == [
        ("search_papers", False),
        ("list_sections", True),
        ("read_section", True),
        ("submit_answer", False),
    ]
    assert calls[2]["outcome"] == "ok" and calls[2]["turn"] == 2
    forced = kinds(recs, "turn")[1]["forced"]
    assert forced[0]["replaced"]["name"] == "get_references"
    assert [c["name"] for c in forced[0]["calls"]] == ["list_sections", "read_section"]


def test_resume_skips_finished_and_reruns_errored(corpus, tmp_path):
    """Errored items are run again on resume; finished ones are not."""
    state = {"fail": True}

    def script(body, fake):
        if state["fail"]:
            return HTTPError(400, {"error": {"message": "bad request", "type": "invalid_request_error"}})
        return tool_calls(("submit_answer", {"answer": "A", "reasoning": "r"}))

    with FakeOpenAI(script) as fake:
        recs = run(corpus, fake, tmp_path / "r", "raw", "--limit", "2", "--item-attempts", "1")
        assert [e["termination"] for e in kinds(recs, "item_end")] == ["error", "error"]
        state["fail"] = False
        recs = run(corpus, fake, tmp_path / "r", "raw")
    finals = defaultdict(list)
    for e in kinds(recs, "item_end"):
        if e["termination"] != "error":
            finals[e["item_id"]].append(e)
    assert sorted(finals) == sorted(ITEM_IDS) and all(len(v) == 1 for v in finals.values())
    with FakeOpenAI(script) as fake:
        recs2 = run(corpus, fake, tmp_path / "r", "raw")
        assert fake.requests == []  # everything finished: nothing to run
    assert len(kinds(recs2, "item_end")) == len(kinds(recs, "item_end"))
    assert len(kinds(recs2, "run_start")) == 3


def test_the_sdk_agent_lists_the_tools_once_per_run(corpus, tmp_path, monkeypatch):
    """Every session of a run has the same tools: one tools/list for the run, as the raw agent does, not one per
    item; every model request still offers all seven."""
    from agents.mcp.server import _MCPServerWithClientSession

    listed, real = [], _MCPServerWithClientSession.list_tools

    async def counting(self, *args, **kwargs):
        listed.append(self.session)
        return await real(self, *args, **kwargs)

    monkeypatch.setattr(_MCPServerWithClientSession, "list_tools", counting)
    offered = []

    def script(body, fake):
        offered.append(sorted(t["function"]["name"] for t in body["tools"]))
        if turn_index(body) == 0:
            return tool_calls(("get_references", {"paper_id": seed_id(body)}))
        return tool_calls(("submit_answer", {"answer": "B", "reasoning": "evidence"}))

    with FakeOpenAI(script) as fake:
        recs = run(corpus, fake, tmp_path / "r", "sdk", "--workers", "1")
    assert [e["termination"] for e in kinds(recs, "item_end")] == ["answer"] * len(ITEM_IDS)
    assert len(listed) == 1
    assert len(offered) == 2 * len(ITEM_IDS) and all(len(names) == 7 for names in offered)


def test_the_sdk_agents_requests_are_those_the_openai_sdk_would_send(corpus, tmp_path, monkeypatch):
    """The sdk agent posts the Agents SDK's chat-completions arguments as they are (``PlainChatClient``, which skips
    the OpenAI SDK's per-message transform): the bodies the model receives are those the OpenAI SDK's ``create``
    sends for the same conversation."""
    from agenthop.runner.sdk_agent import PlainChatClient

    def script(body, fake):
        if turn_index(body) == 0:
            return tool_calls(("get_references", {"paper_id": seed_id(body)}), ("think", {"reasoning": "next"}))
        return tool_calls(("submit_answer", {"answer": "B", "reasoning": "evidence"}))

    bodies = {}
    for name in ("plain", "openai-sdk"):
        if name == "openai-sdk":

            async def through_the_sdk(self, **kwargs):
                return await self._client.chat.completions.create(**kwargs)

            monkeypatch.setattr(PlainChatClient, "create", through_the_sdk)
        with FakeOpenAI(script) as fake:
            recs = run(corpus, fake, tmp_path / name, "sdk", "--workers", "1", "--limit", "1")
            bodies[name] = fake.bodies()
        assert [e["termination"] for e in kinds(recs, "item_end")] == ["answer"]
    assert len(bodies["plain"]) == 2 and bodies["plain"][1]["messages"][-1]["role"] == "tool"
    # The OpenAI SDK sends the converter's shapes (content null beside tool calls, a tool result as a list of parts),
    # which llama.cpp's server refuses; the plain client sends them as every server accepts them (llm/wire.py).
    sdk_second = bodies["openai-sdk"][1]["messages"]
    assert [m["content"] for m in sdk_second if m["role"] == "assistant"] == [None]
    assert all(isinstance(m["content"], list) for m in sdk_second if m["role"] == "tool")
    plain_second = bodies["plain"][1]["messages"]
    assert [m["content"] for m in plain_second if m["role"] == "assistant"] == [""]
    assert all(isinstance(m["content"], str) and m["content"] for m in plain_second if m["role"] == "tool")
    # The fake numbers its tool calls across runs; everything else must be the same.
    same = [re.sub(r"call_\d+", "call_N", json.dumps(body, sort_keys=True)) for body in bodies["plain"]]
    converted = [{**body, "messages": portable_messages(body["messages"])} for body in bodies["openai-sdk"]]
    assert same == [re.sub(r"call_\d+", "call_N", json.dumps(body, sort_keys=True)) for body in converted]
