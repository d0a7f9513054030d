"""The input shapes the importer accepts, each turned into one stream of release records.

A *source* yields ``(kind, where, record)`` in an order the importer can take
(a text record before the graphs that name it; a graph before its item; the
labels last) and records the sha256 of every input file it read. The records
are those of the release layout (docs/corpus.md); each shape only converts, so
every shape goes through the same validation.

- :class:`ReleaseDirectory`: the release layout (SPEC 2.1, plus the optional corpus/ files).
- :mod:`agenthop.corpus.packaged`: the packager's samples (one combined JSON file,
  or a directory of per-sample JSON files) with recall labels from a separate file.

:mod:`agenthop.corpus.open_source` picks the shape for a path.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import msgspec

from agenthop.corpus.problems import ReleaseError, Where, describe
from agenthop.corpus.release import (
    CITATIONS_FILE,
    CORPUS_PAPERS_FILE,
    GRAPHS_FILE,
    ITEM_FILES,
    LABELS_FILE,
    POOL_FILE,
    QA_FILE,
)

_fast_decode = msgspec.json.Decoder().decode


def _parse(line: str) -> object:
    """One JSONL line's value, as ``json.loads`` gives it; raises ``json.JSONDecodeError`` with a position.

    msgspec parses in about two thirds of json's time. A line it refuses goes to json, which accepts what msgspec
    does not (NaN, escaped lone surrogates) and words the error; on every other line the two give the same value.
    """
    try:
        return _fast_decode(line)
    except msgspec.DecodeError:
        return json.loads(line.rstrip("\r\n"))


# Record kinds, in the order a release directory gives them.
POOL, PAPER, GRAPH, CITATIONS, ITEM, LABELS = "pool", "paper", "graph", "citations", "item", "labels"

LAYOUT = (
    "a release directory holds paper_pool/papers.jsonl (one paper with text per line) and, for benchmark items, "
    "qa/full.jsonl (one item per line), graphs/full.jsonl (one neighbourhood per item) and audit/recall_labels.jsonl "
    "(one label record per item); corpus/papers.jsonl and corpus/citations.jsonl are optional, and with "
    "corpus/papers.jsonl the three item files may be absent (an explore-only corpus)"
)


class JsonlFile:
    """The JSON objects of one JSONL file, one per non-blank line; its sha256 is computed beside the reading.

    A line that is not a JSON object comes as a :class:`ReleaseError` in place of
    the record, so that a check can report it and go on with the next line.
    """

    def __init__(self, path: Path, name: str) -> None:
        self.path = path
        self.name = name
        self._digest: list[str] = []
        self._unreadable: OSError | None = None
        # hashlib releases the GIL on large buffers: the hash costs no time of the thread that parses.
        self._hashing = threading.Thread(target=self._hash, name=f"sha256 {name}", daemon=True)

    def _hash(self) -> None:
        # A file that goes away under the thread (an import that failed has its input removed) is reported by
        # hexdigest, where a caller can handle it, never as a traceback from a dying thread.
        try:
            with open(self.path, "rb") as fh:
                self._digest.append(hashlib.file_digest(fh, "sha256").hexdigest())
        except OSError as exc:
            self._unreadable = exc

    def __iter__(self) -> Iterator[tuple[Where, dict | ReleaseError]]:
        self._hashing.start()
        # Text mode decodes in C; bytes that are not UTF-8 come through as lone surrogates, found below.
        with open(self.path, encoding="utf-8", errors="surrogateescape", newline="\n") as fh:
            for number, text in enumerate(fh, start=1):
                where = Where(f"{self.name} line {number}")
                if not text.isascii():
                    try:
                        text.encode("utf-8")
                    except UnicodeEncodeError:
                        try:
                            text.encode("utf-8", "surrogateescape").decode("utf-8")
                        except UnicodeDecodeError as exc:
                            yield where, where.fail(f"not valid UTF-8 ({exc.reason} at byte {exc.start})")
                            continue
                if not text.strip():
                    continue
                try:
                    record = _parse(text)
                except json.JSONDecodeError as exc:
                    error = where.fail(f"not valid JSON ({exc.msg} at column {exc.colno})")
                    error.raw = text[:2000]  # a check looks for the record's key in it
                    yield where, error
                    continue
                if not isinstance(record, dict):
                    yield where, where.error(None, "a JSON object", describe(record))
                    continue
                yield where, record

    @property
    def hexdigest(self) -> str:
        self._hashing.join()
        if self._unreadable is not None:
            raise ReleaseError(f"{self.name}: cannot be read ({self._unreadable.strerror})")
        return self._digest[0]


class Source:
    """One input, as release records. ``inputs`` maps each file read to its sha256 once ``records`` is exhausted."""

    name: str  # provenance "source": the input's base name, never a path
    shape: str
    has_items: bool

    def __init__(self) -> None:
        self.inputs: dict[str, str] = {}
        self.notes = []

    notes: list[tuple[str, dict]]  # warnings about the input itself, for the import summary

    def records(self) -> Iterator[tuple[str, Where, dict | ReleaseError]]:  # pragma: no cover - interface
        raise NotImplementedError

    def _read(self, kind: str, reader: JsonlFile, key: str) -> Iterator[tuple[str, Where, dict | ReleaseError]]:
        for where, record in reader:
            yield kind, where, record
        self.inputs[key] = reader.hexdigest


class ReleaseDirectory(Source):
    """A release directory: the files of the release layout, read in the importer's order."""

    shape = "release directory"

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root
        self.name = root.resolve().name
        present = {
            rel for rel in (POOL_FILE, *ITEM_FILES, CORPUS_PAPERS_FILE, CITATIONS_FILE) if (root / rel).is_file()
        }
        if POOL_FILE not in present:
            raise ReleaseError(f"{root} has no {POOL_FILE}; {LAYOUT}")
        item_files = [rel for rel in ITEM_FILES if rel in present]
        if item_files and len(item_files) < len(ITEM_FILES):
            missing = [rel for rel in ITEM_FILES if rel not in present]
            raise ReleaseError(f"{root} has no {' or '.join(missing)} (it has {', '.join(item_files)}); {LAYOUT}")
        if not item_files and CORPUS_PAPERS_FILE not in present:
            raise ReleaseError(
                f"{root} has no {QA_FILE}, {GRAPHS_FILE} or {LABELS_FILE}, and no {CORPUS_PAPERS_FILE}; {LAYOUT}"
            )
        self.present = present
        self.has_items = bool(item_files)

    def records(self) -> Iterator[tuple[str, Where, dict | ReleaseError]]:
        order = (
            (POOL, POOL_FILE),
            (PAPER, CORPUS_PAPERS_FILE),
            (GRAPH, GRAPHS_FILE),
            (CITATIONS, CITATIONS_FILE),
            (ITEM, QA_FILE),
            (LABELS, LABELS_FILE),
        )
        for kind, rel in order:
            if rel in self.present:
                yield from self._read(kind, JsonlFile(self.root / rel, rel), rel)
