"""A run's standing over its items, from runner.jsonl: the summary the command prints and ``run_items`` returns."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from agenthop.llm.pricing import PriceTable
from agenthop.runner.records import load_state


def is_correct(record: dict, gold: dict[str, int] | None) -> bool | None:
    """Whether an item_end's answer is right (None without gold): for the progress display only."""
    if gold is None or record["item_id"] not in gold:
        return None
    answer = record.get("answer")
    return answer is not None and "ABCD".find(answer) == gold[record["item_id"]]


@dataclass(frozen=True)
class RunSummary:
    """A run's standing over its items, from runner.jsonl (all invocations of the run directory)."""

    items: int
    finished: int  # items with a final item_end (not error)
    errored: int  # items whose last item_end is an error
    not_run: int
    answered: int
    accuracy: float | None  # over items with gold (None without a corpus)
    correct: int
    graded: int
    terminations: dict[str, int]
    mean_turns: float | None
    mean_budget: float | None
    mean_tokens: float | None
    tokens_all_attempts: dict[str, int]  # prompt, completion, cached, total over every attempt
    cost_usd: float | None
    wall_time_s_sum: float

    def as_dict(self) -> dict:
        return asdict(self)


def summarise(
    runner_file: Path, items: list[str], gold: dict[str, int] | None, prices: PriceTable, model: str
) -> RunSummary:
    """The run's standing from runner.jsonl (all invocations), over the given items."""
    state = load_state(runner_file)
    wanted = set(items)
    finals = {i: r for i, r in state.final.items() if i in wanted}
    errored = {i: r for i, r in state.errored.items() if i in wanted}
    ends = list(finals.values()) + list(errored.values())
    terminations: dict[str, int] = {}
    for r in ends:
        terminations[r["termination"]] = terminations.get(r["termination"], 0) + 1
    verdicts = [is_correct(r, gold) for r in ends]
    graded = sum(v is not None for v in verdicts)
    correct = sum(bool(v) for v in verdicts)
    turns = [t for t in state.turns if t.get("item_id") in wanted]
    prompt = sum(t.get("prompt_tokens") or 0 for t in turns)
    completion = sum(t.get("completion_tokens") or 0 for t in turns)
    cached = sum(t.get("cached_tokens") or 0 for t in turns)
    n = len(ends)
    return RunSummary(
        items=len(items),
        finished=len(finals),
        errored=len(errored),
        not_run=len(items) - n,
        answered=sum(1 for r in ends if r.get("answer")),
        accuracy=(correct / graded) if graded else None,
        correct=correct,
        graded=graded,
        terminations=terminations,
        mean_turns=(sum(r["turns"] for r in ends) / n) if n else None,
        mean_budget=(sum(r.get("budget_used") or 0 for r in ends) / n) if n else None,
        mean_tokens=(sum(r.get("total_tokens") or 0 for r in ends) / n) if n else None,
        tokens_all_attempts={
            "prompt": prompt,
            "completion": completion,
            "cached": cached,
            "total": prompt + completion,
        },
        cost_usd=prices.cost(model, prompt, completion, cached),
        wall_time_s_sum=sum(r.get("wall_time_s") or 0 for r in ends),
    )
