"""Write a release directory (the layout contract: paper_pool/, corpus/, and with items qa/, graphs/, audit/)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from agenthop.corpus.convert.linking import CitationStore
from agenthop.corpus.convert.model import ConvertError, Paper
from agenthop.corpus.licences import read_licence
from agenthop.corpus.release import (
    CITATIONS_FILE,
    CORPUS_PAPERS_FILE,
    GRAPHS_FILE,
    LABELS_FILE,
    MAX_REFS,
    POOL_FILE,
    QA_FILE,
)


def _line(record: dict) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"  # insertion order: a graph lists its seed first


def _open(release: Path, rel: str):
    path = release / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    return open(path, "w", encoding="utf-8", newline="\n")


def pool_record(pid: str, paper: Paper) -> str:
    """A paper with text goes to the pool keyed by its paper ID (the pool's key need only be unique)."""
    return _line(
        {
            "arxiv_id": pid,
            "title": paper.title,
            "sections": [{"header": s.header, "text": s.text} for s in paper.sections],
        }
    )


def _paper_record(row: tuple) -> dict:
    pid, title, abstract, authors, year, venue, ids, has_text, stated, pages = row
    record = {
        "paper_id": pid,
        "title": title,
        "abstract": abstract,
        "authors": json.loads(authors),
        "year": year,
        "venue": venue,
        "text_id": pid if has_text else None,
        "ids": json.loads(ids),
    }
    if pages:
        record["pages"] = pages
    licence = read_licence(stated)
    if licence is not None:
        record["licence"] = licence.name
        if licence.url:
            record["licence_url"] = licence.url
    return record


def write_corpus(release: Path, store: CitationStore) -> None:
    """corpus/citations.jsonl (linking as it goes), then corpus/papers.jsonl (in-set papers, then the nodes linking made)."""
    with _open(release, CITATIONS_FILE) as fh:
        for citing, refs in store.link():
            if refs:
                fh.write(
                    _line(
                        {
                            "paper_id": citing,
                            "references": [{"paper_id": cited, "context": context} for cited, context in refs],
                        }
                    )
                )
    with _open(release, CORPUS_PAPERS_FILE) as fh:
        for row in store.papers():
            fh.write(_line(_paper_record(row)))


# --- items --------------------------------------------------------------------------


def _jsonl(
    path: Path, problems: list[str] | None = None, unreadable: Callable[[str], None] = lambda line: None
) -> Iterator[tuple[int, dict | None]]:
    """(line number, object) per line; None for a blank line, so that writers can keep line numbers.

    A line that is not a JSON object raises, or, when ``problems`` is a list, is recorded there, given to
    ``unreadable`` and read as blank.
    """
    try:
        fh = open(path, encoding="utf-8")
    except OSError as exc:
        raise ConvertError(f"{path}: cannot be read ({exc.strerror})") from None
    with fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                yield number, None
                continue
            try:
                record = json.loads(line.rstrip("\r\n"))  # so that a cut line's error points into it, not past it
            except json.JSONDecodeError as exc:
                problem = f"{path} line {number}: not valid JSON ({exc.msg} at column {exc.colno})"
            else:
                if isinstance(record, dict):
                    yield number, record
                    continue
                problem = f"{path} line {number}: expected a JSON object"
            if problems is None:
                raise ConvertError(problem)
            problems.append(problem)
            unreadable(line)
            yield number, None


def item_graph(store: CitationStore, item_id: str, seed: str) -> dict:
    """The release's neighbourhood: the seed, its first 30 references and theirs; edges for the seed and its references."""
    nodes: dict[str, dict] = {}
    edges: dict[str, list[str]] = {}
    contexts: dict[str, dict[str, str]] = {}

    def node(pid: str) -> None:
        if pid not in nodes:
            row = store.paper(pid)
            assert row is not None  # the store names only papers it holds
            record = _paper_record(row)
            nodes[pid] = {
                "title": record["title"],
                "arxivId": record["text_id"],
                "year": record["year"],
                "abstract": record["abstract"],
                "authors": record["authors"],
                "venue": record["venue"],
            }

    def expand(citing: str) -> list[str]:
        cited_list = []
        for cited, context in store.references(citing, MAX_REFS):
            node(cited)
            cited_list.append(cited)
            if context:
                contexts.setdefault(citing, {})[cited] = context
        if cited_list:
            edges[citing] = cited_list
        return cited_list

    node(seed)
    for cited in expand(seed):
        expand(cited)
    return {"sample_id": item_id, "nodes": nodes, "edges": edges, "contexts": contexts}


def _text_ids(store: CitationStore, pids, where: str, field: str) -> list[str]:
    out = []
    for i, pid in enumerate(pids):
        row = store.paper(pid) if isinstance(pid, str) else None
        if row is None:
            raise ConvertError(
                f"{where}: field '{field}[{i}]': expected a paper ID of the built corpus, found {json.dumps(pid)}"
            )
        # A built paper's text key is its paper ID. One without text has no arxivId in the graph, so the importer
        # checks nothing against this entry, and still refuses a gold paper without text in its own words.
        out.append(pid)
    return out


def _check_reachable(graph: dict, item: dict, where: str) -> None:
    """Gold and bridge papers must lie in the neighbourhood built from the seed; say why not in the user's terms."""
    for kind in ("gold", "bridge"):
        pids = item.get(f"{kind}_paper_ids")
        for i, pid in enumerate(pids if isinstance(pids, list) else []):
            if isinstance(pid, str) and pid not in graph["nodes"]:
                raise ConvertError(
                    f"{where}: field '{kind}_paper_ids[{i}]': {pid} is not in the neighbourhood built from the seed "
                    f"{item['seed_paper_id']} (the seed, its first {MAX_REFS} references and their first {MAX_REFS}); "
                    "choose a seed that cites it, directly or through one paper"
                )


def _release_item(store: CitationStore, item: dict, where: str) -> tuple[dict, dict]:
    """The qa record (text-pool fields filled in) and the graph record of one of the user's items."""
    item_id, seed = item.get("id"), item.get("seed_paper_id")
    if not isinstance(item_id, str) or not item_id.strip():
        raise ConvertError(f"{where}: field 'id': expected a non-empty string")
    seed_row = store.paper(seed) if isinstance(seed, str) else None
    if seed_row is None:
        raise ConvertError(
            f"{where}: field 'seed_paper_id': expected a paper ID of the built corpus, found {json.dumps(seed)}"
        )
    assert isinstance(seed, str)  # seed_row was found under it
    item = dict(item)
    item.setdefault("seed_title", seed_row[1])
    if not item.get("seed_arxiv_id"):
        item["seed_arxiv_id"] = seed if seed_row[7] else None
    for kind in ("gold", "bridge"):
        pids = item.get(f"{kind}_paper_ids")
        if isinstance(pids, list) and not item.get(f"{kind}_arxiv_ids"):
            item[f"{kind}_arxiv_ids"] = _text_ids(store, pids, where, f"{kind}_paper_ids")
    graph = item_graph(store, item_id, seed)
    _check_reachable(graph, item, where)
    return item, graph


def _label_record(store: CitationStore, record: dict) -> dict:
    """A label may name its paper by paper_id: the pool key is the paper ID in a built corpus, and the title is filled in."""
    analysis = record.get("analysis")
    labels = analysis.get("section_recall_labels") if isinstance(analysis, dict) else None
    for label in labels if isinstance(labels, list) else []:
        if isinstance(label, dict) and not label.get("arxiv_id") and isinstance(label.get("paper_id"), str):
            label["arxiv_id"] = label["paper_id"]
            row = store.paper(label["paper_id"])
            if row is not None and not label.get("paper"):
                label["paper"] = row[1]
    return record


def write_items(
    release: Path, store: CitationStore, items_path: Path, labels_path: Path | None, problems: list[str] | None = None
) -> int:
    """qa/full.jsonl and graphs/full.jsonl from the user's items; audit/recall_labels.jsonl from their labels.

    Items name papers by the corpus's paper IDs. The text-pool fields the release
    also wants (seed_arxiv_id, gold_arxiv_ids, bridge_arxiv_ids, seed_title) are
    filled in when absent, so a user writes only what a question needs. Line N of
    qa/full.jsonl and graphs/full.jsonl is the item on line N of the items file,
    and line N of audit/recall_labels.jsonl is line N of the labels file (blank
    lines are kept), so the importer's messages point at the user's lines.

    The first problem raises :class:`ConvertError`; when ``problems`` is a list
    (a check), each problem is recorded there instead, and the item is left out
    together with its labels, so that the importer's check does not report it again.
    """
    n = 0
    left_out: set[str] = set()

    def leave_out_unreadable(line: str) -> None:  # its labels would only repeat that the item is missing
        found = re.search(r'"id"\s*:\s*"([^"\\]+)"', line)
        if found:
            left_out.add(found.group(1))

    with _open(release, QA_FILE) as qa, _open(release, GRAPHS_FILE) as graphs:
        for number, item in _jsonl(items_path, problems, leave_out_unreadable):
            records = None
            if item is not None:
                try:
                    records = _release_item(store, item, f"{items_path} line {number}")
                except ConvertError as exc:
                    if problems is None:
                        raise
                    problems.append(str(exc))
                    left_out.add(str(item.get("id")))
            if records is None:
                qa.write("\n")
                graphs.write("\n")
                continue
            qa.write(_line(records[0]))
            graphs.write(_line(records[1]))
            n += 1
    with _open(release, LABELS_FILE) as out:
        for _number, record in _jsonl(labels_path, problems) if labels_path is not None else ():
            if record is None or str(record.get("sample_id")) in left_out:
                out.write("\n")
            else:
                out.write(_line(_label_record(store, record)))
    return n


__all__ = ["POOL_FILE", "write_corpus", "write_items", "pool_record", "item_graph"]
