"""Turn a paper's headed blocks into top-level sections, rolling subsections into their parent.

This is what the release does: only top-level sections exist; a subsection's heading
line stays in its parent's text, so a recall label that names a subsection still
finds it verbatim.
"""

from __future__ import annotations

from agenthop.server.corpus.convert.model import Section

UNTITLED = "Main text"  # header of paragraphs that come before any heading


class Outline:
    def __init__(self) -> None:
        self.sections: list[Section] = []
        self._blocks: list[str] = []
        self._header: str | None = None

    def _close(self) -> None:
        if self._header is not None or self._blocks:
            text = "\n\n".join(b for b in self._blocks if b)
            if text or self._header:
                self.sections.append(Section(self._header or UNTITLED, text))
        self._blocks = []
        self._header = None

    def top(self, header: str) -> None:
        """Start a new top-level section."""
        self._close()
        self._header = header or UNTITLED

    def sub(self, header: str) -> None:
        """A subsection heading: a line in the current section (or a section of its own if none is open)."""
        if self._header is None and not self._blocks:
            self.top(header)
        elif header:
            self._blocks.append(header)

    def paragraph(self, text: str) -> None:
        if text:
            self._blocks.append(text)

    def finish(self) -> list[Section]:
        self._close()
        # A section with a header but no text carries nothing to read: drop it.
        return [s for s in self.sections if s.text.strip()]


def numbered_header(number: str | None, title: str) -> str:
    """'2.1' + 'Node Types' -> '2.1 Node Types' (the number is part of the real header)."""
    number = (number or "").strip().rstrip(".")
    title = title.strip()
    if number and title:
        return f"{number} {title}"
    return title or number


def depth_of(number: str | None) -> int | None:
    """'2' -> 1, '2.1' -> 2, '2.1.3' -> 3; None when there is no number."""
    number = (number or "").strip().rstrip(".")
    if not number:
        return None
    return number.count(".") + 1
