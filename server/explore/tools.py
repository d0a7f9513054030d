"""The tools of an explore session that item sessions do not have: search with filters and full text, cited-by and
references with paging and order, similar papers, and citations (BibTeX, CSL-JSON).

An explore session offers ``search_papers`` and ``get_references`` with more arguments (declared in their explore
input schema only) and three more tools. Item sessions keep the seven tools of SPEC 3 exactly as they were: their
arguments, descriptions, schemas and results do not change (tests/server/explore/test_explore_tools.py compares them).
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from agenthop.server.explore import authors, citation
from agenthop.server.explore.graph import Neighbour
from agenthop.server.explore.index import corpus_index
from agenthop.server.explore.intent import intent_of
from agenthop.server.explore.lookup import explore_graph
from agenthop.server.explore.lookup import explore_paper as find_paper
from agenthop.server.explore.search import MAX_RESULTS, ExploreHit, Filters, SearchOutcome, explore_search
from agenthop.server.explore.tables import ACL_DOI
from agenthop.server.papers import Paper, PaperHeading
from agenthop.server.sections import alias
from agenthop.server.tools import (
    ABSTRACT_PREVIEW,
    TOOLS,
    PaperArgs,
    PaperId,
    Scope,
    Tool,
    ToolOutput,
    _Args,
    by_name,
    is_blank,
)
from agenthop.server.tools import unknown_in_explore as unknown


def explore_paper(scope: Scope, paper_id: str) -> tuple[Paper | None, str | None]:
    return find_paper(scope.corpus, paper_id)


def heading_line(p: PaperHeading | Paper, cited_by: int | None = None) -> str:
    year = p.year if p.year is not None else "n.d."
    text = "yes" if p.has_text else "no (metadata only: a work known from the bibliographies that cite it)"
    counted = "" if cited_by is None else f" | cited by {cited_by} here"
    return f"{p.title} ({year}) | full text: {text}{counted}"


# --- search_papers --------------------------------------------------------------------------------------------------

Year = Annotated[int | None, Field(ge=1000, le=2999)]


class ExploreSearchArgs(_Args):
    query: Annotated[
        str,
        Field(
            max_length=2000,
            description=(
                "Keywords to look for (in titles, abstracts and author names, or in the full text with scope 'full_text'). "
                "A year in the query (e.g. 2017) works as the year filter. May be empty when a filter is given."
            ),
        ),
    ] = ""
    top_k: Annotated[int, Field(ge=1, le=10, description="How many results to return (1-10).")] = 5
    year_from: Annotated[Year, Field(description="Only papers published in or after this year.")] = None
    year_to: Annotated[Year, Field(description="Only papers published in or before this year.")] = None
    venue: Annotated[
        str | None,
        Field(
            min_length=1,
            max_length=200,
            description=(
                "Only papers whose venue contains this text, ignoring case; acronyms such as ACL, EMNLP, NAACL, NeurIPS "
                "also match the venue's full name."
            ),
        ),
    ] = None
    author: Annotated[
        str | None,
        Field(
            min_length=1,
            max_length=200,
            description=(
                "Only papers with an author of this name (every word of it must appear in the author list, e.g. 'Lapata')."
            ),
        ),
    ] = None
    scope: Annotated[
        Literal["title_abstract", "full_text"],
        Field(
            description=(
                "'title_abstract' (default): titles, abstracts and authors of every paper; 'full_text': the sections of "
                "the papers with text, with a snippet of the passage that matched."
            )
        ),
    ] = "title_abstract"
    sort: Annotated[
        Literal["relevance", "citations", "year"],
        Field(
            description=(
                "'relevance' (default); 'citations': most cited in this corpus first, or 'year': newest first, among the "
                "papers holding every word of the query."
            )
        ),
    ] = "relevance"
    offset: Annotated[
        int, Field(ge=0, le=MAX_RESULTS - 10, description="Skip this many results (paging: the next page's offset).")
    ] = 0

    @field_validator("venue", "author")
    @classmethod
    def _filter_not_blank(cls, value: str | None) -> str | None:
        if value is not None and is_blank(value):
            raise PydanticCustomError("blank", "blank: give a name, or leave the filter out")
        return value

    @field_validator("author")
    @classmethod
    def _author_has_a_word(cls, value: str | None) -> str | None:
        if value is not None and not is_blank(value) and not re.search(r"\w", value):
            raise PydanticCustomError("no_name", "no letters or digits: give an author's name, e.g. 'Lapata'")
        return value

    @model_validator(mode="after")
    def _something_to_look_for(self):
        if is_blank(self.query) and not any(
            v is not None for v in (self.year_from, self.year_to, self.venue, self.author)
        ):
            raise PydanticCustomError(
                "blank", "query: blank: give keywords to look for, or a filter (author, venue, year_from, year_to)"
            )
        if self.year_from is not None and self.year_to is not None and self.year_from > self.year_to:
            raise PydanticCustomError(
                "years", "year_from ({a}) is after year_to ({b}): swap them", {"a": self.year_from, "b": self.year_to}
            )
        return self


def _filters_text(f: Filters) -> str:
    parts = []
    if f.year_from is not None or f.year_to is not None:
        if f.year_from == f.year_to:
            parts.append(f"year {f.year_from}")
        else:
            parts.append(
                f"years {f.year_from if f.year_from is not None else '…'}-{f.year_to if f.year_to is not None else '…'}"
            )
    if f.venue:
        parts.append(f"venue '{f.venue}'")
    if f.author:
        parts.append(f"author '{f.author}'")
    return ", ".join(parts)


def search_papers(scope: Scope, args: ExploreSearchArgs) -> ToolOutput:
    filters = Filters(args.year_from, args.year_to, args.venue, args.author)
    graph = explore_graph(scope.corpus)
    if graph.available:
        index, missing = corpus_index(scope.corpus)
        found = explore_search(
            scope.corpus.conn,
            args.query,
            top_k=args.top_k,
            filters=filters,
            scope=args.scope,
            index=index,
            offset=args.offset,
            sort=args.sort,
            missing_index=missing,
        )
    else:  # a corpus built before explore mode's own tables: its stored bm25s index, with no filters, full text or merged works
        found = SearchOutcome(
            [],
            filters,
            [],
            [
                "this corpus was built before explore search had filters and full text; "
                "rebuild it with 'agenthop-server corpus import' (or corpus build) to use them"
            ],
        )
        if not filters.any() and args.scope == "title_abstract":
            found.hits = [ExploreHit(h.paper_id, h.score) for h in scope.search.search(None, args.query, args.top_k)]
    applied = _filters_text(found.filters)
    results: list[dict[str, Any]] = []
    structured = {
        "query": args.query,
        "scope": args.scope,
        "filters": {
            "year_from": found.filters.year_from,
            "year_to": found.filters.year_to,
            "venue": found.filters.venue,
            "author": found.filters.author,
        },
        "sort": args.sort,
        "offset": args.offset,
        "notes": found.notes,
        "results": results,
        "more": found.more,
    }
    head = f"'{args.query}'" if args.query.strip() else "papers"
    where = " in the full text" if args.scope == "full_text" else ""
    with_filters = f" ({applied})" if applied else ""
    notes = [f"[{n}]" for n in found.notes]
    if not found.hits:
        none = f"No papers match {head}{where}{with_filters}. Try other keywords or fewer filters."
        if args.offset:
            none = f"No more papers match {head}{where}{with_filters} after the first {args.offset}."
        return ToolOutput("ok", "\n".join([*notes, none]), structured)
    papers = scope.corpus.papers([h.paper_id for h in found.hits])
    counts = graph.cited_by_counts([h.paper_id for h in found.hits])
    order = "" if args.sort == "relevance" else f", sorted by {args.sort}"
    shown = f"{len(found.hits)}" if not args.offset else f"{args.offset + 1}-{args.offset + len(found.hits)}"
    lines = [*notes, f"Search results for {head}{where}{with_filters}{order} ({shown}):", ""]
    for rank, hit in enumerate(found.hits, args.offset + 1):
        p = papers[hit.paper_id]
        short = p.abstract[:ABSTRACT_PREVIEW] + ("..." if len(p.abstract) > ABSTRACT_PREVIEW else "")
        entry = {
            "rank": rank,
            "paper_id": p.paper_id,
            "title": p.title,
            "year": p.year,
            "authors": p.authors,
            "venue": p.venue,
            "abstract": short,
            "has_text": p.has_text,
            "cited_by": counts[p.paper_id],
        }
        lines += [
            f"[{rank}] {p.paper_id}",
            f"    {heading_line(p, counts[p.paper_id])}",
            f"    Authors: {', '.join(p.authors) if p.authors else 'unknown'} | Venue: {p.venue or 'unknown'}",
        ]
        if hit.snippet is not None:
            assert hit.section_position is not None  # a snippet comes from a section, which has a position
            entry["match"] = {
                "section": {"alias": alias(hit.section_position), "header": hit.section_header},
                "snippet": hit.snippet,
            }
            lines.append(f'    Match in ({alias(hit.section_position)}) {hit.section_header}: "{hit.snippet}"')
        else:
            lines.append(f"    Abstract: {short or '(none)'}")
        results.append(entry)
    if found.more and args.offset + len(found.hits) <= MAX_RESULTS - 10:
        lines += ["", f"[More: call search_papers with offset {args.offset + len(found.hits)}.]"]
    return ToolOutput(
        "ok",
        "\n".join(lines),
        structured,
        exposed=[{"paper_id": r["paper_id"], "rank": r["rank"]} for r in results],
    )


# --- references and cited-by ---------------------------------------------------------------------------------------

Sort = Annotated[
    Literal["year", "citations"] | None,
    Field(
        description=("'year': newest first; 'citations': most cited in this corpus first; omitted: the default order.")
    ),
]


class ExploreReferencesArgs(_Args):
    paper_id: PaperId
    offset: Annotated[int, Field(ge=0, le=1_000_000, description="Skip this many references (paging).")] = 0
    limit: Annotated[int | None, Field(ge=1, le=500, description="At most this many references (omitted: all).")] = None
    sort: Sort = None


class CitingArgs(_Args):
    paper_id: PaperId
    offset: Annotated[int, Field(ge=0, le=1_000_000, description="Skip this many citing papers (paging).")] = 0
    limit: Annotated[int, Field(ge=1, le=100, description="How many citing papers to list (1-100).")] = 10
    sort: Sort = None


def _neighbours(entries: list[Neighbour], offset: int) -> tuple[list[dict], list[str]]:
    out, lines = [], []
    for rank, n in enumerate(entries, offset + 1):
        q = n.paper
        out.append(
            {
                "rank": rank,
                "paper_id": q.paper_id,
                "title": q.title,
                "year": q.year,
                "has_text": q.has_text,
                "context": n.context,
                "cited_by": n.cited_by,
                "intent": intent_of(n.context),
            }
        )
        lines += [f"[{rank}] {q.paper_id}", f"    {heading_line(q, n.cited_by)}"]
        if n.context:
            lines.append(f'    Cited as: "{n.context}" (intent: {intent_of(n.context)})')
    return out, lines


def _page_text(total: int, offset: int, shown: int, noun: str) -> str:
    if shown == 0:
        return f"no {noun} from {offset + 1} on ({total} in all)"
    if shown == total:
        return f"{total} {noun}"
    return f"{noun} {offset + 1}-{offset + shown} of {total}"


def _page(
    p: Paper,
    args: ExploreReferencesArgs | CitingArgs,
    total: int,
    entries: list[Neighbour],
    *,
    tool: str,
    noun: str,
    key: str,
    title: str,
    none: str,
) -> ToolOutput:
    """One page of references or citing papers: ranks that continue across pages, and how to ask for the next."""
    data = {"paper_id": p.paper_id, "total": total, "offset": args.offset, "sort": args.sort}
    if total == 0:
        return ToolOutput("ok", none, {**data, key: []})
    out, lines = _neighbours(entries, args.offset)
    order = f", sorted by {args.sort}" if args.sort else ""
    head = f"{title} ({_page_text(total, args.offset, len(out), noun)}{order}):"
    more = [] if args.offset + len(out) >= total else ["", f"[More: call {tool} with offset {args.offset + len(out)}.]"]
    return ToolOutput(
        "ok",
        "\n".join([head, "", *lines, *more]),
        {**data, key: out},
        exposed=[{"paper_id": r["paper_id"], "rank": r["rank"]} for r in out],
    )


def get_references(scope: Scope, args: ExploreReferencesArgs) -> ToolOutput:
    p, closest = explore_paper(scope, args.paper_id)
    if p is None:
        return unknown(args.paper_id, closest)
    total, refs = explore_graph(scope.corpus).references(
        p.paper_id, offset=args.offset, limit=args.limit, sort=args.sort
    )
    return _page(
        p,
        args,
        total,
        refs,
        tool="get_references",
        noun="references",
        key="references",
        title=f"References of '{p.title}'",
        none=f"No references of '{p.title}' are available.",
    )


def get_citing_papers(scope: Scope, args: CitingArgs) -> ToolOutput:
    p, closest = explore_paper(scope, args.paper_id)
    if p is None:
        return unknown(args.paper_id, closest)
    total, citing = explore_graph(scope.corpus).citing(p.paper_id, offset=args.offset, limit=args.limit, sort=args.sort)
    return _page(
        p,
        args,
        total,
        citing,
        tool="get_citing_papers",
        noun="citing papers",
        key="papers",
        title=f"Papers citing '{p.title}'",
        none=f"No paper of this corpus cites '{p.title}'.",
    )


# --- similar papers ---------------------------------------------------------------------------------------------------


class SimilarArgs(_Args):
    paper_id: PaperId
    top_k: Annotated[int, Field(ge=1, le=20, description="How many similar papers to return (1-20).")] = 5
    method: Annotated[
        Literal["both", "co_citation", "coupling"],
        Field(
            description=(
                "'co_citation': papers cited together with this one by the same papers; 'coupling': papers that cite the same "
                "works as this one; 'both' (default): the sum."
            )
        ),
    ] = "both"


def _brief(h: PaperHeading) -> dict:
    return {"paper_id": h.paper_id, "title": h.title, "year": h.year}


def find_similar_papers(scope: Scope, args: SimilarArgs) -> ToolOutput:
    p, closest = explore_paper(scope, args.paper_id)
    if p is None:
        return unknown(args.paper_id, closest)
    found = explore_graph(scope.corpus).similar(p.paper_id, top_k=args.top_k, method=args.method)
    data = {"paper_id": p.paper_id, "method": args.method}
    if not found:
        return ToolOutput(
            "ok",
            f"No paper of this corpus shares a citing paper or a reference with '{p.title}'.",
            {**data, "similar": []},
        )
    out, lines = [], [f"Papers similar to '{p.title}' by shared citations ({args.method.replace('_', '-')}):", ""]
    for rank, s in enumerate(found, 1):
        out.append(
            {
                "rank": rank,
                "paper_id": s.paper.paper_id,
                "title": s.paper.title,
                "year": s.paper.year,
                "has_text": s.paper.has_text,
                "shared": s.score,
                "similarity": s.similarity,
                "co_cited_by": [_brief(h) for h in s.co_cited_with],
                "shared_references": [_brief(h) for h in s.shared_references],
            }
        )
        lines += [
            f"[{rank}] {s.paper.paper_id}",
            f"    {heading_line(s.paper)}",
            f"    Shared neighbours: {s.score} | similarity (cosine): {s.similarity:.3f}",
        ]
        if s.co_cited_with:
            lines.append(
                "    Cited together by: " + "; ".join(f"{h.title} ({h.year or 'n.d.'})" for h in s.co_cited_with)
            )
        if s.shared_references:
            lines.append("    Both cite: " + "; ".join(f"{h.title} ({h.year or 'n.d.'})" for h in s.shared_references))
    return ToolOutput(
        "ok",
        "\n".join(lines),
        {**data, "similar": out},
        exposed=[{"paper_id": r["paper_id"], "rank": r["rank"]} for r in out],
    )


# --- authors ----------------------------------------------------------------------------------------------------------


class AuthorArgs(_Args):
    name: Annotated[
        str,
        Field(
            min_length=1,
            max_length=200,
            description=(
                "An author's name: the surname, with forenames or initials before it if you know them ('Schütze', "
                "'Hinrich Schutze', 'H Schütze'). Accents and case are ignored."
            ),
        ),
    ]
    offset: Annotated[int, Field(ge=0, le=1_000_000, description="Skip this many of the author's papers.")] = 0
    limit: Annotated[int, Field(ge=1, le=100, description="How many of the author's papers to list (1-100).")] = 20

    @field_validator("name")
    @classmethod
    def _a_name(cls, value: str) -> str:
        if is_blank(value) or not re.search(r"\w", value):
            raise PydanticCustomError("no_name", "no letters: give an author's name, e.g. 'Lapata'")
        return value


def get_author(scope: Scope, args: AuthorArgs) -> ToolOutput:
    found = authors.find(scope.corpus.conn, args.name)
    data: dict = {"query": args.name, "authors": [], "author": None}
    if not found:
        return ToolOutput("ok", f"No author of this corpus is named '{args.name}'.", data)
    graph = explore_graph(scope.corpus)
    listed = []
    for a in found[:10]:
        works = sorted({graph.canonical(pid) for pid in a.papers})
        counts = graph.cited_by_counts(works)
        papers = scope.corpus.papers(works)
        listed.append((a, works, counts, papers))
        data["authors"].append(
            {
                "name": a.name,
                "spellings": sorted(a.spellings),
                "papers": len(works),
                "papers_with_text": sum(1 for p in papers.values() if p.has_text),
                "cited_by": sum(counts.values()),
            }
        )
    author, works, counts, papers = listed[0]
    ordered = sorted(
        (pid for pid in works if pid in papers),
        key=lambda pid: (papers[pid].year is None, -(papers[pid].year or 0), -counts[pid], pid),
    )
    page = ordered[args.offset : args.offset + args.limit]
    co = authors.co_authors(scope.corpus.conn, author)
    data["author"] = {
        "name": author.name,
        "total": len(ordered),
        "offset": args.offset,
        "papers": [
            {
                "rank": rank,
                "paper_id": pid,
                "title": papers[pid].title,
                "year": papers[pid].year,
                "has_text": papers[pid].has_text,
                "cited_by": counts[pid],
            }
            for rank, pid in enumerate(page, args.offset + 1)
        ],
        "co_authors": [{"name": n, "papers": k} for n, k in co],
    }
    head = data["authors"][0]
    lines = [
        f"{author.name}: {head['papers']} papers ({head['papers_with_text']} with full text), cited {head['cited_by']} "
        f"times in this corpus. Spelled: {'; '.join(head['spellings'])}.",
    ]
    if len(found) > 1:
        others = "; ".join(f"{e['name']} ({e['papers']} papers)" for e in data["authors"][1:])
        lines.append(f"Other authors this name fits: {others}. Give a forename to choose one.")
    lines += ["", f"Papers ({_page_text(len(ordered), args.offset, len(page), 'papers')}, newest first):", ""]
    for e in data["author"]["papers"]:
        lines += [f"[{e['rank']}] {e['paper_id']}", f"    {heading_line(papers[e['paper_id']], e['cited_by'])}"]
    if args.offset + len(page) < len(ordered):
        lines += ["", f"[More: call get_author with offset {args.offset + len(page)}.]"]
    if co:
        lines += ["", "Co-authors (papers together): " + "; ".join(f"{n} ({k})" for n, k in co)]
    return ToolOutput(
        "ok",
        "\n".join(lines),
        data,
        exposed=[{"paper_id": e["paper_id"], "rank": e["rank"]} for e in data["author"]["papers"]],
    )


# --- citations --------------------------------------------------------------------------------------------------------


class CitationArgs(_Args):
    paper_id: PaperId
    format: Annotated[Literal["bibtex", "csl_json"], Field(description="'bibtex' (default) or 'csl_json'.")] = "bibtex"


def with_derived_ids(p: Paper) -> Paper:
    """The paper with the ACL Anthology ID its DOI implies (10.18653/v1/P18-1068 is P18-1068), for links."""
    acl = ACL_DOI.match(p.ids.get("doi", "").lower())
    if acl and "acl" not in p.ids:
        acl_id = (
            acl.group(1) if "." in acl.group(1) else acl.group(1).upper()
        )  # P18-1068; 2020.acl-main.1 stays lower case
        return Paper(
            p.paper_id,
            p.arxiv_id,
            p.title,
            p.abstract,
            p.year,
            p.authors,
            p.venue,
            p.has_text,
            {**p.ids, "acl": acl_id},
        )
    return p


def pages_of(scope: Scope, paper_id: str) -> str | None:
    """The paper's pages in its proceedings or journal, where the corpus knows them (table paper_pages)."""
    conn = scope.corpus.conn
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'paper_pages'").fetchone() is None:
        return None
    row = conn.execute("SELECT pages FROM paper_pages WHERE paper_id = ?", (paper_id,)).fetchone()
    return row[0] if row else None


def citation_text(p: Paper, fmt: str, pages: str | None = None) -> str:
    p = with_derived_ids(p)
    if fmt == "bibtex":
        return citation.bibtex(p, pages)
    return json.dumps([citation.csl_json(p, pages)], indent=1, ensure_ascii=False)


def get_citation(scope: Scope, args: CitationArgs) -> ToolOutput:
    p, closest = explore_paper(scope, args.paper_id)
    if p is None:
        return unknown(args.paper_id, closest)
    text = citation_text(p, args.format, pages_of(scope, p.paper_id))
    return ToolOutput("ok", text, {"paper_id": p.paper_id, "format": args.format, "citation": text})


EXPLORE_TOOLS: dict[str, Tool[Any]] = by_name(
    [
        Tool(
            "search_papers",
            "Search papers",
            1,
            ExploreSearchArgs,
            "Search the corpus: keywords over titles, abstracts and authors (BM25), or over the full text with scope "
            "'full_text' (each result shows the passage that matched); a \"quoted phrase\" must appear as written. "
            "Filters: year_from, year_to, venue, author; sort by 'relevance' (default), 'citations' or 'year'; page with "
            "offset. Results give authors, venue, year, how often the corpus cites the paper, and whether its full text "
            "can be read (works known only from bibliographies have none). Costs 1 point.",
            search_papers,
        ),
        Tool(
            "get_references",
            "Get references",
            1,
            ExploreReferencesArgs,
            "The works a paper cites (ID, title, year, full text yes/no, how often cited here) and, where known, the "
            "sentence in which it cites them. Page with offset and limit; sort by 'year' or 'citations' (default: "
            "reference-list order). Costs 1 point.",
            get_references,
        ),
        Tool(
            "get_citing_papers",
            "Get citing papers",
            1,
            CitingArgs,
            "The papers of the corpus that cite a paper, with the sentence each cites it in. Page with offset and limit "
            "(10 by default); sort by 'year' or 'citations'. Costs 1 point.",
            get_citing_papers,
        ),
        Tool(
            "find_similar_papers",
            "Find similar papers",
            1,
            SimilarArgs,
            "Papers related to a paper through the citation graph: cited together with it (co-citation) or citing the "
            "same works (bibliographic coupling), with the shared papers named. Costs 1 point.",
            find_similar_papers,
        ),
        Tool(
            "get_citation",
            "Get citation",
            0,
            CitationArgs,
            "A citation for a paper, as BibTeX or CSL-JSON, from the corpus's metadata. Free.",
            get_citation,
        ),
        Tool(
            "get_author",
            "Get author",
            1,
            AuthorArgs,
            "An author's papers in this corpus (newest first, paged), how many have full text and how often the corpus "
            "cites them, and the co-authors. Names match without accents or case ('Schutze' finds Schütze). Costs 1 point.",
            get_author,
        ),
    ]
)

EXPLORE_ONLY = tuple(name for name in EXPLORE_TOOLS if name not in TOOLS)


def tool_for(name: str, *, explore: bool) -> Tool[Any] | None:
    """The tool an explore or item session runs under ``name`` (None: no such tool)."""
    if explore and name in EXPLORE_TOOLS:
        return EXPLORE_TOOLS[name]
    return TOOLS.get(name)


__all__ = ["EXPLORE_ONLY", "EXPLORE_TOOLS", "PaperArgs", "explore_graph", "explore_paper", "tool_for"]
