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

``load_runs(spec)`` returns every run a spec names; ``load_run(path)`` returns
exactly one (and says how to pick one when the file holds several).
``to_dataframe(records)`` turns records into a pandas DataFrame when pandas is
installed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agenthop.runner.records import read_records as read_runner_records
from agenthop.server.checkpoint import LogError, read_records, run_labels

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


class RunSpecError(Exception):
    """A RUN argument names nothing the scorer can load; the message says why."""


@dataclass
class Call:
    """One ``call`` checkpoint record."""

    seq: int
    tool: str
    arguments: dict
    outcome: str
    executed: bool
    cost: int
    turn: int | None = None
    tokens: int | None = None
    forced: bool = False
    budget_before: int | None = None
    budget_after: int | None = None
    latency_ms: float | None = None
    exposed: list = field(default_factory=list)
    delivered: dict | None = None
    output_chars: int | None = None
    message: str | None = None
    time: float | None = None

    @property
    def paper_id(self) -> str | None:
        """The paper the call named (the delivered paper for a successful read)."""
        if self.delivered and self.delivered.get("paper_id"):
            return self.delivered["paper_id"]
        pid = self.arguments.get("paper_id") if isinstance(self.arguments, dict) else None
        return pid if isinstance(pid, str) else None

    @classmethod
    def from_record(cls, rec: dict) -> Call:
        args = rec.get("arguments")
        exposed = rec.get("exposed") or []
        return cls(
            seq=int(rec.get("seq") or 0),
            tool=str(rec.get("tool") or ""),
            arguments=args if isinstance(args, dict) else {},
            outcome=str(rec.get("outcome") or ""),
            executed=bool(rec.get("executed", rec.get("outcome") in EXECUTED_OUTCOMES)),
            cost=int(rec.get("cost") or 0),
            turn=rec.get("turn"),
            tokens=rec.get("tokens"),
            forced=bool(rec.get("forced") or False),
            budget_before=rec.get("budget_before"),
            budget_after=rec.get("budget_after"),
            latency_ms=rec.get("latency_ms"),
            exposed=exposed if isinstance(exposed, list) else [],
            delivered=rec.get("delivered") or None,
            output_chars=rec.get("output_chars"),
            message=rec.get("message"),
            time=rec.get("time"),
        )


@dataclass
class Session:
    """One agent attempt at one item (or an explore session)."""

    session_id: str
    item_id: str | None
    run: str | None
    order: int  # position of its first record in the log (for "last session" rules)
    start: dict | None = None
    calls: list[Call] = field(default_factory=list)
    end: dict | None = None

    @property
    def mode(self) -> str:
        if self.start and self.start.get("mode"):
            return self.start["mode"]
        return "item" if self.item_id else "explore"

    @property
    def termination(self) -> str:
        return (self.end or {}).get("termination") or "abandoned"

    @property
    def answer(self) -> str | None:
        """The session_end answer, else the last ok submit_answer call's letter."""
        if self.end and self.end.get("answer"):
            return str(self.end["answer"]).strip().upper() or None
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
    runner_records: list[dict] = field(default_factory=list)
    runner_lines_skipped: int = 0  # torn or non-object lines of runner.jsonl (a crashed, resumed run)
    n_records: int = 0

    # -- runner views -------------------------------------------------
    @property
    def run_start(self) -> dict | None:
        for rec in self.runner_records:
            if rec.get("kind") == "run_start":
                return rec
        return None

    def runner_kind(self, kind: str) -> list[dict]:
        return [r for r in self.runner_records if r.get("kind") == kind]

    @property
    def replicate_of(self) -> str | None:
        value = self.manifest.get("replicate_of")
        return str(value) if value else None

    def item_sessions(self) -> dict[str, list[Session]]:
        """Item ID -> its item-mode sessions in log order."""
        out: dict[str, list[Session]] = {}
        for sess in sorted(self.sessions.values(), key=lambda s: s.order):
            if sess.item_id and sess.mode == "item":
                out.setdefault(sess.item_id, []).append(sess)
        return out


def _read_runner_file(path: Path) -> tuple[list[dict], int]:
    """The records of a runner.jsonl (the runner's own reader: torn lines are skipped) and how many lines were skipped."""
    try:
        records = list(read_runner_records(path))
        with path.open(encoding="utf-8") as fh:
            lines = sum(1 for line in fh if line.strip())
    except (OSError, UnicodeDecodeError) as exc:
        raise RunSpecError(f"{path}: cannot read runner records ({exc})") from exc
    return records, lines - len(records)


def build_sessions(records: Iterable[dict]) -> tuple[dict[str, Session], int]:
    """Group checkpoint records into sessions (record order is write order)."""
    sessions: dict[str, Session] = {}
    n = 0
    for rec in records:
        n += 1
        sid = rec.get("session_id")
        if sid is None:
            continue
        sess = sessions.get(sid)
        if sess is None:
            sess = sessions[sid] = Session(session_id=sid, item_id=rec.get("item_id"), run=rec.get("run"), order=n)
        if sess.item_id is None and rec.get("item_id"):
            sess.item_id = rec.get("item_id")
        kind = rec.get("kind")
        if kind == "session_start":
            sess.start = rec
        elif kind == "call":
            sess.calls.append(Call.from_record(rec))
        elif kind == "session_end":
            sess.end = rec
    for sess in sessions.values():
        sess.calls.sort(key=lambda c: c.seq)
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
        raise RunSpecError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from exc
    if not isinstance(data, dict):
        raise RunSpecError(f"{path}: expected a JSON object")
    return data


def _load_dir(run_dir: Path, server_log: Path | None = None) -> Run:
    manifest = _load_manifest(run_dir)
    runner_path = run_dir / RUNNER_FILE
    runner_records, skipped = _read_runner_file(runner_path) if runner_path.exists() else ([], 0)
    start_label = next((r.get("run") for r in runner_records if r.get("kind") == "run_start" and r.get("run")), None)
    own_log = run_dir / LOG_FILE
    if own_log.exists():
        log_path = own_log
        sessions, n = build_sessions(read_records(log_path))
        labels = sorted({s.run for s in sessions.values() if s.run is not None})
        label = manifest.get("run") or (labels[0] if len(labels) == 1 else None) or start_label
    elif server_log is not None:
        # A run against a running server: its checkpoint records are the server log's records of its label.
        log_path = Path(server_log)
        label = manifest.get("run") or start_label or run_dir.name
        try:
            labels = run_labels(log_path)
        except LogError as exc:
            raise RunSpecError(f"--server-log: {exc}") from exc
        if label not in labels:
            raise RunSpecError(f"{log_path} has no run labelled {label!r} (the label of {run_dir}); "
                               f"labels present: {', '.join(labels) or 'none'}.")
        sessions, n = build_sessions(read_records(log_path, run=label))
    else:
        what = f"holds {RUNNER_FILE} but no {LOG_FILE}" if runner_path.exists() else f"is a directory without {LOG_FILE}"
        raise RunSpecError(
            f"{run_dir} {what}. A run made with 'agenthop-runner --server URL' keeps its checkpoint log with the "
            f"server: pass that log with --server-log PATH. Otherwise pass a run directory or a checkpoint log file."
        )
    return Run(name=run_dir.name, label=label, log_path=log_path, run_dir=run_dir, manifest=manifest,
               sessions=sessions, runner_records=runner_records, runner_lines_skipped=skipped, n_records=n)


def _load_file(path: Path, label: str | None, all_labels: bool) -> list[Run]:
    try:
        labels = run_labels(path)
    except Exception as exc:  # sqlite3.DatabaseError and friends
        raise RunSpecError(f"{path} is not a readable checkpoint log ({exc}).") from exc
    if label is not None:
        if label not in labels:
            raise RunSpecError(f"{path} has no run labelled {label!r}; labels present: {labels or 'none'}.")
        chosen: list[str | None] = [label]
    elif not labels:
        chosen = [None]
    elif not all_labels and len(labels) > 1:
        raise RunSpecError(f"{path} holds {len(labels)} runs ({', '.join(labels)}); pick one with {path}::LABEL.")
    else:
        chosen = list(labels)
    runs = []
    for lab in chosen:
        records = read_records(path, run=lab) if lab is not None else read_records(path)
        sessions, n = build_sessions(records)
        name = f"{path.stem}::{lab}" if lab is not None and len(labels) > 1 else (lab or path.stem)
        runs.append(Run(name=name, label=lab, log_path=path, sessions=sessions, n_records=n))
    return runs


def split_spec(spec: str) -> tuple[Path, str | None]:
    if "::" in spec:
        path, label = spec.rsplit("::", 1)
        return Path(path), label or None
    return Path(spec), None


def load_runs(spec: str | Path, server_log: str | Path | None = None) -> list[Run]:
    """Every run a RUN argument names (a run directory, ``log.sqlite`` or ``log.sqlite::LABEL``).

    ``server_log``: the checkpoint log of a run directory that has no ``server-log.sqlite``.
    """
    from agenthop.scorer import shards  # the shards of one run load as one run (scorer/shards.py)

    if isinstance(spec, shards.ShardGroup):
        return [shards.load_merged(spec, server_log)]
    path, label = split_spec(str(spec))
    if not path.exists():
        raise RunSpecError(f"run not found: {path} (pass a run directory or a checkpoint log file, optionally PATH::LABEL)")
    if path.is_dir():
        if label is not None:
            raise RunSpecError(f"{spec}: '::LABEL' applies to a checkpoint log file, not a run directory.")
        group = shards.shard_parent(path)
        if group is not None:
            return [shards.load_merged(group, server_log)]
        return [_load_dir(path, Path(server_log) if server_log is not None else None)]
    return _load_file(path, label, all_labels=True)


def expand_spec(spec: str | Path) -> list[str]:
    """The single-run specs a RUN argument stands for, without loading any records.

    A directory or ``PATH::LABEL`` is one run; a log file without a label is one run per label.
    """
    if not isinstance(spec, (str, Path)):  # a shards.ShardGroup
        return [spec]
    path, label = split_spec(str(spec))
    if not path.exists():
        raise RunSpecError(f"run not found: {path} (pass a run directory or a checkpoint log file, optionally PATH::LABEL)")
    if path.is_dir() or label is not None:
        return [str(spec)]
    try:
        labels = run_labels(path)
    except Exception as exc:  # sqlite3.DatabaseError and friends
        raise RunSpecError(f"{path} is not a readable checkpoint log ({exc}).") from exc
    return [f"{path}::{lab}" for lab in labels] if len(labels) > 1 else [str(spec)]


def load_run(path: str | Path, server_log: str | Path | None = None) -> Run:
    """Load exactly one run; a log file with several run labels needs ``::LABEL``."""
    spec_path, label = split_spec(str(path))
    if not isinstance(path, (str, Path)) or spec_path.is_dir():  # a shards.ShardGroup or a run directory
        return load_runs(path, server_log)[0]
    if not spec_path.exists():
        raise RunSpecError(f"run not found: {spec_path}")
    return _load_file(spec_path, label, all_labels=False)[0]


# -- DataFrames --------------------------------------------------------------

def run_records(run: Run) -> list[dict]:
    """Flat dicts of every checkpoint record of a run (sessions in log order)."""
    rows: list[dict] = []
    for sess in sorted(run.sessions.values(), key=lambda s: s.order):
        if sess.start:
            rows.append(dict(sess.start))
        for c in sess.calls:
            row = {k: v for k, v in c.__dict__.items()}
            row.update(kind="call", session_id=sess.session_id, item_id=sess.item_id, run=sess.run)
            rows.append(row)
        if sess.end:
            rows.append(dict(sess.end))
    return rows


def to_dataframe(records: Iterable[dict] | Run):
    """A pandas DataFrame of records (dicts, Call objects, or a whole Run)."""
    try:
        import pandas as pd
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "to_dataframe needs pandas, which is not installed: pip install pandas"
        ) from exc
    if isinstance(records, Run):
        records = run_records(records)
    rows: list[dict[str, Any]] = []
    for rec in records:
        rows.append(dict(rec.__dict__) if isinstance(rec, Call) else dict(rec))
    return pd.DataFrame(rows)
