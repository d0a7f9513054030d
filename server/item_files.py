"""Item files, read the same way by the runner and the scorer: the release's qa/full.jsonl,
split files (JSONL with ``id``), or plain lists of item IDs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


class ItemsError(Exception):
    """The items file cannot be used; the message says where and why. ``param`` names the parameter that would
    fix it when that is not the file itself (``corpus``: serving a corpus gives what the file lacks)."""

    def __init__(self, message: str, param: str | None = None):
        super().__init__(message)
        self.param = param


@dataclass
class ItemRef:
    id: str
    question_type: str | None = None
    depth: int | None = None


def _depth(value: object, where: str) -> int | None:
    """The ``depth`` field as an int: an integer, or a string or float holding one; None when absent."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    raise ItemsError(f"{where}: field 'depth' must be an integer (1 or 2), got {value!r}")


def read_items(path: str | Path) -> list[ItemRef]:
    """Item references in file order, without duplicates.

    A line is either a JSON object with ``id`` (also accepted: ``item_id``,
    ``sample_id``) and optionally ``question_type`` / ``depth``, or a bare item
    ID. Blank lines and lines starting with ``#`` are skipped.
    """
    path = Path(path)
    if not path.exists():
        raise ItemsError(f"items file not found: {path}")
    refs: list[ItemRef] = []
    seen: set[str] = set()
    with open(path, encoding="utf-8") as fh:
        for lineno, raw in enumerate(fh, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("{"):
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ItemsError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from exc
                item_id = obj.get("id", obj.get("item_id", obj.get("sample_id")))
                if not isinstance(item_id, str) or not item_id:
                    raise ItemsError(f"{path}:{lineno}: JSON line has no string 'id' field")
                where = f"{path}:{lineno}"
                qtype = obj.get("question_type")
                if qtype is not None and not isinstance(qtype, str):
                    raise ItemsError(f"{where}: field 'question_type' must be a string, got {qtype!r}")
                ref = ItemRef(item_id, qtype, _depth(obj.get("depth"), where))
            else:
                if any(c.isspace() for c in line) or line.startswith(("[", '"')):
                    raise ItemsError(
                        f"{path}:{lineno}: expected one item ID or a JSON object per line, got {line[:60]!r}"
                    )
                ref = ItemRef(line)
            if ref.id in seen:
                continue
            seen.add(ref.id)
            refs.append(ref)
    if not refs:
        raise ItemsError(f"{path} lists no items")
    return refs
