"""Load a run's logs: the server's checkpoint records and the runner's records.

A *run* is either

* a run directory holding ``runner.jsonl`` (runner records), ``run.json`` (the
  runner's manifest: ``run`` label, ``agent``, ``model``, ``caps``, ...,
  optionally ``replicate_of``) and ``server-log.sqlite`` (the checkpoint log);
  a run made against a running server (``agenthop-runner --server URL``) has no
  ``server-log.sqlite``: pass the server's log as ``server_log`` and the
  records of the run's label are read from it; or
* a checkpoint log file ``PATH.sqlite``, optionally suffixed ``::LABEL`` to pick
  one run label. Without a label each run label in the file is a separate run.

Which runs a RUN argument names, and loading them, is ``agenthop.scorer.runs``
(``load_runs``, ``load_run``, ``expand_spec``); this module reads one run
directory or one log file.
``to_dataframe(records)`` turns records into a pandas DataFrame when pandas is
installed.

Records are the ones the server and the runner write, defined once in
``agenthop.server.log.records``; they are decoded straight into the msgspec
Structs derived from those models (``agenthop.server.log.structs``), which
validates them as the models do and is faster than decoding into dicts (reading
the logs was a quarter of the scorer's time). A record of a known kind that does
not fit its model is an error naming the file and the record; records of kinds
this version does not know are skipped. ``runner.jsonl`` lines that are not JSON
objects (a crash tears the line being written) are skipped and counted, as the
runner's own reader does.
"""

from __future__ import annotations

import gc
import json
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from agenthop.scorer.errors import RunSpecError
from agenthop.server.log import LogError, run_labels
from agenthop.server.log import structs as log_structs
from agenthop.server.log.structs import (
    AttemptError,
    AttemptStart,
    Delivered,
    ItemEnd,
    Record,
    RunStart,
    SessionEnd,
    SessionStart,
    Turn,
)

LOG_FILE = "server-log.sqlite"
RUNNER_FILE = "runner.jsonl"
MANIFEST_FILE = "run.json"

#: The seven tools, in the order used by every table and plot.
TOOLS = (
    "search_papers",
    "get_paper_info",
    "get_references",
    "list_sections",
    "read_section",
    "think",
    "submit_answer",
)
NAV_TOOLS = ("search_papers", "get_paper_info", "get_references", "list_sections")
EXECUTED_OUTCOMES = ("ok", "not_found", "no_text", "ambiguous")


__all__ = ["Call", "Run", "RunSpecError", "Session", "to_dataframe"]


class Call(log_structs.CallRecord, tag="call"):
    """One ``call`` checkpoint record: the fields of ``agenthop.server.log.records.CallRecord``."""

    @property
    def paper_id(self) -> str | None:
        """The paper the call named (the delivered paper for a successful read)."""
        if self.delivered is not None and self.delivered.paper_id:
            return self.delivered.paper_id
        pid = self.arguments.get("paper_id")
        return pid if isinstance(pid, str) else None

    @property
    def number(self) -> int:
        """The call's seq. Every call of a session has one; only a call that named an unknown session has none, and
        such a call was refused: it executed nothing, exposed and delivered nothing."""
        assert self.seq is not None, f"a call of {self.session_id} without seq"
        return self.seq

    @property
    def delivered_section(self) -> Delivered:
        """What a read that delivered text delivered; for the reads selected by ``delivered is not None``."""
        assert self.delivered is not None, f"call {self.seq} of {self.session_id} delivered nothing"
        return self.delivered


@dataclass
class Session:
    """One agent attempt at one item (or an explore session)."""

    session_id: str
    item_id: str | None
    run: str | None
    order: int  # position of its first record in the log (for "last session" rules)
    start: SessionStart | None = None
    calls: list[Call] = field(default_factory=list)
    end: SessionEnd | None = None

    @property
    def mode(self) -> str:
        if self.start is not None:
            return self.start.mode
        return "item" if self.item_id else "explore"

    @property
    def termination(self) -> str:
        return self.end.termination if self.end is not None else "abandoned"

    @property
    def answer(self) -> str | None:
        """The session_end answer, else the last ok submit_answer call's letter (as the client sent it)."""
        if self.end is not None and self.end.answer is not None:
            return self.end.answer
        for call in reversed(self.calls):
            if call.tool == "submit_answer" and call.outcome == "ok":
                letter = call.arguments.get("answer")
                if isinstance(letter, str) and letter.strip():
                    return letter.strip().upper()
        return None


@dataclass
class Run:
    """Everything logged for one run."""

    name: str
    label: str | None
    log_path: Path
    run_dir: Path | None = None
    manifest: dict = field(default_factory=dict)
    sessions: dict[str, Session] = field(default_factory=dict)
    runner_records: list[Record] = field(default_factory=list)  # RunStart, AttemptStart, Turn, AttemptError, ItemEnd
    runner_lines_skipped: int = 0  # torn or non-object lines of runner.jsonl (a crashed, resumed run)
    n_records: int = 0

    # -- runner views -------------------------------------------------
    @property
    def run_start(self) -> RunStart | None:
        return next((rec for rec in self.runner_records if isinstance(rec, RunStart)), None)

    def runner_kind(self, kind: str) -> list[Record]:
        return [r for r in self.runner_records if r.kind == kind]

    @property
    def replicate_of(self) -> str | None:
        value = self.manifest.get("replicate_of")
        return str(value) if value else None

    def corpus_ids(self) -> set[str]:
        """The corpus IDs the run says it ran on: run.json's, the runner's run_start's and each session_start's."""
        recorded = [self.manifest.get("corpus"), self.run_start.corpus if self.run_start else None]
        recorded += [s.start.corpus for s in self.sessions.values() if s.start]
        return {cid for cid in map(_corpus_id, recorded) if cid}

    def item_sessions(self) -> dict[str, list[Session]]:
        """Item ID -> its item-mode sessions in log order."""
        out: dict[str, list[Session]] = {}
        for sess in sorted(self.sessions.values(), key=lambda s: s.order):
            if sess.item_id and sess.mode == "item":
                out.setdefault(sess.item_id, []).append(sess)
        return out


def _corpus_id(value) -> str | None:
    """A corpus identity as recorded ({"corpus_id": ...}, as the server reports it; older logs: "sha256"), or None."""
    if isinstance(value, dict):
        value = value.get("corpus_id") or value.get("sha256")
    return str(value) if value else None


_DECODER = msgspec.json.Decoder()
#: Typed decoders: JSON straight into the record Structs, validated on the way.
_CHECKPOINT: msgspec.json.Decoder[SessionStart | Call | SessionEnd] = msgspec.json.Decoder(
    SessionStart | Call | SessionEnd
)
_RUNNER: msgspec.json.Decoder[RunStart | AttemptStart | Turn | AttemptError | ItemEnd] = msgspec.json.Decoder(
    RunStart | AttemptStart | Turn | AttemptError | ItemEnd
)


class _Kind(msgspec.Struct):
    kind: object = None


_KIND = msgspec.json.Decoder(_Kind)


@contextmanager
def gc_paused():
    """No cyclic garbage collection inside: loading and scoring a run create millions of small objects
    and no cycles, and the collector's passes over them took half the loading time."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _loads(text: str):
    """One JSON document, as the standard library reads it: msgspec (integers of any size stay exact), and json
    for what msgspec refuses (NaN and Infinity, which Python's json writes; torn lines raise json's error)."""
    try:
        return _DECODER.decode(text)
    except msgspec.DecodeError:
        return json.loads(text)


def _rows(path: Path, run: str | None, kinds: tuple[str, ...] | None, columns: str) -> Iterator[tuple]:
    """Rows of a checkpoint log's records table in write order, optionally of one run label and of some kinds."""
    if not path.exists():
        raise RunSpecError("log file not found: {path}", path=path)
    query, args = f"SELECT {columns} FROM records", []
    where = []
    if run is not None:
        where.append("run = ?")
        args.append(run)
    if kinds:
        where.append(f"kind IN ({', '.join('?' for _ in kinds)})")
        args.extend(kinds)
    if where:
        query += " WHERE " + " AND ".join(where)
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.DatabaseError as exc:
        raise RunSpecError("{path} is not a readable checkpoint log ({exc}).", path=path, exc=exc) from exc
    try:
        yield from conn.execute(query + " ORDER BY id", args)
    except sqlite3.DatabaseError as exc:
        raise RunSpecError("{path} is not a readable checkpoint log ({exc}).", path=path, exc=exc) from exc
    finally:
        conn.close()


def read_checkpoint_records(path: Path, run: str | None = None, kinds: tuple[str, ...] | None = None) -> Iterator[dict]:
    """The records of a checkpoint log as dicts, exactly as ``agenthop.server.log.checkpoint.read_records`` reads them."""
    for (text,) in _rows(path, run, kinds, "record"):
        yield _loads(text)


def read_typed_records(
    path: Path, run: str | None = None, kinds: tuple[str, ...] | None = None
) -> Iterator[Call | SessionStart | SessionEnd | None]:
    """The records of a checkpoint log as ``SessionStart``, ``Call`` and ``SessionEnd`` Structs, in write order;
    None for a record of a kind this version does not know. A record that does not fit its model raises RunSpecError."""
    for record_id, kind, text in _rows(path, run, kinds, "id, kind, record"):
        if kind not in log_structs.CHECKPOINT_KINDS:
            yield None
            continue
        try:
            yield _CHECKPOINT.decode(text)
        except msgspec.DecodeError as exc:  # ValidationError included
            raise RunSpecError(
                "{path}: record {id} is not a valid {kind} record ({error}). AgentHop's server writes only records "
                "of the format in docs/log-format.md: this log was edited or written by another program.",
                path=path,
                id=record_id,
                kind=kind,
                error=exc,
            ) from exc


def _runner_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of the non-blank lines of a runner.jsonl, decoded leniently (a crash can tear a line
    inside a multi-byte character; the JSON check then drops it)."""
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            for lineno, line in enumerate(fh, 1):
                line = line.strip()
                if line:
                    yield lineno, line
    except OSError as exc:
        raise RunSpecError("{path}: cannot read runner records ({exc})", path=path, exc=exc) from exc


def _read_runner_file(path: Path) -> tuple[list[dict], int]:
    """The records of a runner.jsonl as dicts and how many non-blank lines were skipped, by the rules of
    ``agenthop.runner.records.read_records``: lines that are not JSON (torn) and JSON that is not an object are skipped."""
    records: list[dict] = []
    lines = 0
    for _, line in _runner_lines(path):
        lines += 1
        try:
            rec = _loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict):
            records.append(rec)
    return records, lines - len(records)


def read_runner_records(path: Path) -> tuple[list[Record], int]:
    """The records of a runner.jsonl as ``RunStart``, ``AttemptStart``, ``Turn``, ``AttemptError`` and ``ItemEnd``
    Structs, and how many lines were skipped because they are not JSON objects (torn by a crash). Records of kinds
    this version does not know are left out; a record of a known kind that does not fit its model raises RunSpecError."""
    records: list[Record] = []
    skipped = 0
    for lineno, line in _runner_lines(path):
        try:
            records.append(_RUNNER.decode(line))
            continue
        except msgspec.ValidationError as exc:
            problem = exc
        except msgspec.DecodeError:  # not JSON: a torn line
            skipped += 1
            continue
        try:
            kind = _KIND.decode(line).kind
        except msgspec.DecodeError:  # JSON, but not an object
            skipped += 1
            continue
        if kind in log_structs.RUNNER_KINDS:
            raise RunSpecError(
                "{path}, line {line}: not a valid {kind} record ({error}). The runner writes only records "
                "of the format in docs/log-format.md: this file was edited or written by another program.",
                path=path,
                line=lineno,
                kind=kind,
                error=problem,
            ) from problem
    return records, skipped


def build_sessions(records: Iterable[Call | SessionStart | SessionEnd | None]) -> tuple[dict[str, Session], int]:
    """Group checkpoint records into sessions (record order is write order); also count the records."""
    sessions: dict[str, Session] = {}
    n = 0
    for rec in records:
        n += 1
        if rec is None:
            continue
        sid = rec.session_id
        if sid is None:
            continue
        sess = sessions.get(sid)
        if sess is None:
            sess = sessions[sid] = Session(session_id=sid, item_id=rec.item_id, run=rec.run, order=n)
        if sess.item_id is None and rec.item_id:
            sess.item_id = rec.item_id
        if isinstance(rec, Call):
            sess.calls.append(rec)
        elif isinstance(rec, SessionStart):
            sess.start = rec
        else:
            sess.end = rec
    for sess in sessions.values():
        # A call that named an unknown session is logged under its ID with no seq: after the numbered calls, in log
        # order (the sort is stable).
        sess.calls.sort(key=lambda c: (c.seq is None, c.seq or 0))
    return sessions, n


def safe_name(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in text) or "run"


def _load_manifest(run_dir: Path) -> dict:
    path = run_dir / MANIFEST_FILE
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise RunSpecError(
            "{path}: not valid JSON ({msg} at line {line})", path=path, msg=exc.msg, line=exc.lineno
        ) from exc
    if not isinstance(data, dict):
        raise RunSpecError("{path}: expected a JSON object", path=path)
    return data


#: What ``starts_only`` reads: enough to see which corpus a run was made on, without reading its calls.
STARTS = ("session_start",)


def _load_dir(run_dir: Path, server_log: Path | None = None, starts_only: bool = False) -> Run:
    manifest = _load_manifest(run_dir)
    kinds = STARTS if starts_only else None
    runner_path = run_dir / RUNNER_FILE
    runner_records, skipped = read_runner_records(runner_path) if runner_path.exists() and not starts_only else ([], 0)
    start_label = next((r.run for r in runner_records if isinstance(r, RunStart) and r.run), None)
    own_log = run_dir / LOG_FILE
    if own_log.exists():
        log_path = own_log
        labels = _labels(log_path)
        label = manifest.get("run") or (labels[0] if len(labels) == 1 else None) or start_label
        # A server log copied in from a server that also served other runs: this run's sessions only.
        only = label if len(labels) > 1 and label in labels else None
        sessions, n = build_sessions(read_typed_records(log_path, run=only, kinds=kinds))
    elif server_log is not None:
        # A run against a running server: its checkpoint records are the server log's records of its label.
        log_path = Path(server_log)
        label = manifest.get("run") or start_label or run_dir.name
        try:
            labels = run_labels(log_path)
        except LogError as exc:
            raise RunSpecError("{server_log}: {exc}", "server_log", exc=exc) from exc
        if label not in labels:
            raise RunSpecError(
                "{log} has no run labelled {label} (the label of {run_dir}); labels present: {labels}.",
                "server_log",
                log=log_path,
                label=repr(label),
                run_dir=run_dir,
                labels=", ".join(labels) or "none",
            )
        sessions, n = build_sessions(read_typed_records(log_path, run=label, kinds=kinds))
    else:
        what = (
            f"holds {RUNNER_FILE} but no {LOG_FILE}" if runner_path.exists() else f"is a directory without {LOG_FILE}"
        )
        raise RunSpecError(
            "{run_dir} {what}. A run made against a running server keeps its checkpoint log with the server: "
            "give that log as {server_log}. Otherwise pass a run directory or a checkpoint log file.",
            "server_log",
            run_dir=run_dir,
            what=what,
        )
    return Run(
        name=run_dir.name,
        label=label,
        log_path=log_path,
        run_dir=run_dir,
        manifest=manifest,
        sessions=sessions,
        runner_records=runner_records,
        runner_lines_skipped=skipped,
        n_records=n,
    )


def _labels(path: Path) -> list[str]:
    try:
        return run_labels(path)
    except LogError as exc:  # its message already names the file and why it cannot be read
        raise RunSpecError("{message}", message=exc) from exc
    except Exception as exc:  # sqlite3 errors run_labels does not translate
        raise RunSpecError("{path} is not a readable checkpoint log ({exc}).", path=path, exc=exc) from exc


def _load_file(path: Path, label: str | None, all_labels: bool, starts_only: bool = False) -> list[Run]:
    labels = _labels(path)
    if label is not None:
        if label not in labels:
            raise RunSpecError(
                "{path} has no run labelled {label}; labels present: {labels}.",
                path=path,
                label=repr(label),
                labels=", ".join(labels) or "none",
            )
        chosen: list[str | None] = [label]
    elif not labels:
        chosen = [None]
    elif not all_labels and len(labels) > 1:
        raise RunSpecError(
            "{path} holds {n} runs ({labels}); pick one with {path}::LABEL.",
            path=path,
            n=len(labels),
            labels=", ".join(labels),
        )
    else:
        chosen = list(labels)
    runs = []
    for lab in chosen:
        sessions, n = build_sessions(read_typed_records(path, run=lab, kinds=STARTS if starts_only else None))
        name = f"{path.stem}::{lab}" if lab is not None and len(labels) > 1 else (lab or path.stem)
        runs.append(Run(name=name, label=lab, log_path=path, sessions=sessions, n_records=n))
    return runs


# -- DataFrames --------------------------------------------------------------


def run_records(run: Run) -> list[dict]:
    """Flat dicts of every checkpoint record of a run (sessions in log order), as the records are stored."""
    rows: list[dict] = []
    for sess in sorted(run.sessions.values(), key=lambda s: s.order):
        records = [sess.start, *sess.calls, sess.end]
        rows.extend(msgspec.to_builtins(rec) for rec in records if rec is not None)
    return rows


def to_dataframe(records: Iterable[dict | Record] | Run):
    """A pandas DataFrame of records (dicts, records such as ``Call``, or a whole Run)."""
    try:
        import pandas as pd
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("to_dataframe needs pandas, which is not installed: pip install pandas") from exc
    if isinstance(records, Run):
        records = run_records(records)
    rows: list[dict[str, Any]] = [msgspec.to_builtins(rec) if isinstance(rec, Record) else dict(rec) for rec in records]
    return pd.DataFrame(rows)
