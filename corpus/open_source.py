"""Which input shape a path holds: the importer's one entry to ``inputs`` and ``packaged``."""

from __future__ import annotations

from pathlib import Path

from agenthop.corpus.inputs import ReleaseDirectory, Source
from agenthop.corpus.packaged import PackagedSamples
from agenthop.corpus.problems import ReleaseError
from agenthop.corpus.release import LABELS_FILE

SHAPES = (
    "a release directory (paper_pool/, qa/, graphs/, audit/, optionally corpus/), a packaged JSON file (one sample "
    "or a list of samples, each with the qa fields, 'graph' and 'paper_pool'), or a directory of such per-sample JSON files"
)


def open_source(path: Path, labels: Path | None = None) -> Source:
    """The source for ``path``: a release directory, a packaged JSON file, or a directory of per-sample files."""
    path = Path(path)
    if path.is_file():
        if path.suffix == ".jsonl":
            raise ReleaseError(f"{path} is one JSONL file; give the release directory that holds it. Expected {SHAPES}")
        return PackagedSamples([path], labels, name=path.name)
    if not path.is_dir():
        raise ReleaseError(f"release not found: {path}; expected {SHAPES}")
    if any((path / d).is_dir() for d in ("paper_pool", "qa", "graphs", "audit", "corpus")):
        if labels is not None:
            raise ReleaseError(
                f"a recall labels file was given, but the release directory {path} carries its own ({LABELS_FILE})"
            )
        return ReleaseDirectory(path)
    samples = sorted(p for p in path.iterdir() if p.suffix == ".json" and p.is_file())
    if samples:
        return PackagedSamples(samples, labels, name=path.resolve().name, directory=path)
    raise ReleaseError(f"{path} holds neither a release layout nor per-sample .json files; expected {SHAPES}")
