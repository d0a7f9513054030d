"""agenthop-runner: run reference agents against the AgentHop sandbox, one session per item."""

from __future__ import annotations

import asyncio
import os
import re
import sys
import time
from pathlib import Path

import click

from agenthop.runner.config import AGENTS, RunSettings
from agenthop.runner.items import ItemsError, fill_from_corpus, filter_items, load_gold, read_items
from agenthop.runner.pricing import PriceTable
from agenthop.runner.records import RUNNER_FILE, RecordWriter, load_state
from agenthop.runner.retry import RetryPolicy
from agenthop.runner.run import RunError
from agenthop.runner.session import ALL_TOOLS, ServerAPI, ServerError
from agenthop.server.corpus.schema import CorpusError
from agenthop.server.sessions import Caps

TOOL_CHOICES = [t for t in ALL_TOOLS if t != "submit_answer"]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "run"


def default_out(model: str, agent: str, closed_book: bool, disabled: tuple[str, ...], read_first: bool) -> Path:
    parts = [_slug(model), agent]
    if closed_book:
        parts.append("closed-book")
    if disabled:
        parts.append("no-" + "-".join(d.replace("_", "") for d in sorted(disabled)))
    if read_first:
        parts.append("read-first")
    return Path("runs") / "-".join(parts)


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


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.option("--items", "items_file", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="qa/full.jsonl, a split file (JSONL with 'id'), or one item ID per line.")
@click.option("--agent", type=click.Choice(AGENTS), required=True, help="raw chat-completions loop, OpenAI Agents SDK, or the offline baseline.")
@click.option("--model", default=None, help="Model name sent to the API (required for raw and sdk).")
@click.option("--base-url", default=None, help="OpenAI-compatible base URL (default: $OPENAI_BASE_URL or OpenAI).")
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True, help="Environment variable holding the API key ('EMPTY' if unset).")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True, help="Items run concurrently.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None, help="Run directory [runs/<model>-<agent>[-ablation]].")
@click.option("--corpus", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Corpus to serve in-process [corpus.sqlite]; also gives gold for the progress accuracy.")
@click.option("--server", "server_url", default=None, help="Use a running server (e.g. http://127.0.0.1:8765) instead of starting one.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Run only the first N items (after filters).")
@click.option("--question-type", type=click.Choice(["single-target", "multi-target"]), default=None)
@click.option("--depth", type=click.Choice(["1", "2"]), default=None)
@click.option("--closed-book", is_flag=True, help="Ablation: no tools but submit_answer; one model call.")
@click.option("--disable-tools", callback=_tools, default=None, help=f"Ablation: comma-separated tools to disable ({', '.join(TOOL_CHOICES)}).")
@click.option("--read-first", is_flag=True, help="Ablation: after a search or reference list, force an inspection of the top unread candidate.")
@click.option("--budget", type=int, default=30, show_default=True, callback=_cap, help="Budget points per item (-1: unlimited).")
@click.option("--max-turns", type=int, default=20, show_default=True, callback=_cap, help="Model responses per item (-1: unlimited).")
@click.option("--max-tokens", type=int, default=200_000, show_default=True, callback=_cap, help="Cumulative prompt+completion tokens per item (-1: unlimited).")
@click.option("--no-resume", is_flag=True, help="Start over: move the old records aside instead of skipping finished items.")
@click.option("--prices", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Price table JSON overriding runner/prices.json.")
@click.option("--run-label", default=None, help="Run label sent with every session [the run directory name].")
@click.option("--replicate-of", default=None, metavar="NAME",
              help="Mark this run as a replicate of run NAME (written to run.json as replicate_of; the scorer groups replicates by it).")
@click.option("--retries", type=click.IntRange(min=0), default=6, show_default=True, help="Transient API retries per model call.")
@click.option("--backoff", type=click.FloatRange(min=0), default=2.0, show_default=True, help="First retry wait in seconds (doubles, capped at 60).")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=300.0, show_default=True, help="Seconds per model request.")
@click.option("--item-attempts", type=click.IntRange(min=1), default=3, show_default=True, help="Attempts per item (hard errors retry the item).")
@click.option("--trace", is_flag=True, help="sdk: keep OpenAI Agents tracing on (off by default: it uploads traces).")
@click.option("--no-progress", is_flag=True, help="No live progress bar.")
def main(items_file, agent, model, base_url, api_key_env, workers, out, corpus, server_url, limit, question_type, depth,
         closed_book, disable_tools, read_first, budget, max_turns, max_tokens, no_resume, prices, run_label, replicate_of,
         retries, backoff, timeout, item_attempts, trace, no_progress) -> None:
    """Run one sandbox session per item with a reference agent; write run.json and runner.jsonl under --out."""
    if agent in ("raw", "sdk") and not model:
        raise click.UsageError("--model is required for the raw and sdk agents")
    model = model or "baseline"
    if corpus is not None and server_url is not None:
        raise click.UsageError("give --corpus (serve it in-process) or --server (use a running server), not both")
    if server_url is None and corpus is None:
        corpus = Path("corpus.sqlite")
        if not corpus.exists():
            raise click.UsageError("no corpus.sqlite here: pass --corpus PATH or --server URL")
    base_url = base_url or os.environ.get("OPENAI_BASE_URL")
    try:
        price_table = PriceTable.load(prices)
    except (OSError, ValueError) as exc:
        raise click.ClickException(f"price table: {exc}") from exc

    try:
        refs = read_items(items_file)
        if corpus is not None:
            unknown = fill_from_corpus(refs, corpus)
            if unknown:
                raise click.ClickException(
                    f"{len(unknown)} item(s) of {items_file} are not in {corpus}: {', '.join(unknown[:5])}{' ...' if len(unknown) > 5 else ''}"
                )
        refs = filter_items(refs, question_type, int(depth) if depth else None, limit)
        gold = load_gold(corpus) if corpus is not None else None
    except (ItemsError, CorpusError) as exc:
        raise click.ClickException(str(exc)) from exc
    if not refs:
        raise click.ClickException("no items left after --question-type/--depth/--limit")
    items = [r.id for r in refs]

    out = out or default_out(model, agent, closed_book, disable_tools, read_first)
    settings = RunSettings(
        agent=agent, model=model, run_label=run_label or out.resolve().name, base_url=base_url, api_key_env=api_key_env,
        caps=Caps(budget, max_turns, max_tokens), closed_book=closed_book, disabled_tools=disable_tools,
        read_first=read_first, retry=RetryPolicy(max_retries=retries, backoff=backoff, timeout=timeout),
        item_attempts=item_attempts, workers=workers, trace=trace,
    )
    try:
        summary = asyncio.run(_run(settings, items, out, corpus, server_url, not no_resume, price_table, gold, str(items_file),
                                   not no_progress, replicate_of))
    except KeyboardInterrupt:
        click.echo(f"interrupted; finished items are kept in {out / RUNNER_FILE}. Run the same command again to resume.", err=True)
        sys.exit(130)
    except (ServerError, RunError) as exc:
        raise click.ClickException(str(exc)) from exc

    from rich.console import Console

    from agenthop.runner.progress import summary_table

    Console().print(summary_table(summary, f"{settings.run_label}: {agent} / {model}  ->  {out}"))


async def _run(settings, items, out, corpus, server_url, resume, prices, gold, items_file, show_progress, replicate_of=None):
    from agenthop.runner.progress import ProgressView
    from agenthop.runner.run import SERVER_LOG, Orchestrator, manifest, prepare_run_dir, summarise

    server_thread = None
    try:
        if server_url is None:
            from agenthop.server.http import ServerThread

            out.mkdir(parents=True, exist_ok=True)
            # prepare_run_dir may move an old server log aside, so the directory is settled first.
            base_url = None
        else:
            base_url = server_url
        api_probe = ServerAPI(base_url) if base_url else None
        corpus_id = None
        if api_probe is not None:
            corpus_id = (await api_probe.health()).get("corpus")
            await api_probe.aclose()
        else:
            from agenthop.server.corpus.schema import open_corpus, read_meta

            conn = open_corpus(corpus)
            meta = read_meta(conn)
            conn.close()
            corpus_id = {"corpus_id": meta.get("corpus_id"), "schema_version": meta.get("schema_version")}
        man = prepare_run_dir(out, manifest(settings, corpus_id, server_url, items_file, replicate_of), resume)
        if server_url is None:
            server_thread = ServerThread(
                str(corpus), str(out / SERVER_LOG), budget=settings.caps.budget, max_turns=settings.caps.max_turns,
                max_tokens=settings.caps.max_tokens,
            ).start()
            base_url = server_thread.base_url
        api = ServerAPI(base_url)
        writer = RecordWriter(out / RUNNER_FILE)
        state = load_state(out / RUNNER_FILE)
        orch = Orchestrator(settings, api, writer, prices, gold, None)
        if state.open_sessions:
            recovered = await orch.recover(state, out / SERVER_LOG if server_url is None else None)
            if recovered:
                state = load_state(out / RUNNER_FILE)
        todo = [i for i in items if i not in state.final]
        writer.write({
            "kind": "run_start", "run": settings.run_label, "agent": settings.agent, "model": settings.model,
            "settings": {k: man[k] for k in ("caps", "ablations", "disabled_tools", "base_url_host", "workers", "retry", "server", "items_file")}
            | {"items": len(items), "to_run": len(todo), "resumed": resume and bool(state.final or state.errored or state.turns or state.starts)},
            "versions": man["versions"], "corpus": man["corpus"], "time": time.time(),
        })
        view = ProgressView(len(items), settings.run_label, has_gold=gold is not None, enabled=show_progress)
        view.done = len(items) - len(todo)
        view.progress.update(view.task, completed=view.done)
        orch.progress = view
        try:
            with view:
                await orch.run_items(todo)
        finally:
            await orch.aclose()
            await api.aclose()
            writer.close()
        return summarise(out / RUNNER_FILE, items, gold, prices, settings.model)
    finally:
        if server_thread is not None:
            server_thread.stop()


if __name__ == "__main__":
    main()
