"""BM25 over title + abstract of the papers in scope.

Statistics (document frequencies, average length) are those of the scope: an
item's neighbourhood, or the whole corpus in explore mode. Indexes are built
once per scope and kept in a small LRU cache, so a call never re-indexes.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass

import bm25s
import numpy as np

from agenthop.server.papers import Corpus

K1 = 1.2
B = 0.75
METHOD = "lucene"  # idf = ln(1 + (N - df + 0.5) / (df + 0.5)): never negative
_TOKEN = re.compile(r"(?u)\b\w\w+\b")
_STOPWORDS = frozenset(bm25s.stopwords.STOPWORDS_EN)

PARAMETERS = {
    "engine": "bm25s",
    "method": METHOD,
    "k1": K1,
    "b": B,
    "fields": "title + abstract",
    "tokenizer": "lowercase \\w\\w+ tokens minus bm25s English stopwords",
}


def tokenize(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text.lower()) if t not in _STOPWORDS]


@dataclass(frozen=True)
class Hit:
    paper_id: str
    score: float


class ScopeIndex:
    def __init__(self, paper_ids: list[str], texts: list[str]):
        self.paper_ids = paper_ids
        self._bm25 = bm25s.BM25(method=METHOD, k1=K1, b=B)
        docs = [tokenize(t) for t in texts]
        if any(docs):
            self._bm25.index(docs, show_progress=False)
            self._empty = False
        else:
            self._empty = True

    def search(self, query: str, top_k: int) -> list[Hit]:
        terms = tokenize(query)
        if not terms or self._empty:
            return []
        scores = self._bm25.get_scores(terms)
        positive = np.flatnonzero(scores > 0)
        if positive.size == 0:
            return []
        # Highest score first; ties keep scope order (seed first), so results are deterministic.
        order = positive[np.lexsort((positive, -scores[positive]))][:top_k]
        return [Hit(self.paper_ids[i], float(scores[i])) for i in order]


class SearchEngine:
    def __init__(self, corpus: Corpus, cache_size: int = 256):
        self._corpus = corpus
        self._cache: OrderedDict[str | None, ScopeIndex] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self._building: dict[str | None, threading.Lock] = {}

    def index(self, item_id: str | None) -> ScopeIndex:
        with self._lock:
            if item_id in self._cache:
                self._cache.move_to_end(item_id)
                return self._cache[item_id]
            build_lock = self._building.setdefault(item_id, threading.Lock())
        with build_lock:  # one build per scope, even when many sessions ask at once
            with self._lock:
                if item_id in self._cache:
                    return self._cache[item_id]
            built = ScopeIndex(*self._corpus.search_documents(item_id))
            with self._lock:
                self._cache[item_id] = built
                while len(self._cache) > self._cache_size:
                    oldest = next(k for k in self._cache if k is not None)  # keep the explore index
                    del self._cache[oldest]
                self._building.pop(item_id, None)
            return built

    def search(self, item_id: str | None, query: str, top_k: int) -> list[Hit]:
        return self.index(item_id).search(query, top_k)
