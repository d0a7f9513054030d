"""Render a report document as Markdown."""

from __future__ import annotations

from agenthop.scorer.document import Anchor, Document, Link, Table, section_id


def _cell(text) -> str:
    if isinstance(text, Link):
        return f"[{_cell(text.text)}](<{text.href}>)"
    if isinstance(text, Anchor):
        return f'<a id="{text.id}"></a>**{_cell(text.text)}**'
    return str(text).replace("|", "\\|").replace("\n", " ")


def table_md(t: Table) -> str:
    lines = []
    if t.caption:
        lines += [f"*{t.caption}*", ""]
    header = list(t.header)
    if t.groups:  # Markdown has no column groups: each header names its group
        at = 0
        for label, span in t.groups:
            for i in range(at, at + span):
                header[i] = f"{label}: {header[i]}" if label and span > 1 else header[i]
            at += span
    lines.append("| " + " | ".join(_cell(h) for h in header) + " |")
    lines.append("|" + "|".join("---" for _ in t.header) + "|")
    for row in t.rows:
        lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
    return "\n".join(lines)


def render(doc: Document) -> str:
    out = [f"# {doc.title}", ""]
    for line in doc.intro:
        out += [line, ""]
    out += ["**Contents:** " + " · ".join(f"[{sec.title}](#{section_id(sec.title)})" for sec in doc.sections), ""]
    for sec in doc.sections:
        out += [f'<a id="{section_id(sec.title)}"></a>', "", f"## {sec.title}", ""]
        for b in sec.bullets:
            out.append(f"- {b}")
        if sec.bullets:
            out.append("")
        for term, text in sec.definitions:
            out.append(f"- **{term}**: {text}")
        if sec.definitions:
            out.append("")
        for p in sec.paragraphs:
            out += [p, ""]
        for t in sec.tables:
            out += [table_md(t), ""]
        shown = [p for p in sec.plots if p in doc.plots]
        if shown:
            out += [f"(Plots in the HTML report: {', '.join(shown)}.)", ""]
    return "\n".join(out).rstrip() + "\n"
