"""Model requests as OpenAI Batch files, and the Batch API's output files read back.

A stage run with ``--batch`` sends nothing: each request it has no answer for is written to
``OUT/work/batch/<stage>-<round>.jsonl``, one line ``{"custom_id", "method": "POST", "url": "/v1/chat/completions",
"body"}`` (the format of the OpenAI Batch API, vLLM's ``run_batch`` and others), and the run stops naming the file.
Given the matching output file (``--batch-output``: lines ``{"id", "custom_id", "response": {"status_code",
"request_id", "body"}, "error"}``), every usable answer is stored (the model cache, and the recorded responses when
kept) and the run goes on from there. A line with an error, a status other than 200 or a body with no message, and a
request with no line at all, are named; they stay unanswered, so the next batch file asks them again: nothing is
lost and nothing is made up.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from agenthop.construct.stagefiles import jsonl, write_atomic

URL = "/v1/chat/completions"
MAX_LINES = 50_000  # the OpenAI Batch API's limit per input file


class BatchError(Exception):
    """A batch output file cannot be read; the message names the file and line."""


class BatchPending(Exception):  # noqa: N818 (a stop, not a failure: the run waits for the batch's answers)
    """A stage wrote its unanswered requests to batch files and stopped; the message says what to do next."""

    def __init__(self, stage: str, files: list[Path], count: int):
        self.stage, self.files, self.count = stage, files, count
        names = ", ".join(str(f) for f in files)
        super().__init__(
            f"stage {stage}: {count} model request{'s' if count != 1 else ''} written to {names} (OpenAI Batch format). "
            "Run the file(s) through the Batch API, vLLM's run_batch or any tool that writes the Batch output format, "
            "then run the same command again with --batch-output OUTPUT_FILE (one per file) to go on."
        )


class Deferred(Exception):  # noqa: N818 (control flow: the request waits for a batch)
    """A request with no answer yet, kept for the stage's batch file."""


@dataclass
class Answer:
    text: str
    usage: dict


@dataclass
class BatchImport:
    answers: dict[str, Answer] = field(default_factory=dict)  # custom_id -> the usable answer
    failed: dict[str, str] = field(default_factory=dict)  # custom_id -> why its line is not usable

    def problems(self, asked: set[str]) -> list[str]:
        """One line per request asked in a batch file this run wrote with no usable answer in any output."""
        missing = sorted(asked - set(self.answers) - set(self.failed))
        out = [f"custom_id {c}: {why}" for c, why in sorted(self.failed.items()) if c not in self.answers]
        out += [f"custom_id {c}: no line in any --batch-output file" for c in missing]
        return out


MAX_CUSTOM_ID = 64  # what the strictest writers of the format accept (letters, digits, '_', '-'; at most 64)


def custom_id(stage: str, call_id: str) -> str:
    """The batch line's ``custom_id`` of a call: ``STAGE-CALL-aN``, readable where it fits, portable always.

    ``call_id`` is the call within the stage and its attempt (``c-0123456789ab/seed_only/a1``). Characters other than
    letters, digits, '_' and '-' become '_'; a call too long for 64 characters (a judge's hop between two DOIs) is
    named by its digest instead, keeping the stage and the attempt.
    """
    call, _, attempt = call_id.rpartition("/")
    readable = re.sub(r"[^A-Za-z0-9_-]", "_", f"{stage}-{call.replace('/', '-')}-{attempt}")
    if len(readable) <= MAX_CUSTOM_ID:
        return readable
    return f"{stage}-{hashlib.sha256(call.encode()).hexdigest()[:24]}-{attempt}"


def stage_of(custom_id_: str) -> str:
    return custom_id_.split("-", 1)[0]


def batch_line(custom_id: str, body: dict) -> dict:
    return {"custom_id": custom_id, "method": "POST", "url": URL, "body": body}


def write_batch(folder: Path, stage: str, requests: dict[str, dict]) -> list[Path]:
    """Write ``{custom_id: body}`` to the stage's next numbered batch file(s); return their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [batch_line(cid, body) for cid, body in sorted(requests.items())]
    taken = len(list(folder.glob(f"{stage}-*.jsonl")))
    paths: list[Path] = []
    for start in range(0, len(lines), MAX_LINES):
        path = folder / f"{stage}-{taken + 1 + len(paths):02d}.jsonl"
        write_atomic(path, jsonl(lines[start : start + MAX_LINES]))
        paths.append(path)
    return paths


def asked_requests(folder: Path) -> dict[str, dict]:
    """custom_id -> request body of every batch file written so far (a later file's body wins)."""
    out: dict[str, dict] = {}
    # Only the files this module wrote (STAGE-NN.jsonl): an output file saved beside them is not a request file.
    mine = [
        p
        for p in sorted(folder.glob("*-*.jsonl"))
        if re.fullmatch(r"(?:chains|qa|distractors|ensemble)-\d{2,}\.jsonl", p.name)
    ]
    for path in mine if folder.exists() else []:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                out[record["custom_id"]] = record["body"]
    return out


def _message_text(body: dict) -> str | None:
    try:
        content = body["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        return None
    return content if isinstance(content, str) else None


def _usage(body: dict) -> dict:
    u = body.get("usage") or {}
    details = u.get("prompt_tokens_details") or {}
    return {
        "prompt_tokens": u.get("prompt_tokens") or 0,
        "completion_tokens": u.get("completion_tokens") or 0,
        "cached_tokens": details.get("cached_tokens") or 0,
    }


def _not_the_format(path: Path, n: int) -> BatchError:
    return BatchError(f"{path}, line {n}: not a Batch output line (JSON with custom_id, response, error)")


def read_output(path: Path, asked: dict[str, dict], into: BatchImport) -> None:
    """Read one Batch output file into ``into``; a line that is not the format, or names no asked request, is an error."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise BatchError(f"cannot read the batch output {path}: {exc}") from None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            custom_id = record["custom_id"]
        except (ValueError, KeyError, TypeError):
            raise _not_the_format(path, n) from None
        # Only a string can name a request; an unhashable custom_id could not even be looked up.
        if not isinstance(custom_id, str):
            raise _not_the_format(path, n)
        if custom_id not in asked:
            raise BatchError(
                f"{path}, line {n}: custom_id {custom_id!r} is in no batch file of this run "
                "(is this the output of another run's batch?)"
            )
        error, response = record.get("error"), record.get("response") or {}
        if not isinstance(response, dict):
            raise _not_the_format(path, n)
        status = response.get("status_code")
        raw_body = response.get("body")
        body = raw_body if isinstance(raw_body, dict) else {}
        text_reply = _message_text(body)
        if error:
            why = error.get("message") or error.get("code") if isinstance(error, dict) else str(error)
            into.failed[custom_id] = f"the batch reported an error: {why}"
        elif status != 200:
            into.failed[custom_id] = f"HTTP status {status}: {str(body.get('error', body))[:200]}"
        elif text_reply is None:
            into.failed[custom_id] = "the response body holds no message content"
        else:
            into.answers[custom_id] = Answer(text_reply, _usage(body))
