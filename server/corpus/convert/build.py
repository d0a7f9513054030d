"""``corpus build``: papers in their own formats -> a release directory -> the one importer -> a corpus file."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agenthop.server.corpus.convert.linking import CitationStore
from agenthop.server.corpus.convert.model import ConvertError
from agenthop.server.corpus.convert.sources import read_papers
from agenthop.server.corpus.convert.writer import POOL_FILE, write_corpus, write_items, write_pool_record

_MAX_LISTED = 20


def write_release(sources: list[Path], release: Path, *, fmt: str | None = None, items: Path | None = None,
                  labels: Path | None = None, echo: Callable[[str], None] = print) -> dict:
    """Convert ``sources`` into the release directory ``release``; return what was converted."""
    if labels is not None and items is None:
        raise ConvertError("recall labels were given without items: labels describe items, so give the items file too")
    release.mkdir(parents=True, exist_ok=True)
    store = CitationStore(release / ".build-store.sqlite")
    try:
        pool_path = release / POOL_FILE
        pool_path.parent.mkdir(parents=True, exist_ok=True)
        n = 0
        with open(pool_path, "w", encoding="utf-8", newline="\n") as pool:
            for paper in read_papers(sources, fmt):
                pid = store.add(paper)
                if pid is not None and paper.sections:
                    write_pool_record(pool, pid, paper)
                n += 1
                if n % 5000 == 0:
                    echo(f"  read {n} papers")
        if store.counts()["papers_in_set"] == 0:
            raise ConvertError("no papers found in the inputs; give GROBID TEI, JATS or S2ORC JSON files, or folders holding them")
        echo(f"read {n} papers; linking references")
        write_corpus(release, store)
        n_items = write_items(release, store, items, labels) if items is not None else 0
        summary = {**store.counts(), "items": n_items, "duplicates": len(store.duplicates),
                   "duplicate_examples": store.duplicates[:_MAX_LISTED], "untitled": store.untitled,
                   "references_dropped": store.dropped_references}
    finally:
        store.close()
        (release / ".build-store.sqlite").unlink(missing_ok=True)
    for example in summary["duplicate_examples"]:
        echo(f"warning: skipped a duplicate: {example}")
    return summary


def build_corpus(sources: list[Path], out: Path, *, fmt: str | None = None, items: Path | None = None, labels: Path | None = None,
                 keep_release: Path | None = None, echo: Callable[[str], None] = print) -> dict:
    """Convert, then import through ``import_release`` (the one validation path). Nothing is written on error."""
    from agenthop.server.corpus.importer import import_release

    started = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="agenthop-build-", dir=out.parent if out.parent.exists() else None))
    try:
        release = tmp / (keep_release.name if keep_release else "release")
        converted = write_release(sources, release, fmt=fmt, items=items, labels=labels, echo=echo)
        imported = import_release(release, out, echo=echo)
        if keep_release is not None:
            shutil.rmtree(keep_release, ignore_errors=True)
            shutil.move(str(release), keep_release)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"converted": converted, "imported": imported, "seconds": round(time.monotonic() - started, 2)}
