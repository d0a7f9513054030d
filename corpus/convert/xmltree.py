"""Reading XML files with the standard library's parser, and walking paragraphs for citations."""

from __future__ import annotations

import gzip
import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from agenthop.corpus.convert.model import ConvertError, Reference
from agenthop.corpus.convert.outline import Outline
from agenthop.corpus.convert.text import Paragraph, clean

UNLINKED = "\0unlinked:"  # key prefix of an in-text citation without a bibliography target: its marker text follows


def open_bytes(path: Path):
    """The file's bytes, gunzipped when its name ends in .gz (any case)."""
    return gzip.open(path, "rb") if path.name.lower().endswith(".gz") else open(path, "rb")


def parse(path: Path) -> ET.Element:
    """The root element; a file that is not well-formed XML is a ConvertError naming it.

    expat never fetches external entities or DTDs, so a file cannot make the parser
    read other files or the network.
    """
    try:
        with open_bytes(path) as fh:
            return ET.parse(fh).getroot()
    except ET.ParseError as exc:
        raise ConvertError(xml_error(path, exc)) from None
    except (OSError, EOFError) as exc:  # a bad gzip header is an OSError without a strerror; a cut stream, an EOFError
        raise ConvertError(f"{path}: cannot be read ({getattr(exc, 'strerror', None) or exc})") from None


def xml_error(path: Path, exc: ET.ParseError) -> str:
    """The message for a file expat refused; for bytes that are not UTF-8 in a file that declares no encoding,
    what to do about it (expat reads such a file as UTF-8, the XML default)."""
    message = f"{path}: not well-formed XML ({exc})"
    try:
        with open_bytes(path) as fh:
            data = fh.read()
    except (OSError, EOFError):
        return message
    declaration = (
        data.lstrip(b"\xef\xbb\xbf").split(b"?>", 1)[0] if data.lstrip(b"\xef\xbb\xbf").startswith(b"<?xml") else b""
    )
    found = re.search(rb"encoding\s*=\s*[\"']([A-Za-z0-9._-]+)", declaration)
    declared = found.group(1).decode().lower() if found else None
    if declared not in (None, "utf-8", "utf8"):
        return message
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as bad:
        line = data[: bad.start].count(b"\n") + 1
        said = "declares no encoding, so it is read as UTF-8" if declared is None else "declares UTF-8"
        fix = (
            'add <?xml version="1.0" encoding="ISO-8859-1"?> as its first line'
            if declared is None
            else 'change its declaration to encoding="ISO-8859-1"'
        )
        return (
            f"{message}; the file is not UTF-8 (byte 0x{data[bad.start]:02x} on line {line}) and {said}: if it is Latin-1, "
            f"{fix} or convert it (iconv -f latin1 -t utf-8)"
        )
    return message


def local(tag) -> str:
    """'{namespace}div' -> 'div' (comments and processing instructions have no string tag)."""
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def text_of(el: ET.Element | None) -> str:
    return clean("".join(el.itertext())) if el is not None else ""


class Reading:
    """How one format's body is read: which elements are citations, which formulas, which floating material is
    left out (counted in ``skipped``, so that the build reports every element it did not read)."""

    def __init__(
        self,
        refs: dict[str, Reference],
        citation_keys: Callable[[ET.Element], list[str] | None],
        skip: frozenset[str],
        formulas: frozenset[str] = frozenset(),
        formula: Callable[[ET.Element], str] = lambda el: "[formula]",
    ) -> None:
        self.refs, self.citation_keys, self.skip, self.formulas, self.formula = (
            refs,
            citation_keys,
            skip,
            formulas,
            formula,
        )
        self.skipped: Counter[str] = Counter()
        self.unlinked: list[tuple[str, str]] = []  # (marker text, sentence) of citations with no bibliography key


def fill(paragraph: Paragraph, el: ET.Element, reading: Reading) -> None:
    """Append el's text to paragraph; elements for which citation_keys gives keys become citation spans, a formula
    becomes its text (or ``[formula]``), floating material (figures, tables) is left out and counted."""
    paragraph.add(el.text)
    for child in el:
        name = local(child.tag)
        if name in reading.formulas:
            paragraph.add(f" {reading.formula(child)} ")
        elif name in reading.skip:
            reading.skipped[name] += 1
        elif name:
            keys = reading.citation_keys(child)
            if keys is not None:
                paragraph.cite("".join(child.itertext()), keys)
            else:
                fill(paragraph, child, reading)
        paragraph.add(child.tail)


def read_paragraph(el: ET.Element, outline: Outline, reading: Reading) -> None:
    """Add one block element to the outline as a paragraph; each reference it cites gets its first citing sentence
    as context."""
    paragraph = Paragraph()
    fill(paragraph, el, reading)
    text, contexts = paragraph.finish()
    outline.paragraph(text)
    for key, sentence in contexts:
        if key.startswith(UNLINKED):
            reading.unlinked.append((key[len(UNLINKED) :], sentence))
            continue
        ref = reading.refs.get(key)
        if ref is not None and ref.context is None:
            ref.context = sentence
