"""BM25 ranking checked against a direct computation of the formula."""

import math
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from agenthop.server.search import K1, B, ScopeIndex, stored_index_parts, tokenize

WORDS = ["graph", "attention", "retrieval", "sparse", "dense", "citation", "transformer", "bm25", "agent", "reward"]


def reference_scores(docs: list[str], query: str) -> list[float]:
    """BM25 as Lucene (>= 8) computes it, written out term by term: no (k1 + 1) factor, which changes no ranking."""
    toks = [tokenize(d) for d in docs]
    n, avgdl = len(toks), sum(map(len, toks)) / len(toks)
    df = Counter(t for doc in toks for t in set(doc))
    scores = []
    for doc in toks:
        tf, score = Counter(doc), 0.0
        for term in tokenize(query):
            if tf[term]:
                idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                score += idf * tf[term] / (tf[term] + K1 * (1 - B + B * len(doc) / avgdl))
        scores.append(score)
    return scores


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(" ".join), min_size=1, max_size=25),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join),
)
def test_ranking_matches_the_bm25_formula(docs, query):
    ids = [f"p{i}" for i in range(len(docs))]
    hits = ScopeIndex(ids, docs).search(query, top_k=10)
    expected = reference_scores(docs, query)
    order = sorted((i for i, s in enumerate(expected) if s > 0), key=lambda i: (-round(expected[i], 5), i))[:10]
    assert [h.paper_id for h in hits] == [ids[i] for i in order]
    for hit in hits:
        assert math.isclose(hit.score, expected[ids.index(hit.paper_id)], rel_tol=1e-5)


def test_stopwords_and_short_tokens_do_not_match():
    index = ScopeIndex(["a", "b"], ["The graph of a paper", "An agent"])
    assert index.search("the a of", 5) == []
    assert [h.paper_id for h in index.search("Graph!", 5)] == ["a"]


@settings(max_examples=40, deadline=None)
@given(
    docs=st.lists(st.lists(st.sampled_from(WORDS), min_size=0, max_size=12).map(" ".join), min_size=1, max_size=25),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join),
)
def test_a_stored_index_ranks_and_scores_as_the_one_it_was_made_from(docs, query):
    """The explore index is stored in the corpus at import (to_parts) and loaded by the server (from_parts)."""
    ids = [f"p{i}" for i in range(len(docs))]
    built = ScopeIndex(ids, docs)
    loaded = ScopeIndex.from_parts(ids, built.to_parts())
    assert loaded is not None
    assert loaded.search(query, 10) == built.search(query, 10)


def test_a_stored_index_is_refused_when_it_does_not_fit():
    built = ScopeIndex(["a", "b"], ["graph attention", "sparse retrieval"])
    parts = built.to_parts()
    assert ScopeIndex.from_parts(["a"], parts) is None  # another number of documents
    assert ScopeIndex.from_parts(["a", "b"], {**parts, "params": b"{}"}) is None  # stored under other rules
    assert ScopeIndex.from_parts(["a", "b"], {}) is None


def test_the_same_documents_give_the_same_stored_bytes():
    docs = ["graph attention for citation graphs", "sparse dense retrieval", "agent reward"]
    assert ScopeIndex(["a", "b", "c"], docs).to_parts() == ScopeIndex(["a", "b", "c"], docs).to_parts()


def test_documents_may_stream_and_the_importer_stores_the_same_index():
    """The importer hands the explore documents over as a generator (stored_index_parts): same index, same bytes."""
    docs = ["graph attention for citation graphs", "", "sparse dense retrieval", "agent reward graph", "the of a"]
    ids = ["a", "b", "c", "d", "e"]
    listed = ScopeIndex(ids, docs)
    assert ScopeIndex(ids, iter(docs)).to_parts() == listed.to_parts() == stored_index_parts(d for d in docs)
    loaded = ScopeIndex.from_parts(ids, stored_index_parts(iter(docs)))
    assert loaded.search("graph retrieval", 5) == listed.search("graph retrieval", 5)
    assert [h.paper_id for h in listed.search("graph retrieval", 5)] == [
        "c",
        "d",
        "a",
    ]  # rarer term first; shorter doc first
