"""Worker processes (``--processes N``): a run's workers spread over N processes.

One process's CPU (the agents' HTTP and JSON work, and the in-process server sharing
its GIL) caps a run with a fast model. With N processes:

- the parent prepares the run directory, recovers a killed run, writes ``run_start``,
  shows the one progress display and writes the summary;
- each worker process runs its share of the workers (workers // N, the first
  workers % N get one more), serves the corpus itself on its own loopback port (all
  of them write the one checkpoint log, which many processes can share) or uses the
  run's ``--server``, and appends to the one ``runner.jsonl`` (whole batches under a
  lock, runner/records.py);
- items are handed out one at a time from a shared counter over the to-do list, so a
  slow item never holds up a share decided in advance;
- a worker process reports each finished item to the parent, which updates the display;
- a worker process dies with its parent (it watches the parent's sentinel), so a killed
  run leaves no process behind to write records a resumed run would duplicate.

Processes are started with ``spawn`` (a fork of a process running threads is unsafe)
and import while the parent prepares the run; they start on the parent's word, after
``run_start`` is on disk.
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import os
import queue
import signal
import threading
import traceback
from multiprocessing.connection import wait as wait_for

from agenthop.runner.progress import ProgressView
from agenthop.runner.run import RunError
from agenthop.runner.summary import is_correct

_CTX = mp.get_context("spawn")


def worker_shares(workers: int, processes: int) -> list[int]:
    """Workers per process: as even as possible, every process at least one."""
    processes = max(1, min(processes, workers))
    return [workers // processes + (1 if i < workers % processes else 0) for i in range(processes)]


class ProcessPool:
    def __init__(self, plan):
        self.plan = plan
        self.shares = worker_shares(plan.settings.workers, plan.processes)
        self.events = _CTX.Queue()
        self.next_index = _CTX.Value("q", 0)
        self.pipes = []
        self.procs = []
        self.finished: set[int] = set()  # processes that reported the end of their share

    def start(self) -> ProcessPool:
        for n, share in enumerate(self.shares):
            parent_end, child_end = _CTX.Pipe()
            proc = _CTX.Process(
                target=_child_main,
                args=(n, share, self.plan, child_end, self.events, self.next_index),
                name=f"agenthop-runner-{n + 1}",
                daemon=True,
            )
            proc.start()
            child_end.close()
            self.pipes.append(parent_end)
            self.procs.append(proc)
        return self

    async def prepare(self) -> None:
        """Once the run directory is settled: each process opens its server; return when all are ready to run."""
        for pipe in self.pipes:
            pipe.send("prepare")
        ready: set[int] = set()
        while len(ready) < len(self.procs):
            kind, *payload = await asyncio.to_thread(self._next_event, ready)
            if kind == "ready":
                ready.add(payload[0])
            elif kind in ("failed", "lost"):
                raise RunError(f"a worker process could not start: {payload[-1]}")

    async def run(self, todo: list[str], view: ProgressView, gold: dict[str, int] | None) -> None:
        """Hand out ``todo`` and show progress until every process has finished; RunError if one failed."""
        for pipe in self.pipes:
            pipe.send(todo)
        failures: list[str] = []
        finished = self.finished
        while len(finished) < len(self.procs):
            kind, *payload = await asyncio.to_thread(self._next_event, finished)
            if kind == "done":
                record, tokens, cost = payload
                view.item_done(record, tokens, cost, is_correct(record, gold))
            elif kind == "failed":
                failures.append(payload[0])
            elif kind == "exit":
                finished.add(payload[0])
            elif kind == "lost":
                finished.add(payload[0])
                failures.append(payload[1])
        if failures:
            raise RunError(
                "a worker process failed; finished items are kept and a new run resumes the others:\n"
                + "\n".join(failures)
            )

    def _next_event(self, finished: set[int]):
        """The next event, or ("lost", n, why) for a process that died without saying so (killed, out of memory)."""
        while True:
            try:
                return self.events.get(timeout=0.5)
            except queue.Empty:
                for n, proc in enumerate(self.procs):
                    if n not in finished and proc.exitcode not in (None, 0):
                        return ("lost", n, f"worker process {n + 1} died (exit code {proc.exitcode})")

    def close(self) -> None:
        """Stop the processes. One still running its share (this process was interrupted, or the run failed) gets
        a SIGINT, as a Ctrl-C in the terminal would send it: it stops taking items, writes its records and stops
        its server, instead of running items nobody is waiting for."""
        for pipe in self.pipes:
            pipe.close()
        for n, proc in enumerate(self.procs):
            if n not in self.finished and proc.is_alive():
                os.kill(proc.pid, signal.SIGINT)
        for proc in self.procs:
            proc.join(timeout=30)
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=5)


async def _receive(pipe):
    """The parent's next message (None when the parent stopped before sending it)."""
    try:
        return await asyncio.to_thread(pipe.recv)
    except EOFError:
        return None


def _die_with_parent() -> None:
    parent = mp.parent_process()
    if parent is None:
        return

    def watch() -> None:
        wait_for([parent.sentinel])
        os._exit(1)  # like being killed: what is on disk is what a resumed run sees

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _child_main(n: int, workers: int, plan, pipe, events, next_index) -> None:
    _die_with_parent()
    # A process started in the background inherits SIGINT ignored; the parent's close() relies on it to stop us.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        asyncio.run(_child_run(n, plan, workers, pipe, events, next_index))
    except KeyboardInterrupt:
        pass
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which fails the run
        events.put(("failed", f"worker process {n + 1}: {type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"))
    finally:
        events.put(("exit", n))


async def _child_run(n: int, plan, workers: int, pipe, events, next_index) -> None:
    from agenthop.runner.records import RUNNER_FILE, RecordWriter
    from agenthop.runner.run import SERVER_LOG, Orchestrator, close_writer, load_agent
    from agenthop.runner.session import ServerAPI
    from agenthop.server.transport.http import ServerThread

    load_agent(plan.settings.agent)  # now, while the parent prepares, not on the first item

    if not await _receive(pipe):  # "prepare": the run directory is settled
        return
    s = plan.settings
    server_thread = None
    if plan.server_url is None:
        server_thread = ServerThread(
            str(plan.corpus),
            str(plan.out / SERVER_LOG),
            budget=s.caps.budget,
            max_turns=s.caps.max_turns,
            max_tokens=s.caps.max_tokens,
        ).start()
    events.put(("ready", n))
    todo = await _receive(pipe)
    if todo is None:
        if server_thread is not None:
            server_thread.stop()
        return
    url = plan.server_url
    if not url:
        assert server_thread is not None  # started above: the plan names no server
        url = server_thread.base_url
    api = ServerAPI(url)
    writer = RecordWriter(plan.out / RUNNER_FILE)
    orch = Orchestrator(s, api, writer, plan.prices)
    orch.on_item_done = lambda record, tokens, cost: events.put(("done", record, tokens, cost))

    def claim() -> str | None:
        with next_index.get_lock():
            i = next_index.value
            if i >= len(todo):
                return None
            next_index.value = i + 1
        return todo[i]

    finished = False
    try:
        await orch.run_claimed(claim, workers)
        finished = True
    finally:
        await orch.aclose()
        await api.aclose()
        close_writer(writer, finished)
        if server_thread is not None:
            server_thread.stop()
