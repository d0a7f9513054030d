"""What the parser probably got wrong, counted before anything is served: a build's quality table.

GROBID passes figure captions through as section headers, journal names as reference titles and
affiliations as authors; none of that is an error a converter can refuse, so it is counted and shown
with the first examples, for a person to judge before serving the corpus.
"""

from __future__ import annotations

import json
import re
import sqlite3

from agenthop.corpus.convert.linking import untitled

QUALITY_META_KEY = "build_quality"  # where a built corpus keeps its table (meta table), for `corpus info`
LONG_SECTION = 70_015  # characters: the 99.9th percentile of section length in the published release
_EXAMPLES = 3
_CAPTION = re.compile(r"^(fig(ure)?|table|tab|scheme|chart|plate)\.?\s*[0-9ivx]+\b", re.IGNORECASE)
_AFFILIATION = re.compile(
    r"\b(universit\w*|institut\w*|department|dept|laborator\w*|school|college|hospital|centre|center)\b", re.IGNORECASE
)

ROWS = {
    "papers_without_abstract": "papers with text but no abstract",
    "papers_without_authors": "papers with text but no authors",
    "papers_without_year": "papers with text but no year",
    "authors_like_affiliations": "author names that look like an affiliation",
    "sections_like_captions": "section headers that look like a figure or table caption",
    "long_sections": f"sections longer than {LONG_SECTION:,} characters",
    "references_without_title": "bibliography entries without a title (shown by their printed text, or dropped)",
    "reference_titles_like_venues": "bibliography entries whose title is their venue (a journal name taken for a title)",
}


def _row(rows: dict, name: str, example: str) -> None:
    row = rows[name]
    row["count"] += 1
    if len(row["examples"]) < _EXAMPLES:
        row["examples"].append(example)


def quality_table(conn: sqlite3.Connection) -> dict:
    """{row name: {"what", "count", "examples"}} over the papers kept in a build's scratch store."""
    rows = {name: {"what": what, "count": 0, "examples": []} for name, what in ROWS.items()}
    papers = conn.execute(
        "SELECT p.pid, p.abstract, p.authors, p.year, pool.line FROM papers p JOIN pool ON pool.pid = p.pid "
        "ORDER BY pool.rowid"
    )
    for pid, abstract, authors, year, line in papers:
        if not abstract:
            _row(rows, "papers_without_abstract", pid)
        names = json.loads(authors)
        if not names:
            _row(rows, "papers_without_authors", pid)
        if year is None:
            _row(rows, "papers_without_year", pid)
        for name in names:
            if _AFFILIATION.search(name):
                _row(rows, "authors_like_affiliations", f"{pid}: {name}")
        for section in json.loads(line)["sections"]:
            if _CAPTION.match(section["header"]):
                _row(
                    rows,
                    "sections_like_captions",
                    f"{pid}: {section['header']!r} ({len(section['text']):,} characters)",
                )
            if len(section["text"]) > LONG_SECTION:
                _row(rows, "long_sections", f"{pid}: {section['header']!r} ({len(section['text']):,} characters)")
    for citing, pos, data in conn.execute(
        "SELECT r.citing, r.pos, r.data FROM refs r JOIN papers p ON p.pid = r.citing ORDER BY p.rowid, r.pos"
    ):
        ref = json.loads(data)
        if not ref["title"]:
            shown = ref.get("raw") or f"(no printed text; {untitled(ref)})"
            _row(rows, "references_without_title", f"{citing} reference {pos + 1}: {shown}"[:200])
        elif ref["venue"] is None and ref["title"] and _looks_like_venue(ref["title"]):
            _row(rows, "reference_titles_like_venues", f"{citing} reference {pos + 1}: {ref['title']!r}")
    return rows


_VENUE_WORDS = re.compile(
    r"^(proc(eedings)?\b|journal\b|j\.\s|trans(actions)?\b|annals\b|acta\b|bulletin\b|review\b|letters\b)",
    re.IGNORECASE,
)


def _looks_like_venue(title: str) -> bool:
    """A title that starts like a journal or proceedings name ("Proceedings of …", "J. Mol. Biol.")."""
    return bool(_VENUE_WORDS.match(title))


def render(table: dict) -> list[str]:
    """The table as lines of text: count, what, first examples."""
    lines = []
    for row in (table[name] for name in ROWS if name in table):  # in ROWS order, however the table was stored
        examples = "; ".join(row["examples"])
        lines.append(f"  {row['count']:>6}  {row['what']}" + (f"  (e.g. {examples})" if examples else ""))
    return lines
