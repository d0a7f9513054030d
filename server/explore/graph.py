"""Explore mode's view of the citation graph: one paper per outside work, pasted identifiers, cited-by and references
with paging and order, and similar papers by co-citation and bibliographic coupling.

Everything here reads the tables ``server/explore/tables.py`` writes at import, with indexed queries: nothing loads
the corpus to answer a call. A corpus built before those tables existed is still served (no merged works, no
external-ID table: IDs are matched as before).
"""

from __future__ import annotations

import difflib
import re
import sqlite3
from dataclasses import dataclass
from functools import cached_property

from agenthop.server.explore.tables import ACL_DOI, EXPLORE_TABLES, strip_arxiv_version
from agenthop.server.papers import Corpus, PaperHeading, as_doi_id

SORTS = ("year", "citations")

_ACL_OLD = re.compile(r"^[a-z]\d{2}-\d{4}$")  # P18-1068
_ACL_NEW = re.compile(r"^\d{4}\.[a-z0-9]+-[a-z0-9]+\.\d+$")  # 2020.acl-main.1
_ARXIV_NEW = re.compile(r"^\d{4}\.\d{4,5}$")
_ARXIV_OLD = re.compile(r"^[a-z\-]+(\.[a-z]{2})?/\d{7}$")
_ACL_URL = re.compile(
    r"^(?:https?://)?(?:www\.)?(?:aclanthology\.org|aclweb\.org/anthology|aclanthology\.info/papers)/(.+)$"
)
_ARXIV_URL = re.compile(r"^(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/(.+)$")


def parse_identifier(text: str) -> list[tuple[str, str]]:
    """(scheme, normalised value) a pasted identifier may mean: DOIs (bare, ``doi:``, doi.org links), arXiv IDs (with
    a version, ``arXiv:``, arxiv.org/abs or /pdf links), ACL Anthology IDs (``P18-1068``, ``2020.acl-main.1``,
    aclanthology.org and aclweb.org links). Empty when it looks like none of them."""
    raw = text.strip()
    low = raw.lower().rstrip("/")
    found: list[tuple[str, str]] = []
    doi = as_doi_id(raw)
    if doi is not None:
        value = doi[len("doi:") :].rstrip("/")
        found.append(("doi", value))
        acl = ACL_DOI.match(value)
        if acl:
            found.append(("acl", acl.group(1)))
    url = _ACL_URL.match(low)
    if url:
        low = url.group(1).split("/")[0]
        for suffix in (".pdf", ".bib", ".xml"):
            low = low.removesuffix(suffix)
    url = _ARXIV_URL.match(low)
    if url:
        low = "arxiv:" + url.group(1).removesuffix(".pdf")
    for prefix in ("arxiv:", "acl:"):
        if low.startswith(prefix):
            value = low[len(prefix) :].strip()
            if prefix == "arxiv:":
                found.append(("arxiv", strip_arxiv_version(value)))
            else:
                found.append(("acl", value))
            return found
    bare = strip_arxiv_version(low)
    if _ARXIV_NEW.match(bare) or _ARXIV_OLD.match(bare):
        found.append(("arxiv", bare))
    if _ACL_OLD.match(low) or _ACL_NEW.match(low):
        found.append(("acl", low))
    return found


@dataclass(frozen=True)
class Neighbour:
    """A paper in a list (cited-by, references, similar) and what links it."""

    paper: PaperHeading
    context: str | None = None
    cited_by: int = 0


@dataclass(frozen=True)
class Similar:
    paper: PaperHeading
    score: int  # shared neighbours: papers citing both, plus works both cite
    co_cited_with: list[PaperHeading]  # papers that cite both (co-citation)
    shared_references: list[PaperHeading]  # works both cite (bibliographic coupling)
    similarity: float = 0.0  # Salton's cosine: shared / sqrt(degree of one * degree of the other), summed over methods


_HEADING = "p.paper_id, p.title, p.year, p.has_text"


def _heading(row) -> PaperHeading:
    pid, title, year, has_text = row[:4]
    return PaperHeading(pid, title, year, bool(has_text))


class ExploreGraph:
    def __init__(self, corpus: Corpus):
        self.corpus = corpus

    @property
    def conn(self) -> sqlite3.Connection:
        return self.corpus.conn

    @cached_property
    def available(self) -> bool:
        """Whether the corpus has the explore tables (written at import since explore mode got its own tools); older corpora get the plain behaviour."""
        names = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master")}
        return all(t in names for t in EXPLORE_TABLES)

    # --- one paper per work ---------------------------------------------------------

    def canonical(self, paper_id: str) -> str:
        if not self.available:
            return paper_id
        row = self.conn.execute("SELECT canonical FROM paper_clusters WHERE paper_id = ?", (paper_id,)).fetchone()
        return row[0] if row else paper_id

    def members(self, paper_id: str) -> list[str]:
        """Every record of the work ``paper_id`` (canonical) names, itself first."""
        if not self.available:
            return [paper_id]
        rows = self.conn.execute(
            "SELECT paper_id FROM paper_clusters WHERE canonical = ? AND paper_id != ? ORDER BY paper_id",
            (paper_id, paper_id),
        )
        return [paper_id, *(r[0] for r in rows)]

    def cited_by_count(self, paper_id: str) -> int:
        if not self.available:
            return self.conn.execute("SELECT count(*) FROM edges WHERE cited = ?", (paper_id,)).fetchone()[0]
        row = self.conn.execute("SELECT n FROM cited_by_counts WHERE paper_id = ?", (paper_id,)).fetchone()
        return row[0] if row else 0

    def cited_by_counts(self, paper_ids: list[str]) -> dict[str, int]:
        if not paper_ids:
            return {}
        if not self.available:
            return {pid: self.cited_by_count(pid) for pid in paper_ids}
        marks = ",".join("?" * len(paper_ids))
        found = dict(
            self.conn.execute(f"SELECT paper_id, n FROM cited_by_counts WHERE paper_id IN ({marks})", paper_ids)
        )
        return {pid: found.get(pid, 0) for pid in paper_ids}

    # --- identifiers people paste ----------------------------------------------------

    def resolve(self, text: str) -> str | None:
        """The canonical paper ID ``text`` names (a paper ID, a DOI, an arXiv or ACL Anthology ID, as typed or as a
        link), or None."""
        found = self.corpus.paper(text, None)
        if found is not None:
            return self.canonical(found.paper_id)
        for scheme, value in parse_identifier(text):
            pid = self._by_external_id(scheme, value)
            if pid is not None:
                return self.canonical(pid)
        return None

    def _by_external_id(self, scheme: str, value: str) -> str | None:
        if self.available:
            row = self.conn.execute(
                "SELECT paper_id FROM external_ids WHERE scheme = ? AND value = ? ORDER BY paper_id LIMIT 1",
                (scheme, value),
            ).fetchone()
            if row:
                return row[0]
        prefix = {"doi": "doi:", "arxiv": "arxiv:", "acl": "acl:", "pmcid": "pmc:"}[scheme]
        row = self.conn.execute("SELECT paper_id FROM papers WHERE paper_id = ?", (prefix + value,)).fetchone()
        return row[0] if row else None

    def closest(self, text: str) -> str | None:
        """For an identifier that names no paper: the nearest known ID of the same kind (an ACL ID of the same volume,
        an arXiv ID of the same month), else the nearest paper ID."""
        if self.available:
            for scheme, value in parse_identifier(text):
                head = (
                    value[:4]
                    if scheme == "acl"
                    else value[:5]
                    if scheme == "arxiv"
                    else value[: max(len(value) - 4, 1)]
                )
                rows = self.conn.execute(
                    "SELECT value, paper_id FROM external_ids WHERE scheme = ? AND value >= ? AND value < ? LIMIT 5000",
                    (scheme, head, head + "\uffff"),
                )
                by_value = {v: pid for v, pid in rows}
                if scheme == "acl" and _ACL_OLD.match(value):  # P18-1000: the nearest number of the same volume
                    number = int(value[4:])
                    near = sorted((abs(int(v[4:]) - number), v) for v in by_value if _ACL_OLD.match(v))
                    close = [near[0][1]] if near and near[0][0] < 1000 else []
                else:
                    close = difflib.get_close_matches(value, by_value, n=1, cutoff=0.6)
                if close:
                    return self.canonical(by_value[close[0]])
        for scheme, value in parse_identifier(text):
            if scheme == "acl":  # another year's volume: the nearest Anthology DOI
                nearest = self.corpus.closest_id(f"doi:10.18653/v1/{value}", None)
                if nearest is not None:
                    return self.canonical(nearest)
        return self._closest_by_prefix(as_doi_id(text) or text.strip().lower())

    def _closest_by_prefix(self, wanted: str) -> str | None:
        """The most similar paper ID among those sharing the longest prefix with ``wanted`` (down to half its length):
        an indexed range of the paper IDs, where comparing with every ID took seconds at a million papers."""
        for keep in range(len(wanted) - 1, max(len(wanted) // 2, 1) - 1, -1):
            head = wanted[:keep]
            rows = self.conn.execute(
                "SELECT paper_id FROM papers WHERE paper_id >= ? AND paper_id < ? LIMIT 2000", (head, head + "\uffff")
            ).fetchall()
            if rows:
                by_lower = {pid.lower(): pid for (pid,) in rows}
                close = difflib.get_close_matches(wanted, by_lower, n=1, cutoff=0.6)
                return self.canonical(by_lower[close[0]]) if close else None
        return None

    # --- cited-by and references -------------------------------------------------------

    def citing(self, paper_id: str, *, offset: int, limit: int, sort: str | None) -> tuple[int, list[Neighbour]]:
        """How many papers cite the work (any of its records), and ``limit`` of them from ``offset``.

        ``sort``: None keeps get_paper_info's order (citing papers whose sentence is known first, then the most
        recent); "year": newest first; "citations": the most cited first. Ties by title and ID.
        """
        members = self.members(paper_id)
        marks = ",".join("?" * len(members))
        total = self.conn.execute(
            f"SELECT count(DISTINCT citing) FROM edges WHERE cited IN ({marks})", members
        ).fetchone()[0]
        if total == 0:
            return 0, []
        order = {
            None: "context IS NULL, p.year IS NULL, p.year DESC, p.title, p.paper_id",
            "year": "p.year IS NULL, p.year DESC, p.title, p.paper_id",
            "citations": "n DESC, p.year IS NULL, p.year DESC, p.title, p.paper_id",
        }[sort]
        counts = "coalesce((SELECT n FROM cited_by_counts WHERE paper_id = p.paper_id), 0)" if self.available else "0"
        rows = self.conn.execute(
            f"SELECT {_HEADING}, context, {counts} AS n FROM papers p JOIN "
            f"(SELECT citing, max(context) AS context FROM edges WHERE cited IN ({marks}) GROUP BY citing) e "
            f"ON p.paper_id = e.citing ORDER BY {order} LIMIT ? OFFSET ?",
            (*members, limit, offset),
        )
        return total, [Neighbour(_heading(r), r[4], r[5]) for r in rows]

    def references(
        self, paper_id: str, *, offset: int, limit: int | None, sort: str | None
    ) -> tuple[int, list[Neighbour]]:
        """The works a paper cites, each once (records of one work merged), in reference-list order or by ``sort``."""
        canon = "coalesce(c.canonical, e.cited)" if self.available else "e.cited"
        join = "LEFT JOIN paper_clusters c ON c.paper_id = e.cited" if self.available else ""
        counts = "coalesce((SELECT n FROM cited_by_counts WHERE paper_id = p.paper_id), 0)" if self.available else "0"
        order = {
            None: "r.position, p.paper_id",
            "year": "p.year IS NULL, p.year DESC, r.position, p.paper_id",
            "citations": "n DESC, r.position, p.paper_id",
        }[sort]
        inner = (
            f"SELECT {canon} AS work, min(e.position) AS position, max(e.context) AS context FROM edges e {join} "
            "WHERE e.citing = ? GROUP BY work"
        )
        total = self.conn.execute(f"SELECT count(*) FROM ({inner})", (paper_id,)).fetchone()[0]
        rows = self.conn.execute(
            f"SELECT {_HEADING}, r.context, {counts} AS n FROM ({inner}) r JOIN papers p ON p.paper_id = r.work "
            f"ORDER BY {order} LIMIT ? OFFSET ?",
            (paper_id, -1 if limit is None else limit, offset),
        )
        return total, [Neighbour(_heading(r), r[4], r[5]) for r in rows]

    # --- similar papers -----------------------------------------------------------------

    def similar(self, paper_id: str, *, top_k: int, method: str) -> list[Similar]:
        """Papers that share neighbours with ``paper_id`` in the citation graph: co-citation (cited together by the same
        papers) and bibliographic coupling (citing the same works), ranked by Salton's cosine (shared neighbours over the
        square root of the product of both papers' degrees), so that hubs cited by everything do not fill the list;
        ties by shared neighbours, citations, ID. Candidates with one shared neighbour only count when none has two."""
        members = self.members(paper_id)
        marks = ",".join("?" * len(members))
        canon = (
            "coalesce((SELECT canonical FROM paper_clusters WHERE paper_id = {0}), {0})" if self.available else "{0}"
        )
        shared: dict[str, dict[str, set[str]]] = {}
        if method in ("both", "co_citation"):
            # e1: a paper citing this one; e2: what else it cites.
            rows = self.conn.execute(
                f"SELECT DISTINCT {canon.format('e2.cited')}, e1.citing FROM edges e1 JOIN edges e2 ON e2.citing = e1.citing "
                f"WHERE e1.cited IN ({marks}) AND e2.cited NOT IN ({marks})",
                (*members, *members),
            )
            for other, via in rows:
                shared.setdefault(other, {"co": set(), "refs": set()})["co"].add(via)
        if method in ("both", "coupling"):
            # mine: the works this paper cites (as canonical papers); records: every record of each; e2: papers citing one.
            if self.available:
                rows = self.conn.execute(
                    "WITH mine AS (SELECT DISTINCT coalesce(c.canonical, e.cited) AS work FROM edges e "
                    f"LEFT JOIN paper_clusters c ON c.paper_id = e.cited WHERE e.citing IN ({marks})), "
                    "records AS (SELECT work, work AS record FROM mine UNION "
                    "SELECT m.work, c.paper_id FROM mine m JOIN paper_clusters c ON c.canonical = m.work) "
                    f"SELECT DISTINCT e2.citing, r.work FROM records r JOIN edges e2 ON e2.cited = r.record "
                    f"WHERE e2.citing NOT IN ({marks})",
                    (*members, *members),
                )
            else:
                rows = self.conn.execute(
                    "SELECT DISTINCT e2.citing, e1.cited FROM edges e1 JOIN edges e2 ON e2.cited = e1.cited "
                    f"WHERE e1.citing IN ({marks}) AND e2.citing NOT IN ({marks})",
                    (*members, *members),
                )
            for other, via in rows:
                shared.setdefault(self.canonical(other), {"co": set(), "refs": set()})["refs"].add(via)
        shared.pop(paper_id, None)
        if not shared:
            return []
        counts = self.cited_by_counts([paper_id, *shared])
        refs = self._reference_counts([paper_id, *(pid for pid, v in shared.items() if v["refs"])])
        cosine: dict[str, float] = {}
        for pid, via in shared.items():
            # Salton's cosine: a hub (Adam, BLEU) shares a citer with nearly everything, and is divided by its degree.
            co = len(via["co"]) / ((max(counts[paper_id], 1) * max(counts[pid], 1)) ** 0.5) if via["co"] else 0.0
            cp = len(via["refs"]) / ((refs[paper_id] * refs[pid]) ** 0.5) if via["refs"] else 0.0
            cosine[pid] = round(co + cp, 4)
        # One shared neighbour makes any rarely cited work look close: ask for two where some candidate has two.
        support = min(2, max(len(v["co"]) + len(v["refs"]) for v in shared.values()))
        candidates = [pid for pid, v in shared.items() if len(v["co"]) + len(v["refs"]) >= support]
        ranked = sorted(
            candidates,
            key=lambda pid: (-cosine[pid], -(len(shared[pid]["co"]) + len(shared[pid]["refs"])), -counts[pid], pid),
        )[:top_k]
        named = {pid for pid in ranked} | {
            v for pid in ranked for key in ("co", "refs") for v in sorted(shared[pid][key])[:50]
        }
        headings = self.headings(sorted(named))
        out = []
        for pid in ranked:
            if pid not in headings:
                continue

            def shown(ids: set[str]) -> list[PaperHeading]:
                listed = [headings[v] for v in ids if v in headings]
                return sorted(listed, key=lambda h: (h.year is None, -(h.year or 0), h.paper_id))[:3]

            out.append(
                Similar(
                    headings[pid],
                    len(shared[pid]["co"]) + len(shared[pid]["refs"]),
                    shown(shared[pid]["co"]),
                    shown(shared[pid]["refs"]),
                    cosine[pid],
                )
            )
        return out

    def _reference_counts(self, paper_ids: list[str]) -> dict[str, int]:
        """How many distinct works each paper cites: its degree for bibliographic coupling (at least 1)."""
        out = dict.fromkeys(paper_ids, 1)
        for start in range(0, len(paper_ids), 500):
            chunk = paper_ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for pid, n in self.conn.execute(
                f"SELECT citing, count(DISTINCT cited) FROM edges WHERE citing IN ({marks}) GROUP BY citing", chunk
            ):
                out[pid] = max(n, 1)
        return out

    def headings(self, paper_ids: list[str]) -> dict[str, PaperHeading]:
        out: dict[str, PaperHeading] = {}
        for start in range(0, len(paper_ids), 500):
            chunk = paper_ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for row in self.conn.execute(f"SELECT {_HEADING} FROM papers p WHERE p.paper_id IN ({marks})", chunk):
                out[row[0]] = _heading(row)
        return out
