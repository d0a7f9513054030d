"""Which runs a RUN argument names, and loading each: a run directory, ``log.sqlite[::LABEL]``, or the shards of one run.

``logs`` reads one run directory or log file; ``shards`` merges the N shard directories of one run;
this module picks between them, so neither has to know the other.
"""

from __future__ import annotations

from pathlib import Path

from agenthop.scorer import shards
from agenthop.scorer.errors import RunSpecError
from agenthop.scorer.logs import Run, _labels, _load_dir, _load_file, gc_paused


def split_spec(spec: str) -> tuple[Path, str | None]:
    if "::" in spec:
        path, label = spec.rsplit("::", 1)
        return Path(path), label or None
    return Path(spec), None


def _not_found(path: Path) -> RunSpecError:
    return RunSpecError(
        "run not found: {path} (pass a run directory or a checkpoint log file, optionally PATH::LABEL)",
        "runs",
        path=path,
    )


def load_runs(spec: str | Path, server_log: str | Path | None = None) -> list[Run]:
    """Every run a RUN argument names (a run directory, ``log.sqlite`` or ``log.sqlite::LABEL``).

    ``server_log``: the checkpoint log of a run directory that has no ``server-log.sqlite``.
    """
    return [load_run(single, server_log) for single in expand_spec(spec)]


def expand_spec(spec: str | Path | shards.ShardGroup) -> list[str | shards.ShardGroup]:
    """The single-run specs a RUN argument stands for, without loading any records.

    A directory or ``PATH::LABEL`` is one run; a log file without a label is one run per label.
    """
    if isinstance(spec, shards.ShardGroup):
        return [spec]
    path, label = split_spec(str(spec))
    if not path.exists():
        raise _not_found(path)
    if path.is_dir() or label is not None:
        return [str(spec)]
    labels = _labels(path)
    return [f"{path}::{lab}" for lab in labels] if len(labels) > 1 else [str(spec)]


def load_run(
    path: str | Path | shards.ShardGroup, server_log: str | Path | None = None, *, starts_only: bool = False
) -> Run:
    """Load exactly one run; a log file with several run labels needs ``::LABEL``.

    ``starts_only``: read only run.json and the ``session_start`` records (which corpus, caps, client), not the calls.
    """
    log = Path(server_log) if server_log is not None else None
    if isinstance(path, shards.ShardGroup):  # the N shard directories of one run (agenthop-runner --shard)
        with gc_paused():
            return shards.load_merged(path, log, starts_only)
    spec_path, label = split_spec(str(path))
    if spec_path.is_dir():
        if label is not None:
            raise RunSpecError(
                "{spec}: '::LABEL' applies to a checkpoint log file, not a run directory.", "runs", spec=path
            )
        group = shards.shard_parent(spec_path)  # a directory holding the shards of one run
        with gc_paused():
            if group is not None:
                return shards.load_merged(group, log, starts_only)
            return _load_dir(spec_path, log, starts_only)
    if not spec_path.exists():
        raise _not_found(spec_path)
    with gc_paused():
        return _load_file(spec_path, label, all_labels=False, starts_only=starts_only)[0]
