"""Reading item files: the release's qa/full.jsonl, split files (JSONL with ``id``), or plain ID lists."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


class ItemsError(Exception):
    """The items file cannot be used; the message says where and why."""


@dataclass
class ItemRef:
    id: str
    question_type: str | None = None
    depth: int | None = None


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
                depth = obj.get("depth")
                ref = ItemRef(item_id, obj.get("question_type"), int(depth) if depth is not None else None)
            else:
                if any(c.isspace() for c in line) or line.startswith(("[", '"')):
                    raise ItemsError(f"{path}:{lineno}: expected one item ID or a JSON object per line, got {line[:60]!r}")
                ref = ItemRef(line)
            if ref.id in seen:
                continue
            seen.add(ref.id)
            refs.append(ref)
    if not refs:
        raise ItemsError(f"{path} lists no items")
    return refs


def fill_from_corpus(refs: list[ItemRef], corpus_path: str | Path) -> list[str]:
    """Fill question_type/depth from the corpus; return the IDs the corpus does not know."""
    from agenthop.server.schema import open_corpus

    conn = open_corpus(corpus_path)
    try:
        rows = {r[0]: (r[1], r[2]) for r in conn.execute("SELECT item_id, question_type, depth FROM items")}
    finally:
        conn.close()
    unknown = []
    for ref in refs:
        if ref.id not in rows:
            unknown.append(ref.id)
            continue
        ref.question_type, ref.depth = rows[ref.id][0], int(rows[ref.id][1])
    return unknown


def filter_items(refs: list[ItemRef], question_type: str | None, depth: int | None, limit: int | None) -> list[ItemRef]:
    out = []
    for ref in refs:
        qtype = ref.question_type
        if qtype is None and question_type is not None:
            # Release IDs carry the type: st_0123 / mt_0849.
            qtype = {"st": "single-target", "mt": "multi-target"}.get(ref.id.split("_", 1)[0])
            if qtype is None:
                raise ItemsError(f"item {ref.id}: question type unknown; give --corpus or an items file with question_type")
        if question_type is not None and qtype != question_type:
            continue
        if depth is not None:
            if ref.depth is None:
                raise ItemsError(f"item {ref.id}: depth unknown; give --corpus or an items file with a depth field")
            if ref.depth != depth:
                continue
        out.append(ref)
    return out[:limit] if limit is not None else out


def load_gold(corpus_path: str | Path) -> dict[str, int]:
    """item -> correct option index, for the progress display only (never sent anywhere)."""
    from agenthop.server.schema import open_corpus

    conn = open_corpus(corpus_path, allow_gold=True)
    try:
        return {r[0]: int(r[1]) for r in conn.execute("SELECT item_id, correct_index FROM gold_items")}
    finally:
        conn.close()
