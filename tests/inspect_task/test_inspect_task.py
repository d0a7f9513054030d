"""The Inspect task end to end: real `inspect eval`s over demo items, offline.

The model is Inspect's mockllm, scripted as a small navigator (every output carries its
usage, so mockllm never needs a tokenizer download), or Inspect's real OpenAI provider
against the loopback fake chat-completions server for the command line. Each eval runs
the AgentHop HTTP server in-process; the tests read both logs: Inspect's (.eval) and the
server's checkpoint log, and score the run with agenthop-scorer.

These tests need the [inspect] extra. `make test` runs them in .venv-inspect with
AGENTHOP_REQUIRE_INSPECT=1, where a missing inspect-ai is an error, never a skip.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import REPO

# Inspect 0.3.285 passes a deprecated argument to tenacity on every model call; not ours to fix.
pytestmark = [
    pytest.mark.inspect,
    pytest.mark.filterwarnings("ignore:The .initial. parameter is deprecated:DeprecationWarning"),
]

if os.environ.get("AGENTHOP_REQUIRE_INSPECT"):
    import inspect_ai  # noqa: F401  (fails loudly where the extra must be installed)
else:
    pytest.importorskip(
        "inspect_ai",
        reason="inspect-ai is not installed (the [inspect] extra); make test runs these tests in .venv-inspect",
    )

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai import score as inspect_score  # noqa: E402
from inspect_ai.event import ModelEvent, ToolEvent  # noqa: E402
from inspect_ai.log import read_eval_log  # noqa: E402
from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, ModelOutput, ModelUsage, get_model  # noqa: E402
from inspect_ai.tool import ToolCall  # noqa: E402

from agenthop.inspect_task import agenthop, agenthop_answer, servers  # noqa: E402
from agenthop.inspect_task.options import session_settings  # noqa: E402
from agenthop.runner.config import CLOSED_BOOK_USER_MESSAGE, NUDGE, RunSettings  # noqa: E402
from agenthop.runner.run import disabled_tools as runner_disabled_tools  # noqa: E402
from agenthop.runner.run import session_caps as runner_session_caps  # noqa: E402
from agenthop.server.caps import Caps  # noqa: E402
from agenthop.server.log.checkpoint import read_records  # noqa: E402
from agenthop.server.papers import Corpus  # noqa: E402
from agenthop.server.task import FIRST_USER_MESSAGE, task_text  # noqa: E402
from agenthop.server.tools import TOOLS  # noqa: E402

CORPUS = REPO / "corpus.sqlite"
ITEMS = ("st_0001", "st_0003", "mt_0037")  # ST depth 1 and 2, MT depth 2
BIN = Path(sys.executable).parent
PER_TURN = ModelUsage(input_tokens=900, input_tokens_cache_read=100, output_tokens=50, total_tokens=1050)


# --- a scripted navigator for mockllm -----------------------------------------------


def reply(*calls: tuple[str, dict], text: str = "", usage: ModelUsage = PER_TURN) -> ModelOutput:
    """One model response holding ``calls`` (name, arguments), in order."""
    tool_calls = [
        ToolCall(id=f"call_{i}_{name}", function=name, arguments=args) for i, (name, args) in enumerate(calls)
    ]
    message = ChatMessageAssistant(
        content=text, tool_calls=tool_calls or None, model="mockllm/model", source="generate"
    )
    return ModelOutput(
        model="mockllm/model",
        choices=[ChatCompletionChoice(message=message, stop_reason="tool_calls" if calls else "stop")],
        usage=usage.model_copy(),
    )


def navigator(answer: str = "A"):
    """References of the seed (and a think, in the same response), the sections of the first reference with
    full text, its first section, then submit ``answer``: four turns, five calls."""

    def policy(messages, tools, tool_choice, config) -> ModelOutput:
        seed = re.search(r"^ID:\s*(\S+)", messages[0].text, re.M).group(1)
        turn = sum(1 for m in messages if m.role == "assistant")
        tool_texts = [m.text for m in messages if m.role == "tool"]
        if turn == 0:
            return reply(("get_references", {"paper_id": seed}), ("think", {"reasoning": "start with the references"}))
        first_ref = re.search(r"\b([0-9a-f]{40})\n.*\| full text: yes", tool_texts[0]).group(1)
        if turn == 1:
            return reply(("list_sections", {"paper_id": first_ref}))
        if turn == 2:
            return reply(("read_section", {"paper_id": first_ref, "section": "A"}))
        return reply(("submit_answer", {"answer": answer, "reasoning": "scripted"}))

    return policy


def run_eval(tmp_path: Path, policy, **task_args):
    """One eval of the task over ITEMS (or task_args['items']) with a scripted mockllm; returns (EvalLog, run label)."""
    items = tmp_path / "items.txt"
    items.write_text("\n".join(ITEMS) + "\n")
    eval_kwargs = {k: task_args.pop(k) for k in ("epochs", "token_limit") if k in task_args}
    args = {
        "items": str(items),
        "corpus": str(CORPUS),
        "log": str(tmp_path / "agenthop-log.sqlite"),
        "run": "t",
        **task_args,
    }
    [log] = inspect_eval(
        agenthop(**args),
        model=get_model("mockllm/model", custom_outputs=policy),
        log_dir=str(tmp_path / "logs"),
        display="none",
        **eval_kwargs,
    )
    # Read back what was written, long texts included (Inspect stores them as attachments).
    return read_eval_log(log.location, resolve_attachments=True), args["run"]


def checkpoint(tmp_path: Path, run: str) -> dict[str, dict]:
    """item -> {"start", "calls", "end"} from the checkpoint log (one session per item in these tests)."""
    out: dict[str, dict] = {}
    for rec in read_records(tmp_path / "agenthop-log.sqlite", run=run):
        entry = out.setdefault(rec["item_id"], {"start": None, "calls": [], "end": None})
        if rec["kind"] == "call":
            entry["calls"].append(rec)
        else:
            entry["start" if rec["kind"] == "session_start" else "end"] = rec
    return out


def tool_events(sample) -> list[ToolEvent]:
    return [e for e in sample.events if isinstance(e, ToolEvent)]


def model_events(sample) -> list[ModelEvent]:
    return [e for e in sample.events if isinstance(e, ModelEvent)]


def score_value(sample):
    return sample.scores["agenthop_answer"]


def agenthop_score(log, out: Path) -> dict:
    """Run the scoring command the Inspect log records; return the AgentHop summary."""
    argv = shlex.split(log.eval.metadata["agenthop"]["score_with"])
    assert argv[0] == "agenthop-scorer"
    done = subprocess.run(
        [str(BIN / "agenthop-scorer"), *argv[1:], "--out", str(out)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return json.loads((out / "summary.json").read_text())


# --- the default client: _meta sent ---------------------------------------------------


def test_eval_meters_every_call_and_both_scorers_agree(tmp_path):
    log, run = run_eval(tmp_path, navigator("A"))
    assert log.status == "success", log.error
    assert servers.running() == 0  # the run-end hook stopped the eval's server
    meta = log.eval.metadata["agenthop"]
    assert meta["run"] == run and Path(meta["checkpoint_log"]) == tmp_path / "agenthop-log.sqlite"
    sessions = checkpoint(tmp_path, run)
    assert sorted(sessions) == sorted(ITEMS)
    corpus = Corpus(CORPUS)
    correct = 0
    for sample in log.samples:
        entry = sessions[sample.id]
        store = sample.scores["agenthop_answer"].metadata
        # The sample is bound to its session in both logs.
        assert store["session_id"] == entry["start"]["session_id"] and store["run"] == run
        assert entry["start"]["client"]["sample_id"] == sample.id and entry["start"]["client"]["name"] == "inspect_ai"
        # The model saw the runner's messages: the server's research_task prompt, then the runner's first message.
        first = model_events(sample)[0]
        assert first.input[0].role == "system"
        assert first.input[0].text == task_text(corpus.item(sample.id), Caps(30, 20, 200_000), list(TOOLS))
        assert first.input[1].text == FIRST_USER_MESSAGE
        assert sorted(t.name for t in first.tools) == sorted(TOOLS)
        # One checkpoint record per tool call Inspect made, in the same order, with turn and tokens from _meta.
        events = tool_events(sample)
        assert [e.function for e in events] == [
            "get_references",
            "think",
            "list_sections",
            "read_section",
            "submit_answer",
        ]
        assert [c["tool"] for c in entry["calls"]] == [e.function for e in events]
        assert [c["arguments"] for c in entry["calls"]] == [e.arguments for e in events]
        assert [c["turn"] for c in entry["calls"]] == [1, 1, 2, 3, 4]
        assert [c["tokens"] for c in entry["calls"]] == [1050, 1050, 2100, 3150, 4200]
        read = entry["calls"][3]
        assert read["cost"] == 5 and read["delivered"] is not None
        # The whole section reached the model (Inspect truncates long tool output unless told not to).
        assert events[3].truncated is None and len(events[3].result) > read["output_chars"]
        assert entry["end"]["termination"] == "answer" and entry["end"]["answer"] == "A"
        assert store["termination"] == "answer" and store["turns"] == 4
        assert store["prompt_tokens"] == 4000 and store["completion_tokens"] == 200 and store["cached_tokens"] == 400
        assert score_value(sample).answer == "A"
        is_correct = sample.target == "A"
        assert score_value(sample).value == ("C" if is_correct else "I")
        correct += is_correct
    inspect_accuracy = log.results.scores[0].metrics["accuracy"].value
    assert inspect_accuracy == pytest.approx(correct / len(ITEMS))

    # The store is in the log: Inspect re-scores it with the server long gone.
    rescored = inspect_score(log, agenthop_answer(), action="overwrite", display="none")
    assert [s.scores["agenthop_answer"].value for s in rescored.samples] == [score_value(s).value for s in log.samples]

    summary = agenthop_score(log, tmp_path / "report")
    assert summary["headline"]["accuracy"] == pytest.approx(inspect_accuracy)
    assert summary["calls_per_turn"]["measured"] and summary["calls_per_turn"]["source"] == "checkpoint"
    assert summary["calls_per_turn"]["value"] == pytest.approx(5 / 4)
    assert summary["resources"]["tokens"]["mean"] == 4200 and summary["resources"]["turns"]["mean"] == 4
    assert summary["resources"]["budget"]["mean"] == 7  # 1 + 0 + 1 + 5 + 0
    assert sum(summary["audit"]["counts"].values()) == len(ITEMS)


def test_inspect_mcp_client_meters_calls_but_leaves_turns_and_tokens_unmeasured(tmp_path):
    log, run = run_eval(tmp_path, navigator("B"), mcp_client="inspect")
    assert log.status == "success", log.error
    sessions = checkpoint(tmp_path, run)
    for sample in log.samples:
        calls = sessions[sample.id]["calls"]
        assert [c["tool"] for c in calls] == [e.function for e in tool_events(sample)]
        assert all(c["turn"] is None and c["tokens"] is None for c in calls)
        assert sessions[sample.id]["start"]["client"]["mcp_client"] == "inspect"
        assert score_value(sample).answer == "B"
        assert sample.scores["agenthop_answer"].metadata["turns"] == 4  # Inspect's own log still knows
    summary = agenthop_score(log, tmp_path / "report")
    assert summary["headline"]["accuracy"] == pytest.approx(log.results.scores[0].metrics["accuracy"].value)
    assert not summary["calls_per_turn"]["measured"]
    assert not summary["resources"]["tokens"]["measured"] and not summary["resources"]["turns"]["measured"]
    assert summary["resources"]["budget"]["measured"]


# --- caps, limits and ablations -------------------------------------------------------


def test_turn_cap_ends_the_session_and_the_sample(tmp_path):
    def ponder(messages, tools, tool_choice, config):
        return reply(("think", {"reasoning": "still thinking"}))

    log, run = run_eval(tmp_path, ponder, items=_one_item(tmp_path), max_turns=3)
    [sample] = log.samples
    entry = checkpoint(tmp_path, run)["st_0001"]
    assert [c["turn"] for c in entry["calls"]] == [1, 2, 3]
    assert entry["start"]["caps"]["max_turns"] == 3
    assert entry["end"]["termination"] == "max_turns" and entry["end"]["reason"] == "3 turns, cap 3"
    assert len(model_events(sample)) == 3
    assert score_value(sample).value == "I" and score_value(sample).answer is None


def test_token_cap_discards_the_calls_of_the_response_that_passes_it(tmp_path):
    big = ModelUsage(input_tokens=120_000, output_tokens=1_000, total_tokens=121_000)

    def spend(messages, tools, tool_choice, config):
        return reply(("think", {"reasoning": "expensive"}), usage=big)

    log, run = run_eval(tmp_path, spend, items=_one_item(tmp_path))
    entry = checkpoint(tmp_path, run)["st_0001"]
    assert [c["tokens"] for c in entry["calls"]] == [121_000]  # turn 2's call was never sent
    assert entry["end"]["termination"] == "token_limit"
    assert entry["end"]["reason"] == "242000 tokens > cap 200000; 1 tool call(s) discarded"
    assert log.samples[0].scores["agenthop_answer"].metadata["termination"] == "token_limit"


def test_budget_exhaustion_ends_the_sample(tmp_path):
    def read_seed(messages, tools, tool_choice, config):
        seed = re.search(r"^ID:\s*(\S+)", messages[0].text, re.M).group(1)
        return reply(("read_section", {"paper_id": seed, "section": "A"}))

    log, run = run_eval(tmp_path, read_seed, items=_one_item(tmp_path), budget=6)
    entry = checkpoint(tmp_path, run)["st_0001"]
    assert [c["outcome"] for c in entry["calls"]][1:] == ["budget_rejected", "budget_rejected"]
    assert entry["end"]["termination"] == "budget"
    assert len(model_events(log.samples[0])) == 3  # the sample stopped when the server ended the session


def test_inspect_token_limit_is_recorded_as_the_session_termination(tmp_path):
    log, run = run_eval(tmp_path, navigator(), items=_one_item(tmp_path), token_limit=1500)
    entry = checkpoint(tmp_path, run)["st_0001"]
    assert entry["end"]["termination"] == "token_limit"
    assert entry["end"]["reason"].startswith("Inspect token limit")
    assert log.samples[0].limit is not None and log.samples[0].limit.type == "token"


def test_closed_book_offers_only_submit_and_submits_a_letter_in_the_text(tmp_path):
    def guess(messages, tools, tool_choice, config):
        return reply(text="The answer is (C).")

    log, run = run_eval(tmp_path, guess, items=_one_item(tmp_path), closed_book=True)
    [sample] = log.samples
    first = model_events(sample)[0]
    assert [t.name for t in first.tools] == ["submit_answer"]
    assert first.input[1].text == CLOSED_BOOK_USER_MESSAGE
    entry = checkpoint(tmp_path, run)["st_0001"]
    assert entry["start"]["caps"]["max_turns"] == 1
    assert entry["start"]["disabled_tools"] == sorted(t for t in TOOLS if t != "submit_answer")
    [call] = entry["calls"]
    assert call["tool"] == "submit_answer" and call["forced"] is True and call["arguments"]["answer"] == "C"
    assert score_value(sample).answer == "C"


def test_disabled_tools_are_gone_from_the_session_and_the_model_request(tmp_path):
    def searcher(messages, tools, tool_choice, config):
        if sum(1 for m in messages if m.role == "assistant") == 0:
            return reply(text="Let me think.")
        return reply(("submit_answer", {"answer": "D", "reasoning": "no search"}))

    log, run = run_eval(tmp_path, searcher, items=_one_item(tmp_path), disabled_tools="search_papers,think")
    [sample] = log.samples
    assert sorted(t.name for t in model_events(sample)[0].tools) == sorted(set(TOOLS) - {"search_papers", "think"})
    assert model_events(sample)[1].input[-1].text == NUDGE  # a response without tool calls gets the runner's nudge
    entry = checkpoint(tmp_path, run)["st_0001"]
    assert entry["start"]["disabled_tools"] == ["search_papers", "think"]
    assert entry["end"]["termination"] == "answer"


def test_schema_errors_stay_in_inspect_and_calls_after_the_end_reach_the_server(tmp_path):
    """The two documented differences from the runner (docs/inspect.md)."""

    def script(messages, tools, tool_choice, config):
        if sum(1 for m in messages if m.role == "assistant") == 0:
            return reply(("submit_answer", {"answer": "E", "reasoning": "no such option"}))
        return reply(("submit_answer", {"answer": "A", "reasoning": "ok"}), ("think", {"reasoning": "too late"}))

    log, run = run_eval(tmp_path, script, items=_one_item(tmp_path))
    events = tool_events(log.samples[0])
    assert [(e.function, e.error.type if e.error else None) for e in events] == [
        ("submit_answer", "parsing"),
        ("submit_answer", None),
        ("think", "unknown"),
    ]
    calls = checkpoint(tmp_path, run)["st_0001"]["calls"]
    assert [(c["tool"], c["outcome"], c["cost"], c["turn"]) for c in calls] == [
        ("submit_answer", "ok", 0, 2),
        ("think", "session_ended", 0, 2),
    ]


def test_each_epoch_is_a_run_of_its_own(tmp_path):
    log, run = run_eval(tmp_path, navigator(), items=_one_item(tmp_path), epochs=2)
    assert log.status == "success", log.error
    labels = sorted({s.scores["agenthop_answer"].metadata["run"] for s in log.samples})
    assert labels == ["t", "t-epoch2"]
    for label in labels:
        assert checkpoint(tmp_path, label)["st_0001"]["end"]["termination"] == "answer"


# --- options --------------------------------------------------------------------------


def test_bad_options_say_what_is_wrong(tmp_path):
    items = _one_item(tmp_path)
    with pytest.raises(ValueError, match=r"disabled_tools names unknown tool\(s\) \['serch_papers'\]"):
        agenthop(items=items, corpus=str(CORPUS), disabled_tools="serch_papers")
    with pytest.raises(ValueError, match="cannot include submit_answer"):
        agenthop(items=items, corpus=str(CORPUS), disabled_tools=["submit_answer"])
    with pytest.raises(ValueError, match=r"mcp_client must be one of \['agenthop', 'inspect'\]"):
        agenthop(items=items, corpus=str(CORPUS), mcp_client="sse")
    with pytest.raises(ValueError, match="budget must be an integer"):
        agenthop(items=items, corpus=str(CORPUS), budget="lots")
    unknown = tmp_path / "unknown.txt"
    unknown.write_text("st_0001\nst_9999\n")
    with pytest.raises(ValueError, match=r"1 item\(s\) of .*unknown.txt are not in the corpus .*: st_9999"):
        agenthop(items=str(unknown), corpus=str(CORPUS))


def test_unlimited_caps_and_ablations_match_the_runner():
    caps = {"budget": 30, "max_turns": 20, "max_tokens": 200_000}
    for closed_book, disabled in ((False, ()), (False, ("search_papers",)), (True, ())):
        settings = RunSettings(
            agent="raw", model="m", run_label="r", caps=Caps(**caps), closed_book=closed_book, disabled_tools=disabled
        )
        assert session_settings(closed_book, list(disabled), caps) == (
            runner_session_caps(settings),
            runner_disabled_tools(settings),
        )
    task = agenthop(corpus=str(CORPUS), items=str(REPO / "splits/demo.jsonl"), budget=-1, max_turns=None)
    assert task.metadata["agenthop"]["caps"] == {"budget": None, "max_turns": None, "max_tokens": 200_000}
    assert len(task.dataset) == 64


def _one_item(tmp_path: Path) -> str:
    path = tmp_path / "one.txt"
    path.write_text("st_0001\n")
    return str(path)


# --- the command line, through Inspect's own OpenAI provider ------------------------------


def test_the_documented_command_runs_offline_against_a_fake_openai(tmp_path):
    """`inspect eval agenthop/agenthop --model openai/gpt-4.1-mini -T items=splits/demo.jsonl`, as the docs give it,
    with the OpenAI base URL pointed at the loopback fake (the task is found through the entry point)."""
    from support.fake_openai import FakeOpenAI, seed_id, system_text, tool_calls, turn_index

    def script(body, fake):
        if turn_index(body) == 0:
            return tool_calls(("get_references", {"paper_id": seed_id(body)}), usage=(700, 30, 0))
        return tool_calls(("submit_answer", {"answer": "B", "reasoning": "from the references"}), usage=(900, 40, 0))

    with FakeOpenAI(script) as fake:
        env = {**os.environ, "OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": "test-key", "NO_COLOR": "1"}
        done = subprocess.run(
            [
                str(BIN / "inspect"),
                "eval",
                "agenthop/agenthop",
                "--model",
                "openai/gpt-4.1-mini",
                "-T",
                "items=splits/demo.jsonl",
                "-T",
                f"log={tmp_path / 'agenthop-log.sqlite'}",
                "-T",
                "run=cli",
                "--limit",
                "2",
                "--log-dir",
                str(tmp_path / "logs"),
                "--display",
                "plain",
            ],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        bodies = list(fake.requests)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # The run ends with the command that scores it.
    log_file, corpus = tmp_path / "agenthop-log.sqlite", REPO / "corpus.sqlite"
    assert f"score it with: agenthop-scorer {log_file}::cli --corpus {corpus}" in done.stderr
    [path] = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "success" and log.eval.task == "agenthop/agenthop"
    assert [s.scores["agenthop_answer"].answer for s in log.samples] == ["B", "B"]
    # Two model calls per sample; the first carries the server's task text and the seven tools.
    assert len(bodies) == 4
    first = next(b for b in bodies if turn_index(b) == 0)
    assert "Seed paper\nID: " in system_text(first) and len(first["tools"]) == len(TOOLS)
    sessions = checkpoint(tmp_path, "cli")
    assert sorted(sessions) == ["st_0001", "st_0002"]
    for entry in sessions.values():
        assert [(c["tool"], c["turn"], c["tokens"]) for c in entry["calls"]] == [
            ("get_references", 1, 730),
            ("submit_answer", 2, 1670),
        ]
        assert entry["start"]["client"]["model"] == "openai/gpt-4.1-mini"


def test_loading_the_entry_point_stays_light():
    """Inspect imports every extension's entry point on startup, for any eval: ours must not pull in MCP, OpenAI,
    search or the server until an AgentHop task is built."""
    code = (
        "import sys, agenthop.inspect_task\n"
        "heavy = ('mcp', 'openai', 'agents', 'bm25s', 'uvicorn', 'agenthop.server.transport.http', 'agenthop.server.tools', 'agenthop.runner')\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_documented_offline_try_runs_without_network(tmp_path):
    """docs/inspect.md's offline command: every download is made to fail (an unreachable proxy and an
    empty tiktoken cache), yet the samples complete and are scored; plain mockllm would need tiktoken's download."""
    env = {
        **os.environ,
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "NO_PROXY": "127.0.0.1,localhost",
        "TIKTOKEN_CACHE_DIR": str(tmp_path / "empty-tiktoken-cache"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "agenthop.inspect_task.offline", "--limit", "2", "--log-dir", str(tmp_path / "logs")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [path] = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "success" and len(log.samples) == 2 and not any(s.error for s in log.samples)
    sessions: dict[str, list[str]] = {}
    for r in read_records(tmp_path / "logs" / "agenthop-log.sqlite"):
        if r["kind"] == "call":
            sessions.setdefault(r["session_id"], []).append(r["tool"])
    assert list(sessions.values()) == [["list_sections", "read_section", "submit_answer"]] * 2


def test_an_eval_set_that_errors_exits_non_zero(tmp_path):
    """docs/inspect.md: `inspect eval` exits 0 on an errored sample, `inspect eval-set` exits 1. Plain mockllm offline
    errors (it downloads a tokenizer), so the error shows in the exit status and in the log."""
    env = {
        **os.environ,
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "NO_PROXY": "127.0.0.1,localhost",
        "TIKTOKEN_CACHE_DIR": str(tmp_path / "empty-tiktoken-cache"),
    }
    inspect = Path(sys.executable).parent / "inspect"
    done = subprocess.run(
        [
            str(inspect),
            "eval-set",
            "agenthop/agenthop",
            "--model",
            "mockllm/model",
            "--limit",
            "1",
            "--retry-attempts",
            "0",
            "--log-dir",
            str(tmp_path / "logs"),
            "--display",
            "plain",
            "-T",
            f"log={tmp_path / 'agenthop-log.sqlite'}",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    [path] = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "error" and log.error is not None
