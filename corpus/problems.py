"""What is wrong with a release, said precisely: errors that name the place, field, expected and found; counted warnings.

Every input shape (release directory, packaged samples) gives its records a
:class:`Where` (file and line, or file and sample), so one validation path
speaks the same way about all of them.
"""

from __future__ import annotations

import json
from typing import Any


class ReleaseError(Exception):
    """The release cannot be imported; the message names place, field, expected and found."""

    # Set by the readers when they know them, so the importer can tell which record an error stands for.
    key: str | None = None  # the record's key (an item id), when the record was read far enough to have one
    raw: str = ""  # the start of a line that is not JSON, where the importer looks for the key


class BadLabelError(ReleaseError):
    """A recall label names no section (or no pool paper); an import may drop such labels instead."""


def describe(value: Any) -> str:
    """How a found value is named in an error message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({json.dumps(value)})"
    if isinstance(value, int):
        return f"an integer ({value})"
    if isinstance(value, float):
        return f"a number ({value})"
    if isinstance(value, str):
        shown = value if len(value) <= 60 else value[:57] + "..."
        return f"the string {json.dumps(shown, ensure_ascii=False)}" if value else "an empty string"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


class Where:
    """A place in the input ("qa/full.jsonl line 17", "lite.json sample 3 (st_0001)") and a field prefix."""

    __slots__ = ("place", "prefix")

    def __init__(self, place: str, prefix: str = "") -> None:
        self.place = place
        self.prefix = prefix

    def within(self, prefix: str) -> Where:
        """The same place, with field names under ``prefix`` (a packaged sample's ``graph.``)."""
        return Where(self.place, self.prefix + prefix)

    def error(
        self, field: str | None, expected: str, found: str, cls: type[ReleaseError] = ReleaseError
    ) -> ReleaseError:
        prefix = self.place
        if field is not None:
            prefix += f": field '{self.prefix}{field}'"
        return cls(f"{prefix}: expected {expected}, found {found}")

    def fail(self, message: str) -> ReleaseError:
        return ReleaseError(f"{self.place}: {message}")

    def missing(self, field: str) -> ReleaseError:
        return self.fail(f"missing field '{self.prefix}{field}'")


class Findings:
    """Warnings counted by kind with their first examples, and (when checking) every error.

    An import stops at its first error; ``corpus import --check`` collects them
    all, so ``errors`` is only filled when checking.
    """

    MAX_EXAMPLES = 10
    MAX_ERRORS = 1000  # listed; more are counted

    def __init__(self) -> None:
        self.warnings: dict[str, dict] = {}
        self.errors: list[dict] = []
        self.error_count = 0

    def warn(self, kind: str, example: Any, count: int = 1) -> None:
        entry = self.warnings.setdefault(kind, {"count": 0, "examples": []})
        entry["count"] += count
        if len(entry["examples"]) < self.MAX_EXAMPLES:
            entry["examples"].append(example)

    def count(self, kind: str) -> int:
        return self.warnings.get(kind, {}).get("count", 0)

    def add_error(self, exc: ReleaseError) -> None:
        self.error_count += 1
        if len(self.errors) < self.MAX_ERRORS:
            self.errors.append({"message": str(exc), "bad_label": isinstance(exc, BadLabelError)})

    def summary(self) -> dict:
        return {kind: self.warnings[kind] for kind in sorted(self.warnings)}


# What each warning kind means, for people reading an import summary or a check report.
WARNINGS = {
    "zero_section_papers": "pool records with zero sections (their papers are metadata-only)",
    "bad_files": "input files that cannot be converted, left out of the build (each with its reason)",
    "duplicate_headers": "papers with headers read_section cannot tell apart by name (the same header twice, "
    'or "4.2 Results" beside "5.3 Results")',
    "empty_titles": "papers with an empty title",
    "items_without_labels": "items with no recall-label record (section recall will be 0)",
    "gold_without_direct_label": "items with a gold paper that has no direct recall label (section recall can never be 1)",
    "bad_labels_skipped": "recall labels that name no section or no pool paper, dropped",
    "metadata_conflicts": "graph nodes that disagree with the record kept for their paper (the first record is kept)",
    "unknown_consensus_tier": "items whose consensus_tier is empty or not gold/silver/bronze (stored as unknown)",
    "unknown_cognitive_skill": "items whose cognitive_skill is empty or not a known skill (stored as unknown)",
    "unknown_venue": 'items whose venue is empty or a placeholder such as "?" (stored as unknown)',
    "case_normalised": 'categorical values stored in their canonical spelling ("Gold" as "gold")',
    "pool_tables_ignored": "pool records that carry tables (tables are not served; ignored)",
    "pool_copies_differ": "papers whose text differs between samples (the first copy is kept)",
    "combined_files_skipped": "combined sample files skipped because the directory's per-sample files were imported",
    "duplicate_references": "references listed twice in one reference list (the first is kept)",
}


def describe_warning(kind: str) -> str:
    return WARNINGS.get(kind, kind.replace("_", " "))


def format_report(report: dict) -> str:
    """A check report (``importer.check_release``) as text: what was read, every error, each warning kind with examples."""
    c = report["counts"]
    lines = [
        f"checked {report['source']} ({report['shape']}): {c['items']} items, {c['papers']} papers ({c['papers_with_text']} with text), "
        f"{c['sections']} sections, {c['edges']} edges",
    ]
    if report["error_count"]:
        lines += ["", f"{report['error_count']} error{'s' if report['error_count'] != 1 else ''}:"]
        lines += [f"  {e['message']}" for e in report["errors"]]
        if report["error_count"] > len(report["errors"]):
            lines.append(f"  ... and {report['error_count'] - len(report['errors'])} more")
    if report["warnings"]:
        lines += ["", "warnings:"]
        for kind, entry in report["warnings"].items():
            lines.append(f"  {entry['count']:>6}  {kind}: {describe_warning(kind)}")
            for example in entry["examples"][:3]:
                lines.append(f"          e.g. {json.dumps(example, ensure_ascii=False)}")
    lines += [
        "",
        "OK: no errors"
        if report["ok"]
        else f"FAILED: {report['error_count']} error{'s' if report['error_count'] != 1 else ''}",
    ]
    return "\n".join(lines)
