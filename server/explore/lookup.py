"""Finding a paper in explore mode: one ExploreGraph per corpus, and a paper ID, DOI, arXiv or ACL Anthology ID
(as typed or as a link) resolved to the canonical record of its work."""

from __future__ import annotations

import weakref

from agenthop.server.explore.graph import ExploreGraph
from agenthop.server.papers import Corpus, Paper

_GRAPHS: weakref.WeakKeyDictionary[Corpus, ExploreGraph] = weakref.WeakKeyDictionary()


def explore_graph(corpus: Corpus) -> ExploreGraph:
    graph = _GRAPHS.get(corpus)
    if graph is None:
        graph = _GRAPHS[corpus] = ExploreGraph(corpus)
    return graph


def explore_paper(corpus: Corpus, paper_id: str) -> tuple[Paper | None, str | None]:
    """(the paper ``paper_id`` names, as its canonical record, or None; the closest ID when none)."""
    graph = explore_graph(corpus)
    found = graph.resolve(paper_id)
    if found is None:
        return None, graph.closest(paper_id)
    return corpus.paper(found, None), None
