"""Records of one work merged into one, with every citer moved to the record kept.

Linking makes a metadata-only record per distinct bibliography entry it cannot resolve, so one work cited in many
styles ("pointer-generator" and "pointergenerator"; the arXiv preprint and the ICLR paper; a typo) becomes several
records, each with part of the work's citers. Here two records are one work when

- their titles agree once case, accents, spaces and punctuation are ignored, or differ by a typo or two (a similarity
  of at least ``FUZZY`` over at least ``FUZZY_MIN`` characters, looked for only among records sharing an author's
  surname and a year or the next);
- their years are at most one apart (a preprint and its proceedings), when both are known;
- they share an author's surname, when both name authors;
- the numbers in their titles are the same ("SemEval-2016 Task 4" is not "SemEval-2017 Task 4").

And never when their fields conflict: two papers of the set, or two different identifiers of one kind (two DOIs, two
arXiv IDs), stay apart, whatever else agrees. Such a pair is *refused* and counted.

A merged group keeps the paper of the set if it has one, else the record with an identifier (ACL ID or DOI, then
arXiv ID), else the most cited. An outside work's title, year, authors and venue are then the ones most of its
citing entries give (so that one garbled entry does not name a work that many cite correctly), and a work with an
ACL ID takes the Anthology's year and venue (:mod:`anthology`).
"""

from __future__ import annotations

import bisect
import json
import re
import sqlite3
import unicodedata
from collections import Counter, defaultdict
from difflib import SequenceMatcher

from agenthop.corpus.convert import anthology
from agenthop.corpus.convert.names import surname_key
from agenthop.corpus.convert.refparse import cut_title_tail

FUZZY = 0.92
FUZZY_MIN = 25
FRAGMENT_MIN = 20  # characters of a title key: shorter beginnings ("neuralmachinetranslation") fit too many titles
MIN_KEY = 12
_DIGITS = re.compile(r"\d+")
_ID_KINDS = ("doi", "arxiv", "acl", "pmcid", "pmid")


def title_key(title: str) -> str:
    """Lower-case letters and digits only, no spaces: "Pointer-Generator" and "pointergenerator" are one key."""
    title, _ = cut_title_tail(title or "")
    decomposed = unicodedata.normalize("NFKD", title)
    return "".join(ch.lower() for ch in decomposed if ch.isalnum() and not unicodedata.combining(ch))


_VENUE_NOISE = re.compile(r"\b(proceedings|proc|of|the|in|on|conference|annual|meeting|\d+(st|nd|rd|th)?)\b")


def venue_key(venue: str) -> str:
    """ "Proceedings of ICLR 2015", "ICLR" and "In ICLR" are one venue: the words left once the usual ones go."""
    return " ".join(_VENUE_NOISE.sub(" ", re.sub(r"[^\w]+", " ", venue.lower())).split())


class _Record:
    __slots__ = ("pid", "key", "year", "surnames", "ids", "in_set", "has_text", "numbers", "citers")

    def __init__(self, pid, title, year, authors, ids, in_set, has_text, citers):
        self.pid = pid
        self.key = title_key(title)
        self.year = year
        self.surnames = {s for s in (surname_key(a) for a in authors) if len(s) > 1}
        self.ids = {k: v.lower() for k, v in ids.items() if k in _ID_KINDS and v}
        self.in_set = bool(in_set)
        self.has_text = bool(has_text)
        self.numbers = sorted(_DIGITS.findall(title or ""))
        self.citers = citers


def _conflict(a: _Record, b: _Record) -> str | None:
    """Why two records with matching titles are not one work, or None."""
    if a.in_set and b.in_set:
        return "two papers of the set"
    if a.year is not None and b.year is not None and abs(a.year - b.year) > 1:
        return "years more than one apart"
    if a.surnames and b.surnames and not a.surnames & b.surnames:
        return "no author in common"
    if a.numbers != b.numbers:
        return "different numbers in the titles"
    if any(k in b.ids and b.ids[k] != v for k, v in a.ids.items()):
        return "different identifiers of one kind"
    return None


class _Groups:
    """Union-find over records, refusing a union that would put two papers of the set, or two identifiers of one
    kind, in one group."""

    def __init__(self, records: list[_Record]):
        self.parent = list(range(len(records)))
        self.in_set = [int(r.in_set) for r in records]
        self.ids = [dict(r.ids) for r in records]

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, a: int, b: int) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return True
        if self.in_set[ra] + self.in_set[rb] > 1:
            return False
        if any(k in self.ids[rb] and self.ids[rb][k] != v for k, v in self.ids[ra].items()):
            return False
        keep, gone = min(ra, rb), max(ra, rb)
        self.parent[gone] = keep
        self.in_set[keep] += self.in_set[gone]
        self.ids[keep] = {**self.ids[gone], **self.ids[keep]}
        return True


def _keep_rank(r: _Record) -> tuple:
    ident = 0 if ("acl" in r.ids or "doi" in r.ids) else 1 if "arxiv" in r.ids else 2
    return (not r.has_text, not r.in_set, ident, -r.citers, r.pid)


def _pairs(records: list[_Record]) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(pairs with one title key, pairs with near titles), each pair once, in a fixed order."""
    exact: list[tuple[int, int]] = []
    by_key: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(records):
        if len(r.key) >= MIN_KEY:
            by_key[r.key].append(i)
    for members in by_key.values():
        exact += [(members[x], members[y]) for x in range(len(members)) for y in range(x + 1, len(members))]
    near: list[tuple[float, int, int]] = []
    blocks: dict[tuple[str, int], list[int]] = defaultdict(list)
    for i, r in enumerate(records):
        if len(r.key) >= FUZZY_MIN and r.year is not None:
            for s in r.surnames:
                blocks[(s, r.year)].append(i)
    seen: set[tuple[int, int]] = set()
    for (surname, year), members in blocks.items():
        others = members + blocks.get((surname, year + 1), [])
        for x in members:
            for y in others:
                a, b = min(x, y), max(x, y)
                ka, kb = records[a].key, records[b].key
                if a == b or ka == kb or (a, b) in seen:
                    continue
                seen.add((a, b))
                if abs(len(ka) - len(kb)) > (1 - FUZZY) * max(len(ka), len(kb)):
                    continue
                matcher = SequenceMatcher(None, ka, kb, autojunk=False)
                if matcher.real_quick_ratio() >= FUZZY and matcher.quick_ratio() >= FUZZY:
                    score = matcher.ratio()
                    if score >= FUZZY:
                        near.append((-score, a, b))
    near.sort()
    return exact, [(a, b) for _, a, b in near]


def _fragments(records: list[_Record], groups: _Groups) -> list[tuple[int, int]]:
    """Pairs of a title cut short ("Neural machine translation by", "jointly learning to align and translate") with
    the longer titles it begins or ends, when they are one work (as grouped so far), or one work is cited three times
    as often as all the others with such titles together."""
    keys = sorted({r.key for r in records if r.key})
    backwards = sorted(k[::-1] for k in keys)
    by_key: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(records):
        by_key[r.key].append(i)
    out = []
    for key in keys:
        if len(key) < FRAGMENT_MIN:
            continue
        longer = set()
        at = bisect.bisect_right(keys, key)
        while at < len(keys) and keys[at].startswith(key):
            longer.add(keys[at])
            at += 1
        back = key[::-1]
        at = bisect.bisect_right(backwards, back)
        while at < len(backwards) and backwards[at].startswith(back):
            longer.add(backwards[at][::-1])
            at += 1
        cited: Counter[int] = Counter()
        for whole in longer:
            for i in by_key[whole]:
                cited[groups.find(i)] += records[i].citers + 1
        if not cited:
            continue
        (top, n), *rest = cited.most_common()
        # One work, or one that the corpus cites far more than the others of that title (records kept apart).
        if not rest or n >= 3 * sum(m for _, m in rest):
            out += [
                (min(a, b), max(a, b))
                for a in by_key[key]
                for whole in longer
                for b in by_key[whole]
                if groups.find(b) == top
            ]
    return sorted(set(out))


def merge(conn: sqlite3.Connection) -> tuple[dict[str, str], dict]:
    """Group the records of the build store's ``papers`` table into works; return ({merged ID: kept ID}, counts).

    Counts: ``groups_merged`` (works that had two or more records), ``records_merged`` (records folded into
    another), ``pairs_refused`` and ``records_refused`` (pairs of records with matching titles kept apart because
    their fields conflict, and how many records those are), with ``refused_examples``."""
    citers = Counter(cited for (cited,) in conn.execute("SELECT cited FROM raw_edges"))
    records = [
        _Record(pid, title, year, json.loads(authors), json.loads(ids), in_set, has_text, citers[pid])
        for pid, title, year, authors, ids, in_set, has_text in conn.execute(
            "SELECT pid, title, year, authors, ids, in_set, has_text FROM papers ORDER BY pid"
        )
    ]
    exact, near = _pairs(records)
    groups = _Groups(records)
    refused: list[tuple[str, str, str]] = []
    exact_pairs = set(exact)

    def join(pairs: list[tuple[int, int]]) -> None:
        for a, b in pairs:
            why = _conflict(records[a], records[b])
            if why is None and not groups.union(a, b):
                why = "their groups hold two papers of the set or two identifiers of one kind"
            if why is not None and (a, b) in exact_pairs and groups.find(a) != groups.find(b):
                refused.append((records[a].pid, records[b].pid, why))

    join(exact + near)
    join(_fragments(records, groups))
    members: dict[int, list[int]] = defaultdict(list)
    for i in range(len(records)):
        members[groups.find(i)].append(i)
    mapping: dict[str, str] = {}
    n_groups = 0
    for group in members.values():
        if len(group) < 2:
            continue
        n_groups += 1
        kept = min(group, key=lambda i: _keep_rank(records[i]))
        for i in group:
            if i != kept:
                mapping[records[i].pid] = records[kept].pid
    refused_records = {p for a, b, _ in refused for p in (a, b)}
    return mapping, {
        "groups_merged": n_groups,
        "records_merged": len(mapping),
        "pairs_refused": len(refused),
        "records_refused": len(refused_records),
        "refused_examples": [f"{a} and {b}: {why}" for a, b, why in refused[:20]],
    }


def _most_common(values: list, key=lambda v: v):
    """The value given most often (by ``key``), the first given among equals; None when there is none."""
    counts = Counter(key(v) for v in values)
    if not counts:
        return None
    best = max(counts.values())
    return next(v for v in values if counts[key(v)] == best)


def consensus(mentions: list[tuple[str, int | None, list[str], str | None, str | None]]) -> dict:
    """Title, year, authors and venue of an outside work from the entries that cite it: the title most entries
    give (by its key), then, among the entries with that title, the most common year, author list and venue."""
    titled = [m for m in mentions if m[0]]
    title = _most_common([m[0] for m in titled], key=title_key) if titled else None
    agree = [m for m in titled if title_key(m[0]) == title_key(title)] if title else mentions
    years = [m[1] for m in agree if m[1] is not None]
    authors = [m[2] for m in agree if m[2]]
    venues = [m[3] for m in agree if m[3]]
    pages = [m[4] for m in agree if len(m) > 4 and m[4]]
    venue = _most_common(venues, key=venue_key)
    if venue is not None and sum(1 for v in venues if venue_key(v) == venue_key(venue)) < len(agree) / 10:
        venue = None  # one entry's venue, where most entries give none, is more likely a neighbour's
    # An author list whose every name has a forename beats the parser's shifted reading of the same names
    # ("P Diederik", "Jimmy Kingma", "Ba" for "Diederik P Kingma", "Jimmy Ba").
    whole = [a for a in authors if all(len(n.split()) > 1 for n in a)]
    names = _most_common(whole or authors, key=lambda a: tuple(surname_key(n) for n in a))
    if names is not None:  # of the lists naming the same people, the one with the fullest names ("Dzmitry", not "D")
        same = [a for a in whole or authors if [surname_key(n) for n in a] == [surname_key(n) for n in names]]
        names = max(same, key=lambda a: (sum(len(n) for n in a), -same.index(a)))
    return {
        "title": title,
        "year": _most_common(years),
        "authors": names,
        "venue": venue,
        "pages": _most_common(pages),
    }


def apply(conn: sqlite3.Connection, mapping: dict[str, str]) -> None:
    """Fold the merged records into the kept ones: identifiers joined, outside works' fields by consensus (and by
    the Anthology for an ACL ID), merged records deleted."""
    mentions: dict[str, list] = defaultdict(list)
    for pid, title, year, authors, venue, pages in conn.execute(
        "SELECT cited, title, year, authors, venue, pages FROM mentions ORDER BY rowid"
    ):
        mentions[mapping.get(pid, pid)].append((title, year, json.loads(authors), venue, pages))
    merged_ids: dict[str, dict] = defaultdict(dict)
    for gone, kept in sorted(mapping.items()):
        (ids,) = conn.execute("SELECT ids FROM papers WHERE pid = ?", (gone,)).fetchone()
        for k, v in json.loads(ids).items():
            merged_ids[kept].setdefault(k, v)
        conn.execute("DELETE FROM papers WHERE pid = ?", (gone,))
        conn.execute("UPDATE keys SET pid = ? WHERE pid = ?", (kept, gone))
    rows = conn.execute(
        "SELECT pid, in_set, ids, title, year, authors, venue, pages FROM papers ORDER BY rowid"
    ).fetchall()
    for pid, in_set, ids, title, year, authors, venue, pages in rows:
        ids = {**merged_ids.get(pid, {}), **json.loads(ids)}
        if not in_set:
            found = consensus(mentions.get(pid, []))
            title = found["title"] or title
            year = found["year"] if found["year"] is not None else year
            authors = json.dumps(found["authors"], ensure_ascii=False) if found["authors"] else authors
            if pid in mentions:  # the first entry's venue and pages stand only if most entries agree
                venue, pages = found["venue"], found["pages"]
            acl = anthology.acl_id_of(ids)
            if acl is not None:
                official = anthology.metadata(acl)
                ids["acl"] = acl
                year = official["year"]
                venue = official["venue"] or venue
        conn.execute(
            "UPDATE papers SET ids = ?, title = ?, year = ?, authors = ?, venue = ?, pages = ? WHERE pid = ?",
            (json.dumps(ids, sort_keys=True), title, year, authors, venue, pages, pid),
        )
