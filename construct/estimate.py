"""``--dry-run``: how many model calls each stage would make, and what they would cost, before any is made.

Seeds and the chains' pre-filters run for real (they need no model), so the
chain count is exact; after that every candidate is assumed to survive, so the
figures are an upper bound on calls (retries of bad output aside). Prompt tokens
are measured on real prompts of up to 20 candidates (4 characters a token);
completion tokens are typical reply sizes.
"""

from __future__ import annotations

from typing import TypedDict

from agenthop.construct.chains import enumerate_chains, hops, prefilter
from agenthop.construct.client import ModelSpec
from agenthop.construct.prompts import answer_messages, choice_messages, judge_messages, qa_messages
from agenthop.construct.seeds import select_seeds
from agenthop.llm.pricing import PriceTable

REPLY_TOKENS = {"chains": 40, "qa": 400, "distractors": 60, "ensemble": 10}
SAMPLE = 20


class StageRow(TypedDict):
    """One stage and model's estimate; ``usd`` is None for a model the price table does not hold."""

    stage: str
    model: str
    calls: int
    prompt_tokens: int
    completion_tokens: int
    usd: float | None


def _tokens(messages: list[dict]) -> int:
    return sum(len(m["content"]) for m in messages) // 4


def _mean(values: list[int]) -> float:
    return sum(values) / len(values) if values else 0.0


def estimate(view, s, prices: PriceTable) -> dict:
    seeds = [r for r in select_seeds(view, s) if "drop" not in r]
    chains = [c for seed in seeds for c in enumerate_chains(view, seed["id"], s)]
    kept = [c for c in chains if prefilter(view, c, s) is None]
    n_qa = len(kept) if s.max_qa is None else min(len(kept), s.max_qa)
    sample = kept[:SAMPLE]
    rows: list[StageRow] = []

    def add(stage: str, model: str | None, calls: int, prompt: float) -> None:
        spec = ModelSpec.parse(model) if model else None
        if spec is None or spec.offline:
            rows.append(
                {
                    "stage": stage,
                    "model": model or "-",
                    "calls": 0,
                    "prompt_tokens": 0,
                    "completion_tokens": 0,
                    "usd": 0.0,
                }
            )
            return
        p, c = int(calls * prompt), calls * REPLY_TOKENS[stage]
        rows.append(
            {
                "stage": stage,
                "model": spec.name,
                "calls": calls,
                "prompt_tokens": p,
                "completion_tokens": c,
                "usd": prices.cost(spec.name, p, c),
            }
        )

    judge_prompts = [
        _tokens(judge_messages(view, view.papers[a], view.papers[b], view.context(a, b) or ""))
        for c in sample
        for a, b in hops(c)
    ]
    add("chains", s.judge, sum(len(hops(c)) for c in kept), _mean(judge_prompts))
    qa_prompts = [
        _tokens(
            qa_messages(
                view,
                view.papers[c["seed"]],
                view.papers.get(c["bridge"]) if c["bridge"] else None,
                [view.papers[t] for t in c["targets"]],
                [""],
            )
        )
        for c in sample
    ]
    add("qa", s.generator, n_qa, _mean(qa_prompts))
    answer_prompts = [_tokens(answer_messages(view, "?" * 200, [view.papers[c["seed"]]])) for c in sample]
    add(
        "distractors", s.generator, n_qa * 3, _mean(answer_prompts) * 2 / 3
    )  # two kinds read one paper, no_context none
    choice_prompts = [
        _tokens(choice_messages(view, "?" * 200, ["?" * 60] * 4, [view.papers[p] for p in (c["seed"], *c["targets"])]))
        for c in sample
    ]
    for f in s.filters:
        add("ensemble", f, n_qa * 2, _mean(choice_prompts) * 0.75)  # shortcut reads the seed only
    unpriced = sorted({r["model"] for r in rows if r["calls"] and r["usd"] is None})
    return {
        "seeds": len(seeds),
        "chains": len(chains),
        "chains_after_prefilter": len(kept),
        "qa_candidates": n_qa,
        "rows": rows,
        "calls": sum(r["calls"] for r in rows),
        "usd": round(sum(r["usd"] or 0 for r in rows), 4),
        "unpriced_models": unpriced,
    }


def render(est: dict) -> str:
    lines = [
        f"{est['seeds']} seeds, {est['chains']} chains ({est['chains_after_prefilter']} after the pre-filters), "
        f"{est['qa_candidates']} sent to Q/A; at most:",
        f"{'stage':<12} {'model':<24} {'calls':>8} {'prompt tok':>12} {'reply tok':>10} {'USD':>10}",
    ]
    for r in est["rows"]:
        usd = "unpriced" if r["usd"] is None else f"{r['usd']:.4f}"
        lines.append(
            f"{r['stage']:<12} {r['model']:<24} {r['calls']:>8} {r['prompt_tokens']:>12} {r['completion_tokens']:>10} {usd:>10}"
        )
    lines.append(f"{'total':<12} {'':<24} {est['calls']:>8} {'':>12} {'':>10} {est['usd']:>10.4f}")
    if est["unpriced_models"]:
        lines.append(f"not in the price table (cost unknown): {', '.join(est['unpriced_models'])}; give --prices FILE")
    return "\n".join(lines)
