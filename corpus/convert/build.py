"""``corpus build``: papers in their own formats -> a release directory -> the one importer -> a corpus file."""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from agenthop.corpus.convert.grobid import GrobidOptions
from agenthop.corpus.convert.linking import CitationStore
from agenthop.corpus.convert.model import ConvertError, NotOpenError
from agenthop.corpus.convert.pdfs import default_tei_cache, prepare_inputs
from agenthop.corpus.convert.quality import QUALITY_META_KEY, quality_table, render
from agenthop.corpus.convert.sources import ignored_files, read_papers
from agenthop.corpus.convert.writer import POOL_FILE, pool_record, write_corpus, write_items
from agenthop.corpus.licences import names_a_licence, read_licence
from agenthop.corpus.problems import ReleaseError
from agenthop.corpus.release import GRAPHS_FILE, LABELS_FILE, QA_FILE
from agenthop.corpus.summaries import BuildSummary

_MAX_LISTED = 20
RELEASE_NAME = "corpus-build"  # the release directory's name, which the corpus's provenance records as its source


def write_release(
    sources: list[Path],
    release: Path,
    *,
    fmt: str | None = None,
    items: Path | None = None,
    labels: Path | None = None,
    problems: list[str] | None = None,
    skip_bad: bool = False,
    licence: str | None = None,
    open_only: bool = False,
    not_read: list[Path] | None = None,
    echo: Callable[[str], None] = print,
) -> dict:
    """Convert ``sources`` into the release directory ``release``; return what was converted.

    With ``problems`` (a list), problems in the items and labels are recorded there instead of raised (a check),
    and so is every input file that cannot be converted. With ``skip_bad``, such a file is left out and reported
    (``bad_files``) instead of stopping the build.

    ``licence`` is the licence of every paper whose file states none (a URL or a name: "CC BY 4.0"). The summary
    counts the papers with text by licence and names those whose licence is not open (or unknown); with
    ``open_only`` any such paper stops the build, or with ``problems`` is recorded there.

    ``not_read``: the files under the folders given that are not inputs (default: found under ``sources``), named
    in the summary so that nothing is left out unsaid.
    """
    if labels is not None and items is None:
        raise ConvertError("recall labels were given without items: labels describe items, so give the items file too")
    if licence is not None and not names_a_licence(licence):
        echo(
            f"warning: the licence given for papers whose files state none, {licence!r}, names no licence known here "
            "(a Creative Commons name or URL such as 'CC BY 4.0', CC0 or public domain): it is stored as given and "
            "counted as not open"
        )
    release.mkdir(parents=True, exist_ok=True)
    store = CitationStore(release / ".build-store.sqlite")
    bad: list[str] | None = [] if skip_bad or problems is not None else None
    try:
        n = 0
        left_out: Counter[str] = Counter()
        for paper in read_papers(sources, fmt, bad=bad):
            left_out.update(paper.skipped)
            paper.licence = paper.licence or licence
            pid = store.add(paper)
            if pid is not None and paper.sections:
                store.keep_text(pid, pool_record(pid, paper))
            n += 1
            if n % 5000 == 0:
                echo(f"  read {n} papers")
        pool_path = release / POOL_FILE
        pool_path.parent.mkdir(parents=True, exist_ok=True)
        with open(pool_path, "w", encoding="utf-8", newline="\n") as pool:
            pool.writelines(store.pool_lines())
        if problems is not None and bad and not skip_bad:
            problems.extend(bad)
        counts = store.counts()
        if counts["papers_in_set"] == 0:
            if bad:
                raise ConvertError(f"none of the inputs could be converted ({len(bad)} bad files; the first: {bad[0]})")
            raise ConvertError(
                "no papers found in the inputs; give GROBID TEI, JATS or S2ORC JSON files, or folders holding them"
            )
        if counts["papers_with_text"] == 0:
            raise ConvertError(
                f"none of the {counts['papers_in_set']} papers read has body text (only metadata: title, abstract, references), "
                "so there is nothing to read in an explore session; give full-text files (GROBID processFulltextDocument, "
                "JATS with <body>, S2ORC with body_text)"
            )
        licences = licence_summary(store.licences())
        if open_only and licences["not_open"]:
            n = licences["not_open"]
            refused = (
                f"{n} of the papers with text {'has' if n == 1 else 'have'} no open licence (open: CC BY, CC BY-SA, "
                f"CC0 and public domain), e.g. {'; '.join(licences['not_open_examples'][:5])}: remove them, or give "
                "the licence of papers whose files state none"
            )
            if problems is None:
                raise NotOpenError(refused)
            problems.append(refused)
        ignored = ignored_files(sources) if not_read is None else not_read
        if ignored:
            echo(
                f"warning: {len(ignored)} files under the folders given are not read (not PDF, XML or JSON by their names), "
                f"e.g. {', '.join(str(p) for p in ignored[:5])}"
            )
        echo(f"read {n} papers; linking references")
        write_corpus(release, store)
        n_items = write_items(release, store, items, labels, problems) if items is not None else 0
        summary = {
            **store.counts(),
            "items": n_items,
            "duplicates": len(store.duplicates),
            "duplicate_examples": store.duplicates[:_MAX_LISTED],
            "source_id_clashes": len(store.source_id_clashes),
            "source_id_clash_examples": store.source_id_clashes[:_MAX_LISTED],
            "untitled": store.untitled,
            "references_dropped": store.dropped_references,
            "works_merged": {k: v for k, v in store.works.items() if k != "refused_examples"},
            "works_refused_examples": store.works.get("refused_examples", []),
            "edges_from_text": store.edges_from_text,
            "references_dropped_examples": store.dropped_examples,
            "bad_files": len(bad or []),
            "bad_file_examples": (bad or [])[:_MAX_LISTED],
            "files_not_read": len(ignored),
            "files_not_read_examples": [str(p) for p in ignored[:_MAX_LISTED]],
            "elements_left_out": dict(sorted(left_out.items())),
            **licences,
            "quality": quality_table(store.conn),
        }
    finally:
        store.close()
        (release / ".build-store.sqlite").unlink(missing_ok=True)
    for example in summary["duplicate_examples"]:
        echo(f"warning: skipped a duplicate: {example}")
    for example in summary["bad_file_examples"] if skip_bad else ():
        echo(f"warning: skipped a file that cannot be converted: {example}")
    for example in summary["references_dropped_examples"]:
        echo(f"warning: dropped a reference: {example}")
    if (unlisted := summary["references_dropped"] - len(summary["references_dropped_examples"])) > 0:
        echo(
            f"warning: dropped {unlisted} more references like these (references_dropped in the summary counts them all)"
        )
    merged = summary["works_merged"]
    if merged:
        echo(
            f"records of one work merged: {merged['groups_merged']} works had {merged['records_merged']} records more, "
            f"{merged['links_moved']} citation links moved to the record kept; {merged['pairs_refused']} pairs with "
            f"matching titles kept apart ({merged['records_refused']} records) because their fields conflict; "
            f"{summary['edges_from_text']} citations linked by an in-text citation's author and year"
        )
    if summary["elements_left_out"]:
        echo(
            "left out of the text (figures, tables and notes, not running text): "
            + ", ".join(f"{count} <{name}>" for name, count in summary["elements_left_out"].items())
        )
    echo(
        "licences of the papers with text: "
        + ", ".join(f"{count} {name}" for name, count in summary["licences"].items())
    )
    if summary["not_open"]:
        echo(
            f"warning: {summary['not_open']} papers with text have no open licence (or none stated), e.g. "
            + "; ".join(summary["not_open_examples"][:3])
            + ". If their files state none and you know the terms, --licence sets it (e.g. --licence 'CC BY 4.0'); "
            "a licence a file states is kept"
        )
    echo("quality of the conversion (what the parser may have got wrong; see docs/real-papers.md):")
    for line in render(summary["quality"]):
        echo(line)
    for example in summary["source_id_clash_examples"]:
        echo(f"warning: a source ID names two different papers; this one gets an ID of its own: {example}")
    return summary


NO_LICENCE = "none stated"


def licence_summary(rows) -> dict:
    """Papers with text by licence, and those whose licence is not open (or not stated): (paper ID, stated) rows."""
    counts: Counter[str] = Counter()
    not_open: list[str] = []
    for pid, stated in rows:
        found = read_licence(stated)
        counts[found.name if found else NO_LICENCE] += 1
        if found is None or not found.open:
            not_open.append(f"{pid} ({found.name if found else NO_LICENCE})")
    return {
        "licences": dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))),
        "not_open": len(not_open),
        "not_open_examples": not_open[:_MAX_LISTED],
    }


def _in_user_terms(message: str, items: Path | None, labels: Path | None) -> str:
    """An importer message, with the release files the build wrote from the user's files named as those files.

    The writer keeps line numbers: line N of qa/full.jsonl and graphs/full.jsonl is the item on line N of the
    items file, line N of audit/recall_labels.jsonl is line N of the labels file.
    """
    for release_file, user_file, shown in (
        (QA_FILE, items, "{path} line "),
        (GRAPHS_FILE, items, "the graph built for {path} line "),
        (LABELS_FILE, labels, "{path} line "),
    ):
        prefix = f"{release_file} line "
        if user_file is not None and message.startswith(prefix):
            return shown.format(path=user_file) + message[len(prefix) :]
    return message


def build_corpus(
    sources: list[Path],
    out: Path,
    *,
    fmt: str | None = None,
    items: Path | None = None,
    labels: Path | None = None,
    keep_release: Path | None = None,
    skip_bad: bool = False,
    grobid: GrobidOptions | None = None,
    tei_cache: Path | None = None,
    licence: str | None = None,
    open_only: bool = False,
    echo: Callable[[str], None] = print,
) -> BuildSummary:
    """Convert, then import through ``import_release`` (the one validation path). No corpus is written on error.

    ``skip_bad`` leaves out input files that cannot be converted (each reported with its reason, counted in
    ``converted.bad_files``, or ``pdfs.skipped`` for PDFs) instead of stopping at the first.

    PDFs among the sources become TEI first (``pdfs.prepare_inputs``): through the GROBID service ``grobid``
    names, or the fallback parser without one, kept in ``tei_cache`` (default: beside ``out``) so that a
    re-run converts only new PDFs; the summary then starts with ``pdfs``.

    A :class:`ReleaseError` from the importer about the items or labels names the user's file and line.
    ``keep_release`` (a new or empty directory) receives the converted release once conversion is done,
    whether or not it then imports, so that a refused release can be looked at.
    """
    from agenthop.corpus.importer import import_release

    if (
        keep_release is not None
        and keep_release.exists()
        and (not keep_release.is_dir() or any(keep_release.iterdir()))
    ):
        raise ConvertError(
            f"{keep_release} already exists and is not an empty directory; name a new directory to keep the release in"
        )
    started = time.monotonic()
    not_read = ignored_files(list(sources))
    sources, pdfs = prepare_inputs(
        list(sources), tei_cache or default_tei_cache(out), grobid=grobid, fmt=fmt, skip_bad=skip_bad, echo=echo
    )
    tmp = Path(tempfile.mkdtemp(prefix="agenthop-build-", dir=out.parent if out.parent.exists() else None))
    try:
        release = tmp / RELEASE_NAME
        converted = write_release(
            sources,
            release,
            fmt=fmt,
            items=items,
            labels=labels,
            skip_bad=skip_bad,
            licence=licence,
            open_only=open_only,
            not_read=not_read,
            echo=echo,
        )
        try:
            imported = import_release(release, out, echo=echo)
            _record_quality(out, converted["quality"])
        except ReleaseError as exc:
            raise type(exc)(_in_user_terms(str(exc), items, labels)) from None
        finally:
            if keep_release is not None:
                if keep_release.exists():
                    keep_release.rmdir()  # empty, checked above
                shutil.move(str(release), keep_release)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _count_skipped_pdfs(converted, pdfs)
    summary: BuildSummary = {
        "converted": converted,
        "imported": imported,
        "seconds": round(time.monotonic() - started, 2),
    }
    return summary if pdfs is None else {"pdfs": pdfs, **summary}


def _count_skipped_pdfs(converted: dict, pdfs: dict | None) -> None:
    """PDFs that could not be converted are bad files too: ``bad_files`` counts them with the others, so that the
    summary never says 0 bad files beside skipped PDFs."""
    if pdfs and pdfs["skipped"]:
        converted["bad_files"] += pdfs["skipped"]
        listed = [f"{s['pdf']}: {s['reason']}" for s in pdfs["skipped_pdfs"]]
        converted["bad_file_examples"] = (listed + converted["bad_file_examples"])[:_MAX_LISTED]


def _record_quality(out: Path, table: dict) -> None:
    """Keep the build's quality table in the corpus file, for ``corpus info`` to show later."""
    conn = sqlite3.connect(out)
    try:
        with conn:
            conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                (QUALITY_META_KEY, json.dumps(table, sort_keys=True)),
            )
    finally:
        conn.close()


def check_build(
    sources: list[Path],
    *,
    fmt: str | None = None,
    items: Path | None = None,
    labels: Path | None = None,
    skip_bad: bool = False,
    grobid: GrobidOptions | None = None,
    tei_cache: Path | None = None,
    licence: str | None = None,
    open_only: bool = False,
    echo: Callable[[str], None] = print,
) -> dict:
    """Convert and check everything the build would import, writing no corpus; report every error and warning at once.

    Every input file that cannot be converted is an error of the report (all of them, not the first); with
    ``skip_bad`` they are reported under ``converted.bad_files`` instead, as the build would skip them.

    The report is ``importer.check_release``'s, with the converters' summary under ``converted`` and the
    problems of the user's items and labels first, all named by the user's files and lines. PDFs are converted
    as ``build_corpus`` converts them (into ``tei_cache``, or a scratch folder removed afterwards).
    """
    from agenthop.corpus.importer import check_release

    problems: list[str] = []
    tmp = Path(tempfile.mkdtemp(prefix="agenthop-build-check-"))
    try:
        not_read = ignored_files(list(sources))
        sources, pdfs = prepare_inputs(
            list(sources), tei_cache or tmp / "pdf-tei", grobid=grobid, fmt=fmt, skip_bad=skip_bad, echo=echo
        )
        release = tmp / RELEASE_NAME
        converted = write_release(
            sources,
            release,
            fmt=fmt,
            items=items,
            labels=labels,
            problems=problems,
            skip_bad=skip_bad,
            licence=licence,
            open_only=open_only,
            not_read=not_read,
            echo=echo,
        )
        report = check_release(release, echo=echo)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _count_skipped_pdfs(converted, pdfs)
    errors = [{"message": p, "bad_label": False} for p in problems]
    errors += [{**e, "message": _in_user_terms(e["message"], items, labels)} for e in report["errors"]]

    def place(error: dict) -> tuple[int, int]:  # the items file's lines in order, then the labels file's, then the rest
        for rank, path in enumerate((items, labels)):
            prefix = f"{path} line "
            if path is not None and error["message"].startswith(prefix):
                return rank, int(error["message"][len(prefix) :].split(":", 1)[0])
        return 2, 0

    errors.sort(key=place)
    error_count = len(problems) + report["error_count"]
    warnings = dict(report["warnings"])
    if converted["bad_files"] and skip_bad:
        warnings["bad_files"] = {"count": converted["bad_files"], "examples": converted["bad_file_examples"]}
    result = {
        **report,
        "ok": error_count == 0,
        "error_count": error_count,
        "errors": errors,
        "warnings": warnings,
        "converted": converted,
    }
    return result if pdfs is None else {**result, "pdfs": pdfs}
