"""PDFs among the inputs of ``corpus build``: turned into TEI files first, by GROBID or by the fallback parser.

The rest of the build then reads those TEI files like any others (``build_corpus``), so a corpus made
from PDFs goes through the same converter, linking and importer as one made from TEI. The TEI is kept
in a cache folder beside the corpus file: a re-run converts only PDFs it has not seen.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agenthop.corpus.convert.grobid import GrobidOptions, PdfFailure, convert_pdfs
from agenthop.corpus.convert.model import ConvertError
from agenthop.corpus.convert.sources import input_files

FALLBACK_LABEL = (
    "fallback (lower fidelity than GROBID: headings from the PDF's outline or font sizes, references "
    "read by patterns as metadata-only entries, citation sentences only where a marker names an entry)"
)


class BadPdfsError(ConvertError):
    """Some PDFs could not be converted; ``failures`` names each one with the reason."""

    def __init__(self, failures: list[PdfFailure]):
        self.failures = failures
        listing = "\n".join(f"  {f}" for f in failures)
        super().__init__(
            f"{len(failures)} PDF{'s' if len(failures) != 1 else ''} could not be converted "
            f"(the others are converted and kept for the next run):\n{listing}"
        )


def default_tei_cache(out: Path) -> Path:
    """``corpus.sqlite`` -> ``corpus.pdf-tei/`` beside it."""
    return out.with_name(out.stem + ".pdf-tei")


def _is_pdf(path: Path) -> bool:
    return path.suffix.lower() == ".pdf"


def _unreadable(pdfs: list[Path]) -> list[PdfFailure]:
    failures = []
    for pdf in pdfs:
        try:
            with open(pdf, "rb") as fh:
                fh.read(1)
        except OSError as exc:
            failures.append(PdfFailure(pdf, f"cannot be read ({exc.strerror or exc})"))
    return failures


def split_inputs(sources: list[Path], tei_cache: Path | None) -> tuple[list[Path], list[Path]]:
    """(PDFs, other inputs), each file named once, folders searched; nothing under ``tei_cache`` is an input."""
    cache = tei_cache.resolve() if tei_cache is not None else None
    pdfs: list[Path] = []
    others: list[Path] = []
    for src in sources:
        if src.is_dir():
            found = sorted(p for p in src.rglob("*") if p.is_file() and _is_pdf(p))
            pdfs += found
            others += [p for p in input_files([src]) if cache is None or not p.resolve().is_relative_to(cache)]
        elif _is_pdf(src):
            pdfs.append(src)
        else:
            others.append(src)
    return pdfs, others


def prepare_inputs(
    sources: list[Path],
    tei_cache: Path | None,
    *,
    grobid: GrobidOptions | None = None,
    fmt: str | None = None,
    skip_bad: bool = False,
    echo: Callable[[str], None] = print,
) -> tuple[list[Path], dict | None]:
    """The inputs for ``write_release`` with every PDF replaced by its TEI, and a summary of the PDFs (None if none).

    ``grobid`` None: the fallback parser. A PDF that cannot be converted raises BadPdfsError naming every such
    PDF, unless ``skip_bad``: then it is left out and counted. ``tei_cache`` keeps the TEI between runs.
    """
    pdfs, others = split_inputs(sources, tei_cache)
    if not pdfs:
        if grobid is not None:
            echo("warning: a GROBID service was given but the inputs hold no PDF; it was not used")
        return sources, None
    if fmt not in (None, "tei"):
        raise ConvertError(
            f"the inputs hold PDFs, which become GROBID TEI, but the format given is {fmt}: leave the format out"
        )
    if tei_cache is None:
        raise ConvertError("PDFs need a folder to keep their TEI in")
    unreadable = _unreadable(pdfs)
    pdfs = [p for p in pdfs if p not in {f.path for f in unreadable}]
    if grobid is not None:
        teis, failures, counts = convert_pdfs(pdfs, tei_cache / "grobid", grobid, echo)
        parser = "grobid"
    else:
        parser = "fallback"
        from agenthop.corpus.convert.pdf_fallback import convert_pdfs_fallback  # loads pdfminer only when needed

        echo(f"parser: {FALLBACK_LABEL}")
        teis, failures, counts = convert_pdfs_fallback(pdfs, tei_cache, echo)
    failures = unreadable + failures
    if failures and not skip_bad:
        raise BadPdfsError(failures)
    for failure in failures:
        echo(f"warning: skipped a PDF that could not be converted: {failure}")
    summary = {
        "parser": parser,
        "parser_note": None if grobid is not None else FALLBACK_LABEL,
        "pdfs": len(pdfs) + len(unreadable),
        "converted": len(teis),
        "skipped": len(failures),
        "skipped_pdfs": [{"pdf": str(f.path), "reason": f.reason} for f in failures],
        "tei_cache": str(tei_cache),
        **counts,
    }
    return [*others, *teis], summary
