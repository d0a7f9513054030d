"""Scoring the shards of one run as one run (``agenthop-runner --shard K/N``, docs/runner.md).

A shard's run.json carries ``"shard": {"index", "count", "items_total", "items_sha256"}``.
Run directories whose shards share the run label, the shard count and the item list
(``items_sha256``) are the shards of one run. Given all N of them, either as separate
RUN arguments or as one directory holding them, the scorer merges them into one ``Run``:
sessions, checkpoint records and runner records are the union of the shards' (every item
is in exactly one shard, so nothing overlaps), and scores are those of a single-machine
run of the same items. Shards that disagree on agent, model, caps, ablations, tool format
or corpus, a missing shard, or a shard given twice is an error that says which.
A single shard given alone is scored as the run of its own items.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from agenthop.scorer.errors import RunSpecError
from agenthop.scorer.logs import LOG_FILE, MANIFEST_FILE, RUNNER_FILE, Run, _load_dir

#: Settings every shard of one run must share (the runner refuses to resume across them too).
SAME_SETTINGS = ("agent", "model", "caps", "ablations", "corpus", "tool_format", "sampling")


@dataclass(frozen=True)
class ShardGroup:
    """The run directories of the N shards of one run, in shard order."""

    label: str
    count: int
    items_sha256: str
    dirs: tuple[Path, ...]

    def __str__(self) -> str:
        return f"{self.label} ({self.count} shards: {', '.join(str(d) for d in self.dirs)})"


def shard_info(path: Path) -> tuple[dict, dict] | None:
    """(manifest, its shard entry) of a shard's run directory; None for anything else."""
    manifest = path / MANIFEST_FILE
    if not path.is_dir() or not manifest.is_file():
        return None
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None  # reported when the directory is loaded as a run
    shard = data.get("shard") if isinstance(data, dict) else None
    return (data, shard) if isinstance(shard, dict) else None


def _key(path: Path, manifest: dict, shard: dict) -> tuple:
    return (manifest.get("run") or path.name, shard.get("count"), shard.get("items_sha256"))


def _shard_info(path: Path) -> tuple[dict, dict]:
    """``shard_info`` of a directory already found to be a shard's."""
    info = shard_info(path)
    assert info is not None, f"{path} is not a shard's run directory"
    return info


def _group(dirs: list[Path]) -> ShardGroup:
    infos = [(d, *_shard_info(d)) for d in dirs]
    label, count, digest = _key(*infos[0])
    by_index: dict[object, Path] = {}  # keyed by the manifests' index as written: 1..count when well formed
    for d, _, shard in infos:
        index = shard.get("index")
        if index in by_index:
            raise RunSpecError(
                "shard {index}/{count} of run {label} is given twice: {first} and {second}.",
                "runs",
                index=index,
                count=count,
                label=repr(label),
                first=by_index[index],
                second=d,
            )
        by_index[index] = d
    missing = [k for k in range(1, count + 1) if k not in by_index]
    if missing:
        raise RunSpecError(
            "run {label} has {count} shards but shard(s) {missing} are missing (given: {given}). "
            "Score all {count} shard directories together, or one shard alone.",
            "runs",
            label=repr(label),
            count=count,
            missing=", ".join(f"{k}/{count}" for k in missing),
            given=", ".join(map(str, dirs)),
        )
    first = infos[0][1]
    for d, manifest, _ in infos[1:]:
        diffs = [k for k in SAME_SETTINGS if manifest.get(k) != first.get(k)]
        if diffs:
            raise RunSpecError(
                "{one} and {other} are shards of run {label} but differ in {diffs}; their scores cannot be merged.",
                "runs",
                one=d,
                other=infos[0][0],
                label=repr(label),
                diffs=", ".join(diffs),
            )
    return ShardGroup(
        label=label, count=count, items_sha256=digest, dirs=tuple(by_index[k] for k in range(1, count + 1))
    )


def group_specs(specs: list) -> list:
    """RUN arguments with the shard directories of one run replaced by one ``ShardGroup`` (at the first one's place)."""
    keyed: dict[tuple, list[Path]] = {}
    for spec in specs:
        info = shard_info(Path(str(spec))) if not isinstance(spec, ShardGroup) else None
        if info is not None:
            keyed.setdefault(_key(Path(str(spec)), *info), []).append(Path(str(spec)))
    for (label, count, digest), dirs in keyed.items():
        others = [k[0] for k in keyed if k[1:] == (count, digest) and k[0] != label]
        if others and len(dirs) < (count or 0):
            raise RunSpecError(
                "{dirs} and the shards of run(s) {others} split the same items {count} ways under different "
                "run labels ({label}); the shards of one run share its label: give every machine the same run label.",
                "runs",
                dirs=", ".join(map(str, dirs)),
                others=", ".join(map(repr, others)),
                count=count,
                label=repr(label),
            )
    out, placed = [], set()
    for spec in specs:
        info = shard_info(Path(str(spec))) if not isinstance(spec, ShardGroup) else None
        if info is None:
            out.append(spec)
            continue
        key = _key(Path(str(spec)), *info)
        if len(keyed[key]) == 1:
            out.append(spec)  # one shard alone: the run of its own items
        elif key not in placed:
            placed.add(key)
            out.append(_group(keyed[key]))
    return out


def shard_parent(path: Path) -> ShardGroup | None:
    """A directory that holds the shard directories of one run (and no run of its own) stands for that run."""
    if not path.is_dir() or (path / RUNNER_FILE).exists() or (path / LOG_FILE).exists():
        return None
    children = sorted(d for d in path.iterdir() if shard_info(d) is not None)
    if not children:
        return None
    if len({_key(d, *_shard_info(d)) for d in children}) != 1:
        raise RunSpecError(
            "{path} holds shard directories of more than one run; pass the shard directories of one run.",
            "runs",
            path=path,
        )
    return _group(children)  # names any shard that is missing or given twice


def load_merged(group: ShardGroup, server_log: Path | None = None, starts_only: bool = False) -> Run:
    """One Run from the N shards of ``group`` (``starts_only``: as runs.load_run)."""
    parts = [_load_dir(d, server_log, starts_only) for d in group.dirs]
    sessions = {}
    offset = 0
    logs_read: set[Path] = set()
    for part in parts:
        if part.log_path in logs_read:
            continue  # shards run against one server share its log: the run's sessions were all read with the first
        logs_read.add(part.log_path)
        for sid, sess in part.sessions.items():
            if sid in sessions:
                raise RunSpecError(
                    "session {sid} appears in two shards of run {label}; the shards overlap.",
                    "runs",
                    sid=sid,
                    label=repr(group.label),
                )
            sess.order += offset  # log order within each shard, shards one after another
            sessions[sid] = sess
        offset += part.n_records
    manifest = dict(parts[0].manifest)
    shard = dict(manifest.get("shard") or {})
    shard.pop("index", None)
    manifest["shard"] = shard | {"merged_from": [str(d) for d in group.dirs]}
    return Run(
        name=group.label,
        label=parts[0].label,
        log_path=parts[0].log_path,
        run_dir=None,
        manifest=manifest,
        sessions=sessions,
        runner_records=[r for p in parts for r in p.runner_records],
        runner_lines_skipped=sum(p.runner_lines_skipped for p in parts),
        n_records=offset,
    )
