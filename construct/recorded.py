"""Recorded model responses: a compressed file that lets anyone rebuild a release with no model and no network.

One JSON line per response, gzip-compressed (mtime 0, lines sorted by ``custom_id``, so the same responses give the
same bytes): ``custom_id`` (the stage and the call: ``qa-c-0123456789ab-a1``), ``stage``, ``model`` (the name sent in
the request, as given on the command line), ``request_sha256`` (the SHA-256 of the canonical request body: model,
messages, sampling), ``response`` (the reply text) and ``usage``. A response is found by the hash of the request it
answers; a request the store does not hold, but whose ``custom_id`` it holds under another hash, is a request that
changed since it was recorded, and a replay refuses it by name rather than use a reply to another question.
"""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

from agenthop.construct.stagefiles import write_atomic


class ReplayError(Exception):
    """A replay (no model, no network) met a request the recorded responses cannot answer; the message says which."""


class RecordedResponses:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.by_hash: dict[str, dict] = {}
        self.by_custom_id: dict[str, dict] = {}
        self.changed = False
        if self.path.exists():
            line_no = 0
            try:
                with gzip.open(self.path, "rt", encoding="utf-8") as fh:
                    for line in fh:
                        line_no += 1
                        if line.strip():
                            self._index(json.loads(line))
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise ReplayError(
                    f"{self.path} is not a recorded-responses file (gzip JSON lines), at line {line_no}: {exc}"
                ) from None

    def _index(self, record: dict) -> None:
        self.by_hash[record["request_sha256"]] = record
        self.by_custom_id[record["custom_id"]] = record

    def __len__(self) -> int:
        return len(self.by_hash)

    def get(self, key: str) -> dict | None:
        return self.by_hash.get(key)

    def add(self, *, key: str, custom_id: str, stage: str, model: str, text: str, usage: dict) -> None:
        if key in self.by_hash:
            return
        self._index(
            {
                "custom_id": custom_id,
                "stage": stage,
                "model": model,
                "request_sha256": key,
                "response": text,
                "usage": usage,
            }
        )
        self.changed = True

    def refuse(self, key: str, custom_id: str, stage: str) -> ReplayError:
        """The error for a request the store does not answer: changed since recorded, or never recorded."""
        old = self.by_custom_id.get(custom_id)
        if old is not None:
            return ReplayError(
                f"stage {stage}, custom_id {custom_id}: the recorded response answers another request "
                f"(recorded for request {old['request_sha256'][:12]}, asked {key[:12]}): the prompt, the corpus or "
                f"a setting changed since {self.path} was recorded. Record it again with the model, or restore what changed."
            )
        return ReplayError(
            f"stage {stage}, custom_id {custom_id}: {self.path} holds no response for this request "
            f"({key[:12]}); record it with the model (or a batch file) first"
        )

    def data(self) -> bytes:
        raw = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
            for record in sorted(self.by_hash.values(), key=lambda r: (r["custom_id"], r["request_sha256"])):
                gz.write((json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n").encode())
        return raw.getvalue()

    def save(self) -> None:
        if self.changed:
            write_atomic(self.path, self.data())
            self.changed = False
