"""An offline try of the Inspect task: ``python -m agenthop.inspect_task.offline``.

``inspect eval agenthop/agenthop --model mockllm/model`` is the obvious offline try, but mockllm counts the
tokens of an output that has no usage with tiktoken, which downloads its encoding on first use: offline, every
sample fails. Here mockllm is scripted as a small navigator whose every output carries its usage, so nothing is
downloaded: it lists the seed paper's sections, reads the first, and submits (A). It is a smoke test of the
whole path (Inspect, the AgentHop server, the checkpoint log, the scorers), not a baseline: the answer is fixed.
"""

from __future__ import annotations

import argparse
import re

from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, ModelOutput, ModelUsage, get_model
from inspect_ai.tool import ToolCall

from agenthop.inspect_task.task import agenthop

USAGE = ModelUsage(input_tokens=1000, output_tokens=50, total_tokens=1050)  # nominal: mockllm would count otherwise


def _reply(name: str, arguments: dict) -> ModelOutput:
    message = ChatMessageAssistant(
        content="",
        tool_calls=[ToolCall(id=f"call_{name}", function=name, arguments=arguments)],
        model="mockllm/model",
        source="generate",
    )
    return ModelOutput(
        model="mockllm/model",
        choices=[ChatCompletionChoice(message=message, stop_reason="tool_calls")],
        usage=USAGE.model_copy(),
    )


def navigator(messages, tools, tool_choice, config) -> ModelOutput:
    """mockllm's custom_outputs: list the seed's sections, read the first, submit (A)."""
    found = re.search(r"^ID:\s*(\S+)", messages[0].text, re.M)
    assert found is not None, "the task text names the seed paper's ID"
    seed = found.group(1)
    turn = sum(1 for m in messages if m.role == "assistant")
    if turn == 0:
        return _reply("list_sections", {"paper_id": seed})
    if turn == 1:
        return _reply("read_section", {"paper_id": seed, "section": "A"})
    return _reply("submit_answer", {"answer": "A", "reasoning": "offline smoke test: a fixed answer"})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agenthop.inspect_task.offline",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--items", default="splits/demo.jsonl", help="items (as -T items=); default splits/demo.jsonl")
    parser.add_argument("--corpus", default="corpus.sqlite", help="corpus (as -T corpus=); default corpus.sqlite")
    parser.add_argument("--limit", type=int, default=3, help="samples to run (default 3)")
    parser.add_argument(
        "--log-dir", default="logs", help="Inspect's log directory; the checkpoint log goes there too (default logs)"
    )
    args = parser.parse_args(argv)
    task = agenthop(
        items=args.items, corpus=args.corpus, log=f"{args.log_dir}/agenthop-log.sqlite", run="offline-smoke"
    )
    [log] = inspect_eval(
        task, model=get_model("mockllm/model", custom_outputs=navigator), limit=args.limit, log_dir=args.log_dir
    )
    return 0 if log.status == "success" else 1


if __name__ == "__main__":
    raise SystemExit(main())
