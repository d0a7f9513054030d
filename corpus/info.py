"""``agenthop-server corpus info``: what a corpus file holds and where it came from.

Everything here reads only public tables (the file is opened with
:func:`agenthop.server.corpus_schema.open_corpus`, which denies reads of ``gold_``
tables), so describing a corpus can never print gold data.
"""

from __future__ import annotations

import json
from pathlib import Path

from agenthop.corpus.convert.quality import QUALITY_META_KEY, render
from agenthop.corpus.problems import describe_warning
from agenthop.corpus.summaries import CorpusCounts, CorpusDescription
from agenthop.server.corpus_schema import open_corpus, read_meta

_CELLS = ("ST-d1", "ST-d2", "MT-d1", "MT-d2")


def describe(path: str | Path) -> CorpusDescription:
    """Schema version, corpus id, provenance and live counts of a corpus file.

    Raises :class:`agenthop.server.corpus_schema.CorpusError` for a missing,
    non-SQLite or wrong-version file.
    """
    path = Path(path)
    conn = open_corpus(path)
    try:
        meta = read_meta(conn)

        def one(sql: str) -> int:
            return conn.execute(sql).fetchone()[0]

        by_type: dict[str, int] = {}
        by_depth: dict[str, int] = {}
        by_cell = dict.fromkeys(_CELLS, 0)
        by_reasoning: dict[str, int] = {}
        for qtype, depth, count in conn.execute(
            "SELECT question_type, depth, COUNT(*) FROM items GROUP BY question_type, depth"
        ):
            by_type[qtype] = by_type.get(qtype, 0) + count
            by_depth[str(depth)] = by_depth.get(str(depth), 0) + count
            by_cell[f"{'ST' if qtype == 'single-target' else 'MT'}-d{depth}"] = count
        for rtype, count in conn.execute(
            "SELECT reasoning_type, COUNT(*) FROM items GROUP BY reasoning_type ORDER BY reasoning_type"
        ):
            by_reasoning[rtype] = count
        nodes = conn.execute(
            "SELECT MIN(n), AVG(n), MAX(n) FROM (SELECT COUNT(*) AS n FROM item_nodes GROUP BY item_id)"
        ).fetchone()
        licences = _licences(conn)
        counts: CorpusCounts = {
            "papers": one("SELECT COUNT(*) FROM papers"),
            "papers_with_text": one("SELECT COUNT(*) FROM papers WHERE has_text = 1"),
            "papers_with_external_ids": one("SELECT COUNT(*) FROM papers WHERE ids != '{}'"),
            "papers_in_no_item": one(
                "SELECT COUNT(*) FROM papers WHERE paper_id NOT IN (SELECT paper_id FROM item_nodes)"
            ),
            "pool_papers": one("SELECT COUNT(*) FROM pool"),
            "sections": one("SELECT COUNT(*) FROM sections"),
            "edges": one("SELECT COUNT(*) FROM edges"),
            "edges_with_context": one("SELECT COUNT(*) FROM edges WHERE context IS NOT NULL"),
            "explore_index_stored": bool(one("SELECT COUNT(*) FROM search_index")),
            "items": one("SELECT COUNT(*) FROM items"),
            "items_by_type": dict(sorted(by_type.items())),
            "items_by_depth": dict(sorted(by_depth.items())),
            "items_by_cell": by_cell,
            "items_by_reasoning_type": by_reasoning,
            "papers_with_text_by_licence": licences,
            "nodes_per_item": {
                "min": nodes[0] or 0,
                "mean": round(nodes[1], 1) if nodes[1] is not None else 0,
                "max": nodes[2] or 0,
            },
        }
    finally:
        conn.close()
    return {
        "path": str(path),
        "file_size": path.stat().st_size,
        "schema_version": meta.get("schema_version"),
        "corpus_id": meta.get("corpus_id"),
        "provenance": meta.get("provenance", {}),
        "counts": counts,
        "build_quality": meta.get(QUALITY_META_KEY),
        "search_index": _search_index(path, meta.get("corpus_id")),
    }


def _search_index(path: Path, corpus_id: str | None) -> dict:
    """Explore search's index beside the file: whether it serves this corpus, and its counts."""
    from agenthop.server.explore.index import index_dir, why_not_served

    folder = index_dir(path)
    why = why_not_served(folder, corpus_id)
    if why is not None:
        return {"path": str(folder), "served": False, "why": why}
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    return {"path": str(folder), "served": True, "papers": manifest["papers"], "sections": manifest["sections"]}


def _search_index_line(info: CorpusDescription) -> str:
    index = info.get("search_index") or {}
    if index.get("served"):
        return f"search index  {index['path']} ({index['papers']} papers, {index['sections']} sections)"
    return (
        f"search index  none that serves this corpus ({index.get('why')}): explore search uses FTS5; "
        f"build it with 'agenthop-server corpus index {info['path']}'"
    )


def _licences(conn) -> dict[str, int]:
    """Papers with text by the licence their source states (most first); "none stated" for the rest."""
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'paper_licences'").fetchone() is None:
        return {}  # a corpus written before licences were kept
    rows = conn.execute(
        "SELECT COALESCE(l.licence, 'none stated'), COUNT(*) FROM papers p LEFT JOIN paper_licences l "
        "USING (paper_id) WHERE p.has_text = 1 GROUP BY 1 ORDER BY 2 DESC, 1"
    )
    return dict(rows.fetchall())


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


def format_description(info: CorpusDescription) -> str:
    """The text ``agenthop-server corpus info PATH`` prints."""
    c = info["counts"]
    prov = info.get("provenance") or {}
    lines = [
        f"corpus        {info['path']} ({_size(info['file_size'])})",
        f"schema        version {info['schema_version']}",
        f"corpus id     {info.get('corpus_id') or 'unknown'}",
        f"source        {prov.get('source', 'unknown')} (importer version {prov.get('importer_version', '?')})",
    ]
    for rel, sha in (prov.get("inputs") or {}).items():
        lines.append(f"  input       {rel}  sha256 {sha}")
    if prov:
        lines.append(
            f"import notes  {prov.get('skipped_labels', 0)} bad recall labels skipped, "
            f"{prov.get('metadata_conflicts', 0)} paper metadata conflicts (first kept), "
            f"{prov.get('items_without_labels', 0)} items without labels"
        )
        for kind, n in (prov.get("warnings") or {}).items():
            lines.append(f"  warning     {n} {describe_warning(kind)}")
    lines += [
        "",
        f"papers        {c['papers']} ({c['papers_with_text']} with text, {c['papers_with_external_ids']} with external IDs, "
        f"{c['papers_in_no_item']} in no item's graph; pool {c['pool_papers']} records, {c['sections']} sections)",
        f"edges         {c['edges']} ({c['edges_with_context']} with a citation context); bm25s index "
        f"{'stored' if c['explore_index_stored'] else 'not stored (built on the first explore search)'}",
        f"items         {c['items']}" + ("" if c["items"] else " (explore mode only)"),
    ]
    if c.get("papers_with_text_by_licence"):
        lines.insert(
            -1,
            "licences      "
            + ", ".join(f"{n} {name}" for name, n in c["papers_with_text_by_licence"].items())
            + " (papers with text)",
        )
    lines.insert(len(lines) - 1, _search_index_line(info))
    if info.get("build_quality"):
        lines += [
            "",
            "quality of the conversion (corpus build; what the parser may have got wrong):",
            *render(info["build_quality"]),
        ]
    if c["items"]:  # an explore-only corpus has no breakdowns to show
        lines += [
            "  by type     " + ", ".join(f"{k} {v}" for k, v in c["items_by_type"].items()),
            "  by depth    " + ", ".join(f"depth {k}: {v}" for k, v in c["items_by_depth"].items()),
            "  by cell     " + ", ".join(f"{k} {v}" for k, v in c["items_by_cell"].items()),
            "  reasoning   " + ", ".join(f"{k} {v}" for k, v in c["items_by_reasoning_type"].items()),
            f"  nodes/item  min {c['nodes_per_item']['min']}, mean {c['nodes_per_item']['mean']}, max {c['nodes_per_item']['max']}",
        ]
    return "\n".join(lines)
