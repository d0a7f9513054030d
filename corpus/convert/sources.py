"""Find the input files and tell their format from their content."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

from agenthop.corpus.convert.jats import parse_jats
from agenthop.corpus.convert.model import BadFileError, ConvertError, Paper
from agenthop.corpus.convert.s2orc import is_jsonl, iter_s2orc, looks_like_s2orc, open_text
from agenthop.corpus.convert.tei import NS as TEI_NS
from agenthop.corpus.convert.tei import parse_tei
from agenthop.corpus.convert.xmltree import open_bytes, xml_error

FORMATS = ("tei", "jats", "s2orc")
_EXTENSIONS = (".xml", ".nxml", ".tei", ".json", ".jsonl", ".json.gz", ".jsonl.gz", ".xml.gz")


def input_files(sources: list[Path]) -> Iterator[Path]:
    """Every file named, and every file with a known extension under every folder named, in sorted order."""
    for src in sources:
        if src.is_dir():
            yield from sorted(p for p in src.rglob("*") if p.is_file() and p.name.lower().endswith(_EXTENSIONS))
        elif src.is_file():
            yield src
        else:
            raise ConvertError(f"{src}: no such file or folder")


def ignored_files(sources: list[Path]) -> list[Path]:
    """Files under the folders named that the build does not read (an HTML page, a README), so that it can name them:
    neither an input by its extension nor a PDF. Hidden files (.DS_Store) are not worth a word."""
    return [
        p
        for src in sources
        if src.is_dir()
        for p in sorted(src.rglob("*"))
        if p.is_file() and not p.name.startswith(".") and not p.name.lower().endswith((*_EXTENSIONS, ".pdf"))
    ]


def detect(path: Path) -> str:
    """'tei', 'jats' or 's2orc', from the file's first element or first JSON value.

    XML is sniffed as bytes, so that its own encoding declaration (or a byte-order mark) decides how it is read.
    """
    try:
        with open_bytes(path) as fh:
            start = fh.read(4096)
            head = start.removeprefix(b"\xef\xbb\xbf").lstrip()[:1]
        if not start:
            raise ConvertError(
                f"{path}: the file is empty (0 bytes{' once unzipped' if path.name.lower().endswith('.gz') else ''}); "
                "copy it again from its source, or remove it"
            )
        if not head and not _holds_more_than_white_space(path):
            raise ConvertError(f"{path}: the file holds only white space; copy it again from its source, or remove it")
        if head == b"<":
            return _xml_format(path)
        if head in (b"{", b"["):
            return _json_format(path)
    except (OSError, EOFError, UnicodeDecodeError) as exc:  # gzip.BadGzipFile is an OSError
        raise ConvertError(f"{path}: cannot be read ({exc})") from None
    raise ConvertError(f"{path}: neither XML nor JSON; expected GROBID TEI, JATS or S2ORC JSON")


def _holds_more_than_white_space(path: Path) -> bool:
    """Does the file hold anything but white space past its first 4 KiB? (a file that starts blank is rare: read it all)"""
    with open_bytes(path) as fh:
        return bool(fh.read().strip())


def _xml_format(path: Path) -> str:
    try:
        with open_bytes(path) as fh:
            tag = next((el.tag for _, el in ET.iterparse(fh, events=("start",))), "")
    except ET.ParseError as exc:
        raise ConvertError(xml_error(path, exc)) from None
    if tag in (f"{{{TEI_NS}}}TEI", f"{{{TEI_NS}}}teiCorpus"):
        return "tei"
    if tag.rsplit("}", 1)[-1] == "article":
        return "jats"
    raise ConvertError(
        f"{path}: XML whose root is <{tag}>; expected GROBID TEI (<TEI> in the TEI namespace) or JATS (<article>)"
    )


def _json_format(path: Path) -> str:
    with open_text(path) as fh:
        first = fh.readline() if is_jsonl(path) else fh.read()
    try:
        record = json.loads(first)
    except json.JSONDecodeError as exc:
        raise ConvertError(f"{path}: not valid JSON ({exc.msg})") from None
    if looks_like_s2orc(record):
        return "s2orc"
    raise ConvertError(
        f"{path}: JSON that is not an S2ORC paper "
        "(expected an object with 'body_text' (S2ORC 2019, CORD-19, unarXive) or 'pdf_parse' (doc2json))"
    )


def read_papers(sources: list[Path], fmt: str | None = None, bad: list[str] | None = None) -> Iterator[Paper]:
    """Every paper of every input, one at a time (one file in memory at most).

    A file that cannot be converted raises :class:`ConvertError`; when ``bad`` is a list, its message is
    recorded there and the next file is read (the papers of a JSONL file before its bad line are kept).
    """
    for path in input_files(sources):
        try:
            yield from _papers_of(path, fmt)
        except ConvertError as exc:
            if bad is None:
                raise BadFileError(str(exc)) from None
            bad.append(str(exc))


def _papers_of(path: Path, fmt: str | None) -> Iterator[Paper]:
    kind = detect(path)
    if fmt is not None and kind != fmt:
        raise ConvertError(f"{path}: looks like {kind}, not {fmt}")
    if kind == "tei":
        yield parse_tei(path)
    elif kind == "jats":
        yield parse_jats(path)
    else:
        yield from iter_s2orc(path)
