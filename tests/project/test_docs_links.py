"""Every relative link in the Markdown docs reaches a file, and every #anchor a heading of that file.

Docs move (histories to docs/notes/) and headings are renamed; a link left behind fails here, not in a reader's
browser. Anchors are made as GitHub makes them: lower case, punctuation but hyphens and underscores dropped,
spaces as hyphens, a repeated heading numbered -1, -2.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest
from support.paths import REPO

DOCS = sorted(
    [REPO / "README.md", REPO / "CHANGELOG.md", *(REPO / "docs").rglob("*.md"), *(REPO / "explore").glob("*.md")]
)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def github_anchor(heading: str) -> str:
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


@cache
def anchors_of(path: Path) -> frozenset[str]:
    seen: dict[str, int] = {}
    found = set()
    for line in FENCE.sub("", path.read_text(encoding="utf-8")).splitlines():
        if match := re.match(r"^#{1,6} (.*)$", line):
            base = github_anchor(match.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return frozenset(found)


def broken_links(doc: Path) -> list[str]:
    broken = []
    for target in LINK.findall(FENCE.sub("", doc.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z]+:", target):  # https:, mailto: and the like are not checked here
            continue
        file_part, _, anchor = target.partition("#")
        dest = (doc.parent / file_part).resolve() if file_part else doc
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors_of(dest):
            broken.append(f"{target}: no heading with that anchor in {dest.name}")
    return broken


def test_the_anchor_rule_is_githubs():
    assert github_anchor("3c. Protocol edges") == "3c-protocol-edges"
    assert github_anchor("Fewer, better items: `--max-cited-together 1`") == "fewer-better-items---max-cited-together-1"


def test_a_link_to_a_missing_heading_or_file_is_found(tmp_path):
    doc = tmp_path / "a.md"
    doc.write_text("# Title\n\n[here](#title) [gone](#nowhere) [file](b.md) [web](https://example.org/x#y)\n")
    assert broken_links(doc) == ["#nowhere: no heading with that anchor in a.md", "b.md: no such file"]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_reaches_its_file_and_heading(doc):
    assert not broken_links(doc)
