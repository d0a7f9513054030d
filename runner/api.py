"""Running a benchmark from Python: ``run_items(...)`` returns a typed ``RunResult``.

    from agenthop.runner import run_items
    result = run_items("splits/demo.jsonl", agent="baseline", corpus="corpus.sqlite", out="runs/demo")
    print(result.summary.accuracy, result.out)

This is everything ``agenthop-runner`` does; the CLI only parses its flags, calls
``run_items`` and turns the errors below into messages that name flags. Errors:
``RunError`` (and its subclasses ``ResumeConflict`` and ``NoItemsLeft``), ``ItemsError``
(the items file), ``ServerError`` (the sandbox server), ``CorpusError``, ``ShardError``.
A KeyboardInterrupt stops the run with every finished item kept; calling again resumes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agenthop.llm.pricing import PriceTable
from agenthop.llm.retry import RetryPolicy
from agenthop.llm.wire import Sampling
from agenthop.runner.config import AGENTS, RunSettings, missing_api_key
from agenthop.runner.items import fill_from_corpus, filter_items, load_gold, read_items
from agenthop.runner.records import RUNNER_FILE, RecordWriter, load_state
from agenthop.runner.run import (
    SERVER_LOG,
    NoItemsLeft,
    Orchestrator,
    RunError,
    close_writer,
    load_agent,
    manifest,
    prepare_run_dir,
)
from agenthop.runner.session import ALL_TOOLS, ServerAPI
from agenthop.runner.sharding import Shard, parse_shard, shard_manifest
from agenthop.runner.summary import RunSummary, summarise
from agenthop.server.caps import Caps
from agenthop.server.item_files import ItemRef
from agenthop.server.log import RunStart


@dataclass(frozen=True)
class RunResult:
    """What ``run_items`` did: where it wrote, what it ran, and the run's standing."""

    out: Path  # the run directory (run.json, runner.jsonl, server-log.sqlite)
    run_label: str
    items: list[str]  # the items of this run (after filters and shard), in order
    summary: RunSummary  # over ``items``, from runner.jsonl (every invocation of this run directory)


@dataclass
class RunPlan:
    """Everything a run needs, validated; what the worker processes receive."""

    settings: RunSettings
    items: list[str]
    out: Path
    corpus: Path | None
    server_url: str | None
    resume: bool
    prices: PriceTable
    items_file: str
    replicate_of: str | None = None
    shard: dict | None = None
    processes: int = 1
    show_progress: bool = True


def default_out(
    model: str,
    agent: str,
    closed_book: bool,
    disabled: Sequence[str],
    read_first: bool,
    text_tools: bool = False,
    shard: Shard | None = None,
) -> Path:
    """``runs/<model>-<agent>[-closed-book][-no-<tools>][-read-first][-text-tools][-shard-K-of-N]``."""
    import re

    parts = [re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("_") or "run", agent]
    if closed_book:
        parts.append("closed-book")
    if disabled:
        parts.append("no-" + "-".join(d.replace("_", "") for d in sorted(disabled)))
    if read_first:
        parts.append("read-first")
    if text_tools:
        parts.append("text-tools")
    if shard is not None:
        parts.append(f"shard-{shard.index}-of-{shard.count}")
    return Path("runs") / "-".join(parts)


def default_label(out: Path, shard: Shard | None) -> str:
    """The run directory's name; for a shard without its ``-shard-K-of-N`` suffix, so the N shards share one label.
    A shard directory named ``shard-K-of-N`` inside the run's folder (the layout of shards a cluster engine
    starts) takes the folder's name."""
    name = out.resolve().name
    if shard is not None and name == f"shard-{shard.index}-of-{shard.count}":
        return out.resolve().parent.name
    suffix = f"-shard-{shard.index}-of-{shard.count}" if shard is not None else ""
    return name[: -len(suffix)] if suffix and name.endswith(suffix) and len(name) > len(suffix) else name


def select_items(
    items: str | Path | Sequence[str],
    corpus: Path | None,
    question_type: str | None,
    depth: int | None,
    limit: int | None,
) -> list[str]:
    """The run's item IDs: read (a file, or IDs given directly), checked against the corpus, filtered."""
    if isinstance(items, (str, Path)):
        refs = read_items(items)
        source = str(items)
    else:
        refs = [ItemRef(id=str(i)) for i in dict.fromkeys(items)]
        source = "the given item list"
    if corpus is not None:
        unknown = fill_from_corpus(refs, corpus)
        if unknown:
            raise RunError(
                f"{len(unknown)} item(s) of {source} are not in {corpus}: "
                f"{', '.join(unknown[:5])}{' ...' if len(unknown) > 5 else ''}"
            )
    chosen = [r.id for r in filter_items(refs, question_type, depth, limit)]
    if not chosen:
        raise NoItemsLeft("no items left after the question-type, depth and limit filters")
    return chosen


def run_items(
    items: str | Path | Sequence[str],
    *,
    agent: str,
    model: str | None = None,
    out: str | Path | None = None,
    corpus: str | Path | None = None,
    server: str | None = None,
    base_url: str | None = None,
    api_key_env: str = "OPENAI_API_KEY",
    workers: int = 1,
    processes: int = 1,
    shard: Shard | str | None = None,
    question_type: str | None = None,
    depth: int | None = None,
    limit: int | None = None,
    closed_book: bool = False,
    disabled_tools: Sequence[str] = (),
    read_first: bool = False,
    text_tools: bool = False,
    caps: Caps | None = None,
    resume: bool = True,
    prices: PriceTable | str | Path | None = None,
    run_label: str | None = None,
    replicate_of: str | None = None,
    retry: RetryPolicy | None = None,
    item_attempts: int = 3,
    trace: bool = False,
    progress: bool = True,
    sampling: Sampling | None = None,
) -> RunResult:
    """Run one sandbox session per item with a reference agent and write the run directory.

    ``items``: an items file (the release's qa/full.jsonl, a split JSONL, or one ID per line) or the IDs
    themselves. ``corpus`` is served in-process on a free loopback port; ``server`` is the URL of a running
    ``agenthop-server serve --transport http`` instead (exactly one of the two). ``workers`` items run at
    once, spread over ``processes`` worker processes. ``shard`` ("K/N" or a Shard) runs only that share of
    the items (see ``agenthop.runner.sharding``). ``caps`` default to 30 points, 20 turns, 200,000 tokens;
    a cap of None is unlimited. ``sampling``: the per-call generation settings of the raw and sdk agents
    (``agenthop.llm.wire.Sampling``; by default nothing but a 16,384-token cap per call is sent).
    Other arguments as the CLI flags of the same names (docs/runner.md).
    """
    plan = plan_run(
        items,
        agent=agent,
        model=model,
        out=out,
        corpus=corpus,
        server=server,
        base_url=base_url,
        api_key_env=api_key_env,
        workers=workers,
        processes=processes,
        shard=shard,
        question_type=question_type,
        depth=depth,
        limit=limit,
        closed_book=closed_book,
        disabled_tools=disabled_tools,
        read_first=read_first,
        text_tools=text_tools,
        caps=caps,
        resume=resume,
        prices=prices,
        run_label=run_label,
        replicate_of=replicate_of,
        retry=retry,
        item_attempts=item_attempts,
        trace=trace,
        progress=progress,
        sampling=sampling,
    )
    summary = asyncio.run(execute(plan))
    return RunResult(out=plan.out, run_label=plan.settings.run_label, items=plan.items, summary=summary)


def plan_run(
    items,
    *,
    agent,
    model,
    out,
    corpus,
    server,
    base_url,
    api_key_env,
    workers,
    processes,
    shard,
    question_type,
    depth,
    limit,
    closed_book,
    disabled_tools,
    read_first,
    text_tools,
    caps,
    resume,
    prices,
    run_label,
    replicate_of,
    retry,
    item_attempts,
    trace,
    progress,
    sampling=None,
) -> RunPlan:
    """Validate the arguments of ``run_items`` and choose the items; nothing is written."""
    if agent not in AGENTS:
        raise RunError(f"unknown agent {agent!r}; agents are {', '.join(AGENTS)}")
    if agent in ("raw", "sdk") and not model:
        raise RunError("the raw and sdk agents need a model name")
    if text_tools and agent != "raw":
        raise RunError("text-format tool calls are a mode of the raw agent only")
    if (why := missing_api_key(agent, base_url, api_key_env)) is not None:
        raise RunError(why, "api_key_env")
    model = model or "baseline"
    if corpus is not None and server is not None:
        raise RunError("serve a corpus in-process or use a running server, not both")
    if corpus is None and server is None:
        raise RunError("no corpus to serve and no server to use: give one of them")
    disabled = tuple(dict.fromkeys(disabled_tools))
    bad = [t for t in disabled if t not in ALL_TOOLS]
    if bad:
        raise RunError(f"unknown tool(s) {bad}; tools are {', '.join(ALL_TOOLS)}")
    if "submit_answer" in disabled:
        raise RunError("submit_answer cannot be disabled (an item could never be answered)")
    if workers < 1 or processes < 1:
        raise RunError("workers and processes must be at least 1")
    if isinstance(shard, str):
        shard = parse_shard(shard)
    if isinstance(prices, PriceTable):
        price_table = prices
    else:
        try:
            price_table = PriceTable.load(prices)
        except (OSError, ValueError) as exc:
            raise RunError(f"price table: {exc}") from exc
    corpus = Path(corpus) if corpus is not None else None
    chosen = select_items(items, corpus, question_type, depth, limit)
    shard_info = None
    if shard is not None:
        shard_info = shard_manifest(shard, chosen)
        chosen = shard.take(chosen)
        if not chosen:
            raise NoItemsLeft(
                f"shard {shard} of {shard_info['items_total']} item(s) is empty: use fewer shards than items", "shard"
            )
    out = (
        Path(out)
        if out is not None
        else default_out(model, agent, closed_book, disabled, read_first, text_tools, shard)
    )
    settings = RunSettings(
        agent=agent,
        model=model,
        run_label=run_label or default_label(out, shard),
        base_url=base_url,
        api_key_env=api_key_env,
        caps=caps if caps is not None else Caps(),
        closed_book=closed_book,
        disabled_tools=disabled,
        read_first=read_first,
        text_tools=text_tools,
        retry=retry or RetryPolicy(),
        item_attempts=item_attempts,
        workers=workers,
        trace=trace,
        sampling=sampling or Sampling(),
    )
    items_file = str(items) if isinstance(items, (str, Path)) else "(item list given in Python)"
    return RunPlan(
        settings=settings,
        items=chosen,
        out=out,
        corpus=corpus,
        server_url=server,
        resume=resume,
        prices=price_table,
        items_file=items_file,
        replicate_of=replicate_of,
        shard=shard_info,
        processes=min(processes, workers),
        show_progress=progress,
    )


async def _corpus_identity(plan: RunPlan) -> dict | None:
    if plan.server_url is not None:
        probe = ServerAPI(plan.server_url)
        try:
            return (await probe.health()).get("corpus")
        finally:
            await probe.aclose()
    from agenthop.server.corpus_schema import open_corpus, read_meta

    assert plan.corpus is not None  # a plan that names no server names a corpus
    conn = open_corpus(plan.corpus)
    try:
        meta = read_meta(conn)
    finally:
        conn.close()
    return {"corpus_id": meta.get("corpus_id"), "schema_version": meta.get("schema_version")}


async def execute(plan: RunPlan) -> RunSummary:
    """Run a validated plan: run directory, server, recovery of a killed run, run_start, the items, the summary."""
    from agenthop.runner.progress import ProgressView

    s = plan.settings
    out = plan.out
    gold = load_gold(plan.corpus) if plan.corpus is not None else None
    pool = None
    if plan.processes > 1:
        from agenthop.runner.multiproc import ProcessPool

        pool = ProcessPool(plan).start()  # the processes import while this one prepares the run
    server_thread = None
    api = writer = orch = None
    finished = False
    try:
        out.mkdir(parents=True, exist_ok=True)
        # prepare_run_dir may move an old server log aside, so the directory is settled before a server opens it.
        man = prepare_run_dir(
            out,
            manifest(
                s,
                await _corpus_identity(plan),
                plan.server_url,
                plan.items_file,
                plan.replicate_of,
                shard=plan.shard,
                processes=plan.processes,
            ),
            plan.resume,
        )
        if plan.server_url is None:
            from agenthop.server.transport.http import ServerThread

            server_thread = ServerThread(
                str(plan.corpus),
                str(out / SERVER_LOG),
                budget=s.caps.budget,
                max_turns=s.caps.max_turns,
                max_tokens=s.caps.max_tokens,
            ).start()
        if pool is not None:
            await pool.prepare()
        url = plan.server_url
        if not url:
            assert server_thread is not None  # started above: the plan names no server
            url = server_thread.base_url
        api = ServerAPI(url)
        writer = RecordWriter(out / RUNNER_FILE)
        state = load_state(out / RUNNER_FILE)
        orch = Orchestrator(s, api, writer, plan.prices, gold, None)
        if state.open_sessions:
            recovered = await orch.recover(state, out / SERVER_LOG if plan.server_url is None else None)
            if recovered:
                await orch.durable()
                state = load_state(out / RUNNER_FILE)
        todo = [i for i in plan.items if i not in state.final]
        if pool is None:  # worker processes import theirs while this one prepares
            load_agent(s.agent)
        writer.write(
            RunStart(
                run=s.run_label,
                agent=s.agent,
                model=s.model,
                settings={
                    k: man[k]
                    for k in (
                        "caps",
                        "ablations",
                        "disabled_tools",
                        "sampling",
                        "base_url_host",
                        "workers",
                        "retry",
                        "server",
                        "items_file",
                    )
                }
                | {
                    "items": len(plan.items),
                    "to_run": len(todo),
                    "resumed": plan.resume and bool(state.final or state.errored or state.turns or state.starts),
                }
                | ({"processes": plan.processes} if plan.processes > 1 else {})
                | ({"shard": plan.shard} if plan.shard else {}),
                versions=man["versions"],
                corpus=man["corpus"],
                time=time.time(),
            )
        )
        await orch.durable()
        view = ProgressView(len(plan.items), s.run_label, has_gold=gold is not None, enabled=plan.show_progress)
        view.done = len(plan.items) - len(todo)
        view.progress.update(view.task, completed=view.done)
        with view:
            if pool is None:
                orch.progress = view
                await orch.run_items(todo)
            else:
                if server_thread is not None:
                    # Each worker process serves the corpus itself; this one's server was only needed for recovery.
                    server_thread.stop()
                    server_thread = None
                await pool.run(todo, view, gold)
        finished = True
    finally:
        if pool is not None:
            pool.close()
        if orch is not None:
            await orch.aclose()
        if api is not None:
            await api.aclose()
        if writer is not None:
            close_writer(writer, finished)
        if server_thread is not None:
            server_thread.stop()
    return summarise(out / RUNNER_FILE, plan.items, gold, plan.prices, s.model)
