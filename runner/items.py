"""Choosing the items of a run: reading the items file, filling type and depth from the corpus, filtering."""

from __future__ import annotations

from pathlib import Path

from agenthop.server.item_files import ItemRef, ItemsError, read_items

__all__ = ["ItemRef", "ItemsError", "read_items", "fill_from_corpus", "filter_items", "load_gold"]


def fill_from_corpus(refs: list[ItemRef], corpus_path: str | Path) -> list[str]:
    """Fill question_type/depth from the corpus; return the IDs the corpus does not know."""
    from agenthop.server.corpus_schema import open_corpus

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
                raise ItemsError(
                    f"item {ref.id}: question type unknown; serve a corpus (it knows every item's type) "
                    "or use an items file with question_type",
                    "corpus",
                )
        if question_type is not None and qtype != question_type:
            continue
        if depth is not None:
            if ref.depth is None:
                raise ItemsError(
                    f"item {ref.id}: depth unknown; serve a corpus (it knows every item's depth) "
                    "or use an items file with a depth field",
                    "corpus",
                )
            if ref.depth != depth:
                continue
        out.append(ref)
    return out[:limit] if limit is not None else out


def load_gold(corpus_path: str | Path) -> dict[str, int]:
    """item -> correct option index, for the progress display only (never sent anywhere)."""
    from agenthop.server.corpus_schema import open_corpus

    conn = open_corpus(corpus_path, allow_gold=True)
    try:
        return {r[0]: int(r[1]) for r in conn.execute("SELECT item_id, correct_index FROM gold_items")}
    finally:
        conn.close()
