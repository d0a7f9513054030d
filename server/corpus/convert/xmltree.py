"""Reading XML files with the standard library's parser, and walking paragraphs for citations."""

from __future__ import annotations

import gzip
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

from agenthop.server.corpus.convert.model import ConvertError, Reference
from agenthop.server.corpus.convert.outline import Outline
from agenthop.server.corpus.convert.text import Paragraph, clean


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
    except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError without a strerror
        raise ConvertError(f"{path}: cannot be read ({exc.strerror or exc})") from None


def xml_error(path: Path, exc: ET.ParseError) -> str:
    """The message for a file expat refused; for bytes that are not UTF-8 in a file that declares no encoding,
    what to do about it (expat reads such a file as UTF-8, the XML default)."""
    message = f"{path}: not well-formed XML ({exc})"
    try:
        with open_bytes(path) as fh:
            data = fh.read()
    except (OSError, EOFError):
        return message
    declared = data.lstrip(b"\xef\xbb\xbf").startswith(b"<?xml") and b"encoding" in data.split(b"?>", 1)[0]
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as bad:
        if not declared:
            line = data[:bad.start].count(b"\n") + 1
            return (f"{message}; the file is not UTF-8 (byte 0x{data[bad.start]:02x} on line {line}) and declares no encoding, "
                    "so it is read as UTF-8: if it is Latin-1, add <?xml version=\"1.0\" encoding=\"ISO-8859-1\"?> as its first "
                    "line or convert it (iconv -f latin1 -t utf-8)")
    return message


def local(tag) -> str:
    """'{namespace}div' -> 'div' (comments and processing instructions have no string tag)."""
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def text_of(el: ET.Element | None) -> str:
    return clean("".join(el.itertext())) if el is not None else ""


def fill(paragraph: Paragraph, el: ET.Element, citation_keys: Callable[[ET.Element], list[str] | None], skip: frozenset[str]) -> None:
    """Append el's text to paragraph; elements for which citation_keys gives keys become citation spans."""
    paragraph.add(el.text)
    for child in el:
        name = local(child.tag)
        if name and name not in skip:
            keys = citation_keys(child)
            if keys is not None:
                paragraph.cite("".join(child.itertext()), keys)
            else:
                fill(paragraph, child, citation_keys, skip)
        paragraph.add(child.tail)


def read_paragraph(el: ET.Element, outline: Outline, refs: dict[str, Reference],
                   citation_keys: Callable[[ET.Element], list[str] | None], skip: frozenset[str]) -> None:
    """Add one paragraph element to the outline; each reference it cites gets its first citing sentence as context."""
    paragraph = Paragraph()
    fill(paragraph, el, citation_keys, skip)
    text, contexts = paragraph.finish()
    outline.paragraph(text)
    for key, sentence in contexts:
        ref = refs.get(key)
        if ref is not None and ref.context is None:
            ref.context = sentence
