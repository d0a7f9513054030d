"""The seven tools: their arguments, costs, descriptions, and what each does.

A tool here is pure with respect to the session: it reads the corpus and
returns a ToolOutput; charging, logging and the status line are the session's
job (sessions.py), so every tool is metered the same way.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from agenthop.server.explore.lookup import explore_graph, explore_paper
from agenthop.server.log.records import Answer, Outcome
from agenthop.server.papers import Corpus, Paper, PaperHeading
from agenthop.server.sections import alias, resolve

if TYPE_CHECKING:  # only an annotation here: naming the tools must not load the search engine (bm25s, scipy)
    from agenthop.server.search import SearchEngine

ABSTRACT_PREVIEW = 300
PaperId = Annotated[
    str, Field(min_length=1, max_length=200, description="A paper ID exactly as shown by the other tools.")
]


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


def is_blank(text: str) -> bool:
    """Nothing visible: only whitespace and invisible format or control characters (zero-width space, BOM, ...)."""
    return all(ch.isspace() or unicodedata.category(ch) in ("Cf", "Cc") for ch in text)


class SearchArgs(_Args):
    query: Annotated[
        str, Field(min_length=1, max_length=2000, description="Keywords to look for in titles and abstracts.")
    ]
    top_k: Annotated[int, Field(ge=1, le=10, description="How many results to return (1-10).")] = 5

    @field_validator("query")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        # Refused for free like an empty query: blank text searches for nothing.
        if is_blank(value):
            raise PydanticCustomError("blank", "blank: give keywords to look for in titles and abstracts")
        return value


class PaperArgs(_Args):
    paper_id: PaperId


class ReadArgs(_Args):
    paper_id: PaperId
    section: Annotated[
        str,
        Field(
            min_length=1,
            max_length=500,
            description=(
                "The section's alias from list_sections (e.g. 'C'), its header, or a unique part of its header."
            ),
        ),
    ]

    @field_validator("section")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        # Refused for free like an empty name: spaces name no section (the reference charges both).
        if is_blank(value):
            raise PydanticCustomError("blank", "blank: give the section's alias (e.g. 'C') or its header")
        return value


class ThinkArgs(_Args):
    reasoning: Annotated[str, Field(max_length=50_000, description="Your reasoning; it is logged and costs nothing.")]


class SubmitArgs(_Args):
    answer: Annotated[Literal["A", "B", "C", "D"], Field(description="The letter of the option you choose.")]
    reasoning: Annotated[str, Field(max_length=50_000, description="Why this option: the evidence you found.")]


@dataclass
class ToolOutput:
    outcome: Outcome
    text: str
    data: dict = field(default_factory=dict)
    exposed: list[dict] = field(default_factory=list)  # records.Exposed, as dicts
    delivered: dict | None = None  # records.Delivered, as a dict
    answer: Answer | None = None


@dataclass(frozen=True)
class Scope:
    """What a call can see: the corpus, the search engine, and the item (None = explore)."""

    corpus: Corpus
    search: SearchEngine
    item_id: str | None


ArgsT = TypeVar("ArgsT", bound=_Args)


@dataclass(frozen=True)
class Tool(Generic[ArgsT]):
    """One tool; ``run`` takes the arguments that ``args`` validates, so each tool is typed by its own arguments."""

    name: str
    title: str
    cost: int
    args: type[ArgsT]
    description: str
    run: Callable[[Scope, ArgsT], ToolOutput]
    read_only: bool = True


def _paper_line(p: Paper | PaperHeading) -> str:
    year = p.year if p.year is not None else "n.d."
    return f"{p.title} ({year}) | full text: {'yes' if p.has_text else 'no'}"


def _unknown(scope: Scope, paper_id: str) -> ToolOutput:
    closest = scope.corpus.closest_id(paper_id, scope.item_id)
    hint = f" The closest ID is '{closest}'." if closest else ""
    return ToolOutput(
        "not_found",
        f"Paper '{paper_id}' is not in the papers available to you.{hint} Use IDs from search_papers or get_references.",
        {"error": f"unknown paper ID {paper_id!r}", **({"closest": closest} if closest else {})},
    )


def _lookup(scope: Scope, paper_id: str) -> Paper | ToolOutput:
    """The paper in scope, or the not-found output. Explore mode also takes pasted identifiers (ACL Anthology and arXiv
    IDs, links) and shows a work recorded several times by its one canonical record (explore/tools.py)."""
    if scope.item_id is not None:
        p = scope.corpus.paper(paper_id, scope.item_id)
        return p if p is not None else _unknown(scope, paper_id)
    p, closest = explore_paper(scope.corpus, paper_id)
    return p if p is not None else unknown_in_explore(paper_id, closest)


def unknown_in_explore(paper_id: str, closest: str | None) -> ToolOutput:
    hint = f" The closest ID is '{closest}'." if closest else ""
    return ToolOutput(
        "not_found",
        f"Paper '{paper_id}' is not in the papers available to you.{hint} Use IDs from search_papers or get_references; "
        "DOIs, arXiv IDs and ACL Anthology IDs work too, as IDs or as links.",
        {"error": f"unknown paper ID {paper_id!r}", **({"closest": closest} if closest else {})},
    )


def search_papers(scope: Scope, args: SearchArgs) -> ToolOutput:
    hits = scope.search.search(scope.item_id, args.query, args.top_k)
    if not hits:
        return ToolOutput(
            "ok", f"No papers match '{args.query}'. Try other keywords.", {"query": args.query, "results": []}
        )
    papers = scope.corpus.papers([h.paper_id for h in hits])
    results, lines = [], [f"Search results for '{args.query}' ({len(hits)}):", ""]
    for rank, hit in enumerate(hits, 1):
        p = papers[hit.paper_id]
        short = p.abstract[:ABSTRACT_PREVIEW] + ("..." if len(p.abstract) > ABSTRACT_PREVIEW else "")
        results.append(
            {
                "rank": rank,
                "paper_id": p.paper_id,
                "title": p.title,
                "year": p.year,
                "abstract": short,
                "has_text": p.has_text,
            }
        )
        lines += [f"[{rank}] {p.paper_id}", f"    {_paper_line(p)}", f"    Abstract: {short or '(none)'}"]
    return ToolOutput(
        "ok",
        "\n".join(lines),
        {"query": args.query, "results": results},
        exposed=[{"paper_id": r["paper_id"], "rank": r["rank"]} for r in results],
    )


_ID_NAMES = {"doi": "DOI", "arxiv": "arXiv", "pmcid": "PMCID", "acl": "ACL Anthology", "s2": "Semantic Scholar"}


def get_paper_info(scope: Scope, args: PaperArgs) -> ToolOutput:
    p = _lookup(scope, args.paper_id)
    if isinstance(p, ToolOutput):
        return p
    text = "\n".join(
        [
            f"Paper: {p.paper_id}",
            f"Title: {p.title}",
            f"Authors: {', '.join(p.authors) if p.authors else 'unknown'}",
            f"Year: {p.year if p.year is not None else 'unknown'}",
            f"Venue: {p.venue or 'unknown'}",
            f"IDs: {'; '.join(f'{_ID_NAMES.get(k, k)} {v}' for k, v in sorted(p.ids.items())) or 'none known'}",
            f"Abstract: {p.abstract or '(not available)'}",
            f"Full text available: {'yes (use list_sections)' if p.has_text else 'no (metadata only)'}",
        ]
    )
    paper = {
        "paper_id": p.paper_id,
        "title": p.title,
        "authors": p.authors,
        "year": p.year,
        "venue": p.venue,
        "ids": p.ids,
        "abstract": p.abstract,
        "has_text": p.has_text,
    }
    if scope.item_id is not None:  # item mode: the tool as the benchmark defines it (SPEC 3), backward links only
        return ToolOutput("ok", text, {"paper": paper})
    licence = scope.corpus.licence(p.paper_id)  # explore mode: under which terms the text may be reused
    if licence is not None:
        text += f"\nLicence: {licence[0]}" + (f" ({licence[1]})" if licence[1] else "")
        paper["licence"] = licence[0]
    return _with_cited_by(scope, p, text, paper)


CITED_BY_SHOWN = 10  # citing papers listed by get_paper_info in explore mode; the count covers them all


def _with_cited_by(scope: Scope, p: Paper, text: str, paper: dict) -> ToolOutput:
    """Explore mode: get_paper_info also lists the papers of the corpus that cite ``p``, to walk the graph forward.
    A work recorded several times (reference stubs of one outside work) counts the citers of all its records."""
    graph = explore_graph(scope.corpus)
    count, citing = graph.citing(p.paper_id, offset=0, limit=CITED_BY_SHOWN, sort=None)
    papers = [
        {
            "rank": rank,
            "paper_id": ref.paper.paper_id,
            "title": ref.paper.title,
            "year": ref.paper.year,
            "has_text": ref.paper.has_text,
            "context": ref.context,
        }
        for rank, ref in enumerate(citing, 1)
    ]
    others = graph.members(p.paper_id)[1:]
    lines = [f"Also recorded as: {', '.join(others)} (the same work; these IDs lead here)."] if others else []
    if count == 0:
        lines.append("Cited by: no paper of this corpus cites it.")
    else:
        shown = "" if count == len(papers) else f"; the first {len(papers)} shown (get_citing_papers pages through all)"
        lines.append(f"Cited by {count} paper{'s' if count != 1 else ''} of this corpus{shown}:")
        for entry, ref in zip(papers, citing):
            lines += [f"[{entry['rank']}] {entry['paper_id']}", f"    {_paper_line(ref.paper)}"]
            if ref.context:
                lines.append(f'    Cites it as: "{ref.context}"')
    data: dict[str, Any] = {"paper": paper, "cited_by": {"count": count, "papers": papers}}
    if others:
        data["also_recorded_as"] = others
    return ToolOutput(
        "ok",
        text + "\n\n" + "\n".join(lines),
        data,
        exposed=[{"paper_id": e["paper_id"], "rank": e["rank"]} for e in papers],
    )


def get_references(scope: Scope, args: PaperArgs) -> ToolOutput:
    p = _lookup(scope, args.paper_id)
    if isinstance(p, ToolOutput):
        return p
    refs = scope.corpus.references(p.paper_id, scope.item_id)
    if not refs:
        return ToolOutput(
            "ok", f"No references of '{p.title}' are available.", {"paper_id": p.paper_id, "references": []}
        )
    lines, out = [f"References of '{p.title}' ({len(refs)}):", ""], []
    for rank, ref in enumerate(refs, 1):
        q = ref.paper
        out.append(
            {
                "rank": rank,
                "paper_id": q.paper_id,
                "title": q.title,
                "year": q.year,
                "has_text": q.has_text,
                "context": ref.context,
            }
        )
        lines += [f"[{rank}] {q.paper_id}", f"    {_paper_line(q)}"]
        if ref.context:
            lines.append(f'    Cited as: "{ref.context}"')
    return ToolOutput(
        "ok",
        "\n".join(lines),
        {"paper_id": p.paper_id, "references": out},
        exposed=[{"paper_id": r["paper_id"], "rank": r["rank"]} for r in out],
    )


def _paper_with_text(scope: Scope, paper_id: str) -> tuple[Paper, list[tuple[str, int]]] | ToolOutput:
    """(the paper, its (header, length) sections) if it is in scope and has text; else the output to return.

    A paper with no sections has no text, whatever the corpus file says.
    """
    p = _lookup(scope, paper_id)
    if isinstance(p, ToolOutput):
        return p
    # has_text implies an arXiv id (schema.py); a paper that breaks it has no sections to find either way.
    headers = scope.corpus.section_headers(p.arxiv_id) if p.has_text and p.arxiv_id is not None else []
    if not headers:
        return ToolOutput(
            "no_text",
            f"Paper '{p.paper_id}' ({p.title}) has no full text here; only its abstract is available, via get_paper_info.",
            {"paper_id": p.paper_id, "title": p.title, "sections": [], "error": "no full text"},
        )
    return p, headers


def list_sections(scope: Scope, args: PaperArgs) -> ToolOutput:
    found = _paper_with_text(scope, args.paper_id)
    if isinstance(found, ToolOutput):
        return found
    p, headers = found
    sections = [{"alias": alias(i), "header": h, "chars": n} for i, (h, n) in enumerate(headers)]
    lines = [f"Sections of '{p.title}' ({len(sections)}); read one with read_section (5 points):", ""]
    lines += [f"({s['alias']}) {s['header']} ({s['chars']:,} chars)" for s in sections]
    return ToolOutput("ok", "\n".join(lines), {"paper_id": p.paper_id, "title": p.title, "sections": sections})


def section_banner(section_alias: str, header: str, title: str) -> str:
    return f"=== ({section_alias}) {header} — {title} ==="


def section_end(section_alias: str, header: str) -> str:
    return f"=== End of ({section_alias}) {header} ==="


def section_body(text: str) -> str | None:
    """The paper text inside a read_section result's text (None if ``text`` is not one): what lies
    between the banner and the end line, whatever the server appended after it."""
    if not text.startswith("=== ("):
        return None
    start = text.find(" ===\n\n")
    end = text.rfind("\n\n=== End of (")
    if start < 0 or end < start:
        return None
    return text[start + len(" ===\n\n") : end]


def read_section(scope: Scope, args: ReadArgs) -> ToolOutput:
    found = _paper_with_text(scope, args.paper_id)
    if isinstance(found, ToolOutput):
        return found
    p, sections = found
    assert p.arxiv_id is not None  # _paper_with_text found sections under it
    headers = [h for h, _ in sections]
    match = resolve(args.section, headers)
    if match.index is None:
        candidates = [{"alias": alias(i), "header": headers[i]} for i in match.candidates]
        listing = "; ".join(f"({c['alias']}) {c['header']}" for c in candidates)
        if match.ambiguous:
            text = f"Section '{args.section}' matches several sections of this paper: {listing}. Name one by its alias."
            return ToolOutput(
                "ambiguous", text, {"paper_id": p.paper_id, "candidates": candidates, "error": "ambiguous section"}
            )
        text = f"Section '{args.section}' is not in this paper. Its sections are: {listing}."
        return ToolOutput(
            "not_found", text, {"paper_id": p.paper_id, "candidates": candidates, "error": "unknown section"}
        )
    body = scope.corpus.section_text(p.arxiv_id, match.index)
    section_alias, header = alias(match.index), headers[match.index]
    section = {"alias": section_alias, "header": header, "chars": len(body)}
    # The end line keeps what the server appends apart from the paper's words. The text travels in both channels
    # (text content and structuredContent): clients hand their model one or the other (Agents SDK: use_structured_content).
    text = f"{section_banner(section_alias, header, p.title)}\n\n{body}\n\n{section_end(section_alias, header)}"
    delivered = {
        "paper_id": p.paper_id,
        "arxiv_id": p.arxiv_id,
        "section_index": match.index,
        "header": headers[match.index],
    }
    return ToolOutput("ok", text, {"paper_id": p.paper_id, "section": section, "text": body}, delivered=delivered)


def think(scope: Scope, args: ThinkArgs) -> ToolOutput:
    return ToolOutput("ok", "Noted.")


def submit_answer(scope: Scope, args: SubmitArgs) -> ToolOutput:
    return ToolOutput(
        "ok", f"Answer submitted: {args.answer}. The session has ended.", {"answer": args.answer}, answer=args.answer
    )


def by_name(tools: list[Tool[Any]]) -> dict[str, Tool[Any]]:
    """The tools keyed by name. Takes a list of ``Tool[Any]``: tools of different arguments have no narrower common
    type, as each ``run`` takes only its own arguments."""
    return {t.name: t for t in tools}


TOOLS: dict[str, Tool[Any]] = by_name(
    [
        Tool(
            "search_papers",
            "Search papers",
            1,
            SearchArgs,
            "Keyword (BM25) search over the titles and abstracts of the papers you can explore. Returns ranked paper IDs "
            "with title, year, a shortened abstract and whether full text exists. Costs 1 point. Use it to find papers on a "
            "topic the question or a citation mentions.",
            search_papers,
        ),
        Tool(
            "get_paper_info",
            "Get paper info",
            1,
            PaperArgs,
            "Title, authors, year, venue and full abstract of one paper, and whether its full text can be read. Costs 1 point.",
            get_paper_info,
        ),
        Tool(
            "get_references",
            "Get references",
            1,
            PaperArgs,
            "The papers a paper cites (ID, title, year, full text yes/no) and, where known, the sentence in which it cites "
            "them. Costs 1 point. Start from the seed paper to follow the citation chain.",
            get_references,
        ),
        Tool(
            "list_sections",
            "List sections",
            1,
            PaperArgs,
            "The sections of a paper's full text, each with a short alias (A, B, ...) and its length in characters, so you "
            "can decide what is worth reading. Costs 1 point.",
            list_sections,
        ),
        Tool(
            "read_section",
            "Read section",
            5,
            ReadArgs,
            "The whole text of one section of a paper. Costs 5 points, so read only sections likely to hold the evidence. "
            "Name the section by its alias from list_sections, its header, or a unique part of the header.",
            read_section,
        ),
        Tool("think", "Think", 0, ThinkArgs, "Write down your reasoning or plan. Free; changes nothing.", think),
        Tool(
            "submit_answer",
            "Submit answer",
            0,
            SubmitArgs,
            "Submit your final answer (A, B, C or D) with a short justification. Free, but it ends the session: you can "
            "submit only once.",
            submit_answer,
            read_only=False,
        ),
    ]
)
