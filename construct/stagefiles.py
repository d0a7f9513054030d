"""Stage outputs on disk: written atomically, skipped when their inputs and settings are unchanged.

``OUT/work/<stage>.jsonl`` holds one record per candidate that entered the stage,
kept or dropped (``"drop": {"reason", "detail"}``); ``OUT/work/<stage>.done.json``
is written after it and names the fingerprint (stage, settings, the input
file's digest) and the output's digest. A stage is finished when both agree; a
kill leaves either the old pair or no ``done`` file, never a half-written output.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path


def canonical(value) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def digest(data: bytes | str) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def file_digest(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def write_atomic(path: Path, data: bytes | str) -> None:
    """Write to a temporary file beside ``path``, flush it to disk, then rename over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data.encode() if isinstance(data, str) else data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def jsonl(records: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


class StageFiles:
    def __init__(self, work: Path):
        self.work = work

    def output(self, stage: str) -> Path:
        return self.work / f"{stage}.jsonl"

    def _done(self, stage: str) -> Path:
        return self.work / f"{stage}.done.json"

    def finished(self, stage: str, fingerprint: str) -> bool:
        done, out = self._done(stage), self.output(stage)
        if not done.exists() or not out.exists():
            return False
        record = json.loads(done.read_text())
        return record.get("fingerprint") == fingerprint and record.get("output") == file_digest(out)

    def write(self, stage: str, fingerprint: str, records: list[dict], extra: dict | None = None) -> None:
        self._done(stage).unlink(missing_ok=True)  # from here until the end, the stage counts as unfinished
        data = jsonl(records)
        write_atomic(self.output(stage), data)
        write_atomic(
            self._done(stage), canonical({"fingerprint": fingerprint, "output": digest(data), **(extra or {})}) + "\n"
        )

    def records(self, stage: str) -> list[dict]:
        return read_jsonl(self.output(stage))

    def kept(self, stage: str) -> list[dict]:
        return [r for r in self.records(stage) if "drop" not in r]
