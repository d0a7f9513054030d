"""The shape of every tool result's structured content, as the ``outputSchema`` each tool declares.

A result always carries the status keys (``Status``), plus the tool's own keys
when the call succeeded (``outcome`` "ok"), or ``error`` (and for an unresolved
section, ``candidates``; for an unknown paper ID, ``closest`` when one is near) when it did not. A call refused because it named no
session has no budget to report: it carries ``tool``, ``outcome`` ("invalid")
and ``error`` only. Clients that validate (the TypeScript SDK validates error
results too) can check every result against the schema.
"""

from __future__ import annotations

from typing import NotRequired

from pydantic import TypeAdapter
from typing_extensions import TypedDict  # pydantic needs this TypedDict before Python 3.12


class Status(TypedDict):
    tool: str
    outcome: str
    cost: int
    budget_used: int
    budget_total: int | None
    budget_remaining: int | None
    turn: int | None
    tokens: int | None
    session_ended: bool
    # The text content's status line, and any bracketed notice before it (the budget is spent, submit now):
    # a client that hands its model structuredContent instead of the text must not lose them.
    status_line: str
    notice: NotRequired[str]


class SearchHit(TypedDict):
    rank: int
    paper_id: str
    title: str
    year: int | None
    abstract: str
    has_text: bool


class PaperInfo(TypedDict):
    paper_id: str
    title: str
    authors: list[str]
    year: int | None
    venue: str | None
    ids: dict[str, str]  # external IDs the corpus knows: doi, arxiv, pmcid, acl, ...
    abstract: str
    has_text: bool
    licence: NotRequired[str]  # explore mode only, when the paper's source states one (docs/tools.md)


class Reference(TypedDict):
    rank: int
    paper_id: str
    title: str
    year: int | None
    has_text: bool
    context: str | None


class SectionEntry(TypedDict):
    alias: str
    header: str
    chars: int


class Candidate(TypedDict):
    alias: str
    header: str


class Failure(TypedDict):
    """Keys of unsuccessful results (besides the status keys)."""

    error: NotRequired[str]
    candidates: NotRequired[list[Candidate]]
    closest: NotRequired[str]  # an unknown paper ID: the most similar ID in scope


class SearchResult(TypedDict):
    query: str
    results: list[SearchHit]


class CitedBy(TypedDict):
    """Explore mode only: the papers of the corpus that cite the paper (``count`` of them, the first few listed)."""

    count: int
    papers: list[Reference]  # each entry is a citing paper; ``context`` is the sentence in which it cites this one


class PaperResult(TypedDict):
    paper: PaperInfo
    cited_by: NotRequired[CitedBy]  # absent in item mode, where the tool is the benchmark's (SPEC 3)


class ReferencesResult(TypedDict):
    paper_id: str
    references: list[Reference]


class SectionsResult(TypedDict):
    paper_id: str
    title: str
    sections: list[SectionEntry]


class ReadResult(TypedDict):
    """The section's identity, length and text: whichever channel a client hands its model, the model gets the paper."""

    paper_id: str
    section: SectionEntry
    text: str


class NoKeys(TypedDict):
    pass


class AnswerResult(TypedDict):
    answer: str


SUCCESS: dict[str, type] = {
    "search_papers": SearchResult,
    "get_paper_info": PaperResult,
    "get_references": ReferencesResult,
    "list_sections": SectionsResult,
    "read_section": ReadResult,
    "think": NoKeys,
    "submit_answer": AnswerResult,
}


def _untitled(node):
    """Drop pydantic's generated "title" keywords: they only repeat the property names."""
    if isinstance(node, dict):
        return {k: _untitled(v) for k, v in node.items() if not (k == "title" and isinstance(v, str))}
    if isinstance(node, list):
        return [_untitled(v) for v in node]
    return node


def _schema(typed: type) -> dict:
    schema = _untitled(TypeAdapter(typed).json_schema())
    schema.pop("description", None)
    return schema


def _merge(*schemas: dict) -> tuple[dict, dict]:
    """(properties, $defs) of several object schemas."""
    properties, defs = {}, {}
    for schema in schemas:
        properties.update(schema.get("properties", {}))
        defs.update(schema.get("$defs", {}))
    return properties, defs


def output_schema(tool: str, success_keys: dict[str, type] = SUCCESS) -> dict:
    status, failure, success = _schema(Status), _schema(Failure), _schema(success_keys[tool])
    properties, defs = _merge(status, failure, success)
    schema = {
        "type": "object",
        "properties": properties,
        "required": ["tool", "outcome"],
        "anyOf": [
            {"required": status["required"]},
            {"properties": {"outcome": {"const": "invalid"}}, "required": ["error"]},  # no session: no budget
        ],
    }
    if success.get("required"):
        schema["if"] = {"properties": {"outcome": {"const": "ok"}}}
        schema["then"] = {"required": success["required"]}
    if defs:
        schema["$defs"] = defs
    return schema


OUTPUT_SCHEMAS: dict[str, dict] = {name: output_schema(name) for name in SUCCESS}


# --- explore mode: the explore variants of search_papers and get_references, and the explore-only tools -------------


class SectionName(TypedDict):
    alias: str
    header: str


class FullTextMatch(TypedDict):
    section: SectionName
    snippet: str  # the passage that matched, words of the query between ** and **


class ExploreHit(TypedDict):
    rank: int
    paper_id: str
    title: str
    year: int | None
    authors: list[str]
    venue: str | None
    abstract: str
    has_text: bool  # false: a work known only from the bibliographies that cite it
    cited_by: int  # papers of the corpus citing it
    match: NotRequired[FullTextMatch]  # scope full_text only


class AppliedFilters(TypedDict):
    year_from: int | None
    year_to: int | None
    venue: str | None
    author: str | None


class ExploreSearchResult(TypedDict):
    query: str
    scope: str
    filters: AppliedFilters  # as applied: a year typed in the query shows here
    notes: list[str]
    results: list[ExploreHit]


class Neighbour(Reference):
    cited_by: int
    intent: str | None  # background | method | result, by the rule of server/explore/intent.py; None: no sentence


class ExploreReferencesResult(TypedDict):
    paper_id: str
    total: int
    offset: int
    sort: str | None
    references: list[Neighbour]


class CitingResult(TypedDict):
    paper_id: str
    total: int
    offset: int
    sort: str | None
    papers: list[Neighbour]


class Brief(TypedDict):
    paper_id: str
    title: str
    year: int | None


class SimilarPaper(TypedDict):
    rank: int
    paper_id: str
    title: str
    year: int | None
    has_text: bool
    shared: int
    similarity: float  # Salton's cosine, co-citation plus coupling: the ranking's score
    co_cited_by: list[Brief]
    shared_references: list[Brief]


class SimilarResult(TypedDict):
    paper_id: str
    method: str
    similar: list[SimilarPaper]


class CitationResult(TypedDict):
    paper_id: str
    format: str
    citation: str


class AuthorEntry(TypedDict):
    name: str  # the spelling most papers give
    spellings: list[str]
    papers: int
    papers_with_text: int
    cited_by: int  # citations of all its papers in this corpus


class AuthorPaper(TypedDict):
    rank: int
    paper_id: str
    title: str
    year: int | None
    has_text: bool
    cited_by: int


class CoAuthor(TypedDict):
    name: str
    papers: int  # papers written together


class AuthorDetail(TypedDict):
    name: str
    total: int
    offset: int
    papers: list[AuthorPaper]
    co_authors: list[CoAuthor]


class AuthorResult(TypedDict):
    query: str
    authors: list[AuthorEntry]  # every author the name fits, most papers first
    author: AuthorDetail | None  # the first of them in full; None when no author fits


class ExplorePaperResult(TypedDict):
    paper: PaperInfo
    cited_by: NotRequired[CitedBy]
    also_recorded_as: NotRequired[list[str]]  # other records of the same work, merged into this one


EXPLORE_SUCCESS: dict[str, type] = {
    **SUCCESS,
    "search_papers": ExploreSearchResult,
    "get_paper_info": ExplorePaperResult,
    "get_references": ExploreReferencesResult,
    "get_citing_papers": CitingResult,
    "find_similar_papers": SimilarResult,
    "get_citation": CitationResult,
    "get_author": AuthorResult,
}
EXPLORE_OUTPUT_SCHEMAS: dict[str, dict] = {name: output_schema(name, EXPLORE_SUCCESS) for name in EXPLORE_SUCCESS}
