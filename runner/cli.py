"""agenthop-runner: run reference agents against the AgentHop sandbox, one session per item.

Argument parsing, one library call (``agenthop.runner.run_items``) and error translation:
the library's messages never name flags, so flag names are added here.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from agenthop.llm.retry import RetryPolicy
from agenthop.llm.wire import DEFAULT_MAX_TOKENS, Sampling

# Only what the options need is imported here, so that --help and usage errors answer at once; main() imports the rest.
from agenthop.runner.config import AGENTS
from agenthop.runner.engine_shard import EngineShard, EngineShardError, shard_from_environment
from agenthop.runner.sharding import ShardError, parse_shard
from agenthop.server.caps import Caps
from agenthop.server.tools import TOOLS

ALL_TOOLS = tuple(TOOLS)
TOOL_CHOICES = [t for t in ALL_TOOLS if t != "submit_answer"]


def _tools(ctx, param, value: str | None) -> tuple[str, ...]:
    if not value:
        return ()
    names = tuple(dict.fromkeys(v.strip() for v in value.split(",") if v.strip()))
    bad = [n for n in names if n not in ALL_TOOLS]
    if bad:
        raise click.BadParameter(f"unknown tool(s) {bad}; tools are {', '.join(ALL_TOOLS)}")
    if "submit_answer" in names:
        raise click.BadParameter("submit_answer cannot be disabled (an item could never be answered)")
    return names


def _cap(ctx, param, value: int):
    return None if value is not None and value < 0 else value


def _remember_shard_count(ctx, param, value: int | None) -> None:
    ctx.meta["agenthop.shard_count"] = value  # eager: --shard's callback reads it whatever the order on the line


def _shard(ctx, param, value: str | None):
    """A Shard for K/N; for ``auto``, the EngineShard the cluster engine's variables give (runner/engine_shard.py)."""
    count = ctx.meta.get("agenthop.shard_count")
    auto = value is not None and value.strip().lower() == "auto"
    if count is not None and not auto:
        raise click.BadParameter(
            "--shard-count goes with --shard auto (with --shard K/N the count is N)", param_hint="'--shard-count'"
        )
    if value is None:
        return None
    try:
        if auto:
            import os

            return shard_from_environment(os.environ, count)
        return parse_shard(value)
    except EngineShardError as exc:
        raise click.BadParameter(f"{exc} ({'--shard-count N' if exc.needs_count else '--shard K/N'})") from exc
    except ShardError as exc:
        raise click.BadParameter(str(exc)) from exc


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.option(
    "--items",
    "items_file",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="qa/full.jsonl, a split file (JSONL with 'id'), or one item ID per line.",
)
@click.option(
    "--agent",
    type=click.Choice(AGENTS),
    required=True,
    help="raw chat-completions loop, OpenAI Agents SDK, or the offline baseline.",
)
@click.option("--model", default=None, help="Model name sent to the API (required for raw and sdk).")
@click.option("--base-url", default=None, help="OpenAI-compatible base URL (default: $OPENAI_BASE_URL or OpenAI).")
@click.option(
    "--api-key-env",
    default="OPENAI_API_KEY",
    show_default=True,
    help="Environment variable holding the API key (unset: only with --base-url).",
)
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True, help="Items run concurrently.")
@click.option(
    "--processes",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Worker processes the workers are spread over (when one process's CPU is the limit).",
)
@click.option(
    "--shard",
    callback=_shard,
    default=None,
    metavar="K/N|auto",
    help="Run only shard K of N of the items (N machines each run one; the scorer merges the N runs). "
    "auto: the shard of this Slurm array task or Kubernetes Indexed Job pod; --out is then the run's "
    "folder and the shard writes into OUT/shard-K-of-N (docs/scale-out.md).",
)
@click.option(
    "--shard-count",
    type=click.IntRange(min=1),
    default=None,
    is_eager=True,
    expose_value=False,
    callback=_remember_shard_count,
    metavar="N",
    help="With --shard auto: the number of shards where the engine does not say it (Kubernetes; "
    "default $AGENTHOP_SHARD_COUNT).",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Run directory [runs/<model>-<agent>[-ablation]].",
)
@click.option(
    "--corpus",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Corpus to serve in-process [corpus.sqlite]; also gives gold for the progress accuracy.",
)
@click.option(
    "--server",
    "server_url",
    default=None,
    help="Use a running server (e.g. http://127.0.0.1:8765) instead of starting one.",
)
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Run only the first N items (after filters).")
@click.option(
    "--question-type",
    type=click.Choice(["single-target", "multi-target"]),
    default=None,
    help="Run only items of this question type.",
)
@click.option(
    "--depth", type=click.Choice(["1", "2"]), default=None, help="Run only items of this depth (hops from the seed)."
)
@click.option("--closed-book", is_flag=True, help="Ablation: no tools but submit_answer; one model call.")
@click.option(
    "--disable-tools",
    callback=_tools,
    default=None,
    help=f"Ablation: comma-separated tools to disable ({', '.join(TOOL_CHOICES)}).",
)
@click.option(
    "--read-first",
    is_flag=True,
    help="Ablation: after a search or reference list, force an inspection of the top unread candidate.",
)
@click.option(
    "--text-tools",
    is_flag=True,
    help="raw: the model writes tool calls in its text (for models without native tool calling).",
)
@click.option(
    "--budget", type=int, default=30, show_default=True, callback=_cap, help="Budget points per item (-1: unlimited)."
)
@click.option(
    "--max-turns",
    type=int,
    default=20,
    show_default=True,
    callback=_cap,
    help="Model responses per item (-1: unlimited).",
)
@click.option(
    "--max-tokens",
    type=int,
    default=200_000,
    show_default=True,
    callback=_cap,
    help="Cumulative prompt+completion tokens per item (-1: unlimited).",
)
@click.option(
    "--no-resume", is_flag=True, help="Start over: move the old records aside instead of skipping finished items."
)
@click.option(
    "--prices",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Price table JSON overriding llm/prices.json.",
)
@click.option("--run-label", default=None, help="Run label sent with every session [the run directory name].")
@click.option(
    "--replicate-of",
    default=None,
    metavar="NAME",
    help="Mark this run as a replicate of run NAME (written to run.json as replicate_of; the scorer groups replicates by it).",
)
@click.option(
    "--retries", type=click.IntRange(min=0), default=6, show_default=True, help="Transient API retries per model call."
)
@click.option(
    "--backoff",
    type=click.FloatRange(min=0),
    default=2.0,
    show_default=True,
    help="First retry wait in seconds (doubles, capped at 60).",
)
@click.option(
    "--timeout", type=click.FloatRange(min=0.1), default=300.0, show_default=True, help="Seconds per model request."
)
@click.option(
    "--item-attempts",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Attempts per item (hard errors retry the item).",
)
# Sampling (raw and sdk): sent with every model call; unset options are not sent (the endpoint's defaults apply).
@click.option("--temperature", type=click.FloatRange(min=0), default=None, help="Sampling temperature [not sent].")
@click.option(
    "--top-p",
    type=click.FloatRange(min=0, min_open=True, max=1),
    default=None,
    help="Nucleus sampling mass [not sent].",
)
@click.option(
    "--top-k", type=click.IntRange(min=1), default=None, help="Top-k sampling (vLLM, SGLang, llama.cpp) [not sent]."
)
@click.option("--seed", type=int, default=None, help="Sampling seed, for endpoints that honour one [not sent].")
@click.option(
    "--max-completion-tokens",
    type=int,
    default=DEFAULT_MAX_TOKENS,
    show_default=True,
    callback=_cap,
    help="Generated tokens per model call (-1: no cap sent). Not --max-tokens, the per-item token cap.",
)
@click.option("--trace", is_flag=True, help="sdk: keep OpenAI Agents tracing on (off by default: it uploads traces).")
@click.option("--no-progress", is_flag=True, help="No live progress bar.")
def main(
    items_file,
    agent,
    model,
    base_url,
    api_key_env,
    workers,
    processes,
    shard,
    out,
    corpus,
    server_url,
    limit,
    question_type,
    depth,
    closed_book,
    disable_tools,
    read_first,
    text_tools,
    budget,
    max_turns,
    max_tokens,
    no_resume,
    prices,
    run_label,
    replicate_of,
    retries,
    backoff,
    timeout,
    item_attempts,
    trace,
    no_progress,
    temperature,
    top_p,
    top_k,
    seed,
    max_completion_tokens,
) -> None:
    """Run one sandbox session per item with a reference agent; write run.json and runner.jsonl under --out."""
    import os

    from agenthop.runner.api import default_out, run_items
    from agenthop.runner.items import ItemsError
    from agenthop.runner.records import RUNNER_FILE
    from agenthop.runner.run import NoItemsLeft, ResumeConflict, RunError
    from agenthop.runner.session import ServerError
    from agenthop.server.corpus_schema import CorpusError

    if agent in ("raw", "sdk") and not model:
        raise click.UsageError("--model is required for the raw and sdk agents")
    if text_tools and agent != "raw":
        raise click.UsageError("--text-tools is a mode of the raw agent (--agent raw)")
    if corpus is not None and server_url is not None:
        raise click.UsageError("give --corpus (serve it in-process) or --server (use a running server), not both")
    if server_url is None and corpus is None:
        corpus = Path("corpus.sqlite")
        if not corpus.exists():
            raise click.UsageError("no corpus.sqlite here: pass --corpus PATH or --server URL")
    if isinstance(shard, EngineShard):  # --shard auto: --out is the run's folder; each task writes its shard inside it
        out = (
            out or default_out(model or "baseline", agent, closed_book, disable_tools, read_first, text_tools)
        ) / shard.dir_name
        shard = shard.shard
    out = out or default_out(model or "baseline", agent, closed_book, disable_tools, read_first, text_tools, shard)
    try:
        sampling = Sampling(
            temperature=temperature, top_p=top_p, top_k=top_k, max_tokens=max_completion_tokens, seed=seed
        )
    except ValueError as exc:
        raise click.UsageError(f"{exc} (--max-completion-tokens -1 sends no cap)") from exc
    try:
        result = run_items(
            items_file,
            agent=agent,
            model=model,
            out=out,
            corpus=corpus,
            server=server_url,
            base_url=base_url or os.environ.get("OPENAI_BASE_URL"),
            api_key_env=api_key_env,
            workers=workers,
            processes=processes,
            shard=shard,
            question_type=question_type,
            depth=int(depth) if depth else None,
            limit=limit,
            closed_book=closed_book,
            disabled_tools=disable_tools,
            read_first=read_first,
            text_tools=text_tools,
            caps=Caps(budget, max_turns, max_tokens),
            resume=not no_resume,
            prices=prices,
            run_label=run_label,
            replicate_of=replicate_of,
            retry=RetryPolicy(max_retries=retries, backoff=backoff, timeout=timeout),
            item_attempts=item_attempts,
            trace=trace,
            progress=not no_progress,
            sampling=sampling,
        )
    except KeyboardInterrupt:
        click.echo(
            f"interrupted; finished items are kept in {out / RUNNER_FILE}. Run the same command again to resume.",
            err=True,
        )
        sys.exit(130)
    except NoItemsLeft as exc:
        if exc.param == "shard":
            raise click.ClickException(f"{exc} (--shard)") from exc
        raise click.ClickException("no items left after --question-type/--depth/--limit") from exc
    except ResumeConflict as exc:
        raise click.ClickException(f"{exc} (--no-resume starts over; --out chooses another directory.)") from exc
    except ItemsError as exc:
        raise click.ClickException(f"{exc} (--corpus PATH)" if exc.param == "corpus" else str(exc)) from exc
    except RunError as exc:
        if exc.param == "api_key_env":
            raise click.ClickException(
                f"{exc} (export {api_key_env}=..., --api-key-env NAME, or --base-url URL)."
            ) from exc
        raise click.ClickException(str(exc)) from exc
    except (CorpusError, ServerError) as exc:
        raise click.ClickException(str(exc)) from exc

    from rich.console import Console

    from agenthop.runner.progress import summary_table

    Console().print(
        summary_table(
            result.summary,
            f"{result.run_label}: {agent} / {model or 'baseline'}  ->  {out}",
            no_gold="no gold: pass --corpus",
        )
    )


if __name__ == "__main__":
    main()
