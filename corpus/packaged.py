"""The packager's shape: samples that carry their own graph and text, as the reference harness's ``--data`` reads them.

A sample is one JSON object with the qa fields of ``qa/full.jsonl`` plus
``graph: {seed, nodes, edges}`` and ``paper_pool: {arxiv_id: {sections, tables}}``
(the text of the sample's nodes). It comes as one combined JSON file (a list of
samples, or one sample), or as a directory of per-sample JSON files. Recall
labels come from a separate ``audit/recall_labels.jsonl``-style file.

Each sample is converted into the release records it stands for: one pool
record per paper not seen in an earlier sample, one graph record, one item.
The importer validates them exactly as it validates a release directory.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import ijson

from agenthop.corpus.inputs import GRAPH, ITEM, LABELS, POOL, JsonlFile, Source
from agenthop.corpus.problems import ReleaseError, Where, describe

SAMPLE_PARTS = ("graph", "paper_pool")


class _HashingReader:
    """A binary file that hashes what is read from it (ijson reads in chunks)."""

    def __init__(self, fh, sha) -> None:
        self.fh = fh
        self.sha = sha

    def read(self, size: int = -1) -> bytes:
        data = self.fh.read(size)
        self.sha.update(data)
        return data


def _first_byte(path: Path) -> bytes:
    with open(path, "rb") as fh:
        while chunk := fh.read(4096):
            stripped = chunk.lstrip().lstrip(b"\xef\xbb\xbf").lstrip()
            if stripped:
                return stripped[:1]
    return b""


class PackagedSamples(Source):
    """Samples from JSON files (each one sample, or a list of samples) and labels from a JSONL file."""

    shape = "packaged samples"
    has_items = True

    def __init__(self, files: list[Path], labels: Path | None, *, name: str, directory: Path | None = None) -> None:
        super().__init__()
        self.name = name
        self.labels = labels
        if directory is not None:
            # The packager writes its combined file beside the per-sample files: import one or the other.
            lists = [p for p in files if _first_byte(p) == b"["]
            singles = [p for p in files if p not in lists]
            if lists and singles:
                for p in lists:
                    self.notes.append(
                        (
                            "combined_files_skipped",
                            {"file": p.name, "why": "the directory's per-sample files are imported"},
                        )
                    )
                files = singles
        self.files = files
        self.directory = directory
        self._pool_seen: dict[str, int] = {}  # arxiv_id -> fingerprint of the copy kept

    # -- reading -------------------------------------------------------------------

    def _samples(self, path: Path) -> Iterator[tuple[Where, object]]:
        label = path.name if self.directory is None else f"{self.directory.name}/{path.name}"
        sha = hashlib.sha256()
        is_list = _first_byte(path) == b"["
        index = 0
        with open(path, "rb") as fh:
            reader = _HashingReader(fh, sha)
            try:
                for index, sample in enumerate(ijson.items(reader, "item" if is_list else "", use_float=True), start=1):
                    yield Where(f"{label} sample {index}" if is_list else label), sample
            except ijson.JSONError as exc:
                where = f"{label} sample {index + 1}" if is_list else label
                raise ReleaseError(f"{where}: not valid JSON ({exc})") from None
            except UnicodeDecodeError as exc:
                raise ReleaseError(f"{label}: not valid UTF-8 ({exc.reason})") from None
            reader.read()  # hash any trailing bytes
        self.inputs[label] = sha.hexdigest()

    def records(self) -> Iterator[tuple[str, Where, dict | ReleaseError]]:
        for path in self.files:
            for where, sample in self._samples(path):
                yield from self._convert(where, sample)
        if self.labels is not None:
            yield from self._read(LABELS, JsonlFile(self.labels, str(self.labels)), self.labels.name)

    # -- converting one sample -------------------------------------------------------

    def _convert(self, where: Where, sample: object) -> Iterator[tuple[str, Where, dict | ReleaseError]]:
        try:
            where, graph, pool = self._parts(where, sample)
        except ReleaseError as exc:  # the sample cannot be converted: an error in place of its item
            item_id = sample.get("id") if isinstance(sample, dict) else None
            exc.key = item_id.strip() if isinstance(item_id, str) else None
            yield ITEM, where, exc
            return
        nodes = graph.get("nodes")
        titles: dict[str, str] = {}
        if isinstance(nodes, dict):
            for node in nodes.values():
                if (
                    isinstance(node, dict)
                    and isinstance(node.get("arxivId"), str)
                    and isinstance(node.get("title"), str)
                ):
                    titles.setdefault(node["arxivId"].strip(), node["title"])
        for arxiv_id, entry in pool.items():
            at = where.within(f"paper_pool.{arxiv_id}.")
            if not isinstance(entry, dict):
                yield POOL, at, where.error(f"paper_pool.{arxiv_id}", "an object {sections, tables}", describe(entry))
                continue
            record = dict(entry, arxiv_id=arxiv_id)
            record.setdefault("title", titles.get(arxiv_id.strip(), ""))
            fingerprint = _fingerprint(record)
            kept = self._pool_seen.get(arxiv_id)
            if kept is None:
                self._pool_seen[arxiv_id] = fingerprint
                yield POOL, at, record
            elif kept != fingerprint:
                self.notes.append(("pool_copies_differ", {"where": where.place, "arxiv_id": arxiv_id}))
        assert isinstance(sample, dict)  # _parts raised otherwise
        yield GRAPH, where.within("graph."), dict(graph, sample_id=sample["id"])
        yield ITEM, where, {k: v for k, v in sample.items() if k not in SAMPLE_PARTS}

    @staticmethod
    def _parts(where: Where, sample: object) -> tuple[Where, dict, dict]:
        """The sample's place (with its id), graph and text pool, or the error that says which is missing."""
        if not isinstance(sample, dict):
            raise where.error(None, "a sample object (the qa fields, 'graph' and 'paper_pool')", describe(sample))
        item_id = sample.get("id")
        if not isinstance(item_id, str) or not item_id.strip():
            raise where.error("id", "a non-empty string", describe(item_id)) if "id" in sample else where.missing("id")
        where = Where(f"{where.place} ({item_id.strip()})")
        graph = sample.get("graph")
        if graph is None:
            raise where.missing("graph")
        if not isinstance(graph, dict):
            raise where.error("graph", "an object {seed, nodes, edges}", describe(graph))
        pool = sample.get("paper_pool")
        if pool is None:
            raise where.missing("paper_pool")
        if not isinstance(pool, dict):
            raise where.error("paper_pool", "an object {arxiv_id: {sections, tables}}", describe(pool))
        return where, graph, pool


def _fingerprint(record: dict) -> int:
    """Headers and lengths of a pool copy: enough to notice two samples disagreeing about a paper's text."""
    sections = record.get("sections")
    if not isinstance(sections, list):
        return hash(repr(sections))
    return hash(
        tuple((s.get("header"), len(s.get("text") or "")) if isinstance(s, dict) else repr(s) for s in sections)
    )
